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
"""How rally-vmct scenarios label what they report, and how the exporter reads it back.

One place for the contract between the scenarios (``add_output`` charts, workload
arguments) and the ``vmct-comparison`` exporter. No Rally import: pure data.

* Every workload names its instance kind in its arguments: ``kind: {name: kvm, ...}``
  for Nova scenarios; ``VMCT.native_benchmark`` is kind ``native``.
* Every additive chart a scenario adds is a StatsTable titled
  ``"<kind>: <group> [<unit>]"``, e.g. ``"kvm: sysbench cpu [events/s]"`` with rows
  ``[["events_per_second", 1234.5]]``. Rally matches additive charts by position, so
  a scenario adds the same charts in the same order in every iteration.
* Lifecycle phases are Rally atomic actions (seconds): ``vmct.build``,
  ``vmct.wait_for_network``, ``vmct.delete``, ... and are read from there.
* Every benchmark iteration adds a complete Table titled ``"<kind>: instance facts"``
  with columns ``fact, value`` (strings): what produced its numbers. The keys the
  comparison page discloses per kind are :data:`DISCLOSED_FACTS`; ``emulated`` is
  ``"yes"`` when the instance's CPU is emulated (QEMU TCG), and the page warns then.
* With the ``vmct_host_monitor`` context, every iteration of a server scenario adds,
  per host its server was on, a complete Table ``"<kind>: host cost by phase on
  <host>"`` (:func:`host_cost_title`), a row per lifecycle phase; the exporter reads
  the columns named here (``HOST_COST_*``), :data:`NOT_MEASURED` where a host did not
  show the instance.
* ``VMCT.density`` adds complete Tables ``"<kind>: density"`` (a row per server; the
  exporter reads the ``DENSITY_*`` columns) and ``"<kind>: density limit"`` (one row:
  ``limit`` and ``reason``), and the additive chart ``"<kind>: density [instances]"``.

The writers (:mod:`rally_vmct.hostcost.iteration`, :mod:`rally_vmct.hostcost.density`)
and the readers (:mod:`rally_vmct.hostcost.phase_samples`,
:mod:`rally_vmct.hostcost.density_curves`) import these names, so a rename on one side
cannot silently drop a metric from the page.
"""

import re

NATIVE_KIND = "native"
KIND_ARG = "kind"

# Group of the chart that says which path each reboot took (unit: count).
REBOOT_PATH_GROUP = "reboot path"
REBOOT_PATHS = ("soft", "soft_fell_back_to_hard", "hard")

FACTS_TITLE_SUFFIX = ": instance facts"
# fact key -> what the comparison page calls it, in the order it shows them
DISCLOSED_FACTS = (
    ("virtualization", "virtualization"),        # e.g. "QEMU TCG (emulated)", "container"
    ("emulated", "CPU emulated"),                 # "yes" / "no"
    ("virtualization_evidence", "detected from"),
    ("nova_hypervisor_type", "Nova hypervisor type"),
    ("nova_hypervisor_version", "hypervisor version"),
    ("cpu_model", "CPU model"),
    ("vcpus", "vCPUs"),
    ("memory_kb", "memory (kB)"),
    ("kernel", "kernel"),
    ("sysbench", "sysbench"),
    ("sysbench dialect", "sysbench dialect"),
    ("netperf", "netperf"),
    ("netperf_path", "netperf path"),
    ("fileio_dir", "fileio directory"),
    ("fileio_fs", "fileio file system"),
    ("fileio_device", "fileio device"),
    ("fileio_direct", "fileio O_DIRECT"),
    ("runs", "runs per workload"),
)


# A table cell of a figure that was not measured.
NOT_MEASURED = "n/a"

# -- host cost: "<kind>: host cost by phase on <host>" -------------------------------
HOST_COST_TABLE = "host cost by phase"
HOST_COST_PHASE = "phase"
HOST_COST_HOST_CPU = "host CPU [CPU s]"
HOST_COST_INSTANCE_CPU = "instance CPU [CPU s]"
HOST_COST_PSS_MEAN = "instance PSS, mean [MiB]"
HOST_COST_CGROUP_MEAN = "container memory cgroup, mean [MiB]"
_HOST_COST_MARK = ": %s on " % HOST_COST_TABLE

# -- density: "<kind>: density", "<kind>: density limit", "<kind>: density [instances]"
DENSITY_TABLE_SUFFIX = ": density"
DENSITY_LIMIT_SUFFIX = ": density limit"
DENSITY_GROUP = "density"
DENSITY_UNIT = "instances"
DENSITY_REACHED = "instances_reached"
DENSITY_INSTANCES = "instances"
DENSITY_BOOT = "boot to reachable [s]"
DENSITY_PSS = "PSS per instance [MiB]"
DENSITY_CGROUP = "memory cgroup per instance [MiB]"
DENSITY_MEMORY_INCREASE = "host memory increase per instance [MiB]"
DENSITY_LIMIT = "limit"
DENSITY_REASON = "reason"


def host_cost_title(kind, host):
    """Title of a host's phase table: ``"kvm: host cost by phase on compute-1"``."""
    return "%s%s%s" % (kind, _HOST_COST_MARK, host)


def parse_host_cost_title(title):
    """``(kind, host)`` of a phase table's title, else None."""
    if not isinstance(title, str) or _HOST_COST_MARK not in title:
        return None
    kind, _, host = title.partition(_HOST_COST_MARK)
    return kind, host


def density_title(kind):
    return kind + DENSITY_TABLE_SUFFIX


def density_limit_title(kind):
    return kind + DENSITY_LIMIT_SUFFIX


def facts_title(kind):
    """Title of an iteration's facts table: ``"kvm: instance facts"``."""
    return kind + FACTS_TITLE_SUFFIX


def parse_facts_title(title):
    """The kind of a facts table's title, else None."""
    if title and title.endswith(FACTS_TITLE_SUFFIX):
        return title[:-len(FACTS_TITLE_SUFFIX)]
    return None


_TITLE_RE = re.compile(r"^(?P<kind>[^:\[\]]+): (?P<group>[^\[\]]+) \[(?P<unit>[^\[\]]+)\]$")


def chart_title(kind, group, unit):
    """Title of an additive chart: ``"kvm: sysbench cpu [events/s]"``."""
    return "%s: %s [%s]" % (kind, group, unit)


def parse_chart_title(title):
    """``(kind, group, unit)`` of a title made by :func:`chart_title`, else None."""
    match = _TITLE_RE.match(title or "")
    if not match:
        return None
    return match.group("kind"), match.group("group"), match.group("unit")


def stats_chart(kind, group, unit, rows, description=None):
    """An additive StatsTable for ``Scenario.add_output(additive=...)``.

    ``rows`` is a list of ``(metric name, value)`` in a fixed order.
    """
    chart = {"title": chart_title(kind, group, unit),
             "chart_plugin": "StatsTable",
             "data": [[name, value] for name, value in rows],
             "label": unit}
    if description:
        chart["description"] = description
    return chart


def kind_of(workload_args):
    """The kind label of a workload from its arguments (``native`` without one)."""
    kind = (workload_args or {}).get(KIND_ARG)
    if isinstance(kind, dict):
        return kind.get("name") or NATIVE_KIND
    return kind or NATIVE_KIND
