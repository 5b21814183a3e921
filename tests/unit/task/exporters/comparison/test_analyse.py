"""Grouping and statistics of the comparison exporter, on hand-built task results."""

import math
import random
import statistics

import testtools

from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import labels
from rally_vmct.task import output
from rally_vmct import inference
from rally_vmct import stats
from tests.unit.task.exporters.comparison import sample_results as sr

BOOT = "VMCT.boot_and_delete_server"


def _lifecycle(kind, builds, nets=None, concurrency=2):
    its = []
    for i, build in enumerate(builds):
        actions = [sr.action("vmct.build", build, 0.0,
                             [sr.action("nova.boot_server", build - 1, 0.5)])]
        if nets:
            actions.append(sr.action("vmct.wait_for_network", nets[i], build))
        its.append(sr.iteration(actions))
    return sr.workload(BOOT, kind, its, concurrency)


def _row(data, kind, concurrency, name, source=labels.SOURCE_ATOMIC):
    rows = [r for r in data["groups"] if r["kind"] == kind
            and r["concurrency"] == concurrency and r["metric"] == name
            and r["source"] == source]
    assert len(rows) == 1, (kind, concurrency, name, rows)
    return rows[0]


class TestGrouping(testtools.TestCase):

    def setUp(self):
        super(TestGrouping, self).setUp()
        self.data = analyse.compare([sr.task(
            _lifecycle("kvm", [10, 12, 14], [2, 3, 4]),
            _lifecycle("docker", [2, 3, 4], [1, 1, 1]))])

    def test_kinds_and_default_baseline_without_native(self):
        self.assertEqual("kvm", self.data["baseline"])
        self.assertEqual(["kvm", "docker"], self.data["kinds"])
        self.assertEqual([2], self.data["concurrencies"])

    def test_statistics_by_hand(self):
        r = _row(self.data, "kvm", 2, "vmct.build")
        self.assertEqual((3, 0, 12.0, 2.0), (r["n"], r["failures"], r["mean"], r["sd"]))
        self.assertAlmostEqual(2 / 12, r["cv"], places=12)
        self.assertEqual((10, 12, 14), (r["min"], r["p50"], r["max"]))
        self.assertAlmostEqual(13.6, r["p90"], places=12)     # k = 1.8: 12*.2 + 14*.8
        self.assertAlmostEqual(13.8, r["p95"], places=12)     # k = 1.9
        self.assertAlmostEqual(13.96, r["p99"], places=12)    # k = 1.98
        # t(0.975, 2) = 4.302653; half = 4.302653 * 2 / sqrt(3) = 4.968275
        self.assertAlmostEqual(12 - 4.968275, r["ci_low"], places=5)
        self.assertAlmostEqual(12 + 4.968275, r["ci_high"], places=5)
        self.assertEqual("s", r["unit"])
        self.assertEqual("vmct.build [s]", r["label"])

    def test_nested_child_is_a_metric(self):
        r = _row(self.data, "kvm", 2, "nova.boot_server")
        self.assertEqual((3, 11.0), (r["n"], r["mean"]))

    def test_ratio_to_baseline_by_hand(self):
        r = _row(self.data, "docker", 2, "vmct.build")
        # docker [2, 3, 4] / kvm [10, 12, 14]: the ratio of geometric means
        # (24 / 1680) ** (1/3), Hsu df = min(3, 3) - 1 = 2
        self.assertAlmostEqual((24 / 1680) ** (1 / 3), r["ratio"], places=12)
        self.assertEqual((inference.RULE_LOG, 2.0, 0.95),
                         (r["rule"], r["ratio_df"], r["level"]))
        self.assertEqual(("kvm", 2), (r["baseline_kind"], r["baseline_concurrency"]))
        base = _row(self.data, "kvm", 2, "vmct.build")
        self.assertIsNone(base["ratio"])
        self.assertEqual("baseline", base["ratio_note"])

    def test_log_interval_by_hand(self):
        # se = sqrt(var(log docker) / 3 + var(log kvm) / 3), exp(d -/+ t(0.975, 2) se)
        r = _row(self.data, "docker", 2, "vmct.build")
        la = [math.log(v) for v in (2, 3, 4)]
        lb = [math.log(v) for v in (10, 12, 14)]
        d = sum(la) / 3 - sum(lb) / 3
        se = math.sqrt(statistics.variance(la) / 3 + statistics.variance(lb) / 3)
        t = 4.302652729911275                      # scipy.stats.t.ppf(0.975, 2)
        self.assertAlmostEqual(se, r["ratio_se"], places=12)
        self.assertAlmostEqual(math.exp(d - t * se), r["ratio_ci_low"], places=10)
        self.assertAlmostEqual(math.exp(d + t * se), r["ratio_ci_high"], places=10)
        self.assertFalse(r["ratio_ci_unbounded"])
        self.assertAlmostEqual(sum(la) / 3, r["log_mean"], places=12)

    def test_verdict_and_interval_agree_at_n3(self):
        r = _row(self.data, "docker", 2, "vmct.build")
        # the interval excludes 1: significant at 0.05, uncorrected, whatever the
        # rank test could reach at 3 vs 3
        self.assertLess(r["ratio_ci_high"], 1)
        self.assertTrue(r["significant"])
        self.assertLess(r["p_value"], 0.05)
        d = math.log(r["ratio"])
        self.assertAlmostEqual(2 * stats.t_sf(abs(d) / r["ratio_se"], 2), r["p_value"],
                               places=12)
        # Mann-Whitney U is a robustness note: 3 vs 3 separated, p = 0.1 at best
        self.assertEqual((stats.MWU_EXACT, 0.1, 0.1),
                         (r["mwu_test"], r["mwu_p_value"], r["mwu_p_min"]))
        base = _row(self.data, "kvm", 2, "vmct.build")
        self.assertEqual((None, None, False), (base["rule"], base["p_value"],
                                               base["significant"]))

    def test_ties_use_the_exact_permutation_distribution(self):
        # docker [1, 1, 1] vs kvm [2, 3, 4]: separated, P(U = 0) = 1/20, two-sided 0.1
        r = _row(self.data, "docker", 2, "vmct.wait_for_network")
        self.assertEqual(stats.MWU_EXACT, r["mwu_test"])
        self.assertAlmostEqual(0.1, r["mwu_p_value"], places=14)
        self.assertIn("ties", r["mwu_note"])

    def test_exploratory_cells_uncorrected_with_expected_false_marks(self):
        self.assertEqual({"rule": "welch-t-log-hsu", "rule_without_log": "fieller-hsu",
                          "df": "hsu", "correction": "none", "alpha": 0.05,
                          "comparisons": 4, "expected_false_marks": 0.05 * 4,
                          "comparisons_over_runs": 0, "runs": 1,
                          "rule_over_runs": "welch-t-log-runs",
                          "seed_correction": "holm", "equivalence": "tost",
                          "power": 0.8, "robustness_test": "mann-whitney-u",
                          "robustness_exact_limit": 50, "robustness_exact_ties_limit": 25,
                          "high_cv": 0.1, "quantile_interval": "order-statistic",
                          "quantile_interval_min_n": {
                              "p50": {"low": 6, "high": 6}, "p95": {"low": 2, "high": 72},
                              "p99": {"low": 1, "high": 368}}}, self.data["methods"])
        self.assertEqual(7, self.data["format_version"])

    def test_cv_flag(self):
        self.assertTrue(_row(self.data, "kvm", 2, "vmct.build")["cv_high"])   # 2/12
        self.assertFalse(_row(self.data, "docker", 2, "vmct.wait_for_network")["cv_high"])
        w = sr.workload(BOOT, "kvm", [sr.iteration([sr.action("vmct.build", 10.0)])])
        self.assertIsNone(_row(analyse.compare([sr.task(w)]), "kvm", 1, "vmct.build")["cv_high"])

    def test_constant_metric_ratio_has_zero_spread_candidate(self):
        r = _row(self.data, "docker", 2, "vmct.wait_for_network")
        # docker [1, 1, 1] vs kvm [2, 3, 4]: only the baseline varies; Hsu df 2
        self.assertAlmostEqual(24 ** (-1 / 3), r["ratio"], places=12)
        self.assertAlmostEqual(2.0, r["ratio_df"], places=12)

    def test_iteration_duration_metric(self):
        r = _row(self.data, "kvm", 2, BOOT, labels.SOURCE_ITERATION)
        # duration = sum of top-level and nested actions of each iteration
        self.assertEqual(3, r["n"])
        self.assertEqual("iteration duration of %s [s]" % BOOT, r["label"])

    def test_metric_order_atomic_then_charts_then_iterations(self):
        shown = [m["label"] for m in self.data["metrics"]]
        self.assertEqual(["vmct.build [s]", "nova.boot_server [s]",
                          "vmct.wait_for_network [s]",
                          "iteration duration of %s [s]" % BOOT], shown)


