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
"""Group Rally task results by instance kind x concurrency x metric.

The data half of the ``vmct-comparison`` exporter: pure Python, no Rally API (the
scenarios' contract modules it reads, e.g. ``density_output``, only log through
Rally's logging), so it is tested on hand-built task result dicts. :func:`compare`
takes what Rally hands an exporter (``api.task.get(detailed=True)`` dicts) and returns
plain dicts and lists, ready for JSON, CSV and the HTML renderer.

Where the numbers come from (the contract in :mod:`rally_vmct.task.output`):

* **kind**: ``output.kind_of(workload args)`` for atomic actions and iteration
  durations; the kind in the chart title for charts.
* **concurrency**: ``workload["runner"]["concurrency"]``; 1 for runners without one
  (serial, rps).
* **metrics**:

  - every atomic action, nested children too, one sample per occurrence (an
    iteration that reboots three times gives three reboot samples), in seconds;
  - every row of every additive StatsTable titled ``"<kind>: <group> [<unit>]"``;
  - the iteration duration of each scenario (``iteration`` group), so that a
    workload whose iterations all fail still shows up with its failures.

* **failures** of a group: atomic actions marked failed, chart values that are not
  finite numbers, iterations that failed and the duration of failed iterations, plus
  every failed iteration that did not produce a metric the same workload produced in
  other iterations. Failed samples never enter the statistics.
* **reboots**: the ``reboot path`` chart (rows soft / soft_fell_back_to_hard / hard)
  is summed per kind x concurrency. rally-vmct's reboot scenario names each reboot
  by the path it took (``vmct.reboot_soft``, ``vmct.reboot_hard``,
  ``vmct.reboot_soft_fell_back_to_hard``), so fallbacks are their own metric. Reboot
  timings whose names do not say soft or hard (atomic actions with ``reboot`` in
  their own or a parent's name, chart groups with ``reboot`` in them) get the
  workload's ``reboot_type`` appended, e.g. ``vmct.reboot (soft)``, and those of an
  iteration in which the ``reboot path`` chart reports a fallback are reported apart
  as ``vmct.reboot (soft, fell back to hard)``: never averaged in. A failed
  iteration missing a fallback timing counts against the plain soft one.
* **ratios and verdicts**: each group against the baseline kind's group of the same
  metric at the same concurrency (the nearest concurrency the baseline has, marked,
  when it lacks that one), by the one rule of
  :func:`rally_vmct.inference.compare`: the ratio of geometric means with
  the interval of Welch's t on log values at Hsu's df ``min(N) - 1`` (Fieller's
  interval of the ratio of means at the same df when a value is <= 0), at the
  export's confidence; ``significant`` is "the interval excludes 1" and
  ``p_value`` that test's two-sided p, so the mark and the interval cannot disagree.
  ``ratio_ci_low``/``ratio_ci_high`` None and ``ratio_ci_unbounded`` True when the
  data cannot bound it; ``detectable_low``/``detectable_high`` the ratios the test
  would detect with 80 % power at this N and spread. The baseline is ``native`` when
  present, else the first kind seen, or the kind asked for; for a metric the
  baseline kind never produced (native has no build time) the first kind that has
  it stands in. The cells are exploratory and **uncorrected**:
  ``methods.comparisons`` counts them and ``methods.expected_false_marks`` says how
  many would be marked by chance if nothing differed. Mann-Whitney U (``mwu_*``,
  exact with ties up to 25 per side) is a robustness note, never the verdict.
* **noise**: ``cv_high`` flags a CV above :data:`rally_vmct.stats.HIGH_CV`.
* **quantile intervals**: every group's p50, p95 and p99 come with a distribution-free
  confidence interval at the export's confidence level (``p50_ci_low``,
  ``p50_ci_high``, ... ``p99_ci_high``: order statistics, equal-tailed binomial, from
  :func:`rally_vmct.stats.quantile_interval`). A bound is None when N is
  too small for it; ``methods.quantile_interval_min_n`` gives, per quantile, the
  fewest samples for a lower and for an upper bound (at 95 %: p50 6 and 6, p95 2 and
  72, p99 1 and 368).
* **scale**: per lifecycle phase (``vmct.build``, ``vmct.wait_for_network``,
  ``vmct.wait_for_ssh``, ``vmct.delete`` or Nova's own actions), when some kind has
  samples at two or more concurrency levels: per kind and level the N, failures,
  p50, p95, p99 and their intervals (the groups' figures), for the page's
  latency-against-concurrency charts.
* **sysbench dialects**: an iteration's facts table (``"<kind>: instance facts"``)
  gives its ``sysbench dialect``; sysbench figures (charts ``sysbench ...`` and
  atomic actions ``vmct.sysbench_*``) are keyed on it and on the run mode
  (:func:`rally_vmct.workloads.sysbench.describe` of the workload's plan entry), so
  0.4 and 1.0 results are separate rows labelled ``(sysbench 0.4)``; a ratio is
  only computed when :func:`rally_vmct.workloads.sysbench.comparable` says both
  sides ran the same workload.
* **environment**: every disclosed fact per kind with its values and counts
  (:mod:`.environment`), warnings for emulated kinds, and a page title with
  "(emulated)" marks.
* **seed check**: the seed studies' directions against this run
  (:mod:`.seed_check`): a confirmatory family of its own, Holm-corrected among the
  directions, with TOST for the equivalence claims.

* **host cost**: the ``vmct_host_monitor`` context's per-phase tables become groups
  of source ``host`` (:mod:`.host_cost`: host and instance CPU seconds, instance PSS
  and container memory cgroup per phase; ``host_cost`` lists them like ``headlines``).
* **density**: ``VMCT.density``'s tables give per kind a curve per figure against the
  instance count, and the limits that stopped the filling (:mod:`.density_data`,
  ``density``). Its ``vmct.density.*`` atomic actions (and the lifecycle phases nested
  in them) are left out of the groups: booting with N servers running is not the
  lifecycle scenarios' build.

JSON format: ``format_version`` 4 added the quantile intervals (group fields,
``methods.quantile_interval`` and ``methods.quantile_interval_min_n``) and ``scale``;
5 added ``host_cost`` and ``density`` (and groups of source ``host``); 6 replaced the
page's Holm-corrected Mann-Whitney marks with the one rule's interval and verdict
(``rule``, ``level``, ``detectable_*``, ``mwu_*``, ``log_mean``, ``log_sd``) and made
the seed check a family of its own.

Workloads without a ``kind`` argument, a ``VMCT.`` scenario name or a contract chart
are listed as skipped.
"""

