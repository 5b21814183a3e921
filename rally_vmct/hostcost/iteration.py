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
"""What the ``vmct_host_monitor`` context's samples show in an iteration's output.

:func:`charts` reads the samples of the iteration's window (its first atomic
action's start to its last one's end) from every monitored host's file and
returns Rally complete outputs, for each host the iteration's instance was found
on (every host when it was found on none, e.g. a kind Nova only pretends to run).
The instance is a server (its id), or for VMCT.native_benchmark the native
host's process tree (:func:`rally_vmct.hostcost.agent.procfs.native_id`: the
listener on the TCP port it logs in to, when the context's ``native_ports`` has
it), looked for only on the monitored hosts that are that machine:

* Lines ``"<kind>: host CPU on <host> [%]"``: user, system, iowait, steal (all
  CPUs) and the instance's share, between consecutive samples;
* Lines ``"<kind>: host memory on <host> [MiB]"``: used, available;
* Lines ``"<kind>: instance memory and disk on <host> [MiB]"`` (when found):
  PSS, RSS, the container's memory cgroup, disk;
* Table ``"<kind>: host cost by phase on <host>"`` (:data:`PHASE_COLUMNS`): a
  row per lifecycle phase (:func:`rally_vmct.hostcost.windows.phases`).

x is seconds since the iteration's first action started. Reading never fails
the iteration: a problem becomes a TextArea saying what it was.
"""

import time

from rally.common import logging

from rally_vmct.access import ssh
from rally_vmct.hostcost.agent import procfs
from rally_vmct.hostcost import windows
from rally_vmct.task import output
from rally_vmct.workloads import facts

LOG = logging.getLogger(__name__)

KEY = "vmct_host_monitor"      # the context (rally_vmct.hostcost.context)
LOCAL = "local"                 # the context's host spec of the Rally machine itself
NATIVE_PORTS = "native_ports"   # its config key: the native hosts' listeners measured
# (column, summary key, scale): MiB for bytes, percent for fractions.
PHASE_COLUMNS = (
    (output.HOST_COST_PHASE, "phase", None),
    ("seconds", "seconds", 1),
    (output.HOST_COST_HOST_CPU, "host_cpu_s", 1),
    ("user [%]", "user", 100),
    ("system [%]", "system", 100),
    ("iowait [%]", "iowait", 100),
    ("steal [%]", "steal", 100),
    ("host memory used, mean [MiB]", "mem_used_mean", 1 / procfs.MIB),
    ("host memory used, max [MiB]", "mem_used_max", 1 / procfs.MIB),
    ("host memory available, min [MiB]", "mem_available_min", 1 / procfs.MIB),
    (output.HOST_COST_INSTANCE_CPU, "cpu_s", 1),
    (output.HOST_COST_PSS_MEAN, "pss_mean", 1 / procfs.MIB),
    ("instance PSS, max [MiB]", "pss_max", 1 / procfs.MIB),
    ("instance RSS, max [MiB]", "rss_max", 1 / procfs.MIB),
    (output.HOST_COST_CGROUP_MEAN, "cgroup_mean", 1 / procfs.MIB),
    ("container memory cgroup, max [MiB]", "cgroup_max", 1 / procfs.MIB),
    ("instance disk, max [MiB]", "disk_max", 1 / procfs.MIB),
)
NOT_MEASURED = output.NOT_MEASURED
CPU_LINES = (("user", "cpu_user"), ("system", "cpu_system"), ("iowait", "cpu_iowait"),
             ("steal", "cpu_steal"), ("instance", "instance_cpu"))
MEMORY_LINES = (("used", "mem_used"), ("available", "mem_available"))
INSTANCE_LINES = (("PSS", "pss"), ("RSS", "rss"), ("memory cgroup", "cgroup"),
                  ("disk", "disk"))


def phase_table_title(kind, host):
    return output.host_cost_title(kind, host)


def window(actions, now=None):
    """``(start, end)`` (epoch) of an iteration's top-level atomic actions, or None."""
    starts = [a["started_at"] for a in actions if a.get("started_at") is not None]
    ends = [a.get("finished_at", now) for a in actions]
    ends = [e for e in ends if e is not None]
    if not starts or not ends:
        return None
    return min(starts), max(ends)


def wait_for_sample(path, end, timeout, clock=time.time, sleep=time.sleep):
    """Wait (at most ``timeout`` s) until the file has a sample at or after ``end``.

    Not at all when its last sample is older than ``end - timeout``: the
    sampler stopped, and every iteration would wait for nothing.
    """
    deadline = clock() + timeout
    while True:
        with open(path, "rb") as f:
            last = windows.last_time(f)
        if last is None or last >= end or last < end - timeout or clock() >= deadline:
            return last
        sleep(0.1)


def _cell(value, scale):
    if scale is None:
        return value
    if value is None:
        return NOT_MEASURED
    return round(value * scale, 3)


def phase_table(kind, host, summary, description):
    rows = [[_cell(row[key], scale) for _, key, scale in PHASE_COLUMNS] for row in summary]
    return {"title": phase_table_title(kind, host), "chart_plugin": "Table",
            "description": description,
            "data": {"cols": [name for name, _, _ in PHASE_COLUMNS], "rows": rows}}


def native_instance(host_spec):
    """The instance id of a native host: the process tree of its sshd (its spec's SSH port)."""
    return procfs.native_id(ssh.spec_port(host_spec))