class TestBaseline(testtools.TestCase):

    def _tasks(self):
        native = sr.workload("VMCT.native_benchmark", None, [
            sr.iteration(charts=[output.stats_chart("native", "sysbench cpu", "events/s",
                                                    [("events_per_second", v)])])
            for v in (100.0, 110.0)], concurrency=1)
        kvm = sr.workload("VMCT.boot_and_benchmark", "kvm", [
            sr.iteration([sr.action("vmct.build", b)],
                         [output.stats_chart("kvm", "sysbench cpu", "events/s",
                                             [("events_per_second", v)])])
            for b, v in ((5.0, 90.0), (7.0, 94.0))], concurrency=1)
        docker = sr.workload("VMCT.boot_and_benchmark", "docker", [
            sr.iteration([sr.action("vmct.build", b)],
                         [output.stats_chart("docker", "sysbench cpu", "events/s",
                                             [("events_per_second", v)])])
            for b, v in ((1.0, 104.0), (2.0, 106.0))], concurrency=4)
        return [sr.task(kvm, docker, native)]

    def test_native_is_default_baseline(self):
        data = analyse.compare(self._tasks())
        self.assertEqual("native", data["baseline"])
        self.assertEqual(["native", "kvm", "docker"], data["kinds"])
        r = _row(data, "kvm", 1, "events_per_second", labels.SOURCE_CHART)
        self.assertAlmostEqual(math.sqrt(90 * 94 / 11000), r["ratio"], places=12)
        self.assertEqual("native", r["baseline_kind"])

    def test_nearest_baseline_concurrency_is_marked(self):
        data = analyse.compare(self._tasks())
        r = _row(data, "docker", 4, "events_per_second", labels.SOURCE_CHART)
        self.assertAlmostEqual(math.sqrt(104 * 106 / 11000), r["ratio"], places=12)
        self.assertEqual(("native", 1), (r["baseline_kind"], r["baseline_concurrency"]))

    def test_metric_native_lacks_uses_first_kind_having_it(self):
        data = analyse.compare(self._tasks())
        r = _row(data, "docker", 4, "vmct.build")
        self.assertEqual(("kvm", 1), (r["baseline_kind"], r["baseline_concurrency"]))
        self.assertAlmostEqual(math.sqrt(2 / 35), r["ratio"], places=12)
        build = [m for m in data["metrics"] if m["metric"] == "vmct.build"][0]
        self.assertEqual("kvm", build["baseline_kind"])

    def test_explicit_baseline(self):
        data = analyse.compare(self._tasks(), baseline="docker")
        # the baseline first, then the kinds in the order first seen
        self.assertEqual(["docker", "kvm", "native"], data["kinds"])
        r = _row(data, "kvm", 1, "vmct.build")
        self.assertEqual(("docker", 4), (r["baseline_kind"], r["baseline_concurrency"]))
        self.assertAlmostEqual(math.sqrt(35 / 2), r["ratio"], places=12)

    def test_unknown_baseline_names_the_kinds(self):
        e = self.assertRaises(analyse.ComparisonError, analyse.compare, self._tasks(),
                              baseline="xen")
        self.assertIn("'xen'", str(e))
        self.assertIn("kinds found: kvm, docker, native", str(e))

    def test_confidence_level(self):
        data = analyse.compare(self._tasks(), confidence=0.9)
        r = _row(data, "native", 1, "events_per_second", labels.SOURCE_CHART)
        # mean 105, sd sqrt(50), n 2: t(0.95, 1) = 6.313752
        self.assertAlmostEqual(6.313752 * math.sqrt(50) / math.sqrt(2),
                               105 - r["ci_low"], places=4)
        self.assertEqual(0.9, data["confidence"])

    def test_zero_baseline_gives_none_with_note(self):
        zero = sr.workload("VMCT.x", "a", [sr.iteration([sr.action("vmct.x", 0.0)])] * 2)
        other = sr.workload("VMCT.x", "b", [sr.iteration([sr.action("vmct.x", 1.0)])] * 2)
        data = analyse.compare([sr.task(zero, other)])
        r = _row(data, "b", 1, "vmct.x")
        self.assertIsNone(r["ratio"])
        self.assertIn("baseline mean is 0", r["ratio_note"])


