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
"""The host monitor's sampler: one JSON line per sample of a compute host, about once a second.

Stdlib only (Python >= 3.6 on the host), so it runs on any compute host:
``vmct_host_monitor`` ships it with :mod:`rally_vmct.hostcost.agent.procfs` over
SSH (or to a local interpreter) as :func:`command` and :func:`payload`::

    python3 -u -c BOOTSTRAP [ARGS]     stdin: both modules, then kept open

By hand, from a source tree: ``python3 rally_vmct/hostcost/agent/sampler.py
--count 3``. ARGS:

``--interval S`` (1.0) seconds between samples; ``--disk-interval S`` (10.0)
between disk usage walks; ``--docker-socket PATH`` (/var/run/docker.sock; ""
for none); ``--container-prefix P`` (nova-: containers named P + server id);
``--server ID`` (repeatable) only these instances (default every
Nova instance found); ``--native-port PORT`` (repeatable) also the native
host's process tree listening on TCP PORT (below); ``--watch-stdin`` exit
when stdin is closed (the bytes read are ignored); ``--parent-pid PID`` exit
when the agent's parent is no longer PID (it died: the agent was reparented);
``--exit-with-parent`` the same with the parent it has when it starts;
``--count N`` / ``--duration S`` stop after N samples or S seconds. It also
exits when stdout is closed.

Output: first ``{"t", "type": "start", "host", "hz", "ncpu", "cgroup",
"docker", ...}``, then per sample ``{"t", "type": "sample", "hz", "ncpu", "cpu":
{user, nice, system, idle, iowait, irq, softirq, steal} (jiffies, all CPUs),
"mem": {total, available, used} (bytes), "instances": {server id: {...}}}`` and
``"errors"`` (each new one once). An instance is the QEMU process whose command
line has ``-uuid <server id>`` (``kind: qemu``: ``pss``, ``rss`` from
smaps_rollup, ``cpu`` utime + stime, ``disk`` the instance directory's
allocated bytes) or the running Docker container ``nova-<server id>`` found
through the engine's API on its socket (``kind: docker``: ``cgroup``,
``anon``, ``file`` of its memory cgroup, ``pss``/``rss`` summed over its
processes, ``cpu`` of its cpu cgroup, ``disk`` the allocated bytes of its
writable layer). With ``--native-port PORT``, instance ``native:PORT``
(``kind: native``) is what a bare process set costs the host: the process
holding the socket that listens on TCP PORT (IPv4 or IPv6, any address; found
through /proc/net/tcp, tcp6 and the ``socket:[inode]`` links of /proc/PID/fd),
e.g. the native host's sshd, with all its descendants (SSH sessions and what
they run: sysbench, netperf), found again when the socket or the process
changes. ``pss`` and ``rss`` are summed over that tree (smaps_rollup; RSS counts
shared pages once per process, PSS shares them out), ``cpu`` is utime + stime
+ cutime + cstime of its live processes (a child reaped inside the tree moves
its time into its parent's cutime, so it stays counted), ``processes`` their
number; no ``disk`` (a bare host has no instance directory). A daemon that
leaves the tree (netserver detaching) is not counted from then on, and the
agent's own SSH session under that listener never is. ``cpu`` is in seconds and
counts on across restarts (a reboot's new QEMU process or container cgroup, a
restarted listener) and never goes down (a process leaving a native tree keeps
what it used); ``born`` is when the first process the agent saw started
(epoch), where ``cpu`` was 0; ``pid`` the QEMU or container init process or the
listener. Times are this host's epoch seconds. Run as root (or as the user
running QEMU or the listener): other users' smaps_rollup and fd links are
unreadable.
"""

import argparse
import http.client
import json
import os
import platform
import select
import socket
import sys
import time
import urllib.parse

try:
    from rally_vmct.hostcost.agent import procfs
except ImportError:     # shipped alone: BOOTSTRAP loaded it as "procfs" first
    import procfs

VERSION = 1
DEFAULT_SOCKET = "/var/run/docker.sock"
# Seconds after which an instance no longer seen is forgotten (its CPU count with it).
FORGET_AFTER = 600.0

