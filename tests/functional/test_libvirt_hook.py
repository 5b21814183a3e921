"""tools/lib/libvirt-hook-qemu on a real tap device: a started domain's tap found down is
brought up again (the OVS userspace race that left a QEMU guest cut off, issue 15), and a
restarted domain's port is re-added only when nobody re-plugged it.

Open vSwitch is a stand-in here (an ``ovs-vsctl`` on PATH that keeps each interface's row in
a file and records the changes); the devstack runner's node and the all-in-one cloud run the
hook with the real one (the reboot task's soft reboots).
"""

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


# ovs-vsctl's commands the hook uses; an interface's row is the file OVS/row-TAP
FAKE_OVS_VSCTL = """#!/bin/sh
while [ "${1#--}" != "$1" ]; do shift; done
case "$1 $2 $4" in
    "get interface _uuid") cat "$OVS/row-$3" 2>/dev/null || exit 1 ;;
    "get interface ofport") echo 7 ;;
    "get port tag") echo 3 ;;
    "get interface external_ids") echo '{iface-id="p1"}' ;;
    port-to-br*) [ -f "$OVS/row-$2" ] && echo br-int || exit 1 ;;
    *) echo "$*" >> "$OVS/changes" ;;
esac
"""


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

    def fake_ovs(self):
        """An ovs-vsctl stand-in on PATH; its directory (``row-TAP`` files, ``changes``)."""
        self.ovs = os.path.join(self.state, "ovs")
        os.makedirs(self.ovs)
        path = os.path.join(self.ovs, "ovs-vsctl")
        with open(path, "w") as f:
            f.write(FAKE_OVS_VSCTL)
        os.chmod(path, 0o755)
        self.set_row("row-1")

    def set_row(self, row):
        with open(os.path.join(self.ovs, "row-" + self.tap), "w") as f:
            f.write(row + "\n")

    def ovs_changes(self):
        path = os.path.join(self.ovs, "changes")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return f.read().splitlines()

    def hook(self, *args):
        env = dict(os.environ, VMCT_HOOK_DIR=self.state, VMCT_HOOK_KEEP_UP="3")
        if getattr(self, "ovs", None):
            env.update(OVS=self.ovs, PATH=self.ovs + os.pathsep + os.environ["PATH"])
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

    def test_a_restarted_domains_port_is_re_added_as_it_was(self):
        # a soft reboot: the domain stops and starts again, nobody re-plugs its port
        self.fake_ovs()
        self.hook("started", "begin", "-")
        self.assertEqual([], self.ovs_changes())
        self.hook("started", "begin", "-")
        self.assertEqual(["del-port br-int %s" % self.tap,
                          "add-port br-int %s tag=3 -- set interface %s ofport_request=7 "
                          "external_ids={iface-id=\"p1\"}" % (self.tap, self.tap)],
                         self.ovs_changes())
        self.assertIn("restarted: re-added %s to br-int (ofport 7 tag=3)" % self.tap, self.log())
        self.assertTrue(is_up(self.tap))

    def test_a_port_re_plugged_while_the_domain_was_down_is_left_alone(self):
        # a hard reboot or a start after a stop: os-vif re-plugged the port (a new row), and
        # re-adding it again would race the Neutron agent
        self.fake_ovs()
        self.hook("started", "begin", "-")
        self.set_row("row-2")
        self.hook("started", "begin", "-")
        self.assertEqual([], self.ovs_changes())
        self.assertIn("restarted: %s was re-plugged, left alone" % self.tap, self.log())

    def test_each_start_notes_the_rows_it_leaves(self):
        # a soft reboot re-adds, then os-vif re-plugs (a hard reboot): left alone, and the
        # row noted for the next start is the new one
        self.fake_ovs()
        self.hook("started", "begin", "-")
        self.hook("started", "begin", "-")
        self.set_row("row-3")
        self.hook("started", "begin", "-")
        self.assertEqual(2, len(self.ovs_changes()))
        with open(os.path.join(self.state, "run", "tap-rows", "instance-0000abcd")) as f:
            self.assertEqual("%s row-3\n" % self.tap, f.read())
