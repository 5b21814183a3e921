"""VMCT.density against a scripted fake Nova on a fake clock."""

import json
from unittest import mock

import fixtures

from rally_vmct.timing import waiter
from rally_vmct.hostcost import density as hostcost_density
from rally_vmct.task import output
from rally_vmct.task.scenarios import density
from rally_vmct.hostcost.agent import procfs
from tests.unit.task.scenarios import test_lifecycle

KIND = test_lifecycle.KIND
ERROR = [(0.0, "BUILD", "scheduling", 0), (1.0, "ERROR", None, 0)]


def table(scenario, suffix):
    [found] = [c for c in scenario._output["complete"] if c["title"] == "kvm" + suffix]
    return found["data"]


class FakeMonitor(hostcost_density.Monitor):
    """Samples written by the test: 100 MiB of host memory used, 50 more per instance."""

    def __init__(self, test, path):
        super().__init__({"interval": 1.0, "hosts": [{"name": "local", "path": path}]},
                         wait=lambda *args: None)
        self.test = test
        self.path = path

    def samples(self, t0, t1):
        running = [r.id for r in self.test.nova.servers.created
                   if r.id not in self.test.nova.servers.deleted]
        with open(self.path, "w") as f:
            for t in (t0 - 1, t0, t1, t1 + 1):
                instances = {sid: {"pss": 40 * procfs.MIB, "cgroup": None} for sid in running}
                f.write(json.dumps({"type": "sample", "t": t, "instances": instances,
                                    "mem": {"used": (100 + 50 * len(running)) * procfs.MIB,
                                            "available": procfs.MIB}}) + "\n")
        return super().samples(t0, t1)


