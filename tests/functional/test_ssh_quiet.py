"""Proxied SSH sessions end without paramiko errors; real failures still are errors.

A real sshd on 127.0.0.1 reached through ``nc`` as a ProxyCommand, the way the
all-in-one cloud reaches instances (``ip netns exec vmct-access nc %h %p``).
paramiko closes its socket from the thread that closes the client while its
transport thread may still be reading; a proxy whose pipes closed under that
reader made sessions end with "Unknown exception: I/O operation on closed file"
and a traceback logged at ERROR (issue 16), so every record of the ``paramiko``
loggers is captured at DEBUG and none may be an error after a clean session.
"""

import logging
import os
import signal
import threading

import fixtures
from rally import exceptions as rally_exceptions
import testtools

from rally_vmct.access import ssh
from tests.functional import sshd

COMMANDS = (("true", ""), ("echo vmct", "vmct\n"), ("uname -s", "Linux\n"))
SESSIONS = 4


class _ListHandler(logging.Handler):

    def __init__(self, records):
        super().__init__(logging.DEBUG)
        self.records = records

    def emit(self, record):
        self.records.append(record)


class LogRecords(fixtures.Fixture):
    """Every record logger ``name`` (and its children) emits at DEBUG and above."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def _setUp(self):
        self.records = []
        logger = logging.getLogger(self.name)
        handler = _ListHandler(self.records)
        self.addCleanup(logger.setLevel, logger.level)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        self.addCleanup(logger.removeHandler, handler)

    def at_least(self, level):
        return ["%s %s: %s" % (r.levelname, r.name, r.getMessage())
                for r in self.records if r.levelno >= level]


def descendants(pid):
    """PIDs of every process below ``pid`` (for sshd: its sessions and their commands)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            children = [int(child) for child in f.read().split()]
    except OSError:
        return []
    return children + [grandchild for child in children for grandchild in descendants(child)]


class ProxiedSSHTestCase(testtools.TestCase):
    """sshd on 127.0.0.1 and every ``paramiko`` log record."""

    def setUp(self):
        super().setUp()
        self.server = self.useFixture(sshd.SSHServer())
        self.logs = self.useFixture(LogRecords("paramiko"))

    def client(self, proxy_command, **kwargs):
        return ssh.SSH(self.server.user, self.server.host, self.server.port,
                       key_filename=self.server.key_file, proxy_command=proxy_command,
                       **kwargs)


class TestQuietClose(ProxiedSSHTestCase):

    def assert_sessions_close_quietly(self, proxy_command):
        running_after_close = []
        for _ in range(SESSIONS):
            with self.client(proxy_command) as client:
                for command, expected in COMMANDS:
                    self.assertEqual((0, expected, ""), client.execute(command, timeout=30))
                transport = client._client.get_transport()
                proxy = transport.sock
            # close() returns once the transport thread has ended and the proxy is reaped.
            if transport.is_alive() or proxy.process.returncode is None:
                running_after_close.append((transport.is_alive(), proxy.process.returncode))
            transport.join(5)
        self.assertEqual([], self.logs.at_least(logging.ERROR))
        self.assertEqual([], running_after_close)
        # The capture works: it holds paramiko's records of every session (how the
        # transport thread ends, "EOF in transport thread" or not, depends on timing).
        self.assertEqual(SESSIONS, self.logs.at_least(logging.DEBUG).count(
            "INFO paramiko.transport: Authentication (publickey) successful!"))

    def test_nc_proxy(self):
        self.assert_sessions_close_quietly("nc %h %p")

    def test_proxy_that_execs_nc_from_a_shell(self):
        self.assert_sessions_close_quietly("sh -c 'exec nc %h %p'")

    def test_proxy_wrapper_that_keeps_its_shell(self):
        # The shell dies on SIGTERM while nc, its child, still holds the pipes.
        self.assert_sessions_close_quietly("sh -c 'nc %h %p'")


class TestRealFailuresAreErrors(ProxiedSSHTestCase):

    def test_proxy_exiting_at_once_fails_the_connect(self):
        client = self.client("sh -c 'echo no route to %h >&2; exit 3'", connect_timeout=5)
        e = self.assertRaises(rally_exceptions.SSHError, client.execute, "true")
        self.assertIn("Cannot connect to root@127.0.0.1", str(e))
        self.assertIn("(exit code 3): no route to 127.0.0.1", str(e))

    def run_while(self, client, cut, timeout):
        """Run a 10 s command; ``cut()`` breaks the connection 0.5 s in."""
        self.assertEqual((0, "up\n", ""), client.execute("echo up", timeout=30))
        timer = threading.Timer(0.5, cut)
        timer.start()
        self.addCleanup(timer.cancel)
        return client.execute("sleep 10; echo done", timeout=timeout)

    def test_proxy_killed_mid_command_is_an_error(self):
        with self.client("nc %h %p") as client:
            def kill_proxy():
                os.kill(client._client.get_transport().sock.process.pid, signal.SIGKILL)
            e = self.assertRaises(rally_exceptions.SSHError, self.run_while, client,
                                  kill_proxy, 30)
            # The next command reconnects instead of reusing the dead connection.
            self.assertEqual((0, "again\n", ""), client.execute("echo again", timeout=30))
        self.assertIn("Connection to root@127.0.0.1:%d via proxy command 'nc %%h %%p' lost "
                      "while running 'sleep 10; echo done': ProxyCommandFailure: "
                      % self.server.port, str(e))
        self.assertIn("proxy command closed the connection (exit code -9)", str(e))
        # paramiko's own report of the failure still is an error.
        errors = self.logs.at_least(logging.ERROR)
        self.assertIn("ERROR paramiko.transport: Exception (client): ProxyCommand(", errors[0])

    def test_sshd_killed_mid_command_is_an_error(self):
        # nc only half-closes on the server's FIN: the proxy's stdout stays open, so
        # behind nc a dead server is seen as the command's timeout (OpenSSH's ssh
        # through nc waits the same way without ServerAliveInterval).
        def kill_session():
            for pid in descendants(self.server.process.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        with self.client("nc %h %p") as client:
            e = self.assertRaises(rally_exceptions.SSHTimeout, self.run_while, client,
                                  kill_session, 3)
        self.assertIn("Timeout executing command 'sleep 10; echo done'", str(e))
        self.assertEqual([], self.logs.at_least(logging.ERROR))
