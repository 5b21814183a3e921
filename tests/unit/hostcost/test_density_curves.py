"""The comparison's density curves and host cost per phase, from hand-built task results."""

import csv
import io
import json

import testtools

from rally_vmct.hostcost import density
from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct.hostcost import density_curves
from rally_vmct.hostcost import phase_samples
from rally_vmct.hostcost import iteration
from rally_vmct.task import output
from rally_vmct import inference
from tests.unit.task.exporters.comparison import sample_results as sr

MIB = 1024 * 1024


def density_iteration(kind, boots, pss, reason=""):
    """A VMCT.density iteration: a server per boot time, memory measured after each."""
    fill = density.Fill(max_servers=len(boots) + (1 if reason else 0))
    for index, boot in enumerate(boots, 1):
        fill.rows.append(density.ServerRow(index, index, boot, boot / 2))
        fill.costs[index] = density.StepCost(
            used=1000 * MIB, increase_per_instance=pss * MIB,
            pss_per_instance=pss * MIB, found=index)
    fill.reason = reason
    actions = [sr.action(density.STEP_ACTION % i, b, children=[
        sr.action("vmct.build", b / 2)]) for i, b in enumerate(boots, 1)]
    charts = [output.stats_chart(kind, density.GROUP, density.UNIT,
                                 [(density.REACHED, fill.reached)])]
    return sr.iteration(actions + [sr.action(density.DELETE_ACTION, 1.0)], charts,
                        complete=[density.table(kind, fill, True),
                                  density.limit_table(kind, fill)])


def phase_table(kind, rows):
    summary = [dict(dict.fromkeys(k for _, k, _ in iteration.PHASE_COLUMNS),
                    phase=phase, seconds=1.0, host_cpu_s=cpu, pss_mean=pss)
               for phase, cpu, pss in rows]
    return iteration.phase_table(kind, "local", summary, "about")


def tasks():
    fills = [sr.workload("VMCT.density", kind, [
        density_iteration(kind, [b + i * 0.1 for b in boots], pss + i, reason)
        for i in range(3)])
        for kind, boots, pss, reason in (
            ("kvm", [10.0, 12.0], 60.0, "ServerFault: No valid host was found"),
            ("docker", [2.0, 2.5, 3.0], 8.0, ""))]
    lifecycle = [sr.workload("VMCT.boot_and_reboot_server", kind, [
        sr.iteration([sr.action("vmct.build", 2.0)], complete=[phase_table(kind, [
            ("build", cpu + i, pss), ("reboot", cpu, pss), ("iteration", 9.0, pss)])])
        for i in range(4)], reboot_type="soft")
        for kind, cpu, pss in (("kvm", 3.0, 60.0), ("docker", 1.0, None))]
    return [sr.task(*(fills + lifecycle))]