# Loads the modules on stdin ("COUNT\n", then per module "NAME SIZE\n" + source)
# and runs the last one's main(argv); stdin stays open for --watch-stdin.
BOOTSTRAP = (
    "import sys,types\n"
    "b=sys.stdin.buffer\n"
    "for _ in range(int(b.readline())):\n"
    " n,k=b.readline().split()\n"
    " m=types.ModuleType(n.decode())\n"
    " sys.modules[m.__name__]=m\n"
    " exec(compile(b.read(int(k)),m.__name__+'.py','exec'),m.__dict__)\n"
    "sys.exit(m.main(sys.argv[1:]))\n")


def payload():
    """What :data:`BOOTSTRAP` reads on stdin: the agent's modules, this one last (ASCII bytes).

    Only :mod:`.procfs` and this module: the consumer side
    (:mod:`rally_vmct.hostcost.windows`) never runs on the host, so it is not shipped.
    """
    parts = []
    for name, module in (("procfs", procfs), ("sampler", sys.modules[__name__])):
        with open(module.__file__, "rb") as f:
            source = f.read()
        source.decode("ascii")      # the SSH relay counts characters as bytes
        parts.append(b"%s %d\n" % (name.encode(), len(source)) + source)
    return b"%d\n" % len(parts) + b"".join(parts)


def command(python="python3", args=()):
    """argv that runs the agent from :func:`payload` on stdin."""
    return [python, "-u", "-c", BOOTSTRAP] + list(args)


class DockerError(Exception):
    """The Docker engine's API answered an error or could not be reached."""


class _UnixHTTPConnection(http.client.HTTPConnection):

    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


class DockerAPI:
    """The few Docker engine API calls the agent needs, over its UNIX socket (no CLI)."""

    def __init__(self, path, timeout=5.0, prefix=procfs.CONTAINER_PREFIX):
        self.path = path
        self.timeout = timeout
        self.prefix = prefix

    def get(self, url):
        conn = _UnixHTTPConnection(self.path, self.timeout)
        try:
            conn.request("GET", url)
            response = conn.getresponse()
            body = response.read()
        except OSError as e:
            raise DockerError("Docker API %s on %s: %s" % (url, self.path, e))
        finally:
            conn.close()
        if response.status != 200:
            detail = body[:200].decode("utf-8", "replace")
            raise DockerError("Docker API %s: HTTP %d %s" % (url, response.status, detail))
        return json.loads(body)

    def nova_containers(self):
        """``{server id: container id}`` of the running containers nova-docker named."""
        filters = urllib.parse.quote(json.dumps({"name": [self.prefix]}))
        found = {}
        for container in self.get("/containers/json?filters=" + filters):
            for name in container.get("Names") or ():
                server_id = procfs.container_server_id(name, self.prefix)
                if server_id:
                    found[server_id] = container["Id"]
        return found

    def inspect(self, container_id):
        """``(init pid, writable layer directory or None)`` of a container."""
        info = self.get("/containers/%s/json" % container_id)
        data = (info.get("GraphDriver") or {}).get("Data") or {}
        return (info.get("State") or {}).get("Pid") or 0, data.get("UpperDir")


def allocated_bytes(top):
    """Bytes allocated on disk under ``top`` (like ``du -s``: hard links once), or None."""
    try:
        first = os.lstat(top)
    except OSError:
        return None
    seen, total = {(first.st_dev, first.st_ino)}, first.st_blocks * 512
    for directory, dirs, files in os.walk(top):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


