"""A private Docker engine for tests of engine-wide settings.

The shared engine (tools/docker/ensure-dockerd) serves every test on the
machine: one test must not restart or reconfigure it. A test of what only a
whole engine can have (user namespace remapping, a data root on a file
system with project quotas) starts its own dockerd here: the settings of
nova-docker/etc/docker/daemon.json plus its own, its own data root, exec
root, socket and pidfile under one state directory, stopped and removed
at cleanup.

Also a command, to keep such an engine up for a whole test run::

    python -m tests.functional.engine start DIR [--set KEY=JSON]...
    DOCKER_HOST=unix:///run/<DIR's name>.sock stestr --test-path \
        ./tests/functional run
    python -m tests.functional.engine stop DIR

(``--set userns-remap=null``: an engine without daemon.json's remapping.)
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import docker
import docker.errors
import fixtures

NOVA_DOCKER = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DAEMON_JSON = os.path.join(NOVA_DOCKER, 'etc', 'docker', 'daemon.json')
PREFIX = os.environ.get('VMCT_PRIVATE_ENGINE_PREFIX', 'vmct-engine-')
START_TIMEOUT = 60
STOP_TIMEOUT = 30


def run(*cmd, check=True, timeout=60):
    return subprocess.run(list(cmd), check=check, capture_output=True,
                          text=True, timeout=timeout)


def settings(overrides=None):
    """daemon.json's settings with ``overrides`` (a dict) applied.

    A value of None removes the key (an engine without that setting).
    """
    with open(DAEMON_JSON) as f:
        merged = json.load(f)
    for key, value in (overrides or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


class Layout(object):
    """Where a private engine keeps everything: one state directory.

    The socket is in /run (named after the directory), not in the
    directory: a unix socket path must stay under 108 bytes.
    """

    def __init__(self, state, data_root=None):
        self.state = os.path.abspath(state)
        self.data_root = data_root or os.path.join(self.state, 'data')
        # where its containers' netns are: a folder only root can write,
        # all the way up, or the driver's privsep daemons refuse them
        self.exec_root = '/run/%s.exec' % os.path.basename(self.state)
        self.pidfile = os.path.join(self.state, 'dockerd.pid')
        self.config = os.path.join(self.state, 'daemon.json')
        self.log = os.path.join(self.state, 'dockerd.log')
        self.socket = '/run/%s.sock' % os.path.basename(self.state)
        self.url = 'unix://' + self.socket

    def daemon_json(self, overrides=None):
        merged = settings(overrides)
        merged.update({'data-root': self.data_root,
                       'exec-root': self.exec_root,
                       'pidfile': self.pidfile,
                       'hosts': [self.url]})
        return merged


def start(layout, overrides=None):
    """Start dockerd for ``layout``; its pid once the engine answers."""
    os.makedirs(layout.state, exist_ok=True)
    with open(layout.config, 'w') as f:
        json.dump(layout.daemon_json(overrides), f, indent=1)
    with open(layout.log, 'ab') as log:
        proc = subprocess.Popen(
            ['dockerd', '--config-file', layout.config],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while not answers(layout.url):
        if proc.poll() is not None:
            raise RuntimeError('private dockerd exited (%s): %s' % (
                proc.returncode, tail(layout.log)))
        if time.monotonic() > deadline:
            stop(layout, proc.pid)
            raise RuntimeError(
                'private dockerd did not answer at %s within %d s: %s' % (
                    layout.url, START_TIMEOUT, tail(layout.log)))
        time.sleep(0.1)
    return proc.pid


def answers(url):
    try:
        # the client asks the engine's API version as it is created
        client = docker.DockerClient(base_url=url, timeout=5)
    except docker.errors.DockerException:
        return False
    try:
        return client.ping()
    except Exception:
        return False
    finally:
        client.close()


def tail(path, lines=15):
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-lines:])
    except OSError as e:
        return str(e)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie child of ours is gone for every purpose here
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def stop(layout, pid=None):
    """Stop the engine (its containers first), then remove its state.

    dockerd stops its containers and its own containerd on SIGTERM; only
    one that does not go within STOP_TIMEOUT is killed.
    """
    if pid is None:
        try:
            with open(layout.pidfile) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            pid = None
    if pid and alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    # mounts the engine left (netns, overlay) would keep the files busy
    for mount in sorted(mounts_under(layout.state), reverse=True):
        run('umount', '-l', mount, check=False)
    shutil.rmtree(layout.state, ignore_errors=True)
    if os.path.exists(layout.socket):
        os.unlink(layout.socket)


def mounts_under(path):
    found = []
    with open('/proc/self/mountinfo') as f:
        for line in f:
            point = line.split()[4].replace('\\040', ' ')
            if point == path or point.startswith(path + '/'):
                found.append(point)
    return found


class LoopXfs(fixtures.Fixture):
    """An XFS file system in a sparse file, loop-mounted at ``path``.

    ``options``: mount options (``pquota`` enables project quotas, which
    overlay2 needs for a container size limit). ``unavailable`` says why
    there is none when the machine cannot have it (no mkfs.xfs, a kernel
    without XFS quota support refusing ``pquota``), for the test to skip:
    an exception would reach the test wrapped in the fixtures' own.
    """

    def __init__(self, path, size='2G', options=()):
        super().__init__()
        self.path = path
        self.size = size
        self.options = tuple(options)
        self.unavailable = None

    def _setUp(self):
        if not shutil.which('mkfs.xfs'):
            self.unavailable = ('mkfs.xfs is missing: tools/vmct-apt '
                                'install xfsprogs')
            return
        os.makedirs(self.path)
        self.image = self.path + '.img'
        self.addCleanup(self._remove)
        run('truncate', '-s', self.size, self.image)
        run('mkfs.xfs', '-q', self.image)
        cmd = ['mount', '-o', ','.join(('loop',) + self.options),
               self.image, self.path]
        r = run(*cmd, check=False)
        if r.returncode and 'pquota' in self.options:
            self.unavailable = (
                'this kernel does not mount XFS with project quotas (%s: '
                '%s); overlay2 size limits need XFS quota support '
                '(CONFIG_XFS_QUOTA)' % (' '.join(cmd),
                                        r.stderr.strip().splitlines()[0]))
            return
        if r.returncode:
            raise RuntimeError('%s: %s' % (' '.join(cmd), r.stderr))

    def _remove(self):
        # umount detaches the loop device mount created
        if self.path in mounts_under(self.path):
            run('umount', self.path, check=False)
        shutil.rmtree(self.path, ignore_errors=True)
        if os.path.exists(self.image):
            os.unlink(self.image)


class PrivateEngine(fixtures.Fixture):
    """A dockerd of its own for one test, stopped and removed at cleanup.

    ``overrides``: daemon.json keys to add or (None) remove, e.g.
    ``{'userns-remap': None}``. ``xfs``: mount options of a loop XFS
    holding the data root (None: the data root is a plain directory).
    ``unavailable``: why no engine was started (see LoopXfs).
    """

    def __init__(self, overrides=None, xfs=None):
        super().__init__()
        self.overrides = overrides or {}
        self.xfs = xfs
        self.unavailable = None

    def _setUp(self):
        state = tempfile.mkdtemp(prefix=PREFIX, dir='/var/tmp')
        # a remapped root (uid 100000) must get through to its data root
        os.chmod(state, 0o755)
        self.addCleanup(shutil.rmtree, state, ignore_errors=True)
        self.addCleanup(shutil.rmtree, Layout(state).exec_root,
                        ignore_errors=True)
        data_root = None
        if self.xfs is not None:
            data_root = os.path.join(state, 'xfs')
            self.unavailable = self.useFixture(
                LoopXfs(data_root, options=self.xfs)).unavailable
            if self.unavailable:
                return
        self.layout = Layout(state, data_root)
        self.pid = start(self.layout, self.overrides)
        self.addCleanup(stop, self.layout, self.pid)
        self.url = self.layout.url
        self.client = docker.DockerClient(base_url=self.url, timeout=120)
        self.addCleanup(self.client.close)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('action', choices=('start', 'stop'))
    p.add_argument('state', help='state directory (e.g. /var/tmp/NAME)')
    p.add_argument('--set', action='append', default=[], metavar='KEY=JSON',
                   help='a daemon.json setting on top of the shipped ones '
                        '(e.g. userns-remap=\'"default"\'); KEY=null '
                        'removes one')
    args = p.parse_args(argv)
    layout = Layout(args.state)
    if args.action == 'stop':
        stop(layout)
        return 0
    overrides = {}
    for item in args.set:
        key, _, value = item.partition('=')
        overrides[key] = json.loads(value)
    pid = start(layout, overrides)
    print('dockerd %d: DOCKER_HOST=%s (log %s)' % (
        pid, layout.url, layout.log))
    return 0


if __name__ == '__main__':
    sys.exit(main())
