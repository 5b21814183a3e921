"""The sshd fixture answers real SSH logins with its key, and nothing else."""

import subprocess

import testtools

from tests.functional import sshd


class SSHServerTestCase(testtools.TestCase):

    def ssh(self, server, key_file, command):
        return subprocess.run(
            ["ssh", "-i", key_file, "-p", str(server.port), "-o", "BatchMode=yes",
             "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
             "%s@%s" % (server.user, server.host), command],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)

    def test_login_with_key_runs_command(self):
        server = self.useFixture(sshd.SSHServer())
        proc = self.ssh(server, server.key_file, "echo vmct-$((6*7))")
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual("vmct-42\n", proc.stdout)

    def test_other_key_is_refused(self):
        server = self.useFixture(sshd.SSHServer())
        other = self.useFixture(sshd.SSHServer())
        proc = self.ssh(server, other.key_file, "true")
        self.assertEqual(255, proc.returncode)
        self.assertIn("Permission denied", proc.stderr)
