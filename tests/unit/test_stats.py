"""Unit tests of rally_vmct.stats against hand-computed values and scipy.

scipy is a test requirement only: the plugin computes everything itself, and the
reference values here come from scipy.stats on real-looking benchmark samples.
"""

import fractions
import math
import random

from rally.task.processing import utils as rally_utils
from scipy import stats as sps
import testtools

from rally_vmct import stats

# [2, 4, 4, 4, 5, 5, 7, 9]: sum 40, mean 5, squared deviations 9+1+1+1+0+0+4+16 = 32.
SAMPLE = [9, 4, 5, 2, 4, 7, 4, 5]
SAMPLE_SD = math.sqrt(32 / 7)          # 2.138089935...
T_975_7 = 2.364624                     # printed t tables, df = 7


class TestBasics(testtools.TestCase):

    def test_mean_sd_cv(self):
        self.assertEqual(5.0, stats.mean(SAMPLE))
        self.assertAlmostEqual(SAMPLE_SD, stats.sd(SAMPLE), places=12)
        self.assertAlmostEqual(2.138089935299395, stats.sd(SAMPLE), places=12)
        self.assertAlmostEqual(SAMPLE_SD / 5, stats.cv(SAMPLE), places=12)

    def test_cv_uses_absolute_mean(self):
        # mean -2, deviations 1, 1: sd = sqrt(2 / 1)
        self.assertAlmostEqual(math.sqrt(2) / 2, stats.cv([-1, -3]), places=12)

    def test_empty_and_single(self):
        self.assertIsNone(stats.mean([]))
        self.assertIsNone(stats.sd([]))
        self.assertIsNone(stats.sd([3.0]))
        self.assertIsNone(stats.cv([3.0]))
        self.assertIsNone(stats.percentile([], 50))
        self.assertEqual(3.0, stats.percentile([3.0], 99))

    def test_cv_of_zero_mean_is_none(self):
        self.assertIsNone(stats.cv([-1, 1]))

    def test_bad_values_name_the_element(self):
        e = self.assertRaises(ValueError, stats.mean, [1, None, 3])
        self.assertIn("values[1]", str(e))
        e = self.assertRaises(ValueError, stats.summary, [1.0, float("nan")])
        self.assertIn("values[1]", str(e))
        e = self.assertRaises(ValueError, stats.summary, [1.0, 2.0, float("inf")])
        self.assertIn("values[2]", str(e))
        self.assertRaises(ValueError, stats.sd, [1, "2"])
        self.assertRaises(ValueError, stats.mean, [True, 2])
        self.assertRaises(ValueError, stats.mean, None)
        self.assertRaises(ValueError, stats.mean, "123")

    def test_bad_percent_and_confidence(self):
        e = self.assertRaises(ValueError, stats.percentile, [1], 101)
        self.assertIn("percent", str(e))
        e = self.assertRaises(ValueError, stats.summary, [1, 2], confidence=95)
        self.assertIn("confidence", str(e))


class TestPercentile(testtools.TestCase):

    def test_linear_interpolation_by_hand(self):
        # sorted 2 4 4 4 5 5 7 9, position k = 7 * q
        self.assertEqual(4.5, stats.percentile(SAMPLE, 50))     # k 3.5: (4 + 5) / 2
        self.assertAlmostEqual(7.6, stats.percentile(SAMPLE, 90), places=12)   # 7*.7+9*.3
        self.assertAlmostEqual(8.3, stats.percentile(SAMPLE, 95), places=12)   # 7*.35+9*.65
        self.assertAlmostEqual(8.86, stats.percentile(SAMPLE, 99), places=12)  # 7*.07+9*.93
        self.assertEqual(2, stats.percentile(SAMPLE, 0))
        self.assertEqual(9, stats.percentile(SAMPLE, 100))

    def test_exact_rank_needs_no_interpolation(self):
        # 5 values: k = 4 * 0.5 = 2 exactly
        self.assertEqual(30, stats.percentile([50, 10, 30, 20, 40], 50))

    def test_matches_rally_report(self):
        rng = random.Random(42)
        for n in (1, 2, 3, 10, 101, 1000):
            values = [rng.expovariate(1.0) for _ in range(n)]
            for q in (50, 90, 95, 99):
                self.assertEqual(
                    rally_utils.percentile(sorted(values), q / 100.0),
                    stats.percentile(values, q), "n=%d q=%d" % (n, q))


