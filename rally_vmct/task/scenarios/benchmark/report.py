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
them up across iterations; each value is the mean over the workload's runs in the
iteration (min_runs, max_runs, cv_target). Complete outputs: a table of every metric,
a table of the instance's facts, one table of every run per workload
(``"<kind>: <workload> runs"``), and the raw output of any workload that failed.
"""

import collections

from rally_vmct.task import output


NO_SYSBENCH = "not used (no sysbench workload)"


class WorkloadsFailed(RuntimeError):
    """One or more workloads of an iteration failed (details in its output)."""


MEAN_DESCRIPTION = ("Each value is the mean over this iteration's runs of the workload "
                    "(task arguments min_runs, max_runs, cv_target); every run is in the "
                    "table '%s'.")


def metric_charts(kind, result):
    """Additive StatsTables of one workload result, one per unit, in metric order."""
    by_unit = collections.OrderedDict()
    for name, metric in result.metrics.items():
        by_unit.setdefault(metric.unit, []).append((name, metric.value))
    description = MEAN_DESCRIPTION % runs_title(kind, result)
    return [output.stats_chart(kind, result.workload.label, unit, rows, description)
            for unit, rows in by_unit.items()]


def runs_title(kind, result):
    return "%s: %s runs" % (kind, result.workload.label)


def runs_table(kind, result):
    """Complete Table of every run of one workload: run number, then each metric."""
    names = list(result.metrics)
    cols = ["run"] + ["%s [%s]" % (name, result.metrics[name].unit) for name in names]
    rows = [[index] + [run[name].value if name in run else "" for name in names]
            for index, run in enumerate(result.runs, 1)]
    return {"title": runs_title(kind, result), "chart_plugin": "Table",
            "description": "Every run of %s in this iteration; the number of runs follows "
                           "the CV of %s: %s. The additive charts show the mean."
                           % (result.workload.label, result.primary, result.stop_reason),
            "data": {"cols": cols, "rows": rows}}


def metrics_table(kind, results):
    rows = [[r.workload.label, name, metric.value, metric.unit]
            for r in results for name, metric in r.metrics.items()]
    return {"title": "%s: workload metrics" % kind, "chart_plugin": "Table",
            "data": {"cols": ["workload", "metric", "value", "unit"], "rows": rows}}


def facts_table(kind, facts, dialect, where):
    rows = [["where", where]] + [[key, "" if value is None else str(value)]
                                 for key, value in sorted(facts.items())]
    rows.append(["sysbench dialect", dialect or NO_SYSBENCH])
    return {"title": output.facts_title(kind), "chart_plugin": "Table",
            "data": {"cols": ["fact", "value"], "rows": rows}}


def report(scenario, kind, facts, dialect, results, where):
    """Add every chart of one iteration to ``scenario``; raise if a workload failed."""
    for result in results:
        for chart in metric_charts(kind, result):
            scenario.add_output(additive=chart)
    scenario.add_output(complete=metrics_table(kind, results))
    scenario.add_output(complete=facts_table(kind, facts, dialect, where))
    for result in results:
        if result.runs:
            scenario.add_output(complete=runs_table(kind, result))
    failed = [r for r in results if not r.ok]
    for result in failed:
        scenario.add_output(complete={
            "title": "%s: %s raw output (failed)" % (kind, result.workload.label),
            "chart_plugin": "TextArea", "data": result.raw_output().splitlines()})
    if failed:
        raise WorkloadsFailed("%d of %d workloads failed on %s: %s" % (
            len(failed), len(results), where, "; ".join(r.error for r in failed)))
