"""Reachability probes and the proxied SSH client against real sshd, nc and ping.

The namespace case is the all-in-one cloud's situation: sshd listens inside a
network namespace that the root namespace cannot reach, and only
``ip netns exec NS nc %h %p`` gets there.
"""

import logging
import os
import subprocess
import time
import uuid

import fixtures
from rally import exceptions as rally_exceptions
import testtools

from rally_vmct.access import probes
from rally_vmct.access import ssh
from rally_vmct.timing import waiter
from tests.functional import sshd
from tests.functional import test_ssh_quiet

AIO_PROXY_COMMAND = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "aio",
                                 "proxy-command")


class NamespacedSSHServer(fixtures.Fixture):
    """sshd on 127.0.0.1:``port`` inside a fresh network namespace ``self.netns``."""

    user = "root"
    host = "127.0.0.1"

    def _setUp(self):
        self.netns = "vmct-test-%s" % uuid.uuid4().hex[:8]
        subprocess.run(["ip", "netns", "add", self.netns], check=True)
        self.addCleanup(subprocess.run, ["ip", "netns", "del", self.netns], check=False)
        subprocess.run(["ip", "netns", "exec", self.netns, "ip", "link", "set", "lo", "up"],
                       check=True)
        self.path = self.useFixture(fixtures.TempDir()).path
        self.port = sshd.free_port()
        sshd.keygen(os.path.join(self.path, "host_ed25519"))
        self.key_file = os.path.join(self.path, "client_ed25519")
        sshd.keygen(self.key_file)
        with open(self.key_file + ".pub") as pub, \
                open(os.path.join(self.path, "authorized_keys"), "w") as auth:
            auth.write(pub.read())
        config = os.path.join(self.path, "sshd_config")
        with open(config, "w") as f:
            f.write(sshd.CONFIG.format(port=self.port, path=self.path))
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, sshd.SSHD, "-D", "-e", "-f", config],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(ssh.terminate, self.process, 10)
        self.proxy_command = "ip netns exec %s nc %%h %%p" % self.netns
        deadline = time.monotonic() + 10
        while True:
            out = subprocess.run(["ip", "netns", "exec", self.netns, "nc", "-w", "1",
                                  self.host, str(self.port)], input=b"", capture_output=True)
            if out.stdout.startswith(b"SSH-"):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("sshd in %s did not answer" % self.netns)
            time.sleep(0.05)


def children():
    """PIDs of this process's children (to prove probes leave none behind)."""
    try:
        with open("/proc/%d/task/%d/children" % (os.getpid(), os.getpid())) as f:
            return set(f.read().split())
    except OSError:
        return set()


class TestDirectProbes(testtools.TestCase):

    def test_tcp_probe_connects_to_sshd(self):
        server = self.useFixture(sshd.SSHServer())
        with probes.make_probe("tcp", server.host, server.port) as probe:
            result = waiter.wait_until(probe.check, 10, 0.05, probe.what)
        self.assertLess(result.at - result.since, 1.0)
        self.assertEqual("TCP connect to 127.0.0.1:%d" % server.port, probe.what)

    def test_tcp_probe_reports_refused_port(self):
        with probes.TcpProbe("127.0.0.1", sshd.free_port()) as probe:
            ok, detail = probe.check()
            time.sleep(0.05)
            ok2, detail2 = probe.check()
            summary = probe.summary()
        self.assertFalse(ok or ok2)
        self.assertIn("refused", (detail + detail2).lower())
        self.assertIn("Connection refused x", summary)

    def test_ping_probe_loopback(self):
        with probes.make_probe("ping", "127.0.0.1") as probe:
            result = waiter.wait_until(probe.check, 10, 0.05, probe.what)
        self.assertGreaterEqual(result.attempts, 1)

    def test_ssh_probe_runs_command_with_key(self):
        server = self.useFixture(sshd.SSHServer())
        with probes.make_probe("ssh", server.host, server.port, user=server.user,
                               key_filename=server.key_file) as probe:
            ok, detail = probe.check()
        self.assertTrue(ok, detail)

    def test_ssh_probe_fails_with_wrong_key(self):
        server = self.useFixture(sshd.SSHServer())
        other = self.useFixture(sshd.SSHServer())
        with probes.make_probe("ssh", server.host, server.port, user=server.user,
                               key_filename=other.key_file) as probe:
            ok, detail = probe.check()
        self.assertFalse(ok)
        self.assertIn("Authentication failed", detail)


