"""Unit tests of the one comparison rule (rally_vmct.inference) and the
log-scale statistics under it (stats.log_ratio, tost_p, outside_p, holm_levels,
n_per_side), with reference values from scipy (a test requirement only)."""

import math

import numpy
from scipy import stats as sps
import testtools

from rally_vmct import inference
from rally_vmct import stats

# The demo example: qemu-tcg vs native sysbench cpu, and docker vs qemu-tcg
# delete, 3 vs 3 (values shaped to the intervals the issue quotes).
CPU_TCG = [71.0, 69.5, 72.3]
CPU_NATIVE = [498.0, 503.5, 495.1]
DELETE_DOCKER = [0.62, 0.98, 0.75]
DELETE_TCG = [3.05, 2.90, 3.20]


def _scipy_log_welch(a, b, confidence, df):
    la, lb = numpy.log(a), numpy.log(b)
    d = la.mean() - lb.mean()
    se = math.sqrt(la.var(ddof=1) / len(a) + lb.var(ddof=1) / len(b))
    t = sps.t.ppf(0.5 + confidence / 2, df)
    p = 2 * sps.t.sf(abs(d / se), df)
    return math.exp(d), math.exp(d - t * se), math.exp(d + t * se), p, d, se


class TestLogRatio(testtools.TestCase):

    def test_against_scipy_with_hsu_df(self):
        for a, b in ((CPU_TCG, CPU_NATIVE), (DELETE_DOCKER, DELETE_TCG),
                     ([1.0, 1.2, 0.9, 1.1, 1.3], [1.0, 1.5, 0.8])):
            for confidence in (0.95, 0.99, 0.9):
                got = stats.log_ratio(a, b, confidence)
                df = min(len(a), len(b)) - 1
                ref = _scipy_log_welch(a, b, confidence, df)
                self.assertEqual(df, got.df)
                for mine, theirs in zip((got.ratio, got.ci_low, got.ci_high, got.p), ref):
                    self.assertAlmostEqual(theirs, mine, delta=1e-10 * max(1, abs(theirs)))

    def test_welch_satterthwaite_df_when_asked(self):
        a, b = [1.0, 1.2, 0.9, 1.1, 1.3], [1.0, 1.5, 0.8]
        ref = sps.ttest_ind(numpy.log(a), numpy.log(b), equal_var=False)
        la, lb = numpy.log(a), numpy.log(b)
        va, vb = la.var(ddof=1) / 5, lb.var(ddof=1) / 3
        df = (va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 2)
        self.assertAlmostEqual(ref.pvalue, stats.log_ratio(a, b, df=df).p, places=12)

    def test_hsu_is_never_more_generous_than_welch(self):
        a, b = [1.0, 1.2, 0.9], [1.0, 3.5, 0.4]
        hsu = stats.log_ratio(a, b)
        welch = sps.ttest_ind(numpy.log(a), numpy.log(b), equal_var=False)
        self.assertGreaterEqual(hsu.p, welch.pvalue)

    def test_non_positive_values_and_small_n(self):
        self.assertIsNone(stats.log_moments([1.0, 0.0]))
        self.assertRaises(ValueError, stats.log_ratio, [1.0, -1.0], [1.0, 2.0])
        r = stats.log_ratio([2.0], [1.0, 1.1])
        self.assertEqual((None, "fewer than 2 candidate samples: no interval"),
                         (r.ci_low, r.note))
        # measured to the nanosecond, equal: no spread to speak of (whole numbers are
        # another matter: TestWrittenStep)
        x = 1.000000001234
        r = stats.log_ratio([2 * x, 2 * x], [x, x])
        self.assertEqual((2.0, 2.0, 0.0), (r.ci_low, r.ci_high, r.p))


