"""Unit tests of rally_vmct.workloads.sysbench: builders, dialects, parsers on real fixtures."""

import os
import shlex

import testtools

from rally_vmct.workloads import sysbench as sb

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                        "fixtures", "sysbench")

UNITS = {"total_time": "s", "events": "events", "events_per_second": "events/s",
         "latency_min": "ms", "latency_avg": "ms", "latency_max": "ms", "latency_p95": "ms",
         "operations": "operations", "operations_per_second": "ops/s",
         "mib_transferred": "MiB", "mib_per_second": "MiB/s", "read_mib": "MiB",
         "written_mib": "MiB", "reads_per_second": "reads/s",
         "writes_per_second": "writes/s", "fsyncs_per_second": "fsyncs/s",
         "requests_per_second": "requests/s", "read_mib_per_second": "MiB/s",
         "written_mib_per_second": "MiB/s", "files": "files", "file_total_mib": "MiB",
         "prepare_time": "s", "prepare_mib_per_second": "MiB/s"}


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def general(time, events, lat_min, lat_avg, lat_max, p95):
    return {"total_time": time, "events": events, "latency_min": lat_min,
            "latency_avg": lat_avg, "latency_max": lat_max, "latency_p95": p95}


def legacy_fileio(time, reads, writes, other, read_mib, written_mib, total_mib,
                  mib_s, req_s):
    return {"reads_per_second": reads / time, "writes_per_second": writes / time,
            "fsyncs_per_second": other / time, "read_mib": read_mib,
            "written_mib": written_mib, "mib_transferred": total_mib,
            "mib_per_second": mib_s, "requests_per_second": req_s,
            "read_mib_per_second": read_mib / time,
            "written_mib_per_second": written_mib / time}


def fileio_10(reads, writes, fsyncs, read_mib, written_mib):
    return {"reads_per_second": reads, "writes_per_second": writes,
            "fsyncs_per_second": fsyncs, "read_mib_per_second": read_mib,
            "written_mib_per_second": written_mib,
            "requests_per_second": reads + writes, "mib_per_second": read_mib + written_mib}


def memory(operations, ops_per_second, mib_transferred, mib_per_second):
    return {"operations": operations, "operations_per_second": ops_per_second,
            "mib_transferred": mib_transferred, "mib_per_second": mib_per_second}


def cpu(events_per_second=None):
    """sysbench 1.0 prints events/s; 0.4 and 0.5 leave it to be derived."""
    return {} if events_per_second is None else {"events_per_second": events_per_second}


def runs(test, own_metrics, table):
    """RUNS entries of ``table``: fixture -> (dialect, general(...), own_metrics(...) arguments).

    events_per_second, unless printed, is derived: events / total time.
    """
    entries = {}
    for name, (dialect, times, own) in table.items():
        metrics = dict(general(*times), **own_metrics(*own))
        metrics.setdefault("events_per_second", metrics["events"] / metrics["total_time"])
        entries[name] = (test, dialect, "run", metrics)
    return entries


