"""Instance facts script and parser."""

import subprocess

import testtools

from rally_vmct.workloads import facts

DEBIAN_OUTPUT = """\
kernel=6.1.0-28-cloud-amd64
arch=x86_64
cpu_model=QEMU Virtual CPU version 2.5+
vcpus=1
memory_kb=233876
boot_id=5b1e8a1c-58a0-4b8f-9d8c-2a4b7c0f1d11
uptime_s=12.43
sysbench=sysbench 1.0.20
netperf=Netperf version 2.7.0
netserver=/usr/bin/netserver
"""


class FactsTestCase(testtools.TestCase):

    def test_parse(self):
        result = facts.parse_facts(DEBIAN_OUTPUT)
        self.assertEqual(1, result["vcpus"])
        self.assertEqual(233876, result["memory_kb"])
        self.assertEqual("QEMU Virtual CPU version 2.5+", result["cpu_model"])
        self.assertEqual("sysbench 1.0.20", result["sysbench"])
        self.assertEqual([], facts.missing_tools(result, ["sysbench", "netperf"]))

    def test_missing_tools_and_message(self):
        result = facts.parse_facts(DEBIAN_OUTPUT.replace("sysbench=sysbench 1.0.20",
                                                         "sysbench="))
        missing = facts.missing_tools(result, ["sysbench", "netperf"])
        self.assertEqual(["sysbench"], missing)
        message = facts.missing_tools_message(missing, "instance vmct-1 (kvm)")
        self.assertIn("sysbench is not installed on instance vmct-1 (kvm)", message)
        self.assertIn("apt-get install sysbench", message)

    def test_unparseable_numbers_are_none_not_zero(self):
        result = facts.parse_facts("vcpus=\nmemory_kb=lots\nnoise line\n")
        self.assertIsNone(result["vcpus"])
        self.assertIsNone(result["memory_kb"])
        self.assertNotIn("noise line", result)

    def test_script_runs_on_this_host(self):
        # The script is plain POSIX sh: run it for real and check what it finds.
        proc = subprocess.run(["sh", "-c", facts.FACTS_SCRIPT], stdout=subprocess.PIPE,
                              text=True, timeout=30, check=True)
        result = facts.parse_facts(proc.stdout)
        self.assertGreaterEqual(result["vcpus"], 1)
        self.assertGreater(result["memory_kb"], 0)
        self.assertTrue(result["kernel"])
        self.assertEqual(36, len(result["boot_id"]))