class TestEquivalence(testtools.TestCase):

    def test_tost_and_outside_against_scipy(self):
        low, high = math.log(0.95), math.log(1.05)
        for d, se, df in ((0.01, 0.01, 4), (-0.03, 0.02, 2), (0.2, 0.05, 7)):
            p_low = sps.t.sf((d - low) / se, df)
            p_high = sps.t.sf((high - d) / se, df)
            self.assertAlmostEqual(max(p_low, p_high), stats.tost_p(d, se, df, low, high),
                                   places=12)
            out = min(1, 2 * min(sps.t.sf((d - high) / se, df), sps.t.sf((low - d) / se, df)))
            self.assertAlmostEqual(out, stats.outside_p(d, se, df, low, high), places=12)

    def test_tost_is_the_90_percent_interval_inside_the_band(self):
        a, b = [100.0, 101.0, 100.5, 99.8, 100.2], [100.4, 100.9, 99.7, 100.1, 100.6]
        result = inference.compare(inference.sample(a), inference.sample(b), 0.05)
        decision, p_equal, _, (lo, hi) = inference.band_decision(result, 0.05, 0.05)
        ref = _scipy_log_welch(a, b, 0.90, 4)
        self.assertAlmostEqual(ref[1], lo, places=12)
        self.assertAlmostEqual(ref[2], hi, places=12)
        self.assertEqual("equivalent", decision)
        self.assertTrue(0.95 <= lo and hi <= 1.05)
        self.assertLess(p_equal, 0.05)


class TestHolmLevels(testtools.TestCase):

    def test_same_rejections_as_holm_adjusted_p(self):
        for ps in ([0.01, 0.04, 0.03, 0.005], [0.001, 0.2, None, 0.011], [0.5, 0.6]):
            levels = stats.holm_levels(ps, 0.05)
            adjusted = stats.holm(ps)
            for p, lv, adj in zip(ps, levels, adjusted):
                if p is None:
                    self.assertIsNone(lv)
                    continue
                self.assertEqual(adj < 0.05, lv[0], ps)
                # the interval at 1 - level excludes the null exactly when rejected
                self.assertEqual(p < lv[1], lv[0], ps)

    def test_levels(self):
        self.assertEqual([(True, 0.0125), (False, 0.05 / 3), (False, 0.05 / 3), None,
                          (False, 0.05 / 3)],
                         stats.holm_levels([0.01, 0.04, 0.03, None, 0.5], 0.05))


class TestPower(testtools.TestCase):

    def test_detectable_and_n_per_side(self):
        # (t(0.975, 2) + t(0.8, 2)) * se
        se = 0.1
        expected = (sps.t.ppf(0.975, 2) + sps.t.ppf(0.8, 2)) * se
        self.assertAlmostEqual(expected, stats.detectable_log_ratio(se, 2, 0.05), places=10)
        n = stats.n_per_side(math.log(0.66), 0.2, 0.2, 0.05)
        for m, ok in ((n, True), (n - 1, False)):
            se = math.sqrt(0.08 / m)
            reach = (sps.t.ppf(0.975, m - 1) + sps.t.ppf(0.8, m - 1)) * se
            self.assertEqual(ok, reach <= -math.log(0.66), m)
        self.assertIsNone(stats.n_per_side(math.log(0.94), 0.1, 0.1, 0.05,
                                           band=(math.log(0.95), math.log(1.05))))


class TestTheRule(testtools.TestCase):

    def test_demo_examples_are_decided(self):
        cpu = inference.compare(inference.sample(CPU_TCG), inference.sample(CPU_NATIVE),
                                0.05)
        self.assertEqual((inference.RULE_LOG, True), (cpu["rule"], cpu["significant"]))
        self.assertLess(cpu["ratio_ci_high"], 1)
        self.assertEqual("lower", inference.difference(cpu))
        delete = inference.compare(inference.sample(DELETE_DOCKER),
                                   inference.sample(DELETE_TCG), 0.05 / 5)
        self.assertTrue(delete["significant"])
        self.assertLess(delete["ratio_ci_high"], 1)

    def test_verdict_is_the_interval(self):
        # over many samples: significant exactly when 1 is outside the interval,
        # and exactly when p < alpha
        rng = numpy.random.default_rng(3)
        for _ in range(300):
            a = list(rng.lognormal(0, 0.2, rng.integers(2, 6)))
            b = list(rng.lognormal(rng.normal(0, 0.2), 0.2, rng.integers(2, 6)))
            r = inference.compare(inference.sample(a), inference.sample(b), 0.05)
            outside = not r["ratio_ci_low"] <= 1 <= r["ratio_ci_high"]
            self.assertEqual(outside, r["significant"])
            self.assertEqual(r["p_value"] < 0.05, r["significant"])

    def test_fieller_at_hsu_df_for_values_not_positive(self):
        a, b = [-1.0, 2.0, 3.0, 2.5], [10.0, 11.0, 12.0]
        r = inference.compare(inference.sample(a), inference.sample(b), 0.05)
        self.assertEqual((inference.RULE_FIELLER, 2.0), (r["rule"], r["ratio_df"]))
        # the Welch statistic at df 2, by scipy
        se = math.sqrt(numpy.var(a, ddof=1) / 4 + numpy.var(b, ddof=1) / 3)
        t = (numpy.mean(a) - numpy.mean(b)) / se
        self.assertAlmostEqual(2 * sps.t.sf(abs(t), 2), r["p_value"], places=12)
        self.assertEqual(not r["ratio_ci_low"] <= 1 <= r["ratio_ci_high"], r["significant"])