import collections
import math
import numbers

from rally_vmct.hostcost import density as density_output
from rally_vmct.hostcost import density_curves as density_data
from rally_vmct.task.exporters.comparison import environment as env_lib
from rally_vmct.hostcost import phase_samples as host_cost
from rally_vmct.task.exporters.comparison import seed_check
from rally_vmct.task import output
from rally_vmct import inference
from rally_vmct.workloads import plan as plan_lib
from rally_vmct import stats
from rally_vmct.workloads import sysbench

SOURCE_ATOMIC = "atomic"
SOURCE_CHART = "chart"
SOURCE_ITERATION = "iteration"
ATOMIC_GROUP = "atomic action"
ITERATION_GROUP = "iteration"
SCENARIO_PREFIX = "VMCT."
REBOOT_TYPE_ARG = "reboot_type"
FALLBACK_PATH = "soft_fell_back_to_hard"
FALLBACK_TAG = "fell back to hard"

Metric = collections.namedtuple(
    "Metric", ["source", "group", "name", "unit", "dialect", "mode"],
    defaults=(None, None))
Metric.__doc__ = """What a group measures. ``dialect``/``mode``: the sysbench dialect
and run mode of sysbench metrics (from the iteration's facts), else None: results
of different dialects or modes are different metrics, never one cell."""
SYSBENCH_ATOMIC_PREFIX = "vmct.sysbench_"
GroupKey = collections.namedtuple("GroupKey", ["kind", "concurrency", "metric"])
GroupKey.__doc__ = """One group of samples: a kind at a concurrency measuring a Metric."""
ActionKey = collections.namedtuple(
    "ActionKey", ["name", "parent_tag", "top", "suffix", "dialect"])
