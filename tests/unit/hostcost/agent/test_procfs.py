"""The host monitor's parsers, sample windows and phase summaries, on recorded text.

The /proc and cgroup texts below were read on the development machine (Debian 12,
Linux 6.x, cgroup v1 with a cgroup2 mount: "hybrid") or, for cgroup v2, copied
from a Debian 12 host with the unified hierarchy.
"""

import ast
import io
import json
import os

import testtools

from rally_vmct.hostcost.agent import procfs as hostmon

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))
U1 = "84808faf-758e-4880-b8ff-e9e65c025300"
U2 = "0a1b2c3d-0000-4000-8000-00000000abcd"

PROC_STAT = """\
cpu  3258408 38305 669567 3181472 58353 0 92285 10748 0 0
cpu0 1629204 19152 334783 1590736 29176 0 46142 5374 0 0
cpu1 1629204 19153 334784 1590736 29177 0 46143 5374 0 0
intr 1 2 3
ctxt 123456
btime 1795464036
processes 40000
"""
MEMINFO = """\
MemTotal:       24683656 kB
MemFree:        16047712 kB
MemAvailable:   19371312 kB
Buffers:           35440 kB
Cached:          2696336 kB
"""
SMAPS_ROLLUP = """\
55f13e7fd000-7fff9f5d7000 ---p 00000000 00:00 0                          [rollup]
Rss:              276584 kB
Pss:              270428 kB
Pss_Dirty:        262144 kB
Pss_Anon:         262000 kB
Shared_Clean:       1552 kB
Swap:                  0 kB
"""
PID_STAT = ("17283 (qemu-system-x86) S 1 17278 12694 0 -1 4194304 97 0 0 0 "
            "498 50 7 3 20 0 1 0 3670525 3133440 379 18446744073709551615 0")
# The native target's sshd on 127.0.0.1:22822 (0x5926) and a session to it, the
# machine's own sshd on all addresses, port 22 (0x0016), IPv4 and IPv6 (recorded;
# the columns after the inode cut, the IPv6 addresses written as repeats).
PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:5926 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0  0 46916858
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0  0 21113
   2: 0100007F:5926 0100007F:B4C2 01 00000000:00000000 02:0009A8C1 00000000     0  0 46990001
