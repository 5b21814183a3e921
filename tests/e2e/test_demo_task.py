"""End-to-end checks of samples/tasks/demo.yaml on the all-in-one cloud.

tools/test-stages/50-e2e brings the AIO up, runs the task, and leaves in $VMCT_E2E_DIR:
  task-uuid            the Rally task
  task.json            `rally task report --json` of it
  report.html          `rally task report --html-static` of it
  comparison.html/.json/.csv   `rally task export --type vmct-comparison` of it
  inventory-before.json / inventory-after.json   tools/aio/aio.py inventory (+ keypair rows)
  expected.json        {"times": N, "workloads": M, "kinds": [...], "aio_images": [...]}
These tests read those files; without $VMCT_E2E_DIR they are skipped.
"""

import json
import os
import re
import unittest

E2E_DIR = os.environ.get("VMCT_E2E_DIR")


needs_e2e = unittest.skipUnless(E2E_DIR, "VMCT_E2E_DIR not set (run tools/test-stages/50-e2e)")


DENSITY = "VMCT.density"


def scenario_name(workload):
    scenario = workload.get("scenario")
    return list(scenario)[0] if isinstance(scenario, dict) else workload.get("name")


def scenario_args(workload):
    scenario = workload.get("scenario")
    return list(scenario.values())[0] if isinstance(scenario, dict) else workload.get("args")


def task_workloads(task):
    """The workloads of a task of `rally task report --json`, in order."""
    return [w for s in task["subtasks"] for w in s["workloads"]]


def complete_output(iteration, title):
    return [c for c in iteration["output"]["complete"] if c["title"] == title]


def load(name):
    with open(os.path.join(E2E_DIR, name)) as f:
        return json.load(f) if name.endswith(".json") else f.read().strip()


class ArtifactTest(unittest.TestCase):
    """Reads the stage's artifacts once per class, in ``load_artifacts``.

    When one is missing or unreadable (a step of the stage failed, the cloud died), every test
    of the class fails naming it: a failing setUpClass would count as one error and hide them.
    """

    @classmethod
    def setUpClass(cls):
        cls.missing = None
        try:
            cls.load_artifacts()
        except Exception as e:
            cls.missing = "%s: %s" % (type(e).__name__, e)

    @classmethod
    def load_artifacts(cls):
        pass

    def setUp(self):
        super().setUp()
        if self.missing:
            self.fail("cannot read the e2e stage's artifacts: " + self.missing)


@needs_e2e
class E2ETest(ArtifactTest):
    """``expected`` says what the stage ran."""

    @classmethod
    def load_artifacts(cls):
        cls.expected = load("expected.json")


class TaskTest(E2ETest):
    """The demo task's report: ``task`` and its ``workloads``."""

    @classmethod
    def load_artifacts(cls):
        super().load_artifacts()
        cls.uuid = load("task-uuid")
        cls.report = load("task.json")
        cls.task = [t for t in cls.report["tasks"] if t["uuid"] == cls.uuid][0]
        cls.workloads = task_workloads(cls.task)