class Instance:
    """What the agent tracks of one instance between samples."""

    def __init__(self, kind):
        self.kind = kind
        self.pid = None
        self.start = None       # the process's start (clock ticks after boot)
        self.key = None         # the CPU counter's incarnation
        self.born = None
        self.base = 0.0         # CPU seconds of earlier incarnations
        self.last = 0.0         # CPU seconds of this incarnation at the last sample
        self.seen = None
        self.container = None
        self.cgroups = {}
        self.roots = ()         # native: the listeners' (pid, start)
        self.sockets = None     # native: the listening sockets' inodes
        self.disk_path = None
        self.disk = None
        self.disk_at = None

    def count_cpu(self, key, seconds, always_reset=True):
        """Total CPU seconds, ``seconds`` being the counter of incarnation ``key``.

        A new incarnation's counter starts again from 0 (a new QEMU process);
        with ``always_reset`` False it is taken to go on unless it went down (a
        container cgroup that outlived a restart). A counter that goes down
        within an incarnation (a process left a native tree) keeps the total.
        """
        if key != self.key:
            if self.key is not None and (always_reset or seconds < self.last):
                self.base += self.last
            self.key = key
        elif seconds < self.last:
            self.base += self.last - seconds
        self.last = seconds
        return self.base + seconds


class Sampler:
    """Reads the host's and its instances' figures; one :meth:`sample` per call.

    :param root: prefix of every path read (tests: a fake tree)
    :param docker: :class:`DockerAPI` or None
    :param servers: server ids to follow (default: every instance found)
    :param native_ports: TCP ports whose listener's process tree is followed too
    """

    def __init__(self, root="", docker=None, servers=None, disk_interval=10.0,
                 clock=time.time, hz=None, ncpu=None, native_ports=()):
        self.root = root
        self.docker = docker
        self.servers = set(servers) if servers else None
        self.native_ports = list(native_ports)
        self.disk_interval = disk_interval
        self.clock = clock
        self.hz = hz or os.sysconf("SC_CLK_TCK")
        self.ncpu = ncpu or os.cpu_count()
        self.mounts = procfs.parse_mountinfo_cgroups(
            self.read("/proc/self/mountinfo", default=""))
        self.btime = procfs.parse_proc_stat(self.read("/proc/stat"))[1] or 0
        self.known = {}
        self.reported = set()
        self.errors = []

    # -- reading ------------------------------------------------------------------

    def read(self, path, binary=False, default=None):
        try:
            with open(self.root + path, "rb" if binary else "r") as f:
                return f.read()
        except OSError:
            if default is not None:
                return default
            raise

    def error(self, message):
        if message not in self.reported:
            self.reported.add(message)
            self.errors.append(message)

    def cgroup_mode(self):
        v1 = "memory" in self.mounts
        if "" in self.mounts:
            return "hybrid" if v1 else "v2"
        return "v1" if v1 else "none"

    def header(self):
        docker = None
        if self.docker is not None:
            docker = self.docker.path if os.path.exists(self.docker.path) else (
                "no socket at %s" % self.docker.path)
        return {"t": self.clock(), "type": "start", "version": VERSION,
                "host": socket.gethostname(), "kernel": platform.release(),
                "python": platform.python_version(), "pid": os.getpid(), "hz": self.hz,
                "ncpu": self.ncpu, "cgroup": self.cgroup_mode(), "docker": docker,
                "native_ports": self.native_ports}

    # -- finding instances --------------------------------------------------------

    def wanted(self, server_id):
        return self.servers is None or server_id in self.servers

    def pids(self):
        try:
            return [int(name) for name in os.listdir(self.root + "/proc") if name.isdigit()]
        except OSError as e:
            self.error("listing /proc: %s" % e)
            return []

    def qemu_processes(self):
        """``{server id: (pid, command line)}`` of the QEMU processes with ``-uuid``."""
        found = {}
        for pid in self.pids():
            cmdline = self.read("/proc/%d/cmdline" % pid, binary=True, default=b"")
            if b"-uuid" not in cmdline:
                continue
            server_id = procfs.qemu_server_id(cmdline)
            if server_id and self.wanted(server_id):
                found[server_id] = (pid, cmdline)
        return found

    def process_table(self):
        """``{pid: parse_pid_stat}`` of every process: what native trees are made of."""
        table = {}
        for pid in self.pids():
            try:
                table[pid] = self.process_start(pid)
            except (OSError, ValueError, IndexError):
                continue        # gone meanwhile
        return table

    def listening_inodes(self, port):
        """Inodes of the TCP sockets (IPv4 and IPv6) listening on ``port``."""
        found = set()
        for path in ("/proc/net/tcp", "/proc/net/tcp6"):
            found |= procfs.parse_listening_inodes(self.read(path, default=""), port)
        return found

    def fd_links(self, pid):
        """Where the file descriptors of ``pid`` point (none: gone, or another user's)."""
        fd_dir = "%s/proc/%d/fd" % (self.root, pid)
        try:
            names = os.listdir(fd_dir)
        except OSError:
            return
        for name in names:
            try:
                yield os.readlink(fd_dir + "/" + name)
            except OSError:
                continue        # closed meanwhile

    def socket_holders(self, pids, inodes):
        """The processes among ``pids`` with a file descriptor on one of the sockets ``inodes``."""
        return {pid for pid in pids if inodes and any(
            procfs.socket_inode(link) in inodes for link in self.fd_links(pid))}

    def native_roots(self, inst, port, table, parents):
        """The listeners on ``port`` (pids), looked for again when its sockets or they changed.

        Walking every process's file descriptors is the costly part, so it is not
        done every sample; again while a socket has no holder found (the process
        that opened it may have started after the process table was read).
        """
        inodes = self.listening_inodes(port)
        alive = all(table.get(pid, {}).get("start") == start for pid, start in inst.roots)
        if inodes != inst.sockets or not alive or (inodes and not inst.roots):
            roots = procfs.tree_roots(self.socket_holders(table, inodes), parents)
            inst.sockets, inst.roots = inodes, tuple((pid, table[pid]["start"]) for pid in roots)
        return [pid for pid, _ in inst.roots]

    def containers(self):
        """``{server id: container id}`` from the Docker engine (empty without one)."""
        if self.docker is None or not os.path.exists(self.docker.path):
            return {}
        try:
            return {k: v for k, v in self.docker.nova_containers().items() if self.wanted(k)}
        except (DockerError, ValueError) as e:
            self.error(str(e))
            return {}

    # -- measuring ----------------------------------------------------------------

    def process_memory(self, pid):
        """``{rss, pss}`` of a process (pss None where smaps_rollup is missing)."""
        try:
            return procfs.parse_smaps_rollup(self.read("/proc/%d/smaps_rollup" % pid))
        except FileNotFoundError:
            rss = procfs.parse_status_rss(self.read("/proc/%d/status" % pid))
            return {"rss": rss, "pss": None}

    def process_start(self, pid):
        return procfs.parse_pid_stat(self.read("/proc/%d/stat" % pid))

    def disk(self, inst, now):
        if inst.disk_path and (inst.disk_at is None or now - inst.disk_at >= self.disk_interval):
            inst.disk = allocated_bytes(self.root + inst.disk_path)
            inst.disk_at = now
        return inst.disk

    def measure_qemu(self, server_id, pid, cmdline, now):
        inst = self.known.setdefault(server_id, Instance(procfs.QEMU))
        stat = self.process_start(pid)
        if (inst.pid, inst.start) != (pid, stat["start"]):
            inst.pid, inst.start = pid, stat["start"]
            inst.disk_path = procfs.instance_dir(cmdline, server_id)
            inst.disk_at = None
        if inst.born is None:
            inst.born = self.btime + stat["start"] / self.hz
        entry = {"kind": procfs.QEMU, "pid": pid, "born": inst.born,
                 "cpu": round(inst.count_cpu(stat["start"], stat["ticks"] / self.hz), 3)}
        entry.update(self.process_memory(pid))
        entry["disk"] = self.disk(inst, now)
        return entry

    def measure_docker(self, server_id, container_id, now):
        inst = self.known.setdefault(server_id, Instance(procfs.DOCKER))
        if inst.container != container_id or not self._alive(inst):
            pid, upper = self.docker.inspect(container_id)
            if not pid:
                return None         # stopped between the list and the inspect
            inst.container, inst.pid, inst.disk_path = container_id, pid, upper
            inst.start = self.process_start(pid)["start"]
            inst.cgroups = self._cgroups_of(pid)
            inst.disk_at = None
            if inst.born is None:
                inst.born = self.btime + inst.start / self.hz
        entry = {"kind": procfs.DOCKER, "pid": inst.pid, "born": inst.born}
        memory = inst.cgroups.get("memory")
        if memory:
            version, path = memory
            usage, stat = procfs.cgroup_memory_files(version)
            entry.update(procfs.cgroup_memory(version, self.read(path + "/" + usage),
                                              self.read(path + "/" + stat, default="")))
            entry.update(self._processes_memory(
                self.read(path + "/cgroup.procs", default="").split()))
        cpu = inst.cgroups.get("cpuacct")
        if cpu:
            version, path = cpu
            seconds = procfs.cgroup_cpu_seconds(
                version, self.read(path + "/" + procfs.cgroup_cpu_file(version)))
            entry["cpu"] = round(inst.count_cpu(inst.start, seconds, always_reset=False), 3)
        entry["disk"] = self.disk(inst, now)
        return entry

    def measure_native(self, instance_id, port, table):
        """The process tree of the listener on TCP ``port``: memory and CPU summed over it."""
        inst = self.known.setdefault(instance_id, Instance(procfs.NATIVE))
        parents = {pid: stat["ppid"] for pid, stat in table.items()}
        roots = self.native_roots(inst, port, table, parents)
        if not roots:
            self.error("%s: nothing listens on TCP port %d" % (instance_id, port)
                       if not inst.sockets else
                       "%s: no process the agent can read holds the socket listening on TCP "
                       "port %d (run the agent as root)" % (instance_id, port))
            return None
        skip = set(procfs.ancestors(parents, os.getpid())) - set(roots)
        tree = procfs.process_tree(parents, roots, skip)
        first = min(roots, key=lambda pid: table[pid]["start"])
        start = table[first]["start"]
        if inst.born is None:
            inst.born = self.btime + start / self.hz
        # A new first listener (restarted) starts again from 0; another listener
        # coming or going is the same incarnation, whose count never goes down.
        ticks = sum(table[pid]["ticks"] + table[pid]["child_ticks"] for pid in tree)
        entry = {"kind": procfs.NATIVE, "pid": first, "born": inst.born,
                 "processes": len(tree),
                 "cpu": round(inst.count_cpu((first, start), ticks / self.hz), 3)}
        entry.update(self._processes_memory(tree))
        return entry

    def _alive(self, inst):
        """Is the process (and cgroup) of the instance's last sample still the same?"""
        try:
            return bool(inst.pid) and self.process_start(inst.pid)["start"] == inst.start and all(
                os.path.isdir(self.root + path) for _, path in inst.cgroups.values())
        except (OSError, ValueError, IndexError):
            return False

    def _cgroups_of(self, pid):
        proc = procfs.parse_proc_cgroup(self.read("/proc/%d/cgroup" % pid))
        found = {}
        for controller in ("memory", "cpuacct"):
            where = procfs.cgroup_dir(self.mounts, proc, controller)
            if where:
                found[controller] = where
            else:
                self.error("no %s cgroup for pid %d" % (controller, pid))
        return found

    def _processes_memory(self, pids):
        """``{pss, rss}`` summed over processes (those gone meanwhile left out)."""
        pss = rss = 0
        for pid in pids:
            try:
                memory = self.process_memory(int(pid))
            except (OSError, ValueError):
                continue        # gone meanwhile
            rss += memory["rss"] or 0
            pss += memory["pss"] or 0
        return {"pss": pss, "rss": rss}

    def sample(self):
        """One sample (a dict, ``"t"`` first)."""
        t = self.clock()
        cpu, _ = procfs.parse_proc_stat(self.read("/proc/stat"))
        mem = procfs.parse_meminfo(self.read("/proc/meminfo"))
        instances = {}
        for server_id, (pid, cmdline) in self.qemu_processes().items():
            self._measure(instances, server_id, self.measure_qemu, pid, cmdline, t)
        for server_id, container_id in self.containers().items():
            self._measure(instances, server_id, self.measure_docker, container_id, t)
        table = self.process_table() if self.native_ports else {}
        for port in self.native_ports:
            self._measure(instances, procfs.native_id(port), self.measure_native, port, table)
        for server_id, inst in list(self.known.items()):
            if server_id in instances:
                inst.seen = t
            elif inst.seen is not None and t - inst.seen > FORGET_AFTER:
                del self.known[server_id]       # deleted: its restarts are over
        sample = {"t": t, "type": "sample", "hz": self.hz, "ncpu": self.ncpu, "cpu": cpu,
                  "mem": mem, "instances": instances}
        if self.errors:
            sample["errors"], self.errors = self.errors, []
        return sample

    def _measure(self, instances, server_id, measure, *args):
        try:
            entry = measure(server_id, *args)
        except (OSError, ValueError, IndexError, KeyError, DockerError) as e:
            # Most often the process or container ended between two reads.
            if not isinstance(e, (FileNotFoundError, ProcessLookupError)):
                self.error("%s: %s: %s" % (server_id, type(e).__name__, e))
            return
        if entry is not None:
            instances[server_id] = entry