class TestSignificance(testtools.TestCase):

    KVM = [10.1, 10.5, 11.2, 10.8, 10.3, 11.0, 10.7, 10.9]
    DOCKER = [3.1, 2.9, 3.4, 3.0, 3.3, 2.8, 3.2, 3.5]

    def setUp(self):
        super(TestSignificance, self).setUp()

        def builds(kind, values):
            return sr.workload(BOOT, kind, [sr.iteration([sr.action("vmct.build", v)])
                                            for v in values], 1)

        self.data = analyse.compare([sr.task(builds("kvm", self.KVM),
                                             builds("docker", self.DOCKER),
                                             builds("lxc", [3.0, 3.2]))])

    def test_separated_samples_of_eight_are_significant(self):
        r = _row(self.data, "docker", 1, "vmct.build")
        self.assertTrue(r["significant"])
        self.assertLess(r["ratio_ci_high"], 1)
        self.assertEqual(7.0, r["ratio_df"])
        self.assertAlmostEqual(2 / math.comb(16, 8), r["mwu_p_value"], places=15)

    def test_two_values_can_be_significant(self):
        # lxc [3.0, 3.2] vs kvm: Hsu df 1 (t = 12.7) and still an interval far from 1;
        # the rank test's smallest p at 2 vs 8 (0.044) does not matter to the verdict
        r = _row(self.data, "lxc", 1, "vmct.build")
        self.assertEqual(1.0, r["ratio_df"])
        self.assertTrue(r["significant"])
        self.assertAlmostEqual(2 / 45, r["mwu_p_value"], places=15)
        self.assertIsNotNone(r["detectable_low"])

    def test_headline_cells_carry_the_test(self):
        cell = [h for h in self.data["headlines"]
                if h["category"] == "build"][0]["kinds"]["docker"]
        for field in analyse.HEADLINE_FIELDS:
            self.assertIn(field, cell)
        self.assertTrue(cell["significant"])
        self.assertEqual(inference.RULE_LOG, cell["rule"])

    def test_unbounded_ratio(self):
        native = sr.workload("VMCT.native_benchmark", "native", [
            sr.iteration(charts=[output.stats_chart("native", "sysbench cpu", "events/s",
                                                    [("eps", v)])]) for v in (-50, 250)])
        kvm = sr.workload("VMCT.b", "kvm", [
            sr.iteration(charts=[output.stats_chart("kvm", "sysbench cpu", "events/s",
                                                    [("eps", v)])]) for v in (150, 160)])
        data = analyse.compare([sr.task(native, kvm)])
        r = _row(data, "kvm", 1, "eps", labels.SOURCE_CHART)
        # a value <= 0: Fieller at Hsu df 1; baseline mean 100, SE 150: |mean| / SE
        # < t, Fieller cannot bound it
        self.assertEqual(inference.RULE_FIELLER, r["rule"])
        self.assertAlmostEqual(1.55, r["ratio"], places=12)
        self.assertEqual((None, None, True), (r["ratio_ci_low"], r["ratio_ci_high"],
                                              r["ratio_ci_unbounded"]))
        self.assertIn("interval unbounded", r["ratio_note"])


