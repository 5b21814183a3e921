"""The host monitor's charts and phase tables from a recorded samples file."""

import json
import os

import fixtures
import testtools

from rally_vmct.hostcost import iteration
from rally_vmct.task.scenarios import lifecycle
from rally_vmct.hostcost.agent import procfs
from tests.unit.timing import fakes
from tests.unit.task.scenarios import test_lifecycle
from tests.unit.hostcost import test_windows

MIB = procfs.MIB
SERVER = "srv-1"


def write_samples(path, t_from, t_to, server=SERVER, appears=None):
    """One sample a second: 2 CPUs, 150 busy jiffies/s (100 user), the server's QEMU."""
    with open(path, "w") as f:
        f.write(json.dumps({"t": t_from - 1, "type": "start", "hz": 100}) + "\n")
        for i, t in enumerate(range(int(t_from), int(t_to) + 1)):
            inst = {}
            if server and (appears is None or t >= appears):
                inst[server] = {"kind": "qemu", "born": appears or t_from, "pid": 7,
                                "cpu": 0.25 * (t - (appears or t_from)),
                                "pss": 300 * MIB, "rss": 320 * MIB, "disk": 20 * MIB}
            f.write(json.dumps(test_windows.sample(
                float(t), busy=150 * i, user=100 * i, idle=50 * i, used=500,
                instances=inst)) + "\n")


ACTIONS = [
    {"name": "vmct.build", "started_at": 1010.0, "finished_at": 1014.0, "children": []},
    {"name": "vmct.wait_for_network", "started_at": 1014.0, "finished_at": 1016.0,
     "children": []},
    {"name": "vmct.reboot_hard", "started_at": 1017.0, "finished_at": 1020.0,
     "children": [{"name": "vmct.reboot_hard.active"}]},
    {"name": "vmct.delete", "started_at": 1021.0, "finished_at": 1022.0, "children": []},
]


class ChartsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def context(self, *names):
        hosts = [{"name": name, "path": os.path.join(self.dir, name + ".jsonl")}
                 for name in names]
        return {iteration.KEY: {"interval": 1.0, "hosts": hosts}}

    def path(self, name):
        return os.path.join(self.dir, name + ".jsonl")

    def test_nothing_without_the_context_or_actions(self):
        self.assertEqual([], iteration.charts({}, "kvm", SERVER, ACTIONS))
        self.assertEqual([], iteration.charts(self.context("local"), "kvm", SERVER, []))

    def test_charts_and_phase_table(self):
        write_samples(self.path("local"), 1000, 1030, appears=1012)
        found = iteration.charts(self.context("local"), "kvm", SERVER, ACTIONS)
        self.assertEqual(["kvm: host CPU on local [%]", "kvm: host memory on local [MiB]",
                          "kvm: instance memory and disk on local [MiB]",
                          "kvm: host cost by phase on local"], [c["title"] for c in found])
        cpu, memory, instance, table = found
        lines = dict(cpu["data"])
        self.assertEqual(["user", "system", "iowait", "steal", "instance"], list(lines))
        # 100 user jiffies of 200 a second; x from the first action's start (1010)
        self.assertEqual([0.0, 50.0], lines["user"][0])
        self.assertEqual([13.0, 12.5], lines["instance"][-1])   # 0.25 CPU s/s of 2 CPUs
        self.assertEqual([[-1.0, 500.0]], dict(memory["data"])["used"][:1])
        self.assertEqual("seconds since the iteration's first action", cpu["axis_label"])
        self.assertEqual(["PSS", "RSS", "disk"], [name for name, _ in instance["data"]])
        cols = table["data"]["cols"]
        rows = {row[0]: dict(zip(cols, row)) for row in table["data"]["rows"]}
        self.assertEqual(["build", "reboot", "delete", "idle", "iteration"], list(rows))
        build = rows["build"]
        self.assertEqual(6.0, build["seconds"])
        self.assertEqual(9.0, build["host CPU [CPU s]"])    # 1.5 CPUs busy for 6 s
        self.assertEqual(50.0, build["user [%]"])
        self.assertEqual(25.0, build["system [%]"])
        self.assertEqual(1.0, build["instance CPU [CPU s]"])     # born at 1012
        self.assertEqual(300.0, build["instance PSS, max [MiB]"])
        self.assertEqual(iteration.NOT_MEASURED, build["container memory cgroup, mean [MiB]"])
        self.assertEqual(2.0, rows["idle"]["seconds"])
        self.assertEqual(12.0, rows["iteration"]["seconds"])
        for name, _, _ in iteration.PHASE_COLUMNS:
            self.assertIn(name, cols)

    def test_host_without_the_instance(self):
        write_samples(self.path("local"), 1000, 1030, server=None)
        found = iteration.charts(self.context("local"), "docker", SERVER, ACTIONS)
        self.assertEqual(["docker: host CPU on local [%]", "docker: host memory on local [MiB]",
                          "docker: host cost by phase on local"], [c["title"] for c in found])
        self.assertIn("srv-1) was not found on this host", found[0]["description"])
        rows = found[-1]["data"]["rows"]
        self.assertEqual(iteration.NOT_MEASURED, rows[0][10])

    def test_only_the_host_the_instance_ran_on(self):
        write_samples(self.path("a"), 1000, 1030, server=None)
        write_samples(self.path("b"), 1000, 1030)
        found = iteration.charts(self.context("a", "b"), "kvm", SERVER, ACTIONS)
        self.assertEqual({"b"}, {c["title"].split(" on ")[1].split(" ")[0] for c in found})
        found = iteration.charts(self.context("a", "b"), "kvm", "srv-other", ACTIONS)
        self.assertEqual(6, len(found))

    def test_unreadable_samples_never_fail_the_iteration(self):
        found = iteration.charts(self.context("gone"), "kvm", SERVER, ACTIONS)
        [text] = found
        self.assertEqual("TextArea", text["chart_plugin"])
        self.assertIn("FileNotFoundError", text["data"][0])

    def test_waits_for_a_sample_after_the_end(self):
        path = self.path("local")
        write_samples(path, 1000, 1020)
        now = [5000.0]

        def sleep(seconds):
            now[0] += seconds
            with open(path, "a") as f:
                f.write(json.dumps(test_windows.sample(1021.0)) + "\n")
        self.assertEqual(1021.0, iteration.wait_for_sample(path, 1020.5, 3, lambda: now[0], sleep))
        self.assertEqual(1021.0, iteration.wait_for_sample(
            path, 1022.5, 3, lambda: now[0], lambda s: now.__setitem__(0, now[0] + s)))
        self.assertGreaterEqual(now[0], 5003.0)

    def test_no_wait_for_a_sampler_that_stopped(self):
        path = self.path("local")
        write_samples(path, 1000, 1020)

        def sleep(seconds):
            raise AssertionError("waited")
        self.assertEqual(1020.0, iteration.wait_for_sample(path, 1030, 3, lambda: 5000.0, sleep))

    def test_window(self):
        self.assertEqual((1010.0, 1022.0), iteration.window(ACTIONS))
        self.assertEqual((1010.0, 1030.0), iteration.window(ACTIONS + [
            {"name": "vmct.delete", "started_at": 1023.0}], now=1030.0))
        self.assertIsNone(iteration.window([]))


NATIVE = "native:22822"
NATIVE_ACTIONS = [
    {"name": "vmct.sysbench_cpu", "started_at": 1010.0, "finished_at": 1015.0},
    {"name": "vmct.netperf_tcp_rr", "started_at": 1016.0, "finished_at": 1020.0},
]


