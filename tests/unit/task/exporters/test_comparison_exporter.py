"""The vmct-comparison exporter plugins and their HTML / CSV / JSON renderings."""

import configparser
import csv
import fnmatch
import importlib.resources
import io
import json
import os
import re

from rally import exceptions
from rally.task import exporter
import testtools

from rally_vmct.task.exporters import comparison
from rally_vmct.task.exporters import comparison_charts as charts
from rally_vmct.task.exporters import comparison_data as cdata
from rally_vmct.task.exporters import comparison_render as render
from rally_vmct.task.exporters import comparison_view as view
from rally_vmct.task.exporters import formatting
from rally_vmct.task import output
from tests.unit.task.exporters import sample_results as sr


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

    def test_html_escapes_user_text(self):
        w = sr.workload("VMCT.x", "<img src=x onerror=alert(1)>", [sr.iteration(
            [sr.action("<b>act</b>", 1.0)])])
        page = render.render_html(cdata.compare([sr.task(w, title="<i>t</i>")]))
        self.assertNotIn("<img src=x", page)
        self.assertNotIn("<b>act</b>", page)
        self.assertIn("&lt;b&gt;act&lt;/b&gt;", page)

    def test_hostile_kind_name_is_escaped_everywhere(self):
        bad = '<script>alert("x")</script>'
        escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
        kvm = sr.workload("VMCT.boot_and_delete_server", bad, [sr.iteration(
            [sr.action("vmct.build", b)], complete=[sr.facts_table(bad, kernel="<b>k</b>")])
            for b in (10.0, 12.0, 14.0)], 2)
        docker = sr.workload("VMCT.boot_and_delete_server", "docker", [sr.iteration(
            [sr.action("vmct.build", b)]) for b in (2.0, 3.0, 4.0)], 2)
        page = render.render_html(cdata.compare([sr.task(kvm, docker)]), "<i>stamp</i>")
        self.assertNotIn("<script", page)
        self.assertNotIn("<b>k</b>", page)
        self.assertNotIn("<i>stamp", page)
        for where in ("<title>rally-vmct comparison: %s vs docker</title>",   # page title
                      '<span class="kind" style="background:#1f77b4"></span>%s</th>',
                      '<text x="94.0" y="18">%s</text>',                      # legend
                      "<title>%s, concurrency 2: mean 12 s",                   # tooltip
                      'id="seed-roles">Which kind plays which part: %s = '):   # seed check
            self.assertIn(where % escaped, page)
        # The stylesheet is included as it is, not escaped.
        self.assertIn('"Segoe UI"', page)

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
        svg = render.macro("comparison_charts.html", "mean_sd")(charts.mean_sd(
            "t", "s", [("kvm", [(1, 10.0, 5.0, 3)])], [1], {"kvm": "#000"}))
        # axis 0..15: ticks 0, 5, 10, 15
        self.assertEqual(["0", "5", "10", "15"],
                         re.findall(r'text-anchor="end">([^<]*)<', svg))
        self.assertIn("mean 10 s ± SD 5 s (N=3)", svg)

    def _significance_data(self):
        def builds(kind, values):
            return sr.workload("VMCT.boot_and_delete_server", kind, [
                sr.iteration([sr.action("vmct.build", v)]) for v in values], 1)

        native = sr.workload("VMCT.native_benchmark", "native", [
            sr.iteration(charts=[output.stats_chart("native", "sysbench cpu", "events/s",
                                                    [("events_per_second", v)])])
            for v in (100.0, 300.0)])
        kvm = sr.workload("VMCT.boot_and_benchmark", "kvm", [
            sr.iteration([sr.action("vmct.build", b)], [output.stats_chart(
                "kvm", "sysbench cpu", "events/s", [("events_per_second", v)])])
            for b, v in ((10.1, 150.0), (10.5, 160.0), (11.2, 150.5), (10.8, 151.0),
                         (10.3, 152.0), (11.0, 153.0), (10.7, 154.0), (10.9, 155.0))])
        return cdata.compare([sr.task(
            native, kvm, builds("docker", [3.1, 2.9, 3.4, 3.0, 3.3, 2.8, 3.2, 3.5]),
            builds("lxc", [3.0, 4.2]))])

    def test_html_marks_significance_cv_and_unbounded(self):
        data = self._significance_data()
        page = render.render_html(data)
        # docker build: 8 vs 8 separated, significant after Holm: p=, green (faster)
        docker = [r for r in data["groups"] if r["kind"] == "docker"
                  and r["metric"] == "vmct.build"][0]
        self.assertTrue(docker["significant"])
        self.assertIn('<td class="num ci better">×%s' % formatting.fmt(docker["ratio"]), page)
        self.assertIn("<span class=sig title=\"Mann–Whitney U (exact): p = %s, "
                      "Holm-adjusted p = %s\">p=%s</span>"
                      % (formatting.fmt_p(docker["p_value"]),
                         formatting.fmt_p(docker["p_adjusted"]),
                         formatting.fmt_p(docker["p_adjusted"])), page)
        self.assertEqual("0.000622", formatting.fmt_p(docker["p_adjusted"]))   # 4 x 2/12870
        # lxc build: 2 vs 8 can reach p < 0.05 but is not significant: "~" only;
        # kvm cpu vs native: 8 vs 2 the same; both not coloured
        self.assertIn("not significant after correction", page)
        self.assertIn('>~</span>', page)
        # the unbounded interval and the noisy baseline (CV 70.7 %) are marked
        self.assertIn("[unbounded]</small>", page)
        self.assertIn('<td class="num cvhigh">70.7 <span class=flag', page)
        self.assertIn("CV 70.7 % <span class=flag", page)
        for words in ("Fieller", "Mann–Whitney U", "Holm–Bonferroni", "N too small",
                      "with equal N at least 4 per side", "all 4 comparisons"):
            self.assertIn(words, page)

    def test_tiny_p_is_escaped(self):
        cell = {"p_value": 1e-9, "p_adjusted": 4e-9, "p_min": 1e-12, "significant": True,
                "test": "mann-whitney-u normal", "test_note": None}
        mark = render.macro("comparison_cells.html", "mark")
        self.assertIn(">p&lt;0.0001</span>", mark(view.significance(cell, 0.05)))

    def test_html_says_when_n_is_too_small(self):
        kvm = sr.workload("VMCT.x", "kvm", [sr.iteration([sr.action("vmct.x", v)])
                                            for v in (4870.0, 5630.0)])
        docker = sr.workload("VMCT.x", "docker", [sr.iteration([sr.action("vmct.x", v)])
                                                  for v in (3920.0, 7960.0)])
        page = render.render_html(cdata.compare([sr.task(kvm, docker)]))
        self.assertIn(">~</span> <small>N too small</small>", page)
        self.assertIn("smallest possible p = 0.333", page)
        # Fieller's lower bound (-3.8) clipped at 0, never negative
        self.assertIn("×1.131 <small>[0, 9.148]</small>", page)
        self.assertNotIn("[-", page)

    def test_csv_has_every_column_and_json_values(self):
        data = self._significance_data()
        rows = list(csv.DictReader(io.StringIO(render.render_csv(data))))
        self.assertEqual(list(cdata.CSV_COLUMNS), list(rows[0]))
        for field in ("cv_high", "ratio_ci_unbounded", "test", "p_value", "p_adjusted",
                      "significant", "welch_p_value"):
            self.assertIn(field, cdata.CSV_COLUMNS)
        by_key = {(r["kind"], r["metric"]): r for r in rows}
        docker = by_key[("docker", "vmct.build")]
        self.assertEqual(("true", "mann-whitney-u exact"),
                         (docker["significant"], docker["test"]))
        group = [g for g in data["groups"] if g["kind"] == "docker"
                 and g["metric"] == "vmct.build"][0]
        for field in cdata.CSV_COLUMNS:
            if isinstance(group.get(field), float):
                self.assertEqual(group[field], float(docker[field]), field)
        cpu = by_key[("kvm", "events_per_second")]
        self.assertEqual(("", "", "true", "false"),
                         (cpu["ratio_ci_low"], cpu["ratio_ci_high"],
                          cpu["ratio_ci_unbounded"], cpu["significant"]))
        native = by_key[("native", "events_per_second")]
        self.assertEqual(("", "", "true"), (native["test"], native["significant"],
                                            native["cv_high"]))
        # JSON: null for an unbounded interval
        loaded = json.loads(render.render_json(data))
        kvm = [g for g in loaded["groups"] if g["kind"] == "kvm"
               and g["metric"] == "events_per_second"][0]
        self.assertEqual((None, None, True), (kvm["ratio_ci_low"], kvm["ratio_ci_high"],
                                              kvm["ratio_ci_unbounded"]))

    def test_csv_exporter_doc_lists_the_columns(self):
        doc = comparison.ComparisonCSVExporter.__doc__
        for column in cdata.CSV_COLUMNS:
            self.assertIsNotNone(re.search(r"\b%s\b" % column, doc), column)

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

    def test_csv_lines_fill_only_csv_columns(self):
        # A line's key that is no column would vanish from the CSV without a word.
        data = cdata.compare(sr.demo_tasks(times=3, facts=True))
        lines = list(render._csv_lines(data))[len(data["groups"]):]
        self.assertEqual({"reboot_path", "fact"}, {line["source"] for line in lines})
        for line in lines:
            self.assertLessEqual(set(line), set(cdata.CSV_COLUMNS), line)


class TestTemplates(testtools.TestCase):

    def test_templates_ship_as_package_data(self):
        # A wheel or sdist carries files that are not Python only when setup.cfg's
        # package_data lists them; a template it misses breaks installed exports.
        folder = importlib.resources.files("rally_vmct.task.exporters") / "templates"
        names = sorted(entry.name for entry in folder.iterdir())
        self.assertEqual(["comparison.css", "comparison.html", "comparison_cells.html",
                          "comparison_charts.html"], names)
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4, "setup.cfg"))
        patterns = cfg["options.package_data"]["rally_vmct.task.exporters"].split()
        for name in names:
            self.assertTrue(any(fnmatch.fnmatch("templates/" + name, pattern)
                                for pattern in patterns), name)
        # and the page loads them from the package, as Rally loads its reports'
        self.assertEqual(names, sorted(render._JINJA.list_templates()))
