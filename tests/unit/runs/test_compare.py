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


class ExportTestCase(testtools.TestCase):
    """Writes vmct-comparison JSON exports of hand-built tasks to a temporary folder."""

    def setUp(self):
        super(ExportTestCase, self).setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def export(self, name, task):
        path = os.path.join(self.dir, name + ".json")
        with open(path, "w") as f:
            f.write(render.render_json(analyse.compare([task])))
        return path


class TestCompareRuns(ExportTestCase):

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


def _builds(values, failed=0, kind="kvm"):
    """A task of builds (each with a delete), ``failed`` more whose build failed."""
    its = [sr.iteration([sr.action("vmct.build", b)]) for b in values]
    its += [sr.iteration([sr.action("vmct.build", 300.0, failed=True)],
                         error=["TimeoutException", "build timed out", ""])
            for _ in range(failed)]
    return sr.task(sr.workload(BOOT, kind, its, 1))


class TestTheGate(ExportTestCase):
    """The verdict is the interval against 1 and the band; failures and gaps count."""

    def rows(self, a, b):
        return {(r["key"][0], r["key"][4]): r
                for r in compare.compare(compare.load(a), compare.load(b))}

    def test_an_interval_past_the_band_on_the_worse_side_is_a_regression(self):
        a = self.export("a", _builds([10.0, 10.4, 9.7, 10.1, 9.9, 10.3]))
        b = self.export("b", _builds([10.4, 12.6, 11.0, 13.1, 10.9, 12.2]))
        build = self.rows(a, b)[("kvm", "vmct.build")]
        low, high = build["result"]["ratio_ci_low"], build["result"]["ratio_ci_high"]
        # the case: above 1, not wholly above 1.05
        self.assertTrue(1 < low < 1.05 < high, (low, high))
        self.assertEqual(compare.REGRESSED, build["verdict"])
        self.assertEqual(compare.EXIT_REGRESSED, compare.main([a, b]))

    def test_an_interval_that_excludes_1_within_the_band_is_the_same(self):
        a = self.export("a", _builds([10.0, 10.01, 9.99, 10.02, 9.98, 10.0]))
        b = self.export("b", _builds([10.2, 10.21, 10.19, 10.22, 10.18, 10.2]))
        build = self.rows(a, b)[("kvm", "vmct.build")]
        self.assertGreater(build["result"]["ratio_ci_low"], 1)
        self.assertLess(build["result"]["ratio_ci_high"], 1.05)
        self.assertEqual(compare.SAME, build["verdict"])
        self.assertEqual(0, compare.main([a, b]))

    def test_one_value_a_side_cannot_tell_and_says_so(self):
        a = self.export("a", _builds([10.0]))
        b = self.export("b", _builds([30.0]))
        build = self.rows(a, b)[("kvm", "vmct.build")]
        self.assertEqual(compare.CANNOT_TELL, build["verdict"])
        self.assertEqual(compare.EXIT_CANNOT_TELL, compare.main([a, b]))
        out = self.useFixture(fixtures.StringStream("stdout"))
        with fixtures.MonkeyPatch("sys.stdout", out.stream):
            compare.main([a, b])
        self.assertIn("cannot tell", out.getDetails()["stdout"].as_text())
        self.assertNotIn(" same ", out.getDetails()["stdout"].as_text().split("\n")[0])

    def test_a_wide_interval_says_how_many_values_would_tell(self):
        a = self.export("a", _builds([10.0, 12.0, 9.0]))
        b = self.export("b", _builds([11.0, 9.5, 12.5]))
        build = self.rows(a, b)[("kvm", "vmct.build")]
        self.assertEqual(compare.CANNOT_TELL, build["verdict"])
        self.assertRegex(build["why"], r"about \d+ values a side would tell a ±5 % change")

    def test_every_build_failed_is_missing(self):
        a = self.export("a", _builds([10.0, 10.4, 9.7, 10.1]))
        b = self.export("b", _builds([], failed=4))
        build = self.rows(a, b)[("kvm", "vmct.build")]
        self.assertEqual(compare.MISSING, build["verdict"])
        self.assertIn("all 4 failed", build["why"])
        self.assertEqual(compare.EXIT_REGRESSED, compare.main([a, b]))

    def test_a_rise_in_failures_fails_the_gate(self):
        values = [10.0, 10.4, 9.7, 10.1, 9.9, 10.3, 10.2, 9.8, 10.0]
        a = self.export("a", _builds(values))
        b = self.export("b", _builds(values[:5], failed=4))
        build = self.rows(a, b)[("kvm", "vmct.build")]
        self.assertEqual(compare.MORE_FAILURES, build["verdict"])
        self.assertIn("4 of 9 failed, the baseline 0 of 9", build["why"])
        self.assertEqual(compare.EXIT_REGRESSED, compare.main([a, b]))
        # one failure in ten is not evidence of a rise
        c = self.export("c", _builds(values, failed=1))
        self.assertNotEqual(compare.MORE_FAILURES,
                            self.rows(a, c)[("kvm", "vmct.build")]["verdict"])

    def test_a_replaced_kind_is_missing_and_new(self):
        values = [10.0, 10.4, 9.7, 10.1]
        a = self.export("a", _builds(values))
        b = self.export("b", _builds(values, kind="docker"))
        rows = self.rows(a, b)
        self.assertEqual(compare.MISSING, rows[("kvm", "vmct.build")]["verdict"])
        self.assertEqual(compare.NEW, rows[("docker", "vmct.build")]["verdict"])
        self.assertEqual(compare.EXIT_REGRESSED, compare.main([a, b]))

    def test_holm_holds_the_family_at_alpha(self):
        # build: p = 0.031 and its 95 % interval [1.03, 1.38] past +5 %; alone it
        # regresses, beside two more metrics Holm asks p < 0.05 / 3 first
        base_b, new_b = [10.0, 11.0, 9.5, 10.5], [v * 1.18 for v in [10.5, 9.6, 11.2, 10.1]]
        alone = self.rows(self.export("a1", _builds(base_b)),
                          self.export("b1", _builds(new_b)))[("kvm", "vmct.build")]
        self.assertAlmostEqual(0.0306, alone["first"]["p_value"], places=3)
        self.assertEqual(compare.REGRESSED, alone["verdict"])

        def three(builds):
            its = [sr.iteration([sr.action("vmct.build", b), sr.action("vmct.delete", 5.0 + i),
                                 sr.action("vmct.wait_for_network", 2.0 + i)])
                   for i, b in enumerate(builds)]
            return sr.task(sr.workload(BOOT, "kvm", its, 1))
        family = self.rows(self.export("a3", three(base_b)), self.export("b3", three(new_b)))
        build = family[("kvm", "vmct.build")]
        self.assertEqual(0.05 / 3, build["level"])
        self.assertNotEqual(compare.REGRESSED, build["verdict"])
        self.assertLess(build["result"]["ratio_ci_low"], 1)


class TestFisher(testtools.TestCase):

    def test_against_scipy(self):
        for table in ((4, 5, 0, 9), (1, 9, 0, 10), (3, 7, 1, 9), (0, 5, 2, 3)):
            expected = sps.fisher_exact([[table[0], table[1]], [table[2], table[3]]],
                                        alternative="greater")[1]
            self.assertAlmostEqual(expected, compare.stats.fisher_greater(*table),
                                   places=12)
