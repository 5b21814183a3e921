"""VMCT.boot_and_benchmark against a scripted fake Nova and a scripted SSH client."""

from unittest import mock

from rally.common import validation

from rally_vmct.task import benchmark_report
from rally_vmct.task.scenarios import benchmark
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import runner
from tests.unit.scenarios import test_lifecycle
from tests.unit.task import benchfakes

KIND = dict(test_lifecycle.KIND)
Invalid = validation.ValidationError
PEER = {"host": "10.0.0.9", "control_port": 12865, "data_port": 12866, "server_id": "srv-p",
        "kind": "kvm"}


def sysbench_answers():
    """Every KEK sysbench workload answered with a real sysbench 1.0 output."""
    f = benchfakes.fixture
    return [("uname", (0, benchfakes.FACTS, "")),
            (" prepare", (0, f("sysbench/1.0-fileio-prepare.txt"), "")),
            (" cleanup", (0, f("sysbench/1.0-fileio-cleanup.txt"), "")),
            ("sysbench cpu", (0, f("sysbench/1.0-cpu.txt"), "")),
            ("--memory-oper=read", (0, f("sysbench/1.0-memory-read.txt"), "")),
            ("--memory-oper=write", (0, f("sysbench/1.0-memory-write.txt"), "")),
            ("--file-test-mode=seqrd", (0, f("sysbench/1.0-fileio-seqrd.txt"), "")),
            ("--file-test-mode=rndrd", (0, f("sysbench/1.0-fileio-rndrd.txt"), "")),
            ("--file-test-mode=seqwr", (0, f("sysbench/1.0-fileio-seqwr.txt"), "")),
            ("--file-test-mode=rndwr", (0, f("sysbench/1.0-fileio-rndwr.txt"), "")),
            ("netperf -H", (0, f("netperf/tcp_rr.keyval"), ""))]