class DemoTaskTest(TaskTest):

    def test_task_finished(self):
        self.assertEqual("finished", self.task["status"])

    def test_every_workload_ran(self):
        # the small density run per instance kind runs once; expected.json counts the others
        density = [w for w in self.workloads if scenario_name(w) == DENSITY]
        others = [w for w in self.workloads if scenario_name(w) != DENSITY]
        self.assertEqual(self.expected["workloads"], len(others))
        for w in others:
            self.assertEqual(self.expected["times"], len(w["data"]), scenario_name(w))
        kinds = [k for k in self.expected["kinds"] if k != "native"]
        self.assertEqual(len(kinds), len(density))
        for w in density:
            self.assertEqual(1, len(w["data"]))

    def test_no_failed_iteration(self):
        for w in self.workloads:
            errors = [it["error"] for it in w["data"] if it.get("error")]
            self.assertEqual([], errors, w.get("name"))
            self.assertEqual(0, w.get("failed_iteration_count", 0))

    def test_sla_passed(self):
        failed = [(w.get("name"), [s for s in w.get("sla_results", {}).get("sla", [])
                                   if not s.get("success")],
                   sorted({it["error"][1] for it in w["data"] if it.get("error")})[:3])
                  for w in self.workloads if not w["pass_sla"]]
        self.assertEqual([], failed)
        self.assertTrue(self.task["pass_sla"])

    def test_boot_and_delete_timed(self):
        names = set()
        for w in self.workloads:
            for it in w["data"]:
                names.update(a["name"] for a in it["atomic_actions"])
        for action in ("nova.boot_server", "nova.delete_server", "nova.reboot_server",
                       "nova.soft_reboot_server"):
            self.assertIn(action, names)

    def atomic_names_by_kind(self):
        names = {}
        for w in self.workloads:
            args = list(w["scenario"].values())[0] if isinstance(w["scenario"], dict) else {}
            kind = args.get("kind")
            label = kind.get("name") if isinstance(kind, dict) else kind
            for it in w["data"]:
                names.setdefault(label, set()).update(self.flat(it["atomic_actions"]))
        return names

    def flat(self, actions, depth=None):
        """Every action's name, to ``depth`` levels below the top (None: all)."""
        for a in actions:
            yield a["name"]
            if depth is None or depth > 0:
                yield from self.flat(a.get("children", []),
                                     None if depth is None else depth - 1)

    def test_vmct_lifecycle_timed_on_every_kind(self):
        names = self.atomic_names_by_kind()
        for kind in self.expected["kinds"]:
            if kind == "native":
                continue
            for action in ("vmct.build", "vmct.wait_for_network", "vmct.wait_for_ssh",
                           "vmct.delete", "vmct.reboot_hard", "vmct.stop", "vmct.start"):
                self.assertIn(action, names.get(kind, ()), kind)
            soft = {"vmct.reboot_soft", "vmct.reboot_soft_fell_back_to_hard"}
            self.assertTrue(soft & names[kind], (kind, sorted(names[kind])))

    def test_native_baseline_ran_the_workloads(self):
        names = self.atomic_names_by_kind()["native"]
        for prefix in ("sysbench", "netperf"):
            self.assertTrue([n for n in names if prefix in n], sorted(names))

    def report_scenarios(self):
        """The workloads Rally's HTML report shows: the JSON its page is drawn from."""
        with open(os.path.join(E2E_DIR, "report.html")) as f:
            html = f.read()
        self.assertNotIn('src="http', html)  # --html-static: no external scripts
        [line] = [x for x in html.splitlines() if "$scope.scenarios = " in x]
        return json.loads(line.split("$scope.scenarios = ", 1)[1].strip().rstrip(";"))

    def by_name_and_pos(self):
        """{(scenario, pos): workload}: Rally's report numbers workloads of a name in order."""
        found, seen = {}, {}
        for w in self.workloads:
            name = scenario_name(w)
            seen[name] = seen.get(name, -1) + 1
            found[(name, str(seen[name]))] = w
        return found

    def test_html_report_shows_every_workload(self):
        shown = sorted(("%s.%s" % (s["cls"], s["met"]), s["pos"])
                       for s in self.report_scenarios())
        self.assertEqual(sorted(self.by_name_and_pos()), shown)

    def test_html_report_shows_every_atomic_action(self):
        workloads = self.by_name_and_pos()
        for scenario in self.report_scenarios():
            key = ("%s.%s" % (scenario["cls"], scenario["met"]), scenario["pos"])
            actions = set()
            for it in workloads[key]["data"]:
                actions.update(self.flat(it["atomic_actions"], RALLY_TABLE_DEPTH))
            self.assertTrue(actions, key)
            shown = {table_row_action(row[0]) for row in scenario["table"]["rows"]}
            self.assertEqual([], sorted(actions - shown), key)

    def test_html_report_has_no_error_section(self):
        for scenario in self.report_scenarios():
            name = "%s.%s [%s]" % (scenario["cls"], scenario["met"], scenario["pos"])
            self.assertEqual([], scenario["errors"], name)
            self.assertEqual([], scenario["output_errors"], name)
            self.assertTrue(scenario["sla_success"], name)
            self.assertEqual([["success", scenario["iterations_count"]], ["errors", 0]],
                             scenario["iterations"]["pie"], name)


# Rally's table merges nested actions two levels below the top, no deeper
# (rally.task.atomic.merge_atomic_actions, depth_of_processing=2).
RALLY_TABLE_DEPTH = 2


