"""End-to-end: the access modes of an ordinary cloud, on the all-in-one cloud.

tools/test-stages/50-e2e runs, with samples/tasks/args/access-ci.yaml on top of the AIO's
args file of each mode, and leaves in $VMCT_E2E_DIR/access/ each task's uuid and report
(``rally task report --json``) and the inventory afterwards:
  floating-lifecycle, floating-benchmark  lifecycle.yaml and benchmark.yaml with
      task-args-floating.yaml: every kind's servers on the task's own network behind a router,
      reached only at floating IPs of the external network, Rally in the float namespace;
  member-lifecycle  lifecycle.yaml with task-args-member.yaml in the Rally env vmct-member:
      a project member without admin, no users or quotas context;
  placement-benchmark  benchmark.yaml with task-args.yaml on the docker kind without its
      zone, peer_placement: different_host (the AIO has a second Docker host, docker2).
"""

import ipaddress
import os

import yaml

from tests.e2e import faults
from tests.e2e import test_demo_task

FLOATING = ("floating-lifecycle", "floating-benchmark")
PLACEMENT = "placement-benchmark"
FIP_ACTION = "vmct.associate_floating_ip"
EXTERNAL = ipaddress.ip_network(faults.VALUES["VMCT_EXT_CIDR"])


@test_demo_task.needs_e2e
class AccessModeTest(test_demo_task.ArtifactTest):

    @classmethod
    def load_artifacts(cls):
        cls.reports, cls.tasks = {}, {}
        for name in FLOATING + ("member-lifecycle", PLACEMENT):
            cls.tasks[name] = test_demo_task.load(os.path.join("access", name + ".uuid"))
            report = test_demo_task.load(os.path.join("access", name + ".json"))
            [cls.reports[name]] = report["tasks"]
        cls.after = test_demo_task.load(os.path.join("access", "inventory-after.json"))
        with open(os.path.join(faults.AIO_DIR, "task-args-floating.yaml")) as f:
            cls.kinds = [k["name"] for k in yaml.safe_load(f)["kinds"]]

    def workloads(self, name):
        return test_demo_task.task_workloads(self.reports[name])

    def iterations(self, name):
        return [it for w in self.workloads(name) for it in w["data"]]

    def test_every_task_passed_on_every_kind(self):
        for name, task in self.reports.items():
            # the failed iterations first: their errors say why the SLA failed
            errors = [(w["description"], it["error"][:2]) for w in self.workloads(name)
                      for it in w["data"] if it["error"]]
            self.assertEqual([], errors, name)
            self.assertEqual("finished", task["status"], name)
            failed_sla = [(w["description"], [r["detail"] for r in w["sla_results"]["sla"]
                                              if not r["success"]])
                          for w in self.workloads(name) if not w["pass_sla"]]
            self.assertEqual([], failed_sla, name)
            self.assertTrue(task["pass_sla"], name)
            kinds = {test_demo_task.scenario_args(w)["kind"]["name"]
                     for w in self.workloads(name)}
            self.assertEqual({"docker"} if name == PLACEMENT else set(self.kinds), kinds, name)
            for w in self.workloads(name):
                self.assertTrue(w["data"], name)

    def test_floating_ips_are_associated_and_timed(self):
        for name in FLOATING:
            for it in self.iterations(name):
                actions = [a["name"] for a in it["atomic_actions"]]
                self.assertIn(FIP_ACTION, actions, name)

    def probe_targets(self, iteration):
        """ADDRESS:PORT (floating IP) of each probe row of the iteration's transitions table."""
        return [row[2].split(": ", 1)[0] for table in iteration["output"]["complete"]
                if "server state transitions" in table["title"]
                for row in table["data"]["rows"] if row[1].startswith("probe ")]

    def test_instances_were_reached_at_floating_addresses_only(self):
        for name in FLOATING:
            for it in self.iterations(name):
                targets = self.probe_targets(it)
                self.assertTrue(targets, name)
                for target in targets:
                    self.assertTrue(target.endswith(" (floating IP)"), (name, target))
                    address = ipaddress.ip_address(target.split(":")[0])
                    self.assertIn(address, EXTERNAL, (name, target))

    def peer_facts(self, name):
        """The netperf_peer_* facts of each iteration of a task."""
        found = [{row[0]: row[1] for table in it["output"]["complete"]
                  for row in table["data"].get("rows", [])
                  if len(row) == 2 and str(row[0]).startswith("netperf_peer_")}
                 for it in self.iterations(name)]
        self.assertTrue(found, name)
        return found

    def test_the_netperf_peer_was_on_the_same_host_as_asked(self):
        """access-ci.yaml asks peer_placement: same_host; the facts say what happened."""
        for facts in self.peer_facts("floating-benchmark"):
            self.assertEqual("same host", facts.get("netperf_peer_host"), facts)
            self.assertEqual("same_host (scheduler hint); honoured",
                             facts.get("netperf_peer_placement"), facts)

    def test_the_netperf_peer_was_on_another_host_as_asked(self):
        for facts in self.peer_facts(PLACEMENT):
            self.assertEqual("different host", facts.get("netperf_peer_host"), facts)
            self.assertEqual("different_host (scheduler hint); honoured",
                             facts.get("netperf_peer_placement"), facts)

    def test_the_member_task_ran_without_admin_contexts(self):
        for w in self.workloads("member-lifecycle"):
            self.assertNotIn("users", w["contexts"])
            self.assertNotIn("quotas", w["contexts"])

    def test_nothing_left_of_the_tasks(self):
        markers = ["rally_" + uuid.replace("-", "")[:8] for uuid in self.tasks.values()]
        projects = {p["id"] for p in self.after["projects"]}

        def named(items):
            return [i for i in items if any(m in (i.get("name") or "") for m in markers)]
        # nothing else in the AIO makes floating IPs: none may be left
        self.assertEqual([], self.after["floating_ips"])
        self.assertEqual([], named(self.after["routers"]))
        self.assertEqual([], [r for r in self.after["routers"] if r["project_id"] not in projects])
        self.assertEqual([], named(self.after["networks"]))
        self.assertEqual([], named(self.after["servers"]))
