"""Real Docker engine, real veth/bridge/netns: the driver's functional base.

Nothing is mocked. Two things stand in for services that are not on the test
host: Glance (the image bytes come from a local ``docker save`` tarball of the
workload image, tools/images/docker/build) and Neutron/OVS (the host ends go
to a Linux bridge this test creates, ``[docker]host_attach=linuxbridge``).
Instances are reached over SSH from a network namespace the test creates on
that bridge (TEST-NET-2 198.51.100.0/24, never routed from the root namespace).
"""

import json
import os
import shlex
import subprocess
import sys
import time
import uuid

import docker
import fixtures
from oslo_config import fixture as config_fixture
from oslo_privsep import priv_context
import testtools

import nova.conf
from nova.virt import driver as virt_driver
from nova.virt import fake as fake_virt
from nova_docker_vmct import conf as docker_conf
from nova_docker_vmct import privsep

from tests.functional import engine
from tests import helpers

CONF = nova.conf.CONF
docker_conf.register_opts(CONF)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.path.join(REPO, 'tools', 'images', 'docker', 'build')
IMAGE = os.environ.get('VMCT_DOCKER_IMAGE', 'vmct-workload:latest')
IMAGE_TAR = os.environ.get('VMCT_DOCKER_IMAGE_TAR',
                           '/var/tmp/vmct-images/docker/vmct-workload.tar')
# the shared engine (tools/docker/ensure-dockerd), unless DOCKER_HOST names
# another (e.g. a private one: python -m tests.functional.engine start DIR)
SHARED_ENGINE = os.environ.get('DOCKER_HOST') or 'unix:///var/run/docker.sock'
GATEWAY = '198.51.100.1'
PREFIX = 24
TIMINGS = os.environ.get('VMCT_DOCKER_TIMINGS')


def run(*cmd, check=True, timeout=60):
    return subprocess.run(list(cmd), check=check, capture_output=True,
                          text=True, timeout=timeout)


def ensure_image_tar():
    """The docker save tarball of the workload image (built if missing)."""
    if not os.path.exists(IMAGE_TAR):
        run(BUILD, '--tag', IMAGE, '--save', IMAGE_TAR, timeout=900)
    return IMAGE_TAR


def file_chunks(path, size=1024 * 1024):
    with open(path, 'rb') as f:
        while True:
            chunk = f.read(size)
            if not chunk:
                return
            yield chunk


def record_timing(name, seconds):
    if TIMINGS:
        with open(TIMINGS, 'a') as f:
            f.write(json.dumps({'name': name, 'seconds': round(seconds, 3)})
                    + '\n')