# Every number below was read off the fixture by eye; derived ones are written as
# the arithmetic the parser must do. Each row: dialect, general(...) arguments (total time,
# events, latency min, avg, max, p95), then the arguments of the test's own metrics.
CPU = {
    "0.4.12-cpu.txt": ("0.4", (31.1740, 10000, 2.67, 3.12, 12.97, 3.49), ()),
    "0.4.12-cpu-16threads.txt": ("0.4", (11.5526, 10000, 4.59, 18.45, 54.66, 34.66), ()),
    "0.5-cpu.reflowed.txt": ("0.5", (34.4150, 10000, 37.56, 41.27, 136.04, 46.81), ()),
    "1.0-cpu.txt": ("1.0", (1.0010, 29842, 0.03, 0.03, 8.45, 0.04), (29788.33,)),
    "1.0-cpu-events.txt": ("1.0", (0.1613, 2000, 0.11, 0.16, 8.21, 0.12), (12346.09,)),
}
MEMORY = {
    "0.4.12-memory-write.txt": ("0.4", (178.5471, 104857600, 0.00, 0.00, 8.86, 0.00),
                                (104857600, 587282.65, 102400.00, 573.52)),
    "0.4.12-memory-1M.txt": ("0.4", (2.3894, 10240, 0.15, 0.23, 6.59, 0.44),
                             (10240, 4285.66, 10240.00, 4285.66)),
    "0.5-memory.ASSEMBLED.txt": ("0.5", (2.3894, 10240, 0.15, 0.23, 6.59, 0.44),
                                 (10240, 4285.66, 10240.00, 4285.66)),
    "1.0-memory-read.txt": ("1.0", (0.0095, 65536, 0.00, 0.00, 0.03, 0.00),
                            (65536, 6278886.17, 64.00, 6131.72)),
    "1.0-memory-write.txt": ("1.0", (0.0198, 16384, 0.00, 0.00, 0.21, 0.00),
                             (16384, 797565.83, 64.00, 3115.49)),
}
LEGACY_FILEIO = {
    "0.4.12-fileio-rndrd.txt": ("0.4", (300.0050, 645210, 0.00, 0.46, 364.87, 0.96),
                                (300.0050, 645210, 0, 0, 9.8451 * 1024, 0.0, 9.8451 * 1024,
                                 33.604, 2150.66)),
    "0.4.12-fileio-rndwr.txt": ("0.4", (300.0096, 20500, 0.01, 0.03, 23.28, 0.03),
                                (300.0096, 0, 20500, 26239, 0.0, 320.31, 320.31, 1.0677, 68.33)),
    "0.4.12-fileio-rndrw.txt": ("0.4", (300.0035, 702900, 0.01, 0.24, 25.72, 0.73),
                                (300.0035, 421740, 281160, 899653, 6.4352 * 1024,
                                 4.2902 * 1024, 10.725 * 1024, 36.609, 2342.97)),
    "0.4.12-fileio-rndrw-kb.txt": ("0.4", (300.0095, 19100, 0.01, 0.38, 17.92, 0.73),
                                   (300.0095, 11460, 7640, 24431, 179.06, 119.38, 298.44,
                                    1018.6 / 1024, 63.66)),
    "0.5-fileio-rndrw-direct.txt": ("0.5", (2.6090, 5000, 0.02, 7.97, 140.80, 19.61),
                                    (2.6090, 2996, 2004, 10, 46.812, 31.312, 78.125, 29.944,
                                     1916.43)),
    "0.5-fileio-rndrw-direct-runc.txt": ("0.5", (0.2828, 5000, 0.05, 0.87, 5.37, 1.82),
                                         (0.2828, 3002, 1998, 10, 46.906, 31.219, 78.125,
                                          276.22, 17678.09)),
}
# sysbench 1.0 fileio, fixture 1.0-fileio-<test mode>.txt: general(...), fileio_10(...)
FILEIO_10 = {
    "seqrd": ((1.0002, 394211, 0.00, 0.00, 9.28, 0.00), (393838.01, 0.00, 0.00, 6153.72, 0.00)),
    "rndrd": ((1.0003, 424265, 0.00, 0.00, 24.31, 0.00), (423819.28, 0.00, 0.00, 6622.18, 0.00)),
    "seqwr": ((1.0043, 24438, 0.00, 0.04, 89.53, 0.02), (0.00, 23382.37, 937.28, 0.00, 365.35)),
    "rndwr": ((1.0016, 18406, 0.00, 0.05, 27.47, 0.01), (0.00, 17659.52, 708.38, 0.00, 275.93)),
    "seqrewr": ((1.0187, 16013, 0.00, 0.06, 43.54, 0.01), (0.00, 15106.99, 605.26, 0.00, 236.05)),
    "rndrw": ((1.1571, 6861, 0.00, 0.15, 63.66, 0.01), (3419.23, 2279.49, 228.81, 53.43, 35.62)),
    "rndrw-direct": ((1.0079, 21673, 0.02, 0.09, 71.65, 0.07),
                     (12893.59, 8595.39, 7.93, 50.37, 33.58)),
}
RUNS = {
    **runs("cpu", cpu, CPU),
    **runs("memory", memory, MEMORY),
    **runs("fileio", legacy_fileio, LEGACY_FILEIO),
    **runs("fileio", fileio_10, {"1.0-fileio-%s.txt" % mode: ("1.0",) + row
                                 for mode, row in FILEIO_10.items()}),
    "0.4.12-fileio-prepare.txt": ("fileio", "0.4", "prepare",
                                  {"files": 128, "file_total_mib": 25600.0}),
    "1.0-fileio-prepare.txt": ("fileio", "1.0", "prepare",
                               {"files": 4, "file_total_mib": 16.0, "prepare_time": 0.04,
                                "prepare_mib_per_second": 421.64}),
    "1.0-fileio-cleanup.txt": ("fileio", "1.0", "cleanup", {}),
}