class TestRunnerAndScope(testtools.TestCase):

    def test_serial_runner_groups_at_one(self):
        w = sr.workload(BOOT, "kvm", [sr.iteration([sr.action("vmct.build", 3.0)])],
                        runner_type="serial")
        data = analyse.compare([sr.task(w)])
        self.assertEqual([1], data["concurrencies"])

    def test_foreign_workloads_are_skipped(self):
        dummy = sr.workload("Dummy.dummy", None, [sr.iteration([sr.action("x", 1.0)])])
        ours = sr.workload(BOOT, "kvm", [sr.iteration([sr.action("vmct.build", 3.0)])])
        data = analyse.compare([sr.task(dummy, ours, uuid="T")])
        self.assertEqual([{"task": "T", "scenario": "Dummy.dummy",
                           "reason": "no kind argument, not a VMCT scenario and "
                                     "no rally-vmct chart"}],
                         data["skipped_workloads"])
        self.assertEqual(["kvm"], data["kinds"])
        self.assertNotIn("x", [m["metric"] for m in data["metrics"]])

    def test_foreign_scenario_with_our_chart_is_included(self):
        w = sr.workload("Other.thing", None, [sr.iteration(charts=[
            output.stats_chart("docker", "sysbench cpu", "events/s", [("eps", 5)])])])
        data = analyse.compare([sr.task(w)])
        self.assertEqual([], data["skipped_workloads"])
        self.assertEqual(5, _row(data, "docker", 1, "eps", labels.SOURCE_CHART)["mean"])

    def test_several_tasks_merge_into_the_same_groups(self):
        one = sr.task(sr.workload(BOOT, "kvm", [sr.iteration([sr.action("vmct.build", 2.0)])],
                                  4), uuid="A")
        two = sr.task(sr.workload(BOOT, "kvm", [sr.iteration([sr.action("vmct.build", 4.0)])],
                                  4), uuid="B")
        data = analyse.compare([one, two])
        self.assertEqual(["A", "B"], [t["uuid"] for t in data["tasks"]])
        r = _row(data, "kvm", 4, "vmct.build")
        self.assertEqual((2, 3.0), (r["n"], r["mean"]))

    def test_json_report_shape(self):
        w = {"scenario": {BOOT: {"kind": {"name": "kvm"}}},
             "runner": {"constant": {"times": 1, "concurrency": 3}},
             "data": [sr.iteration([sr.action("vmct.build", 3.0)])]}
        data = analyse.compare([sr.task(w)])
        self.assertEqual(3.0, _row(data, "kvm", 3, "vmct.build")["mean"])