class TestNetwork(fixtures.Fixture):
    """A bridge plus a client netns on it holding the gateway address.

    kind 'linux': a Linux bridge; kind 'ovs': a bridge with the userspace
    datapath in the running Open vSwitch. Both are created here and deleted
    at cleanup, with the client namespace and its veth.
    """

    def __init__(self, kind='linux'):
        super().__init__()
        self.kind = kind

    def _setUp(self):
        tag = uuid.uuid4().hex[:6]
        self.bridge = ('vmctbr' if self.kind == 'linux' else 'vmct-tbr') + tag
        self.netns = 'vmct-fn-' + tag
        self.veth = 'vmctgw' + tag
        self.addCleanup(self._cleanup)
        if self.kind == 'linux':
            run('ip', 'link', 'add', self.bridge, 'type', 'bridge')
        else:
            run('ovs-vsctl', '--timeout=30', 'add-br', self.bridge, '--',
                'set', 'Bridge', self.bridge, 'datapath_type=netdev')
        run('ip', 'link', 'set', self.bridge, 'up')
        run('ip', 'netns', 'add', self.netns)
        run('ip', 'link', 'add', self.veth, 'type', 'veth', 'peer', 'name',
            'gw0', 'netns', self.netns)
        if self.kind == 'linux':
            run('ip', 'link', 'set', self.veth, 'master', self.bridge)
        else:
            run('ovs-vsctl', '--timeout=30', 'add-port', self.bridge,
                self.veth)
        run('ip', 'link', 'set', self.veth, 'up')
        self.in_ns('ip', 'link', 'set', 'lo', 'up')
        self.in_ns('ip', 'addr', 'add', '%s/%d' % (GATEWAY, PREFIX), 'dev',
                   'gw0')
        self.in_ns('ip', 'link', 'set', 'gw0', 'up')

    def _cleanup(self):
        run('ip', 'link', 'del', self.veth, check=False)
        run('ip', 'netns', 'del', self.netns, check=False)
        if self.kind == 'linux':
            run('ip', 'link', 'del', self.bridge, check=False)
        else:
            run('ovs-vsctl', '--timeout=30', '--if-exists', 'del-br',
                self.bridge, check=False)

    def bridge_ports(self):
        if self.kind == 'ovs':
            return sorted(run('ovs-vsctl', '--timeout=30', 'list-ports',
                              self.bridge).stdout.split())
        out = run('ip', '-o', 'link', 'show', 'master', self.bridge).stdout
        return sorted(line.split(':')[1].strip().split('@')[0]
                      for line in out.splitlines() if line.strip())

    def in_ns(self, *cmd, check=True, timeout=60):
        return run('ip', 'netns', 'exec', self.netns, *cmd, check=check,
                   timeout=timeout)

    def tcp_open(self, address, port=22, timeout=0.5):
        code = ('import socket,sys\n'
                's=socket.socket()\ns.settimeout(%r)\n'
                'sys.exit(s.connect_ex((%r,%d)))' % (timeout, address, port))
        return self.in_ns('python3', '-c', code, check=False).returncode == 0

    def ssh_banner(self, address, port=22, timeout=2.0):
        """The first line sshd sends, or None if none comes in time."""
        code = ('import socket,sys\n'
                's=socket.create_connection((%r,%d),%r)\n'
                'sys.stdout.write(s.recv(64).decode())' % (address, port,
                                                           timeout))
        r = self.in_ns('python3', '-c', code, check=False)
        return r.stdout.strip() if r.returncode == 0 and r.stdout else None

    def wait_tcp(self, address, port=22, timeout=30):
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.tcp_open(address, port):
                return time.monotonic() - start
            time.sleep(0.05)
        raise AssertionError('%s:%d not reachable within %ds'
                             % (address, port, timeout))


# the machine's ovsdb-server, on its unix socket (the all-in-one cloud's, or
# the private one tools/test-stages/30-nova-docker starts)
OVSDB = 'unix:/var/run/openvswitch/db.sock'


def privsep_contexts():
    """The driver's privsep contexts and os-vif's (the hybrid plug's)."""
    from vif_plug_ovs import privsep as os_vif_privsep
    return privsep.CONTEXTS + (os_vif_privsep.vif_plug,)


def start_privsep_daemon():
    """The real privsep daemons, started by privsep-helper as root.

    Once per worker, as Nova starts them (its root helper runs
    privsep-helper, which drops to the context's capabilities), minus sudo
    and rootwrap: this process is root already. oslo.privsep reads the
    helper's stderr with a thread that, under the eventlet monkey patching
    Nova's test modules apply, blocks this whole process: the helper writes
    to this process's stderr instead. (Forked daemons cannot stand in: a
    second one forked from a patched process never answers.)
    """
    from oslo_privsep import daemon
    daemon._fd_logger = lambda *args, **kwargs: None
    helper = os.path.join(os.path.dirname(sys.executable), 'privsep-helper')
    for context in privsep_contexts():
        if context.channel is None:
            CONF.set_override('helper_command', helper,
                              group=context.cfg_section)
            context.start(priv_context.Method.ROOTWRAP)