class NativeChartsTestCase(testtools.TestCase):
    """A native host's sshd tree as the instance, on the monitored host that is that machine."""

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def context(self, server=NATIVE, **addresses):
        hosts = []
        for name, address in addresses.items():
            path = os.path.join(self.dir, name + ".jsonl")
            write_samples(path, 1000, 1030, server=server)
            hosts.append({"name": name, "address": address, "path": path})
        return {iteration.KEY: {"interval": 1.0, iteration.NATIVE_PORTS: [22822], "hosts": hosts}}

    def test_native_table_on_the_host_it_ran_on(self):
        context = self.context(local="local", c1="192.0.2.5")
        found = iteration.charts(context, "native", NATIVE, NATIVE_ACTIONS, address="127.0.0.1")
        self.assertEqual(["native: host CPU on local [%]", "native: host memory on local [MiB]",
                          "native: instance memory and disk on local [MiB]",
                          "native: host cost by phase on local"], [c["title"] for c in found])
        self.assertIn("native:22822: the process listening on TCP port 22822 and all its "
                      "descendants", found[0]["description"])
        self.assertIn("PSS and RSS summed over the process tree", found[2]["description"])
        table = found[-1]["data"]
        rows = {row[0]: dict(zip(table["cols"], row)) for row in table["rows"]}
        self.assertEqual(["benchmark", "idle", "iteration"], list(rows))
        self.assertEqual(2.25, rows["benchmark"]["instance CPU [CPU s]"])   # 9 s at 0.25
        self.assertEqual(300.0, rows["benchmark"]["instance PSS, mean [MiB]"])
        found = iteration.charts(context, "native", NATIVE, NATIVE_ACTIONS, address="192.0.2.5")
        self.assertEqual({"c1"}, {c["title"].split(" on ")[1].split(" ")[0] for c in found})

    def test_port_not_measured(self):
        context = self.context(server=None, local="local")
        found = iteration.charts(context, "native", NATIVE, NATIVE_ACTIONS, address="127.0.0.1")
        self.assertEqual(3, len(found))
        self.assertIn("nothing listening on TCP port 22822 was measured on this host (the "
                      "context's native_ports lacks it", found[0]["description"])
        self.assertEqual(iteration.NOT_MEASURED, found[-1]["data"]["rows"][0][10])

    def test_which_monitored_hosts_are_a_machine(self):
        hosts = [{"name": "local", "address": "local"}, {"name": "c1", "address": "C1.example"},
                 {"name": "old"}]
        self.assertEqual(["local"], [h["name"] for h in iteration.hosts_at(hosts, "::1")])
        self.assertEqual(["local"], [h["name"] for h in iteration.hosts_at(hosts, "localhost")])
        self.assertEqual(["c1"], [h["name"] for h in iteration.hosts_at(hosts, "c1.example")])
        self.assertEqual(hosts, iteration.hosts_at(hosts, "192.0.2.9"))   # unknown: all of them
        self.assertEqual(NATIVE, iteration.native_instance({"host": "h", "port": 22822}))
        self.assertEqual("native:22", iteration.native_instance({"host": "h"}))


class ScenarioOutputTestCase(test_lifecycle.ScenarioTestCase):
    """InstanceScenario._finish adds the charts when the context is there."""

    def test_boot_and_delete_with_the_monitor(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "local.jsonl")
        write_samples(path, fakes.EPOCH + 90, fakes.EPOCH + 130)
        context = {iteration.KEY: {"interval": 1.0, "hosts": [{"name": "local", "path": path}]}}
        s = self.make(lifecycle.BootAndDeleteServer, context)
        s.run(dict(test_lifecycle.KIND))
        titles = [c["title"] for c in s._output["complete"]]
        self.assertIn("kvm: host cost by phase on local", titles)
        self.assertIn("kvm: instance memory and disk on local [MiB]", titles)
        [table] = self.output(s, "complete", "host cost by phase")
        self.assertEqual(["build", "delete", "idle", "iteration"],
                         [row[0] for row in table["data"]["rows"]])

    def test_no_monitor_no_charts(self):
        s = self.make(lifecycle.BootAndDeleteServer)
        s.run(dict(test_lifecycle.KIND))
        self.assertEqual([], self.output(s, "complete", "host"))
