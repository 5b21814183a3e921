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