ActionKey.__doc__ = """What decides where an atomic action's samples go in a workload:
its name, whether a parent is a reboot timing (children are tagged like it), whether
it is top level (headlines take top-level actions only), the iteration's reboot
suffix and the kind's sysbench dialect."""
ChartKey = collections.namedtuple("ChartKey", ["kind", "group", "unit", "suffix", "dialect"])
ChartKey.__doc__ = """The same for a contract chart: its kind, group and unit (from the
title), the iteration's reboot suffix and the kind's sysbench dialect."""

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

FORMAT_VERSION = 6
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
                "ratio_df", "ratio_note")
TEST_FIELDS = ("p_value", "significant", "detectable_low", "detectable_high",
               "mwu_test", "mwu_p_value", "mwu_p_min", "mwu_note")
# What a headline cell of the summary carries.
HEADLINE_FIELDS = (("n", "failures", "mean", "sd", "cv", "cv_high") + RATIO_FIELDS
                   + TEST_FIELDS)
# The page's cells are exploratory: each at alpha, no correction (the page says how
# many false marks to expect); the seed check corrects within its own family.
CORRECTION = "none"

_TIME_UNITS = {"s", "sec", "ms", "us", "µs", "ns", "min", "h"}


class ComparisonError(ValueError):
    """The comparison cannot be made as asked (e.g. unknown baseline kind)."""


def variant_label(metric):
    """``"sysbench 1.0"`` (``", fixed-work"`` when not the dialect's usual mode); ""."""
    if not metric.dialect:
        return ""
    text = "sysbench %s" % metric.dialect
    usual = _usual_mode(metric.dialect)
    if metric.mode and metric.mode != usual:
        text += ", %s" % metric.mode
    return text


def _usual_mode(dialect):
    try:
        return sysbench.run_mode("cpu", dialect)
    except sysbench.SysbenchError:
        return None


def metric_label(metric):
    """Human label with unit: ``vmct.build [s]``, ``sysbench cpu: events [events/s]``.

    sysbench metrics of a known dialect say it: ``... [events/s] (sysbench 1.0)``.
    """
    if metric.source == SOURCE_ATOMIC:
        text = "%s [%s]" % (metric.name, metric.unit)
    elif metric.source == SOURCE_ITERATION:
        text = "iteration duration of %s [%s]" % (metric.name, metric.unit)
    else:
        text = "%s: %s [%s]" % (metric.group, metric.name, metric.unit)
    variant = variant_label(metric)
    return "%s (%s)" % (text, variant) if variant else text


def sysbench_test(metric_group, atomic_name=None):
    """The sysbench test a chart group or atomic action measures, else None."""
    if atomic_name is not None:
        if not atomic_name.startswith(SYSBENCH_ATOMIC_PREFIX):
            return None
        test = atomic_name[len(SYSBENCH_ATOMIC_PREFIX):].split("_")[0]
    else:
        words = metric_group.split()
        if len(words) < 2 or words[0] != "sysbench":
            return None
        test = words[1]
    return test if test in sysbench.TESTS else None


def describe_sysbench(test, dialect, workload=None):
    """:func:`sysbench.describe` of a result, from its plan entry when known.

    Without the entry (or when it does not fit the dialect) the description has
    no ``params``: test, dialect and the dialect's default mode only.
    """
    if workload is not None:
        try:
            return sysbench.describe(test, dialect, **workload.params)
        except (sysbench.SysbenchError, TypeError):
            pass
    try:
        mode = sysbench.run_mode(test, dialect)
    except sysbench.SysbenchError:
        mode = None
    return {"test": test, "dialect": dialect, "mode": mode}


def comparable(descriptions_a, descriptions_b):
    """``(True, "")`` when two groups' sysbench descriptions may be compared.

    :func:`sysbench.comparable` on each pair; parameters count only when both
    sides know them (results whose plan is unknown compare on test, dialect, mode).
    """
    for a in descriptions_a:
        for b in descriptions_b:
            if "params" not in a or "params" not in b:
                ok, why = sysbench.comparable(
                    {k: v for k, v in a.items() if k != "params"},
                    {k: v for k, v in b.items() if k != "params"})
            else:
                ok, why = sysbench.comparable(a, b)
            if not ok:
                return ok, why
    if len(descriptions_a) > 1 or len(descriptions_b) > 1:
        return False, "workload parameters differ within a group"
    return True, ""


