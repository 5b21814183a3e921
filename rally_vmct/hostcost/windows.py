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
"""The host monitor's samples, read back: windows of a file, phases, per-phase summaries.

The consumer side of :mod:`rally_vmct.hostcost.agent` (never shipped to a host):
the samples of a time window read from an agent's JSON-lines file (bisected, the
file grows all task long), values interpolated at phase bounds, the phases of an
iteration from its atomic actions, and per phase the host CPU seconds and split,
memory mean and max, the instance's CPU seconds, memory and disk. Stdlib only, no I/O
of its own. A sample's counters are cumulative, so any window's CPU seconds are the
difference of the counters interpolated at its bounds.
"""

import json

from rally_vmct.hostcost.agent import procfs


def _sample_time(line):
    try:
        return float(json.loads(line)["t"])
    except (ValueError, KeyError, TypeError):
        return None


def _first_time_after(f, offset):
    """The time of the first complete line starting after ``offset`` (None at the end)."""
    f.seek(offset)
    if offset:
        f.readline()
    for line in f:
        if not line.endswith(b"\n"):
            return None
        t = _sample_time(line)
        if t is not None:
            return t
    return None


def read_window(f, t0, t1, block=4096):
    """Samples of an agent's JSON-lines file from just before ``t0`` to just after ``t1``.

    ``f`` is opened in binary mode; lines are in time order, the last one may be
    incomplete (the agent is writing it) and is skipped. The offset to start from
    is bisected, so reading a window costs the same however long the task ran.
    Returned: the ``"sample"`` lines (dicts) with t in [t0, t1], plus the last one
    before t0 and the first one after t1 when there are (to interpolate at the bounds).
    """
    size = f.seek(0, 2)
    lo, hi = 0, size
    while hi - lo > block:
        mid = (lo + hi) // 2
        t = _first_time_after(f, mid)
        if t is None or t >= t0:
            hi = mid
        else:
            lo = mid
    f.seek(lo)
    if lo:
        f.readline()
    before, found = None, []
    for line in f:
        if not line.endswith(b"\n"):
            break
        try:
            sample = json.loads(line)
        except ValueError:
            continue
        if sample.get("type") != "sample":
            continue
        if sample["t"] < t0:
            before = sample
            continue
        found.append(sample)
        if sample["t"] > t1:
            break
    return ([before] if before else []) + found


def read_header(f):
    """The agent's ``"start"`` line (dict) at the top of its file, or None."""
    f.seek(0)
    line = f.readline()
    try:
        header = json.loads(line) if line.endswith(b"\n") else None
    except ValueError:
        return None
    return header if header and header.get("type") == "start" else None


def last_time(f, block=4096):
    """Time of the last complete sample line of the file, or None."""
    size = f.seek(0, 2)
    offset = max(0, size - block)
    while True:
        f.seek(offset)
        lines = f.read(size - offset).split(b"\n")[:-1]   # the part after the last \n
        if offset:
            lines = lines[1:]
        for line in reversed(lines):
            t = _sample_time(line)
            if t is not None:
                return t
        if offset == 0:
            return None
        offset = max(0, offset - block)


# -- consumer side: values over time -----------------------------------------------

def host_cpu(sample):
    return sample.get("cpu")


def instance_of(sample, server_id):
    return (sample.get("instances") or {}).get(server_id)


def points(samples, value, zero_at=None):
    """``[(t, v)]`` of the samples where ``value(sample)`` is not None.

    ``zero_at``: a time at which the value was 0 (a counter's start), put first
    when it comes before every point.
    """
    found = [(s["t"], value(s)) for s in samples]
    found = [(t, v) for t, v in found if v is not None]
    if zero_at is not None and (not found or zero_at < found[0][0]):
        found.insert(0, (zero_at, 0.0))
    return found


