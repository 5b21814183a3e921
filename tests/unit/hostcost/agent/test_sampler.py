"""The host monitor's agent on a fake /proc and /sys/fs/cgroup tree, with a fake Docker API.

The real files are read in tests/functional/test_host_monitor_real.py.
"""

import http.server
import io
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
from unittest import mock

import fixtures
import testtools

from rally_vmct.hostcost.agent import procfs
from rally_vmct.hostcost.agent import sampler
from tests.unit.hostcost.agent import test_procfs as texts

U1, U2 = texts.U1, texts.U2
MIB = procfs.MIB
INSTANCES = "/var/lib/nova/instances"
UPPER = "/var/lib/docker/overlay2/layer1/diff"


def pid_stat(pid, ticks, start, ppid=1, child_ticks=0):
    return "%d (x) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %d 100 10 0" % (
        pid, ppid, ticks, child_ticks, start)


def rollup(rss_kb, pss_kb):
    return "00-ff ---p 0 00:00 0 [rollup]\nRss: %d kB\nPss: %d kB\n" % (rss_kb, pss_kb)


class FakeDocker:
    """nova_containers() and inspect() of a fake engine; ``path`` must exist."""

    def __init__(self, path):
        self.path = path
        self.running = {}        # server id -> (container id, pid)
        self.calls = []

    def nova_containers(self):
        self.calls.append("list")
        return {sid: cid for sid, (cid, _) in self.running.items()}

    def inspect(self, container_id):
        self.calls.append("inspect " + container_id)
        for cid, pid in self.running.values():
            if cid == container_id:
                return pid, UPPER
        raise sampler.DockerError("no such container")


class FakeHost(fixtures.Fixture):
    """A directory tree with what the agent reads."""

    def _setUp(self):
        self.root = self.useFixture(fixtures.TempDir()).path
        self.write("/proc/stat", texts.PROC_STAT)
        self.write("/proc/meminfo", texts.MEMINFO)
        self.write("/proc/self/mountinfo", texts.MOUNTINFO_V1)
        self.write("/proc/1/cmdline", b"/sbin/init\0")
        self.write("/proc/1/stat", pid_stat(1, 5, 1))

    def write(self, path, data):
        full = self.root + path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)

    def remove(self, path):
        os.remove(self.root + path)

    def qemu(self, pid, server_id, ticks, start, pss_kb=1000, disk_bytes=8192):
        cmdline = texts.QEMU_CMDLINE.replace(texts.U1.encode(), server_id.encode()).replace(
            b"/var/tmp/vmct-aio/data/nova-qemu/instances", INSTANCES.encode())
        self.write("/proc/%d/cmdline" % pid, cmdline)
        self.write("/proc/%d/stat" % pid, pid_stat(pid, ticks, start))
        self.write("/proc/%d/smaps_rollup" % pid, rollup(pss_kb + 100, pss_kb))
        self.write("%s/%s/disk" % (INSTANCES, server_id), b"x" * disk_bytes)

    def process(self, pid, ppid, ticks=0, start=200000, child_ticks=0, pss_kb=1000,
                sockets=()):
        """A plain process (``sockets``: inodes of the sockets it has open)."""
        self.write("/proc/%d/cmdline" % pid, b"/usr/sbin/sshd\0-D\0")
        self.write("/proc/%d/stat" % pid, pid_stat(pid, ticks, start, ppid, child_ticks))
        self.write("/proc/%d/smaps_rollup" % pid, rollup(pss_kb + 500, pss_kb))
        os.makedirs(self.root + "/proc/%d/fd" % pid, exist_ok=True)
        os.symlink("/dev/null", self.root + "/proc/%d/fd/0" % pid)
        for fd, inode in enumerate(sockets, 3):
            os.symlink("socket:[%d]" % inode, self.root + "/proc/%d/fd/%d" % (pid, fd))

    def gone(self, pid):
        shutil.rmtree(self.root + "/proc/%d" % pid)

    def container(self, cid, pids, start, usage, cpu_ns):
        memory = "/sys/fs/cgroup/memory/docker/" + cid
        self.write("/proc/%d/cgroup" % pids[0], "4:memory:/docker/%s\n2:cpuacct:/docker/%s\n"
                   "1:cpu:/docker/%s\n0::/\n" % (cid, cid, cid))
        for pid in pids:
            self.write("/proc/%d/cmdline" % pid, b"sleep\0infinity\0")
            self.write("/proc/%d/stat" % pid, pid_stat(pid, 1, start))
            self.write("/proc/%d/smaps_rollup" % pid, rollup(3000, 2000))
        self.write(memory + "/memory.usage_in_bytes", "%d\n" % usage)
        self.write(memory + "/memory.stat", texts.MEMORY_STAT_V1)
        self.write(memory + "/cgroup.procs", "".join("%d\n" % p for p in pids))
        self.write("/sys/fs/cgroup/cpuacct/docker/%s/cpuacct.usage" % cid, "%d\n" % cpu_ns)
        self.write(UPPER + "/root/file", b"y" * 4096)


class SamplerTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.host = self.useFixture(FakeHost())
        self.now = [1000.0]
        self.docker = FakeDocker(self.host.root + "/proc/stat")

    def sampler(self, **kwargs):
        kwargs.setdefault("docker", self.docker)
        return sampler.Sampler(root=self.host.root, clock=lambda: self.now[0], hz=100,
                               ncpu=2, **kwargs)

    def test_host_figures(self):
        found = self.sampler(docker=None).sample()
        self.assertEqual(["t", "type", "hz", "ncpu", "cpu", "mem", "instances"], list(found))
        self.assertEqual(1000.0, found["t"])
        self.assertEqual(3258408, found["cpu"]["user"])
        self.assertEqual(19371312 * 1024, found["mem"]["available"])
        self.assertEqual({}, found["instances"])

    def test_qemu_instance(self):
        self.host.qemu(4242, U1, ticks=250, start=300000)
        [entry] = self.sampler().sample()["instances"].values()
        self.assertEqual({"kind": "qemu", "pid": 4242, "born": 1795464036 + 3000.0,
                          "cpu": 2.5, "rss": 1100 * 1024, "pss": 1000 * 1024},
                         {k: v for k, v in entry.items() if k != "disk"})
        self.assertGreaterEqual(entry["disk"], 8192)

    def test_qemu_reboot_keeps_counting_cpu(self):
        self.host.qemu(4242, U1, ticks=250, start=300000)
        sampler = self.sampler()
        sampler.sample()
        self.host.remove("/proc/4242/cmdline")          # hard reboot: a new process
        self.assertEqual({}, sampler.sample()["instances"])
        self.host.qemu(5000, U1, ticks=40, start=310000)
        entry = sampler.sample()["instances"][U1]
        self.assertEqual(5000, entry["pid"])
        self.assertEqual(2.9, entry["cpu"])
        self.assertEqual(1795464036 + 3000.0, entry["born"])

    def test_disk_walk_every_disk_interval(self):
        self.host.qemu(4242, U1, ticks=250, start=300000, disk_bytes=4096)
        sampler = self.sampler(disk_interval=10)
        first = sampler.sample()["instances"][U1]["disk"]
        self.host.write("%s/%s/disk" % (INSTANCES, U1), b"x" * (1 << 20))
        self.now[0] += 5
        self.assertEqual(first, sampler.sample()["instances"][U1]["disk"])
        self.now[0] += 5
        self.assertGreater(sampler.sample()["instances"][U1]["disk"], first + 900000)

    def test_only_the_servers_asked_for(self):
        self.host.qemu(4242, U1, ticks=250, start=300000)
        self.host.qemu(4343, U2, ticks=250, start=300000)
        self.assertEqual([U2], list(self.sampler(servers=[U2]).sample()["instances"]))
        self.assertEqual({U1, U2}, set(self.sampler().sample()["instances"]))

    def test_docker_container_cgroup_v1(self):
        self.host.container("cid1", [700, 701], start=400000, usage=220 * MIB,
                            cpu_ns=1500000000)
        self.docker.running[U2] = ("cid1", 700)
        sampler = self.sampler()
        entry = sampler.sample()["instances"][U2]
        disk = entry.pop("disk")
        self.assertEqual({"kind": "docker", "pid": 700, "born": 1795464036 + 4000.0,
                          "cgroup": 220 * MIB, "anon": 210763776, "file": 2097152,
                          "pss": 2 * 2000 * 1024, "rss": 2 * 3000 * 1024, "cpu": 1.5}, entry)
        self.assertGreaterEqual(disk, 4096)
        sampler.sample()
        self.assertEqual(["list", "inspect cid1", "list"], self.docker.calls)

    def test_docker_restart_keeps_counting_cpu(self):
        self.host.container("cid1", [700], start=400000, usage=MIB, cpu_ns=2000000000)
        self.docker.running[U2] = ("cid1", 700)
        sampler = self.sampler()
        sampler.sample()
        # stop + start: a new init process, a new cgroup whose counter starts again
        self.host.remove("/proc/700/stat")
        self.host.container("cid1", [800], start=410000, usage=MIB, cpu_ns=500000000)
        self.docker.running[U2] = ("cid1", 800)
        entry = sampler.sample()["instances"][U2]
        self.assertEqual((800, 2.5), (entry["pid"], entry["cpu"]))

    def test_docker_cgroup_v2(self):
        self.host.write("/proc/self/mountinfo", texts.MOUNTINFO_V2)
        scope = "/sys/fs/cgroup/system.slice/docker-cid2.scope"
        self.host.write("/proc/900/cgroup", "0::/system.slice/docker-cid2.scope\n")
        self.host.write("/proc/900/stat", pid_stat(900, 1, 500000))
        self.host.write("/proc/900/smaps_rollup", rollup(3000, 2000))
        self.host.write(scope + "/memory.current", "214000000\n")
        self.host.write(scope + "/memory.stat", texts.MEMORY_STAT_V2)
        self.host.write(scope + "/cgroup.procs", "900\n")
        self.host.write(scope + "/cpu.stat", "usage_usec 2250000\n")
        self.docker.running[U2] = ("cid2", 900)
        entry = self.sampler().sample()["instances"][U2]
        self.assertEqual((214000000, 210763776, 2.25),
                         (entry["cgroup"], entry["anon"], entry["cpu"]))

    def test_problems_are_reported_once_and_sampling_goes_on(self):
        self.host.qemu(4242, U1, ticks=250, start=300000)
        os.chmod(self.host.root + "/proc/4242/smaps_rollup", 0)
        sampler = self.sampler()
        if os.access(self.host.root + "/proc/4242/smaps_rollup", os.R_OK):
            self.host.write("/proc/4242/smaps_rollup", "garbage\n")     # root reads anything
        first = sampler.sample()
        self.assertEqual({}, first["instances"])
        [error] = first["errors"]
        self.assertIn(U1, error)
        self.assertNotIn("errors", sampler.sample())

    def test_docker_engine_unreachable(self):
        self.docker.nova_containers = lambda: (_ for _ in ()).throw(
            sampler.DockerError("Docker API /containers/json: connection refused"))
        found = self.sampler().sample()
        self.assertEqual(["Docker API /containers/json: connection refused"], found["errors"])

    def test_no_docker_socket(self):
        docker = sampler.DockerAPI(self.host.root + "/no.sock")
        agent = self.sampler(docker=docker)
        self.assertEqual({}, agent.sample()["instances"])
        self.assertEqual("no socket at %s/no.sock" % self.host.root,
                         agent.header()["docker"])
        self.assertEqual("hybrid", agent.header()["cgroup"])