class TestFixtures(testtools.TestCase):

    def test_every_fixture_has_expectations(self):
        names = {n for n in os.listdir(FIXTURES) if n.endswith(".txt")}
        self.assertEqual(names - {"1.0-version.txt"}, set(RUNS))

    def test_parse_every_fixture_exactly(self):
        for name, (test, dialect, command, expected) in sorted(RUNS.items()):
            metrics = sb.parse(test, dialect, fixture(name), command=command)
            self.assertEqual(sorted(expected), sorted(metrics), name)
            for key, value in expected.items():
                self.assertAlmostEqual(value, metrics[key].value, places=9,
                                       msg="%s %s" % (name, key))
                self.assertEqual(UNITS[key], metrics[key].unit, "%s %s" % (name, key))
                self.assertIsInstance(metrics[key], sb.Metric)

    def test_counts_are_integers(self):
        metrics = sb.parse("memory", "0.4", fixture("0.4.12-memory-write.txt"))
        self.assertIsInstance(metrics["events"].value, int)
        self.assertIsInstance(metrics["operations"].value, int)

    def test_1_0_requests_per_second_matches_legacy_definition(self):
        # 0.4 prints Requests/sec = (reads + writes) / total time; check on its own log.
        m = sb.parse("fileio", "0.4", fixture("0.4.12-fileio-rndrw.txt"))
        self.assertAlmostEqual(m["requests_per_second"].value,
                               m["reads_per_second"].value + m["writes_per_second"].value,
                               places=2)

    def test_derived_lists_only_parsed_names(self):
        for name, (test, dialect, command, expected) in RUNS.items():
            if command == "run":
                self.assertLessEqual(sb.DERIVED[(test, dialect)], set(expected), name)


class TestDialects(testtools.TestCase):

    def test_detect(self):
        self.assertEqual("1.0", sb.detect_dialect(fixture("1.0-version.txt")))
        self.assertEqual("1.0", sb.detect_dialect("sysbench 1.0.20\n"))
        self.assertEqual("1.0", sb.detect_dialect("sysbench 1.1.0-faaff4f"))
        self.assertEqual("1.0", sb.detect_dialect(
            "WARNING: the --test option is deprecated.\nsysbench 1.0.17 (using bundled "
            "LuaJIT 2.1.0-beta2)"))
        self.assertEqual("0.5", sb.detect_dialect("sysbench 0.5"))
        self.assertEqual("0.5", sb.detect_dialect(
            "sysbench 0.5:  multi-threaded system evaluation benchmark"))
        self.assertEqual("0.4", sb.detect_dialect("sysbench 0.4.12"))
        self.assertEqual("0.4", sb.detect_dialect("sysbench 0.4.10\n"))

    def test_version_string(self):
        self.assertEqual("1.0.20", sb.version("sysbench 1.0.20\n"))
        self.assertEqual("1.1.0-faaff4f", sb.version("sysbench 1.1.0-faaff4f"))
        self.assertEqual("0.5", sb.version("sysbench 0.5:  multi-threaded"))

    def test_unknown_version_text(self):
        for text in ("", "bash: sysbench: command not found", "garbage\n", None):
            e = self.assertRaises(sb.SysbenchError, sb.detect_dialect, text)
            self.assertIn("sysbench 1.0.20", str(e))

    def test_unsupported_version(self):
        for text in ("sysbench 2.0.1", "sysbench 0.3.7"):
            e = self.assertRaises(sb.SysbenchError, sb.detect_dialect, text)
            self.assertIn("unsupported sysbench version", str(e))
            self.assertIn("1.x, 0.5 and 0.4.x", str(e))


