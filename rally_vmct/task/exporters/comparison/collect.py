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
"""Collect the samples of Rally task results into groups of kind x concurrency x metric.

Pure Python, no Rally API: :class:`Collector` takes what Rally hands an exporter
(``api.task.get(detailed=True)`` dicts, or the JSON report's shape) workload by
workload and keeps, per :class:`~.labels.GroupKey`, the values and the failures;
:mod:`.analyse` computes the statistics. Where each sample comes from and how
failures and reboot paths are counted: ``doc/source/design/comparison.rst``.
"""

import collections
import math
import numbers

from rally_vmct.hostcost import density
from rally_vmct.hostcost import density_curves
from rally_vmct.hostcost import phase_samples
from rally_vmct.task.exporters.comparison import environment as env_lib
from rally_vmct.task.exporters.comparison import labels
from rally_vmct.task import output
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import sysbench

SCENARIO_PREFIX = "VMCT."
REBOOT_TYPE_ARG = "reboot_type"
FALLBACK_PATH = "soft_fell_back_to_hard"
FALLBACK_TAG = "fell back to hard"

ActionKey = collections.namedtuple(
    "ActionKey", ["name", "parent_tag", "top", "suffix", "dialect"])
ActionKey.__doc__ = """What decides where an atomic action's samples go in a workload:
its name, whether a parent is a reboot timing (children are tagged like it), whether
it is top level (headlines take top-level actions only), the iteration's reboot
suffix and the kind's sysbench dialect."""
ChartKey = collections.namedtuple("ChartKey", ["kind", "group", "unit", "suffix", "dialect"])
ChartKey.__doc__ = """The same for a contract chart: its kind, group and unit (from the
title), the iteration's reboot suffix and the kind's sysbench dialect."""


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
    """A group's samples, its failures, and the run (task) each sample came from."""

    __slots__ = ("values", "failures", "by_run")

    def __init__(self):
        self.values = []
        self.failures = 0
        self.by_run = collections.OrderedDict()     # task uuid -> [value]

    def add(self, value, run):
        self.values.append(value)
        self.by_run.setdefault(run, []).append(value)


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
        return labels.GroupKey(self.kind if kind is None else kind, self.concurrency, metric)


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
        self.density = density_curves.DensityTally()
        self._titles = {}
        self._run = None         # the task whose samples are being added

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
        self._run = task_uuid
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
            labels.Metric(labels.SOURCE_ITERATION, labels.ITERATION_GROUP, name, "s")))
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
                durations.add(duration, self._run)
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
        for kind, group, name, unit, value in phase_samples.samples(iteration,
                                                                    scope.plain_suffix):
            metric = labels.Metric(phase_samples.SOURCE, group, name, unit)
            self._group(scope.key(metric, kind), True).add(value, self._run)

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
                 if not str(action.get("name")).startswith(density.ACTION_PREFIX)]
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
                entry.group.add(finished - started, self._run)
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
                entry.group.add(value, self._run)
            produced.add(entry.base)

    def _action_entry(self, scope, action):
        """Where the samples of an atomic action (an ActionKey) go."""
        tag = action.parent_tag or _needs_reboot_tag(action.name)
        metric = labels.Metric(labels.SOURCE_ATOMIC, labels.ATOMIC_GROUP, action.name, "s")
        if tag:
            metric = metric._replace(name=action.name + action.suffix)
            base = metric._replace(name=action.name + scope.plain_suffix)
        else:
            base = metric._replace(name=_base_name(action.name))
        key, base_key = self._sysbench_variant(
            scope.key(metric), scope.key(base),
            labels.sysbench_test(None, atomic_name=action.name), action.dialect,
            scope.plan.get(action.name))
        return _Entry(self._group(key, action.top), base_key, tag)

    def _chart_entry(self, scope, chart, name):
        """Where the samples of row ``name`` of a chart (a ChartKey) go."""
        if _needs_reboot_tag(chart.group):
            group, base_group = chart.group + chart.suffix, chart.group + scope.plain_suffix
        else:
            group, base_group = chart.group, _base_name(chart.group)
        metric = labels.Metric(labels.SOURCE_CHART, group, name, chart.unit)
        base = metric._replace(group=base_group, name=_base_name(name))
        key, base_key = self._sysbench_variant(
            scope.key(metric, chart.kind), scope.key(base, chart.kind),
            labels.sysbench_test(chart.group), chart.dialect, scope.plan.get(chart.group))
        return _Entry(self._group(key, True), base_key, False)

    def _sysbench_variant(self, key, base, test, dialect, workload):
        """GroupKeys ``key``, ``base`` keyed on the sysbench dialect and mode; records how.

        ``workload``: the plan entry the result came from, when known.
        """
        if not test or not dialect:
            return key, base
        description = labels.describe_sysbench(test, dialect, workload)
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
