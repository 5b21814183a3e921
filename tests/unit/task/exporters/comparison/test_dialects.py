"""sysbench dialects and modes never share a cell; ratios only between comparable ones."""

import csv
import math
import io

import testtools

from rally_vmct.task.scenarios.benchmark import report
from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct.task import output
from tests.unit.task.exporters.comparison import sample_results as sr

CPU = "events_per_second"


def _cpu(kind, dialect, values, workloads=None, scenario="VMCT.boot_and_benchmark",
         concurrency=1):
    """A benchmark workload whose iterations record ``dialect`` (None: no facts)."""
    its = []
    for value in values:
        complete = []
        if dialect:
            complete.append(sr.facts_table(kind, {"sysbench dialect": dialect}))
        charts = [output.stats_chart(kind, "sysbench cpu", "events/s", [(CPU, value)]),
                  output.stats_chart(kind, "netperf TCP_RR", "trans/s",
                                     [("throughput", value)])]
        its.append(sr.iteration([sr.action("vmct.sysbench_cpu", 10.0)], charts,
                                complete=complete))
    args = {"workloads": workloads} if workloads else {}
    return sr.workload(scenario, kind, its, concurrency, **args)


def _rows(data, kind, metric=CPU):
    return {r["dialect"]: r for r in data["groups"]
            if r["kind"] == kind and r["metric"] == metric}


class TestDialectCells(testtools.TestCase):

    def setUp(self):
        super(TestDialectCells, self).setUp()
        # kvm ran with sysbench 1.0 in one workload and 0.4 in another; native 1.0
        # only, docker 0.4 only.
        self.data = analyse.compare([sr.task(
            _cpu("native", "1.0", [100, 102, 104, 106], scenario="VMCT.native_benchmark"),
            _cpu("kvm", "1.0", [90, 91, 92, 93]),
            _cpu("kvm", "0.4", [50, 51, 52, 53]),
            _cpu("docker", "0.4", [60, 61, 62, 63]))])

    def test_two_dialects_of_one_kind_are_two_rows_labelled(self):
        rows = _rows(self.data, "kvm")
        self.assertEqual({"1.0", "0.4"}, set(rows))
        self.assertEqual((4, 91.5), (rows["1.0"]["n"], rows["1.0"]["mean"]))
        self.assertEqual((4, 51.5), (rows["0.4"]["n"], rows["0.4"]["mean"]))
        self.assertEqual("sysbench cpu: events_per_second [events/s] (sysbench 1.0)",
                         rows["1.0"]["label"])
        self.assertEqual("sysbench cpu: events_per_second [events/s] (sysbench 0.4)",
                         rows["0.4"]["label"])
        self.assertEqual(("fixed-time", "fixed-work"),
                         (rows["1.0"]["sysbench_mode"], rows["0.4"]["sysbench_mode"]))
        shown = [m["label"] for m in self.data["metrics"] if m["metric"] == CPU]
        self.assertEqual(2, len(shown))

    def test_ratios_only_within_a_dialect(self):
        kvm = _rows(self.data, "kvm")
        self.assertEqual("native", kvm["1.0"]["baseline_kind"])
        # the ratio of geometric means (the page's one rule)
        self.assertAlmostEqual(91.5 / 103, kvm["1.0"]["ratio"], places=3)
        # native has no 0.4 results: the first kind that has them is the baseline
        self.assertEqual(("kvm", "baseline"), (kvm["0.4"]["baseline_kind"],
                                               kvm["0.4"]["ratio_note"]))
        docker = _rows(self.data, "docker")["0.4"]
        self.assertEqual("kvm", docker["baseline_kind"])
        self.assertAlmostEqual(61.5 / 51.5, docker["ratio"], places=3)
        self.assertEqual({"0.4"}, set(_rows(self.data, "docker")))

    def test_one_headline_per_dialect(self):
        cpu = [(h["label"], h["dialect"]) for h in self.data["headlines"]
               if h["category"] == "cpu"]
        self.assertEqual([
            ("sysbench cpu: events_per_second [events/s] (sysbench 1.0)", "1.0"),
            ("sysbench cpu: events_per_second [events/s] (sysbench 0.4)", "0.4")], cpu)

    def test_atomic_sysbench_timings_keyed_too_but_not_other_figures(self):
        self.assertEqual({"1.0", "0.4"}, set(_rows(self.data, "kvm", "vmct.sysbench_cpu")))
        # netperf is not sysbench: one cell for both kvm workloads
        (netperf,) = _rows(self.data, "kvm", "throughput").values()
        self.assertEqual((8, None), (netperf["n"], netperf["dialect"]))
        self.assertEqual("netperf TCP_RR: throughput [trans/s]", netperf["label"])

    def test_csv_and_html_say_the_dialect(self):
        rows = list(csv.DictReader(io.StringIO(render.render_csv(self.data))))
        kvm = sorted((r["dialect"], r["sysbench_mode"]) for r in rows
                     if r["kind"] == "kvm" and r["metric"] == CPU)
        self.assertEqual([("0.4", "fixed-work"), ("1.0", "fixed-time")], kvm)
        page = render.render_html(self.data)
        self.assertIn("sysbench cpu: events_per_second [events/s] (sysbench 0.4)", page)
        self.assertIn("sysbench cpu: events_per_second [events/s] (sysbench 1.0)", page)

    def test_results_without_facts_keep_their_labels(self):
        data = analyse.compare([sr.task(_cpu("kvm", None, [1, 2]))])
        (row,) = _rows(data, "kvm").values()
        self.assertEqual((None, None, "sysbench cpu: events_per_second [events/s]"),
                         (row["dialect"], row["sysbench_mode"], row["label"]))