class TestTQuantile(testtools.TestCase):

    def test_known_values_975(self):
        # Printed t tables (two-sided 95 %).
        for df, expected in ((1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228),
                             (30, 2.042), (100, 1.984)):
            self.assertAlmostEqual(expected, stats.t_quantile(0.975, df), places=3,
                                   msg="df=%d" % df)

    def test_known_values_six_decimals(self):
        for p, df, expected in ((0.975, 3, 3.182446), (0.975, 5, 2.570582),
                                (0.975, 7, T_975_7), (0.975, 10, 2.228139),
                                (0.975, 30, 2.042272), (0.975, 100, 1.983972),
                                (0.995, 3, 5.840909), (0.95, 10, 1.812461),
                                (0.9995, 1, 636.619249)):
            self.assertAlmostEqual(expected, stats.t_quantile(p, df), places=6,
                                   msg="p=%s df=%d" % (p, df))

    def test_closed_forms(self):
        self.assertAlmostEqual(math.tan(0.475 * math.pi), stats.t_quantile(0.975, 1),
                               places=12)
        # df 2: t = (2p - 1) / sqrt(2 p (1 - p))
        self.assertAlmostEqual(0.95 / math.sqrt(2 * 0.975 * 0.025),
                               stats.t_quantile(0.975, 2), places=12)

    def test_inverse_of_cdf(self):
        for df in (1.5, 3, 7.3, 42, 999):
            for p in (0.6, 0.9, 0.975, 0.999):
                t = stats.t_quantile(p, df)
                self.assertAlmostEqual(1 - p, stats.t_sf(t, df), places=13)

    def test_symmetric_and_median(self):
        self.assertEqual(0.0, stats.t_quantile(0.5, 4))
        self.assertAlmostEqual(-stats.t_quantile(0.975, 5), stats.t_quantile(0.025, 5),
                               places=12)

    def test_large_df_tends_to_normal(self):
        self.assertAlmostEqual(1.959964, stats.t_quantile(0.975, float("inf")), places=6)
        self.assertAlmostEqual(1.959964, stats.t_quantile(0.975, 1e9), places=6)
        # Cornish-Fisher above 1000 df joins the exact inversion below it.
        self.assertAlmostEqual(stats.t_quantile(0.975, 1000),
                               stats.t_quantile(0.975, 1000.0001), places=9)

    def test_bad_arguments(self):
        for p in (0, 1, 1.5, None):
            e = self.assertRaises(ValueError, stats.t_quantile, p, 3)
            self.assertIn("p must be", str(e))
        for df in (0, -1, float("nan"), None):
            e = self.assertRaises(ValueError, stats.t_quantile, 0.9, df)
            self.assertIn("df", str(e))

    def test_betainc_known_values(self):
        # I_x(1, 1) = x; I_x(a, 1) = x**a; I_0.5(a, a) = 0.5
        self.assertAlmostEqual(0.3, stats.betainc(1, 1, 0.3), places=14)
        self.assertAlmostEqual(0.2 ** 3, stats.betainc(3, 1, 0.2), places=14)
        self.assertAlmostEqual(0.5, stats.betainc(4.5, 4.5, 0.5), places=14)


class TestSummary(testtools.TestCase):

    def test_by_hand(self):
        s = stats.summary(SAMPLE)
        self.assertEqual(8, s.n)
        self.assertEqual(5.0, s.mean)
        self.assertAlmostEqual(SAMPLE_SD, s.sd, places=12)
        self.assertAlmostEqual(SAMPLE_SD / 5, s.cv, places=12)
        self.assertEqual((2, 9), (s.min, s.max))
        self.assertEqual(4.5, s.p50)
        self.assertAlmostEqual(7.6, s.p90, places=12)
        self.assertAlmostEqual(8.3, s.p95, places=12)
        self.assertAlmostEqual(8.86, s.p99, places=12)
        # half width = t(0.975, 7) * sd / sqrt(8) = 2.364624 * 0.755929 = 1.787487
        self.assertAlmostEqual(1.787487, s.ci_half_width, places=5)
        self.assertAlmostEqual(5 - 1.787487, s.ci_low, places=5)
        self.assertAlmostEqual(5 + 1.787487, s.ci_high, places=5)
        self.assertEqual((s.ci_low, s.ci_high), stats.mean_ci(SAMPLE))

    def test_other_confidence(self):
        # 90 %: t(0.95, 7) = 1.894579
        s = stats.summary(SAMPLE, confidence=0.90)
        self.assertAlmostEqual(1.894579 * SAMPLE_SD / math.sqrt(8), s.ci_half_width,
                               places=5)

    def test_empty(self):
        s = stats.summary([])
        self.assertEqual(0, s.n)
        self.assertTrue(all(v is None for v in s[1:]))
        self.assertIsNone(stats.mean_ci([]))

    def test_single(self):
        s = stats.summary([2.5])
        self.assertEqual((1, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5),
                         (s.n, s.mean, s.min, s.max, s.p50, s.p90, s.p95, s.p99))
        self.assertEqual((None, None, None, None, None),
                         (s.sd, s.cv, s.ci_low, s.ci_high, s.ci_half_width))
        self.assertIsNone(stats.mean_ci([2.5]))

    def test_interval_of_a_non_negative_quantity_stays_non_negative(self):
        # docker delete in a demo run: 0.885 +/- 0.399 s, N=3 -> Student's [-0.108, 1.88]
        s = stats.summary([0.5, 0.86, 1.3])
        self.assertEqual(0.0, s.ci_low)
        self.assertAlmostEqual(s.mean + s.ci_half_width, s.ci_high, places=12)
        # with a negative value the plain Student interval stands
        s = stats.summary([-0.5, 0.86, 1.3])
        self.assertAlmostEqual(s.mean - s.ci_half_width, s.ci_low, places=12)
        self.assertLess(s.ci_low, 0)

    def test_constant_sample(self):
        s = stats.summary([4, 4, 4])
        self.assertEqual((0.0, 0.0, 4.0, 4.0), (s.sd, s.cv, s.ci_low, s.ci_high))

    def test_as_dict(self):
        d = stats.summary([1, 3])._asdict()
        self.assertEqual(2.0, d["mean"])
        self.assertEqual(set(stats.Summary._fields), set(d))


