"""ProxySocket with real child processes, and the SSH client's close order and lost connections.

paramiko closes the proxy from the closing thread while its transport thread may be
inside ``recv``; these tests play that with a second thread of their own.
"""

import errno
import socket
import subprocess
import threading
import time
from unittest import mock

import paramiko
from rally import exceptions as rally_exceptions
from rally.utils import sshutils
import testtools

from rally_vmct.access import ssh

# A proxy that ignores SIGTERM, writes nothing and reads nothing: only a SIGKILL ends it.
STUBBORN = ["sh", "-c", "trap '' TERM; exec sleep 30"]


class Reader(threading.Thread):
    """``proxy.recv(size)`` in a thread of its own; ``outcome`` is what it returned or raised."""

    def __init__(self, proxy, size=64):
        super().__init__(daemon=True)
        self.proxy = proxy
        self.size = size
        self.outcome = None
        self.ended_at = None

    def run(self):
        try:
            self.outcome = self.proxy.recv(self.size)
        except BaseException as e:   # noqa: B902 - the test inspects whatever it was
            self.outcome = e
        self.ended_at = time.monotonic()


class TestProxySocket(testtools.TestCase):

    def proxy(self, argv):
        proxy = ssh.ProxySocket(argv)
        self.addCleanup(proxy.close)
        return proxy

    def test_bytes_go_through_the_command(self):
        proxy = self.proxy(["cat"])
        self.assertEqual(5, proxy.send(b"hello"))
        self.assertEqual(b"hello", proxy.recv(5))

    def test_close_wakes_a_blocked_reader_with_eof_before_the_command_dies(self):
        proxy = self.proxy(STUBBORN)
        proxy.stop_grace = 0.5
        reader = Reader(proxy)
        reader.start()
        time.sleep(0.2)
        self.assertTrue(reader.is_alive())
        started = time.monotonic()
        proxy.close()
        reader.join(5)
        self.assertIsInstance(reader.outcome, EOFError)
        # woken at once, not when the command finally died (0.5 s later, by SIGKILL)
        self.assertLess(reader.ended_at - started, 0.4)
        self.assertEqual(-9, proxy.process.returncode)
        self.assertTrue(proxy.process.stdout.closed)
        self.assertTrue(proxy.process.stdin.closed)

    def test_after_close_recv_is_eof_and_send_a_closed_socket(self):
        proxy = self.proxy(["cat"])
        proxy.close()
        self.assertRaises(EOFError, proxy.recv, 1)
        e = self.assertRaises(OSError, proxy.send, b"x")
        self.assertEqual(errno.EBADF, e.errno)
        proxy.close()      # idempotent, as paramiko calls it twice

    def test_closed_pipes_never_reach_paramiko_as_value_error(self):
        # Many close-while-reading races: every reader ends with EOFError.
        for _ in range(20):
            proxy = self.proxy(["cat"])
            reader = Reader(proxy)
            reader.start()
            proxy.close()
            reader.join(5)
            self.assertIsInstance(reader.outcome, EOFError)

    def test_command_exiting_on_its_own_is_a_proxy_command_failure(self):
        proxy = self.proxy(["sh", "-c", "echo no route to host >&2; exit 3"])
        e = self.assertRaises(paramiko.ProxyCommandFailure, proxy.recv, 1)
        self.assertIn("proxy command closed the connection (exit code 3): no route to host",
                      str(e))

    def test_writing_to_a_dead_command_is_a_proxy_command_failure(self):
        proxy = self.proxy(["true"])
        proxy.process.wait(5)
        e = self.assertRaises(paramiko.ProxyCommandFailure, proxy.send, b"x" * 65536)
        self.assertIn("cannot write to proxy command", str(e))

    def test_recv_times_out_like_a_socket(self):
        proxy = self.proxy(["cat"])
        proxy.settimeout(0.05)
        self.assertRaises(socket.timeout, proxy.recv, 1)


class FakeTransport:

    def __init__(self, sock, calls, active=True, saved_exception=None):
        self.sock = sock
        self.calls = calls
        self.active = active
        self.saved_exception = saved_exception

    def is_active(self):
        return self.active

    def is_alive(self):
        return True

    def join(self, timeout=None):
        self.calls.append("transport.join")


class FakeClient:

    def __init__(self, transport, calls):
        self.transport = transport
        self.calls = calls

    def get_transport(self):
        return self.transport

    def close(self):
        self.calls.append("client.close")
        self.transport = None


