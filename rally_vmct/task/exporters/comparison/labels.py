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
"""How the comparison names what it measures: metrics, group keys, labels.

A :class:`Metric` is what a group measures (an atomic action, a row of a contract
chart, an iteration's duration), a :class:`GroupKey` a kind at a concurrency
measuring it; sysbench results carry their dialect and run mode, so results of
different dialects or modes are never one group (``doc/source/design/comparison.rst``).
"""

import collections

from rally_vmct.workloads import sysbench

SOURCE_ATOMIC = "atomic"
SOURCE_CHART = "chart"
SOURCE_ITERATION = "iteration"
ATOMIC_GROUP = "atomic action"
ITERATION_GROUP = "iteration"

Metric = collections.namedtuple(
    "Metric", ["source", "group", "name", "unit", "dialect", "mode"],
    defaults=(None, None))
Metric.__doc__ = """What a group measures. ``dialect``/``mode``: the sysbench dialect
and run mode of sysbench metrics (from the iteration's facts), else None: results
of different dialects or modes are different metrics, never one cell."""
SYSBENCH_ATOMIC_PREFIX = "vmct.sysbench_"
GroupKey = collections.namedtuple("GroupKey", ["kind", "concurrency", "metric"])
GroupKey.__doc__ = """One group of samples: a kind at a concurrency measuring a Metric."""

_TIME_UNITS = {"s", "sec", "ms", "us", "µs", "ns", "min", "h"}


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


def direction(unit):
    """``"higher"`` or ``"lower"`` is better for a unit, None when unknown."""
    unit = (unit or "").strip()
    if unit.endswith("/s") or unit.endswith("/sec"):
        return "higher"
    if unit in _TIME_UNITS:
        return "lower"
    return None
