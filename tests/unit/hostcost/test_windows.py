"""The host monitor's samples read back: windows, series, phases and per-phase summaries."""

import io
import json

import testtools

from rally_vmct.hostcost.agent import procfs
from rally_vmct.hostcost import windows

U1 = "84808faf-758e-4880-b8ff-e9e65c025300"
U2 = "0a1b2c3d-0000-4000-8000-00000000abcd"


def sample(t, busy=0, idle=0, user=None, used=None, instances=None, kind="sample"):
    """A sample line with CPU counters in jiffies (hz 100) and memory in MiB."""
    user = busy if user is None else user
    return {"t": t, "type": kind, "hz": 100, "ncpu": 2,
            "cpu": {"user": user, "nice": 0, "system": busy - user, "idle": idle,
                    "iowait": 0, "irq": 0, "softirq": 0, "steal": 0},
            "mem": {"total": 1000 * procfs.MIB, "used": (used or 0) * procfs.MIB,
                    "available": (1000 - (used or 0)) * procfs.MIB},
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
                         self.times(windows.read_window(f, 1049.5, 1052.5)))
        self.assertEqual([1049.0, 1050.0, 1051.0],
                         self.times(windows.read_window(f, 1050.0, 1050.0)))

    def test_window_at_the_edges(self):
        f = jsonl(self.records)
        self.assertEqual([100.0, 101.0], self.times(windows.read_window(f, 0, 100.5)))
        self.assertEqual([2098.0, 2099.0], self.times(windows.read_window(f, 2098.5, 5000)))
        self.assertEqual([2099.0], self.times(windows.read_window(f, 3000, 4000)))
        self.assertEqual([], windows.read_window(io.BytesIO(b""), 0, 1))

    def test_incomplete_last_line_is_skipped(self):
        data = jsonl(self.records[:10]).getvalue() + b'{"t": 200.0, "type": "sam'
        found = windows.read_window(io.BytesIO(data), 105, 300)
        self.assertEqual([104.0, 105.0, 106.0, 107.0, 108.0], self.times(found))
        self.assertEqual(108.0, windows.last_time(io.BytesIO(data)))

    def test_header_and_last_time(self):
        f = jsonl(self.records)
        self.assertEqual(100, windows.read_header(f)["hz"])
        self.assertEqual(2099.0, windows.last_time(f, block=64))
        self.assertIsNone(windows.read_header(jsonl(self.records[1:])))
        self.assertIsNone(windows.last_time(io.BytesIO(b"")))


