"""Workload plans: validation of the task argument and the commands they become."""

import shlex

import testtools

from rally_vmct.workloads import plan


class ParsePlanTestCase(testtools.TestCase):

    def test_kek_defaults_are_valid(self):
        workloads = plan.parse_plan(list(plan.KEK_WORKLOADS))
        self.assertEqual(
            ["sysbench cpu", "sysbench memory read", "sysbench memory write",
             "sysbench fileio seqrd direct", "sysbench fileio rndrd direct",
             "sysbench fileio seqwr direct", "sysbench fileio rndwr direct",
             "netperf TCP_STREAM", "netperf TCP_RR"],
            [w.label for w in workloads])
        self.assertEqual("vmct.sysbench_fileio_rndrd_direct", workloads[4].atomic_name)
        self.assertEqual("vmct.netperf_tcp_rr", workloads[-1].atomic_name)

    def test_direct_and_buffered_fileio_never_share_a_name(self):
        direct, listed, buffered, synced = plan.parse_plan([
            {"sysbench": "fileio", "test_mode": "rndrd", "extra_flags": "direct"},
            {"sysbench": "fileio", "test_mode": "rndrd", "extra_flags": ["dsync", "direct"]},
            {"sysbench": "fileio", "test_mode": "rndrd"},
            {"sysbench": "fileio", "test_mode": "rndrd", "extra_flags": "dsync"}])
        self.assertEqual("sysbench fileio rndrd direct", direct.label)
        self.assertEqual("vmct.sysbench_fileio_rndrd_direct", listed.atomic_name)
        self.assertEqual("vmct.sysbench_fileio_rndrd", buffered.atomic_name)
        self.assertEqual("sysbench fileio rndrd", synced.label)
        self.assertEqual([True, True, False, False],
                         [w.direct for w in (direct, listed, buffered, synced)])

    def test_primary_metric_is_chosen_per_tool_and_mode(self):
        cpu, timed, counted, stream, rr = plan.parse_plan([
            {"sysbench": "cpu"}, {"sysbench": "memory", "time": 3},
            {"sysbench": "fileio", "test_mode": "seqwr", "events": 1000},
            {"netperf": "TCP_STREAM"}, {"netperf": "UDP_RR"}])
        self.assertEqual("events_per_second", plan.primary_metric(cpu, "1.0"))
        # 0.4 runs a fixed amount of work by default: judged by its total time
        self.assertEqual("total_time", plan.primary_metric(cpu, "0.4"))
        self.assertEqual("events_per_second", plan.primary_metric(timed, "0.4"))
        self.assertEqual("total_time", plan.primary_metric(counted, "1.0"))
        self.assertEqual("throughput", plan.primary_metric(stream))
        self.assertEqual("transaction_rate", plan.primary_metric(rr))

    def test_sysbench_option_spellings_are_aliases(self):
        cpu, fileio = plan.parse_plan([{"sysbench": "cpu", "cpu_max_prime": 2000},
                                       {"sysbench": "fileio", "mode": "rndrd"}])
        self.assertEqual({"max_prime": 2000}, cpu.params)
        self.assertEqual({"test_mode": "rndrd"}, fileio.params)

    def test_netperf_duration_default(self):
        (rr,) = plan.parse_plan([{"netperf": "TCP_RR"}])
        self.assertEqual({"duration": 10}, rr.params)

    def test_errors_name_entry_and_fix(self):
        cases = [
            ([], "workloads must be a non-empty list"),
            ("cpu", "workloads must be a non-empty list"),
            ([{"fio": "randread"}], "workloads[0] must name exactly one tool"),
            ([{"sysbench": "cpu", "netperf": "TCP_RR"}], "exactly one tool"),
            ([{"sysbench": "cpu"}, {"sysbench": "oltp"}],
             "workloads[1]: sysbench test 'oltp' is unknown"),
            ([{"sysbench": "cpu", "primes": 3}], "workloads[0] (sysbench cpu): unknown"),
            ([{"sysbench": "fileio"}], "needs test_mode"),
            ([{"sysbench": "fileio", "mode": "rndread"}], "test_mode"),
            ([{"sysbench": "cpu", "threads": -1}], "threads"),
            ([{"netperf": "TCP_RR", "size": 1}], "workloads[0] (netperf TCP_RR): unknown"),
            ([{"netperf": "TCP_MAERTS"}], "netperf test must be one of"),
            ([{"netperf": "TCP_RR", "duration": -5}], "duration"),
        ]
        for items, message in cases:
            error = self.assertRaises(plan.PlanError, plan.parse_plan, items)
            self.assertIn(message, str(error), items)

    def test_needed_tools(self):
        workloads = plan.parse_plan([{"netperf": "TCP_RR"}, {"sysbench": "cpu"}])
        self.assertEqual(["sysbench", "netperf"], plan.needed_tools(workloads))


class StepsTestCase(testtools.TestCase):

    def test_cpu_one_parsed_step(self):
        (cpu,) = plan.parse_plan([{"sysbench": "cpu", "max_prime": 20000, "time": 5}])
        (step,) = plan.steps(cpu, dialect="1.0")
        self.assertTrue(step.parsed)
        self.assertEqual(["LC_ALL=C", "sysbench", "cpu", "--threads=1", "--time=5",
                          "--events=0", "--cpu-max-prime=20000", "run"],
                         shlex.split(step.line))

    def test_legacy_dialect(self):
        (cpu,) = plan.parse_plan([{"sysbench": "cpu", "max_prime": 20000}])
        (step,) = plan.steps(cpu, dialect="0.4")
        self.assertIn("--test=cpu", step.line)

    def test_fileio_prepare_run_cleanup_in_workdir(self):
        (fileio,) = plan.parse_plan([{"sysbench": "fileio", "test_mode": "rndrd",
                                      "total_size": "16M", "extra_flags": "direct"}])
        steps = plan.steps(fileio, dialect="1.0", workdir="/tmp/dir with space")
        self.assertEqual(["prepare", "run", "cleanup"], [s.command for s in steps])
        self.assertEqual([False, True, False], [s.parsed for s in steps])
        self.assertEqual([False, False, True], [s.always for s in steps])
        self.assertTrue(steps[0].line.startswith("mkdir -p '/tmp/dir with space' && "))
        self.assertIn("--file-test-mode=rndrd", steps[1].line)
        self.assertTrue(steps[2].line.endswith("rmdir '/tmp/dir with space'"))

    def test_fileio_default_dir_and_a_directory_that_existed_is_kept(self):
        (fileio,) = plan.parse_plan([{"sysbench": "fileio", "test_mode": "seqwr"}])
        steps = plan.steps(fileio, dialect="1.0")
        self.assertIn("cd /var/tmp/vmct-fileio && ", steps[1].line)
        kept = plan.steps(fileio, dialect="1.0", workdir="/data/it's mine",
                          remove_workdir=False)
        self.assertNotIn("rmdir", kept[2].line)
        self.assertEqual(["cd", "/data/it's mine", "&&"], shlex.split(kept[2].line)[:3])

    def test_netperf_needs_a_peer(self):
        (rr,) = plan.parse_plan([{"netperf": "TCP_RR", "duration": 3}])
        self.assertRaises(plan.PlanError, plan.steps, rr)
        (step,) = plan.steps(rr, netperf_host="10.0.0.7", control_port=12865,
                             data_port=12866)
        argv = shlex.split(step.line)
        self.assertEqual("10.0.0.7", argv[argv.index("-H") + 1])
        self.assertIn(",12866", argv)
