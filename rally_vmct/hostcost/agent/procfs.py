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
"""What instances cost their host: /proc and cgroup parsers, sample windows, phase summaries.

Two halves, stdlib only and no I/O of their own:

* **Host side** (used by :mod:`rally_vmct.hostcost.agent.sampler`, which ships
  this module with it over SSH, so it must stay stdlib-only and ASCII): parsers
  of ``/proc/stat``, ``/proc/meminfo``, ``/proc/PID/smaps_rollup``,
  ``/proc/PID/stat``, ``/proc/PID/cgroup``, ``/proc/self/mountinfo`` and the
  cgroup v2 (``memory.current``, ``memory.stat``, ``cpu.stat``) and v1
  (``memory.usage_in_bytes``, ``memory.stat``, ``cpuacct.usage``) files, and how
  an instance maps to what the host runs: the QEMU process whose command line has
  ``-uuid <server id>`` (libvirt names the domain after the instance), the Docker
  container ``nova-<server id>`` (nova-docker's ``container.container_name``); and
  the native host's process tree: ``/proc/net/tcp`` and ``tcp6`` LISTEN sockets, the
  ``socket:[inode]`` links of ``/proc/PID/fd``, parents and descendants.
* **Consumer side** (the iteration's output,
  :mod:`rally_vmct.hostcost.iteration`): the samples of a time window read
  from an agent's JSON-lines file (bisected, the file grows all task long), values
  interpolated at phase bounds, the phases of an iteration from its atomic
  actions, and per phase the host CPU seconds and split, memory mean and max, the
  instance's CPU seconds, memory and disk.

Figures: bytes and seconds everywhere (jiffies only in the raw CPU counters).
Host CPU "user" counts user + nice (guest time is inside user), "system" counts
system + irq + softirq; iowait and steal are their own; "busy" is all but idle
and iowait. A sample's counters are cumulative, so any window's CPU seconds are
the difference of the counters interpolated at its bounds.
"""

import json
import re

# /proc/stat's aggregate "cpu" line, in order (guest and guest_nice are inside user/nice).
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
# The host CPU split reported, from the fields above.
CPU_SPLIT = (("user", ("user", "nice")), ("system", ("system", "irq", "softirq")),
             ("iowait", ("iowait",)), ("steal", ("steal",)), ("idle", ("idle",)))
IDLE_FIELDS = ("idle", "iowait")

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_UUID_RE = re.compile("^%s$" % UUID)
# nova-docker names a server's container container.container_name(uuid) = "nova-" + uuid
# (nova-docker/nova_docker_vmct/container.py NAME_PREFIX; a rescue container has a suffix
# and is not the instance). That package imports Nova, so the prefix is repeated here and
# a unit test reads it from nova-docker's source.
CONTAINER_PREFIX = "nova-"

QEMU = "qemu"
DOCKER = "docker"
NATIVE = "native"
# /proc/net/tcp's "st" column of a listening socket (TCP_LISTEN).
TCP_LISTEN = "0A"

KIB = 1024
MIB = 1024 * 1024


# -- host side: parsers ------------------------------------------------------------

def parse_proc_stat(text):
    """``({field: jiffies}, btime)`` of ``/proc/stat``: the aggregate cpu line, boot time.

    :raises ValueError: no ``cpu`` line
    """
    cpu = btime = None
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "cpu":
            values = [int(v) for v in words[1:1 + len(CPU_FIELDS)]]
            values += [0] * (len(CPU_FIELDS) - len(values))
            cpu = dict(zip(CPU_FIELDS, values))
        elif words[0] == "btime" and len(words) > 1:
            btime = int(words[1])
    if cpu is None:
        raise ValueError("no aggregate 'cpu' line in /proc/stat")
    return cpu, btime


def cpu_total(cpu):
    return sum(cpu.get(field, 0) for field in CPU_FIELDS)


def cpu_busy(cpu):
    return cpu_total(cpu) - sum(cpu.get(field, 0) for field in IDLE_FIELDS)


def cpu_split(before, after):
    """Fractions of all CPUs' time between two cpu counters: user, system, iowait, steal, idle.

    None when no time passed (the same jiffy count).
    """
    total = cpu_total(after) - cpu_total(before)
    if total <= 0:
        return None
    return {name: sum(after.get(f, 0) - before.get(f, 0) for f in fields) / total
            for name, fields in CPU_SPLIT}


def parse_kb_fields(text):
    """``{key: bytes}`` of ``Key:   123 kB`` lines (meminfo, smaps_rollup, status)."""
    found = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        words = rest.split()
        if not sep or not words:
            continue
        try:
            value = int(words[0])
        except ValueError:
            continue
        found[key.strip()] = value * KIB if len(words) > 1 and words[1] == "kB" else value
    return found