class TestRatio(testtools.TestCase):

    def test_delta_method_se_and_welch_df_by_hand(self):
        # candidate [2, 4]: mean 3, sd^2 2, se_a^2 = 1
        # baseline [1, 2, 3]: mean 2, sd^2 1, se_b^2 = 1/3
        # R = 1.5; v_a = 1/4; v_b = 2.25 * (1/3) / 4 = 0.1875
        # SE = sqrt(0.4375); df = 0.4375^2 / (0.25^2 / 1 + 0.1875^2 / 2) = 2.390244
        r = stats.ratio([2, 4], [1, 2, 3])
        self.assertEqual(1.5, r.ratio)
        self.assertAlmostEqual(math.sqrt(0.4375), r.se, places=12)
        self.assertAlmostEqual(0.19140625 / 0.080078125, r.df, places=12)

    def test_noisy_small_baseline_is_unbounded(self):
        # Output changed deliberately: the delta method printed 1.5 -/+ 2.6 here.
        # Baseline mean 2 with SE sqrt(1/3): |mean| / SE = 3.46 < t(0.975, 2.39) = 3.8,
        # so the mean may be 0 and no finite interval holds (Fieller).
        r = stats.ratio([2, 4], [1, 2, 3])
        self.assertLess(2 / math.sqrt(1 / 3), stats.t_quantile(0.975, r.df))
        self.assertEqual((None, None, True), (r.ci_low, r.ci_high, r.unbounded))
        self.assertIn("interval unbounded", r.note)
        self.assertIn("not significantly different from 0", r.note)

    def test_relative_error_form(self):
        # SE = |R| sqrt((se_a/mean_a)^2 + (se_b/mean_b)^2): (1/3)^2 + (sqrt(1/3)/2)^2
        r = stats.ratio([2, 4], [1, 2, 3])
        self.assertAlmostEqual(1.5 * math.sqrt(1 / 9 + 1 / 12), r.se, places=12)

    def test_constant_candidate_inverts_the_baseline_interval(self):
        # v_a = 0: (a - rho b)^2 <= t^2 rho^2 v_b  <=>  a / rho in b -/+ t se_b, so
        # rho in [a / (b + t se_b), a / (b - t se_b)]; df = n_b - 1 = 2, t = 4.302653
        r = stats.ratio([3, 3, 3], [9, 10, 11])
        self.assertAlmostEqual(2.0, r.df, places=12)
        half = 4.302653 * math.sqrt(1 / 3)
        self.assertAlmostEqual(3 / (10 + half), r.ci_low, places=6)
        self.assertAlmostEqual(3 / (10 - half), r.ci_high, places=6)
        self.assertAlmostEqual(0.240305, r.ci_low, places=6)
        self.assertAlmostEqual(0.399156, r.ci_high, places=6)
        self.assertFalse(r.unbounded)
        self.assertIsNone(r.note)

    def test_constant_baseline_scales_the_candidate_interval(self):
        # v_b = 0: rho in (a -/+ t se_a) / b with df = n_a - 1
        r = stats.ratio([9, 10, 11], [4, 4])
        half = 4.302653 * math.sqrt(1 / 3)
        self.assertAlmostEqual((10 - half) / 4, r.ci_low, places=6)
        self.assertAlmostEqual((10 + half) / 4, r.ci_high, places=6)

    def test_constant_candidate_gives_table_df(self):
        # v_a = 0, so df = n_b - 1 = 2, t = 4.302653; SE = sqrt(0.1875) = 0.433013;
        # |mean_b| / se_b = 3.46 < 4.30: unbounded (the delta method said 1.5 -/+ 1.86).
        r = stats.ratio([3, 3, 3], [1, 2, 3])
        self.assertAlmostEqual(2.0, r.df, places=12)
        self.assertAlmostEqual(0.433013, r.se, places=6)
        self.assertTrue(r.unbounded)
        self.assertIsNone(r.ci_low)

    def test_accepts_summaries(self):
        self.assertEqual(stats.ratio([2, 4], [1, 2, 3]),
                         stats.ratio(stats.summary([2, 4]), stats.summary([1, 2, 3])))

    def test_zero_spread_both(self):
        r = stats.ratio([4, 4], [2, 2])
        self.assertEqual((2.0, 0.0, 2.0, 2.0, None, False, None, None), tuple(r))

    def test_zero_candidate_mean_still_has_uncertainty(self):
        r = stats.ratio([-1, 1], [2, 2, 2])
        self.assertEqual(0.0, r.ratio)
        # se_a^2 = 2 / 2 = 1 -> SE = 1 / 2
        self.assertAlmostEqual(0.5, r.se, places=12)
        # constant baseline: (0 -/+ t(0.975, 1) * 1) / 2; a negative value, no clipping
        self.assertAlmostEqual(-12.706205 / 2, r.ci_low, places=5)
        self.assertAlmostEqual(12.706205 / 2, r.ci_high, places=5)

    def test_constant_zero_candidate(self):
        r = stats.ratio([0, 0, 0], [9, 10, 11])
        self.assertEqual((0.0, 0.0, 0.0, 2.0), (r.ratio, r.ci_low, r.ci_high, r.df))

    def test_lower_bound_clipped_at_zero_for_non_negative_samples(self):
        # Numerator mean 5940 with SE 2020 at N=2: Fieller's lower root is negative
        # (-3.835), impossible for a ratio of non-negative means; clipped at 0.
        r = stats.ratio([3920, 7960], [4870, 5630])
        self.assertEqual(0.0, r.ci_low)
        self.assertIn("Fieller lower bound -3.835 clipped at 0", r.note)
        self.assertAlmostEqual(9.147757, r.ci_high, places=5)

    def test_never_negative_for_positive_samples(self):
        rng = random.Random(12)
        for _ in range(400):
            n_a, n_b = rng.randint(2, 6), rng.randint(2, 6)
            scale = rng.choice((0.01, 1.0, 5000.0))
            a = [scale * rng.lognormvariate(0, rng.choice((0.05, 0.5, 1.5)))
                 for _ in range(n_a)]
            b = [scale * rng.lognormvariate(0, rng.choice((0.05, 0.5, 1.5)))
                 for _ in range(n_b)]
            r = stats.ratio(a, b, rng.choice((0.8, 0.95, 0.99)))
            if r.unbounded:
                self.assertEqual((None, None), (r.ci_low, r.ci_high))
                continue
            self.assertGreaterEqual(r.ci_low, 0.0, (a, b))
            self.assertLessEqual(r.ci_low, r.ratio)
            self.assertGreaterEqual(r.ci_high, r.ratio)

    def test_zero_baseline(self):
        r = stats.ratio([1, 2], [0, 0])
        self.assertIsNone(r.ratio)
        self.assertIsNone(r.se)
        self.assertIn("baseline mean is 0", r.note)

    def test_empty_samples(self):
        r = stats.ratio([], [1, 2])
        self.assertIsNone(r.ratio)
        self.assertIn("no candidate samples", r.note)
        r = stats.ratio([1, 2], [])
        self.assertIn("no baseline samples", r.note)

    def test_single_samples(self):
        r = stats.ratio([3], [1, 2, 3])
        self.assertEqual(1.5, r.ratio)
        self.assertEqual((None, None, None, None), (r.se, r.ci_low, r.ci_high, r.df))
        self.assertIn("fewer than 2 candidate", r.note)
        r = stats.ratio([3, 4], [2])
        self.assertEqual(1.75, r.ratio)
        self.assertIn("fewer than 2 baseline", r.note)

    def test_bad_input_names_argument(self):
        e = self.assertRaises(ValueError, stats.ratio, [1, None], [1])
        self.assertIn("candidate[1]", str(e))
        e = self.assertRaises(ValueError, stats.ratio, [1], ["x"])
        self.assertIn("baseline[0]", str(e))