class TestComparableWorkloads(testtools.TestCase):

    def test_different_parameters_get_no_ratio(self):
        data = analyse.compare([sr.task(
            _cpu("native", "1.0", [100, 101], [{"sysbench": "cpu", "max_prime": 10000}],
                 scenario="VMCT.native_benchmark"),
            _cpu("kvm", "1.0", [90, 91], [{"sysbench": "cpu", "max_prime": 20000}]))])
        row = _rows(data, "kvm")["1.0"]
        self.assertIsNone(row["ratio"])
        self.assertIsNone(row["p_value"])
        self.assertEqual("not comparable with native: workload parameters differ: "
                         "max_prime", row["ratio_note"])
        self.assertEqual(1, data["methods"]["comparisons"])   # netperf only

    def test_same_parameters_compare(self):
        plan = [{"sysbench": "cpu", "max_prime": 20000}]
        data = analyse.compare([sr.task(
            _cpu("native", "1.0", [100, 101], plan, scenario="VMCT.native_benchmark"),
            _cpu("kvm", "1.0", [90, 91], plan))])
        self.assertAlmostEqual(math.sqrt(90 * 91 / (100 * 101)),
                               _rows(data, "kvm")["1.0"]["ratio"], places=12)

    def test_fixed_work_run_of_dialect_1_0_is_its_own_cell(self):
        fixed_work = [{"sysbench": "cpu", "max_prime": 20000, "events": 1000, "time": 0}]
        data = analyse.compare([sr.task(
            _cpu("native", "1.0", [100, 101], scenario="VMCT.native_benchmark"),
            _cpu("kvm", "1.0", [90, 91]),
            _cpu("kvm", "1.0", [9, 10], fixed_work))])
        shown = sorted(r["label"] for r in data["groups"]
                       if r["kind"] == "kvm" and r["metric"] == CPU)
        self.assertEqual(["sysbench cpu: events_per_second [events/s] (sysbench 1.0)",
                          "sysbench cpu: events_per_second [events/s] (sysbench 1.0, "
                          "fixed-work)"], shown)


class TestScenarioFactsTable(testtools.TestCase):
    """The facts table exactly as the benchmark scenarios write it."""

    def _data(self, dialect):
        table = report.facts_table(
            "kvm", {"virtualization": "QEMU TCG (emulated)", "emulated": "yes",
                    "vcpus": 1, "boot_id": "b1"}, dialect, "instance vmct-1 (kvm)")
        its = [sr.iteration(charts=[output.stats_chart("kvm", "sysbench cpu", "events/s",
                                                       [(CPU, 5.0)])],
                            complete=[table])]
        return analyse.compare([sr.task(sr.workload("VMCT.boot_and_benchmark", "kvm", its))])

    def test_read_back(self):
        data = self._data("1.0")
        facts = {f["key"]: f["text"] for f in data["environment"][0]["facts"]}
        self.assertEqual(("QEMU TCG (emulated)", "1", "1.0"),
                         (facts["virtualization"], facts["vcpus"],
                          facts["sysbench dialect"]))
        self.assertEqual("kvm (emulated)", data["title"])
        self.assertEqual({"1.0"}, set(_rows(data, "kvm")))

    def test_no_dialect_recorded_is_no_dialect(self):
        data = self._data(None)
        self.assertEqual({None}, set(_rows(data, "kvm")))
