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
"""Turns workload results into Rally output charts, the same way for every kind.

Additive charts follow ``rally_vmct.task.output``: one StatsTable per workload and
unit, titled ``"<kind>: <workload> [<unit>]"``, always in plan order, so Rally lines
them up across iterations. Complete outputs: a table of every metric, a table of the
instance's facts, and the raw output of any workload that failed.
"""

import collections

from rally_vmct.task import output


class WorkloadsFailed(RuntimeError):
    """One or more workloads of an iteration failed (details in its output)."""


def metric_charts(kind, result):
    """Additive StatsTables of one workload result, one per unit, in metric order."""
    by_unit = collections.OrderedDict()
    for name, metric in result.metrics.items():
        by_unit.setdefault(metric.unit, []).append((name, metric.value))
    return [output.stats_chart(kind, result.workload.label, unit, rows)
            for unit, rows in by_unit.items()]


def metrics_table(kind, results):
    rows = [[r.workload.label, name, metric.value, metric.unit]
            for r in results for name, metric in r.metrics.items()]
    return {"title": "%s: workload metrics" % kind, "chart_plugin": "Table",
            "data": {"cols": ["workload", "metric", "value", "unit"], "rows": rows}}


def facts_table(kind, facts, dialect, where):
    rows = [["where", where]] + [[key, "" if value is None else str(value)]
                                 for key, value in sorted(facts.items())]
    if dialect:
        rows.append(["sysbench dialect", dialect])
    return {"title": output.facts_title(kind), "chart_plugin": "Table",
            "data": {"cols": ["fact", "value"], "rows": rows}}


def report(scenario, kind, facts, dialect, results, where):
    """Add every chart of one iteration to ``scenario``; raise if a workload failed."""
    for result in results:
        for chart in metric_charts(kind, result):
            scenario.add_output(additive=chart)
    scenario.add_output(complete=metrics_table(kind, results))
    scenario.add_output(complete=facts_table(kind, facts, dialect, where))
    failed = [r for r in results if not r.ok]
    for result in failed:
        scenario.add_output(complete={
            "title": "%s: %s raw output (failed)" % (kind, result.workload.label),
            "chart_plugin": "TextArea", "data": result.raw_output().splitlines()})
    if failed:
        raise WorkloadsFailed("%d of %d workloads failed on %s: %s" % (
            len(failed), len(results), where, "; ".join(r.error for r in failed)))
