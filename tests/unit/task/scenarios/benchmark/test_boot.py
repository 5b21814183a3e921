"""VMCT.boot_and_benchmark against a scripted fake Nova and a scripted SSH client."""

import shlex
import types
from unittest import mock

from rally.common import validation
from rally.task import scenario as rally_scenario

from rally_vmct.task.scenarios.benchmark import report
from rally_vmct.task.scenarios.benchmark import shared
from rally_vmct.task.scenarios.benchmark import nova_facts
from rally_vmct.task import output
from rally_vmct.task.scenarios.benchmark import boot
from rally_vmct.task import validators
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import runner
from tests.unit.timing import fakes
from tests.unit.task.scenarios import test_lifecycle
from tests.unit.task.scenarios.benchmark import fakes as benchfakes
from tests.unit.workloads import test_runner

KIND = dict(test_lifecycle.KIND)
Invalid = validation.ValidationError
PEER = {"host": "10.0.0.9", "control_port": 12865, "data_port": 12866, "server_id": "srv-p",
        "kind": "kvm"}


class FakeAdminNova(object):
    """Admin Nova: servers with their compute host, and os-hypervisors."""

    def __init__(self, hosts, hypervisors=None, error=None):
        self.hosts = hosts              # server id -> (host, hypervisor hostname)
        self.error = error
        self.servers = types.SimpleNamespace(get=self.get)
        self.hypervisors = types.SimpleNamespace(list=lambda: list(hypervisors or []))

    def get(self, server_id):
        if self.error:
            raise self.error
        host, hostname = self.hosts[server_id]
        return types.SimpleNamespace(**{"id": server_id, "OS-EXT-SRV-ATTR:host": host,
                                        "OS-EXT-SRV-ATTR:hypervisor_hostname": hostname})


def hypervisor(hostname, kind="QEMU", version=7002022):
    return types.SimpleNamespace(hypervisor_hostname=hostname, hypervisor_type=kind,
                                 hypervisor_version=version)