class TestFiellerSets(testtools.TestCase):
    """An unbounded Fieller set: every ratio, or two half-lines with 1 in their gap.

    Either way the verdict is p < alpha.
    """

    def test_two_half_lines_that_exclude_1_are_a_difference(self):
        # the baseline's mean (0.5) is not bounded away from 0, the difference is clear
        r = inference.compare(inference.sample([10.0, 10.5, 11.0]),
                              inference.sample([-1.0, 0.5, 2.0]), 0.05)
        self.assertTrue(r["ratio_ci_unbounded"])
        self.assertIsNone(r["ratio_ci_low"])
        self.assertLess(r["ratio_ci_excludes_low"], 1)
        self.assertGreater(r["ratio_ci_excludes_high"], 1)
        self.assertLess(r["p_value"], 0.05)
        self.assertTrue(r["significant"])

    def test_every_ratio_is_no_difference(self):
        r = inference.compare(inference.sample([-1.0, 0.2, 1.5]),
                              inference.sample([-1.0, 0.5, 2.0]), 0.05)
        self.assertTrue(r["ratio_ci_unbounded"])
        self.assertIsNone(r["ratio_ci_excludes_low"])
        self.assertFalse(r["significant"])

    def test_verdict_is_p_below_alpha_bounded_or_not(self):
        rng = numpy.random.default_rng(11)
        unbounded = 0
        for _ in range(400):
            a = list(rng.normal(rng.normal(0, 3), 1.5, rng.integers(2, 6)))
            b = list(rng.normal(rng.normal(0, 1), 1.5, rng.integers(2, 6)))
            a[0] = min(a[0], -0.1)      # values <= 0: the Fieller rule
            r = inference.compare(inference.sample(a), inference.sample(b), 0.05)
            self.assertEqual(inference.RULE_FIELLER, r["rule"])
            unbounded += bool(r["ratio_ci_unbounded"])
            self.assertEqual(r["p_value"] < 0.05, r["significant"], r)
        self.assertGreater(unbounded, 50)


class TestWrittenStep(testtools.TestCase):
    """Values written to a step (whole seconds) are not certain."""

    def test_equal_whole_seconds_are_not_a_certain_difference(self):
        r = inference.compare(inference.sample([10, 10]), inference.sample([11, 11]), 0.05)
        self.assertFalse(r["significant"])
        self.assertLess(r["ratio_ci_low"], r["ratio"])
        self.assertGreater(r["ratio_ci_high"], r["ratio"])

    def test_whole_seconds_mark_at_most_alpha_when_nothing_differs(self):
        rng = numpy.random.default_rng(5)
        marked, runs = 0, 2000
        for _ in range(runs):
            a = [float(round(v)) for v in rng.normal(10.3, 0.3, 2)]
            b = [float(round(v)) for v in rng.normal(10.3, 0.3, 2)]
            marked += inference.compare(inference.sample(a), inference.sample(b),
                                        0.05)["significant"]
        # 12.8 % before the floor; 0.05 plus three simulation SEs
        self.assertLessEqual(marked / runs, 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs))

    def test_measured_values_have_no_step(self):
        self.assertIsNone(stats.resolution([10.123456789, 11.5]))
        self.assertEqual(1.0, stats.resolution([10, 11.0]))
        self.assertEqual(0.1, stats.resolution([10.5, 11.0]))
