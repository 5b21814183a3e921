"""tools/aio/lib/common.sh: what the daemons tools/aio starts inherit; which pids are alive."""

import os
import signal
import subprocess
import time

import fixtures
import testtools

from tests.unit import tools


class CloseInheritedFdsTestCase(testtools.TestCase):
    """A daemon started under `flock LOCK tools/aio/up` must not keep LOCK taken."""

    @staticmethod
    def settled_fds(pid, timeout=5.0):
        """The fds of ``pid`` once they are only 0, 1 and 2, or as they are at ``timeout``.

        While setsid and then sleep are exec'd, the dynamic loader holds libc open as fd 3 for
        a moment; an fd inherited from the caller stays.
        """
        deadline = time.monotonic() + timeout
        while True:
            fds = sorted(os.listdir("/proc/%d/fd" % pid))
            if fds == ["0", "1", "2"] or time.monotonic() > deadline:
                return fds
            time.sleep(0.05)

    def test_a_daemon_started_under_flock_leaves_the_lock_free(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        lock = os.path.join(tmp, "cloud.lock")
        script = ('source "$1/tools/aio/lib/common.sh"; close_inherited_fds; '
                  'setsid sleep 60 >/dev/null 2>&1 </dev/null & echo $!')
        out = subprocess.run(
            ["flock", lock, "bash", "-c", script, "-", tools.ROOT], capture_output=True,
            text=True, check=True, env=dict(os.environ, VMCT_AIO_DIR=tmp)).stdout
        daemon = int(out.split()[-1])
        self.addCleanup(os.kill, daemon, signal.SIGTERM)
        os.kill(daemon, 0)      # still running
        self.assertEqual(["0", "1", "2"], self.settled_fds(daemon))
        free = subprocess.run(["flock", "-n", lock, "true"])
        self.assertEqual(0, free.returncode)


class PidAliveTestCase(testtools.TestCase):
    """pid_alive: a zombie (exited, not reaped) is not alive; a running process is."""

    def pid_alive(self, pid):
        script = 'source "$1/tools/aio/lib/common.sh"; pid_alive "$2"'
        return subprocess.run(["bash", "-c", script, "-", tools.ROOT, str(pid)],
                              env=dict(os.environ, VMCT_AIO_DIR="/nonexistent")).returncode

    def test_running_zombie_and_gone(self):
        child = subprocess.Popen(["sleep", "60"])
        self.addCleanup(child.wait)
        self.addCleanup(child.kill)
        self.assertEqual(0, self.pid_alive(child.pid))
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)   # exited, still a zombie
        os.kill(child.pid, 0)       # what kill -0 alone would call alive
        self.assertEqual(1, self.pid_alive(child.pid))
        child.wait()
        self.assertEqual(1, self.pid_alive(child.pid))
        self.assertEqual(1, self.pid_alive(""))