def table_row_action(label):
    """The action a row of Rally's table is about: " -> name (x2)" -> name."""
    return re.sub(r" \(x\d+\)$", "", re.sub(r"^ -*> ", "", label))


class DensityTest(TaskTest):
    """The small density run per kind: its target or a first failure, memory per instance."""

    def density(self):
        """{kind: (args, iteration)} of the density runs of the instance kinds."""
        found = {}
        for w in self.workloads:
            kind = scenario_args(w)["kind"]["name"] if scenario_name(w) == DENSITY else None
            if kind in self.expected["kinds"]:
                found[kind] = (scenario_args(w), w["data"][0])
        return found

    def test_target_or_first_failure_with_its_reason(self):
        for kind, (args, iteration) in self.density().items():
            [limit] = complete_output(iteration, kind + ": density limit")
            [[reached, target, why, reason]] = limit["data"]["rows"]
            self.assertEqual(args["max_servers"], target, kind)
            if why == "target reached":
                self.assertEqual(target, reached, kind)
            else:
                # only the cloud's capacity for the kind may stop a fill early
                capacity = self.expected["capacity"].get(kind)
                self.assertEqual("first failure", why, kind)
                self.assertTrue(reason, kind)
                self.assertIsNotNone(capacity, "%s stopped at %d of %d, no capacity known: %s"
                                     % (kind, reached, target, reason))
                self.assertGreater(target, capacity, "%s stopped at %d of %d below its "
                                   "capacity %d: %s" % (kind, reached, target, capacity, reason))
                self.assertGreaterEqual(reached, capacity, (kind, reason))
            steps = [a["name"] for a in iteration["atomic_actions"]]
            self.assertEqual("vmct.density.delete_all", steps[-1], kind)

    def test_boot_time_and_memory_per_instance(self):
        for kind, (_, iteration) in self.density().items():
            [table] = complete_output(iteration, kind + ": density")
            cols, rows = table["data"]["cols"], table["data"]["rows"]
            records = [dict(zip(cols, row)) for row in rows]
            self.assertTrue(records, kind)
            for record in records:
                self.assertGreater(record["boot to reachable [s]"], 0, kind)
                # the host monitor (this machine) sees every instance of the kind
                self.assertEqual(record["instances"], record["instances found on the hosts"])
                self.assertGreater(record["PSS per instance [MiB]"], 1, kind)

    def test_density_curve_per_kind_on_the_comparison(self):
        data = load("comparison.json")
        curves = {c["metric"]: c for c in data["density"]["curves"]}
        self.assertTrue(self.density())
        for metric in ("boot to reachable [s]", "PSS per instance [MiB]"):
            kinds = [e["kind"] for e in curves[metric]["kinds"]]
            for kind in self.density():
                self.assertIn(kind, kinds, metric)