class TestFailures(testtools.TestCase):

    def test_failed_iterations_and_actions(self):
        its = [
            sr.iteration([sr.action("vmct.build", 4.0),
                          sr.action("vmct.wait_for_network", 1.0)]),
            sr.iteration([sr.action("vmct.build", 6.0),
                          sr.action("vmct.wait_for_network", 9.0, failed=True)],
                         error=["TimeoutException", "no network", "tb"]),
            # failed during build: build marked failed, no network wait at all
            sr.iteration([sr.action("vmct.build", 60.0, failed=True)],
                         error=["GetResourceErrorStatus", "ERROR", "tb"]),
        ]
        data = analyse.compare([sr.task(sr.workload(BOOT, "kvm", its))])
        build = _row(data, "kvm", 1, "vmct.build")
        self.assertEqual((2, 1, 5.0), (build["n"], build["failures"], build["mean"]))
        net = _row(data, "kvm", 1, "vmct.wait_for_network")
        # one failed action + one failed iteration that never got there
        self.assertEqual((1, 2, 1.0), (net["n"], net["failures"], net["mean"]))
        it = _row(data, "kvm", 1, BOOT, labels.SOURCE_ITERATION)
        self.assertEqual((1, 2), (it["n"], it["failures"]))
        self.assertIsNone(it["sd"])
        self.assertEqual({"task": "task-1", "scenario": BOOT, "kind": "kvm",
                          "concurrency": 1, "iterations": 3, "failed": 2},
                         data["workloads"][0])

    def test_workload_whose_iterations_all_fail(self):
        its = [sr.iteration(error=["Boom", "x", "tb"], duration=1.0)] * 4
        data = analyse.compare([sr.task(sr.workload(BOOT, "docker", its, 16))])
        r = _row(data, "docker", 16, BOOT, labels.SOURCE_ITERATION)
        self.assertEqual((0, 4, None, None), (r["n"], r["failures"], r["mean"], r["p50"]))

    def test_non_numeric_chart_value_is_a_failure(self):
        its = [sr.iteration(charts=[output.stats_chart(
            "kvm", "sysbench cpu", "events/s", [("eps", v)])])
            for v in (10, None, float("nan"), "12", 14.0, float("-inf"), True)]
        data = analyse.compare([sr.task(sr.workload("VMCT.b", "kvm", its))])
        r = _row(data, "kvm", 1, "eps", labels.SOURCE_CHART)
        self.assertEqual((2, 5, 12.0), (r["n"], r["failures"], r["mean"]))

    def test_ignores_foreign_charts(self):
        its = [sr.iteration(charts=[
            {"title": "Not ours", "chart_plugin": "StatsTable", "data": [["a", 1]]},
            {"title": "kvm: sysbench cpu [events/s]", "chart_plugin": "Lines",
             "data": [["a", 1]]},
            {"title": ["weird"], "chart_plugin": "StatsTable", "data": [["a", 1]]},
            {"title": 5, "chart_plugin": "StatsTable", "data": [["a", 1]]},
            output.stats_chart("kvm", "g", "u", [("ok", 2)])])]
        data = analyse.compare([sr.task(sr.workload("VMCT.b", "kvm", its))])
        self.assertEqual(["ok", "VMCT.b"], [m["metric"] for m in data["metrics"]])


class TestRepeatedActions(testtools.TestCase):

    def test_each_occurrence_is_a_sample(self):
        its = [sr.iteration([sr.action("vmct.reboot", d) for d in (2.0, 4.0, 6.0)])]
        data = analyse.compare([sr.task(sr.workload("VMCT.r", "kvm", its))])
        r = _row(data, "kvm", 1, "vmct.reboot")
        self.assertEqual((3, 4.0, 2.0), (r["n"], r["mean"], r["sd"]))


class TestReboots(testtools.TestCase):

    @staticmethod
    def _reboot_iteration(kind, seconds, path, error=None, ready=None):
        counts = dict.fromkeys(output.REBOOT_PATHS, 0)
        counts[path] = 1
        actions = [sr.action("vmct.reboot", seconds, 0.0,
                             [sr.action("vmct.reboot_ready", ready or seconds / 2)])]
        return sr.iteration(
            actions, [output.stats_chart(kind, output.REBOOT_PATH_GROUP, "count",
                                         sorted(counts.items())),
                      output.stats_chart(kind, "reboot phases", "s",
                                         [("left_active", seconds / 10)])],
            error=error)

    def setUp(self):
        super(TestReboots, self).setUp()
        its = [self._reboot_iteration("kvm", 10.0, "soft"),
               self._reboot_iteration("kvm", 12.0, "soft"),
               self._reboot_iteration("kvm", 130.0, "soft_fell_back_to_hard"),
               self._reboot_iteration("kvm", 126.0, "soft_fell_back_to_hard"),
               sr.iteration(error=["Timeout", "never came back", "tb"])]
        soft = sr.workload("VMCT.boot_and_reboot_server", "kvm", its, 2,
                           reboot_type="soft")
        hard = sr.workload("VMCT.boot_and_reboot_server", "kvm",
                           [self._reboot_iteration("kvm", 20.0, "hard")] * 2, 2,
                           reboot_type="hard")
        self.data = analyse.compare([sr.task(soft, hard)])

    def test_path_counts(self):
        self.assertEqual([{"kind": "kvm", "concurrency": 2,
                           "counts": {"soft": 2, "soft_fell_back_to_hard": 2, "hard": 2},
                           "fallback_fraction": 0.5}], self.data["reboot_paths"])

    def test_fallbacks_are_reported_apart(self):
        soft = _row(self.data, "kvm", 2, "vmct.reboot (soft)")
        self.assertEqual((2, 11.0), (soft["n"], soft["mean"]))
        fell = _row(self.data, "kvm", 2, "vmct.reboot (soft, fell back to hard)")
        self.assertEqual((2, 128.0, 0), (fell["n"], fell["mean"], fell["failures"]))
        hard = _row(self.data, "kvm", 2, "vmct.reboot (hard)")
        self.assertEqual((2, 20.0), (hard["n"], hard["mean"]))
        # children of a reboot action follow it
        child = _row(self.data, "kvm", 2, "vmct.reboot_ready (soft, fell back to hard)")
        self.assertEqual(64.0, child["mean"])

    def test_chart_groups_with_reboot_follow_too(self):
        rows = [r for r in self.data["groups"] if r["metric"] == "left_active"]
        self.assertEqual({"reboot phases (soft)": 1.1,
                          "reboot phases (soft, fell back to hard)": 12.8,
                          "reboot phases (hard)": 2.0},
                         {r["group"]: round(r["mean"], 9) for r in rows})

    def test_failed_iteration_counts_once_against_the_plain_variant(self):
        self.assertEqual(1, _row(self.data, "kvm", 2, "vmct.reboot (soft)")["failures"])
        self.assertEqual(0, _row(self.data, "kvm", 2, "vmct.reboot (hard)")["failures"])

    def test_reboot_headlines_are_top_level_actions(self):
        shown = {h["label"] for h in self.data["headlines"]
                 if h["category"] == "reboot"}
        self.assertEqual({"vmct.reboot (soft) [s]", "vmct.reboot (hard) [s]",
                          "vmct.reboot (soft, fell back to hard) [s]"}, shown)


