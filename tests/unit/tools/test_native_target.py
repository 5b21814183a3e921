"""Private keys the project writes are 0600 from the moment they exist.

tools/native-target's ``keys`` (sourced, with a VMCT_AIO_DIR of the test's own: no
sshd is started and no port is touched), run under umask 000 so that nothing but
the script's own care can make the files private.
"""

import os
import shutil
import stat
import subprocess

import fixtures
import testtools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
NATIVE_TARGET = os.path.join(ROOT, "tools", "native-target")
PRIVATE = ("host_ed25519", "id_ed25519")

# Records the umask it runs under, then makes the files as ssh-keygen -f FILE would.
KEYGEN_STUB = """#!/bin/sh
umask >> "$KEYGEN_LOG"
while [ $# -gt 0 ]; do [ "$1" = -f ] && f=$2; shift; done
echo "PRIVATE $f" > "$f"
echo "ssh-ed25519 AAAA-$(basename "$f")" > "$f.pub"
"""


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@testtools.skipUnless(shutil.which("ssh-keygen"), "needs ssh-keygen (openssh-client)")
class TestNativeTargetKeys(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.aio = os.path.join(self.useFixture(fixtures.TempDir()).path, "aio")
        self.native = os.path.join(self.aio, "native")

    def keys(self, path=None):
        env = dict(os.environ, VMCT_AIO_DIR=self.aio)
        if path:
            env["PATH"] = path + os.pathsep + env["PATH"]
        return subprocess.run(["bash", "-c", 'umask 000; source "$1"; keys', "bash", NATIVE_TARGET],
                              env=env, capture_output=True, text=True, timeout=60, check=True)

    def read(self, name):
        with open(os.path.join(self.native, name)) as f:
            return f.read()

    def test_keys_directory_and_authorized_keys_are_private(self):
        self.keys()
        self.assertEqual(0o700, mode(self.native))
        for name in PRIVATE + ("host_ed25519.pub", "id_ed25519.pub", "authorized_keys"):
            self.assertEqual(0o600, mode(os.path.join(self.native, name)), name)
        self.assertIn("PRIVATE KEY", self.read("id_ed25519"))
        self.assertEqual('from="127.0.0.1" %s' % self.read("id_ed25519.pub"),
                         self.read("authorized_keys"))
        # the state directory itself keeps the caller's umask (the AIO shares it)
        self.assertEqual(0o777, mode(self.aio))

    def test_keys_are_written_under_umask_077(self):
        bin_dir = self.useFixture(fixtures.TempDir()).path
        keygen = os.path.join(bin_dir, "ssh-keygen")
        with open(keygen, "w") as f:
            f.write(KEYGEN_STUB)
        os.chmod(keygen, 0o755)
        log = os.path.join(bin_dir, "umask.log")
        self.useFixture(fixtures.EnvironmentVariable("KEYGEN_LOG", log))
        self.keys(path=bin_dir)
        with open(log) as f:
            self.assertEqual(["0077", "0077"], f.read().split())
        for name in PRIVATE:
            self.assertEqual(0o600, mode(os.path.join(self.native, name)), name)

    def test_existing_keys_are_kept(self):
        self.keys()
        before = [self.read(name) for name in PRIVATE]
        self.keys()
        self.assertEqual(before, [self.read(name) for name in PRIVATE])

    def test_a_key_readable_by_others_is_replaced(self):
        self.keys()
        key = os.path.join(self.native, "id_ed25519")
        old = self.read("id_ed25519")
        os.chmod(key, 0o644)
        result = self.keys()
        self.assertIn("readable by others: making a new key", result.stderr)
        self.assertNotEqual(old, self.read("id_ed25519"))
        self.assertEqual(0o600, mode(key))
        self.assertEqual('from="127.0.0.1" %s' % self.read("id_ed25519.pub"),
                         self.read("authorized_keys"))