"""
PROC_NET_TCP6 = (
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: %s:0016 %s:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21115\n"
    % ("0" * 32, "0" * 32))
MOUNTINFO_V1 = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
MOUNTINFO_V2 = """\
25 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
28 25 0:25 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw
"""
MEMORY_STAT_V1 = """\
cache 1048576
rss 209715200
total_cache 2097152
total_rss 210763776
total_rss_huge 0
"""
MEMORY_STAT_V2 = """\
anon 210763776
file 2097152
kernel 1236992
"""
QEMU_CMDLINE = b"\0".join([
    b"/usr/bin/qemu-system-x86_64", b"-name", b"guest=instance-00000001,debug-threads=on",
    b"-uuid", U1.encode(), b"-blockdev",
    ('{"driver":"file","filename":"/var/tmp/vmct-aio/data/nova-qemu/instances/_base/abc",'
     '"node-name":"libvirt-2-storage"}').encode(),
    b"-blockdev",
    ('{"driver":"file","filename":"/var/tmp/vmct-aio/data/nova-qemu/instances/%s/disk",'
     '"node-name":"libvirt-1-storage"}' % U1).encode(), b""])


class ParsersTestCase(testtools.TestCase):

    def test_proc_stat(self):
        cpu, btime = hostmon.parse_proc_stat(PROC_STAT)
        self.assertEqual({"user": 3258408, "nice": 38305, "system": 669567, "idle": 3181472,
                          "iowait": 58353, "irq": 0, "softirq": 92285, "steal": 10748}, cpu)
        self.assertEqual(1795464036, btime)
        self.assertEqual(sum(cpu.values()) - 3181472 - 58353, hostmon.cpu_busy(cpu))
        self.assertRaises(ValueError, hostmon.parse_proc_stat, "intr 1\n")

    def test_old_kernel_without_steal_columns(self):
        cpu, _ = hostmon.parse_proc_stat("cpu  10 0 5 100\n")
        self.assertEqual(0, cpu["steal"])
        self.assertEqual(115, hostmon.cpu_total(cpu))

    def test_cpu_split_between_two_samples(self):
        before = dict(user=100, nice=0, system=50, idle=800, iowait=0, irq=0, softirq=10,
                      steal=40)
        after = dict(user=400, nice=100, system=150, idle=1100, iowait=50, irq=0, softirq=10,
                     steal=140)
        split = hostmon.cpu_split(before, after)
        # 950 jiffies: user+nice 400, system 100, iowait 50, steal 100, idle 300
        expected = {"user": 400, "system": 100, "iowait": 50, "steal": 100, "idle": 300}
        self.assertEqual({k: v / 950 for k, v in expected.items()}, split)
        self.assertIsNone(hostmon.cpu_split(after, after))

    def test_meminfo(self):
        self.assertEqual({"total": 24683656 * 1024, "available": 19371312 * 1024,
                          "used": (24683656 - 19371312) * 1024},
                         hostmon.parse_meminfo(MEMINFO))

    def test_meminfo_before_memavailable(self):
        text = MEMINFO.replace("MemAvailable:   19371312 kB\n", "")
        found = hostmon.parse_meminfo(text)
        self.assertEqual((16047712 + 35440 + 2696336) * 1024, found["available"])
        self.assertRaises(ValueError, hostmon.parse_meminfo, "MemFree: 1 kB\n")

    def test_smaps_rollup_and_status(self):
        self.assertEqual({"rss": 276584 * 1024, "pss": 270428 * 1024},
                         hostmon.parse_smaps_rollup(SMAPS_ROLLUP))
        self.assertRaises(ValueError, hostmon.parse_smaps_rollup, "Swap: 0 kB\n")
        self.assertEqual(1024 * 5000, hostmon.parse_status_rss(
            "Name:\tqemu\nVmPeak:\t9000 kB\nVmRSS:\t    5000 kB\n"))
        self.assertIsNone(hostmon.parse_status_rss("Name:\tkthreadd\n"))

    def test_pid_stat_with_spaces_and_parentheses_in_the_name(self):
        expected = {"ticks": 548, "child_ticks": 10, "start": 3670525, "ppid": 1}
        self.assertEqual(expected, hostmon.parse_pid_stat(PID_STAT))
        odd = PID_STAT.replace("(qemu-system-x86)", "(a) b (c)")
        self.assertEqual(expected, hostmon.parse_pid_stat(odd))

    def test_cgroup_v1_directories(self):
        mounts = hostmon.parse_mountinfo_cgroups(MOUNTINFO_V1)
        self.assertEqual(("/sys/fs/cgroup/memory", "/"), mounts["memory"])
        self.assertEqual(("/sys/fs/cgroup/unified", "/"), mounts[""])
        self.assertNotIn("rw", mounts)
        proc = hostmon.parse_proc_cgroup(
            "4:memory:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/\n")
        self.assertEqual((1, "/sys/fs/cgroup/memory/docker/abc"),
                         hostmon.cgroup_dir(mounts, proc, "memory"))
        self.assertEqual((1, "/sys/fs/cgroup/cpuacct/docker/abc"),
                         hostmon.cgroup_dir(mounts, proc, "cpuacct"))

    def test_cgroup_v2_directory(self):
        mounts = hostmon.parse_mountinfo_cgroups(MOUNTINFO_V2)
        proc = hostmon.parse_proc_cgroup("0::/system.slice/docker-abc.scope\n")
        self.assertEqual((2, "/sys/fs/cgroup/system.slice/docker-abc.scope"),
                         hostmon.cgroup_dir(mounts, proc, "memory"))
        self.assertEqual((2, "/sys/fs/cgroup/system.slice/docker-abc.scope"),
                         hostmon.cgroup_dir(mounts, proc, "cpuacct"))
        self.assertEqual((2, "/sys/fs/cgroup"),
                         hostmon.cgroup_dir(mounts, {"": "/"}, "memory"))
        self.assertIsNone(hostmon.cgroup_dir({}, proc, "memory"))

    def test_cgroup_mounted_below_its_root(self):
        # A process in a cgroup namespace: the mount's root is the namespace's cgroup.
        mounts = hostmon.parse_mountinfo_cgroups(
            "28 25 0:25 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
        self.assertEqual((2, "/sys/fs/cgroup/docker/abc"), hostmon.cgroup_dir(
            mounts, {"": "/lxc/c1/docker/abc"}, "memory"))

    def test_mount_point_escapes(self):
        mounts = hostmon.parse_mountinfo_cgroups(
            "28 25 0:25 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n")
        self.assertEqual(("/mnt/cg two", "/"), mounts[""])

    def test_cgroup_memory_v1_and_v2(self):
        self.assertEqual({"cgroup": 220000000, "anon": 210763776, "file": 2097152},
                         hostmon.cgroup_memory(1, "220000000\n", MEMORY_STAT_V1))
        self.assertEqual({"cgroup": 214000000, "anon": 210763776, "file": 2097152},
                         hostmon.cgroup_memory(2, "214000000\n", MEMORY_STAT_V2))
        # v1 without hierarchy totals
        self.assertEqual(209715200, hostmon.cgroup_memory(
            1, "1\n", "cache 1\nrss 209715200\n")["anon"])

    def test_cgroup_cpu(self):
        self.assertEqual(1.5, hostmon.cgroup_cpu_seconds(1, "1500000000\n"))
        self.assertEqual(2.25, hostmon.cgroup_cpu_seconds(
            2, "usage_usec 2250000\nuser_usec 2000000\nsystem_usec 250000\n"))
        self.assertEqual(("memory.current", "memory.stat"), hostmon.cgroup_memory_files(2))
        self.assertEqual(("memory.usage_in_bytes", "memory.stat"),
                         hostmon.cgroup_memory_files(1))
        self.assertEqual("cpuacct.usage", hostmon.cgroup_cpu_file(1))

    def test_qemu_server_id_and_instance_directory(self):
        self.assertEqual(U1, hostmon.qemu_server_id(QEMU_CMDLINE))
        self.assertEqual(U1, hostmon.qemu_server_id(
            QEMU_CMDLINE.replace(U1.encode(), U1.upper().encode())))
        self.assertIsNone(hostmon.qemu_server_id(b"/usr/bin/python3\0-uuid\0"))
        self.assertIsNone(hostmon.qemu_server_id(b"qemu\0-uuid\0not-a-uuid\0"))
        self.assertEqual("/var/tmp/vmct-aio/data/nova-qemu/instances/" + U1,
                         hostmon.instance_dir(QEMU_CMDLINE, U1))
        drive = b"qemu\0-drive\0file=/var/lib/nova/instances/%s/disk,if=none\0" % U1.encode()
        self.assertEqual("/var/lib/nova/instances/" + U1, hostmon.instance_dir(drive, U1))
        self.assertIsNone(hostmon.instance_dir(b"qemu\0-uuid\0" + U1.encode(), U1))

    def test_container_names(self):
        self.assertEqual(U1, hostmon.container_server_id("/nova-" + U1))
        self.assertEqual(U1, hostmon.container_server_id("nova-" + U1))
        self.assertIsNone(hostmon.container_server_id("/nova-%s-rescue" % U1))
        self.assertIsNone(hostmon.container_server_id("/vmct-test-" + U1))
        self.assertEqual(U1, hostmon.container_server_id("/vmct-test-" + U1, "vmct-test-"))

    def test_container_prefix_is_nova_dockers(self):
        path = os.path.join(ROOT, "nova-docker", "nova_docker_vmct", "container.py")
        with open(path) as f:
            tree = ast.parse(f.read())
        [prefix] = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                    and [t.id for t in node.targets] == ["NAME_PREFIX"]]
        self.assertEqual(prefix, hostmon.CONTAINER_PREFIX)

    def test_listening_sockets_of_a_port(self):
        self.assertEqual({46916858}, hostmon.parse_listening_inodes(PROC_NET_TCP, 22822))
        self.assertEqual({21113}, hostmon.parse_listening_inodes(PROC_NET_TCP, 22))
        self.assertEqual({21115}, hostmon.parse_listening_inodes(PROC_NET_TCP6, 22))
        self.assertEqual(set(), hostmon.parse_listening_inodes(PROC_NET_TCP, 46274))
        self.assertEqual(set(), hostmon.parse_listening_inodes("garbage\n0: x y 0A\n", 22))
        self.assertEqual(46916858, hostmon.socket_inode("socket:[46916858]"))
        self.assertIsNone(hostmon.socket_inode("pipe:[46916858]"))
        self.assertIsNone(hostmon.socket_inode("/dev/null"))

    def test_native_process_tree(self):
        # 1 init, 500 sshd (listener), 510 a worker that kept the socket, 600 a session,
        # 601 its shell, 602 sysbench, 700 another session: the agent's (its shell 701,
        # the agent 702), 800 a netserver that detached (its parent is init)
        parents = {1: 0, 500: 1, 510: 500, 600: 500, 601: 600, 602: 601, 700: 500,
                   701: 700, 702: 701, 800: 1}
        roots = hostmon.tree_roots({500, 510}, parents)
        self.assertEqual([500], roots)
        self.assertEqual([702, 701, 700, 500, 1], hostmon.ancestors(parents, 702))
        skip = set(hostmon.ancestors(parents, 702)) - set(roots)
        self.assertEqual({500, 510, 600, 601, 602},
                         hostmon.process_tree(parents, roots, skip))
        self.assertEqual({500, 510, 600, 601, 602, 700, 701, 702},
                         hostmon.process_tree(parents, roots))
        self.assertEqual([], hostmon.ancestors(parents, 4242))
        self.assertEqual("native:22822", hostmon.native_id(22822))

    def test_shipped_module_is_ascii(self):
        # The SSH relay counts the payload's characters as bytes.
        with open(hostmon.__file__, "rb") as f:
            text = f.read()
        self.assertEqual([], [(i, c) for i, c in enumerate(text) if c > 127][:5])


def sample(t, busy=0, idle=0, user=None, used=None, instances=None, kind="sample"):
    """A sample line with CPU counters in jiffies (hz 100) and memory in MiB."""
    user = busy if user is None else user
    return {"t": t, "type": kind, "hz": 100, "ncpu": 2,
            "cpu": {"user": user, "nice": 0, "system": busy - user, "idle": idle,
                    "iowait": 0, "irq": 0, "softirq": 0, "steal": 0},
            "mem": {"total": 1000 * hostmon.MIB, "used": (used or 0) * hostmon.MIB,
                    "available": (1000 - (used or 0)) * hostmon.MIB},
            "instances": instances or {}}


def jsonl(records):
    return io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in records))


class WindowTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.records = [{"t": 99.0, "type": "start", "hz": 100}] + [
            sample(100.0 + i) for i in range(2000)]

    def times(self, found):
        return [s["t"] for s in found]

    def test_window_with_one_sample_either_side(self):
        f = jsonl(self.records)
        self.assertEqual([1049.0, 1050.0, 1051.0, 1052.0, 1053.0],
                         self.times(hostmon.read_window(f, 1049.5, 1052.5)))
        self.assertEqual([1049.0, 1050.0, 1051.0],
                         self.times(hostmon.read_window(f, 1050.0, 1050.0)))

    def test_window_at_the_edges(self):
        f = jsonl(self.records)
        self.assertEqual([100.0, 101.0], self.times(hostmon.read_window(f, 0, 100.5)))
        self.assertEqual([2098.0, 2099.0], self.times(hostmon.read_window(f, 2098.5, 5000)))
        self.assertEqual([2099.0], self.times(hostmon.read_window(f, 3000, 4000)))
        self.assertEqual([], hostmon.read_window(io.BytesIO(b""), 0, 1))

    def test_incomplete_last_line_is_skipped(self):
        data = jsonl(self.records[:10]).getvalue() + b'{"t": 200.0, "type": "sam'
        found = hostmon.read_window(io.BytesIO(data), 105, 300)
        self.assertEqual([104.0, 105.0, 106.0, 107.0, 108.0], self.times(found))
        self.assertEqual(108.0, hostmon.last_time(io.BytesIO(data)))

    def test_header_and_last_time(self):
        f = jsonl(self.records)
        self.assertEqual(100, hostmon.read_header(f)["hz"])
        self.assertEqual(2099.0, hostmon.last_time(f, block=64))
        self.assertIsNone(hostmon.read_header(jsonl(self.records[1:])))
        self.assertIsNone(hostmon.last_time(io.BytesIO(b"")))


class SeriesTestCase(testtools.TestCase):

    def test_interpolate_and_clamp(self):
        pts = [(0.0, 0.0), (1.0, 10.0), (3.0, 30.0)]
        self.assertEqual(5.0, hostmon.interpolate(pts, 0.5))
        self.assertEqual(20.0, hostmon.interpolate(pts, 2.0))
        self.assertEqual(0.0, hostmon.interpolate(pts, -1))
        self.assertEqual(30.0, hostmon.interpolate(pts, 9))
        self.assertIsNone(hostmon.interpolate([], 1))

    def test_counter_delta_over_intervals(self):
        pts = [(0.0, 0.0), (10.0, 100.0)]
        self.assertEqual(30.0, hostmon.delta(pts, [(1.0, 2.0), (5.0, 7.0)]))

    def test_gauge_mean_is_time_weighted(self):
        # 0 -> 10 over [0, 1], then 10 until 3: mean over [0, 3] = (5 + 20) / 3
        pts = [(0.0, 0.0), (1.0, 10.0), (3.0, 10.0)]
        mean, peak = hostmon.gauge(pts, [(0.0, 3.0)])
        self.assertAlmostEqual(25 / 3, mean)
        self.assertEqual(10.0, peak)
        self.assertEqual((None, None), hostmon.gauge(pts, [(2.0, 2.0)]))
        self.assertEqual((None, None), hostmon.gauge([], [(0.0, 1.0)]))

    def test_counter_starts_at_zero_when_its_process_was_born(self):
        samples = [sample(10.0, instances={U1: {"cpu": 2.0, "born": 9.0}}),
                   sample(11.0, instances={U1: {"cpu": 2.5, "born": 9.0}})]
        pts = hostmon.points(samples, lambda s: hostmon.instance_of(s, U1)["cpu"],
                             zero_at=hostmon.born(samples, U1))
        self.assertEqual([(9.0, 0.0), (10.0, 2.0), (11.0, 2.5)], pts)


class PhasesTestCase(testtools.TestCase):

    def test_phases_of_a_reboot_iteration(self):
        actions = [
            {"name": "vmct.build", "started_at": 0.0, "finished_at": 10.0},
            {"name": "vmct.wait_for_network", "started_at": 10.0, "finished_at": 14.0},
            {"name": "vmct.reboot_soft", "started_at": 15.0, "finished_at": 20.0,
             "children": [{"name": "vmct.reboot_soft.active"}]},
            {"name": "vmct.reboot_hard", "started_at": 21.0, "finished_at": 23.0},
            {"name": "vmct.delete", "started_at": 24.0, "finished_at": 26.0},
        ]
        self.assertEqual([
            ("build", [(0.0, 10.0), (10.0, 14.0)]),
            ("reboot", [(15.0, 20.0), (21.0, 23.0)]),
            ("delete", [(24.0, 26.0)]),
            ("idle", [(14.0, 15.0), (20.0, 21.0), (23.0, 24.0)]),
            ("iteration", [(0.0, 26.0)]),
        ], hostmon.phases(actions))

    def test_phase_names(self):
        for name, phase in (("vmct.sysbench_cpu", "benchmark"),
                            ("vmct.netperf_tcp_rr", "benchmark"),
                            ("vmct.sysbench_fileio_rndrd_direct", "benchmark"),
                            ("vmct.wait_for_ssh", "build"), ("vmct.stop", "stop"),
                            ("vmct.start", "start"), ("vmct.start_netserver",
                                                      "start_netserver"),
                            ("vmct.check_rescue", "check_rescue"),
                            ("nova.boot_server", "nova.boot_server")):
            self.assertEqual(phase, hostmon.phase_of(name), name)

    def test_open_action_ends_at_end_or_is_left_out(self):
        actions = [{"name": "vmct.build", "started_at": 0.0, "finished_at": 1.0},
                   {"name": "vmct.delete", "started_at": 1.0}]
        self.assertEqual([("build", [(0.0, 1.0)]), ("delete", [(1.0, 3.0)]),
                          ("iteration", [(0.0, 3.0)])], hostmon.phases(actions, end=3.0))
        self.assertEqual([("build", [(0.0, 1.0)]), ("iteration", [(0.0, 1.0)])],
                         hostmon.phases(actions))
        self.assertEqual([], hostmon.phases([]))


class SummaryTestCase(testtools.TestCase):

    def samples(self):
        # 2 CPUs (200 jiffies/s): 100 jiffies/s busy (75 user, 25 system) until t=10,
        # then 200 busy (all user). The instance appears at t=3 (born 2.5), its CPU
        # counter grows 0.5 s per second, PSS 100 MiB then 200 MiB from t=6.
        found = []
        busy = user = idle = 0
        for t in range(0, 21):
            inst = None
            if t >= 3:
                inst = {U1: {"kind": "qemu", "born": 2.5, "cpu": 0.5 * (t - 2.5),
                             "pss": (100 if t < 6 else 200) * hostmon.MIB,
                             "rss": 250 * hostmon.MIB, "disk": 5 * hostmon.MIB}}
            found.append(sample(float(t), busy=busy, user=user, idle=idle, used=400 + t,
                                instances=inst))
            if t < 10:
                busy, user, idle = busy + 100, user + 75, idle + 100
            else:
                busy, user = busy + 200, user + 200
        return found

    def test_host_cpu_seconds_and_split_per_phase(self):
        phase_list = [("build", [(0.0, 10.0)]), ("benchmark", [(10.0, 20.0)]),
                      ("iteration", [(0.0, 20.0)])]
        build, bench, whole = hostmon.summarize(self.samples(), phase_list, U1)
        self.assertEqual(10.0, build["host_cpu_s"])
        self.assertEqual(0.375, build["user"])
        self.assertEqual(0.125, build["system"])
        self.assertEqual(0.0, build["steal"])
        self.assertEqual(20.0, bench["host_cpu_s"])
        self.assertEqual(1.0, bench["user"])
        self.assertEqual(30.0, whole["host_cpu_s"])
        self.assertEqual(20.0, whole["seconds"])

    def test_host_memory_per_phase(self):
        [row] = hostmon.summarize(self.samples(), [("build", [(0.0, 10.0)])])
        self.assertEqual(405 * hostmon.MIB, row["mem_used_mean"])
        self.assertEqual(410 * hostmon.MIB, row["mem_used_max"])
        self.assertEqual((1000 - 410) * hostmon.MIB, row["mem_available_min"])
        self.assertIsNone(row["cpu_s"])
        self.assertIsNone(row["pss_mean"])

    def test_instance_figures_only_while_it_existed(self):
        [build] = hostmon.summarize(self.samples(), [("build", [(0.0, 10.0)])], U1)
        # CPU from its birth (2.5) to 10: 0.5 s per second
        self.assertEqual(3.75, build["cpu_s"])
        # PSS over [3, 10]: 100 until 5, ramp to 200 at 6, 200 after: (200 + 150 + 800) / 7
        self.assertAlmostEqual(1150 / 7 * hostmon.MIB, build["pss_mean"])
        self.assertEqual(200 * hostmon.MIB, build["pss_max"])
        self.assertEqual(250 * hostmon.MIB, build["rss_max"])
        self.assertEqual(5 * hostmon.MIB, build["disk_max"])
        self.assertIsNone(build["cgroup_mean"])

    def test_phase_between_two_samples_is_interpolated(self):
        [row] = hostmon.summarize(self.samples(), [("reboot", [(12.25, 12.75)])], U1)
        self.assertEqual(1.0, row["host_cpu_s"])       # 2 CPUs busy for 0.5 s
        self.assertEqual(0.25, row["cpu_s"])
        self.assertEqual(200 * hostmon.MIB, row["pss_mean"])

    def test_series_for_the_charts(self):
        series = hostmon.series(self.samples()[:5], U1, t0=1.0)
        self.assertEqual([(0.0, 37.5), (1.0, 37.5), (2.0, 37.5), (3.0, 37.5)],
                         series["cpu_user"])
        self.assertEqual([(0.0, 12.5), (1.0, 12.5), (2.0, 12.5), (3.0, 12.5)],
                         series["cpu_system"])
        # 0.5 CPU s per second of 2 CPUs: 25 %
        self.assertEqual([(3.0, 25.0)], series["instance_cpu"])
        self.assertEqual([(2.0, 100 * hostmon.MIB), (3.0, 100 * hostmon.MIB)], series["pss"])
        self.assertEqual((-1.0, 400 * hostmon.MIB), series["mem_used"][0])
        self.assertEqual([], series["cgroup"])
        self.assertEqual([], hostmon.series(self.samples()[:5])["pss"])