class TestDensityAndHostCost(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.data = analyse.compare(tasks())

    def curve(self, label):
        [found] = [c for c in self.data["density"]["curves"] if c["label"] == label]
        return {e["kind"]: e["points"] for e in found["kinds"]}

    def test_density_steps_are_not_lifecycle_groups(self):
        names = {g["metric"] for g in self.data["groups"] if g["source"] == "atomic"}
        self.assertNotIn("vmct.density.step_1", names)
        build = [g for g in self.data["groups"] if g["metric"] == "vmct.build"
                 and g["kind"] == "kvm"]
        self.assertEqual([4], [g["n"] for g in build])     # the reboot workload's only

    def test_provision_time_against_instances_already_running(self):
        points = self.curve("provision time (boot to reachable)")
        self.assertEqual([0, 1], [p["x"] for p in points["kvm"]])
        self.assertEqual([0, 1, 2], [p["x"] for p in points["docker"]])
        first = points["kvm"][0]
        self.assertEqual(3, first["n"])
        self.assertAlmostEqual(10.1, first["mean"])
        self.assertIsNotNone(first["ci_low"])
        self.assertEqual("kvm", first["baseline_kind"])
        docker = points["docker"][0]
        self.assertEqual("kvm", docker["baseline_kind"])
        # the page's one rule: the ratio of geometric means, its interval around it
        self.assertEqual(inference.RULE_LOG, docker["rule"])
        self.assertAlmostEqual(2.1 / 10.1, docker["ratio"], places=3)
        self.assertLess(docker["ratio_ci_low"], docker["ratio"])
        # only docker got to 3: it is its own baseline there
        self.assertEqual("docker", points["docker"][2]["baseline_kind"])
        self.assertIsNone(points["docker"][2]["ratio"])

    def test_memory_per_instance_and_limits(self):
        points = self.curve("instance PSS per instance")
        self.assertEqual([1, 2], [p["x"] for p in points["kvm"]])
        self.assertAlmostEqual(61.0, points["kvm"][0]["mean"])
        limits = {e["kind"]: e for e in self.data["density"]["limits"]}
        self.assertEqual({"first failure": 3}, limits["kvm"]["limits"])
        self.assertEqual({"ServerFault: No valid host was found": 3}, limits["kvm"]["reasons"])
        self.assertEqual({"target reached": 3}, limits["docker"]["limits"])
        [reached] = [g for g in self.data["groups"] if g["kind"] == "docker"
                     and g["metric"] == density.REACHED]
        self.assertEqual((3, 3.0), (reached["n"], reached["mean"]))

    def test_host_cost_per_phase_with_the_reboot_type(self):
        groups = {(g["kind"], g["group"], g["metric"]): g for g in self.data["groups"]
                  if g["source"] == phase_samples.SOURCE}
        build = groups[("kvm", "host cost: build", "host CPU (all CPUs, busy)")]
        self.assertEqual((4, 4.5), (build["n"], build["mean"]))
        self.assertIn(("kvm", "host cost: reboot (soft)", "instance PSS, mean"), groups)
        # docker's PSS was not measured: no sample, no group; "iteration" is no phase compared
        self.assertNotIn(("docker", "host cost: build", "instance PSS, mean"), groups)
        self.assertFalse([k for k in groups if k[1].endswith("iteration")])
        docker = groups[("docker", "host cost: build", "host CPU (all CPUs, busy)")]
        self.assertEqual("kvm", docker["baseline_kind"])
        self.assertEqual(inference.RULE_LOG, docker["rule"])
        self.assertAlmostEqual(2.5 / 4.5, docker["ratio"], places=1)
        self.assertLess(docker["ratio_ci_low"], docker["ratio"])
        rows = self.data["host_cost"]
        self.assertEqual(["build", "build", "reboot (soft)", "reboot (soft)"],
                         [r["category"] for r in rows])
        self.assertEqual({"kvm", "docker"}, set(rows[0]["kinds"]))

    def test_json_csv_and_page(self):
        loaded = json.loads(render.render_json(self.data))
        self.assertEqual(7, loaded["format_version"])
        lines = list(csv.DictReader(io.StringIO(render.render_csv(self.data))))
        curves = [r for r in lines if r["source"] == "density"]
        self.assertIn("instances already running = 0", {r["metric"] for r in curves})
        self.assertEqual({"s", "MiB"}, {r["unit"] for r in curves})
        limits = [r for r in lines if r["source"] == "density_limit"]
        self.assertEqual(["3", "3"], [r["n"] for r in limits])
        self.assertTrue([r for r in lines if r["source"] == "host"])
        page = render.render_html(self.data)
        for anchor in ('id="density"', 'id="density-limits"', 'id="host-cost"',
                       "instances already running", "No valid host was found"):
            self.assertIn(anchor, page)

    def test_no_density_no_section(self):
        data = analyse.compare([sr.task(sr.workload("VMCT.boot_and_delete_server", "kvm", [
            sr.iteration([sr.action("vmct.build", 2.0)])]))])
        self.assertEqual({"curves": [], "limits": []}, data["density"])
        self.assertEqual([], data["host_cost"])
        page = render.render_html(data)
        self.assertNotIn('id="density"', page)
        self.assertNotIn('id="host-cost"', page)


class TestParsing(testtools.TestCase):

    def test_curves_are_density_table_columns(self):
        columns = [name for name, _, _ in density.COLUMNS]
        for column, _, _, _ in density_curves.CURVES:
            self.assertIn(column, columns)

    def test_malformed_tables_are_ignored(self):
        tally = density_curves.DensityTally()
        tally.add_iteration({"output": {"complete": [
            {"title": "kvm: density", "chart_plugin": "Lines", "data": []},
            {"title": "kvm: density", "chart_plugin": "Table", "data": {"cols": ["x"],
                                                                        "rows": [[1]]}},
            "junk", {"title": None}]}})
        self.assertEqual({"curves": [], "limits": []}, density_curves.curves(tally, [], 0.95))