class BenchmarkTestCase(test_lifecycle.ScenarioTestCase):

    def setUp(self):
        super().setUp()
        self.commands = []
        self.answers = sysbench_answers()

    def make_benchmark(self, tenant_extra=None, **context):
        tenant = {"networks": [{"id": "net-1"}]}
        tenant.update(tenant_extra or {})
        context.setdefault("tenant", tenant)
        context.setdefault("user", {"credential": test_lifecycle.CREDENTIAL,
                                    "keypair": {"name": "kp", "private": "KEY"}})
        s = self.make(benchmark.BootAndBenchmark, context)
        s._ssh_client = lambda: benchfakes.FakeSSH(self.answers, self.commands, s.address)
        return s

    def ran(self, needle):
        return [c for _, c in self.commands if needle in c]

    def test_happy_path_with_the_peer_instance(self):
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        s.run(dict(KIND), workloads=[{"sysbench": "cpu", "cpu_max_prime": 20000},
                                     {"netperf": "TCP_RR", "duration": 10}])
        self.assertEqual(["vmct.build", "vmct.wait_for_network", "vmct.wait_for_ssh",
                          "vmct.sysbench_cpu", "vmct.netperf_tcp_rr", "vmct.delete"],
                         test_lifecycle.names(s.atomic_actions()))
        [rr] = self.ran("netperf -H")
        self.assertIn("-H 10.0.0.9 -t TCP_RR -l 10 -p 12865", rr)
        self.assertIn("-P ,12866", rr)
        self.assertIn("--cpu-max-prime=20000", self.ran("sysbench cpu")[0])
        record = self.nova.servers.created[0]
        self.assertEqual("kp", record.kwargs["key_name"])
        self.assertEqual([record.id], self.nova.servers.deleted)
        titles = [c["title"] for c in s._output["additive"]]
        self.assertEqual("kvm: lifecycle [s]", titles[0])
        self.assertIn("kvm: sysbench cpu [events/s]", titles)
        self.assertTrue(any(t.startswith("kvm: netperf TCP_RR [") for t in titles), titles)
        [metrics] = self.output(s, "complete", "workload metrics")
        rows = {(r[0], r[1]): r[2] for r in metrics["data"]["rows"]}
        self.assertEqual(29788.33, rows[("sysbench cpu", "events_per_second")])
        self.assertEqual(57719.844, rows[("netperf TCP_RR", "transaction_rate")])
        [facts] = self.output(s, "complete", "instance facts")
        facts = dict(facts["data"]["rows"])
        self.assertEqual("instance srv-1 (kind kvm, 10.0.0.5)", facts["where"])
        self.assertEqual("1.0", facts["sysbench dialect"])

    def test_default_workloads_without_peer_are_keks_sysbench_ones(self):
        s = self.make_benchmark()
        s.run(dict(KIND))
        timed = [a["name"] for a in s.atomic_actions()][3:-1]
        expected = [w.atomic_name for w in plan_lib.parse_plan(
            plan_lib.default_workloads(with_network=False))]
        self.assertEqual(expected, timed)
        self.assertEqual(7, len(timed))
        self.assertEqual([], self.ran("netperf -H"))
        self.assertIn("--file-extra-flags=direct", self.ran("--file-test-mode=rndwr")[0])
        self.assertIn("--file-block-size=4K", self.ran("--file-test-mode=rndwr")[0])

    def test_default_workloads_with_peer_include_netperf(self):
        self.answers.insert(0, ("TCP_STREAM", (0, benchfakes.fixture(
            "netperf/tcp_stream.keyval"), "")))
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        s.run(dict(KIND))
        timed = [a["name"] for a in s.atomic_actions()][3:-1]
        self.assertEqual(["vmct.netperf_tcp_stream", "vmct.netperf_tcp_rr"], timed[-2:])
        self.assertEqual(9, len(timed))

    def test_missing_tool_is_one_clear_error_and_the_server_is_deleted(self):
        self.answers[0] = ("uname", (0, benchfakes.FACTS.replace(
            "sysbench=sysbench 1.0.20", "sysbench="), ""))
        s = self.make_benchmark()
        e = self.assertRaises(runner.ToolMissing, s.run, dict(KIND),
                              workloads=[{"sysbench": "cpu"}])
        message = str(e)
        self.assertIn("sysbench is not installed on instance srv-1 (kind kvm", message)
        self.assertIn("tools/images/docker/README.md", message)
        self.assertIn("vmct_workload_image context with prepare: true", message)
        self.assertEqual(1, message.count("sysbench is not installed"))
        self.assertEqual([], self.ran("sysbench cpu"))
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)
        self.assertEqual([], benchfakes.live_servers(self.nova))

    def test_garbled_output_fails_with_raw_output_after_delete(self):
        self.answers.insert(0, ("sysbench cpu", (0, "Segmentation fault\n", "")))
        s = self.make_benchmark()
        self.assertRaises(benchmark_report.WorkloadsFailed, s.run, dict(KIND),
                          workloads=[{"sysbench": "cpu"}])
        [raw] = self.output(s, "complete", "raw output (failed)")
        self.assertIn("Segmentation fault", raw["data"])
        self.assertEqual("vmct.delete", s.atomic_actions()[-1]["name"])
        self.assertEqual([], benchfakes.live_servers(self.nova))

    def test_peer_instance_without_the_context_fails_before_booting(self):
        s = self.make_benchmark()
        e = self.assertRaises(benchmark.PeerMissing, s.run, dict(KIND),
                              workloads=[{"netperf": "TCP_RR"}], netperf_peer="instance")
        self.assertIn("vmct_netperf_peer context", str(e))
        self.assertEqual([], self.nova.servers.created)

    def test_netperf_with_peer_none_is_rejected_before_booting(self):
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        e = self.assertRaises(plan_lib.PlanError, s.run, dict(KIND),
                              workloads=[{"netperf": "TCP_RR"}], netperf_peer="none")
        self.assertIn("netperf_peer is 'none'", str(e))
        self.assertEqual([], self.nova.servers.created)

    def test_explicit_peer_host_starts_netserver_over_ssh(self):
        peer = {"host": "198.51.100.7", "control_port": 12000, "data_port": 12001,
                "ssh": {"host": "198.51.100.7", "user": "bench"}}
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        with mock.patch.object(benchmark.native, "ensure_netserver") as ensure:
            s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}], netperf_peer=peer)
        ensure.assert_called_once_with(peer)
        self.assertEqual("vmct.start_netserver", s.atomic_actions()[0]["name"])
        [rr] = self.ran("netperf -H")
        self.assertIn("-H 198.51.100.7", rr)
        self.assertIn("-p 12000", rr)

    def test_explicit_peer_without_ssh_is_used_as_is(self):
        s = self.make_benchmark()
        with mock.patch.object(benchmark.native, "ensure_netserver") as ensure:
            s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}],
                  netperf_peer={"host": "198.51.100.8"})
        ensure.assert_not_called()
        self.assertIn("-H 198.51.100.8", self.ran("netperf -H")[0])

    def test_workload_image_context_image_is_booted_for_its_kind(self):
        s = self.make_benchmark(vmct_workload_image={"kind": "kvm", "image_id": "img-ready"})
        s.run(dict(KIND), workloads=[{"sysbench": "cpu"}], ssh_user="debian")
        self.assertEqual("img-ready", self.nova.servers.created[0].kwargs["image"])
        self.assertEqual("debian", s.kind["ssh_user"])

    def test_workload_image_of_another_kind_is_ignored(self):
        s = self.make_benchmark(vmct_workload_image={"kind": "docker",
                                                     "image_id": "img-docker"})
        s.run(dict(KIND), workloads=[{"sysbench": "cpu"}])
        self.assertEqual("img-1", self.nova.servers.created[0].kwargs["image"])

    def test_lost_ssh_during_facts_deletes_the_server(self):
        self.answers[0] = ("uname", OSError("connection reset"))
        s = self.make_benchmark()
        self.assertRaises(OSError, s.run, dict(KIND), workloads=[{"sysbench": "cpu"}])
        self.assertEqual([], benchfakes.live_servers(self.nova))