# -- reference values from scipy.stats ----------------------------------------

_RNG = random.Random(20)
# Real-looking samples: (name, candidate, baseline).
SAMPLES = (
    # N=2: sysbench memory write MiB/s, kvm and docker against native
    ("n2 memory write kvm", [3920.0, 7960.0], [4870.0, 5630.0]),
    ("n2 memory write docker", [5120.0, 5480.0], [4870.0, 5630.0]),
    # N=3: build seconds, docker against kvm
    ("n3 build", [2.1, 3.4, 2.9], [10.2, 12.1, 14.3]),
    # N=5: sysbench cpu events/s, kvm against native
    ("n5 cpu", [1118.3, 1122.9, 1109.4, 1125.1, 1119.8],
     [1203.4, 1198.7, 1210.2, 1201.9, 1205.5]),
    ("n3 vs n5", [1188.2, 1215.0, 1196.3], [1203.4, 1198.7, 1210.2, 1201.9, 1205.5]),
    # N=20: netperf TCP_STREAM Mbit/s (no ties), reboot seconds to 0.1 s (ties)
    ("n20 netperf", [round(_RNG.gauss(9400, 150), 1) for _ in range(20)],
     [round(_RNG.gauss(9250, 220), 1) for _ in range(20)]),
    ("n20 reboot ties", [round(_RNG.gauss(9.0, 0.4), 1) for _ in range(20)],
     [round(_RNG.gauss(9.3, 0.5), 1) for _ in range(20)]),
    ("n20 vs n5", [round(_RNG.gauss(1120, 6), 2) for _ in range(20)],
     [1203.4, 1198.7, 1210.2, 1201.9, 1205.5]),
    # above the exact limit: normal approximation without ties
    ("n60 vs n55", [_RNG.gauss(80.0, 4.0) for _ in range(60)],
     [_RNG.gauss(82.0, 4.0) for _ in range(55)]),
    # equal samples, zero variance, ties
    ("equal samples", [3.1, 3.4, 3.3], [3.1, 3.4, 3.3]),
    ("zero variance equal", [10.0] * 5, [10.0] * 5),
    ("zero variance one side", [10.0] * 3, [10.5, 10.7, 10.2]),
    ("ties", [1.2, 1.3, 1.3, 1.5], [1.3, 1.4, 1.4, 1.6, 1.2]),
)


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