def _write(out, record):
    out.write(json.dumps(record) + "\n")
    out.flush()


def _wait(until, stdin_fd, monotonic):
    """Sleep until monotonic ``until``; False when stdin was closed meanwhile."""
    while True:
        left = until - monotonic()
        if left <= 0:
            return True
        if stdin_fd is None:
            time.sleep(left)
            continue
        ready, _, _ = select.select([stdin_fd], [], [], left)
        if ready and not os.read(stdin_fd, 4096):
            return False


def run(sampler, out, interval=1.0, count=None, duration=None, stdin_fd=None,
        parent=None, monotonic=time.monotonic):
    """Write the start line, then a sample every ``interval`` s until told to stop.

    Stops after ``count`` samples or ``duration`` seconds, when ``stdin_fd``
    reaches EOF, when the parent process is no longer ``parent``, or when
    ``out`` is closed. Returns 0.
    """
    started = next_at = monotonic()
    done = 0
    if parent is not None and os.getppid() != parent:
        return 0
    try:
        _write(out, sampler.header())
        while True:
            _write(out, sampler.sample())
            done += 1
            if count and done >= count:
                return 0
            if duration is not None and monotonic() - started >= duration:
                return 0
            next_at = max(next_at + interval, monotonic())
            if not _wait(next_at, stdin_fd, monotonic):
                return 0
            if parent is not None and os.getppid() != parent:
                return 0
    except BrokenPipeError:
        return 0