class ValidatorTestCase(test_lifecycle.ScenarioTestCase):

    def check(self, args, contexts):
        validator = benchmark.BenchmarkAccessValidator()
        return validator.validate(None, {"args": args, "contexts": contexts}, None, None)

    def test_needs_a_key(self):
        e = self.assertRaises(Invalid, self.check, {"kind": dict(KIND)}, {"users": {}})
        self.assertIn("add the 'keypair' context", str(e))
        self.check({"kind": dict(KIND, ssh_key_file="/k")}, {})

    def test_instance_peer_needs_the_context(self):
        e = self.assertRaises(Invalid, self.check,
                              {"kind": KIND, "netperf_peer": "instance"}, {"keypair": {}})
        self.assertIn("needs the 'vmct_netperf_peer' context", str(e))
        self.check({"kind": KIND, "netperf_peer": "instance"},
                   {"keypair": {}, "vmct_netperf_peer": {}})

    def test_netperf_workloads_need_a_peer(self):
        args = {"kind": KIND, "workloads": [{"netperf": "TCP_RR"}]}
        e = self.assertRaises(Invalid, self.check, args, {"keypair": {}})
        self.assertIn("lists netperf workloads but there is no netserver peer", str(e))
        e = self.assertRaises(Invalid, self.check, dict(args, netperf_peer="none"),
                              {"keypair": {}, "vmct_netperf_peer": {}})
        self.assertIn("no netserver peer", str(e))
        self.check(args, {"keypair": {}, "vmct_netperf_peer": {}})
        self.check(dict(args, netperf_peer={"host": "h"}), {"keypair": {}})