class BenchmarkTestCase(test_lifecycle.ScenarioTestCase):

    def setUp(self):
        super().setUp()
        self.commands = []
        self.answers = benchfakes.answers()

    def make_benchmark(self, tenant_extra=None, **context):
        tenant = {"networks": [{"id": "net-1"}]}
        tenant.update(tenant_extra or {})
        context.setdefault("tenant", tenant)
        context.setdefault("user", {"credential": test_lifecycle.CREDENTIAL,
                                    "keypair": {"name": "kp", "private": "KEY"}})
        s = self.make(boot.BootAndBenchmark, context)
        test = self

        class Session(s.session_class):
            def ssh_client(self):
                return benchfakes.FakeSSH(test.answers, test.commands, self.address)
        s.session_class = Session
        return s

    def ran(self, needle):
        return [c for _, c in self.commands if needle in c]

    def facts(self, s):
        [facts] = self.output(s, "complete", "instance facts")
        return dict(facts["data"]["rows"])

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
        facts = self.facts(s)
        self.assertEqual("instance srv-1 (kind kvm, 10.0.0.5)", facts["where"])
        self.assertEqual("1.0", facts["sysbench dialect"])
        self.assertEqual("instance -> netserver instance 10.0.0.9 over the cloud network "
                         "(Neutron)", facts["netperf_path"])
        self.assertEqual("unknown (no admin credential)", facts["nova_hypervisor_type"])
        self.assertEqual("1", facts["runs"])

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
        self.assertEqual(1, message.count("tools/images/docker/README.md"))
        self.assertEqual([], self.ran("sysbench cpu"))
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)
        self.assertEqual([], benchfakes.live_servers(self.nova))

    def test_garbled_output_fails_with_raw_output_after_delete(self):
        self.answers.insert(0, ("sysbench cpu", (0, "Segmentation fault\n", "")))
        s = self.make_benchmark()
        self.assertRaises(report.WorkloadsFailed, s.run, dict(KIND),
                          workloads=[{"sysbench": "cpu"}])
        [raw] = self.output(s, "complete", "raw output (failed)")
        self.assertIn("Segmentation fault", raw["data"])
        self.assertEqual("vmct.delete", s.atomic_actions()[-1]["name"])
        self.assertEqual([], benchfakes.live_servers(self.nova))

    def test_peer_instance_without_the_context_fails_before_booting(self):
        s = self.make_benchmark()
        e = self.assertRaises(boot.PeerMissing, s.run, dict(KIND),
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
        with mock.patch.object(shared, "ensure_netserver") as ensure:
            s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}], netperf_peer=peer)
        ensure.assert_called_once_with(peer)
        self.assertEqual("vmct.start_netserver", s.atomic_actions()[0]["name"])
        [rr] = self.ran("netperf -H")
        self.assertIn("-H 198.51.100.7", rr)
        self.assertIn("-p 12000", rr)

    def test_explicit_peer_without_ssh_is_used_as_is(self):
        s = self.make_benchmark()
        with mock.patch.object(shared, "ensure_netserver") as ensure:
            s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}],
                  netperf_peer={"host": "198.51.100.8"})
        ensure.assert_not_called()
        self.assertIn("-H 198.51.100.8", self.ran("netperf -H")[0])

    def test_workload_image_context_image_is_booted_for_its_kind(self):
        s = self.make_benchmark(vmct_workload_image={"kind": "kvm", "image_id": "img-ready"})
        s.run(dict(KIND), workloads=[{"sysbench": "cpu"}], ssh_user="debian")
        self.assertEqual("img-ready", self.nova.servers.created[0].kwargs["image"])
        self.assertEqual("debian", self.sessions[0].kind["ssh_user"])

    def test_workload_image_of_another_kind_is_ignored(self):
        s = self.make_benchmark(vmct_workload_image={"kind": "docker",
                                                     "image_id": "img-docker"})
        s.run(dict(KIND), workloads=[{"sysbench": "cpu"}])
        self.assertEqual("img-1", self.nova.servers.created[0].kwargs["image"])

    def test_every_disclosed_fact_is_recorded(self):
        self.answers[0] = ("uname", (0, benchfakes.fixture("facts/qemu-tcg-guest.facts"), ""))
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        s.run(dict(KIND), workloads=[{"sysbench": "cpu"}, {"netperf": "TCP_RR"},
                                     {"sysbench": "fileio", "test_mode": "rndrd",
                                      "extra_flags": "direct"}])
        facts = self.facts(s)
        missing = [key for key, _ in output.DISCLOSED_FACTS if not facts.get(key)]
        self.assertEqual([], missing)
        self.assertEqual(("QEMU TCG (emulated)", "yes"),
                         (facts["virtualization"], facts["emulated"]))
        self.assertEqual(("/var/tmp/vmct-fileio", "ext2", "/dev/vda (virtio_blk)", "on"),
                         (facts["fileio_dir"], facts["fileio_fs"], facts["fileio_device"],
                          facts["fileio_direct"]))
        self.assertIn("vmct.sysbench_fileio_rndrd_direct", test_lifecycle.names(
            s.atomic_actions()))

    def test_admin_credential_names_the_hypervisor_and_the_peer_host(self):
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        admin = FakeAdminNova({"srv-1": ("cmp-a", "cmp-a.example"),
                               "srv-p": ("cmp-b", "cmp-b.example")},
                              [hypervisor("cmp-b.example", "docker", 20010024),
                               hypervisor("cmp-a.example")])
        s._admin_clients = types.SimpleNamespace(nova=lambda: admin)
        s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}])
        facts = self.facts(s)
        self.assertEqual("QEMU", facts["nova_hypervisor_type"])
        self.assertEqual("7002022 (7.2.22)", facts["nova_hypervisor_version"])
        self.assertEqual("cmp-a", facts["nova_compute_host"])
        self.assertTrue(facts["netperf_path"].endswith("(Neutron), another compute host"))
        # every disclosed fact is there even when a tool or fileio is not used
        self.assertEqual([], [key for key, _ in output.DISCLOSED_FACTS if not facts.get(key)])
        self.assertEqual("not used (no sysbench workload)", facts["sysbench dialect"])

    def test_peer_on_the_same_compute_host(self):
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        admin = FakeAdminNova({"srv-1": ("cmp-a", "cmp-a.example"),
                               "srv-p": ("cmp-a", "cmp-a.example")},
                              [hypervisor("cmp-a.example", version=None)])
        s._admin_clients = types.SimpleNamespace(nova=lambda: admin)
        s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}])
        facts = self.facts(s)
        self.assertTrue(facts["netperf_path"].endswith("(Neutron), same compute host"))
        self.assertEqual("unknown", facts["nova_hypervisor_version"])

    def test_admin_lookup_failure_is_a_warning_not_a_failure(self):
        s = self.make_benchmark()
        admin = FakeAdminNova({}, error=RuntimeError("403 Forbidden"))
        s._admin_clients = types.SimpleNamespace(nova=lambda: admin)
        with mock.patch.object(nova_facts.LOG, "warning") as warning:
            s.run(dict(KIND), workloads=[{"sysbench": "cpu"}])
        self.assertIn("403 Forbidden", warning.call_args[0][0])
        facts = self.facts(s)
        self.assertEqual("unknown (admin lookup failed: RuntimeError)",
                         facts["nova_hypervisor_type"])
        self.assertEqual("not measured (no netperf workload)", facts["netperf_path"])
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)

    def with_host_ids(self, host_ids):
        """The user's Nova shows each server's hostId (the peer too, as it does)."""
        get = self.nova.servers.get

        def get_with_host_id(server):
            server_id = getattr(server, "id", server)
            if server_id == PEER["server_id"]:
                return types.SimpleNamespace(id=server_id, hostId=host_ids[server_id])
            found = get(server)
            found.hostId = host_ids.get(server_id, "")
            return found
        self.nova.servers.get = get_with_host_id

    def test_peer_placement_hint_and_the_path_taken_from_host_ids(self):
        for placement, host_ids, answer, held in (
                ("same_host", {"srv-1": "h1", "srv-p": "h1"}, "same host", "; honoured"),
                ("different_host", {"srv-1": "h1", "srv-p": "h2"}, "different host",
                 "; honoured"),
                ("same_host", {"srv-1": "h1", "srv-p": "h2"}, "different host",
                 "; NOT honoured, the peer is on a different host: Nova's scheduler needs "
                 "SameHostFilter in [filter_scheduler] enabled_filters")):
            self.clock = fakes.FakeClock()                  # a fresh cloud each round
            self.nova = fakes.FakeNova(self.clock)
            self.commands, self.answers = [], benchfakes.answers()
            self.with_host_ids(host_ids)
            s = self.make_benchmark({"vmct_netperf_peer": PEER})
            s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}], peer_placement=placement)
            hints = self.nova.servers.created[0].kwargs["scheduler_hints"]
            self.assertEqual({"group": "g1", placement: ["srv-p"]}, hints)
            facts = self.facts(s)
            self.assertEqual(answer, facts["netperf_peer_host"])
            self.assertEqual("the servers' hostId (equal within a project: the same host)",
                             facts["netperf_peer_host_from"])
            self.assertEqual("%s (scheduler hint)%s" % (placement, held),
                             facts["netperf_peer_placement"])
            where = "same compute host" if answer == "same host" else "another compute host"
            self.assertTrue(facts["netperf_path"].endswith(where), facts["netperf_path"])

    def test_path_unknown_without_host_ids_or_admin_says_why(self):
        s = self.make_benchmark({"vmct_netperf_peer": PEER})
        with mock.patch.object(nova_facts.LOG, "warning"):
            s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}])
        facts = self.facts(s)
        self.assertEqual("unknown", facts["netperf_peer_host"])
        self.assertEqual("the servers could not be read (NotFound)",
                         facts["netperf_peer_host_from"])
        self.assertEqual("not requested (the scheduler decides)",
                         facts["netperf_peer_placement"])
        # no placement asked: the kind's hints only
        self.assertEqual({"group": "g1"},
                         self.nova.servers.created[0].kwargs["scheduler_hints"])
        self.assertEqual("unknown (no admin credential)", facts["nova_hypervisor_type"])

    def test_peer_placement_needs_the_peer_instance(self):
        s = self.make_benchmark()
        e = self.assertRaises(boot.PeerMissing, s.run, dict(KIND),
                              workloads=[{"netperf": "TCP_RR"}],
                              netperf_peer={"host": "198.51.100.8"},
                              peer_placement="same_host")
        self.assertIn("Argument 'peer_placement' (same_host)", str(e))
        self.assertEqual([], self.nova.servers.created)

    def test_explicit_peer_host_path(self):
        s = self.make_benchmark()
        s.run(dict(KIND), workloads=[{"netperf": "TCP_RR"}],
              netperf_peer={"host": "198.51.100.8"})
        self.assertEqual("instance -> host 198.51.100.8", self.facts(s)["netperf_path"])

    def test_fileio_dir_and_run_count_arguments(self):
        runs = test_runner.Answers(*[(0, test_runner.cpu_output(v), "")
                                     for v in (1000, 1300, 1000, 1001)])
        self.answers.insert(0, ("sysbench cpu", runs))
        s = self.make_benchmark()
        s.run(dict(KIND), workloads=[{"sysbench": "cpu"},
                                     {"sysbench": "fileio", "test_mode": "seqwr"}],
              fileio_dir="/mnt/it's here", min_runs=2, max_runs=3, cv_target=50)
        self.assertEqual(2, runs.calls)
        [prepare] = self.ran(" prepare")
        self.assertIn("mkdir -p '/mnt/it'\"'\"'s here' && cd '/mnt/it'\"'\"'s here' && ", prepare)
        script = shlex.split(self.ran("vmct-mounts-begin")[0])[2]
        self.assertEqual(["d=/mnt/it's here"], shlex.split(script.splitlines()[1]))
        facts = self.facts(s)
        self.assertEqual("2-3 (cv_target 50 %)", facts["runs"])
        self.assertEqual("off", facts["fileio_direct"])
        self.assertEqual(2, len(self.output(s, "complete", "sysbench cpu runs")[0][
            "data"]["rows"]))

    def test_bad_run_count_fails_before_booting(self):
        s = self.make_benchmark()
        e = self.assertRaises(ValueError, s.run, dict(KIND), workloads=[{"sysbench": "cpu"}],
                              min_runs=3, max_runs=2)
        self.assertIn("Argument 'max_runs' (2) must be >= min_runs (3)", str(e))
        e = self.assertRaises(ValueError, s.run, dict(KIND), fileio_dir="var/tmp")
        self.assertIn("Argument 'fileio_dir' must be an absolute", str(e))
        self.assertEqual([], self.nova.servers.created)

    def test_lost_ssh_during_facts_deletes_the_server(self):
        self.answers[0] = ("uname", OSError("connection reset"))
        s = self.make_benchmark()
        self.assertRaises(OSError, s.run, dict(KIND), workloads=[{"sysbench": "cpu"}])
        self.assertEqual([], benchfakes.live_servers(self.nova))


