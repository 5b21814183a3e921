"""VMCT.native_benchmark through the real ``rally task start``.

A real sshd on a loopback port is the "bare-metal host"; netserver is started by the
scenario itself over SSH (netperf_peer.ssh) on another free loopback port. Rally runs
with its own DB in a temp dir and an empty env: no cloud involved. With the
vmct_host_monitor context measuring that sshd (native_ports), the iterations' host cost
tables and the comparison export have native's rows.
"""

import json
import os
import subprocess
import uuid

import testtools

from rally_vmct.task import output
from tests.functional import rally_home
from tests.functional import sshd


def write_task(path, args, times=2, concurrency=1, contexts=None):
    task = {"version": 2, "title": "native", "subtasks": [{
        "title": "native baseline",
        "workloads": [{"scenario": {"VMCT.native_benchmark": args},
                       "runner": {"constant": {"times": times,
                                               "concurrency": concurrency}},
                       "contexts": contexts or {},
                       "sla": {"failure_rate": {"max": 0}}}]}]}
    with open(path, "w") as f:
        json.dump(task, f)
    return path


class NativeBenchmarkTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.home = self.useFixture(rally_home.RallyHome())
        self.home.rally("env", "create", "--name", "native")
        self.server = self.useFixture(sshd.SSHServer())
        self.netserver_port = sshd.free_port()
        self.addCleanup(self.stop_netserver)

    def stop_netserver(self):
        subprocess.run(["pkill", "-f", "netserver -p %d" % self.netserver_port])

    def host(self):
        return {"host": self.server.host, "port": self.server.port,
                "user": self.server.user, "key_file": self.server.key_file}

    def test_kek_style_plan_runs_and_reports(self):
        args = {
            "hosts": [self.host()],
            "workloads": [
                {"sysbench": "cpu", "max_prime": 2000, "time": 1},
                {"sysbench": "memory", "block_size": "1K", "oper": "read",
                 "total_size": "64M", "time": 1},
                {"sysbench": "fileio", "test_mode": "rndrd", "block_size": "4K",
                 "total_size": "8M", "num": 2, "time": 1, "extra_flags": "direct"},
                {"netperf": "TCP_RR", "duration": 1}],
            "netperf_peer": {"host": "127.0.0.1", "control_port": self.netserver_port,
                             "data_port": sshd.free_port(), "ssh": self.host(),
                             "listen": "127.0.0.1"},
            "fileio_dir": "/var/tmp/vmct-fileio-test-%s" % uuid.uuid4().hex[:8],
            "min_runs": 2, "max_runs": 3, "cv_target": 50,
        }
        task = write_task(os.path.join(self.home.path, "task.json"), args)
        proc = self.home.rally("task", "start", task)
        self.assertIn("Task", proc.stdout)

        (workload,) = self.home.workloads()
        iterations = workload["data"]
        self.assertEqual(2, len(iterations))
        for iteration in iterations:
            self.assertEqual([], iteration["error"])
            charts = {c["title"]: dict(c["data"]) for c in iteration["output"]["additive"]}
            cpu = charts["native: sysbench cpu [events/s]"]["events_per_second"]
            self.assertGreater(cpu, 10)
            self.assertGreater(
                charts["native: sysbench memory read [MiB/s]"]["mib_per_second"], 1)
            self.assertGreater(charts["native: sysbench fileio rndrd direct [reads/s]"][
                "reads_per_second"], 1)
            self.assertGreater(
                charts["native: netperf TCP_RR [trans/s]"]["transaction_rate"], 100)
            actions = [a["name"] for a in iteration["atomic_actions"]]
            self.assertEqual(["vmct.start_netserver", "vmct.sysbench_cpu",
                              "vmct.sysbench_memory_read",
                              "vmct.sysbench_fileio_rndrd_direct", "vmct.netperf_tcp_rr"],
                             actions)
            complete = {c["title"]: c for c in iteration["output"]["complete"]}
            facts = dict(complete["native: instance facts"]["data"]["rows"])
            self.assertEqual("1.0", facts["sysbench dialect"])
            self.assertEqual([], [key for key, _ in output.DISCLOSED_FACTS
                                  if not facts.get(key)])
            self.assertEqual("loopback on the host (127.0.0.1)", facts["netperf_path"])
            self.assertEqual("none (not a Nova instance)", facts["nova_hypervisor_type"])
            self.assertEqual(("on", args["fileio_dir"]),
                             (facts["fileio_direct"], facts["fileio_dir"]))
            self.assertEqual("2-3 (cv_target 50 %)", facts["runs"])
            runs = complete["native: sysbench cpu runs"]["data"]["rows"]
            self.assertIn(len(runs), (2, 3))

        # netserver bound to loopback only, as asked (listen)
        listening = subprocess.run(["ss", "-Hltn", "sport = :%d" % self.netserver_port],
                                   capture_output=True, text=True, check=True).stdout.split()
        self.assertIn("127.0.0.1:%d" % self.netserver_port, listening)
        self.assertEqual(1, sum(1 for word in listening
                                if word.endswith(":%d" % self.netserver_port)))

        report = os.path.join(self.home.path, "report.html")
        self.home.rally("task", "report", "--out", report)
        with open(report) as f:
            html = f.read()
        self.assertIn("native: sysbench cpu [events/s]", html)
        self.assertIn("vmct.sysbench_fileio_rndrd_direct", html)

    def test_host_monitor_measures_the_sshd_tree(self):
        args = {"hosts": [self.host()], "workloads": [{"sysbench": "cpu", "time": 2}]}
        monitor = {"hosts": ["local"], "interval": 0.5, "docker_socket": None}
        path = os.path.join(self.home.path, "task.json")
        proc = self.home.rally("task", "validate", write_task(
            path, args, contexts={"vmct_host_monitor": monitor}), check=False)
        self.assertNotEqual(0, proc.returncode, proc.stdout)
        self.assertIn("the vmct_host_monitor context does not measure the sshd of hosts[0] "
                      "(127.0.0.1 port %d)" % self.server.port, proc.stdout)
        self.assertIn("e.g. vmct_host_monitor: {native_ports: [%d]}" % self.server.port,
                      proc.stdout)
        monitor["native_ports"] = [self.server.port]
        self.home.rally("task", "start", write_task(path, args, times=2,
                                                    contexts={"vmct_host_monitor": monitor}))
        with open("/proc/%d/stat" % self.server.process.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # all the sshd's sessions ever: its own CPU time and its reaped children's
        sshd_cpu = sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        (workload,) = self.home.workloads()
        in_iterations = 0.0
        for iteration in workload["data"]:
            complete = {c["title"]: c for c in iteration["output"]["complete"]}
            self.assertIn("native: instance memory and disk on local [MiB]", complete)
            table = complete["native: host cost by phase on local"]["data"]
            rows = {row[0]: dict(zip(table["cols"], row)) for row in table["rows"]}
            benchmark = rows["benchmark"]
            print("native benchmark phase: instance CPU %s s (host %s s), PSS mean %s MiB, "
                  "RSS max %s MiB" % (benchmark["instance CPU [CPU s]"],
                                      benchmark["host CPU [CPU s]"],
                                      benchmark["instance PSS, mean [MiB]"],
                                      benchmark["instance RSS, max [MiB]"]))
            # sysbench keeps a CPU busy for 2 s: a share of it even on a loaded host
            self.assertGreater(benchmark["instance CPU [CPU s]"], 0.2)
            self.assertLessEqual(benchmark["instance CPU [CPU s]"],
                                 benchmark["host CPU [CPU s]"] + 0.05)
            self.assertGreater(benchmark["instance PSS, mean [MiB]"], 1)
            in_iterations += rows["iteration"]["instance CPU [CPU s]"]
        print("sshd tree CPU: %.2f s in the iterations, %.2f s in all"
              % (in_iterations, sshd_cpu))
        self.assertLessEqual(in_iterations, sshd_cpu + 0.05)
        out = os.path.join(self.home.path, "cmp.json")
        self.home.rally("task", "export", "--type", "vmct-comparison-json", "--to", out)
        with open(out) as f:
            groups = json.load(f)["groups"]
        native = {g["metric"]: g for g in groups
                  if g["kind"] == "native" and g["group"] == "host cost: benchmark"}
        self.assertEqual({"host CPU (all CPUs, busy)", "instance CPU", "instance PSS, mean"},
                         set(native))
        self.assertEqual(2, native["instance PSS, mean"]["n"])

    def test_refused_login_fails_the_iteration_clearly(self):
        other_key = self.useFixture(sshd.SSHServer()).key_file
        args = {"hosts": [dict(self.host(), key_file=other_key)],
                "workloads": [{"sysbench": "cpu", "time": 1}]}
        task = write_task(os.path.join(self.home.path, "task.json"), args, times=1)
        proc = self.home.rally("task", "start", task, check=False)
        self.assertEqual(2, proc.returncode, proc.stdout)  # SLA failure_rate
        (workload,) = self.home.workloads()
        error = " ".join(workload["data"][0]["error"])
        self.assertIn("Cannot connect to root@127.0.0.1:%d" % self.server.port, error)

    def test_validate_rejects_bad_workloads_naming_the_argument(self):
        cases = [
            ({"hosts": [self.host()], "workloads": [{"sysbench": "oltp"}]},
             "Invalid argument 'workloads': workloads[0]: sysbench test 'oltp'"),
            ({"hosts": [self.host()], "workloads": [{"netperf": "TCP_RR"}]},
             "'netperf_peer' must name the netserver peer"),
            ({"hosts": []}, "Argument 'hosts' must be a non-empty list"),
            ({"hosts": [dict(self.host(), keyfile="/x")]}, "keyfile"),
            ({"hosts": [self.host()], "fileio_dir": "tmp/x"},
             "Argument 'fileio_dir' must be an absolute directory path"),
        ]
        for args, message in cases:
            task = write_task(os.path.join(self.home.path, "bad.json"), args)
            proc = self.home.rally("task", "validate", task, check=False)
            self.assertNotEqual(0, proc.returncode, proc.stdout)
            self.assertIn(message, proc.stdout)