def _plan_index(args):
    """``{chart label or atomic name: plan Workload}`` of a workload's sysbench plan."""
    items = args.get("workloads")
    try:
        workloads = plan_lib.parse_plan(items if items else plan_lib.default_workloads())
    except (plan_lib.PlanError, TypeError, AttributeError):
        return {}
    index = {}
    for workload in workloads:
        if workload.tool == "sysbench":
            index.setdefault(workload.label, workload)
            index.setdefault(workload.atomic_name, workload)
    return index


def direction(unit):
    """``"higher"`` or ``"lower"`` is better for a unit, None when unknown."""
    unit = (unit or "").strip()
    if unit.endswith("/s") or unit.endswith("/sec"):
        return "higher"
    if unit in _TIME_UNITS:
        return "lower"
    return None


def concurrency_of(workload):
    """Concurrency of a workload's runner; 1 for runners without one."""
    runner = workload.get("runner") or {}
    if "runner_type" not in workload and len(runner) == 1:
        # The JSON report's shape: {"constant": {...}}.
        inner = next(iter(runner.values()))
        if isinstance(inner, dict):
            runner = inner
    value = runner.get("concurrency")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)
    return 1


def _name_and_args(workload):
    if "name" in workload or "args" in workload:
        return workload.get("name") or "", workload.get("args") or {}
    scenario = workload.get("scenario") or {}
    if len(scenario) == 1:
        name, args = next(iter(scenario.items()))
        return name, args or {}
    return "", {}


def _needs_reboot_tag(name):
    """A reboot timing whose name does not say soft or hard."""
    lowered = name.lower()
    return "reboot" in lowered and "soft" not in lowered and "hard" not in lowered


def _base_name(name):
    """The name a fallback timing is counted under when an iteration lacks it."""
    return name.replace("_" + FALLBACK_PATH, "_soft")


def _number(value):
    """A finite float, else None."""
    kind = type(value)
    if kind is float:
        # x - x is 0 for finite x, NaN for inf and NaN: one cheap test.
        return value if value - value == 0 else None
    if kind is int:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


class _Group(object):
    __slots__ = ("values", "failures")

    def __init__(self):
        self.values = []
        self.failures = 0


_Entry = collections.namedtuple("_Entry", ["group", "base", "tag"])
_Entry.__doc__ = """Where a name's samples go: the _Group, the GroupKey a failed
iteration that lacks the name counts against, and (atomic actions) whether its
children are reboot timings to tag."""


class _Workload(object):
    """One workload being collected: how its samples are named, and the names done.

    A workload repeats the same names in every iteration: each is worked out once
    (``actions``: ActionKey -> _Entry; ``charts``: ChartKey -> {row name: _Entry}).
    """

    __slots__ = ("kind", "concurrency", "plain_suffix", "fallback_suffix", "plan",
                 "actions", "charts")

    def __init__(self, kind, concurrency, args):
        reboot_type = args.get(REBOOT_TYPE_ARG)
        reboot_type = reboot_type if isinstance(reboot_type, str) else None
        self.kind = kind
        self.concurrency = concurrency
        self.plain_suffix = " (%s)" % reboot_type if reboot_type else ""
        self.fallback_suffix = (" (%s, %s)" % (reboot_type, FALLBACK_TAG) if reboot_type
                                else " (%s)" % FALLBACK_TAG)
        self.plan = _plan_index(args)
        self.actions = {}
        self.charts = {}

    def key(self, metric, kind=None):
        """The GroupKey of ``metric`` in this workload (a chart's own kind if given)."""
        return GroupKey(self.kind if kind is None else kind, self.concurrency, metric)


