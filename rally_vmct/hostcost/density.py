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
"""What ``VMCT.density`` records and reports: per server its boot, per step the host memory.

The tables the comparison exporter reads (:mod:`rally_vmct.hostcost.density_curves`;
their titles and the columns it reads are :mod:`rally_vmct.task.output`'s):

* complete Table ``"<kind>: density"`` (:data:`COLUMNS`): a row per server in boot
  order; ``instances`` counts the servers running once it was reachable, so
  ``instances - 1`` were already running while it booted. The memory columns are
  filled on the last server of each step (the host monitor's samples of the
  ``settle_seconds`` after it), :data:`NOT_MEASURED` elsewhere.
* complete Table ``"<kind>: density limit"`` (:data:`LIMIT_COLUMNS`): one row, the
  count reached, the target, and why the scenario stopped (:data:`TARGET_REACHED`,
  :data:`FIRST_FAILURE` with the failure's text, or :data:`TASK_ABORTED`).
* additive StatsTable ``"<kind>: density [instances]"``: ``instances_reached``.

Memory per step (:func:`step_cost`, from :mod:`rally_vmct.hostcost.windows`
summaries of a window): the hosts' memory used (MemTotal - MemAvailable, summed
over every monitored host), its increase since before the first create divided by
the instances running, and the mean PSS and container memory cgroup of the
instances the hosts show, per instance.
"""

import dataclasses

from rally_vmct.hostcost.agent import procfs
from rally_vmct.hostcost import iteration
from rally_vmct.hostcost import windows
from rally_vmct.task import output

TABLE_SUFFIX = output.DENSITY_TABLE_SUFFIX
LIMIT_SUFFIX = output.DENSITY_LIMIT_SUFFIX
GROUP = output.DENSITY_GROUP
UNIT = output.DENSITY_UNIT
REACHED = output.DENSITY_REACHED
TARGET_REACHED = "target reached"
FIRST_FAILURE = "first failure"
TASK_ABORTED = "task aborted"
NOT_MEASURED = output.NOT_MEASURED
STEP_ACTION = "vmct.density.step_%d"
DELETE_ACTION = "vmct.density.delete_all"
ACTION_PREFIX = "vmct.density."
# (column, key of a ServerRow or StepCost, scale)
COLUMNS = (
    (output.DENSITY_INSTANCES, "instances", None),
    ("step", "step", None),
    (output.DENSITY_BOOT, "boot_s", 1),
    ("build [s]", "build_s", 1),
    ("host memory used [MiB]", "used", 1 / procfs.MIB),
    (output.DENSITY_MEMORY_INCREASE, "increase_per_instance", 1 / procfs.MIB),
    (output.DENSITY_PSS, "pss_per_instance", 1 / procfs.MIB),
    (output.DENSITY_CGROUP, "cgroup_per_instance", 1 / procfs.MIB),
    ("instances found on the hosts", "found", None),
)
LIMIT_COLUMNS = ("instances reached", "max_servers", output.DENSITY_LIMIT,
                 output.DENSITY_REASON)
# The cell of a host memory increase no larger than the hosts' own fluctuation before the
# first create: other processes' memory moved as much as the instances' (a fall of the
# hosts' memory used during a fill is no negative cost of the instances).
WITHIN_FLUCTUATION = "within the hosts' fluctuation"


table_title = output.density_title
limit_title = output.density_limit_title


@dataclasses.dataclass
class ServerRow:
    """One server: how many ran once it was reachable, and its boot."""

    instances: int
    step: int
    boot_s: float        # create request -> reachable (ACTIVE with probe "none")
    build_s: float       # create request -> ACTIVE


@dataclasses.dataclass(frozen=True)
class Baseline:
    """The hosts' memory used before the first create (bytes): its mean and its range."""

    used: float
    spread: float = 0.0


@dataclasses.dataclass
class StepCost:
    """The hosts' memory over the window after a step (bytes; None: not measured)."""

    used: float | None = None
    increase_per_instance: float | None = None
    within_fluctuation: bool = False
    pss_per_instance: float | None = None
    cgroup_per_instance: float | None = None
    found: int = 0


@dataclasses.dataclass
class Fill:
    """The servers booted so far, the cost after each step, and why filling stopped."""

    max_servers: int
    rows: list = dataclasses.field(default_factory=list)
    costs: dict = dataclasses.field(default_factory=dict)    # instances -> StepCost
    reason: str = ""
    aborted: bool = False

    @property
    def reached(self):
        return len(self.rows)

    @property
    def limit(self):
        if self.aborted:
            return TASK_ABORTED
        return FIRST_FAILURE if self.reason else TARGET_REACHED

    def failed(self, error):
        self.reason = "%s: %s" % (type(error).__name__, str(error)[:500])

    def abort(self):
        self.aborted = True
        self.reason = "rally task abort: no server booted after %d" % self.reached


