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
"""What each instance costs its host per lifecycle phase, from the host monitor's tables.

Every iteration of a VMCT server scenario run with the ``vmct_host_monitor``
context has, per host its server was on, a complete Table ``"<kind>: host cost
by phase on <host>"`` (:mod:`rally_vmct.task.output`, a row per
phase). :func:`samples` turns the rows of the phases in :data:`PHASES` into one
sample per iteration of each figure in :data:`FIGURES`; the comparison groups
them like any other metric (source ``host``, group ``host cost: <phase>``), so
they get the same N, mean ± SD, intervals, ratios and tests. Figures a host did
not measure (``n/a``: an instance it did not show) are no sample. Reboot phases
take the workload's reboot type (``reboot (soft)``): soft and hard are never one
group.
"""

from rally_vmct.task import output

SOURCE = "host"
GROUP_PREFIX = "host cost: "
PHASES = ("build", "reboot", "stop", "start", "benchmark", "delete")
# (column of the phase table, metric name, unit)
FIGURES = (
    (output.HOST_COST_HOST_CPU, "host CPU (all CPUs, busy)", "CPU s"),
    (output.HOST_COST_INSTANCE_CPU, "instance CPU", "CPU s"),
    (output.HOST_COST_PSS_MEAN, "instance PSS, mean", "MiB"),
    (output.HOST_COST_CGROUP_MEAN, "container memory cgroup, mean", "MiB"),
)
parse_title = output.parse_host_cost_title


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def samples(iteration, reboot_suffix=""):
    """``[(kind, group, metric name, unit, value)]`` of an iteration's phase tables."""
    found = []
    for chart in (iteration.get("output") or {}).get("complete") or ():
        parsed = parse_title(chart.get("title")) if isinstance(chart, dict) else None
        data = chart.get("data") if parsed else None
        if not isinstance(data, dict) or chart.get("chart_plugin") != "Table":
            continue
        cols = data.get("cols") or []
        for row in data.get("rows") or ():
            record = dict(zip(cols, row))
            phase = record.get(output.HOST_COST_PHASE)
            if phase not in PHASES:
                continue
            group = GROUP_PREFIX + phase + (reboot_suffix if phase == "reboot" else "")
            for column, name, unit in FIGURES:
                value = _number(record.get(column))
                if value is not None:
                    found.append((parsed[0], group, name, unit, value))
    return found
