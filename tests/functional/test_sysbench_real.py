"""sysbench builders and parsers against the real sysbench binary on this machine.

Short runs (1 s or a few thousand events, small files in a temporary directory):
about 9 s in all (2-core VM).
"""

import os
import shutil
import subprocess
import tempfile

import testtools

from rally_vmct.workloads import sysbench as sb


def run(argv, cwd=None):
    environment = dict(os.environ)
    environment.update(sb.env())
    done = subprocess.run(argv, cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        raise AssertionError("%s failed (%d): %s %s"
                             % (argv, done.returncode, done.stdout, done.stderr))
    return done.stdout


def run_shell(line):
    """Through /bin/sh, as the scenarios do over SSH."""
    done = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        raise AssertionError("%r failed (%d): %s %s"
                             % (line, done.returncode, done.stdout, done.stderr))
    return done.stdout


class RealSysbenchTestCase(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dialect = sb.detect_dialect(run(["sysbench", "--version"]))

    def assertRate(self, metric, unit):
        self.assertEqual(unit, metric.unit)
        self.assertGreater(metric.value, 0)

    def assertGeneral(self, metrics):
        self.assertRate(metrics["total_time"], "s")
        self.assertRate(metrics["events"], "events")
        self.assertRate(metrics["events_per_second"], "events/s")
        for name in ("latency_min", "latency_avg", "latency_max", "latency_p95"):
            self.assertEqual("ms", metrics[name].unit)
            self.assertGreaterEqual(metrics[name].value, 0)
        self.assertLessEqual(metrics["latency_min"].value, metrics["latency_avg"].value)
        self.assertLessEqual(metrics["latency_avg"].value, metrics["latency_max"].value)

    def test_dialect_of_installed_binary(self):
        self.assertEqual("1.0", self.dialect)

    def test_cpu_fixed_time(self):
        argv = sb.build("cpu", self.dialect, threads=1, time=1, max_prime=2000)
        metrics = sb.parse("cpu", self.dialect, run(argv))
        self.assertGeneral(metrics)
        self.assertGreater(metrics["total_time"].value, 0.9)
        self.assertLess(metrics["total_time"].value, 5)
        rate = metrics["events"].value / metrics["total_time"].value
        self.assertAlmostEqual(1.0, metrics["events_per_second"].value / rate, delta=0.05)

    def test_cpu_fixed_work_through_shell(self):
        argv = sb.build("cpu", self.dialect, threads=2, events=500, max_prime=2000)
        metrics = sb.parse("cpu", self.dialect, run_shell(sb.render(argv)))
        self.assertGeneral(metrics)
        self.assertEqual(500, metrics["events"].value)
        self.assertEqual(sb.FIXED_WORK, sb.run_mode("cpu", self.dialect, events=500))

    def test_memory_read_and_write(self):
        for oper, access in (("read", "seq"), ("write", "rnd")):
            argv = sb.build("memory", self.dialect, time=1, block_size="4K",
                            total_size="32M", oper=oper, scope="global",
                            access_mode=access)
            metrics = sb.parse("memory", self.dialect, run(argv))
            self.assertGeneral(metrics)
            self.assertEqual(8192, metrics["operations"].value)
            self.assertAlmostEqual(32.0, metrics["mib_transferred"].value, places=2)
            self.assertEqual("MiB", metrics["mib_transferred"].unit)
            self.assertRate(metrics["mib_per_second"], "MiB/s")
            self.assertRate(metrics["operations_per_second"], "ops/s")

    def test_fileio_prepare_run_cleanup(self):
        workdir = tempfile.mkdtemp(prefix="vmct-sysbench-")
        self.addCleanup(shutil.rmtree, workdir, True)
        params = dict(num=2, total_size="8M", block_size="16K", time=1, threads=1)
        prepared = sb.parse("fileio", self.dialect, run(
            sb.build("fileio", self.dialect, "prepare", **params), cwd=workdir), "prepare")
        self.assertEqual(2, prepared["files"].value)
        self.assertEqual(8.0, prepared["file_total_mib"].value)
        self.assertEqual(2, len(os.listdir(workdir)))

        expect = {"seqrd": ("reads_per_second", "read_mib_per_second"),
                  "rndrd": ("reads_per_second", "read_mib_per_second"),
                  "seqwr": ("writes_per_second", "written_mib_per_second"),
                  "rndwr": ("writes_per_second", "written_mib_per_second"),
                  "seqrewr": ("writes_per_second", "written_mib_per_second"),
                  "rndrw": ("reads_per_second", "writes_per_second")}
        for mode in sb.FILE_TEST_MODES:
            argv = sb.build("fileio", self.dialect, "run", test_mode=mode, **params)
            metrics = sb.parse("fileio", self.dialect, run(argv, cwd=workdir))
            self.assertGeneral(metrics)
            for name in expect[mode]:
                self.assertRate(metrics[name], metrics[name].unit)
            self.assertRate(metrics["requests_per_second"], "requests/s")
            self.assertRate(metrics["mib_per_second"], "MiB/s")

        # O_DIRECT with fdatasync at the end, through the shell line with cd.
        line = sb.render(sb.build("fileio", self.dialect, "run", test_mode="rndrw",
                                  extra_flags="direct", fsync_freq=0, fsync_end=True,
                                  fsync_mode="fdatasync", **params), cwd=workdir)
        direct = run_shell(line)
        self.assertIn("Extra file open flags: directio", direct)
        metrics = sb.parse("fileio", self.dialect, direct)
        self.assertRate(metrics["reads_per_second"], "reads/s")

        sb.parse("fileio", self.dialect, run(
            sb.build("fileio", self.dialect, "cleanup", **params), cwd=workdir), "cleanup")
        self.assertEqual([], os.listdir(workdir))
