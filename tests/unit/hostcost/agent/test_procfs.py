"""The host monitor agent's /proc and cgroup parsers, on recorded text.

The /proc and cgroup texts below were read on the development machine (Debian 12,
Linux 6.x, cgroup v1 with a cgroup2 mount: "hybrid") or, for cgroup v2, copied
from a Debian 12 host with the unified hierarchy.
"""

import ast
import os

import testtools

from rally_vmct.hostcost.agent import procfs


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
        cpu, btime = procfs.parse_proc_stat(PROC_STAT)
        self.assertEqual({"user": 3258408, "nice": 38305, "system": 669567, "idle": 3181472,
                          "iowait": 58353, "irq": 0, "softirq": 92285, "steal": 10748}, cpu)
        self.assertEqual(1795464036, btime)
        self.assertEqual(sum(cpu.values()) - 3181472 - 58353, procfs.cpu_busy(cpu))
        self.assertRaises(ValueError, procfs.parse_proc_stat, "intr 1\n")

    def test_old_kernel_without_steal_columns(self):
        cpu, _ = procfs.parse_proc_stat("cpu  10 0 5 100\n")
        self.assertEqual(0, cpu["steal"])
        self.assertEqual(115, procfs.cpu_total(cpu))

    def test_cpu_split_between_two_samples(self):
        before = dict(user=100, nice=0, system=50, idle=800, iowait=0, irq=0, softirq=10,
                      steal=40)
        after = dict(user=400, nice=100, system=150, idle=1100, iowait=50, irq=0, softirq=10,
                     steal=140)
        split = procfs.cpu_split(before, after)
        # 950 jiffies: user+nice 400, system 100, iowait 50, steal 100, idle 300
        expected = {"user": 400, "system": 100, "iowait": 50, "steal": 100, "idle": 300}
        self.assertEqual({k: v / 950 for k, v in expected.items()}, split)
        self.assertIsNone(procfs.cpu_split(after, after))

    def test_meminfo(self):
        self.assertEqual({"total": 24683656 * 1024, "available": 19371312 * 1024,
                          "used": (24683656 - 19371312) * 1024},
                         procfs.parse_meminfo(MEMINFO))

    def test_meminfo_before_memavailable(self):
        text = MEMINFO.replace("MemAvailable:   19371312 kB\n", "")
        found = procfs.parse_meminfo(text)
        self.assertEqual((16047712 + 35440 + 2696336) * 1024, found["available"])
        self.assertRaises(ValueError, procfs.parse_meminfo, "MemFree: 1 kB\n")

    def test_smaps_rollup_and_status(self):
        self.assertEqual({"rss": 276584 * 1024, "pss": 270428 * 1024},
                         procfs.parse_smaps_rollup(SMAPS_ROLLUP))
        self.assertRaises(ValueError, procfs.parse_smaps_rollup, "Swap: 0 kB\n")
        self.assertEqual(1024 * 5000, procfs.parse_status_rss(
            "Name:\tqemu\nVmPeak:\t9000 kB\nVmRSS:\t    5000 kB\n"))
        self.assertIsNone(procfs.parse_status_rss("Name:\tkthreadd\n"))

    def test_pid_stat_with_spaces_and_parentheses_in_the_name(self):
        expected = {"ticks": 548, "child_ticks": 10, "start": 3670525, "ppid": 1}
        self.assertEqual(expected, procfs.parse_pid_stat(PID_STAT))
        odd = PID_STAT.replace("(qemu-system-x86)", "(a) b (c)")
        self.assertEqual(expected, procfs.parse_pid_stat(odd))

    def test_cgroup_v1_directories(self):
        mounts = procfs.parse_mountinfo_cgroups(MOUNTINFO_V1)
        self.assertEqual(("/sys/fs/cgroup/memory", "/"), mounts["memory"])
        self.assertEqual(("/sys/fs/cgroup/unified", "/"), mounts[""])
        self.assertNotIn("rw", mounts)
        proc = procfs.parse_proc_cgroup(
            "4:memory:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/\n")
        self.assertEqual((1, "/sys/fs/cgroup/memory/docker/abc"),
                         procfs.cgroup_dir(mounts, proc, "memory"))
        self.assertEqual((1, "/sys/fs/cgroup/cpuacct/docker/abc"),
                         procfs.cgroup_dir(mounts, proc, "cpuacct"))

    def test_cgroup_v2_directory(self):
        mounts = procfs.parse_mountinfo_cgroups(MOUNTINFO_V2)
        proc = procfs.parse_proc_cgroup("0::/system.slice/docker-abc.scope\n")
        self.assertEqual((2, "/sys/fs/cgroup/system.slice/docker-abc.scope"),
                         procfs.cgroup_dir(mounts, proc, "memory"))
        self.assertEqual((2, "/sys/fs/cgroup/system.slice/docker-abc.scope"),
                         procfs.cgroup_dir(mounts, proc, "cpuacct"))
        self.assertEqual((2, "/sys/fs/cgroup"),
                         procfs.cgroup_dir(mounts, {"": "/"}, "memory"))
        self.assertIsNone(procfs.cgroup_dir({}, proc, "memory"))

    def test_cgroup_mounted_below_its_root(self):
        # A process in a cgroup namespace: the mount's root is the namespace's cgroup.
        mounts = procfs.parse_mountinfo_cgroups(
            "28 25 0:25 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
        self.assertEqual((2, "/sys/fs/cgroup/docker/abc"), procfs.cgroup_dir(
            mounts, {"": "/lxc/c1/docker/abc"}, "memory"))

    def test_mount_point_escapes(self):
        mounts = procfs.parse_mountinfo_cgroups(
            "28 25 0:25 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n")
        self.assertEqual(("/mnt/cg two", "/"), mounts[""])

    def test_cgroup_memory_v1_and_v2(self):
        self.assertEqual({"cgroup": 220000000, "anon": 210763776, "file": 2097152},
                         procfs.cgroup_memory(1, "220000000\n", MEMORY_STAT_V1))
        self.assertEqual({"cgroup": 214000000, "anon": 210763776, "file": 2097152},
                         procfs.cgroup_memory(2, "214000000\n", MEMORY_STAT_V2))
        # v1 without hierarchy totals
        self.assertEqual(209715200, procfs.cgroup_memory(
            1, "1\n", "cache 1\nrss 209715200\n")["anon"])

    def test_cgroup_cpu(self):
        self.assertEqual(1.5, procfs.cgroup_cpu_seconds(1, "1500000000\n"))
        self.assertEqual(2.25, procfs.cgroup_cpu_seconds(
            2, "usage_usec 2250000\nuser_usec 2000000\nsystem_usec 250000\n"))
        self.assertEqual(("memory.current", "memory.stat"), procfs.cgroup_memory_files(2))
        self.assertEqual(("memory.usage_in_bytes", "memory.stat"),
                         procfs.cgroup_memory_files(1))
        self.assertEqual("cpuacct.usage", procfs.cgroup_cpu_file(1))

    def test_qemu_server_id_and_instance_directory(self):
        self.assertEqual(U1, procfs.qemu_server_id(QEMU_CMDLINE))
        self.assertEqual(U1, procfs.qemu_server_id(
            QEMU_CMDLINE.replace(U1.encode(), U1.upper().encode())))
        self.assertIsNone(procfs.qemu_server_id(b"/usr/bin/python3\0-uuid\0"))
        self.assertIsNone(procfs.qemu_server_id(b"qemu\0-uuid\0not-a-uuid\0"))
        self.assertEqual("/var/tmp/vmct-aio/data/nova-qemu/instances/" + U1,
                         procfs.instance_dir(QEMU_CMDLINE, U1))
        drive = b"qemu\0-drive\0file=/var/lib/nova/instances/%s/disk,if=none\0" % U1.encode()
        self.assertEqual("/var/lib/nova/instances/" + U1, procfs.instance_dir(drive, U1))
        self.assertIsNone(procfs.instance_dir(b"qemu\0-uuid\0" + U1.encode(), U1))

    def test_container_names(self):
        self.assertEqual(U1, procfs.container_server_id("/nova-" + U1))
        self.assertEqual(U1, procfs.container_server_id("nova-" + U1))
        self.assertIsNone(procfs.container_server_id("/nova-%s-rescue" % U1))
        self.assertIsNone(procfs.container_server_id("/vmct-test-" + U1))
        self.assertEqual(U1, procfs.container_server_id("/vmct-test-" + U1, "vmct-test-"))

    def test_container_prefix_is_nova_dockers(self):
        path = os.path.join(ROOT, "nova-docker", "nova_docker_vmct", "container.py")
        with open(path) as f:
            tree = ast.parse(f.read())
        [prefix] = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                    and [t.id for t in node.targets] == ["NAME_PREFIX"]]
        self.assertEqual(prefix, procfs.CONTAINER_PREFIX)

    def test_listening_sockets_of_a_port(self):
        self.assertEqual({46916858}, procfs.parse_listening_inodes(PROC_NET_TCP, 22822))
        self.assertEqual({21113}, procfs.parse_listening_inodes(PROC_NET_TCP, 22))
        self.assertEqual({21115}, procfs.parse_listening_inodes(PROC_NET_TCP6, 22))
        self.assertEqual(set(), procfs.parse_listening_inodes(PROC_NET_TCP, 46274))
        self.assertEqual(set(), procfs.parse_listening_inodes("garbage\n0: x y 0A\n", 22))
        self.assertEqual(46916858, procfs.socket_inode("socket:[46916858]"))
        self.assertIsNone(procfs.socket_inode("pipe:[46916858]"))
        self.assertIsNone(procfs.socket_inode("/dev/null"))

    def test_native_process_tree(self):
        # 1 init, 500 sshd (listener), 510 a worker that kept the socket, 600 a session,
        # 601 its shell, 602 sysbench, 700 another session: the agent's (its shell 701,
        # the agent 702), 800 a netserver that detached (its parent is init)
        parents = {1: 0, 500: 1, 510: 500, 600: 500, 601: 600, 602: 601, 700: 500,
                   701: 700, 702: 701, 800: 1}
        roots = procfs.tree_roots({500, 510}, parents)
        self.assertEqual([500], roots)
        self.assertEqual([702, 701, 700, 500, 1], procfs.ancestors(parents, 702))
        skip = set(procfs.ancestors(parents, 702)) - set(roots)
        self.assertEqual({500, 510, 600, 601, 602},
                         procfs.process_tree(parents, roots, skip))
        self.assertEqual({500, 510, 600, 601, 602, 700, 701, 702},
                         procfs.process_tree(parents, roots))
        self.assertEqual([], procfs.ancestors(parents, 4242))
        self.assertEqual("native:22822", procfs.native_id(22822))

    def test_shipped_module_is_ascii(self):
        # The SSH relay counts the payload's characters as bytes.
        with open(procfs.__file__, "rb") as f:
            text = f.read()
        self.assertEqual([], [(i, c) for i, c in enumerate(text) if c > 127][:5])
