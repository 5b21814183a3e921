"""tools/lib/libvirt-hook-qemu on a real tap device: a started domain's tap found down is
brought up again (the OVS userspace race that left a QEMU guest cut off, issue 15)."""

import hashlib
import os
import subprocess
import tempfile
import time

import testtools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOOK = os.path.join(ROOT, "tools", "lib", "libvirt-hook-qemu")
XML = "<domain><devices><interface type='ethernet'><target dev='%s'/></interface>" \
      "</devices></domain>"


def is_up(dev):
    with open("/sys/class/net/%s/flags" % dev) as f:
        return bool(int(f.read(), 16) & 1)


class LibvirtHookTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # a name per test: a test's watcher outlives it by up to VMCT_HOOK_KEEP_UP seconds
        self.tap = "tapvmct" + hashlib.sha1(self.id().encode()).hexdigest()[:6]
        subprocess.run(["ip", "link", "del", self.tap], stderr=subprocess.DEVNULL, check=False)
        subprocess.run(["ip", "tuntap", "add", "dev", self.tap, "mode", "tap"], check=True)
        self.addCleanup(subprocess.run, ["ip", "link", "del", self.tap], check=False)
        self.state = tempfile.mkdtemp(prefix="vmct-hook-")
        os.makedirs(os.path.join(self.state, "logs"))
        self.addCleanup(subprocess.run, ["rm", "-rf", self.state], check=False)

    def hook(self, *args):
        env = dict(os.environ, VMCT_HOOK_DIR=self.state, VMCT_HOOK_KEEP_UP="3")
        started = time.monotonic()
        subprocess.run([HOOK, "instance-0000abcd", *args], input=XML % self.tap, text=True,
                       env=env, check=True, timeout=10)
        return time.monotonic() - started

    def log(self):
        with open(os.path.join(self.state, "logs", "libvirt-hook.log")) as f:
            return f.read()

    def test_a_tap_found_down_after_the_start_is_brought_up(self):
        self.assertFalse(is_up(self.tap))
        took = self.hook("started", "begin", "-")
        self.assertLess(took, 2.0)      # the watcher runs in the background
        deadline = time.monotonic() + 3
        while not is_up(self.tap) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertTrue(is_up(self.tap))
        # set down again while the watcher still runs: up again
        subprocess.run(["ip", "link", "set", "dev", self.tap, "down"], check=True)
        time.sleep(1.2)
        self.assertTrue(is_up(self.tap))
        self.assertIn("instance-0000abcd started: %s was down, brought it up" % self.tap,
                      self.log())

    def test_other_operations_leave_the_tap_alone(self):
        self.hook("prepare", "begin", "-")
        time.sleep(1.0)
        self.assertFalse(is_up(self.tap))
