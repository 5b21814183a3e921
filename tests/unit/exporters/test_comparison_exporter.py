"""The vmct-comparison exporter plugins and their HTML / CSV / JSON renderings."""

import csv
import io
import json
import re

from rally import exceptions
from rally.task import exporter
import testtools

from rally_vmct.task.exporters import comparison
from rally_vmct.task.exporters import comparison_data as cdata
from rally_vmct.task.exporters import comparison_render as render
from rally_vmct.task import output
from tests.unit.exporters import sample_results as sr


def _tasks():
    kvm = sr.workload("VMCT.boot_and_delete_server", "kvm", [
        sr.iteration([sr.action("vmct.build", b)]) for b in (10.0, 12.0, 14.0)], 2)
    docker = sr.workload("VMCT.boot_and_delete_server", "docker", [
        sr.iteration([sr.action("vmct.build", b)]) for b in (2.0, 3.0, 4.0)], 2)
    return [sr.task(kvm, docker, uuid="T1")]


class TestDestination(testtools.TestCase):

    def test_plain_path(self):
        self.assertEqual(("cmp.html", {}), comparison.parse_destination("cmp.html"))
        self.assertEqual((None, {}), comparison.parse_destination(None))

    def test_options(self):
        self.assertEqual(("out/cmp.html", {"baseline": "kvm", "confidence": 0.9}),
                         comparison.parse_destination(
                             "out/cmp.html?baseline=kvm&confidence=0.9"))
        self.assertEqual((None, {"baseline": "docker"}),
                         comparison.parse_destination("?baseline=docker"))

    def test_bad_options_name_the_fix(self):
        for dest, words in (("a.html?colour=red", "unknown vmct-comparison option"),
                            ("a.html?confidence=95", "confidence must be a number in"),
                            ("a.html?confidence=x", "confidence must be a number in"),
                            ("a.html?baseline=", "baseline needs a kind name"),
                            ("a.html?baseline", "baseline needs a kind name")):
            e = self.assertRaises(ValueError, comparison.parse_destination, dest)
            self.assertIn(words, str(e))

    def test_sibling(self):
        self.assertEqual("r/cmp.csv", comparison.sibling("r/cmp.html", ".csv"))
        self.assertEqual("r/cmp.json", comparison.sibling("r/cmp.HTM", ".json"))
        self.assertEqual("r/cmp.csv", comparison.sibling("r/cmp", ".csv"))
        self.assertEqual("r/cmp.csv.csv", comparison.sibling("r/cmp.csv", ".csv"))


class TestExporterPlugins(testtools.TestCase):

    def test_registered(self):
        for name in ("vmct-comparison", "vmct-comparison-csv", "vmct-comparison-json"):
            self.assertEqual(name, exporter.TaskExporter.get(name).get_name())

    def test_validator_rejects_bad_options(self):
        errors = exporter.TaskExporter.validate(
            "vmct-comparison", context={}, config={},
            plugin_cfg={"destination": "x.html?nope=1"}, vtype="syntax")
        self.assertEqual(1, len(errors))
        self.assertIn("unknown vmct-comparison option 'nope'", errors[0])
        self.assertEqual([], exporter.TaskExporter.validate(
            "vmct-comparison-csv", context={}, config={},
            plugin_cfg={"destination": "x.csv?baseline=kvm"}, vtype="syntax"))

    def test_html_with_siblings(self):
        report = exporter.TaskExporter.make(comparison.ComparisonExporter, _tasks(),
                                            "/tmp/x/cmp.html?baseline=docker")
        self.assertEqual({"/tmp/x/cmp.html", "/tmp/x/cmp.csv", "/tmp/x/cmp.json"},
                         set(report["files"]))
        self.assertEqual("file:///tmp/x/cmp.html", report["open"])
        data = json.loads(report["files"]["/tmp/x/cmp.json"])
        self.assertEqual("docker", data["baseline"])
        kvm = [g for g in data["groups"] if g["kind"] == "kvm"
               and g["metric"] == "vmct.build"][0]
        self.assertEqual(4.0, kvm["ratio"])        # 12 / 3
        rows = list(csv.DictReader(io.StringIO(report["files"]["/tmp/x/cmp.csv"])))
        row = [r for r in rows if r["kind"] == "kvm" and r["metric"] == "vmct.build"][0]
        self.assertEqual(("3", "0", "12", "2", "4"),
                         (row["n"], row["failures"], row["mean"], row["sd"], row["ratio"]))
        self.assertIn("<svg", report["files"]["/tmp/x/cmp.html"])

    def test_print_without_destination(self):
        report = exporter.TaskExporter.make(comparison.ComparisonExporter, _tasks(), None)
        self.assertEqual(["print"], list(report))
        self.assertTrue(report["print"].startswith("<!DOCTYPE html>"))
        report = exporter.TaskExporter.make(comparison.ComparisonCSVExporter, _tasks(),
                                            None)
        self.assertTrue(report["print"].startswith("kind,concurrency,source,"))
        report = exporter.TaskExporter.make(comparison.ComparisonJSONExporter, _tasks(),
                                            "?confidence=0.9")
        self.assertEqual(0.9, json.loads(report["print"])["confidence"])

    def test_single_file_types(self):
        report = exporter.TaskExporter.make(comparison.ComparisonCSVExporter, _tasks(),
                                            "/tmp/y.csv")
        self.assertEqual(["/tmp/y.csv"], list(report["files"]))
        report = exporter.TaskExporter.make(comparison.ComparisonJSONExporter, _tasks(),
                                            "/tmp/y.json")
        self.assertEqual("vmct-comparison",
                         json.loads(report["files"]["/tmp/y.json"])["format"])

    def test_unknown_baseline_is_a_validation_error(self):
        e = self.assertRaises(exceptions.ValidationError, exporter.TaskExporter.make,
                              comparison.ComparisonExporter, _tasks(),
                              "a.html?baseline=xen")
        self.assertIn("kinds found: kvm, docker", str(e))