class SeriesTestCase(testtools.TestCase):

    def test_interpolate_and_clamp(self):
        pts = [(0.0, 0.0), (1.0, 10.0), (3.0, 30.0)]
        self.assertEqual(5.0, windows.interpolate(pts, 0.5))
        self.assertEqual(20.0, windows.interpolate(pts, 2.0))
        self.assertEqual(0.0, windows.interpolate(pts, -1))
        self.assertEqual(30.0, windows.interpolate(pts, 9))
        self.assertIsNone(windows.interpolate([], 1))

    def test_counter_delta_over_intervals(self):
        pts = [(0.0, 0.0), (10.0, 100.0)]
        self.assertEqual(30.0, windows.delta(pts, [(1.0, 2.0), (5.0, 7.0)]))

    def test_gauge_mean_is_time_weighted(self):
        # 0 -> 10 over [0, 1], then 10 until 3: mean over [0, 3] = (5 + 20) / 3
        pts = [(0.0, 0.0), (1.0, 10.0), (3.0, 10.0)]
        mean, peak = windows.gauge(pts, [(0.0, 3.0)])
        self.assertAlmostEqual(25 / 3, mean)
        self.assertEqual(10.0, peak)
        self.assertEqual((None, None), windows.gauge(pts, [(2.0, 2.0)]))
        self.assertEqual((None, None), windows.gauge([], [(0.0, 1.0)]))

    def test_counter_starts_at_zero_when_its_process_was_born(self):
        samples = [sample(10.0, instances={U1: {"cpu": 2.0, "born": 9.0}}),
                   sample(11.0, instances={U1: {"cpu": 2.5, "born": 9.0}})]
        pts = windows.points(samples, lambda s: windows.instance_of(s, U1)["cpu"],
                             zero_at=windows.born(samples, U1))
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
        ], windows.phases(actions))

    def test_phase_names(self):
        for name, phase in (("vmct.sysbench_cpu", "benchmark"),
                            ("vmct.netperf_tcp_rr", "benchmark"),
                            ("vmct.sysbench_fileio_rndrd_direct", "benchmark"),
                            ("vmct.wait_for_ssh", "build"), ("vmct.stop", "stop"),
                            ("vmct.start", "start"), ("vmct.start_netserver",
                                                      "start_netserver"),
                            ("vmct.check_rescue", "check_rescue"),
                            ("nova.boot_server", "nova.boot_server")):
            self.assertEqual(phase, windows.phase_of(name), name)

    def test_open_action_ends_at_end_or_is_left_out(self):
        actions = [{"name": "vmct.build", "started_at": 0.0, "finished_at": 1.0},
                   {"name": "vmct.delete", "started_at": 1.0}]
        self.assertEqual([("build", [(0.0, 1.0)]), ("delete", [(1.0, 3.0)]),
                          ("iteration", [(0.0, 3.0)])], windows.phases(actions, end=3.0))
        self.assertEqual([("build", [(0.0, 1.0)]), ("iteration", [(0.0, 1.0)])],
                         windows.phases(actions))
        self.assertEqual([], windows.phases([]))


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
                             "pss": (100 if t < 6 else 200) * procfs.MIB,
                             "rss": 250 * procfs.MIB, "disk": 5 * procfs.MIB}}
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
        build, bench, whole = windows.summarize(self.samples(), phase_list, U1)
        self.assertEqual(10.0, build["host_cpu_s"])
        self.assertEqual(0.375, build["user"])
        self.assertEqual(0.125, build["system"])
        self.assertEqual(0.0, build["steal"])
        self.assertEqual(20.0, bench["host_cpu_s"])
        self.assertEqual(1.0, bench["user"])
        self.assertEqual(30.0, whole["host_cpu_s"])
        self.assertEqual(20.0, whole["seconds"])

    def test_host_memory_per_phase(self):
        [row] = windows.summarize(self.samples(), [("build", [(0.0, 10.0)])])
        self.assertEqual(405 * procfs.MIB, row["mem_used_mean"])
        self.assertEqual(410 * procfs.MIB, row["mem_used_max"])
        self.assertEqual((1000 - 410) * procfs.MIB, row["mem_available_min"])
        self.assertIsNone(row["cpu_s"])
        self.assertIsNone(row["pss_mean"])

    def test_instance_figures_only_while_it_existed(self):
        [build] = windows.summarize(self.samples(), [("build", [(0.0, 10.0)])], U1)
        # CPU from its birth (2.5) to 10: 0.5 s per second
        self.assertEqual(3.75, build["cpu_s"])
        # PSS over [3, 10]: 100 until 5, ramp to 200 at 6, 200 after: (200 + 150 + 800) / 7
        self.assertAlmostEqual(1150 / 7 * procfs.MIB, build["pss_mean"])
        self.assertEqual(200 * procfs.MIB, build["pss_max"])
        self.assertEqual(250 * procfs.MIB, build["rss_max"])
        self.assertEqual(5 * procfs.MIB, build["disk_max"])
        self.assertIsNone(build["cgroup_mean"])

    def test_phase_between_two_samples_is_interpolated(self):
        [row] = windows.summarize(self.samples(), [("reboot", [(12.25, 12.75)])], U1)
        self.assertEqual(1.0, row["host_cpu_s"])       # 2 CPUs busy for 0.5 s
        self.assertEqual(0.25, row["cpu_s"])
        self.assertEqual(200 * procfs.MIB, row["pss_mean"])

    def test_series_for_the_charts(self):
        series = windows.series(self.samples()[:5], U1, t0=1.0)
        self.assertEqual([(0.0, 37.5), (1.0, 37.5), (2.0, 37.5), (3.0, 37.5)],
                         series["cpu_user"])
        self.assertEqual([(0.0, 12.5), (1.0, 12.5), (2.0, 12.5), (3.0, 12.5)],
                         series["cpu_system"])
        # 0.5 CPU s per second of 2 CPUs: 25 %
        self.assertEqual([(3.0, 25.0)], series["instance_cpu"])
        self.assertEqual([(2.0, 100 * procfs.MIB), (3.0, 100 * procfs.MIB)], series["pss"])
        self.assertEqual((-1.0, 400 * procfs.MIB), series["mem_used"][0])
        self.assertEqual([], series["cgroup"])
        self.assertEqual([], windows.series(self.samples()[:5])["pss"])