class TestRebootsNamedByPath(testtools.TestCase):
    """How VMCT.boot_and_reboot_server reports: one action per reboot, named by path."""

    def setUp(self):
        super(TestRebootsNamedByPath, self).setUp()

        def reboot(path, seconds):
            name = "vmct.reboot_" + path
            return sr.action(name, seconds, 0.0, [sr.action(name + ".active", seconds / 2)])

        def paths(soft, fell):
            return output.stats_chart("kvm", output.REBOOT_PATH_GROUP, "count", [
                ("soft", soft), ("soft_fell_back_to_hard", fell), ("hard", 0)])

        its = [sr.iteration([reboot("soft", 10.0), reboot("soft_fell_back_to_hard", 124.0)],
                            [paths(1, 1)]),
               sr.iteration([reboot("soft", 12.0), reboot("soft", 14.0)], [paths(2, 0)]),
               sr.iteration([reboot("soft", 11.0)], error=["Timeout", "x", "tb"])]
        self.data = analyse.compare([sr.task(sr.workload(
            "VMCT.boot_and_reboot_server", "kvm", its, 1, reboot_type="soft"))])

    def test_names_are_kept_and_each_reboot_counts_once(self):
        soft = _row(self.data, "kvm", 1, "vmct.reboot_soft")
        self.assertEqual((4, 11.75), (soft["n"], soft["mean"]))
        fell = _row(self.data, "kvm", 1, "vmct.reboot_soft_fell_back_to_hard")
        self.assertEqual((1, 124.0), (fell["n"], fell["mean"]))
        child = _row(self.data, "kvm", 1, "vmct.reboot_soft.active")
        self.assertEqual(4, child["n"])
        names = [m["metric"] for m in self.data["metrics"]]
        self.assertFalse([n for n in names if "(" in n], names)

    def test_failed_iteration_without_fallback_is_not_a_fallback_failure(self):
        # the failed 3rd iteration produced vmct.reboot_soft: nothing is missing
        for name in ("vmct.reboot_soft", "vmct.reboot_soft_fell_back_to_hard",
                     "vmct.reboot_soft_fell_back_to_hard.active"):
            self.assertEqual(0, _row(self.data, "kvm", 1, name)["failures"], name)

    def test_paths(self):
        self.assertEqual({"soft": 3, "soft_fell_back_to_hard": 1, "hard": 0},
                         self.data["reboot_paths"][0]["counts"])