class NoLeakTest(E2ETest):
    """Nothing the task created is left in the cloud.

    Rally names what it creates rally_<first 8 hex digits of the task uuid>_...; other users of
    the same AIO (a developer's own tasks) may come and go meanwhile, so we look for the task's
    names and for orphans (resources of projects that no longer exist), not for equal counts.
    """

    INVENTORY = "inventory-after.json"   # tools/aio/inventory after the task
    TASK_UUID = "task-uuid"

    @classmethod
    def load_artifacts(cls):
        super().load_artifacts()
        cls.after = load(cls.INVENTORY)
        cls.marker = "rally_" + load(cls.TASK_UUID).replace("-", "")[:8]
        cls.projects = {p["id"] for p in cls.after["projects"]}

    def ours(self, names):
        return [n for n in names if self.marker in (n or "")]

    def test_no_servers(self):
        self.assertEqual([], self.ours(s["name"] for s in self.after["servers"]))

    def test_no_orphan_ports(self):
        orphans = [p for p in self.after["ports"] if p["project_id"] not in self.projects]
        self.assertEqual([], orphans)

    def test_only_network_ports_left_of_the_task(self):
        servers = {s["id"] for s in self.after["servers"]}
        # compute ports must belong to a live server
        dangling = [p for p in self.after["ports"]
                    if (p["device_owner"] or "").startswith("compute:")
                    and p.get("device_id") not in servers]
        self.assertEqual([], dangling)

    def test_no_keypairs(self):
        # names in nova_api.key_pairs: keypairs of every user, also of the deleted Rally users
        self.assertEqual([], self.ours(self.after["keypair_rows"]))

    def test_only_default_security_groups(self):
        self.assertEqual([], self.ours(g["name"] for g in self.after["security_groups"]))
        orphans = [g for g in self.after["security_groups"] if g["project_id"] not in self.projects]
        self.assertEqual([], orphans)

    def test_aio_images_only(self):
        names = [i["name"] for i in self.after["images"]]
        self.assertEqual([], self.ours(names))
        for name in self.expected["aio_images"]:
            self.assertIn(name, names)
        orphans = [i for i in self.after["images"] if i["owner"] not in self.projects]
        self.assertEqual([], orphans)

    def test_no_rally_projects_or_users(self):
        self.assertEqual([], self.ours(p["name"] for p in self.after["projects"]))
        self.assertEqual([], self.ours(self.after["users"]))

    def test_no_instance_containers_or_vif_ports(self):
        servers = {s["id"] for s in self.after["servers"]}
        self.assertIn("containers", self.after)  # the inventory looked at Docker
        self.assertEqual([], [c for c in self.after["containers"]
                              if c[len("nova-"):] not in servers])
        self.assertEqual([], [v for v in self.after.get("vif_ports", [])
                              if v["vm_uuid"] not in servers])

    def test_no_networks_of_the_task(self):
        self.assertEqual([], self.ours(n["name"] for n in self.after["networks"]))

    def test_no_routers_or_floating_ips_of_the_task(self):
        self.assertEqual([], self.ours(r["name"] for r in self.after["routers"]))
        orphans = [f for f in self.after["floating_ips"] if f["project_id"] not in self.projects]
        self.assertEqual([], orphans)


class ComparisonExportTest(E2ETest):
    """The demo's vmct-comparison export compares every kind with the native baseline."""

    @classmethod
    def load_artifacts(cls):
        super().load_artifacts()
        cls.data = load("comparison.json")

    def groups(self, metric, kind):
        return [g for g in self.data["groups"]
                if g["metric"] == metric and g["kind"] == kind]

    def test_every_kind_compared_to_native(self):
        self.assertEqual("native", self.data["baseline"])
        self.assertEqual(sorted(self.expected["kinds"]), sorted(self.data["kinds"]))

    def test_lifecycle_phases_per_instance_kind(self):
        for kind in self.expected["kinds"]:
            if kind == "native":
                continue
            for metric in ("vmct.build", "vmct.wait_for_network", "vmct.delete"):
                rows = self.groups(metric, kind)
                self.assertTrue(rows, (metric, kind))
                for row in rows:
                    self.assertGreaterEqual(row["n"], 1)
                    self.assertGreater(row["mean"], 0)

    def test_benchmarks_on_every_kind(self):
        for kind in self.expected["kinds"]:
            groups = {g["group"] for g in self.data["groups"]
                      if g["kind"] == kind and g["n"] and g["mean"] > 0}
            for tool in ("sysbench cpu", "sysbench memory", "sysbench fileio", "netperf"):
                self.assertTrue([g for g in groups if tool in g], (kind, tool, sorted(groups)))

    def test_host_memory_per_instance_against_native(self):
        """The benchmark phase's instance PSS: the guest, the container, native's sshd tree."""
        [pss] = [h for h in self.data["host_cost"] if h["group"] == "host cost: benchmark"
                 and h["metric"] == "instance PSS, mean"]
        self.assertEqual("native", pss["baseline_kind"])
        self.assertEqual(sorted(self.expected["kinds"]), sorted(pss["kinds"]))
        for kind, cell in pss["kinds"].items():
            self.assertEqual(self.expected["times"], cell["n"], kind)
            self.assertGreater(cell["mean"], 1, kind)       # MiB: an sshd alone is about 3
            if kind != "native":
                self.assertIsNotNone(cell["ratio"], kind)

    def test_page_and_siblings_written(self):
        with open(os.path.join(E2E_DIR, "comparison.html")) as f:
            html = f.read()
        self.assertNotIn('src="http', html)
        for kind in self.expected["kinds"]:
            self.assertIn(kind, html)
        self.assertTrue(os.path.getsize(os.path.join(E2E_DIR, "comparison.csv")) > 0)