class TestThroughNamespace(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.server = self.useFixture(NamespacedSSHServer())

    def test_port_is_not_reachable_from_root_namespace(self):
        with probes.TcpProbe(self.server.host, self.server.port) as probe:
            ok, detail = probe.check()
            time.sleep(0.05)
            ok2, _ = probe.check()
        self.assertFalse(ok or ok2)

    def test_proxied_tcp_probe_sees_banner(self):
        before = children()
        with probes.make_probe("tcp", self.server.host, self.server.port,
                               proxy_command=self.server.proxy_command) as probe:
            result = waiter.wait_until(probe.check, 10, 0.05, probe.what)
        self.assertIsInstance(probe, probes.ProxiedTcpProbe)
        self.assertGreaterEqual(result.attempts, 1)
        self.assertEqual(before, children())

    def test_proxied_tcp_probe_closed_port_fails_with_nc_exit(self):
        port = sshd.free_port()
        with probes.make_probe("tcp", self.server.host, port,
                               proxy_command=self.server.proxy_command) as probe:
            e = self.assertRaises(waiter.WaitTimeout, waiter.wait_until, probe.check, 1.0,
                                  0.1, probe.what)
        self.assertIn("exit code 1", str(e))
        self.assertIn("exit code 1 x", probe.summary())
        self.assertIn("through 'ip netns exec", str(e))

    def test_ssh_through_proxy_command_runs_commands(self):
        client = ssh.SSH(self.server.user, self.server.host, self.server.port,
                         key_filename=self.server.key_file,
                         proxy_command=self.server.proxy_command)
        with client:
            rc, out, _ = client.execute(["echo", "vmct $((6*7))"])
            self.assertEqual((0, "vmct $((6*7))\n"), (rc, out))
            rc, out, _ = client.execute("echo $((6*7))")
            self.assertEqual((0, "42\n"), (rc, out))
            life = ssh.incarnation(client)
        boot_id = open("/proc/sys/kernel/random/boot_id").read().strip()
        self.assertIsNotNone(life)
        self.assertEqual(boot_id, life.split()[0])
        self.assertTrue(life.split()[1].isdigit(), life)

    def test_aio_proxy_command_sessions_end_without_errors(self):
        logs = self.useFixture(test_ssh_quiet.LogRecords("paramiko"))
        proxy = "env VMCT_ACCESS_NS=%s %s %%h %%p" % (self.server.netns,
                                                      os.path.abspath(AIO_PROXY_COMMAND))
        for _ in range(3):
            with ssh.SSH(self.server.user, self.server.host, self.server.port,
                         key_filename=self.server.key_file, proxy_command=proxy) as client:
                self.assertEqual((0, "vmct\n", ""), client.execute("echo vmct"))
        self.assertEqual([], logs.at_least(logging.ERROR))

    def test_ssh_proxy_failure_is_a_clear_error(self):
        client = ssh.SSH(self.server.user, self.server.host, sshd.free_port(),
                         key_filename=self.server.key_file,
                         proxy_command=self.server.proxy_command, connect_timeout=3)
        before = children()
        e = self.assertRaises(rally_exceptions.SSHError, client.execute, "true")
        self.assertIn("via proxy command", str(e))
        # nc exits 1 on a refused connection: seen as EOF or as a broken pipe.
        self.assertIn("(exit code 1)", str(e))
        self.assertIn("ProxyCommandFailure", str(e))
        self.assertEqual(before, children())
