"""vmct-compare-runs (rally_vmct.runs.compare) on exports built from task results."""

import json
import math
import os

import fixtures
import numpy
from scipy import stats as sps
import testtools

from rally_vmct.runs import compare
from rally_vmct.task import output
from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from tests.unit.task.exporters.comparison import sample_results as sr

BOOT = "VMCT.boot_and_delete_server"


def _task(builds, deletes, kind="kvm"):
    its = [sr.iteration([sr.action("vmct.build", b), sr.action("vmct.delete", d, b)])
           for b, d in zip(builds, deletes)]
    return sr.task(sr.workload(BOOT, kind, its, 1))


class TestCompareRuns(testtools.TestCase):

    def setUp(self):
        super(TestCompareRuns, self).setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def export(self, name, task):
        path = os.path.join(self.dir, name + ".json")
        with open(path, "w") as f:
            f.write(render.render_json(analyse.compare([task])))
        return path

    def test_regression_improvement_and_same_with_reference_values(self):
        base_b, base_d = [10.0, 10.4, 9.8, 10.2], [5.0, 5.1, 4.9, 5.05]
        new_b, new_d = [12.0, 12.3, 11.8, 12.2], [2.5, 2.55, 2.45, 2.52]
        a = self.export("a", _task(base_b, base_d))
        b = self.export("b", _task(new_b, new_d))
        rows = compare.compare(compare.load(a), compare.load(b))
        verdicts = {row["key"][4]: row for row in rows}
        self.assertEqual(compare.REGRESSED, verdicts["vmct.build"]["verdict"])
        self.assertEqual(compare.IMPROVED, verdicts["vmct.delete"]["verdict"])
        # Holm over the 2 metrics: the smaller p at 0.025, the other at 0.05
        self.assertEqual({0.025, 0.05}, {row["level"] for row in rows})
        build = verdicts["vmct.build"]
        la, lb = numpy.log(new_b), numpy.log(base_b)
        d = la.mean() - lb.mean()
        se = math.sqrt(la.var(ddof=1) / 4 + lb.var(ddof=1) / 4)
        t = sps.t.ppf(1 - build["level"] / 2, 3)
        self.assertAlmostEqual(math.exp(d - t * se), build["result"]["ratio_ci_low"],
                               places=10)
        self.assertGreater(build["result"]["ratio_ci_low"], 1.05)
        self.assertEqual(compare.EXIT_REGRESSED, compare.main([a, b]))
        self.assertEqual(0, compare.main([a, a]))
        rows = compare.compare(compare.load(a), compare.load(a))
        self.assertEqual([compare.SAME, compare.SAME], [r["verdict"] for r in rows])

    def test_a_rate_that_drops_is_a_regression(self):
        def cpu(values):
            return sr.task(sr.workload("VMCT.boot_and_benchmark", "kvm", [
                sr.iteration(charts=[output.stats_chart("kvm", "sysbench cpu", "events/s",
                                                        [("events_per_second", v)])])
                for v in values], concurrency=1))
        a = self.export("a", cpu([100.0, 101.0, 99.0, 100.5]))
        b = self.export("b", cpu([80.0, 81.0, 79.5, 80.2]))
        # lifecycle phases only by default: nothing in common, said and exit 2
        self.assertEqual(compare.EXIT_BAD_INPUT, compare.main([a, b]))
        self.assertEqual(compare.EXIT_REGRESSED, compare.main([a, b, "--all"]))
        rows = compare.compare(compare.load(a), compare.load(b), everything=True)
        cpu_row = [r for r in rows if r["key"][4] == "events_per_second"][0]
        self.assertEqual(compare.REGRESSED, cpu_row["verdict"])

    def test_bad_input_names_the_fix(self):
        path = os.path.join(self.dir, "x.json")
        with open(path, "w") as f:
            json.dump({"format": "rally"}, f)
        e = self.assertRaises(compare.BadInput, compare.load, path)
        self.assertIn("--type vmct-comparison-json", str(e))
        self.assertEqual(compare.EXIT_BAD_INPUT, compare.main([path, path]))
        self.assertRaises(SystemExit, compare.main, [path, path, "--tolerance", "2"])
