"""samples/tasks/native.yaml renders, validates and runs with real Rally."""

import os
import subprocess

import testtools
import yaml

from tests.functional import containers
from tests.functional import rally_home
from tests.functional import sshd

SAMPLES = os.path.join(containers.ROOT, "samples", "tasks")


class NativeSampleTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.home = self.useFixture(rally_home.RallyHome())
        self.home.rally("env", "create", "--name", "native")

    def test_example_args_validate(self):
        proc = self.home.rally(
            "task", "validate", os.path.join(SAMPLES, "native.yaml"),
            "--task-args-file", os.path.join(SAMPLES, "args", "native-example.yaml"))
        self.assertIn("is valid", proc.stdout)

    def test_sample_runs_against_a_real_host_at_small_scale(self):
        server = self.useFixture(sshd.SSHServer())
        host = {"host": server.host, "port": server.port, "user": "root",
                "key_file": server.key_file}
        control_port = sshd.free_port()
        self.addCleanup(subprocess.run,
                        ["pkill", "-f", "netserver -p %d" % control_port])
        args = {"native_hosts": [host], "times": 1,
                "netperf_peer": {"host": "127.0.0.1", "control_port": control_port,
                                 "data_port": sshd.free_port(), "ssh": host},
                "workloads": [{"sysbench": "cpu", "max_prime": 2000, "time": 1},
                              {"netperf": "TCP_STREAM", "duration": 1}]}
        args_file = os.path.join(self.home.path, "args.yaml")
        with open(args_file, "w") as f:
            yaml.safe_dump(args, f)
        self.home.rally("task", "start", os.path.join(SAMPLES, "native.yaml"),
                        "--task-args-file", args_file)
        (workload,) = self.home.workloads()
        self.assertEqual(1, workload["total_iteration_count"])
        self.assertEqual(0, workload["failed_iteration_count"])
        self.assertTrue(workload["pass_sla"])
