"""Benchmarks inside real containers of the project's workload image.

Two containers of ``vmct-workload`` (built by tools/images/docker/build from a
debootstrap rootfs): one answers SSH, the other runs netserver. VMCT.native_benchmark
runs through the real ``rally task start`` against them, labelled as kind ``docker``.
"""

import os

import testtools

from tests.functional import containers
from tests.functional import rally_home
from tests.functional import sshd
from tests.functional import test_native_benchmark


class ContainerBenchmarkTestCase(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        containers.ensure_image()

    def test_workloads_in_a_container_through_rally(self):
        target = self.useFixture(containers.SSHContainer())
        control_port = sshd.free_port()
        peer = self.useFixture(containers.Container(
            "exec netserver -D -4 -L 127.0.0.1 -p %d" % control_port))
        home = self.useFixture(rally_home.RallyHome())
        home.rally("env", "create", "--name", "containers")
        args = {
            "kind": "docker",
            "hosts": [{"host": target.host, "port": target.port, "user": "root",
                       "key_file": target.key_file}],
            "workloads": [
                {"sysbench": "cpu", "max_prime": 2000, "time": 1},
                {"sysbench": "fileio", "test_mode": "seqwr", "block_size": "4K",
                 "total_size": "8M", "num": 2, "time": 1, "extra_flags": "direct"},
                {"netperf": "TCP_STREAM", "duration": 1},
                {"netperf": "TCP_RR", "duration": 1}],
            "netperf_peer": {"host": "127.0.0.1", "control_port": control_port,
                             "data_port": sshd.free_port()},
        }
        task = test_native_benchmark.write_task(os.path.join(home.path, "task.json"),
                                                args, times=2)
        home.rally("task", "start", task)

        (workload,) = home.workloads()
        self.assertEqual(0, workload["failed_iteration_count"], peer.logs())
        for iteration in workload["data"]:
            charts = {c["title"]: dict(c["data"]) for c in iteration["output"]["additive"]}
            self.assertGreater(
                charts["docker: sysbench cpu [events/s]"]["events_per_second"], 10)
            self.assertGreater(charts["docker: sysbench fileio seqwr direct [writes/s]"][
                "writes_per_second"], 1)
            self.assertGreater(charts["docker: netperf TCP_STREAM [Mbit/s]"]["throughput"],
                               100)
            self.assertGreater(
                charts["docker: netperf TCP_RR [trans/s]"]["transaction_rate"], 100)
            facts = dict(next(c for c in iteration["output"]["complete"]
                              if c["title"] == "docker: instance facts")["data"]["rows"])
            # The container's own userland (Debian's sysbench), the host's kernel.
            self.assertEqual("sysbench 1.0.20", facts["sysbench"])
            self.assertEqual(os.uname().release, facts["kernel"])
            # Detected, not assumed: a Docker container on this (virtual) host.
            self.assertTrue(facts["virtualization"].startswith("container (docker), host: "),
                            facts["virtualization"])
            # O_DIRECT on the container's overlay2 writable layer, in /var/tmp.
            self.assertEqual(("/var/tmp/vmct-fileio", "overlay", "on"),
                             (facts["fileio_dir"], facts["fileio_fs"], facts["fileio_direct"]))
            self.assertIn("overlay2 writable layer", facts["fileio_device"])

        report = os.path.join(home.path, "report.html")
        home.rally("task", "report", "--html-static", "--out", report)
        with open(report) as f:
            html = f.read()
        self.assertIn("docker: netperf TCP_RR [trans/s]", html)
        self.assertIn("vmct.netperf_tcp_stream", html)