class Collector(object):
    """Accumulates samples of many tasks; :meth:`result` computes the comparison."""

    def __init__(self):
        self.groups = {}         # GroupKey -> _Group
        self.metrics = {}        # Metric -> {"order": int, "top": bool}
        self.kinds = []
        self.reboot_paths = {}   # (kind, concurrency) -> {path: count}
        self.tasks = []
        self.workloads = []
        self.skipped = []
        self.facts = env_lib.FactsTally()
        self.descriptions = {}   # GroupKey -> [sysbench.describe()]
        self.density = density_data.DensityTally()
        self._titles = {}

    # -- collection -----------------------------------------------------------

    def _group(self, key, top=False):
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group()
            if key.kind not in self.kinds:
                self.kinds.append(key.kind)
            if key.metric not in self.metrics:
                self.metrics[key.metric] = {"order": len(self.metrics), "top": top}
        if top and not self.metrics[key.metric]["top"]:
            self.metrics[key.metric]["top"] = True
        return group

    def _title(self, title):
        if not isinstance(title, str):
            return None
        try:
            return self._titles[title]
        except KeyError:
            parsed = self._titles[title] = output.parse_chart_title(title)
            return parsed

    def add_task(self, task):
        self.tasks.append({"uuid": task.get("uuid"), "title": task.get("title")})
        for subtask in task.get("subtasks") or ():
            for workload in subtask.get("workloads") or ():
                self.add_workload(workload, task.get("uuid"))

    def _is_ours(self, name, args, iterations):
        if name.startswith(SCENARIO_PREFIX) or output.KIND_ARG in args:
            return True
        for iteration in iterations[:10]:
            for chart in (iteration.get("output") or {}).get("additive") or ():
                if self._title(chart.get("title")):
                    return True
        return False

    def add_workload(self, workload, task_uuid=None):
        name, args = _name_and_args(workload)
        iterations = workload.get("data") or []
        if not self._is_ours(name, args, iterations):
            self.skipped.append({"task": task_uuid, "scenario": name,
                                 "reason": "no kind argument, not a VMCT scenario and "
                                           "no rally-vmct chart"})
            return
        kind = output.kind_of(args)
        if not isinstance(kind, str):
            kind = str(kind)
        scope = _Workload(kind, concurrency_of(workload), args)
        self.workloads.append({"task": task_uuid, "scenario": name, "kind": kind,
                               "concurrency": scope.concurrency,
                               "iterations": len(iterations),
                               "failed": sum(1 for it in iterations if it.get("error"))})
        self._add_iterations(scope, name, iterations)

    def _add_iterations(self, scope, name, iterations):
        """Every iteration's samples and duration, then the failures of failed ones.

        A failed iteration counts against every metric the workload's other
        iterations produced and it did not.
        """
        durations = self._group(scope.key(
            Metric(SOURCE_ITERATION, ITERATION_GROUP, name, "s")))
        expected = set()
        missing = []   # the base keys each failed iteration produced
        for iteration in iterations:
            produced = self._add_iteration(iteration, scope)
            expected.update(produced)
            duration = _number(iteration.get("duration"))
            if iteration.get("error"):
                missing.append(produced)
                durations.failures += 1
            elif duration is None:
                durations.failures += 1
            else:
                durations.values.append(duration)
        for produced in missing:
            for key in expected - produced:
                self._group(key).failures += 1

    def _add_iteration(self, iteration, scope):
        """Record one iteration; returns the base keys it produced."""
        dialects = self._add_facts(iteration)
        charts, fell_back = self._contract_charts(iteration, scope.concurrency)
        # Reboot timings whose names do not say which path they took get the
        # workload's reboot type, and "fell back to hard" for iterations in which a
        # soft reboot did; names that already say it (vmct.reboot_soft,
        # vmct.reboot_soft_fell_back_to_hard: one per reboot) are kept as they are.
        suffix = scope.fallback_suffix if fell_back else scope.plain_suffix
        produced = set()
        self._add_actions(iteration.get("atomic_actions") or (), scope, suffix,
                          dialects.get(scope.kind), produced)
        for (chart_kind, group_name, unit), rows in charts:
            dialect = dialects.get(chart_kind, dialects.get(scope.kind))
            self._add_chart(ChartKey(chart_kind, group_name, unit, suffix, dialect), rows,
                            scope, produced)
        self._add_host_cost(iteration, scope)
        self.density.add_iteration(iteration)
        return produced

    def _add_host_cost(self, iteration, scope):
        """The host monitor's per-phase figures: a sample of a ``host`` group each."""
        for kind, group, name, unit, value in host_cost.samples(iteration,
                                                                scope.plain_suffix):
            metric = Metric(host_cost.SOURCE, group, name, unit)
            self._group(scope.key(metric, kind), True).values.append(value)

    def _add_facts(self, iteration):
        """Tally the iteration's facts tables; ``{kind: sysbench dialect or None}``."""
        dialects = {}
        for facts_kind, facts in self.facts.add_iteration(iteration).items():
            if facts_kind not in self.kinds:
                self.kinds.append(facts_kind)
            dialect = facts.get(env_lib.DIALECT_KEY)
            # "not used (no sysbench workload)" and the like are no dialect
            dialects[facts_kind] = dialect if dialect in sysbench.DIALECTS else None
        return dialects

    def _contract_charts(self, iteration, concurrency):
        """``([(parsed title, rows)], fell back)`` of an iteration's contract charts.

        The reboot path charts are counted here (not returned): whether a soft
        reboot fell back to hard names the iteration's reboot timings.
        """
        charts = []
        fell_back = False
        for chart in (iteration.get("output") or {}).get("additive") or ():
            if chart.get("chart_plugin") != "StatsTable":
                continue
            parsed = self._title(chart.get("title"))
            if not parsed:
                continue
            if parsed[1] == output.REBOOT_PATH_GROUP:
                fell_back |= self._add_reboot_paths(parsed[0], concurrency,
                                                    chart.get("data"))
            else:
                charts.append((parsed, chart.get("data") or ()))
        return charts, fell_back

    def _add_actions(self, actions, scope, suffix, dialect, produced):
        """Atomic actions, nested ones too, one sample per occurrence."""
        stack = [(action, False, True) for action in reversed(actions)
                 if not str(action.get("name")).startswith(density_output.ACTION_PREFIX)]
        while stack:
            action, parent_tag, top = stack.pop()
            key = ActionKey(str(action.get("name")), parent_tag, top, suffix, dialect)
            entry = scope.actions.get(key)
            if entry is None:
                entry = scope.actions[key] = self._action_entry(scope, key)
            started = _number(action.get("started_at"))
            finished = _number(action.get("finished_at"))
            if action.get("failed") or started is None or finished is None:
                entry.group.failures += 1
            else:
                entry.group.values.append(finished - started)
            produced.add(entry.base)
            children = action.get("children")
            if children:
                for child in reversed(children):
                    stack.append((child, entry.tag, False))

    def _add_chart(self, chart, rows, scope, produced):
        """The rows of one contract StatsTable (``chart``: its ChartKey)."""
        entries = scope.charts.get(chart)
        if entries is None:
            entries = scope.charts[chart] = {}
        for row in rows:
            if not isinstance(row, (list, tuple)) or len(row) < 2:
                continue
            try:
                entry = entries[row[0]]
            except KeyError:
                entry = entries[row[0]] = self._chart_entry(scope, chart, str(row[0]))
            except TypeError:    # unhashable row name
                entry = self._chart_entry(scope, chart, str(row[0]))
            value = _number(row[1])
            if value is None:
                entry.group.failures += 1
            else:
                entry.group.values.append(value)
            produced.add(entry.base)

    def _action_entry(self, scope, action):
        """Where the samples of an atomic action (an ActionKey) go."""
        tag = action.parent_tag or _needs_reboot_tag(action.name)
        if tag:
            metric = Metric(SOURCE_ATOMIC, ATOMIC_GROUP, action.name + action.suffix, "s")
            base = metric._replace(name=action.name + scope.plain_suffix)
        else:
            metric = Metric(SOURCE_ATOMIC, ATOMIC_GROUP, action.name, "s")
            base = metric._replace(name=_base_name(action.name))
        key, base_key = self._sysbench_variant(
            scope.key(metric), scope.key(base),
            sysbench_test(None, atomic_name=action.name), action.dialect,
            scope.plan.get(action.name))
        return _Entry(self._group(key, action.top), base_key, tag)

    def _chart_entry(self, scope, chart, name):
        """Where the samples of row ``name`` of a chart (a ChartKey) go."""
        if _needs_reboot_tag(chart.group):
            group, base_group = chart.group + chart.suffix, chart.group + scope.plain_suffix
        else:
            group, base_group = chart.group, _base_name(chart.group)
        key, base_key = self._sysbench_variant(
            scope.key(Metric(SOURCE_CHART, group, name, chart.unit), chart.kind),
            scope.key(Metric(SOURCE_CHART, base_group, _base_name(name), chart.unit),
                      chart.kind),
            sysbench_test(chart.group), chart.dialect, scope.plan.get(chart.group))
        return _Entry(self._group(key, True), base_key, False)

    def _sysbench_variant(self, key, base, test, dialect, workload):
        """GroupKeys ``key``, ``base`` keyed on the sysbench dialect and mode; records how.

        ``workload``: the plan entry the result came from, when known.
        """
        if not test or not dialect:
            return key, base
        description = describe_sysbench(test, dialect, workload)
        variant = {"dialect": dialect, "mode": description.get("mode")}
        key = key._replace(metric=key.metric._replace(**variant))
        base = base._replace(metric=base.metric._replace(**variant))
        known = self.descriptions.setdefault(key, [])
        if description not in known:
            known.append(description)
        return key, base

    def _add_reboot_paths(self, kind, concurrency, rows):
        counts = self.reboot_paths.get((kind, concurrency))
        if counts is None:
            counts = self.reboot_paths[(kind, concurrency)] = dict.fromkeys(
                output.REBOOT_PATHS, 0)
            if kind not in self.kinds:
                self.kinds.append(kind)
        fell_back = False
        for row in rows or ():
            if not isinstance(row, (list, tuple)) or len(row) < 2:
                continue
            value = _number(row[1])
            if value is None:
                continue
            path = str(row[0])
            counts[path] = counts.get(path, 0) + value
            fell_back |= path == FALLBACK_PATH and value > 0
        return fell_back

    # -- results --------------------------------------------------------------

    def result(self, baseline=None, confidence=stats.DEFAULT_CONFIDENCE):
        return _Result(self, baseline, confidence).as_dict()