class DriverTestCase(testtools.TestCase):
    """Loads the driver through Nova's loader against the real engine.

    ``ENGINE``: None for the shared engine, or daemon.json settings of a
    private engine the test starts (engine.PrivateEngine); ``ENGINE_XFS``:
    mount options of a loop XFS under that engine's data root.
    """

    NETWORK = 'linux'
    ENGINE = None
    ENGINE_XFS = None

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Timeout(300, gentle=True))
        self.engine_url = self.engine()
        self.docker = docker.DockerClient(base_url=self.engine_url,
                                          timeout=120)
        self.addCleanup(self.docker.close)
        self.image_tar = ensure_image_tar()
        self.conf = self.useFixture(config_fixture.Config(CONF))
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.host = 'vmct-ftest-' + uuid.uuid4().hex[:6]
        # per test: tests run in parallel and clean up their own images
        self.repository = self.host
        self.conf.config(host=self.host, instances_path=self.tmp,
                         vif_plugging_timeout=0)
        self.conf.config(group='docker',
                         api_url=self.engine_url,
                         host_attach=('ovs' if self.NETWORK == 'ovs'
                                      else 'linuxbridge'),
                         soft_reboot_timeout=10,
                         image_repository=self.repository)
        start_privsep_daemon()
        self.useFixture(helpers.OsVifOptions(ovsdb_connection=OVSDB))
        self.net = self.useFixture(TestNetwork(self.NETWORK))
        self.driver = virt_driver.load_compute_driver(
            fake_virt.FakeVirtAPI(), 'docker.DockerDriver')
        self.fetches = []

        def fetch(ctx, image_id):
            self.fetches.append(image_id)
            return file_chunks(self.image_tar)
        self.driver.image_fetch = fetch
        self.driver.init_host(self.host)
        self.addCleanup(self.driver.cleanup_host, self.host)
        self.ctx = helpers.context()
        self.key_path = os.path.join(self.tmp, 'id_ed25519')
        run('ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f',
            self.key_path)
        with open(self.key_path + '.pub') as f:
            self.key_data = f.read()
        self.addCleanup(self._remove_leftovers)

    def engine(self):
        """URL of the engine of this test (see ENGINE)."""
        if self.ENGINE is None:
            return SHARED_ENGINE
        private = self.useFixture(engine.PrivateEngine(
            self.ENGINE, xfs=self.ENGINE_XFS))
        if private.unavailable:
            self.skipTest(private.unavailable)
        return private.url

    def _remove_leftovers(self):
        """Whatever a failing test left behind: containers, cached images."""
        for c in self.docker.containers.list(
                all=True, filters={'label': 'nova.host=%s' % self.host}):
            c.remove(force=True)
        for image in self.docker.images.list(name=self.repository + '/*'):
            for tag in image.tags:
                if tag.startswith(self.repository + '/'):
                    self.docker.images.remove(tag)

    def make_instance(self, address='198.51.100.10', mac='fa:16:3e:00:00:10',
                      dns=(), v6=None, **kw):
        vif = helpers.vif(mac=mac, address=address, gateway=GATEWAY,
                          bridge=self.net.bridge, mtu=1400, dns=dns, v6=v6)
        inst = helpers.instance(self.ctx, key_data=self.key_data,
                                network_info=[vif], **kw)
        return inst, inst.get_network_info()

    def spawn(self, inst, nw_info, image=None, power_on=True):
        image = image or helpers.image_meta(self.image_id)
        start = time.monotonic()
        self.driver.spawn(self.ctx, inst, image, [], None, {}, nw_info,
                          power_on=power_on)
        self.addCleanup(self._destroy_quietly, inst, nw_info)
        return time.monotonic() - start

    def _destroy_quietly(self, inst, nw_info):
        try:
            self.driver.destroy(self.ctx, inst, nw_info)
        except Exception:
            pass

    @property
    def image_id(self):
        if not hasattr(self, '_image_id'):
            self._image_id = str(uuid.uuid4())
        return self._image_id

    def ssh(self, address, *cmd, check=True):
        return self.net.in_ns(
            'ssh', '-i', self.key_path, '-o', 'BatchMode=yes',
            '-o', 'StrictHostKeyChecking=no',
            '-o', 'UserKnownHostsFile=/dev/null',
            '-o', 'ConnectTimeout=5', '-o', 'LogLevel=ERROR',
            # ssh hands the command to the remote shell: quote every word
            'root@%s' % address, '--', shlex.join(cmd), check=check)

    def container(self, inst):
        return self.docker.api.inspect_container('nova-%s' % inst.uuid)

    def host_dev_exists(self, nw_info):
        return os.path.exists('/sys/class/net/%s' % nw_info[0]['devname'])

    def wait_ssh(self, address, timeout=30):
        """Seconds until a command over SSH succeeds."""
        start = time.monotonic()
        while True:
            r = self.ssh(address, 'true', check=False)
            if r.returncode == 0:
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise AssertionError('no SSH to %s: %s' % (address, r.stderr))
            time.sleep(0.1)