class TestRender(testtools.TestCase):

    def test_fmt(self):
        self.assertEqual("n/a", render.fmt(None))
        self.assertEqual("n/a", render.fmt(float("nan")))
        self.assertEqual("0", render.fmt(0.0))
        self.assertEqual("6", render.fmt(6.0))
        self.assertEqual("2.100", render.fmt(2.1))
        self.assertEqual("20.85 s", render.fmt(20.846, "s"))
        self.assertEqual("1256", render.fmt(1256.4))
        self.assertEqual("12,346", render.fmt(12345.6))
        self.assertEqual("0.000123", render.fmt(0.0001234))
        self.assertEqual("-3.500", render.fmt(-3.5))
        self.assertEqual("5.283 M", render.fmt(5283367.0))
        self.assertEqual("-12.50 G ops/s", render.fmt(-12.5e9, "ops/s"))
        self.assertEqual("999,999", render.fmt(999999.0))

    def test_html_escapes_user_text(self):
        w = sr.workload("VMCT.x", "<img src=x onerror=alert(1)>", [sr.iteration(
            [sr.action("<b>act</b>", 1.0)])])
        page = render.render_html(cdata.compare([sr.task(w, title="<i>t</i>")]))
        self.assertNotIn("<img src=x", page)
        self.assertNotIn("<b>act</b>", page)
        self.assertIn("&lt;b&gt;act&lt;/b&gt;", page)

    def test_html_is_self_contained(self):
        page = render.render_html(cdata.compare(sr.demo_tasks(times=3)))
        self.assertNotIn("<script", page)
        self.assertNotIn("<link", page)
        # no resource fetched from anywhere: the only URLs are SVG namespaces
        urls = set(re.findall(r"(?:https?:)?//[\w.-]+[^\s\"'<>]*", page))
        self.assertEqual({"http://www.w3.org/2000/svg"}, urls)

    def test_html_has_chart_per_metric_and_units(self):
        data = cdata.compare(sr.demo_tasks(times=3))
        page = render.render_html(data)
        self.assertEqual(len(data["metrics"]) + 1, page.count('<svg class="chart'))
        self.assertEqual(len(data["metrics"]), page.count('<table class="stats'))
        for label in ("vmct.build [s]", "sysbench cpu: events_per_second [events/s]",
                      "netperf TCP_STREAM: throughput [Mbit/s]", "mean time [s]",
                      "mean ± SD [Mbit/s]", "soft fell back"):
            self.assertIn(label, page)

    def test_html_of_nothing(self):
        page = render.render_html(cdata.compare([]))
        self.assertIn("No rally-vmct workload in these tasks", page)
        self.assertNotIn("<svg", page)

    def test_chart_scales_to_mean_plus_sd(self):
        svg = render.svg_mean_sd_chart("t", "s", [("kvm", [(1, 10.0, 5.0, 3)])], [1],
                                       {"kvm": "#000"})
        # axis 0..15: ticks 0, 5, 10, 15
        self.assertEqual(["0", "5", "10", "15"],
                         re.findall(r'text-anchor="end">([^<]*)<', svg))
        self.assertIn("mean 10 s ± SD 5 s (N=3)", svg)

    def test_csv_reboot_rows(self):
        its = [sr.iteration(charts=[output.stats_chart(
            "kvm", output.REBOOT_PATH_GROUP, "count",
            [("soft", 1), ("soft_fell_back_to_hard", 0), ("hard", 0)])])] * 3
        data = cdata.compare([sr.task(sr.workload("VMCT.r", "kvm", its,
                                                  reboot_type="soft"))])
        rows = list(csv.reader(io.StringIO(render.render_csv(data))))
        self.assertEqual(list(cdata.CSV_COLUMNS), rows[0])
        paths = [r for r in rows if r[2] == "reboot_path"]
        self.assertEqual([["kvm", "1", "reboot_path", "reboot path", "soft", "reboots",
                           "3"],
                          ["kvm", "1", "reboot_path", "reboot path",
                           "soft_fell_back_to_hard", "reboots", "0"],
                          ["kvm", "1", "reboot_path", "reboot path", "hard", "reboots",
                           "0"]], [r[:7] for r in paths])
        self.assertTrue(all(len(r) == len(cdata.CSV_COLUMNS) for r in rows))