class TestBuilders(testtools.TestCase):

    def test_cpu_1_0(self):
        self.assertEqual(
            ["sysbench", "cpu", "--threads=4", "--time=30", "--events=0",
             "--cpu-max-prime=20000", "run"],
            sb.build("cpu", "1.0", threads=4, time=30, max_prime=20000))

    def test_cpu_legacy(self):
        for dialect in ("0.4", "0.5"):
            self.assertEqual(
                ["sysbench", "--test=cpu", "--num-threads=2", "--max-requests=5000",
                 "--max-time=0", "--cpu-max-prime=10000", "run"],
                sb.build("cpu", dialect, threads=2, events=5000, max_prime=10000))

    def test_default_limits_follow_dialect(self):
        self.assertEqual(["sysbench", "cpu", "--threads=1", "--time=10", "--events=0", "run"],
                         sb.build("cpu", "1.0"))
        self.assertEqual(["sysbench", "--test=cpu", "--num-threads=1",
                          "--max-requests=10000", "--max-time=0", "run"],
                         sb.build("cpu", "0.4"))

    def test_both_limits(self):
        argv = sb.build("cpu", "1.0", time=5, events=100)
        self.assertIn("--time=5", argv)
        self.assertIn("--events=100", argv)
        self.assertEqual(sb.TIME_OR_WORK, sb.run_mode("cpu", "1.0", time=5, events=100))

    def test_memory(self):
        params = dict(block_size="1k", total_size=64 * 2 ** 20, oper="read",
                      scope="local", access_mode="rnd", time=2)
        self.assertEqual(
            ["sysbench", "memory", "--threads=1", "--time=2", "--events=0",
             "--memory-block-size=1K", "--memory-total-size=67108864",
             "--memory-oper=read", "--memory-scope=local", "--memory-access-mode=rnd", "run"],
            sb.build("memory", "1.0", **params))
        self.assertEqual(
            ["sysbench", "--test=memory", "--num-threads=1", "--max-requests=0",
             "--max-time=2", "--memory-block-size=1K", "--memory-total-size=67108864",
             "--memory-oper=read", "--memory-scope=local", "--memory-access-mode=rnd", "run"],
            sb.build("memory", "0.4", **params))

    def test_memory_bounded_by_size_only(self):
        argv = sb.build("memory", "1.0", time=0, events=0, total_size="1G")
        self.assertIn("--time=0", argv)
        self.assertEqual(sb.UNBOUNDED, sb.run_mode("memory", "1.0", time=0, events=0))

    def test_fileio_prepare_run_cleanup(self):
        params = dict(num=4, total_size="16M", block_size="16K", test_mode="rndrw",
                      extra_flags="direct", fsync_freq=0, fsync_all=False, fsync_end=True,
                      fsync_mode="fdatasync", io_mode="sync", rw_ratio=1.5, threads=2,
                      time=3)
        self.assertEqual(
            ["sysbench", "fileio", "--file-num=4", "--file-total-size=16M",
             "--file-extra-flags=direct", "prepare"],
            sb.build("fileio", "1.0", "prepare", **params))
        self.assertEqual(
            ["sysbench", "fileio", "--threads=2", "--time=3", "--events=0",
             "--file-num=4", "--file-total-size=16M", "--file-extra-flags=direct",
             "--file-test-mode=rndrw", "--file-block-size=16K", "--file-io-mode=sync",
             "--file-rw-ratio=1.5", "--file-fsync-freq=0", "--file-fsync-all=off",
             "--file-fsync-end=on", "--file-fsync-mode=fdatasync", "run"],
            sb.build("fileio", "1.0", "run", **params))
        self.assertEqual(
            ["sysbench", "fileio", "--file-num=4", "--file-total-size=16M", "cleanup"],
            sb.build("fileio", "1.0", "cleanup", **params))
        self.assertEqual(
            ["sysbench", "--test=fileio", "--num-threads=2", "--max-requests=0",
             "--max-time=3", "--file-num=4", "--file-total-size=16M",
             "--file-extra-flags=direct", "--file-test-mode=rndrw", "--file-block-size=16K",
             "--file-io-mode=sync", "--file-rw-ratio=1.5", "--file-fsync-freq=0",
             "--file-fsync-all=off", "--file-fsync-end=on", "--file-fsync-mode=fdatasync",
             "run"],
            sb.build("fileio", "0.4", "run", **params))
        self.assertEqual(["sysbench", "--test=fileio", "--file-num=4",
                          "--file-total-size=16M", "cleanup"],
                         sb.build("fileio", "0.5", "cleanup", num=4, total_size="16M"))

    def test_fileio_every_mode(self):
        for mode in sb.FILE_TEST_MODES:
            argv = sb.build("fileio", "1.0", test_mode=mode, time=1)
            self.assertIn("--file-test-mode=%s" % mode, argv)

    def test_extra_flags_list_on_1_0_only(self):
        argv = sb.build("fileio", "1.0", test_mode="seqrd", extra_flags=["direct", "dsync"])
        self.assertIn("--file-extra-flags=direct,dsync", argv)
        e = self.assertRaises(sb.ParameterError, sb.build, "fileio", "0.4",
                              test_mode="seqrd", extra_flags=["direct", "dsync"])
        self.assertIn("extra_flags", str(e))
        self.assertIn("takes one flag", str(e))

    def test_executable(self):
        self.assertEqual("/opt/sb/bin/sysbench",
                         sb.build("cpu", "1.0", executable="/opt/sb/bin/sysbench")[0])

    def test_accepted_parameters(self):
        self.assertEqual(("threads", "time", "events", "max_prime"),
                         sb.accepted_parameters("cpu"))
        self.assertIn("fsync_mode", sb.accepted_parameters("fileio"))


