"""The workload runner drives the real sysbench and netperf of this host.

The executor is a local ``sh -c`` with the same (exit code, stdout, stderr)
contract as Rally's SSH client, so the whole plan (facts, dialect detection,
fileio prepare/run/cleanup, netperf against a real netserver) runs for real.
"""

import os
import shutil
import subprocess

import fixtures

from rally_vmct.workloads import plan
from rally_vmct.workloads import runner
from tests.functional import test_netperf_real


def local_execute(command, timeout):
    proc = subprocess.run(["sh", "-c", command], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


class LocalRunnerTestCase(test_netperf_real.NetserverTestCase):

    def test_small_kek_plan(self):
        workdir = self.useFixture(fixtures.TempDir()).path
        workloads = plan.parse_plan([
            {"sysbench": "cpu", "max_prime": 2000, "time": 1},
            {"sysbench": "memory", "block_size": "1K", "oper": "write",
             "total_size": "64M", "time": 1},
            {"sysbench": "fileio", "test_mode": "rndrd", "block_size": "4K",
             "total_size": "8M", "num": 4, "time": 1},
            {"netperf": "TCP_RR", "duration": 1},
        ])
        facts, dialect, results = runner.run_plan(
            local_execute, workloads, "this host", timeout=120,
            netperf_host="127.0.0.1", control_port=self.control_port,
            data_port=self.data_port, fileio_dir=os.path.join(workdir, "fileio"))
        self.assertEqual("1.0", dialect)
        self.assertTrue(facts["sysbench"].startswith("sysbench 1.0"))
        for result in results:
            self.assertTrue(result.ok, "%s: %s" % (result.workload.label, result.error))
        cpu, memory, fileio, rr = (r.metrics for r in results)
        self.assertGreater(cpu["events_per_second"].value, 10)
        self.assertEqual("events/s", cpu["events_per_second"].unit)
        self.assertGreater(memory["mib_per_second"].value, 1)
        self.assertGreater(fileio["reads_per_second"].value, 1)
        self.assertGreater(rr["transaction_rate"].value, 100)
        # fileio cleaned up after itself, workdir included.
        self.assertFalse(os.path.exists(os.path.join(workdir, "fileio")))

    def test_missing_tool_on_a_host_without_it(self):
        # A PATH with the shell utilities the facts script uses, and no sysbench.
        bin_dir = self.useFixture(fixtures.TempDir()).path
        for tool in ("sh", "uname", "sed", "head", "nproc", "grep", "cat", "cut", "tr"):
            os.symlink(shutil.which(tool), os.path.join(bin_dir, tool))

        def no_sysbench(command, timeout):
            return local_execute("PATH=%s; %s" % (bin_dir, command), timeout)

        error = self.assertRaises(runner.ToolMissing, runner.run_plan, no_sysbench,
                                  plan.parse_plan([{"sysbench": "cpu"}]), "this host")
        self.assertIn("sysbench is not installed on this host", str(error))