class TestDensity(test_lifecycle.ScenarioTestCase):

    def fail_from(self, number):
        """The ``number``-th create (1-based) and the later ones end in ERROR."""
        create = self.nova.servers.create

        def scripted(*args, **kwargs):
            if len(self.nova.servers.created) + 1 >= number:
                self.nova.scripts["create"] = ERROR
            return create(*args, **kwargs)
        self.nova.servers.create = scripted

    def test_target_reached_every_server_deleted(self):
        s = self.make(density.Density)
        s.run(dict(KIND), max_servers=3, settle_seconds=0)
        actions = s.atomic_actions()
        self.assertEqual(["vmct.density.step_1", "vmct.density.step_2", "vmct.density.step_3",
                          "vmct.density.delete_all"], test_lifecycle.names(actions))
        self.assertEqual(["vmct.build", "vmct.wait_for_network"],
                         test_lifecycle.names(actions[1]["children"]))
        self.assertEqual(sorted(r.id for r in self.nova.servers.created),
                         sorted(self.nova.servers.deleted))
        rows = table(s, hostcost_density.TABLE_SUFFIX)["rows"]
        self.assertEqual([1, 2, 3], [r[0] for r in rows])
        # create -> ACTIVE seen at 1.9, reachable 1 s after ACTIVE (2.0): 3.0
        self.assertEqual([3.0, 3.0, 3.0], [r[2] for r in rows])
        self.assertEqual(["n/a"] * 3, [r[4] for r in rows])
        self.assertEqual([[3, 3, "target reached", "all 3 servers reachable"]],
                         table(s, hostcost_density.LIMIT_SUFFIX)["rows"])
        [chart] = s._output["additive"]
        self.assertEqual(("kvm", "density", "instances"), output.parse_chart_title(chart["title"]))
        self.assertEqual([["instances_reached", 3]], chart["data"])

    def test_first_failure_is_the_limit_and_everything_is_deleted(self):
        self.fail_from(3)
        s = self.make(density.Density)
        s.run(dict(KIND), max_servers=5, settle_seconds=0)
        [row] = table(s, hostcost_density.LIMIT_SUFFIX)["rows"]
        self.assertEqual([2, 5, "first failure"], row[:3])
        self.assertIn("No valid host was found", row[3])
        self.assertEqual(3, len(self.nova.servers.created))
        self.assertEqual(sorted(r.id for r in self.nova.servers.created),
                         sorted(self.nova.servers.deleted))
        step3 = s.atomic_actions()[2]
        self.assertEqual("vmct.density.step_3", step3["name"])
        self.assertTrue(step3["failed"])

    def test_task_abort_stops_the_filling_and_everything_is_deleted(self):
        s = self.make(density.Density)
        s.context["task"] = {"uuid": "task-1"}
        statuses = ["running", "running", "aborting"]
        with mock.patch.object(density.objects.Task, "get_status",
                               side_effect=statuses) as get_status:
            s.run(dict(KIND), max_servers=5, settle_seconds=0)
        self.assertEqual([mock.call("task-1")] * 3, get_status.call_args_list)
        [row] = table(s, hostcost_density.LIMIT_SUFFIX)["rows"]
        self.assertEqual([2, 5, "task aborted", "rally task abort: no server booted after 2"],
                         row)
        self.assertEqual(2, len(self.nova.servers.created))
        self.assertEqual(sorted(r.id for r in self.nova.servers.created),
                         sorted(self.nova.servers.deleted))

    def test_failure_of_the_first_server_fails_the_iteration_after_cleanup(self):
        self.fail_from(1)
        s = self.make(density.Density)
        self.assertRaises(waiter.ServerFault, s.run, dict(KIND), max_servers=3)
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)
        self.assertEqual([], s._output["additive"])

    def test_unexpected_error_still_deletes_every_server(self):
        s = self.make(density.Density)
        original = s._boot_one

        def boot_one(fill, *args):
            original(fill, *args)
            if fill.reached == 2:
                raise KeyboardInterrupt()
        s._boot_one = boot_one
        self.assertRaises(KeyboardInterrupt, s.run, dict(KIND), max_servers=4)
        self.assertEqual(2, len(self.nova.servers.created))
        self.assertEqual(sorted(r.id for r in self.nova.servers.created),
                         sorted(self.nova.servers.deleted))

    def test_probe_none_boots_to_active_only(self):
        self.nova.addresses = {}
        s = self.make(density.Density)
        s.run(dict(KIND), max_servers=2, probe="none")
        self.assertEqual([], self.probes)
        rows = table(s, hostcost_density.TABLE_SUFFIX)["rows"]
        self.assertEqual([1.9, 1.9], [r[2] for r in rows])
        self.assertEqual([r[3] for r in rows], [r[2] for r in rows])

    def test_steps_and_memory_per_instance_with_the_monitor(self):
        path = self.useFixture(fixtures.TempDir()).join("host.jsonl")
        s = self.make(density.Density)
        with mock.patch.object(hostcost_density.Monitor, "of",
                               return_value=FakeMonitor(self, path)):
            s.run(dict(KIND), max_servers=5, step=2, settle_seconds=2.0)
        rows = table(s, hostcost_density.TABLE_SUFFIX)["rows"]
        self.assertEqual([1, 1, 2, 2, 3], [r[1] for r in rows])
        # measured after steps of 2, 4 and 5 servers, never between
        self.assertEqual(["n/a", 200.0, "n/a", 300.0, 350.0], [r[4] for r in rows])
        self.assertEqual([50.0, 50.0, 50.0], [r[5] for r in rows if r[5] != "n/a"])
        self.assertEqual([40.0, 40.0, 40.0], [r[6] for r in rows if r[6] != "n/a"])
        self.assertEqual([2, 4, 5], [r[8] for r in rows if r[8] != "n/a"])
        self.assertIn(2.0, self.clock.sleeps)
        [memory] = [c for c in s._output["complete"] if "memory per instance" in c["title"]]
        self.assertEqual([[2, 40.0], [4, 40.0], [5, 40.0]], memory["data"][0][1])

    def test_unreadable_samples_leave_memory_unmeasured(self):
        monitor = FakeMonitor(self, "/nonexistent/host.jsonl")
        monitor.samples = hostcost_density.Monitor.samples.__get__(monitor)
        s = self.make(density.Density)
        with mock.patch.object(hostcost_density.Monitor, "of", return_value=monitor):
            s.run(dict(KIND), max_servers=2)
        rows = table(s, hostcost_density.TABLE_SUFFIX)["rows"]
        self.assertEqual(["n/a", "n/a"], [r[4] for r in rows])
        self.assertEqual(2, len(self.nova.servers.deleted))