def machine(address):
    """Who ``address`` is: ``local`` for this machine (a loopback address), else itself."""
    return LOCAL if address == LOCAL or facts.is_loopback(address) else address.lower()


def hosts_at(hosts, address):
    """The monitored hosts that are the machine at ``address``; all when none is known to be.

    A name and an address of one machine do not match (nothing is resolved):
    then the instance is looked for on every host, as a server is.
    """
    same = [host for host in hosts
            if host.get("address") and machine(host["address"]) == machine(address)]
    return same or hosts


def _where(instance_id, found):
    """What the charts' descriptions say the instance is, or why it is missing."""
    port = procfs.native_port(instance_id)
    if port is None:
        return ("instance %s: the QEMU process or container of the server" % instance_id
                if found else "the server (%s) was not found on this host: host figures only"
                % (instance_id or "not created"))
    if found:
        return ("%s: the process listening on TCP port %d and all its descendants (the "
                "native host's sshd, its sessions and what they run)" % (instance_id, port))
    return ("nothing listening on TCP port %d was measured on this host (the context's "
            "%s lacks it, or the process is not readable): host figures only"
            % (port, NATIVE_PORTS))


def _memory_about(instance_id):
    if procfs.native_port(instance_id) is not None:
        return ("PSS and RSS summed over the process tree (RSS counts a shared page once "
                "per process, PSS shares it out). ")
    return ("PSS and RSS of the QEMU process (of the container's processes), the "
            "container's memory cgroup charge, the instance's disk (allocated; the shared "
            "base image or image layers not counted). ")


def _lines(title, names, series, scale, label, description):
    data = [[name, [[x, round(y * scale, 3)] for x, y in series[key]]]
            for name, key in names if series[key]]
    if not data:
        return None
    return {"title": title, "chart_plugin": "Lines", "data": data, "label": label,
            "axis_label": "seconds since the iteration's first action", "description": description}


def host_charts(kind, host, samples, server_id, phase_list, t0, found):
    """The complete outputs of one host's samples over one iteration."""
    series = windows.series(samples, server_id if found else None, t0)
    about = ("%d samples of host %s; %s. With concurrency above 1 the host's figures "
             "include the other iterations' instances."
             % (len(samples), host, _where(server_id, found)))
    charts = [
        _lines("%s: host CPU on %s [%%]" % (kind, host), CPU_LINES, series, 1,
               "% of all CPUs", "Host CPU time between samples (user includes nice and "
               "guests, system irq and softirq). " + about),
        _lines("%s: host memory on %s [MiB]" % (kind, host), MEMORY_LINES, series,
               1 / procfs.MIB, "MiB", "MemTotal - MemAvailable, and MemAvailable. " + about),
    ]
    if found:
        charts.append(_lines(
            "%s: instance memory and disk on %s [MiB]" % (kind, host), INSTANCE_LINES, series,
            1 / procfs.MIB, "MiB", _memory_about(server_id) + about))
    summary = windows.summarize(samples, phase_list, server_id if found else None)
    charts.append(phase_table(kind, host, summary, (
        "Per phase of this iteration (its atomic actions; build = create request to "
        "ready, idle = no action running, iteration = all of it): host CPU seconds "
        "(all CPUs, busy) and split, host memory, and the instance's CPU seconds, "
        "memory and disk; counters interpolated at the phases' bounds. " + about)))
    return [chart for chart in charts if chart]


def charts(context, kind, server_id, actions, address=None):
    """Complete outputs of the host monitor for one iteration; [] without the context.

    :param server_id: the instance: a server id, or a native host's
        :func:`rally_vmct.hostcost.agent.procfs.native_id`
    :param address: the machine the instance is on (a native host's address):
        only the monitored hosts that are it (:func:`hosts_at`)
    """
    info = (context or {}).get(KEY)
    if not info:
        return []
    bounds = window(actions, time.time())
    if bounds is None:
        return []
    hosts = hosts_at(info["hosts"], address) if address else info["hosts"]
    try:
        return _charts(dict(info, hosts=hosts), kind, server_id, actions, bounds)
    except Exception as e:
        LOG.warning("%s: no host charts for this iteration: %s: %s"
                    % (KEY, type(e).__name__, e))
        return [{"title": "%s: host monitor" % kind, "chart_plugin": "TextArea",
                 "data": ["The host monitor's samples could not be read: %s: %s"
                          % (type(e).__name__, e)]}]


def add_charts(scenario_, kind, instance_id, address=None):
    """Add :func:`charts` of the scenario's iteration (its atomic actions so far) to its output."""
    for chart in charts(scenario_.context, kind, instance_id, scenario_.atomic_actions(),
                        address):
        scenario_.add_output(complete=chart)


def _charts(info, kind, server_id, actions, bounds):
    t0, t1 = bounds
    phase_list = windows.phases(actions, t1)
    per_host = []
    for host in info["hosts"]:
        wait_for_sample(host["path"], t1, 2 * info["interval"] + 1.5)
        with open(host["path"], "rb") as f:
            samples = windows.read_window(f, t0, t1)
        found = bool(server_id) and any(windows.instance_of(s, server_id) for s in samples)
        per_host.append((host["name"], samples, found))
    if any(found for _, _, found in per_host):
        per_host = [entry for entry in per_host if entry[2]]
    result = []
    for name, samples, found in per_host:
        result.extend(host_charts(kind, name, samples, server_id, phase_list, t0, found))
    return result