class TestTDistributionAgainstScipy(testtools.TestCase):

    DFS = (1, 1.5, 2, 2.39, 3.7, 5, 19, 38.2, 999, 1000.5, 5000)

    def test_cdf(self):
        for df in self.DFS:
            for t in (-60, -12.7, -5, -2.1, -0.3, -1e-4, 0, 1e-6, 0.7, 2.0, 4.3, 12.7, 60):
                # df=1 is the Cauchy distribution: scipy's t.cdf is off there by up
                # to 1.4e-11 near t=0, its cauchy.cdf is exact (0.5 + atan(t)/pi).
                dist = sps.cauchy() if df == 1 else sps.t(df)
                ref = dist.cdf(t)
                got = stats.t_cdf(t, df)
                msg = "t=%r df=%r: %r vs scipy %r" % (t, df, got, ref)
                self.assertLess(abs(got - ref), 1e-12, msg)
                # each tail relative to itself: far tails keep their precision
                if t <= 0:
                    self.assertLess(_rel(got, ref), 1e-10, msg)
                else:
                    self.assertLess(_rel(stats.t_sf(t, df), dist.sf(t)), 1e-10, msg)
        self.assertEqual(sps.norm.cdf(1.5), stats.t_cdf(1.5, float("inf")))
        self.assertEqual((0.0, 1.0), (stats.t_cdf(-math.inf, 3), stats.t_cdf(math.inf, 3)))

    def test_small_t_at_large_df_keeps_its_digits(self):
        # 1 - df / (df + t^2) cancelled: the tail was off by 1e-8 relative here.
        self.assertLess(_rel(stats.t_sf(0.0012536, 999), sps.t.sf(0.0012536, 999)), 1e-14)

    def test_quantile(self):
        for df in self.DFS:
            for p in (0.001, 0.025, 0.05, 0.4, 0.5005, 0.6, 0.9, 0.95, 0.975, 0.995,
                      0.9995):
                ref = sps.t.ppf(p, df)
                self.assertLess(_rel(stats.t_quantile(p, df), ref), 1e-11,
                                "p=%r df=%r" % (p, df))

    def test_bad_arguments(self):
        self.assertRaises(ValueError, stats.t_cdf, float("nan"), 3)
        self.assertRaises(ValueError, stats.t_cdf, 1.0, 0)


class TestWelchAgainstScipy(testtools.TestCase):

    def test_samples(self):
        for name, a, b in SAMPLES:
            got = stats.welch_test(a, b)
            ref = sps.ttest_ind(a, b, equal_var=False)
            self.assertEqual(stats.WELCH, got.test)
            if math.isnan(ref.pvalue):
                self.assertIsNone(got.p, name)
                self.assertIn("constant and equal", got.note)
                continue
            self.assertLess(abs(got.p - ref.pvalue), 1e-12, name)
            self.assertLess(_rel(got.p, ref.pvalue), 1e-9, name)
            self.assertLess(_rel(got.statistic, ref.statistic), 1e-12, name)
            self.assertLess(_rel(got.df, ref.df), 1e-12, name)

    def test_equal_samples_give_p_one(self):
        self.assertEqual(1.0, stats.welch_test([3.1, 3.4, 3.3], [3.1, 3.4, 3.3]).p)

    def test_constant_samples_that_differ(self):
        got = stats.welch_test([4.0, 4.0], [5.0, 5.0])
        ref = sps.ttest_ind([4.0, 4.0], [5.0, 5.0], equal_var=False)
        self.assertEqual((ref.pvalue, ref.statistic), (got.p, got.statistic))

    def test_summaries_and_too_few(self):
        a, b = SAMPLES[3][1:]
        self.assertEqual(stats.welch_test(a, b),
                         stats.welch_test(stats.summary(a), stats.summary(b)))
        got = stats.welch_test([1.0], [1.0, 2.0])
        self.assertIsNone(got.p)
        self.assertIn("fewer than 2 candidate", got.note)


def _u_statistic(x, y, axis=-1):
    return sps.mannwhitneyu(x, y, axis=axis, method="asymptotic").statistic


def _permutation_u(a, b):
    """scipy's exact permutation p of U (every labelling), two-sided."""
    import numpy
    return sps.permutation_test((a, b), _u_statistic, permutation_type="independent",
                                n_resamples=numpy.inf, alternative="two-sided",
                                vectorized=True).pvalue