def steps(max_servers, step):
    """The sizes of the steps: ``step`` servers each, the last one what is left."""
    return [min(step, max_servers - done) for done in range(0, max_servers, step)]


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def step_cost(per_host, server_ids, window, baseline):
    """:class:`StepCost` of the instances ``server_ids`` over ``window`` (epoch bounds).

    :param per_host: ``[samples]`` of every monitored host (:func:`windows.read_window`)
    :param baseline: :class:`Baseline` before the first create, or None
    """
    phase = [("settle", [window])]
    used = [windows.summarize(samples, phase)[0]["mem_used_mean"] for samples in per_host]
    cost = StepCost(used=sum(used) if used and None not in used else None)
    pss, cgroup = [], []
    for server_id in server_ids:
        for samples in per_host:
            if any(windows.instance_of(s, server_id) for s in samples):
                row = windows.summarize(samples, phase, server_id)[0]
                pss.append(row["pss_mean"])
                cgroup.append(row["cgroup_mean"])
                cost.found += 1
                break
    cost.pss_per_instance, cost.cgroup_per_instance = _mean(pss), _mean(cgroup)
    if cost.used is not None and baseline is not None and server_ids:
        increase = cost.used - baseline.used
        if increase > baseline.spread:
            cost.increase_per_instance = increase / len(server_ids)
        else:
            cost.within_fluctuation = True
    return cost


def _spread(samples):
    used = [s["mem"]["used"] for s in samples if (s.get("mem") or {}).get("used") is not None]
    return max(used) - min(used) if used else 0.0


class Monitor:
    """The ``vmct_host_monitor`` context's sample files, read for windows of an iteration."""

    def __init__(self, info, wait=iteration.wait_for_sample):
        self.info = info
        self.wait = wait

    @classmethod
    def of(cls, context):
        """The monitor of a scenario's context, or None without the context."""
        info = (context or {}).get(iteration.KEY)
        return cls(info) if info else None

    def samples(self, t0, t1):
        """``[samples]`` of each host over [t0, t1], once a sample after t1 is there."""
        found = []
        for host in self.info["hosts"]:
            self.wait(host["path"], t1, 2 * self.info["interval"] + 1.5)
            with open(host["path"], "rb") as f:
                found.append(windows.read_window(f, t0, t1))
        return found

    def baseline(self, t0, t1):
        """:class:`Baseline` over [t0, t1], summed over hosts; None if their memory is unknown."""
        per_host = self.samples(t0, t1)
        used = step_cost(per_host, [], (t0, t1), None).used
        if used is None:
            return None
        return Baseline(used, sum(_spread(samples) for samples in per_host))

    def cost(self, server_ids, window, baseline):
        return step_cost(self.samples(*window), server_ids, window, baseline)


def _cell(value, scale):
    if scale is None or isinstance(value, str):
        return value
    return NOT_MEASURED if value is None else round(value * scale, 3)


def table(kind, fill, monitored):
    """The complete Table ``"<kind>: density"``."""
    rows = []
    for row in fill.rows:
        cost = fill.costs.get(row.instances)
        values = dict(dataclasses.asdict(row), **(dataclasses.asdict(cost) if cost else {}))
        if values.get("within_fluctuation"):
            values["increase_per_instance"] = WITHIN_FLUCTUATION
        rows.append([_cell(values.get(key), scale) if key in values else NOT_MEASURED
                     for _, key, scale in COLUMNS])
    about = ("the vmct_host_monitor context's samples of the settle time after each step"
             if monitored else "no vmct_host_monitor context: memory not measured")
    return {"title": table_title(kind), "chart_plugin": "Table",
            "description": "One row per server in boot order; 'instances' counts the servers "
                           "running once it was reachable. Memory after each step: %s. "
                           "Host memory used is summed over the monitored hosts; its increase "
                           "over the level before the first create is shown per instance "
                           "only when larger than the range of that level's samples "
                           "(else '%s')." % (about, WITHIN_FLUCTUATION),
            "data": {"cols": [name for name, _, _ in COLUMNS], "rows": rows}}


def limit_table(kind, fill):
    return {"title": limit_title(kind), "chart_plugin": "Table",
            "description": "How many servers of the kind ran at once, and why it stopped.",
            "data": {"cols": list(LIMIT_COLUMNS),
                     "rows": [[fill.reached, fill.max_servers, fill.limit,
                               fill.reason or "all %d servers reachable" % fill.max_servers]]}}


def curves(kind, fill):
    """Lines: boot time vs instances already running; memory per instance vs count."""
    boot = [["boot to reachable", [[r.instances - 1, round(r.boot_s, 3)] for r in fill.rows]],
            ["build (to ACTIVE)", [[r.instances - 1, round(r.build_s, 3)] for r in fill.rows]]]
    charts = [{"title": "%s: density: provision time vs instances already running [s]" % kind,
               "chart_plugin": "Lines", "data": boot, "label": "s",
               "axis_label": "instances already running"}]
    memory = []
    for name, key in (("PSS per instance", "pss_per_instance"),
                      ("memory cgroup per instance", "cgroup_per_instance"),
                      ("host memory increase per instance", "increase_per_instance")):
        points = [[count, round(getattr(cost, key) / procfs.MIB, 3)]
                  for count, cost in sorted(fill.costs.items()) if getattr(cost, key) is not None]
        if points:
            memory.append([name, points])
    if memory:
        charts.append({"title": "%s: density: memory per instance vs instances [MiB]" % kind,
                       "chart_plugin": "Lines", "data": memory, "label": "MiB",
                       "axis_label": "instances running"})
    return charts
