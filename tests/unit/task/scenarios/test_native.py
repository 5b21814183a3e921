"""VMCT.native_benchmark with a scripted SSH client: the facts a host iteration records."""

from unittest import mock

from rally import plugins
import testtools

from rally_vmct import opts
from rally_vmct.task import output
from rally_vmct.task import benchmarking
from rally_vmct.task.scenarios import native
from tests.unit.task import benchfakes
from tests.unit.workloads import test_runner

f = benchfakes.fixture


class NativeTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()
        self.commands = []
        self.answers = [
            ("uname", (0, f("facts/firecracker-kvm-host.facts"), "")),
            ("vmct-mounts-begin", (0, f("facts/firecracker-kvm-host-var-tmp.probe"), "")),
            (" prepare", (0, f("sysbench/1.0-fileio-prepare.txt"), "")),
            (" cleanup", (0, f("sysbench/1.0-fileio-cleanup.txt"), "")),
            ("--file-test-mode=rndrd", (0, f("sysbench/1.0-fileio-rndrd.txt"), "")),
            ("sysbench cpu", (0, f("sysbench/1.0-cpu.txt"), "")),
            ("netperf -H", (0, f("netperf/tcp_rr.keyval"), ""))]

    def run_native(self, **args):
        scenario = native.NativeBenchmark({"iteration": 1, "task": {"uuid": "t"},
                                           "owner_id": "o"})
        ssh = benchfakes.FakeSSH(self.answers, self.commands, "h")
        with mock.patch.object(benchmarking, "connect", return_value=ssh):
            scenario.run([{"host": "192.0.2.10"}], **args)
        [facts] = [c for c in scenario._output["complete"]
                   if c["title"] == output.facts_title(args.get("kind", "native"))]
        return scenario, dict(facts["data"]["rows"])

    def test_every_disclosed_fact_of_a_host(self):
        _, facts = self.run_native(
            workloads=[{"sysbench": "cpu"}, {"netperf": "TCP_RR"},
                       {"sysbench": "fileio", "test_mode": "rndrd", "extra_flags": "direct"}],
            netperf_peer={"host": "127.0.0.1"})
        missing = [key for key, _ in output.DISCLOSED_FACTS if not facts.get(key)]
        self.assertEqual([], missing)
        self.assertEqual("KVM (hardware-assisted)", facts["virtualization"])
        self.assertEqual("none (not a Nova instance)", facts["nova_hypervisor_type"])
        self.assertEqual("loopback on the host (127.0.0.1)", facts["netperf_path"])
        self.assertEqual(("ext4", "/dev/vda (virtio_blk)", "on"),
                         (facts["fileio_fs"], facts["fileio_device"], facts["fileio_direct"]))

    def test_another_host_as_peer_and_repeated_runs(self):
        runs = test_runner.Answers(*[(0, test_runner.cpu_output(v), "") for v in (10, 20, 30)])
        self.answers.insert(0, ("sysbench cpu", runs))
        scenario, facts = self.run_native(
            workloads=[{"sysbench": "cpu"}, {"netperf": "TCP_RR"}],
            netperf_peer={"host": "192.0.2.11"}, min_runs=1, max_runs=3, cv_target=1,
            kind="metal")
        self.assertEqual("host 192.0.2.11", facts["netperf_path"])
        self.assertEqual("1-3 (cv_target 1 %)", facts["runs"])
        self.assertEqual(3, runs.calls)
        [chart] = [c for c in scenario._output["additive"]
                   if c["title"] == "metal: sysbench cpu [events/s]"]
        self.assertEqual([["events_per_second", 20.0]], chart["data"])

    def test_fileio_dir_is_checked_before_connecting(self):
        with mock.patch.object(benchmarking, "connect") as connect:
            scenario = native.NativeBenchmark({"iteration": 1})
            e = self.assertRaises(ValueError, scenario.run, [{"host": "h"}],
                                  fileio_dir="relative/dir")
        self.assertIn("Argument 'fileio_dir'", str(e))
        connect.assert_not_called()