class TestMannWhitneyAgainstScipy(testtools.TestCase):

    def test_samples(self):
        methods = {}
        for name, a, b in SAMPLES:
            got = stats.mann_whitney(a, b)
            ties = len(set(a + b)) < len(a + b)
            exact = not ties and len(a) <= 50 and len(b) <= 50
            exact_ties = ties and len(a) <= 25 and len(b) <= 25
            self.assertEqual(stats.MWU_EXACT if exact or exact_ties else stats.MWU_NORMAL,
                             got.test, name)
            methods[name] = got.test
            if exact_ties and math.comb(len(a) + len(b), len(a)) > 10 ** 5:
                # too many labellings for scipy's enumeration: the exact p is close
                # to the tie-corrected normal approximation's at this size
                approx = sps.mannwhitneyu(a, b, method="asymptotic").pvalue
                self.assertLess(abs(got.p - approx), 0.01, name)
                continue
            if exact_ties:
                ref = _permutation_u(a, b)
            else:
                ref = sps.mannwhitneyu(a, b, alternative="two-sided",
                                       method="exact" if exact else "asymptotic").pvalue
            self.assertEqual(sps.mannwhitneyu(a, b).statistic, got.statistic, name)
            self.assertLess(abs(got.p - ref), 1e-12, name)
            self.assertLess(_rel(got.p, ref), 1e-9, name)
            if not ties:
                self.assertEqual(min(1.0, 2 / math.comb(len(a) + len(b), len(a))),
                                 got.min_p)
        # the data cover every branch at every size asked for
        self.assertEqual(stats.MWU_EXACT, methods["n2 memory write kvm"])
        self.assertEqual(stats.MWU_EXACT, methods["n20 netperf"])
        self.assertEqual(stats.MWU_EXACT, methods["n20 reboot ties"])
        self.assertEqual(stats.MWU_NORMAL, methods["n60 vs n55"])
        self.assertEqual(stats.MWU_EXACT, methods["zero variance equal"])

    def test_exact_with_ties_against_scipy_permutation_test(self):
        # the example: the normal approximation said 0.047, the exact p is 0.1
        got = stats.mann_whitney([1, 1, 1], [5, 5, 5])
        self.assertEqual((stats.MWU_EXACT, 0.1, 0.1), (got.test, got.p, got.min_p))
        self.assertAlmostEqual(_permutation_u([1, 1, 1], [5, 5, 5]), got.p, places=12)
        rng = random.Random(9)
        for _ in range(25):
            a = [float(rng.randint(1, 5)) for _ in range(rng.randint(2, 7))]
            b = [float(rng.randint(2, 6)) for _ in range(rng.randint(2, 7))]
            self.assertAlmostEqual(_permutation_u(a, b), stats.mann_whitney(a, b).p,
                                   places=12, msg=(a, b))
        # above 25 per side with ties: the normal approximation, as scipy's asymptotic
        a = [float(i % 7) for i in range(26)]
        b = [float(i % 5) for i in range(30)]
        got = stats.mann_whitney(a, b)
        self.assertEqual(stats.MWU_NORMAL, got.test)
        self.assertAlmostEqual(sps.mannwhitneyu(a, b, method="asymptotic").pvalue, got.p,
                               places=12)

    def test_exact_against_scipy_on_random_small_samples(self):
        rng = random.Random(5)
        for _ in range(60):
            a = [rng.uniform(0, 100) for _ in range(rng.randint(1, 12))]
            b = [rng.uniform(0, 100) for _ in range(rng.randint(1, 12))]
            ref = sps.mannwhitneyu(a, b, alternative="two-sided", method="exact")
            self.assertLess(abs(stats.mann_whitney(a, b).p - ref.pvalue), 1e-12)

    def test_smallest_possible_p(self):
        # complete separation gives the smallest p the sizes allow
        for n_a, n_b, expected in ((2, 2, 1 / 3), (3, 3, 0.1), (3, 4, 2 / 35),
                                   (4, 4, 2 / 70), (3, 5, 2 / 56), (2, 8, 2 / 45)):
            a = [float(i) for i in range(n_a)]
            b = [float(n_a + i) for i in range(n_b)]
            got = stats.mann_whitney(a, b)
            ref = sps.mannwhitneyu(a, b, alternative="two-sided", method="exact")
            self.assertAlmostEqual(expected, got.min_p, places=15)
            self.assertAlmostEqual(ref.pvalue, got.p, places=15)
            self.assertEqual(got.min_p, got.p)

    def test_no_samples(self):
        got = stats.mann_whitney([], [1.0])
        self.assertIsNone(got.p)
        self.assertIn("no candidate samples", got.note)

    def test_presorted_gives_the_same(self):
        a, b = SAMPLES[6][1:]
        self.assertEqual(stats.mann_whitney(a, b),
                         stats.mann_whitney(sorted(a), sorted(b), presorted=True))


