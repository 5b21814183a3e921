"""Workload results become charts in plan order; failures keep raw output."""

import testtools

from rally_vmct.task.scenarios.benchmark import report
from rally_vmct.workloads import metrics
from rally_vmct.workloads import plan
from rally_vmct.workloads import runner


class FakeScenario(object):
    def __init__(self):
        self.additive = []
        self.complete = []

    def add_output(self, additive=None, complete=None):
        if additive:
            self.additive.append(additive)
        if complete:
            self.complete.append(complete)


def result(item, metric_values=None, error=None, outputs=(), runs=None):
    res = runner.WorkloadResult(plan.parse_plan([item])[0])
    res.runs = runs if runs is not None else ([metric_values] if metric_values else [])
    res.metrics = metric_values or runner.mean_metrics(res.runs)
    res.error = error
    res.outputs = list(outputs)
    res.primary = plan.primary_metric(res.workload, "1.0")
    res.stop_reason = "1 run(s) as asked (no CV)"
    return res


class ReportTestCase(testtools.TestCase):

    def test_one_chart_per_unit_in_metric_order(self):
        cpu = result({"sysbench": "cpu"}, {
            "events_per_second": metrics.Metric(900.5, "events/s"),
            "latency_avg": metrics.Metric(1.1, "ms"),
            "latency_p95": metrics.Metric(1.4, "ms")})
        scenario = FakeScenario()
        report.report(scenario, "docker", {"vcpus": 2}, "1.0", [cpu], "instance a")
        self.assertEqual(["docker: sysbench cpu [events/s]", "docker: sysbench cpu [ms]"],
                         [c["title"] for c in scenario.additive])
        self.assertEqual([["latency_avg", 1.1], ["latency_p95", 1.4]],
                         scenario.additive[1]["data"])
        self.assertEqual("StatsTable", scenario.additive[0]["chart_plugin"])
        table = scenario.complete[0]["data"]
        self.assertEqual(["sysbench cpu", "events_per_second", 900.5, "events/s"],
                         table["rows"][0])
        facts = dict(scenario.complete[1]["data"]["rows"])
        self.assertEqual("1.0", facts["sysbench dialect"])
        self.assertEqual("instance a", facts["where"])

    def test_failure_raises_after_adding_raw_output(self):
        ok = result({"sysbench": "cpu"}, {"events_per_second": metrics.Metric(1, "events/s")})
        bad = result({"netperf": "TCP_RR"}, error="netperf TCP_RR run exited 255: refused",
                     outputs=[("netperf -H x", 255, "establish control: refused\n", "")])
        scenario = FakeScenario()
        error = self.assertRaises(report.WorkloadsFailed, report.report,
                                  scenario, "kvm", {}, None, [ok, bad], "instance b")
        self.assertIn("1 of 2 workloads failed on instance b", str(error))
        self.assertIn("refused", str(error))
        raw = scenario.complete[-1]
        self.assertEqual("kvm: netperf TCP_RR raw output (failed)", raw["title"])
        self.assertEqual("TextArea", raw["chart_plugin"])
        self.assertIn("establish control: refused", raw["data"])

    def test_every_run_is_a_table_and_the_chart_shows_their_mean(self):
        def run(eps, latency):
            return {"events_per_second": metrics.Metric(eps, "events/s"),
                    "latency_avg": metrics.Metric(latency, "ms")}
        cpu = result({"sysbench": "cpu"}, runs=[run(900.0, 1.0), run(1000.0, 1.2),
                                                run(950.0, 1.1)])
        cpu.stop_reason = "CV 5.3 % <= cv_target 6 %"
        scenario = FakeScenario()
        report.report(scenario, "kvm", {"runs": "2-5 (cv_target 6 %)"}, "1.0",
                                [cpu], "instance a")
        chart = scenario.additive[0]
        self.assertEqual([["events_per_second", 950.0]], chart["data"])
        self.assertIn("mean over this iteration's runs", chart["description"])
        self.assertIn("'kvm: sysbench cpu runs'", chart["description"])
        [table] = [c for c in scenario.complete if c["title"] == "kvm: sysbench cpu runs"]
        self.assertEqual("Table", table["chart_plugin"])
        self.assertEqual(["run", "events_per_second [events/s]", "latency_avg [ms]"],
                         table["data"]["cols"])
        self.assertEqual([[1, 900.0, 1.0], [2, 1000.0, 1.2], [3, 950.0, 1.1]],
                         table["data"]["rows"])
        self.assertIn("the CV of events_per_second: CV 5.3 % <= cv_target 6 %",
                      table["description"])
        facts = dict(scenario.complete[1]["data"]["rows"])
        self.assertEqual("2-5 (cv_target 6 %)", facts["runs"])