class NativeTreeTestCase(testtools.TestCase):
    """The process tree of a TCP port's listener: found, summed, followed."""

    PORT = 22822
    ID = "native:22822"

    def setUp(self):
        super().setUp()
        self.host = self.useFixture(FakeHost())
        self.host.write("/proc/net/tcp", texts.PROC_NET_TCP)
        self.host.write("/proc/net/tcp6", texts.PROC_NET_TCP6)
        # the machine's own sshd (port 22) and the native target's (22822) with a session
        self.host.process(300, 1, ticks=900, sockets=[21113, 21115])
        self.host.process(500, 1, ticks=10, start=250000, child_ticks=4, sockets=[46916858])
        self.host.process(600, 500, ticks=20, pss_kb=2000)
        self.sampler = sampler.Sampler(root=self.host.root, clock=lambda: 1000.0,
                                       hz=100, ncpu=2, native_ports=[self.PORT])

    def entry(self):
        return self.sampler.sample()["instances"].get(self.ID)

    def test_listener_and_its_descendants(self):
        self.assertEqual({"kind": "native", "pid": 500, "born": 1795464036 + 2500.0,
                          "processes": 2, "cpu": 0.34, "pss": 3000 * 1024,
                          "rss": 4000 * 1024}, self.entry())
        self.assertEqual([self.PORT], self.sampler.header()["native_ports"])

    def test_a_child_started_later_is_counted_and_its_time_kept_once_reaped(self):
        self.entry()
        self.host.process(601, 600, ticks=150, pss_kb=50000)         # sysbench
        entry = self.entry()
        self.assertEqual((3, 1.84, 53000 * 1024), (entry["processes"], entry["cpu"],
                                                   entry["pss"]))
        self.host.gone(601)                                          # reaped by 600
        self.host.gone(600)
        self.host.process(600, 500, ticks=20, child_ticks=150, pss_kb=2000)
        self.assertEqual((2, 1.84), (self.entry()["processes"], self.entry()["cpu"]))

    def test_cpu_of_a_process_that_left_the_tree_stays_counted(self):
        self.host.process(601, 600, ticks=150)
        self.assertEqual(1.84, self.entry()["cpu"])
        self.host.gone(601)                     # detached: init's now
        self.host.process(601, 1, ticks=160)
        self.assertEqual(1.84, self.entry()["cpu"])
        self.host.gone(600)
        self.host.process(600, 500, ticks=25)
        self.assertEqual(1.89, self.entry()["cpu"])

    def test_restarted_listener_is_found_again_and_cpu_counts_on(self):
        self.assertEqual(0.34, self.entry()["cpu"])
        self.host.gone(500)
        self.host.gone(600)
        self.host.write("/proc/net/tcp", texts.PROC_NET_TCP.replace("46916858", "47000000"))
        self.host.process(510, 1, ticks=5, start=260000, sockets=[47000000])
        entry = self.entry()
        self.assertEqual((510, 0.39, 1795464036 + 2500.0),
                         (entry["pid"], entry["cpu"], entry["born"]))

    def test_file_descriptors_are_walked_only_when_the_listener_changed(self):
        with mock.patch.object(self.sampler, "fd_links",
                               wraps=self.sampler.fd_links) as fd_links:
            self.entry()
            walked = fd_links.call_count
            self.entry()
            self.assertEqual(walked, fd_links.call_count)
        self.assertGreaterEqual(walked, 3)

    def test_a_worker_holding_the_socket_is_inside_its_parents_tree(self):
        self.host.process(700, 500, ticks=30, sockets=[46916858])
        entry = self.entry()
        self.assertEqual((500, 3), (entry["pid"], entry["processes"]))

    def test_a_second_listener_is_added_not_counted_twice(self):
        self.assertEqual(0.34, self.entry()["cpu"])         # SO_REUSEPORT: one more socket
        self.host.write("/proc/net/tcp", texts.PROC_NET_TCP + texts.PROC_NET_TCP.splitlines()[
            1].replace("46916858", "46916999") + "\n")
        self.host.process(520, 1, ticks=6, start=270000, sockets=[46916999])
        entry = self.entry()
        self.assertEqual((500, 3, 0.4), (entry["pid"], entry["processes"], entry["cpu"]))
        self.host.gone(520)
        self.assertEqual(0.4, self.entry()["cpu"])

    def test_no_fd_walk_while_nothing_listens(self):
        self.host.write("/proc/net/tcp", "")
        with mock.patch.object(self.sampler, "fd_links") as fd_links:
            self.entry()
            self.entry()
        fd_links.assert_not_called()

    def test_nothing_listening_is_reported_once(self):
        self.host.write("/proc/net/tcp", texts.PROC_NET_TCP.replace(" 0A ", " 01 "))
        first = self.sampler.sample()
        self.assertEqual({}, first["instances"])
        self.assertEqual(["native:22822: nothing listens on TCP port 22822"], first["errors"])
        self.assertNotIn("errors", self.sampler.sample())

    def test_listening_socket_nobody_readable_holds(self):
        self.host.gone(500)
        [error] = self.sampler.sample()["errors"]
        self.assertEqual("native:22822: no process the agent can read holds the socket "
                         "listening on TCP port 22822 (run the agent as root)", error)

    def test_agent_argument(self):
        args = sampler.parse_args(["--native-port", "22", "--native-port", "22822"])
        self.assertEqual([22, 22822], args.native_port)
        with mock.patch("sys.stderr", io.StringIO()) as err:
            self.assertRaises(SystemExit, sampler.parse_args, ["--native-port", "0"])
        self.assertIn("0 is not a TCP port (1-65535)", err.getvalue())


