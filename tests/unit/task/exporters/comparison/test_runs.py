"""Runs as the unit of replication: the comparison over runs, its level and power.

Iterations of one task share the task's moment (load, caches, the order kinds ran
in): a run-level effect. With two or more runs a side the interval is taken over
the runs' mean logs; with one it is over the iterations and says so.
"""

import math
import random

import numpy
from scipy import stats as sps
import testtools

from rally_vmct import inference
from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from tests.unit.task.exporters.comparison import sample_results as sr

BOOT = "VMCT.boot_and_delete_server"


def _run(uuid, kvm, docker):
    """One task: kvm and docker builds."""
    def workload(kind, builds):
        return sr.workload(BOOT, kind, [sr.iteration([sr.action("vmct.build", b)])
                                        for b in builds], 1)
    return sr.task(workload("kvm", kvm), workload("docker", docker), uuid=uuid)


def _row(data, kind):
    return [g for g in data["groups"] if g["kind"] == kind
            and g["metric"] == "vmct.build"][0]


class TestOverRuns(testtools.TestCase):

    RUNS = [("r1", [10.0, 10.4, 9.8], [3.0, 3.2, 2.9]),
            ("r2", [11.0, 11.3, 10.9], [3.4, 3.3, 3.5]),
            ("r3", [9.5, 9.7, 9.4], [2.8, 2.9, 2.7])]

    def test_three_runs_a_side_are_three_values(self):
        data = analyse.compare([_run(*r) for r in self.RUNS], baseline="kvm")
        docker = _row(data, "docker")
        self.assertEqual(("run", 3, 3), (docker["replicate"], docker["runs"],
                                         docker["baseline_runs"]))
        self.assertEqual(9, docker["n"])
        # by hand: Welch's t (Welch-Satterthwaite df) on the runs' mean logs
        a = [numpy.log(d).mean() for _, _, d in self.RUNS]
        b = [numpy.log(k).mean() for _, k, _ in self.RUNS]
        ref = sps.ttest_ind(a, b, equal_var=False)
        self.assertAlmostEqual(ref.pvalue, docker["p_value"], places=10)
        va, vb = numpy.var(a, ddof=1) / 3, numpy.var(b, ddof=1) / 3
        df = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 2)
        half = sps.t.ppf(0.975, df) * math.sqrt(va + vb)
        d = numpy.mean(a) - numpy.mean(b)
        self.assertAlmostEqual(math.exp(d - half), docker["ratio_ci_low"], places=10)
        self.assertAlmostEqual(math.exp(d + half), docker["ratio_ci_high"], places=10)
        page = render.render_html(data)
        self.assertIn("(3 vs 3 runs, each one value)", page)
        self.assertIn("<small>3 runs</small>", page)

    def test_one_run_says_its_interval_is_within_the_run(self):
        data = analyse.compare([_run(*self.RUNS[0])], baseline="kvm")
        docker = _row(data, "docker")
        self.assertEqual(("iteration", 1), (docker["replicate"], docker["runs"]))
        page = render.render_html(data)
        self.assertIn("covers only the\nvariation within a run", page)
        self.assertIn("0 of the\n2 compared cells have two or more runs", page)


def _side(rng, runs, n, run_sd, cv, shift=0.0):
    """``runs`` runs of ``n`` log-normal values, each run with its own effect."""
    out = []
    for _ in range(runs):
        effect = rng.gauss(0, run_sd)
        out.append([math.exp(shift + effect + rng.gauss(0, cv)) for _ in range(n)])
    return out


def _mean_logs(runs):
    return [math.fsum(math.log(v) for v in run) / len(run) for run in runs]


class TestCalibration(testtools.TestCase):
    """The issue's case: 3 runs of 10 a side, run-level log SD 5 %, CV 10 %."""

    SIMS = 1500

    def rate(self, shift, over_runs, run_sd=0.05):
        rng = random.Random(42)
        marked = 0
        for _ in range(self.SIMS):
            a = _side(rng, 3, 10, run_sd, 0.10, shift)
            b = _side(rng, 3, 10, run_sd, 0.10)
            if over_runs:
                r = inference.compare_runs(_mean_logs(a), _mean_logs(b), 0.05)
            else:
                r = inference.compare(inference.sample(sum(a, [])),
                                      inference.sample(sum(b, [])), 0.05)
            marked += r["significant"]
        return marked / self.SIMS

    def test_over_runs_keeps_its_level(self):
        # at most 5 % plus three simulation SEs
        limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / self.SIMS)
        self.assertLessEqual(self.rate(0.0, True), limit)
        self.assertLessEqual(self.rate(0.0, True, run_sd=0.025), limit)

    def test_over_iterations_does_not(self):
        # why the page does not pool the iterations of several runs
        self.assertGreater(self.rate(0.0, False), 0.15)

    def test_over_runs_detects_a_30_percent_difference(self):
        self.assertGreaterEqual(self.rate(math.log(1.3), True), 0.80)