class TestHeadlinesAndLifecycle(testtools.TestCase):

    def setUp(self):
        super(TestHeadlinesAndLifecycle, self).setUp()
        self.data = analyse.compare(sr.demo_tasks(times=4))

    def test_headline_order_and_choice(self):
        seen = []
        for h in self.data["headlines"]:
            if (h["category"], h["label"]) not in seen:
                seen.append((h["category"], h["label"]))
        self.assertEqual([
            ("build", "vmct.build [s]"),
            ("network wait", "vmct.wait_for_network [s]"),
            ("delete", "vmct.delete [s]"),
            ("reboot", "vmct.reboot_soft [s]"),
            ("reboot", "vmct.reboot_soft_fell_back_to_hard [s]"),
            ("cpu", "sysbench cpu: events_per_second [events/s]"),
            ("memory", "sysbench memory read: mib_per_second [MiB/s]"),
            ("fileio", "sysbench fileio rndrd: mib_per_second [MiB/s]"),
            ("network", "netperf TCP_STREAM: throughput [Mbit/s]"),
            ("network", "netperf TCP_RR: throughput [trans/s]"),
        ], seen)

    def test_headline_without_preferred_name_takes_first_rate(self):
        w = sr.workload("VMCT.b", "kvm", [sr.iteration(charts=[
            output.stats_chart("kvm", "netperf UDP_RR", "us", [("latency_mean", 3.0)]),
            output.stats_chart("kvm", "netperf UDP_RR", "pkt/s", [("rate", 9.0)]),
            output.stats_chart("kvm", "sysbench fileio x", "ms", [("lat", 1.0)])])])
        data = analyse.compare([sr.task(w)])
        self.assertEqual([("fileio", "sysbench fileio x: lat [ms]"),
                          ("network", "netperf UDP_RR: rate [pkt/s]")],
                         [(h["category"], h["label"]) for h in data["headlines"]])

    def test_stop_start_headlines(self):
        w = sr.workload("VMCT.boot_stop_start_server", "kvm", [sr.iteration([
            sr.action("vmct.stop", 3.0),
            sr.action("vmct.start", 5.0, children=[sr.action("vmct.start.active", 2.0)])])])
        data = analyse.compare([sr.task(w)])
        self.assertEqual([("stop", "vmct.stop [s]"), ("start", "vmct.start [s]")],
                         [(h["category"], h["label"]) for h in data["headlines"]])

    def test_headline_cells(self):
        h = [h for h in self.data["headlines"]
             if h["category"] == "cpu" and h["concurrency"] == 4][0]
        self.assertEqual({"kvm", "docker"}, set(h["kinds"]))
        self.assertEqual("higher", h["direction"])
        self.assertEqual(("native", 1), (h["kinds"]["kvm"]["baseline_kind"],
                                         h["kinds"]["kvm"]["baseline_concurrency"]))

    def test_lifecycle_rows(self):
        life = self.data["lifecycle"]
        self.assertEqual(["build", "network wait", "delete"], life["phases"])
        self.assertEqual([("kvm", 1), ("kvm", 4), ("docker", 1), ("docker", 4)],
                         [(r["kind"], r["concurrency"]) for r in life["rows"]])
        build = _row(self.data, "docker", 4, "vmct.build")
        self.assertEqual(build["mean"], life["rows"][3]["phases"]["build"]["mean"])

    def test_lifecycle_falls_back_to_nova_actions(self):
        w = sr.workload("NovaServers.boot_and_delete_server", "kvm", [sr.iteration([
            sr.action("nova.boot_server", 5.0), sr.action("nova.delete_server", 2.0)])])
        data = analyse.compare([sr.task(w)])
        self.assertEqual(["build", "delete"], data["lifecycle"]["phases"])
        self.assertEqual({"build": {"metric": "nova.boot_server", "mean": 5.0,
                                    "sd": None, "n": 1},
                          "delete": {"metric": "nova.delete_server", "mean": 2.0,
                                     "sd": None, "n": 1}},
                         data["lifecycle"]["rows"][0]["phases"])

    def test_empty(self):
        data = analyse.compare([])
        self.assertEqual((None, [], [], []), (data["baseline"], data["kinds"],
                                              data["groups"], data["headlines"]))


def _builds(kind, concurrency, values, failed=0):
    """A boot workload timing ``values`` (in this order), then ``failed`` failed builds."""
    its = [sr.iteration([sr.action("vmct.build", v), sr.action("vmct.delete", v / 4, v)])
           for v in values]
    its += [sr.iteration([sr.action("vmct.build", 1.0, failed=True)], error=["Timeout"])
            for _ in range(failed)]
    return sr.workload(BOOT, kind, its, concurrency)