def parse_meminfo(text):
    """``{total, available, used}`` bytes of ``/proc/meminfo`` (used = total - available).

    Kernels before 3.14 have no MemAvailable: MemFree + Buffers + Cached then.
    """
    fields = parse_kb_fields(text)
    if "MemTotal" not in fields:
        raise ValueError("no MemTotal in /proc/meminfo")
    total = fields["MemTotal"]
    available = fields.get("MemAvailable")
    if available is None:
        available = sum(fields.get(k, 0) for k in ("MemFree", "Buffers", "Cached"))
    return {"total": total, "available": available, "used": total - available}


def parse_smaps_rollup(text):
    """``{rss, pss}`` bytes of ``/proc/PID/smaps_rollup`` (Linux >= 4.14).

    :raises ValueError: no Rss or Pss line
    """
    fields = parse_kb_fields(text)
    if "Rss" not in fields or "Pss" not in fields:
        raise ValueError("no Rss/Pss in smaps_rollup")
    return {"rss": fields["Rss"], "pss": fields["Pss"]}


def parse_status_rss(text):
    """VmRSS bytes of ``/proc/PID/status``, or None (a kernel thread, a zombie)."""
    return parse_kb_fields(text).get("VmRSS")


def parse_pid_stat(text):
    """``{ticks, child_ticks, start, ppid}`` of ``/proc/PID/stat``.

    ``ticks`` is utime + stime, ``child_ticks`` cutime + cstime (the children it
    reaped), ``start`` starttime (clock ticks after boot). The fields are counted
    after the ``") "`` that closes the command name (which may hold spaces and
    parentheses).
    """
    rest = text[text.rindex(")") + 2:].split()
    # rest[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16,
    # cstime 17, starttime 22.
    return {"ticks": int(rest[11]) + int(rest[12]), "child_ticks": int(rest[13]) + int(rest[14]),
            "start": int(rest[19]), "ppid": int(rest[1])}


def parse_proc_cgroup(text):
    """``{controller: path}`` of ``/proc/PID/cgroup``; the cgroup v2 path under key ``""``."""
    found = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            found[""] = path
        for controller in controllers.split(","):
            if controller:
                found[controller] = path
    return found


def _unescape_mount(field):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo_cgroups(text):
    """Cgroup mounts of ``/proc/self/mountinfo``: ``{controller or "": (mount point, root)}``.

    Key ``""`` is the cgroup v2 (unified) mount, the others v1 controllers
    (``memory``, ``cpuacct``, ...) with the first mount of each.
    """
    found = {}
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point = _unescape_mount(fields[3]), _unescape_mount(fields[4])
        if tail[0] == "cgroup2":
            found.setdefault("", (point, root))
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                if option not in ("rw", "ro"):
                    found.setdefault(option, (point, root))
    return found


def cgroup_dir(mounts, proc_cgroups, controller):
    """``(version, directory)`` of a process's cgroup for ``controller``, or None.

    :param mounts: :func:`parse_mountinfo_cgroups`
    :param proc_cgroups: :func:`parse_proc_cgroup` of the process
    :param controller: v1 name (``memory``, ``cpuacct``); v2 is used when the
        controller has no v1 mount
    """
    if controller in mounts and controller in proc_cgroups:
        point, root = mounts[controller]
        version, path = 1, proc_cgroups[controller]
    elif "" in mounts and "" in proc_cgroups:
        point, root = mounts[""]
        version, path = 2, proc_cgroups[""]
    else:
        return None
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root):]
    return version, point.rstrip("/") + "/" + path.strip("/") if path.strip("/") else point