class TestBuilderErrors(testtools.TestCase):

    def assertParamError(self, fragments, *args, **kwargs):
        e = self.assertRaises(sb.ParameterError, sb.build, *args, **kwargs)
        for fragment in fragments:
            self.assertIn(fragment, str(e))

    def test_bad_test_dialect_command(self):
        self.assertParamError(["test='disk'", "cpu, memory, fileio"], "disk", "1.0")
        self.assertParamError(["dialect='0.6'", "1.0, 0.5, 0.4"], "cpu", "0.6")
        self.assertParamError(["command='prepare'", "run"], "cpu", "1.0", "prepare")
        self.assertParamError(["command='go'", "prepare, run, cleanup"], "fileio", "1.0", "go")
        self.assertParamError(["executable"], "cpu", "1.0", executable="")

    def test_unknown_parameter(self):
        self.assertParamError(["max_primes", "accepted: threads, time, events, max_prime"],
                              "cpu", "1.0", max_primes=3)

    def test_bad_values(self):
        cases = [
            (["threads=0", ">= 1"], "cpu", {"threads": 0}),
            (["threads=True"], "cpu", {"threads": True}),
            (["time=-1"], "cpu", {"time": -1}),
            (["time=1.5"], "cpu", {"time": 1.5}),
            (["events='10'"], "cpu", {"events": "10"}),
            (["max_prime=1"], "cpu", {"max_prime": 1}),
            (["oper='copy'", "read, write, none"], "memory", {"oper": "copy"}),
            (["scope='node'", "global, local"], "memory", {"scope": "node"}),
            (["access_mode='random'", "seq, rnd"], "memory", {"access_mode": "random"}),
            (["block_size='1KB'", "'16K'"], "memory", {"block_size": "1KB"}),
            (["total_size=0"], "memory", {"total_size": 0}),
            (["total_size='-1M'"], "memory", {"total_size": "-1M"}),
            (["test_mode='seqrw'", "seqrd, rndrd, seqwr, rndwr, seqrewr, rndrw"],
             "fileio", {"test_mode": "seqrw"}),
            (["io_mode='aio'", "sync, async, mmap"], "fileio",
             {"test_mode": "seqrd", "io_mode": "aio"}),
            (["extra_flags='o_direct'", "sync, dsync, direct"], "fileio",
             {"test_mode": "seqrd", "extra_flags": "o_direct"}),
            (["fsync_all='yes'", "true or false"], "fileio",
             {"test_mode": "seqrd", "fsync_all": "yes"}),
            (["fsync_mode='sync'", "fsync, fdatasync"], "fileio",
             {"test_mode": "seqrd", "fsync_mode": "sync"}),
            (["rw_ratio=0", "> 0"], "fileio", {"test_mode": "seqrd", "rw_ratio": 0}),
            (["num=0"], "fileio", {"test_mode": "seqrd", "num": 0}),
        ]
        for fragments, test, params in cases:
            for dialect in sb.DIALECTS:
                self.assertParamError(fragments, test, dialect, **params)

    def test_fileio_run_needs_mode(self):
        self.assertParamError(["test_mode", "seqrd, rndrd"], "fileio", "1.0")

    def test_endless_run_refused(self):
        self.assertParamError(["time=0 and events=0", "time (seconds) > 0"],
                              "cpu", "1.0", time=0, events=0)
        self.assertParamError(["without end"], "fileio", "0.4", test_mode="seqrd",
                              time=0, events=0)


