"""VMCT.native_benchmark with a scripted SSH client: the facts a host iteration records."""

import os
import time
from unittest import mock

import fixtures
from rally import plugins
from rally.task import scenario as rally_scenario
import testtools

from rally_vmct import opts
from rally_vmct.task import output
from rally_vmct.task.scenarios.benchmark import shared
from rally_vmct.hostcost import iteration
from rally_vmct.task.scenarios.benchmark import native
from tests.unit.task.scenarios.benchmark import fakes as benchfakes
from tests.unit.hostcost import test_iteration
from tests.unit.workloads import test_runner

f = benchfakes.fixture


class NativeTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()
        self.commands = []
        self.answers = benchfakes.answers(
            f("facts/firecracker-kvm-host.facts"),
            mounts="facts/firecracker-kvm-host-var-tmp.probe", fileio_modes=("rndrd",),
            memory=False)

    def run_native(self, context=None, **args):
        scenario = native.NativeBenchmark(dict(context or {}, iteration=1, task={"uuid": "t"},
                                               owner_id="o"))
        ssh = benchfakes.FakeSSH(self.answers, self.commands, "h")
        with mock.patch.object(shared, "connect", return_value=ssh):
            scenario.run([{"host": "192.0.2.10", "port": 22822}], **args)
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
        with mock.patch.object(shared, "connect") as connect:
            scenario = native.NativeBenchmark({"iteration": 1})
            e = self.assertRaises(ValueError, scenario.run, [{"host": "h"}],
                                  fileio_dir="relative/dir")
        self.assertIn("Argument 'fileio_dir'", str(e))
        connect.assert_not_called()

    def test_host_cost_of_the_sshd_tree_with_the_monitor(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "c1.jsonl")
        now = time.time()
        test_iteration.write_samples(path, now - 60, now + 60, server="native:22822")
        hosts = [{"name": "c1", "address": "192.0.2.10", "path": path},
                 {"name": "local", "address": "local", "path": path + ".missing"}]
        scenario, _ = self.run_native(
            context={iteration.KEY: {"interval": 1.0, iteration.NATIVE_PORTS: [22822],
                                     "hosts": hosts}},
            workloads=[{"sysbench": "cpu"}], kind="metal")
        [table] = [c for c in scenario._output["complete"]
                   if c["title"] == "metal: host cost by phase on c1"]
        rows = {row[0]: dict(zip(table["data"]["cols"], row)) for row in table["data"]["rows"]}
        self.assertEqual(["benchmark", "iteration"], list(rows))
        self.assertEqual(300.0, rows["benchmark"]["instance PSS, mean [MiB]"])
        self.assertIn("metal: instance memory and disk on c1 [MiB]",
                      [c["title"] for c in scenario._output["complete"]])


class NativeMonitorValidatorTestCase(testtools.TestCase):
    """With vmct_host_monitor, native_ports must name each host's SSH port."""

    def setUp(self):
        super().setUp()
        plugins.load()

    def errors(self, hosts, contexts):
        return rally_scenario.Scenario.validate(
            name="VMCT.native_benchmark", context=None,
            config={"args": {"hosts": hosts}, "contexts": contexts}, plugin_cfg=None,
            vtype="syntax")

    def test_ports_of_the_hosts_in_native_ports(self):
        hosts = [{"host": "127.0.0.1", "port": 22822}, {"host": "bm1"}]
        self.assertEqual([], self.errors(hosts, {}))
        self.assertEqual([], self.errors(
            hosts, {iteration.KEY: {iteration.NATIVE_PORTS: [22, 22822]}}))
        [error] = self.errors(
            hosts, {iteration.KEY + "@openstack": {iteration.NATIVE_PORTS: [22]}})
        self.assertIn("Argument 'hosts': the vmct_host_monitor context does not measure the "
                      "sshd of hosts[0] (127.0.0.1 port 22822) (its native_ports: [22])", error)
        self.assertIn("e.g. vmct_host_monitor: {native_ports: [22, 22822]}", error)
        [error] = self.errors(hosts, {iteration.KEY: {"hosts": ["local"]}})
        self.assertIn("hosts[0] (127.0.0.1 port 22822), hosts[1] (bm1 port 22)", error)
