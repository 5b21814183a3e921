"""Workload runner error paths with a scripted executor (outputs from real runs)."""

import os

import testtools

from rally_vmct.workloads import plan
from rally_vmct.workloads import repeat
from rally_vmct.workloads import runner

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
FACTS = ("kernel=6.1.0\narch=x86_64\ncpu_model=QEMU\nvcpus=1\nmemory_kb=230000\n"
         "boot_id=x\nuptime_s=3\nsysbench=sysbench 1.0.20\n"
         "netperf=Netperf version 2.7.0\nnetserver=/usr/bin/netserver\n")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def cpu_output(events_per_second):
    """The real sysbench 1.0 cpu output with another events/s figure."""
    return fixture("sysbench/1.0-cpu.txt").replace(
        "events per second: 29788.33", "events per second: %s" % events_per_second)


class Answers(object):
    """Successive answers to the same command, the last one repeated."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, command):
        self.calls += 1
        return self.answers[min(self.calls, len(self.answers)) - 1]


class ScriptedExecute(object):
    """``execute(command, timeout)`` of the scenario tests' fake SSH; ``calls``: the commands.

    The first answer whose substring is in the command answers (see ``benchfakes.FakeSSH``).
    """

    def __init__(self, answers):
        # imported here: benchfakes takes FACTS and fixture from this module
        from tests.unit.task.scenarios.benchmark import fakes as benchfakes
        self.log = []
        self.ssh = benchfakes.FakeSSH(answers, self.log)

    @property
    def calls(self):
        return [command for _, command in self.log]

    def __call__(self, command, timeout):
        return self.ssh.execute(command, timeout)


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

    def test_lost_connection_keeps_what_and_why_of_a_long_command(self):
        lost = ConnectionError("Connection to root@10.0.0.5:22 via proxy command 'x' lost "
                               "while running '%s': EOFError: closed by the peer" % ("a" * 900))
        execute = ScriptedExecute([("sysbench cpu", lost)])
        (cpu,) = self.plan({"sysbench": "cpu"})
        result = runner.run_workload(execute, cpu, dialect="1.0")
        self.assertIn("sysbench cpu run failed: ConnectionError: Connection to root@10.0.0.5",
                      result.error)
        self.assertIn(" ... ", result.error)
        self.assertTrue(result.error.endswith("EOFError: closed by the peer"), result.error)
        self.assertLess(len(result.error), 450)

    def test_netserver_unreachable(self):
        execute = ScriptedExecute([("netperf", (255, fixture("netperf/no_netserver.txt"),
                                                ""))])
        (rr,) = self.plan({"netperf": "TCP_RR"})
        result = runner.run_workload(execute, rr, netperf_host="10.0.0.1")
        self.assertIn("exited 255", result.error)
        self.assertIn("netserver", result.error)


class RepetitionTestCase(testtools.TestCase):

    def cpu(self):
        return plan.parse_plan([{"sysbench": "cpu", "time": 1}])[0]

    def test_stops_once_the_primary_metric_meets_the_cv_target(self):
        runs = Answers(*[(0, cpu_output(v), "") for v in (1000, 1300, 1010, 1005, 1000)])
        execute = ScriptedExecute([("sysbench cpu", runs)])
        policy = repeat.RunPolicy(min_runs=2, max_runs=8, cv_target=1)
        result = runner.run_workload(execute, self.cpu(), "1.0", policy=policy)
        # The noisy second run keeps the CV above 1 %: it runs until max_runs.
        values = [run["events_per_second"].value for run in result.runs]
        self.assertEqual(8, len(values))
        self.assertIn("max_runs 8 reached", result.stop_reason)
        runs = Answers(*[(0, cpu_output(v), "") for v in (1000, 1004, 998)])
        execute = ScriptedExecute([("sysbench cpu", runs)])
        result = runner.run_workload(execute, self.cpu(), "1.0", policy=policy)
        self.assertEqual([1000.0, 1004.0], [r["events_per_second"].value for r in result.runs])
        self.assertEqual("events_per_second", result.primary)
        self.assertIn("<= cv_target 1 %", result.stop_reason)
        # the charts' value is the mean over the runs, with the unit kept
        self.assertEqual(1002.0, result.metrics["events_per_second"].value)
        self.assertEqual("events/s", result.metrics["events_per_second"].unit)
        self.assertEqual(list(result.runs[0]), list(result.metrics))

    def test_fileio_prepares_once_runs_repeat_cleans_up_once(self):
        execute = ScriptedExecute([
            (" prepare", (0, fixture("sysbench/1.0-fileio-prepare.txt"), "")),
            (" cleanup", (0, fixture("sysbench/1.0-fileio-cleanup.txt"), "")),
            ("--file-test-mode=rndrd", (0, fixture("sysbench/1.0-fileio-rndrd.txt"), ""))])
        (fileio,) = plan.parse_plan([{"sysbench": "fileio", "test_mode": "rndrd",
                                      "extra_flags": "direct"}])
        result = runner.run_workload(execute, fileio, "1.0",
                                     policy=repeat.RunPolicy(min_runs=3))
        self.assertTrue(result.ok, result.error)
        self.assertEqual(3, len(result.runs))
        self.assertEqual(["prepare", "run", "run", "run", "cleanup"],
                         [c.split()[-1] if " cleanup" not in c else "cleanup"
                          for c in execute.calls])

    def test_a_failing_repetition_fails_the_workload_and_keeps_earlier_runs(self):
        runs = Answers((0, cpu_output(1000), ""), (137, "", "Killed"))
        execute = ScriptedExecute([("sysbench cpu", runs)])
        result = runner.run_workload(execute, self.cpu(), "1.0",
                                     policy=repeat.RunPolicy(min_runs=3))
        self.assertIn("sysbench cpu run exited 137: Killed", result.error)
        self.assertEqual(1, len(result.runs))
        self.assertEqual(2, runs.calls)


class FileioPlacementTestCase(testtools.TestCase):

    def fileio_answers(self, probe):
        return [("uname", (0, fixture("facts/qemu-tcg-guest.facts"), "")),
                ("vmct-mounts-begin", probe),
                (" prepare", (0, fixture("sysbench/1.0-fileio-prepare.txt"), "")),
                (" cleanup", (0, fixture("sysbench/1.0-fileio-cleanup.txt"), "")),
                ("--file-test-mode=seqwr", (0, fixture("sysbench/1.0-fileio-seqwr.txt"), "")),
                ("sysbench cpu", (0, fixture("sysbench/1.0-cpu.txt"), ""))]

    def test_facts_say_where_the_files_live_and_how_often_it_ran(self):
        execute = ScriptedExecute(self.fileio_answers(
            (0, fixture("facts/qemu-tcg-guest-var-tmp.probe"), "")))
        workloads = plan.parse_plan([
            {"sysbench": "cpu"},
            {"sysbench": "fileio", "test_mode": "seqwr", "extra_flags": "direct"}])
        facts, dialect, results = runner.run_plan(execute, workloads, "instance i")
        self.assertEqual({"fileio_dir": "/var/tmp/vmct-fileio", "fileio_fs": "ext2",
                          "fileio_device": "/dev/vda (virtio_blk)",
                          "fileio_mount": "/var/tmp", "fileio_direct": "on"},
                         {k: v for k, v in facts.items() if k.startswith("fileio_")})
        self.assertEqual(("QEMU TCG (emulated)", "yes"),
                         (facts["virtualization"], facts["emulated"]))
        self.assertEqual("1", facts["runs"])
        self.assertEqual("sysbench cpu: 1, sysbench fileio seqwr direct: 1", facts["runs_done"])
        # made by the probe, so removed after the clean-up
        self.assertTrue(execute.calls[-1].endswith("&& rmdir /var/tmp/vmct-fileio"))

    def test_a_directory_that_existed_is_left_in_place(self):
        probe = fixture("facts/qemu-tcg-guest-var-tmp.probe").replace("existed=no",
                                                                      "existed=yes")
        execute = ScriptedExecute(self.fileio_answers((0, probe, "")))
        workloads = plan.parse_plan([{"sysbench": "fileio", "test_mode": "seqwr"}])
        facts, _, _ = runner.run_plan(execute, workloads, "host h", fileio_dir="/srv/fio")
        self.assertEqual("off", facts["fileio_direct"])
        self.assertIn("d=/srv/fio", execute.calls[1])
        self.assertNotIn("rmdir", execute.calls[-1])

    def test_no_fileio_no_probe(self):
        execute = ScriptedExecute(self.fileio_answers(AssertionError("probed")))
        facts, _, _ = runner.run_plan(execute, plan.parse_plan([{"sysbench": "cpu"}]), "h")
        self.assertEqual("not used (no fileio workload)", facts["fileio_fs"])
        self.assertEqual("not used (no fileio workload)", facts["fileio_direct"])

    def test_uncreatable_directory_is_one_clear_error(self):
        execute = ScriptedExecute(self.fileio_answers(
            (1, "existed=no\n", "mkdir: can't create directory '/ro/x': Read-only file system")))
        error = self.assertRaises(
            runner.StorageUnusable, runner.run_plan, execute,
            plan.parse_plan([{"sysbench": "fileio", "test_mode": "seqwr"}]), "instance i",
            fileio_dir="/ro/x")
        self.assertIn("cannot create the fileio work directory /ro/x on instance i", str(error))
        self.assertIn("Read-only file system", str(error))
        self.assertIn("set the task argument fileio_dir", str(error))

    def test_o_direct_refused_names_the_fix(self):
        # sysbench 1.0.20's real answer on ramfs (tests/functional/test_fileio_storage.py)
        refused = ("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n"
                   "2 files, 2048Kb each, 4Mb total\nCreating files for the test...\n"
                   "Extra file open flags: directio\n"
                   "FATAL: Can't open file errno = 22 (Invalid argument)\n")
        execute = ScriptedExecute([(" prepare", (1, refused, "")),
                                   (" cleanup", (0, "", ""))])
        (direct,) = plan.parse_plan([{"sysbench": "fileio", "test_mode": "rndrd",
                                      "extra_flags": "direct"}])
        result = runner.run_workload(execute, direct, "1.0", workdir="/mnt/r",
                                     fileio_fs="ramfs")
        self.assertIn("sysbench fileio rndrd direct prepare exited 1", result.error)
        self.assertIn("the file system of fileio_dir /mnt/r (ramfs) refused O_DIRECT",
                      result.error)
        self.assertIn("drop extra_flags: direct", result.error)
        (buffered,) = plan.parse_plan([{"sysbench": "fileio", "test_mode": "rndrd"}])
        result = runner.run_workload(execute, buffered, "1.0", workdir="/mnt/r")
        self.assertNotIn("O_DIRECT", result.error)