class TestQuantileIntervals(testtools.TestCase):
    """Per level p50, p95, p99 with their order-statistic intervals."""

    def setUp(self):
        super(TestQuantileIntervals, self).setUp()
        # kvm: 1..10 s at c=1, 1..80 at c=8, 1..400 at c=32 (each shuffled); docker
        # at c=8 only
        rng = random.Random(5)
        self.values = {}
        workloads = []
        for c, n in ((1, 10), (8, 80), (32, 400)):
            values = [float(v) for v in range(1, n + 1)]
            rng.shuffle(values)
            self.values[c] = values
            workloads.append(_builds("kvm", c, values))
        workloads.append(_builds("docker", 8, [2.0, 3.0, 4.0], failed=2))
        self.data = analyse.compare([sr.task(*workloads)])

    def test_by_hand_at_n_10(self):
        row = _row(self.data, "kvm", 1, "vmct.build")
        # p50: ranks 2 and 9 (Binomial(10, .5)); p95: P(B <= 7) = 0.0115 <= 0.025 <
        # P(B <= 8) = 0.0861 -> rank 8; p99: P(B <= 8) = 0.0043 -> rank 9; no upper
        # bound for either (0.95^10 = 0.60 > 0.025)
        self.assertEqual((2.0, 9.0), (row["p50_ci_low"], row["p50_ci_high"]))
        self.assertEqual((8.0, None), (row["p95_ci_low"], row["p95_ci_high"]))
        self.assertEqual((9.0, None), (row["p99_ci_low"], row["p99_ci_high"]))

    def test_each_level_is_its_own_sample(self):
        for c, n in ((1, 10), (8, 80), (32, 400)):
            row = _row(self.data, "kvm", c, "vmct.build")
            self.assertEqual(n, row["n"])
            for percent in stats.INTERVAL_PERCENTILES:
                expected = stats.quantile_interval(self.values[c], percent)
                self.assertEqual((expected.low, expected.high),
                                 (row["p%d_ci_low" % percent],
                                  row["p%d_ci_high" % percent]), (c, percent))
        # an upper bound of p95 from N = 72 on, of p99 from N = 368 on
        c8, c32 = (_row(self.data, "kvm", c, "vmct.build") for c in (8, 32))
        self.assertIsNotNone(c8["p95_ci_high"])
        self.assertIsNone(c8["p99_ci_high"])
        self.assertIsNotNone(c32["p99_ci_high"])
        self.assertLessEqual(c32["p99_ci_low"], c32["p99"])
        self.assertLessEqual(c32["p99"], c32["p99_ci_high"])

    def test_every_group_has_the_fields(self):
        for row in self.data["groups"]:
            for field in analyse.QUANTILE_INTERVAL_FIELDS:
                self.assertIn(field, row)
        self.assertEqual(("p50_ci_low", "p50_ci_high", "p95_ci_low", "p95_ci_high",
                          "p99_ci_low", "p99_ci_high"), analyse.QUANTILE_INTERVAL_FIELDS)
        self.assertEqual(analyse.QUANTILE_INTERVAL_FIELDS,
                         analyse.CSV_COLUMNS[analyse.CSV_COLUMNS.index("log_sd") + 1:][:6])

    def test_confidence_level_applies(self):
        data = analyse.compare([sr.task(_builds("kvm", 1, self.values[32]))],
                               confidence=0.9)
        row = _row(data, "kvm", 1, "vmct.build")
        expected = stats.quantile_interval(self.values[32], 99, 0.9)
        self.assertEqual((expected.low, expected.high),
                         (row["p99_ci_low"], row["p99_ci_high"]))
        self.assertEqual({"low": 1, "high": 299},
                         data["methods"]["quantile_interval_min_n"]["p99"])

    def test_scale_levels(self):
        (build, delete) = self.data["scale"]
        self.assertEqual(("build", "vmct.build", "vmct.build [s]", "s"),
                         (build["phase"], build["metric"], build["label"], build["unit"]))
        self.assertEqual("vmct.delete", delete["metric"])
        self.assertEqual(["kvm", "docker"], [k["kind"] for k in build["kinds"]])
        kvm, docker = build["kinds"]
        self.assertEqual([1, 8, 32], [level["concurrency"] for level in kvm["levels"]])
        self.assertEqual(list(analyse.SCALE_FIELDS), list(kvm["levels"][0]))
        row = _row(self.data, "kvm", 8, "vmct.build")
        self.assertEqual({field: row[field] for field in analyse.SCALE_FIELDS},
                         kvm["levels"][1])
        # a kind at one level is there too; failures are counted
        self.assertEqual([(8, 3, 2)], [(level["concurrency"], level["n"], level["failures"])
                                       for level in docker["levels"]])

    def test_level_whose_every_build_failed_is_listed(self):
        data = analyse.compare([sr.task(_builds("kvm", 1, [3.0, 4.0]),
                                        _builds("kvm", 2, [5.0, 6.0]),
                                        _builds("kvm", 4, [], failed=3))])
        levels = data["scale"][0]["kinds"][0]["levels"]
        self.assertEqual([(1, 2, 0), (2, 2, 0), (4, 0, 3)],
                         [(lv["concurrency"], lv["n"], lv["failures"]) for lv in levels])
        self.assertIsNone(levels[2]["p50"])

    def test_no_scale_without_two_levels_for_a_kind(self):
        data = analyse.compare([sr.task(_builds("kvm", 1, [3.0, 4.0]),
                                        _builds("docker", 2, [1.0, 2.0]),
                                        _builds("docker", 4, [], failed=2))])
        self.assertEqual([], data["scale"])
        self.assertEqual([], analyse.compare([])["scale"])

    def test_scale_of_the_sample_task(self):
        data = analyse.compare(sr.scale_tasks())
        self.assertEqual(["build", "delete"], [phase["phase"] for phase in data["scale"]])
        for phase in data["scale"]:
            for entry in phase["kinds"]:
                self.assertEqual(list(sr.SCALE_LEVELS),
                                 [level["concurrency"] for level in entry["levels"]])
        kvm = data["scale"][0]["kinds"][0]["levels"]
        self.assertEqual((252, 4), (kvm[-1]["n"], kvm[-1]["failures"]))