class TestRender(testtools.TestCase):

    def test_render_quotes_and_sets_locale(self):
        argv = sb.build("cpu", "1.0", executable="/opt/my bench/sysbench", time=1)
        line = sb.render(argv)
        self.assertTrue(line.startswith("LC_ALL=C "))
        self.assertEqual(argv, shlex.split(line)[1:])
        self.assertIn("'/opt/my bench/sysbench'", line)

    def test_render_with_cwd(self):
        line = sb.render(["sysbench", "fileio", "cleanup"], cwd="/tmp/a dir;rm -rf x")
        self.assertEqual("cd '/tmp/a dir;rm -rf x' && LC_ALL=C sysbench fileio cleanup", line)

    def test_render_errors(self):
        self.assertRaises(sb.ParameterError, sb.render, [])
        self.assertRaises(sb.ParameterError, sb.render, "sysbench cpu run")
        e = self.assertRaises(sb.ParameterError, sb.render, ["sysbench"], cwd="rel/dir")
        self.assertIn("absolute", str(e))

    def test_env(self):
        self.assertEqual({"LC_ALL": "C"}, sb.env())


class TestComparability(testtools.TestCase):

    def test_modes(self):
        self.assertEqual(sb.FIXED_TIME, sb.run_mode("cpu", "1.0"))
        self.assertEqual(sb.FIXED_WORK, sb.run_mode("cpu", "0.4"))
        self.assertEqual(sb.FIXED_WORK, sb.run_mode("cpu", "0.5"))
        self.assertEqual(sb.FIXED_WORK, sb.run_mode("cpu", "1.0", events=2000))
        self.assertEqual(sb.FIXED_TIME, sb.run_mode("cpu", "0.4", time=10))

    def test_describe(self):
        d = sb.describe("cpu", "1.0", max_prime=20000)
        self.assertEqual({"test": "cpu", "dialect": "1.0", "mode": sb.FIXED_TIME,
                          "primary_metric": "events_per_second",
                          "params": {"max_prime": 20000, "threads": 1, "time": 10,
                                     "events": 0}}, d)
        self.assertEqual("total_time", sb.describe("cpu", "0.4")["primary_metric"])
        self.assertRaises(sb.ParameterError, sb.describe, "cpu", "1.0", bogus=1)

    def test_comparable(self):
        a = sb.describe("cpu", "1.0", max_prime=20000, time=10)
        self.assertEqual((True, ""), sb.comparable(a, sb.describe("cpu", "1.0",
                                                                  max_prime=20000)))
        ok, why = sb.comparable(a, sb.describe("cpu", "0.4", max_prime=20000))
        self.assertFalse(ok)
        self.assertIn("dialect differs: 1.0 vs 0.4", why)
        ok, why = sb.comparable(a, sb.describe("cpu", "1.0", max_prime=20000, events=100))
        self.assertFalse(ok)
        self.assertIn("mode differs", why)
        ok, why = sb.comparable(a, sb.describe("cpu", "1.0", max_prime=10000))
        self.assertFalse(ok)
        self.assertIn("max_prime", why)
        ok, why = sb.comparable(a, sb.describe("memory", "1.0"))
        self.assertFalse(ok)
        self.assertIn("test differs", why)


