"""guest_tools scripts, run by a real /bin/sh with fake package managers on PATH."""

import os
import shutil
import subprocess
import tempfile

import testtools

from rally_vmct.workloads import guest_tools


class GuestToolsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.bin = tempfile.mkdtemp()
        self.addCleanup(subprocess.call, ["rm", "-rf", self.bin])
        self.log = os.path.join(self.bin, "calls.log")

    def tool(self, name, body='echo "%(name)s $*" >> %(log)s'):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body % {"name": name, "log": self.log} + "\n")
        os.chmod(path, 0o755)

    def sh(self, script):
        # Only our fake tools on PATH: the machine's own apt-get stays out of reach.
        return subprocess.run(["/bin/sh", "-c", script], env={"PATH": self.bin},
                              capture_output=True, text=True, timeout=30)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def test_check_lists_missing_tools(self):
        self.tool("sysbench")
        proc = self.sh(guest_tools.check_tools_command(["sysbench", "netperf", "netserver"]))
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual(["netperf", "netserver"], guest_tools.parse_missing(proc.stdout))

    def test_check_rejects_unknown_tools(self):
        e = self.assertRaises(ValueError, guest_tools.check_tools_command, ["fio; rm -rf /"])
        self.assertIn("unknown tool", str(e))

    def test_install_with_apk(self):
        self.tool("apk")
        proc = self.sh(guest_tools.install_script(["sysbench", "netperf", "netserver"]))
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual("apk", guest_tools.parse_manager(proc.stdout))
        self.assertEqual(["apk add --no-cache sysbench netperf"], self.calls())

    def test_install_prefers_apt_get_and_updates_first(self):
        self.tool("apt-get")
        self.tool("dnf")
        proc = self.sh(guest_tools.install_script(["netserver"]))
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual("apt-get", guest_tools.parse_manager(proc.stdout))
        self.assertEqual(["apt-get update -q",
                          "apt-get install -y -q --no-install-recommends netperf"],
                         self.calls())

    def test_install_failure_is_the_exit_code(self):
        self.tool("dnf", 'echo "No match for argument: netperf" >&2; exit 1')
        proc = self.sh(guest_tools.install_script(["netperf"]))
        self.assertEqual(1, proc.returncode)
        self.assertEqual("dnf", guest_tools.parse_manager(proc.stdout))
        self.assertIn("No match for argument", proc.stderr)

    def test_no_package_manager(self):
        proc = self.sh(guest_tools.install_script(["sysbench"]))
        self.assertEqual(3, proc.returncode)
        self.assertIsNone(guest_tools.parse_manager(proc.stdout))
        self.assertIn("no known package manager (apt-get, dnf, yum, apk)", proc.stderr)

    def test_facts_lines_and_check_agree(self):
        # One presence test: the facts' tool lines and the check see the same tools.
        self.tool("sysbench", 'echo "sysbench 1.0.20"')
        self.tool("netserver", "true")
        os.symlink(shutil.which("head"), os.path.join(self.bin, "head"))
        found = dict(line.split("=", 1) for line in
                     self.sh(guest_tools.facts_command()).stdout.splitlines())
        self.assertEqual({"sysbench": "sysbench 1.0.20", "netperf": "",
                          "netserver": os.path.join(self.bin, "netserver")}, found)
        self.assertEqual(["netperf"], guest_tools.missing(guest_tools.TOOLS, found))
        check = self.sh(guest_tools.check_tools_command(guest_tools.TOOLS))
        self.assertEqual(["netperf"], guest_tools.parse_missing(check.stdout))

    def test_missing_message_names_tools_and_images(self):
        text = guest_tools.missing_message(["sysbench"], "image x of kind 'kvm'")
        self.assertIn("sysbench is not installed on image x of kind 'kvm'", text)
        self.assertIn("tools/images/docker/README.md", text)
        self.assertIn("prepare: true", text)
        self.assertNotIn("prepare", guest_tools.missing_message(["netserver"], "p", False))

    def test_missing_message_has_each_tools_one_hint(self):
        text = guest_tools.missing_message(["sysbench", "netperf", "netserver"], "host h")
        self.assertTrue(text.startswith(
            "sysbench, netperf and netserver are not installed on host h. To install: "
            "sysbench: package sysbench (Debian/Ubuntu: apt-get install sysbench); "
            "netperf: package netperf (Debian: apt-get install netperf, from the non-free "
            "component; "), text)
        self.assertIn("netserver: package netperf (netserver ships with it)", text)
        self.assertIn("vmct_workload_image context with prepare: true", text)

    def test_require_raises_one_error_for_the_absent_tools(self):
        found = {"sysbench": "sysbench 1.0.20", "netperf": ""}
        guest_tools.require(["sysbench"], found, "host h")
        e = self.assertRaises(guest_tools.ToolMissing, guest_tools.require,
                              ["sysbench", "netperf", "netserver"], found, "host h")
        self.assertIn("netperf and netserver are not installed on host h", str(e))
        self.assertNotIn("sysbench is not", str(e))
        self.assertRaises(ValueError, guest_tools.missing, ["fio"], found)