class TestFiellerAgainstScipy(testtools.TestCase):
    """Fieller's bounds from the textbook formula with scipy's t quantile."""

    @staticmethod
    def reference(a, b, confidence):
        n_a, n_b = len(a), len(b)
        m_a, m_b = sum(a) / n_a, sum(b) / n_b
        v_a = sps.tvar(a) / n_a
        v_b = sps.tvar(b) / n_b
        r = m_a / m_b
        w_a, w_b = v_a, r * r * v_b
        df = (w_a + w_b) ** 2 / ((w_a ** 2 / (n_a - 1) if w_a else 0)
                                 + (w_b ** 2 / (n_b - 1) if w_b else 0))
        t = sps.t.ppf(0.5 + confidence / 2, df)
        big_a = m_b ** 2 - t ** 2 * v_b
        big_b = m_a * m_b
        big_c = m_a ** 2 - t ** 2 * v_a
        if big_a <= 0:
            return df, None
        disc = math.sqrt(big_b ** 2 - big_a * big_c)
        return df, ((big_b - disc) / big_a, (big_b + disc) / big_a)

    def test_samples(self):
        checked = unbounded = clipped = 0
        for name, a, b in SAMPLES:
            if name.startswith("zero variance"):
                continue
            for confidence in (0.9, 0.95, 0.99):
                got = stats.ratio(a, b, confidence)
                df, bounds = self.reference(a, b, confidence)
                self.assertLess(_rel(got.df, df), 1e-12, name)
                if bounds is None:
                    self.assertTrue(got.unbounded, name)
                    self.assertEqual((None, None), (got.ci_low, got.ci_high))
                    unbounded += 1
                    continue
                lo, hi = bounds
                self.assertLess(_rel(got.ci_high, hi), 1e-9, (name, confidence))
                if lo < 0:
                    self.assertEqual(0.0, got.ci_low, name)
                    clipped += 1
                else:
                    self.assertLess(_rel(got.ci_low, lo), 1e-9, (name, confidence))
                checked += 1
        self.assertGreater(checked, 20)
        self.assertGreater(unbounded, 0)
        self.assertGreater(clipped, 0)

    def test_n2_memory_write(self):
        # Was x1.131 [-2.986, 5.249] by the delta method.
        got = stats.ratio([3920.0, 7960.0], [4870.0, 5630.0])
        df, (lo, hi) = self.reference([3920.0, 7960.0], [4870.0, 5630.0], 0.95)
        self.assertLess(lo, 0)
        self.assertEqual((0.0, False), (got.ci_low, got.unbounded))
        self.assertAlmostEqual(hi, got.ci_high, places=9)

    def test_zero_variance(self):
        got = stats.ratio([10.0] * 5, [10.0] * 5)
        self.assertEqual((1.0, 1.0, 1.0), (got.ratio, got.ci_low, got.ci_high))
        # only the baseline varies: the reference with v_a = 0
        got = stats.ratio([10.0] * 3, [10.5, 10.7, 10.2])
        df, (lo, hi) = self.reference([10.0] * 3, [10.5, 10.7, 10.2], 0.95)
        self.assertAlmostEqual(2.0, df, places=12)
        self.assertLess(_rel(got.ci_low, lo), 1e-9)
        self.assertLess(_rel(got.ci_high, hi), 1e-9)


class TestHolm(testtools.TestCase):

    def test_by_hand(self):
        # sorted 0.005 0.01 0.03 0.04 (m = 4): x4 = 0.02, x3 = 0.03, x2 = 0.06, x1 = 0.04
        # -> running max 0.06
        got = stats.holm([0.01, 0.04, None, 0.03, 0.005])
        self.assertIsNone(got[2])
        for expected, value in zip((0.03, 0.06, 0.06, 0.02), got[:2] + got[3:]):
            self.assertAlmostEqual(expected, value, places=15)

    def test_capped_at_one_and_ties(self):
        self.assertEqual([1.0, 1.0], stats.holm([0.6, 0.7]))
        self.assertEqual([0.04, 0.04], stats.holm([0.02, 0.02]))
        self.assertEqual([], stats.holm([]))
        self.assertEqual([None], stats.holm([None]))

    def test_never_below_raw_and_monotone(self):
        rng = random.Random(9)
        ps = [rng.random() ** 3 for _ in range(40)]
        adjusted = stats.holm(ps)
        for p, q in zip(ps, adjusted):
            self.assertGreaterEqual(q, p)
        pairs = sorted(zip(ps, adjusted))
        self.assertEqual([q for _, q in pairs], sorted(q for _, q in pairs))


def _interval_reference(values, percent, confidence):
    """scipy's order-statistic interval of the quantile: (low, high), None for NaN."""
    ci = sps.quantile_test(values, p=percent / 100.0).confidence_interval(confidence)
    return tuple(None if math.isnan(v) else float(v) for v in (ci.low, ci.high))


