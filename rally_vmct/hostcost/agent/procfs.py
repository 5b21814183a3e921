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
"""What runs on the host: /proc and cgroup parsers, and how an instance maps to processes.

Shipped with :mod:`.sampler` to each compute host (:func:`.sampler.payload`), so it
stays stdlib-only and ASCII: parsers of ``/proc/stat``, ``/proc/meminfo``,
``/proc/PID/smaps_rollup``, ``/proc/PID/stat``, ``/proc/PID/cgroup``,
``/proc/self/mountinfo`` and the cgroup v2 (``memory.current``, ``memory.stat``,
``cpu.stat``) and v1 (``memory.usage_in_bytes``, ``memory.stat``, ``cpuacct.usage``)
files, and how an instance maps to what the host runs: the QEMU process whose command
line has ``-uuid <server id>`` (libvirt names the domain after the instance), the
Docker container ``nova-<server id>`` (nova-docker's ``container.container_name``);
and the native host's process tree: ``/proc/net/tcp`` and ``tcp6`` LISTEN sockets, the
``socket:[inode]`` links of ``/proc/PID/fd``, parents and descendants. The consumer
side (windows of samples, phase summaries) is :mod:`rally_vmct.hostcost.windows`.

Figures: bytes and seconds everywhere (jiffies only in the raw CPU counters).
Host CPU "user" counts user + nice (guest time is inside user), "system" counts
system + irq + softirq; iowait and steal are their own; "busy" is all but idle
and iowait.
"""

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