class ValidatorTestCase(test_lifecycle.ScenarioTestCase):

    def check(self, args, contexts):
        validator = validators.BenchmarkAccessValidator()
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

    def test_peer_placement_needs_the_peer_instance(self):
        args = {"kind": KIND, "peer_placement": "different_host"}
        e = self.assertRaises(Invalid, self.check, dict(args, netperf_peer={"host": "h"}),
                              {"keypair": {}})
        self.assertIn("Argument 'peer_placement' (different_host) places the instance", str(e))
        self.assertRaises(Invalid, self.check, args, {"keypair": {}})
        self.check(args, {"keypair": {}, "vmct_netperf_peer": {}})


class ArgumentsTestCase(test_lifecycle.ScenarioTestCase):
    """rally task validate's syntax stage for the new arguments, both scenarios."""

    def errors(self, name, args, contexts=None):
        return rally_scenario.Scenario.validate(
            name=name, context=None, config={"args": args, "contexts": contexts or {}},
            plugin_cfg=None, vtype="syntax")

    def cases(self):
        kind = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}
        return [("VMCT.boot_and_benchmark", {"kind": kind}, {"keypair": {}}),
                ("VMCT.native_benchmark", {"hosts": [{"host": "h"}]}, {})]

    def test_good_values_pass(self):
        for name, args, contexts in self.cases():
            good = dict(args, fileio_dir="/data/fio", min_runs=3, max_runs=10, cv_target=2.5)
            self.assertEqual([], self.errors(name, good, contexts))

    def test_bad_values_are_named(self):
        bad = [({"fileio_dir": "data"}, "Argument 'fileio_dir' must be an absolute"),
               ({"fileio_dir": "/"}, "must not be the root directory"),
               ({"min_runs": 0}, "Argument 'min_runs' is invalid: 0 is less than the minimum"),
               ({"min_runs": 3, "max_runs": 2}, "Argument 'max_runs' (2) must be >= min_runs"),
               ({"max_runs": 3, "cv_target": 0}, "Argument 'cv_target' is invalid"),
               ({"cv_target": 2}, "Argument 'cv_target' needs max_runs > min_runs")]
        for name, args, contexts in self.cases():
            for extra, message in bad:
                found = "\n".join(self.errors(name, dict(args, **extra), contexts))
                self.assertIn(message, found, (name, extra))