def parse_flat_keyed(text):
    """``{key: int}`` of ``key value`` lines (memory.stat, cpu.stat)."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2:
            try:
                found[words[0]] = int(words[1])
            except ValueError:
                pass
    return found


def cgroup_memory(version, usage_text, stat_text):
    """``{cgroup, anon, file}`` bytes of a memory cgroup.

    v2: ``memory.current`` and memory.stat ``anon``/``file``; v1:
    ``memory.usage_in_bytes`` (the kernel's approximate charge) and memory.stat
    ``total_rss``/``total_cache`` (``rss``/``cache`` without hierarchy totals).
    """
    stat = parse_flat_keyed(stat_text or "")
    if version == 2:
        anon, file_ = stat.get("anon"), stat.get("file")
    else:
        anon = stat.get("total_rss", stat.get("rss"))
        file_ = stat.get("total_cache", stat.get("cache"))
    return {"cgroup": int(usage_text.strip()), "anon": anon, "file": file_}


def cgroup_cpu_seconds(version, text):
    """CPU seconds of a cgroup: v2 ``cpu.stat`` usage_usec, v1 ``cpuacct.usage`` (ns)."""
    if version == 2:
        return parse_flat_keyed(text)["usage_usec"] / 1e6
    return int(text.strip()) / 1e9


def cgroup_memory_files(version):
    """``(usage file, stat file)`` names of a memory cgroup."""
    if version == 2:
        return "memory.current", "memory.stat"
    return "memory.usage_in_bytes", "memory.stat"


def cgroup_cpu_file(version):
    return "cpu.stat" if version == 2 else "cpuacct.usage"


def qemu_server_id(cmdline):
    """The server id of a QEMU command line (``-uuid ID``; NUL-separated bytes), or None."""
    args = cmdline.split(b"\0")
    for index, arg in enumerate(args[:-1]):
        if arg == b"-uuid":
            value = args[index + 1].decode("ascii", "replace").lower()
            if _UUID_RE.match(value):
                return value
    return None


def instance_dir(cmdline, server_id):
    """The directory named ``server_id`` that a QEMU command line's disks are in, or None.

    Nova's libvirt driver keeps an instance's disk, console log and config drive
    in ``<instances_path>/<server id>/`` (``-blockdev`` JSON or ``-drive file=``);
    its size is what the instance adds (the shared base image is not counted).
    """
    text = cmdline.replace(b"\0", b" ").decode("utf-8", "replace")
    match = re.search(r"(/[^\s,\"'=]*?/%s)/" % re.escape(server_id), text)
    return match.group(1) if match else None


def container_server_id(name, prefix=CONTAINER_PREFIX):
    """The server id of a nova-docker container name (``/nova-<id>``), or None."""
    name = name.lstrip("/")
    if not name.startswith(prefix):
        return None
    value = name[len(prefix):]
    return value if _UUID_RE.match(value) else None


def native_id(port):
    """The instance id of the native host's process tree listening on TCP ``port``."""
    return "%s:%d" % (NATIVE, port)


def native_port(instance_id):
    """The TCP port of a :func:`native_id`, or None (a server id)."""
    kind, sep, port = str(instance_id).partition(":")
    return int(port) if kind == NATIVE and sep and port.isdigit() else None


def parse_listening_inodes(text, port):
    """Inodes of the sockets of ``/proc/net/tcp`` (or ``tcp6``) that listen on ``port``.

    Any local address: a server bound to 127.0.0.1 and one bound to all addresses
    are both the port's listener.
    """
    found = set()
    for line in text.splitlines()[1:]:
        words = line.split()
        if len(words) < 10 or words[3] != TCP_LISTEN:
            continue
        try:
            local_port, inode = int(words[1].rpartition(":")[2], 16), int(words[9])
        except ValueError:
            continue
        if local_port == port and inode:
            found.add(inode)
    return found


def socket_inode(link):
    """The inode of a ``/proc/PID/fd/N`` link to a socket (``socket:[123]``), or None."""
    match = re.match(r"^socket:\[(\d+)\]$", link)
    return int(match.group(1)) if match else None


def tree_roots(holders, parents):
    """The listeners among the processes that hold a listening socket, sorted.

    A holder whose parent holds one too (a forked worker that kept the socket) is
    inside its parent's tree, not a root of its own.
    """
    return sorted(pid for pid in holders if parents.get(pid) not in holders)


def process_tree(parents, roots, skip=()):
    """``roots`` and all their descendants (pids), from ``{pid: ppid}``.

    The subtrees of the processes in ``skip`` are left out (the monitor's own
    SSH session when it runs under the listener it measures).
    """
    children = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(child for child in children.get(pid, ()) if child not in skip)
    return found


def ancestors(parents, pid):
    """``pid`` and its ancestors, from ``{pid: ppid}`` (up to the first one not in it)."""
    chain = []
    while pid in parents and pid not in chain:
        chain.append(pid)
        pid = parents[pid]
    return chain


# -- consumer side: samples of a window --------------------------------------------

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
    return cpu_busy(cpu) if cpu else None


def _field(name):
    def value(sample):
        cpu = host_cpu(sample)
        return sum(cpu.get(f, 0) for f in dict(CPU_SPLIT)[name]) if cpu else None
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
        summarized too (a server id, or :func:`native_id`)

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
    total = points(samples, lambda s: cpu_total(host_cpu(s)) if host_cpu(s) else None)
    split = {name: points(samples, _field(name)) for name, _ in CPU_SPLIT}
    used, available = points(samples, _mem("used")), points(samples, _mem("available"))
    zero = born(samples, server_id) if server_id else None
    inst = {key: points(samples, _inst(server_id, key)) if server_id else []
            for key in ("pss", "rss", "cgroup", "disk")}
    inst_cpu = points(samples, _inst(server_id, "cpu"), zero_at=zero) if server_id else []
    for name, intervals in phase_list:
        row = {"phase": name, "seconds": sum(b - a for a, b in intervals)}
        ticks, all_ticks = delta(busy, intervals), delta(total, intervals)
        row["host_cpu_s"] = None if ticks is None else ticks / hz
        for key, _ in CPU_SPLIT[:4]:
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
            split = cpu_split(host_cpu(previous), cpu)
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