class FakeEngine(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A Docker engine API on a UNIX socket that knows two containers."""

    daemon_threads = True

    def __init__(self, path):
        self.requests = []
        engine = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def address_string(self):
                return "unix"

            def log_message(self, *args):
                pass

            def do_GET(self):
                engine.requests.append(self.path)
                if self.path.startswith("/containers/json?"):
                    body = [{"Id": "c1", "Names": ["/nova-" + U1]},
                            {"Id": "c2", "Names": ["/nova-%s-rescue" % U1]},
                            {"Id": "c3", "Names": ["/nova-not-an-instance"]}]
                elif self.path == "/containers/c1/json":
                    body = {"State": {"Pid": 4321},
                            "GraphDriver": {"Data": {"UpperDir": UPPER}}}
                else:
                    self.send_response(404)
                    self.end_headers()
                    self.wfile.write(b'{"message": "No such container"}')
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        super().__init__(path, Handler)


class DockerAPITestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "docker.sock")
        self.engine = FakeEngine(path)
        thread = threading.Thread(target=self.engine.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(self.engine.server_close)
        self.addCleanup(self.engine.shutdown)
        self.api = sampler.DockerAPI(path)

    def test_nova_containers_and_inspect(self):
        self.assertEqual({U1: "c1"}, self.api.nova_containers())
        self.assertEqual((4321, UPPER), self.api.inspect("c1"))
        [listing, _] = self.engine.requests
        self.assertEqual('/containers/json?filters={"name": ["nova-"]}',
                         sampler.urllib.parse.unquote(listing))

    def test_errors_name_the_call(self):
        e = self.assertRaises(sampler.DockerError, self.api.inspect, "gone")
        self.assertIn("Docker API /containers/gone/json: HTTP 404", str(e))
        e = self.assertRaises(sampler.DockerError,
                              sampler.DockerAPI("/nonexistent.sock").nova_containers)
        self.assertIn("/nonexistent.sock", str(e))


class RunTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.host = self.useFixture(FakeHost())
        self.sampler = sampler.Sampler(root=self.host.root, hz=100, ncpu=2)

    def test_start_line_then_samples(self):
        out = io.StringIO()
        clock = iter(range(100))
        self.assertEqual(0, sampler.run(self.sampler, out, interval=0, count=3,
                                        monotonic=lambda: next(clock)))
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual(["start", "sample", "sample", "sample"], [r["type"] for r in lines])
        self.assertEqual(100, lines[0]["hz"])

    def test_stdin_closed_stops_it(self):
        r, w = os.pipe()
        os.close(w)
        out = io.StringIO()
        self.assertEqual(0, sampler.run(self.sampler, out, interval=5, stdin_fd=r))
        os.close(r)
        self.assertEqual(2, len(out.getvalue().splitlines()))

    def test_heartbeats_on_stdin_are_ignored(self):
        r, w = os.pipe()
        os.write(w, b"\n\n")
        out = io.StringIO()
        sampler.run(self.sampler, out, interval=0.01, count=3, stdin_fd=r)
        os.close(r)
        os.close(w)
        self.assertEqual(4, len(out.getvalue().splitlines()))

    def test_closed_stdout_stops_it(self):
        class Closed(io.StringIO):
            def write(self, text):
                raise BrokenPipeError()
        self.assertEqual(0, sampler.run(self.sampler, Closed(), interval=0))

    def test_parent_gone_stops_it(self):
        out = io.StringIO()
        parents = iter([42, 42, 1])     # at the start, after the 1st and 2nd samples
        with mock.patch.object(os, "getppid", lambda: next(parents)):
            self.assertEqual(0, sampler.run(self.sampler, out, interval=0, parent=42))
        self.assertEqual(["start", "sample", "sample"],
                         [json.loads(line)["type"] for line in out.getvalue().splitlines()])

    def test_parent_gone_before_it_started(self):
        out = io.StringIO()
        self.assertEqual(0, sampler.run(self.sampler, out, interval=0,
                                        parent=os.getppid() + 1))
        self.assertEqual("", out.getvalue())


class ShippingTestCase(testtools.TestCase):

    def test_payload_is_the_agents_modules_only_in_ascii(self):
        data = sampler.payload()
        head, rest = data.split(b"\n", 1)
        self.assertEqual(b"2", head)
        name, size = rest.split(b"\n", 1)[0].split()
        self.assertEqual(b"procfs", name)
        with open(procfs.__file__, "rb") as f:
            self.assertEqual(len(f.read()), int(size))
        self.assertIn(b"\nsampler ", data)
        # every module of the agent package is shipped, nothing else (the consumer side)
        folder = os.path.dirname(sampler.__file__)
        shipped = sorted(n for n in os.listdir(folder) if n.endswith(".py") and n != "__init__.py")
        self.assertEqual(["procfs.py", "sampler.py"], shipped)
        self.assertNotIn(b"def read_window", data)

    def test_bootstrap_runs_the_shipped_modules_anywhere(self):
        # In an empty directory, with a Python that cannot import rally_vmct (-I: no
        # site-packages, no cwd): the modules come from stdin, as over SSH.
        path = self.useFixture(fixtures.TempDir()).path
        argv = sampler.command(sys.executable, ["--count", "1", "--docker-socket", ""])
        argv.insert(1, "-I")
        result = subprocess.run(argv, input=sampler.payload(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=path, timeout=60, check=True)
        start, first = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual(("start", "sample"), (start["type"], first["type"]))
        self.assertIsNone(start["docker"])
        self.assertEqual(b"", result.stderr)
