"""Unit tests of rally_vmct.workloads.stats against hand-computed values."""

import math
import random

from rally.task.processing import utils as rally_utils
import testtools

from rally_vmct.workloads import stats

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

    def test_constant_sample(self):
        s = stats.summary([4, 4, 4])
        self.assertEqual((0.0, 0.0, 4.0, 4.0), (s.sd, s.cv, s.ci_low, s.ci_high))

    def test_as_dict(self):
        d = stats.summary([1, 3])._asdict()
        self.assertEqual(2.0, d["mean"])
        self.assertEqual(set(stats.Summary._fields), set(d))


class TestRatio(testtools.TestCase):

    def test_delta_method_by_hand(self):
        # candidate [2, 4]: mean 3, sd^2 2, se_a^2 = 1
        # baseline [1, 2, 3]: mean 2, sd^2 1, se_b^2 = 1/3
        # R = 1.5; v_a = 1/4; v_b = 2.25 * (1/3) / 4 = 0.1875
        # SE = sqrt(0.4375); df = 0.4375^2 / (0.25^2 / 1 + 0.1875^2 / 2) = 2.390244
        r = stats.ratio([2, 4], [1, 2, 3])
        self.assertEqual(1.5, r.ratio)
        self.assertAlmostEqual(math.sqrt(0.4375), r.se, places=12)
        self.assertAlmostEqual(0.19140625 / 0.080078125, r.df, places=12)
        half = stats.t_quantile(0.975, r.df) * r.se
        self.assertAlmostEqual(1.5 - half, r.ci_low, places=12)
        self.assertAlmostEqual(1.5 + half, r.ci_high, places=12)
        self.assertIsNone(r.note)

    def test_relative_error_form(self):
        # SE = |R| sqrt((se_a/mean_a)^2 + (se_b/mean_b)^2): (1/3)^2 + (sqrt(1/3)/2)^2
        r = stats.ratio([2, 4], [1, 2, 3])
        self.assertAlmostEqual(1.5 * math.sqrt(1 / 9 + 1 / 12), r.se, places=12)

    def test_constant_candidate_gives_table_df(self):
        # v_a = 0, so df = n_b - 1 = 2, t = 4.302653; SE = sqrt(0.1875) = 0.433013
        r = stats.ratio([3, 3, 3], [1, 2, 3])
        self.assertAlmostEqual(2.0, r.df, places=12)
        self.assertAlmostEqual(0.433013, r.se, places=6)
        self.assertAlmostEqual(1.5 - 4.302653 * 0.4330127, r.ci_low, places=5)
        self.assertAlmostEqual(1.5 + 4.302653 * 0.4330127, r.ci_high, places=5)

    def test_accepts_summaries(self):
        self.assertEqual(stats.ratio([2, 4], [1, 2, 3]),
                         stats.ratio(stats.summary([2, 4]), stats.summary([1, 2, 3])))

    def test_zero_spread_both(self):
        r = stats.ratio([4, 4], [2, 2])
        self.assertEqual((2.0, 0.0, 2.0, 2.0, None, None), tuple(r))

    def test_zero_candidate_mean_still_has_uncertainty(self):
        r = stats.ratio([-1, 1], [2, 2, 2])
        self.assertEqual(0.0, r.ratio)
        # se_a^2 = 2 / 2 = 1 -> SE = 1 / 2
        self.assertAlmostEqual(0.5, r.se, places=12)

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
