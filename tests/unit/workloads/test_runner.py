"""Workload runner error paths with a scripted executor (outputs from real runs)."""

import os

import testtools

from rally_vmct.workloads import plan
from rally_vmct.workloads import runner

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
FACTS = ("kernel=6.1.0\narch=x86_64\ncpu_model=QEMU\nvcpus=1\nmemory_kb=230000\n"
         "boot_id=x\nuptime_s=3\nsysbench=sysbench 1.0.20\n"
         "netperf=Netperf version 2.7.0\nnetserver=/usr/bin/netserver\n")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


class ScriptedExecute(object):
    """Answers commands by the first matching substring; records every call."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def __call__(self, command, timeout):
        self.calls.append(command)
        for needle, answer in self.answers:
            if needle in command:
                if isinstance(answer, Exception):
                    raise answer
                return answer
        raise AssertionError("unexpected command %r" % command)


class RunnerTestCase(testtools.TestCase):

    def plan(self, *items):
        return plan.parse_plan(list(items))

    def test_success_parses_every_workload_and_times_it(self):
        execute = ScriptedExecute([
            ("uname", (0, FACTS, "")),
            ("sysbench cpu", (0, fixture("sysbench/1.0-cpu.txt"), "")),
            ("netperf", (0, fixture("netperf/tcp_rr.keyval"), ""))])
        timed = []

        class Timer(object):
            def __init__(self, name):
                timed.append(name)

            def __enter__(self):
                return self

            def __exit__(self, *args):
                return False

        facts, dialect, results = runner.run_plan(
            execute, self.plan({"sysbench": "cpu"}, {"netperf": "TCP_RR"}), "host h",
            timer=Timer, netperf_host="127.0.0.1")
        self.assertEqual("1.0", dialect)
        self.assertEqual(1, facts["vcpus"])
        self.assertEqual(["vmct.sysbench_cpu", "vmct.netperf_tcp_rr"], timed)
        self.assertTrue(all(r.ok for r in results))
        self.assertEqual(29788.33, results[0].metrics["events_per_second"].value)
        self.assertEqual(57719.844, results[1].metrics["transaction_rate"].value)

    def test_missing_tool_is_one_clear_error(self):
        execute = ScriptedExecute([("uname", (0, FACTS.replace(
            "netperf=Netperf version 2.7.0", "netperf="), ""))])
        error = self.assertRaises(runner.ToolMissing, runner.run_plan, execute,
                                  self.plan({"sysbench": "cpu"}, {"netperf": "TCP_RR"}),
                                  "instance vm-1 (kvm)", netperf_host="h")
        self.assertIn("netperf is not installed on instance vm-1 (kvm)", str(error))
        self.assertNotIn("sysbench is not", str(error))

    def test_failed_prepare_skips_run_but_cleans_up(self):
        execute = ScriptedExecute([
            (" prepare", (1, "", "FATAL: Cannot open file: No space left on device")),
            (" cleanup", (0, fixture("sysbench/1.0-fileio-cleanup.txt"), ""))])
        (fileio,) = self.plan({"sysbench": "fileio", "test_mode": "rndrd"})
        result = runner.run_workload(execute, fileio, "1.0")
        self.assertFalse(result.ok)
        self.assertIn("sysbench fileio rndrd prepare exited 1", result.error)
        self.assertIn("No space left", result.error)
        self.assertEqual(2, len(execute.calls))
        self.assertIn(" cleanup", execute.calls[1])

    def test_garbled_output_keeps_raw_output(self):
        execute = ScriptedExecute([("sysbench", (0, "Segmentation fault\n", ""))])
        (cpu,) = self.plan({"sysbench": "cpu"})
        result = runner.run_workload(execute, cpu, "1.0")
        self.assertFalse(result.ok)
        self.assertEqual({}, result.metrics)
        self.assertIn("Segmentation fault", result.raw_output())
        self.assertIn("sysbench cpu", result.error)

    def test_command_timeout_is_a_workload_error(self):
        execute = ScriptedExecute([("netperf", TimeoutError("no answer in 30 s"))])
        (rr,) = self.plan({"netperf": "TCP_RR"})
        result = runner.run_workload(execute, rr, netperf_host="10.0.0.1")
        self.assertIn("netperf TCP_RR run failed: TimeoutError: no answer in 30 s",
                      result.error)

    def test_netserver_unreachable(self):
        execute = ScriptedExecute([("netperf", (255, fixture("netperf/no_netserver.txt"),
                                                ""))])
        (rr,) = self.plan({"netperf": "TCP_RR"})
        result = runner.run_workload(execute, rr, netperf_host="10.0.0.1")
        self.assertIn("exited 255", result.error)
        self.assertIn("netserver", result.error)