def tcp_port(text):
    port = int(text)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("%s is not a TCP port (1-65535)" % text)
    return port


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="vmct-hostcost-agent",
                                     description="Sample a compute host's instances.")
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--disk-interval", type=float, default=10.0)
    parser.add_argument("--docker-socket", default=DEFAULT_SOCKET)
    parser.add_argument("--container-prefix", default=procfs.CONTAINER_PREFIX)
    parser.add_argument("--server", action="append", default=[])
    parser.add_argument("--native-port", type=tcp_port, action="append", default=[])
    parser.add_argument("--watch-stdin", action="store_true")
    parser.add_argument("--parent-pid", type=int)
    parser.add_argument("--exit-with-parent", action="store_true")
    parser.add_argument("--count", type=int)
    parser.add_argument("--duration", type=float)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    parent = args.parent_pid
    if parent is None and args.exit_with_parent:
        parent = os.getppid()
    docker = None
    if args.docker_socket:
        docker = DockerAPI(args.docker_socket, prefix=args.container_prefix)
    sampler = Sampler(docker=docker, servers=args.server, disk_interval=args.disk_interval,
                      native_ports=args.native_port)
    stdin_fd = sys.stdin.fileno() if args.watch_stdin else None
    try:
        return run(sampler, sys.stdout, args.interval, args.count, args.duration,
                   stdin_fd, parent)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