class _Result(object):
    """Statistics, ratios and headlines of a :class:`Collector`."""

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
        source_rank = {SOURCE_ATOMIC: 0, SOURCE_CHART: 1, host_cost.SOURCE: 2,
                       SOURCE_ITERATION: 3}
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
        key = GroupKey(kind, concurrency, metric)
        summary = self.summaries[key]
        base_kind, base_c = baseline or self.baseline_of(kind, concurrency, metric)
        row = {"kind": kind, "concurrency": concurrency,
               "source": metric.source, "group": metric.group, "metric": metric.name,
               "unit": metric.unit, "dialect": metric.dialect,
               "sysbench_mode": metric.mode, "label": metric_label(metric),
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
        row["log_mean"], row["log_sd"] = (None, None) if logs is None else logs[1:]
        row.update(dict.fromkeys(RATIO_FIELDS + TEST_FIELDS))
        row.update(baseline_kind=base_kind, baseline_concurrency=base_c,
                   ratio_ci_unbounded=False, significant=False)
        base_key = GroupKey(base_kind, base_c, metric)
        why = self._not_compared(key, base_key)
        if why is not None:
            row["ratio_note"] = why
            return row
        row.update(inference.compare((summary, logs),
                                     (self.summaries[base_key], self.logs[base_key]),
                                     self.alpha))
        row.update(self._robustness(key, base_key))
        return row

    def _not_compared(self, key, base_key):
        """Why a group is compared with nothing, else None."""
        if base_key.kind is None:
            return "no kind has samples of this metric"
        if key.kind == base_key.kind:
            return "baseline"
        if key.metric.dialect:
            ok, why = comparable(self.c.descriptions.get(key, ()),
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
        atomic = {m.name: m for m in self.metrics if m.source == SOURCE_ATOMIC}
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
                if (metric.source == SOURCE_ATOMIC and text in metric.name
                        and self.c.metrics[metric]["top"]):
                    chosen.append((label, metric))
        for label, prefix, preferred in CHART_HEADLINES:
            groups = collections.OrderedDict()
            for metric in self.metrics:
                if metric.source == SOURCE_CHART and metric.group.startswith(prefix):
                    # one headline per chart group and sysbench dialect/mode
                    groups.setdefault((metric.group, metric.dialect, metric.mode),
                                      []).append(metric)
            for metrics in groups.values():
                by_name = {m.name: m for m in metrics}
                pick = next((by_name[n] for n in preferred if n in by_name), None)
                if pick is None:
                    # Else the first figure of the first rate chart of the group.
                    rates = [m for m in metrics if direction(m.unit) == "higher"]
                    pick = (rates or metrics)[0]
                chosen.append((label, pick))
        order = {label: i for i, label in enumerate(HEADLINE_ORDER)}
        return sorted(chosen, key=lambda item: order[item[0]])

    def host_cost_metrics(self):
        """[(phase, Metric)] of the host monitor's figures, phase by phase."""
        found = [(m.group[len(host_cost.GROUP_PREFIX):], m) for m in self.metrics
                 if m.source == host_cost.SOURCE]
        order = {phase: i for i, phase in enumerate(host_cost.PHASES)}
        return sorted(found, key=lambda item: order.get(item[0].split(" ")[0], len(order)))

    def lifecycle(self):
        phases = self.lifecycle_metrics()
        rows = []
        for kind in self.kinds:
            for concurrency in self.concurrencies:
                cells = {}
                for label, metric in phases:
                    summary = self.summaries.get(GroupKey(kind, concurrency, metric))
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
                rows = [row_of.get(GroupKey(kind, c, metric)) for c in self.concurrencies]
                levels = [{field: row[field] for field in SCALE_FIELDS} for row in rows
                          if row is not None and (row["n"] or row["failures"])]
                if levels:
                    kinds.append({"kind": kind, "levels": levels})
            if any(sum(1 for level in entry["levels"] if level["n"]) > 1
                   for entry in kinds):
                phases.append({"phase": label, "metric": metric.name,
                               "label": metric_label(metric), "unit": metric.unit,
                               "kinds": kinds})
        return phases

    def _metric_dict(self, metric, headline=None):
        return {"source": metric.source, "group": metric.group, "metric": metric.name,
                "unit": metric.unit, "dialect": metric.dialect,
                "sysbench_mode": metric.mode, "label": metric_label(metric),
                "direction": direction(metric.unit), "headline": headline,
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
                    key = GroupKey(kind, concurrency, metric)
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
                    row = row_of.get(GroupKey(kind, concurrency, metric))
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
                soft_total = counts.get("soft", 0) + counts.get(FALLBACK_PATH, 0)
                reboot_paths.append({
                    "kind": kind, "concurrency": concurrency, "counts": dict(counts),
                    "fallback_fraction": (counts.get(FALLBACK_PATH, 0) / soft_total
                                          if soft_total else None)})
        return reboot_paths

    def _seed_compare(self, candidate_row, baseline_row, alpha):
        """The rule at ``alpha`` between two group rows (the seed check's levels)."""
        metric = next(m for m in self.metrics
                      if seed_check.metric_key(self._metric_dict(m))
                      == seed_check.metric_key(candidate_row))
        key = GroupKey(candidate_row["kind"], candidate_row["concurrency"], metric)
        base_key = GroupKey(baseline_row["kind"], baseline_row["concurrency"], metric)
        why = self._not_compared(key, base_key)
        if why is not None:
            out = dict.fromkeys(inference.FIELDS)
            out.update(ratio_note=why, significant=False, ratio_ci_unbounded=False)
            return out
        return inference.compare((self.summaries[key], self.logs[key]),
                                 (self.summaries[base_key], self.logs[base_key]), alpha)

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
                "density": density_data.curves(self.c.density, self.kinds, self.confidence),
                "lifecycle": self.lifecycle(), "scale": self.scale(row_of),
                "reboot_paths": reboot_paths, "seed_check": seeds}


def compare(tasks_results, baseline=None, confidence=stats.DEFAULT_CONFIDENCE):
    """The comparison of Rally task results (list of detailed task dicts) as a dict.

    :param baseline: kind the ratios are relative to (default ``native`` when
        present, else the first kind seen)
    :param confidence: level of the confidence intervals (0.95)
    :raises ComparisonError: the baseline kind is not in the tasks
    """
    collector = Collector()
    for task in tasks_results:
        collector.add_task(task)
    return collector.result(baseline, confidence)


# The one list of CSV columns (render_csv writes exactly these, in this order):
# the group rows, then reboot path rows and facts rows (``value``; see render_csv).
CSV_COLUMNS = (IDENTITY_FIELDS + STAT_FIELDS + RATIO_FIELDS + TEST_FIELDS
               + VARIANT_FIELDS + ("value",))