def interpolate(pts, t):
    """Value at ``t`` of points ``[(t, v)]`` (sorted): linear between them, clamped outside."""
    if not pts:
        return None
    if t <= pts[0][0]:
        return pts[0][1]
    if t >= pts[-1][0]:
        return pts[-1][1]
    lo, hi = 0, len(pts) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pts[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (ta, va), (tb, vb) = pts[lo], pts[hi]
    return va + (vb - va) * (t - ta) / (tb - ta) if tb > ta else vb


def delta(pts, intervals):
    """Increase of a counter over ``intervals`` [(t0, t1)], interpolated; None without points."""
    if not pts:
        return None
    return sum(interpolate(pts, b) - interpolate(pts, a) for a, b in intervals)


def gauge(pts, intervals):
    """``(time-weighted mean, max)`` of a gauge over ``intervals``; (None, None) without points.

    The mean integrates the piecewise linear curve through the points; the max
    is over the points inside the intervals and the interpolated bounds.
    """
    if not pts:
        return None, None
    area = length = 0.0
    peak = None
    for a, b in intervals:
        if b <= a:
            continue
        inside = [(t, v) for t, v in pts if a < t < b]
        curve = [(a, interpolate(pts, a))] + inside + [(b, interpolate(pts, b))]
        for (ta, va), (tb, vb) in zip(curve, curve[1:]):
            area += (va + vb) / 2 * (tb - ta)
        length += b - a
        top = max(v for _, v in curve)
        peak = top if peak is None else max(peak, top)
    if not length:
        return None, None
    return area / length, peak


# -- consumer side: phases ----------------------------------------------------------

# Top-level atomic action name -> phase; the first rule that matches wins (exact
# names, then prefixes); an action no rule names is a phase of its own name.
BUILD = "build"
IDLE = "idle"
ITERATION = "iteration"
PHASE_RULES = (
    (BUILD, ("vmct.build", "vmct.wait_for_network", "vmct.wait_for_ssh"), ()),
    ("reboot", (), ("vmct.reboot_",)),
    ("stop", ("vmct.stop",), ()),
    ("start", ("vmct.start",), ()),
    ("delete", ("vmct.delete",), ()),
    ("benchmark", (), ("vmct.sysbench_", "vmct.netperf_")),
)


def phase_of(action_name):
    for phase, names, prefixes in PHASE_RULES:
        if action_name in names or action_name.startswith(prefixes or ("\0",)):
            return phase
    return action_name[len("vmct."):] if action_name.startswith("vmct.") else action_name


def phases(actions, end=None):
    """``[(phase, [(t0, t1), ...])]`` of an iteration's top-level atomic actions, in order.

    Build is create request -> ready (vmct.build, wait_for_network, wait_for_ssh),
    reboot every vmct.reboot_*, benchmark the sysbench and netperf workloads;
    ``idle`` is the time between the first action's start and the last one's end
    that no action covers, ``iteration`` the whole of it. An action still open
    (no ``finished_at``) ends at ``end`` (or is left out without it).
    """
    spans = []
    for action in actions:
        start, finish = action.get("started_at"), action.get("finished_at", end)
        if start is None or finish is None or finish < start:
            continue
        spans.append((phase_of(action["name"]), start, finish))
    if not spans:
        return []
    grouped = {}
    for name, start, finish in spans:
        grouped.setdefault(name, []).append((start, finish))
    first, last = min(s for _, s, _ in spans), max(f for _, _, f in spans)
    idle, cursor = [], first
    for _, start, finish in sorted(spans, key=lambda span: span[1]):
        if start > cursor:
            idle.append((cursor, start))
        cursor = max(cursor, finish)
    found = list(grouped.items())
    if idle:
        found.append((IDLE, idle))
    found.append((ITERATION, [(first, last)]))
    return found


# -- consumer side: summaries -------------------------------------------------------

def _busy(sample):
    cpu = host_cpu(sample)
    return procfs.cpu_busy(cpu) if cpu else None


def _field(name):
    def value(sample):
        cpu = host_cpu(sample)
        return sum(cpu.get(f, 0) for f in dict(procfs.CPU_SPLIT)[name]) if cpu else None
    return value


def _mem(key):
    def value(sample):
        return (sample.get("mem") or {}).get(key)
    return value


def _inst(server_id, key):
    def value(sample):
        entry = instance_of(sample, server_id)
        return None if entry is None else entry.get(key)
    return value


def born(samples, server_id):
    """When the instance's first process started (epoch), or None: its counters' zero."""
    for sample in samples:
        entry = instance_of(sample, server_id)
        if entry and entry.get("born") is not None:
            return entry["born"]
    return None


def summarize(samples, phase_list, server_id=None):
    """Per phase: ``{phase, seconds, host_cpu_s, user, system, iowait, steal, ...}``.

    :param samples: the agent's sample dicts (time order; :func:`read_window`)
    :param phase_list: :func:`phases`
    :param server_id: the instance whose process, container or process tree is
        summarized too (a server id, or :func:`procfs.native_id`)

    Keys: ``seconds``; host ``host_cpu_s`` (busy CPU seconds, all CPUs), the
    fractions ``user``, ``system``, ``iowait``, ``steal`` (None when no CPU time
    was counted), ``mem_used_mean``/``mem_used_max``, ``mem_available_min``
    (bytes); instance ``cpu_s``, ``pss_mean``/``pss_max``, ``rss_max``,
    ``cgroup_mean``/``cgroup_max`` (container memory cgroup), ``disk_max``
    (None where the host did not show the instance).
    """
    rows = []
    hz = next((s["hz"] for s in samples if s.get("hz")), 100)
    busy = points(samples, _busy)
    total = points(samples, lambda s: procfs.cpu_total(host_cpu(s)) if host_cpu(s) else None)
    split = {name: points(samples, _field(name)) for name, _ in procfs.CPU_SPLIT}
    used, available = points(samples, _mem("used")), points(samples, _mem("available"))
    zero = born(samples, server_id) if server_id else None
    inst = {key: points(samples, _inst(server_id, key)) if server_id else []
            for key in ("pss", "rss", "cgroup", "disk")}
    inst_cpu = points(samples, _inst(server_id, "cpu"), zero_at=zero) if server_id else []
    for name, intervals in phase_list:
        row = {"phase": name, "seconds": sum(b - a for a, b in intervals)}
        ticks, all_ticks = delta(busy, intervals), delta(total, intervals)
        row["host_cpu_s"] = None if ticks is None else ticks / hz
        for key, _ in procfs.CPU_SPLIT[:4]:
            part = delta(split[key], intervals)
            row[key] = part / all_ticks if part is not None and all_ticks else None
        row["mem_used_mean"], row["mem_used_max"] = gauge(used, intervals)
        low = gauge([(t, -v) for t, v in available], intervals)[1]
        row["mem_available_min"] = None if low is None else -low
        row["cpu_s"] = delta(inst_cpu, intervals) if inst_cpu else None
        row["pss_mean"], row["pss_max"] = gauge(inst["pss"], _clip(inst["pss"], intervals))
        row["rss_max"] = gauge(inst["rss"], _clip(inst["rss"], intervals))[1]
        row["cgroup_mean"], row["cgroup_max"] = gauge(inst["cgroup"],
                                                      _clip(inst["cgroup"], intervals))
        row["disk_max"] = gauge(inst["disk"], _clip(inst["disk"], intervals))[1]
        rows.append(row)
    return rows


def _clip(pts, intervals):
    """``intervals`` cut to [first point, last point]: when an instance's gauge existed.

    An instance's memory is not there before its process starts or after it is
    gone; its mean over a phase is over the part of the phase it existed in,
    not extrapolated over the rest.
    """
    if not pts:
        return []
    first, last = pts[0][0], pts[-1][0]
    return [(max(a, first), min(b, last)) for a, b in intervals
            if min(b, last) > max(a, first)]


def series(samples, server_id=None, t0=0.0):
    """Lines over time: ``{name: [(t - t0, value)]}``.

    ``cpu_user``, ``cpu_system``, ``cpu_iowait``, ``cpu_steal`` (percent of all
    CPUs between a sample and the previous one); ``instance_cpu`` (the instance's
    share of all CPUs, percent); ``mem_used``, ``mem_available`` (bytes);
    instance ``pss``, ``rss``, ``cgroup``, ``disk`` (bytes).
    """
    out = {key: [] for key in ("cpu_user", "cpu_system", "cpu_iowait", "cpu_steal",
                               "instance_cpu", "mem_used", "mem_available",
                               "pss", "rss", "cgroup", "disk")}
    previous = None
    for sample in samples:
        x = round(sample["t"] - t0, 3)
        cpu = host_cpu(sample)
        if previous is not None and cpu and host_cpu(previous):
            split = procfs.cpu_split(host_cpu(previous), cpu)
            if split:
                for key in ("user", "system", "iowait", "steal"):
                    out["cpu_" + key].append((x, round(100 * split[key], 2)))
            ncpu = sample.get("ncpu") or previous.get("ncpu")
            now, before = (_inst(server_id, "cpu")(s) for s in (sample, previous))
            dt = sample["t"] - previous["t"]
            if server_id and now is not None and before is not None and ncpu and dt > 0:
                out["instance_cpu"].append(
                    (x, round(100 * max(0.0, now - before) / (dt * ncpu), 2)))
        mem = sample.get("mem") or {}
        for key in ("used", "available"):
            if mem.get(key) is not None:
                out["mem_" + key].append((x, mem[key]))
        entry = instance_of(sample, server_id) if server_id else None
        for key in ("pss", "rss", "cgroup", "disk"):
            if entry and entry.get(key) is not None:
                out[key].append((x, entry[key]))
        previous = sample
    return out
