"""End-to-end: samples/tasks/scale.yaml at its CI size on the AIO's fake compute kind.

tools/test-stages/50-e2e runs it with samples/tasks/args/scale-ci.yaml on top of the AIO's
task-args file (levels 1, 8 and 16, 6 iterations a level but never fewer than the level, the
fake kind only) and leaves in $VMCT_E2E_DIR/scale/: task-uuid, task.json (`rally task report
--json`) and comparison.html/.csv/.json (`rally task export --type vmct-comparison`).
"""

import os

import yaml

from tests.e2e import test_demo_task

LEVELS = [1, 8, 16]


class ScaleTest(test_demo_task.E2ETest):

    @classmethod
    def load_artifacts(cls):
        super().load_artifacts()
        cls.report = test_demo_task.load(os.path.join("scale", "task.json"))
        cls.data = test_demo_task.load(os.path.join("scale", "comparison.json"))
        ci = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "tasks", "args",
                          "scale-ci.yaml")
        with open(ci) as f:
            cls.ci = yaml.safe_load(f)
        [cls.task] = cls.report["tasks"]
        cls.workloads = test_demo_task.task_workloads(cls.task)

    def iterations(self, level):
        """A level's iterations: scale.yaml runs never fewer than the level."""
        return max(self.ci["times"], level)

    def test_every_level_ran_every_iteration_without_error(self):
        self.assertEqual(LEVELS, self.ci["concurrency"])
        self.assertEqual(LEVELS, [w["runner"]["constant"]["concurrency"]
                                  for w in self.workloads])
        for w in self.workloads:
            self.assertEqual(self.iterations(w["runner"]["constant"]["concurrency"]),
                             len(w["data"]), w["description"])
            self.assertEqual([], [it["error"] for it in w["data"] if it.get("error")])
            self.assertTrue(w["pass_sla"], w.get("sla_results"))

    def test_fake_kind_times_build_and_delete_only(self):
        for w in self.workloads:
            args = w["scenario"]["VMCT.boot_and_delete_server"]
            self.assertEqual(("fake", "none"), (args["kind"]["name"], args["probe"]))
            for it in w["data"]:
                self.assertEqual(["vmct.build", "vmct.delete"],
                                 [a["name"] for a in it["atomic_actions"]])

    def test_quotas_sized_for_each_level(self):
        for w in self.workloads:
            level = w["runner"]["constant"]["concurrency"]
            quotas = w["contexts"]["quotas"]["nova"]
            self.assertGreaterEqual(quotas["instances"], level)

    def test_comparison_gives_quantiles_per_level(self):
        [build] = [p for p in self.data["scale"] if p["metric"] == "vmct.build"]
        [fake] = [k for k in build["kinds"] if k["kind"] == "fake"]
        self.assertEqual(LEVELS, [level["concurrency"] for level in fake["levels"]])
        for level in fake["levels"]:
            self.assertEqual((self.iterations(level["concurrency"]), 0),
                             (level["n"], level["failures"]))
            self.assertLessEqual(level["p50"], level["p95"])
            self.assertLessEqual(level["p95"], level["p99"])
            # at N = 8 or 32: p50 has a lower bound, p99 no upper one (N < 368)
            self.assertIsNotNone(level["p50_ci_low"])
            self.assertIsNone(level["p99_ci_high"])