class TestParseErrors(testtools.TestCase):

    def assertParseError(self, fragments, test, dialect, output, command="run"):
        e = self.assertRaises(sb.ParseError, sb.parse, test, dialect, output, command)
        for fragment in fragments:
            self.assertIn(fragment, str(e))
        return e

    def test_missing_field_names_it_and_quotes_head(self):
        text = fixture("1.0-cpu.txt").replace("events per second", "events/sec")
        e = self.assertParseError(["events per second", "sysbench 1.0.20 (using system"],
                                  "cpu", "1.0", text)
        self.assertEqual("events per second", e.field)

    def test_each_general_field_is_required(self):
        # (fixture, the line removed from it, the field the error names); test, dialect and
        # command are the fixture's (RUNS)
        cases = [
            ("1.0-cpu.txt", "total time:", "total time"),
            ("1.0-cpu.txt", "total number of events:", "total number of events"),
            ("1.0-cpu.txt", "Latency (ms):", "latency section"),
            ("1.0-cpu.txt", "min:", "latency min"),
            ("1.0-cpu.txt", "avg:", "latency avg"),
            ("1.0-cpu.txt", "max:", "latency max"),
            ("1.0-cpu.txt", "95th percentile:", "latency percentile"),
            ("0.4.12-cpu.txt", "approx.  95 percentile:", "latency percentile"),
            ("0.4.12-cpu.txt", "total time:", "total time"),
            ("1.0-memory-read.txt", "Total operations:", "total operations"),
            ("1.0-memory-read.txt", "MiB transferred", "MiB transferred"),
            ("0.4.12-memory-1M.txt", "Operations performed:", "operations performed"),
            ("0.4.12-memory-1M.txt", "MB transferred", "MiB transferred"),
            ("1.0-fileio-rndrw.txt", "fsyncs/s:", "fsyncs/s"),
            ("1.0-fileio-rndrw.txt", "written, MiB/s:", "written, MiB/s"),
            ("0.4.12-fileio-rndrw.txt", "Requests/sec executed", "requests/sec"),
            ("0.4.12-fileio-rndrw.txt", "Total transferred", "bytes transferred"),
            ("0.5-fileio-rndrw-direct.txt", "Operations performed:", "operations performed"),
            ("1.0-fileio-prepare.txt", "bytes written", "bytes written"),
            ("0.4.12-fileio-prepare.txt", "Creating files", "creating files"),
            ("1.0-fileio-cleanup.txt", "Removing test files", "removing files")]
        for name, line, field in cases:
            test, dialect, command, _ = RUNS[name]
            text = fixture(name).replace(line, "XXX")
            self.assertNotEqual(fixture(name), text, name)
            e = self.assertParseError([field], test, dialect, text, command)
            self.assertEqual(field, e.field, name)

    def test_garbled_and_empty(self):
        self.assertParseError(["total time", "(empty output)"], "cpu", "1.0", "")
        self.assertParseError(["total time"], "fileio", "0.4", "\x00\xff garbage\n" * 3)
        text = fixture("1.0-cpu.txt").replace("1.0010s", "1.0O10s")
        self.assertParseError(["total time"], "cpu", "1.0", text)

    def test_fatal_is_reported(self):
        text = ("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n"
                "FATAL: Cannot open file 'test_file.0' errno = 2 (No such file or directory)\n")
        e = self.assertParseError(["FATAL: Cannot open file"], "fileio", "1.0", text)
        self.assertEqual("FATAL", e.field)

    def test_wrong_dialect(self):
        self.assertParseError(["sysbench 1.0.20 (dialect 1.0), not dialect 0.4"],
                              "cpu", "0.4", fixture("1.0-cpu.txt"))
        self.assertParseError(["not dialect 1.0"], "fileio", "1.0",
                              fixture("0.4.12-fileio-rndrw.txt"))

    def test_zero_total_time_is_not_a_rate(self):
        text = fixture("0.4.12-cpu.txt").replace("31.1740s", "0.0000s")
        self.assertParseError(["total time 0.0 s"], "cpu", "0.4", text)

    def test_wrong_test_output(self):
        self.assertParseError(["no events per second"], "cpu", "1.0",
                              fixture("1.0-memory-read.txt"))
        self.assertParseError(["reads/s"], "fileio", "1.0", fixture("1.0-cpu.txt"))

    def test_memory_oper_none_has_no_transfer(self):
        text = fixture("1.0-memory-read.txt").replace("operation: read", "operation: none")
        text = "\n".join(line for line in text.splitlines() if "transferred" not in line)
        metrics = sb.parse("memory", "1.0", text)
        self.assertNotIn("mib_per_second", metrics)
        self.assertEqual(65536, metrics["operations"].value)

    def test_bad_arguments(self):
        self.assertRaises(sb.ParameterError, sb.parse, "cpu", "1.0", None)
        self.assertRaises(sb.ParameterError, sb.parse, "gpu", "1.0", "")
        self.assertRaises(sb.ParameterError, sb.parse, "cpu", "2.0", "")
        self.assertRaises(sb.ParameterError, sb.parse, "cpu", "1.0", "", "prepare")
