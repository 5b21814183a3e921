# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""The comparison of collected samples: statistics, ratios, verdicts, headlines.

The data half of the ``vmct-comparison`` exporter ends here: :func:`compare`
collects Rally task results (:mod:`.collect`) and returns plain dicts and lists,
ready for JSON, CSV and the HTML renderer. The rule behind every ratio and
verdict, the fields and the JSON format's versions:
``doc/source/design/comparison.rst``.
"""

import collections
import math

from rally_vmct.hostcost import density_curves
from rally_vmct.hostcost import phase_samples
from rally_vmct.task.exporters.comparison import collect
from rally_vmct.task.exporters.comparison import environment as env_lib
from rally_vmct.task.exporters.comparison import labels
from rally_vmct.task.exporters.comparison import seed_check
from rally_vmct.task import output
from rally_vmct import inference
from rally_vmct import stats

# Headline comparisons, in the order the summary shows them.
# Lifecycle phases: (label, atomic action names tried in order).
LIFECYCLE_PHASES = (
    ("build", ("vmct.build", "nova.boot_server")),
    ("network wait", ("vmct.wait_for_network",)),
    ("ssh wait", ("vmct.wait_for_ssh",)),
    ("delete", ("vmct.delete", "nova.delete_server")),
)
# Top-level atomic actions with this text in their name: (label, text).
ACTION_HEADLINES = (("reboot", "reboot"), ("stop", "vmct.stop"), ("start", "vmct.start"))
# Workload charts: (label, chart group prefix, headline metric names by preference);
# one headline per chart group (``sysbench fileio rndrd``...).
CHART_HEADLINES = (
    ("cpu", "sysbench cpu", ("events_per_second", "total_time")),
    ("memory", "sysbench memory", ("mib_per_second", "operations_per_second",
                                   "events_per_second")),
    ("fileio", "sysbench fileio", ("mib_per_second", "requests_per_second",
                                   "events_per_second")),
    ("network", "netperf", ("throughput", "transaction_rate")),
)
HEADLINE_ORDER = ("build", "network wait", "ssh wait", "delete", "reboot", "stop",
                  "start", "cpu", "memory", "fileio", "network")

FORMAT_VERSION = 7
IDENTITY_FIELDS = ("kind", "concurrency", "source", "group", "metric", "unit")
VARIANT_FIELDS = ("dialect", "sysbench_mode")
# The bounds of the quantiles' intervals: p50_ci_low, p50_ci_high, ... p99_ci_high.
QUANTILE_INTERVAL_FIELDS = tuple("p%d_ci_%s" % (percent, side)
                                 for percent in stats.INTERVAL_PERCENTILES
                                 for side in ("low", "high"))
STAT_FIELDS = ("n", "failures", "mean", "sd", "cv", "cv_high", "min", "p50", "p90",
               "p95", "p99", "max", "ci_low", "ci_high", "log_mean",
               "log_sd") + QUANTILE_INTERVAL_FIELDS
# What the scale section gives per kind and concurrency level.
SCALE_FIELDS = ("concurrency", "n", "failures") + tuple(
    field for percent in stats.INTERVAL_PERCENTILES
    for field in ("p%d" % percent, "p%d_ci_low" % percent, "p%d_ci_high" % percent))
QUANTILE_INTERVAL = "order-statistic"
RATIO_FIELDS = ("baseline_kind", "baseline_concurrency", "rule", "level", "ratio",
                "ratio_se", "ratio_ci_low", "ratio_ci_high", "ratio_ci_unbounded",
                "ratio_ci_excludes_low", "ratio_ci_excludes_high",
                "ratio_df", "ratio_note", "replicate", "runs", "baseline_runs")
TEST_FIELDS = ("p_value", "significant", "detectable_low", "detectable_high",
               "mwu_test", "mwu_p_value", "mwu_p_min", "mwu_note")
# What a headline cell of the summary carries.
HEADLINE_FIELDS = (("n", "failures", "mean", "sd", "cv", "cv_high") + RATIO_FIELDS
                   + TEST_FIELDS)
# The page's cells are exploratory: each at alpha, no correction (the page says how
# many false marks to expect); the seed check corrects within its own family.
CORRECTION = "none"


class ComparisonError(ValueError):
    """The comparison cannot be made as asked (e.g. unknown baseline kind)."""


class _Result(object):
    """Statistics, ratios and headlines of a :class:`.collect.Collector`."""

    def __init__(self, collector, baseline, confidence):
        if baseline is not None and baseline not in collector.kinds:
            raise ComparisonError(
                "baseline kind %r is not in the exported tasks; kinds found: %s. "
                "Pick one of those (--to 'FILE?baseline=KIND') or leave it out for "
                "the default (native, else the first kind)."
                % (baseline, ", ".join(collector.kinds) or "none"))
        if baseline is None and collector.kinds:
            baseline = (output.NATIVE_KIND if output.NATIVE_KIND in collector.kinds
                        else collector.kinds[0])
        self.c = collector
        self.baseline = baseline
        self.confidence = confidence
        self.kinds = ([baseline] if baseline else []) + [
            k for k in collector.kinds if k != baseline]
        self.metrics = sorted(collector.metrics, key=self._metric_sort_key)
        self.concurrencies = sorted({key.concurrency for key in collector.groups}
                                    | {c for _, c in collector.reboot_paths})
        self.alpha = round(1.0 - confidence, 12)     # 0.05, not 0.050000000000000044
        # Sorted once: the summaries and the rank tests both want sorted samples.
        for group in collector.groups.values():
            group.values.sort()
        self.summaries = {key: stats.summary(group.values, confidence)
                          for key, group in collector.groups.items()}
        self.logs = {key: stats.log_moments(group.values)
                     for key, group in collector.groups.items()}
        # metric -> {concurrency: kind} of the groups with samples, per kind
        self.have = collections.defaultdict(lambda: collections.defaultdict(dict))
        for (kind, concurrency, metric), summary in self.summaries.items():
            if summary.n:
                self.have[metric][kind][concurrency] = summary

    def _metric_sort_key(self, metric):
        source_rank = {labels.SOURCE_ATOMIC: 0, labels.SOURCE_CHART: 1, phase_samples.SOURCE: 2,
                       labels.SOURCE_ITERATION: 3}
        return (source_rank.get(metric.source, 3), self.c.metrics[metric]["order"])

    def metric_baseline(self, metric):
        """Kind the metric's ratios are relative to (None if nobody has samples)."""
        have = self.have.get(metric) or {}
        for kind in self.kinds:
            if have.get(kind):
                return kind
        return None

    @staticmethod
    def _nearest(levels, concurrency):
        if concurrency in levels:
            return concurrency
        return min(levels, key=lambda c: (abs(math.log2(c) - math.log2(concurrency)), c))

    def baseline_of(self, kind, concurrency, metric):
        """(baseline kind, baseline concurrency) a group is compared with.

        The concurrency is None when nobody has samples of the metric; the group is
        compared with nothing when the kind is the baseline itself.
        """
        base_kind = self.metric_baseline(metric)
        if base_kind is None or kind == base_kind:
            return base_kind, (None if base_kind is None else concurrency)
        return base_kind, self._nearest(self.have[metric][base_kind], concurrency)

    def group_row(self, kind, concurrency, metric, baseline=None):
        """One group's statistics, ratio and raw tests (``p_adjusted`` comes later).

        ``baseline``: ``(kind, concurrency)`` to compare with instead of the
        metric's baseline (the seed check's own pairs).
        """
        key = labels.GroupKey(kind, concurrency, metric)
        summary = self.summaries[key]
        base_kind, base_c = baseline or self.baseline_of(kind, concurrency, metric)
        row = {"kind": kind, "concurrency": concurrency,
               "source": metric.source, "group": metric.group, "metric": metric.name,
               "unit": metric.unit, "dialect": metric.dialect,
               "sysbench_mode": metric.mode, "label": labels.metric_label(metric),
               "failures": self.c.groups[key].failures}
        for field in ("n", "mean", "sd", "cv", "min", "p50", "p90", "p95", "p99",
                      "max", "ci_low", "ci_high"):
            row[field] = getattr(summary, field)
        for percent in stats.INTERVAL_PERCENTILES:
            interval = stats.quantile_interval(self.c.groups[key].values, percent,
                                               self.confidence, presorted=True)
            row["p%d_ci_low" % percent] = interval.low
            row["p%d_ci_high" % percent] = interval.high
        row["cv_high"] = None if summary.cv is None else summary.cv > stats.HIGH_CV
        logs = self.logs[key]
        row["log_mean"], row["log_sd"], row["value_step"] = (
            (None, None, None) if logs is None else logs[1:4])
        row.update(dict.fromkeys(RATIO_FIELDS + TEST_FIELDS))
        row.update(baseline_kind=base_kind, baseline_concurrency=base_c,
                   ratio_ci_unbounded=False, significant=False,
                   runs=len(self.c.groups[key].by_run))
        base_key = labels.GroupKey(base_kind, base_c, metric)
        why = self._not_compared(key, base_key)
        if why is not None:
            row["ratio_note"] = why
            return row
        row.update(self._compare(key, base_key, self.alpha))
        row.update(self._robustness(key, base_key))
        return row

    def _compare(self, key, base_key, alpha):
        """The rule between two groups, over runs when each side has two or more.

        Else over the iterations (of one run, or of runs too few to replicate).
        """
        runs, base_runs = self.run_logs(key), self.run_logs(base_key)
        if len(runs) >= 2 and len(base_runs) >= 2:
            out = inference.compare_runs(runs, base_runs, alpha)
            out["replicate"] = inference.REPLICATE_RUN
        else:
            out = inference.compare((self.summaries[key], self.logs[key]),
                                    (self.summaries[base_key], self.logs[base_key]), alpha)
            out["replicate"] = inference.REPLICATE_ITERATION
        out.update(runs=len(self.c.groups[key].by_run),
                   baseline_runs=len(self.c.groups[base_key].by_run))
        return out

    def run_logs(self, key):
        """The mean log of each run (task) with values of the group.

        [] when a value is <= 0 (no log scale: the iterations' Fieller rule).
        """
        means = []
        for values in self.c.groups[key].by_run.values():
            if not values or min(values) <= 0:
                return []
            means.append(math.fsum(math.log(v) for v in values) / len(values))
        return means

    def _not_compared(self, key, base_key):
        """Why a group is compared with nothing, else None."""
        if base_key.kind is None:
            return "no kind has samples of this metric"
        if key.kind == base_key.kind:
            return "baseline"
        if key.metric.dialect:
            ok, why = labels.comparable(self.c.descriptions.get(key, ()),
                                        self.c.descriptions.get(base_key, ()))
            if not ok:
                return "not comparable with %s: %s" % (base_key.kind, why)
        return None

    def _robustness(self, key, base_key):
        """Mann-Whitney U of a compared group: a robustness note, never the verdict."""
        u = stats.mann_whitney(self.c.groups[key].values, self.c.groups[base_key].values,
                               presorted=True)
        return {"mwu_test": u.test if u.p is not None else None, "mwu_p_value": u.p,
                "mwu_p_min": u.min_p, "mwu_note": u.note}

    @staticmethod
    def _tested(rows):
        """How many rows carry a verdict (an interval), for the expected false marks."""
        return sum(1 for row in rows if row.get("p_value") is not None)

    def lifecycle_metrics(self):
        """[(phase, Metric)] of the LIFECYCLE_PHASES these results time."""
        phases = []
        atomic = {m.name: m for m in self.metrics if m.source == labels.SOURCE_ATOMIC}
        for label, names in LIFECYCLE_PHASES:
            metric = next((atomic[n] for n in names if n in atomic), None)
            if metric:
                phases.append((label, metric))
        return phases

    def headline_metrics(self):
        """[(category, Metric)] in HEADLINE_ORDER."""
        chosen = self.lifecycle_metrics()
        for label, text in ACTION_HEADLINES:
            for metric in self.metrics:
                if (metric.source == labels.SOURCE_ATOMIC and text in metric.name
                        and self.c.metrics[metric]["top"]):
                    chosen.append((label, metric))
        for label, prefix, preferred in CHART_HEADLINES:
            groups = collections.OrderedDict()
            for metric in self.metrics:
                if metric.source == labels.SOURCE_CHART and metric.group.startswith(prefix):
                    # one headline per chart group and sysbench dialect/mode
                    groups.setdefault((metric.group, metric.dialect, metric.mode),
                                      []).append(metric)
            for metrics in groups.values():
                by_name = {m.name: m for m in metrics}
                pick = next((by_name[n] for n in preferred if n in by_name), None)
                if pick is None:
                    # Else the first figure of the first rate chart of the group.
                    rates = [m for m in metrics if labels.direction(m.unit) == "higher"]
                    pick = (rates or metrics)[0]
                chosen.append((label, pick))
        order = {label: i for i, label in enumerate(HEADLINE_ORDER)}
        return sorted(chosen, key=lambda item: order[item[0]])

    def host_cost_metrics(self):
        """[(phase, Metric)] of the host monitor's figures, phase by phase."""
        found = [(m.group[len(phase_samples.GROUP_PREFIX):], m) for m in self.metrics
                 if m.source == phase_samples.SOURCE]
        order = {phase: i for i, phase in enumerate(phase_samples.PHASES)}
        return sorted(found, key=lambda item: order.get(item[0].split(" ")[0], len(order)))

    def lifecycle(self):
        phases = self.lifecycle_metrics()
        rows = []
        for kind in self.kinds:
            for concurrency in self.concurrencies:
                cells = {}
                for label, metric in phases:
                    summary = self.summaries.get(labels.GroupKey(kind, concurrency, metric))
                    if summary and summary.n:
                        cells[label] = {"metric": metric.name, "mean": summary.mean,
                                        "sd": summary.sd, "n": summary.n}
                if cells:
                    rows.append({"kind": kind, "concurrency": concurrency,
                                 "phases": cells})
        return {"phases": [label for label, _ in phases], "unit": "s", "rows": rows}

    def scale(self, row_of):
        """Each lifecycle phase's quantiles per kind and level.

        A phase is there when a kind has samples at two levels or more; a level
        whose every sample failed is listed too (N = 0, its failures).
        """
        phases = []
        for label, metric in self.lifecycle_metrics():
            kinds = []
            for kind in self.kinds:
                rows = [row_of.get(labels.GroupKey(kind, c, metric)) for c in self.concurrencies]
                levels = [{field: row[field] for field in SCALE_FIELDS} for row in rows
                          if row is not None and (row["n"] or row["failures"])]
                if levels:
                    kinds.append({"kind": kind, "levels": levels})
            if any(sum(1 for level in entry["levels"] if level["n"]) > 1
                   for entry in kinds):
                phases.append({"phase": label, "metric": metric.name,
                               "label": labels.metric_label(metric), "unit": metric.unit,
                               "kinds": kinds})
        return phases

    def _metric_dict(self, metric, headline=None):
        return {"source": metric.source, "group": metric.group, "metric": metric.name,
                "unit": metric.unit, "dialect": metric.dialect,
                "sysbench_mode": metric.mode, "label": labels.metric_label(metric),
                "direction": labels.direction(metric.unit), "headline": headline,
                "baseline_kind": self.metric_baseline(metric)}

    def _groups(self, headline_metrics):
        """(metrics out, group rows, {GroupKey: row})."""
        metrics_out, groups_out, row_of = [], [], {}
        headline_of = {}
        for label, metric in headline_metrics:
            headline_of.setdefault(metric, label)
        for metric in self.metrics:
            for kind in self.kinds:
                for concurrency in self.concurrencies:
                    key = labels.GroupKey(kind, concurrency, metric)
                    if key in self.summaries:
                        row_of[key] = self.group_row(*key)
                        groups_out.append(row_of[key])
            metrics_out.append(self._metric_dict(metric, headline_of.get(metric)))
        return metrics_out, groups_out, row_of

    def _headlines(self, headline_metrics, row_of):
        headlines = []
        for label, metric in headline_metrics:
            for concurrency in self.concurrencies:
                cells = {}
                for kind in self.kinds:
                    row = row_of.get(labels.GroupKey(kind, concurrency, metric))
                    if row is not None:
                        cells[kind] = {k: row[k] for k in HEADLINE_FIELDS}
                if cells:
                    headline = self._metric_dict(metric, label)
                    headline.update(category=label, concurrency=concurrency, kinds=cells)
                    del headline["headline"]
                    headlines.append(headline)
        return headlines

    def _quantile_min_n(self):
        """``{"p50": {"low": N, "high": N}, ...}``: the fewest samples for each bound."""
        out = {}
        for percent in stats.INTERVAL_PERCENTILES:
            low, high = stats.quantile_min_n(percent, self.confidence)
            out["p%d" % percent] = {"low": low, "high": high}
        return out

    def _reboot_paths(self):
        reboot_paths = []
        for kind in self.kinds:
            for concurrency in self.concurrencies:
                counts = self.c.reboot_paths.get((kind, concurrency))
                if counts is None:
                    continue
                soft_total = counts.get("soft", 0) + counts.get(collect.FALLBACK_PATH, 0)
                reboot_paths.append({
                    "kind": kind, "concurrency": concurrency, "counts": dict(counts),
                    "fallback_fraction": (counts.get(collect.FALLBACK_PATH, 0) / soft_total
                                          if soft_total else None)})
        return reboot_paths

    def _seed_compare(self, candidate_row, baseline_row, alpha):
        """The rule at ``alpha`` between two group rows (the seed check's levels)."""
        metric = next(m for m in self.metrics
                      if seed_check.metric_key(self._metric_dict(m))
                      == seed_check.metric_key(candidate_row))
        key = labels.GroupKey(candidate_row["kind"], candidate_row["concurrency"], metric)
        base_key = labels.GroupKey(baseline_row["kind"], baseline_row["concurrency"], metric)
        why = self._not_compared(key, base_key)
        if why is not None:
            out = dict.fromkeys(inference.FIELDS)
            out.update(ratio_note=why, significant=False, ratio_ci_unbounded=False)
            return out
        return self._compare(key, base_key, alpha)

    def as_dict(self):
        headline_metrics = self.headline_metrics()
        metrics_out, groups_out, row_of = self._groups(headline_metrics)
        reboot_paths = self._reboot_paths()
        environment = env_lib.environment(self.c.facts, self.kinds)
        roles, checks = seed_check.plan(self.kinds, environment, metrics_out, groups_out)
        seed_check.attach(checks, groups_out)
        comparisons = self._tested(groups_out)
        seeds = seed_check.evaluate(roles, checks, self.alpha, reboot_paths, groups_out,
                                    self._seed_compare)
        return {"format": "vmct-comparison", "format_version": FORMAT_VERSION,
                "title": env_lib.page_title(environment),
                "baseline": self.baseline, "confidence": self.confidence,
                "methods": {"rule": inference.RULE_LOG,
                            "rule_without_log": inference.RULE_FIELLER,
                            "df": "hsu", "correction": CORRECTION, "alpha": self.alpha,
                            "comparisons": comparisons,
                            "expected_false_marks": self.alpha * comparisons,
                            "comparisons_over_runs": sum(
                                1 for g in groups_out if g.get("p_value") is not None
                                and g.get("replicate") == inference.REPLICATE_RUN),
                            "runs": len(self.c.tasks),
                            "rule_over_runs": inference.RULE_RUNS,
                            "seed_correction": seed_check.CORRECTION,
                            "equivalence": "tost", "power": stats.DEFAULT_POWER,
                            "robustness_test": "mann-whitney-u",
                            "robustness_exact_limit": stats.MWU_EXACT_LIMIT,
                            "robustness_exact_ties_limit": stats.MWU_EXACT_TIES_LIMIT,
                            "high_cv": stats.HIGH_CV,
                            "quantile_interval": QUANTILE_INTERVAL,
                            "quantile_interval_min_n": self._quantile_min_n()},
                "kinds": self.kinds, "concurrencies": self.concurrencies,
                "environment": environment,
                "warnings": env_lib.warnings(environment),
                "tasks": self.c.tasks, "workloads": self.c.workloads,
                "skipped_workloads": self.c.skipped,
                "metrics": metrics_out, "groups": groups_out,
                "headlines": self._headlines(headline_metrics, row_of),
                "host_cost": self._headlines(self.host_cost_metrics(), row_of),
                "density": density_curves.curves(self.c.density, self.kinds, self.confidence),
                "lifecycle": self.lifecycle(), "scale": self.scale(row_of),
                "reboot_paths": reboot_paths, "seed_check": seeds}


def compare(tasks_results, baseline=None, confidence=stats.DEFAULT_CONFIDENCE):
    """The comparison of Rally task results (list of detailed task dicts) as a dict.

    :param baseline: kind the ratios are relative to (default ``native`` when
        present, else the first kind seen)
    :param confidence: level of the confidence intervals (0.95)
    :raises ComparisonError: the baseline kind is not in the tasks
    """
    collector = collect.Collector()
    for task in tasks_results:
        collector.add_task(task)
    return _Result(collector, baseline, confidence).as_dict()


# The one list of CSV columns (render_csv writes exactly these, in this order):
# the group rows, then reboot path rows and facts rows (``value``; see render_csv).
CSV_COLUMNS = (IDENTITY_FIELDS + STAT_FIELDS + RATIO_FIELDS + TEST_FIELDS
               + VARIANT_FIELDS + ("value",))