class TestQuantileInterval(testtools.TestCase):

    def test_binomial_cdf_exact(self):
        # against the exact sum of C(n, i) p^i (1 - p)^(n - i), in fractions
        for n in (1, 2, 7, 20, 60):
            for p in (fractions.Fraction(1, 2), fractions.Fraction(95, 100),
                      fractions.Fraction(99, 100), fractions.Fraction(3, 10)):
                total = fractions.Fraction(0)
                for k in range(n):
                    total += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
                    got = stats.binom_cdf(k, n, float(p))
                    self.assertLess(_rel(got, float(total)), 1e-12, (k, n, p))
        self.assertEqual((0.0, 1.0), (stats.binom_cdf(-1, 5, 0.3), stats.binom_cdf(5, 5, 0.3)))
        # large n: the incomplete beta's lgamma prefactor keeps ~1e-11 relative
        for n, k, p in ((2700, 2540, 0.95), (368, 360, 0.99), (100000, 49700, 0.5)):
            self.assertLess(_rel(stats.binom_cdf(k, n, p), sps.binom.cdf(k, n, p)), 1e-9)
        for args in ((1.5, 3, 0.5), (1, -1, 0.5), (1, 3, 1.5), (True, 3, 0.5)):
            self.assertRaises(ValueError, stats.binom_cdf, *args)

    def test_median_of_ten(self):
        # Conover's table: n = 10, 95 %: [x(2), x(9)], coverage 1 - 2 * 11/1024
        got = stats.quantile_interval(list(range(10, 0, -1)), 50)
        self.assertEqual((2, 9, 2, 9), (got.low, got.high, got.low_rank, got.high_rank))
        self.assertEqual(1 - 22 / 1024, got.coverage)
        self.assertEqual((10, 50), (got.n, got.percent))

    def test_high_quantiles_of_eight_have_a_lower_bound_only(self):
        # B ~ Binomial(8, 0.95): P(B <= 5) = 0.0058, P(B <= 6) = 0.0572 -> rank 6;
        # Binomial(8, 0.99): P(B <= 6) = 0.0027, P(B <= 7) = 0.0773 -> rank 7;
        # no upper bound: 0.95^8 = 0.66 > 0.025
        values = [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]
        p95 = stats.quantile_interval(values, 95)
        self.assertEqual((5.0, None, 6, None),
                         (p95.low, p95.high, p95.low_rank, p95.high_rank))
        self.assertAlmostEqual(1 - stats.binom_cdf(5, 8, 0.95), p95.coverage, places=15)
        p99 = stats.quantile_interval(values, 99)
        self.assertEqual((6.0, None), (p99.low, p99.high))

    def test_fewest_samples_for_each_bound(self):
        self.assertEqual((6, 6), stats.quantile_min_n(50))
        self.assertEqual((2, 72), stats.quantile_min_n(95))
        self.assertEqual((1, 368), stats.quantile_min_n(99))
        self.assertEqual((1, 299), stats.quantile_min_n(99, 0.90))
        # exactly where the bound appears: q^n <= alpha/2 from n on
        for percent, (n_low, n_high) in ((50, (6, 6)), (95, (2, 72)), (99, (1, 368))):
            q = percent / 100.0
            self.assertLessEqual(q ** n_high, 0.025)
            self.assertGreater(q ** (n_high - 1), 0.025)
            values = [float(i) for i in range(n_high)]
            self.assertIsNotNone(stats.quantile_interval(values, percent).high)
            self.assertIsNone(stats.quantile_interval(values[1:], percent).high)
            self.assertIsNotNone(stats.quantile_interval(values[:n_low], percent).low)
            if n_low > 1:
                self.assertIsNone(stats.quantile_interval(values[:n_low - 1], percent).low)

    def test_against_scipy(self):
        rng = random.Random(15)
        sizes = (1, 2, 5, 6, 7, 10, 20, 71, 72, 100, 367, 368, 369, 500, 2700)
        for n in sizes + tuple(rng.randint(1, 3000) for _ in range(20)):
            values = [rng.lognormvariate(1, 0.5) for _ in range(n)]
            for percent in stats.INTERVAL_PERCENTILES:
                for confidence in (0.9, 0.95, 0.99):
                    got = stats.quantile_interval(values, percent, confidence)
                    self.assertEqual(_interval_reference(values, percent, confidence),
                                     (got.low, got.high), (n, percent, confidence))

    def test_coverage_by_simulation(self):
        # 4000 samples of 20 from a continuous distribution: the median interval
        # [x(6), x(15)] covers the true median 0 as often as its coverage says:
        # 1 - 2 P(B <= 5) = 1 - 2 (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20
        rng = random.Random(4)
        got = stats.quantile_interval([0.0] * 20, 50)
        self.assertEqual((6, 15), (got.low_rank, got.high_rank))
        self.assertAlmostEqual(1 - 2 * 21700 / 2 ** 20, got.coverage, places=14)
        hits = 0
        for _ in range(4000):
            sample = sorted(rng.gauss(0, 1) for _ in range(20))
            hits += sample[5] <= 0 <= sample[14]
        self.assertLess(abs(hits / 4000 - got.coverage), 0.012)

    def test_coverage_is_at_least_the_confidence(self):
        for n in (6, 9, 30, 72, 368, 1000):
            for percent in stats.INTERVAL_PERCENTILES:
                got = stats.quantile_interval(list(range(n)), percent)
                if got.low is not None and got.high is not None:
                    self.assertGreaterEqual(got.coverage, 0.95, (n, percent))

    def test_ties_presorted_and_empty(self):
        values = [2.0, 1.0, 2.0, 2.0, 3.0, 2.0, 2.0]
        self.assertEqual((1.0, 3.0), stats.quantile_interval(values, 50)[2:4])
        self.assertEqual(stats.quantile_interval(values, 50),
                         stats.quantile_interval(sorted(values), 50, presorted=True))
        self.assertEqual(stats.QuantileInterval(95, 0, None, None, None, None, None),
                         stats.quantile_interval([], 95))
        one = stats.quantile_interval([4.0], 99)
        # P(B <= 0) = 0.01: one sample is a lower bound of p99 (at 97.5 % on its own)
        self.assertEqual((4.0, None, 0.99), (one.low, one.high, one.coverage))

    def test_bad_arguments(self):
        for percent in (0, 100, -5, True, "95"):
            self.assertRaises(ValueError, stats.quantile_interval, [1.0, 2.0], percent)
            self.assertRaises(ValueError, stats.quantile_min_n, percent)
        self.assertRaises(ValueError, stats.quantile_interval, [1.0], 50, 1.0)
        self.assertRaises(ValueError, stats.quantile_interval, [1.0, None], 50)