def refuse_signals(process):
    """Make ``process`` refuse signals with EPERM.

    As the kernel refuses them for a child that runs as another user (sudo while it
    changes user).
    """
    refused = PermissionError(errno.EPERM, "Operation not permitted")
    process.terminate = mock.Mock(side_effect=refused)
    process.kill = mock.Mock(side_effect=refused)


class TestUnsignallable(testtools.TestCase):
    """A child that refuses signals ends on the EOF its closed pipes give it."""

    def test_terminate_reaps_a_child_that_ends_on_eof(self):
        process = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        refuse_signals(process)
        ssh.terminate(process, grace=5.0)
        self.assertEqual(0, process.returncode)
        process.terminate.assert_called_once_with()
        self.assertTrue(process.stdin.closed)

    def test_terminate_leaves_a_child_that_ignores_eof_and_says_so(self):
        process = subprocess.Popen(["sleep", "2"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        refuse_signals(process)
        self.addCleanup(process.wait)
        with mock.patch.object(ssh.LOG, "warning") as warning:
            ssh.terminate(process, grace=0.2)
        self.assertIsNone(process.returncode)
        self.assertIn("left to end by itself", warning.call_args[0][0])
        self.assertIn(process.pid, warning.call_args[0])

    def test_proxy_close_does_not_raise_when_the_command_refuses_signals(self):
        proxy = ssh.ProxySocket(["cat"])
        refuse_signals(proxy.process)
        self.assertEqual(3, proxy.send(b"abc"))
        self.assertEqual(b"abc", proxy.recv(3))
        proxy.close()
        self.assertEqual(0, proxy.process.returncode)
        self.assertTrue(proxy.process.stdout.closed)
        proxy.close()   # idempotent


class TestSSH(testtools.TestCase):

    def client_with(self, transport_active=True, saved_exception=None):
        calls = []
        proxy = ssh.ProxySocket(["cat"])
        self.addCleanup(proxy.close)
        real_close = proxy.close

        def close():
            calls.append("proxy.close")
            real_close()
        proxy.close = close
        transport = FakeTransport(proxy, calls, transport_active, saved_exception)
        client = ssh.SSH("root", "192.0.2.5", proxy_command="nc %h %p")
        client._client = FakeClient(transport, calls)
        return client, calls, proxy

    def test_close_stops_the_transport_waits_for_its_thread_then_closes_the_proxy(self):
        client, calls, proxy = self.client_with()
        client.close()
        self.assertEqual(["client.close", "transport.join", "proxy.close"], calls)
        self.assertIsNotNone(proxy.process.returncode)
        self.assertFalse(client._client)

    def test_a_command_cut_off_by_a_lost_connection_is_an_error(self):
        lost = paramiko.ProxyCommandFailure("nc 192.0.2.5 22", "proxy command closed the "
                                                               "connection (exit code 1)")
        client, calls, _ = self.client_with()
        transport = client._client.transport

        def run(self, cmd, **kwargs):
            transport.active = False             # the connection died during the command
            transport.saved_exception = lost
            return -1, None
        with mock.patch.object(sshutils.SSH, "run", run):
            e = self.assertRaises(rally_exceptions.SSHError, client.execute, "sleep 9")
        self.assertEqual("Connection to root@192.0.2.5:22 via proxy command 'nc %h %p' lost "
                         "while running 'sleep 9': ProxyCommandFailure: " + str(lost), str(e))
        self.assertFalse(client._client)          # the next command connects again
        self.assertIn("proxy.close", calls)

    def test_a_command_killed_by_a_signal_keeps_rallys_exit_status(self):
        client, _, _ = self.client_with()
        with mock.patch.object(sshutils.SSH, "run", return_value=(-1, None)):
            self.assertEqual((-1, "", ""), client.execute("kill -9 $$"))
        self.assertTrue(client._client)

    def test_a_connection_that_died_between_commands_is_an_error_then_reconnects(self):
        client, calls, _ = self.client_with(transport_active=False,
                                            saved_exception=EOFError())
        e = self.assertRaises(rally_exceptions.SSHError, client.execute, "true")
        self.assertEqual("Connection to root@192.0.2.5:22 via proxy command 'nc %h %p' lost "
                         "before the command: EOFError: ", str(e))
        self.assertFalse(client._client)
        self.assertEqual(["client.close", "transport.join", "proxy.close"], calls)
