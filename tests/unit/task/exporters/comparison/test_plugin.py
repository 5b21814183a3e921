"""The vmct-comparison exporter plugins and their HTML / CSV / JSON renderings."""

import configparser
import csv
import fnmatch
import html
import importlib.resources
import io
import json
import os
import re

from rally import exceptions
from rally.task import exporter
import testtools

from rally_vmct.task.exporters.comparison import plugin
from rally_vmct.task.exporters.comparison import charts
from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct.task.exporters.comparison import view
from rally_vmct.task.exporters.comparison import formatting
from rally_vmct.task import output
from tests.unit.task.exporters.comparison import sample_results as sr


def _tasks():
    kvm = sr.workload("VMCT.boot_and_delete_server", "kvm", [
        sr.iteration([sr.action("vmct.build", b)]) for b in (10.0, 12.0, 14.0)], 2)
    docker = sr.workload("VMCT.boot_and_delete_server", "docker", [
        sr.iteration([sr.action("vmct.build", b)]) for b in (2.0, 3.0, 4.0)], 2)
    return [sr.task(kvm, docker, uuid="T1")]


class TestDestination(testtools.TestCase):

    def test_plain_path(self):
        self.assertEqual(("cmp.html", {}), plugin.parse_destination("cmp.html"))
        self.assertEqual((None, {}), plugin.parse_destination(None))

    def test_options(self):
        self.assertEqual(("out/cmp.html", {"baseline": "kvm", "confidence": 0.9}),
                         plugin.parse_destination(
                             "out/cmp.html?baseline=kvm&confidence=0.9"))
        self.assertEqual((None, {"baseline": "docker"}),
                         plugin.parse_destination("?baseline=docker"))

    def test_bad_options_name_the_fix(self):
        for dest, words in (("a.html?colour=red", "unknown vmct-comparison option"),
                            ("a.html?confidence=95", "confidence must be a number in"),
                            ("a.html?confidence=x", "confidence must be a number in"),
                            ("a.html?baseline=", "baseline needs a kind name"),
                            ("a.html?baseline", "baseline needs a kind name")):
            e = self.assertRaises(ValueError, plugin.parse_destination, dest)
            self.assertIn(words, str(e))

    def test_sibling(self):
        self.assertEqual("r/cmp.csv", plugin.sibling("r/cmp.html", ".csv"))
        self.assertEqual("r/cmp.json", plugin.sibling("r/cmp.HTM", ".json"))
        self.assertEqual("r/cmp.csv", plugin.sibling("r/cmp", ".csv"))
        self.assertEqual("r/cmp.csv.csv", plugin.sibling("r/cmp.csv", ".csv"))


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
        report = exporter.TaskExporter.make(plugin.ComparisonExporter, _tasks(),
                                            "/tmp/x/cmp.html?baseline=docker")
        self.assertEqual({"/tmp/x/cmp.html", "/tmp/x/cmp.csv", "/tmp/x/cmp.json"},
                         set(report["files"]))
        self.assertEqual("file:///tmp/x/cmp.html", report["open"])
        data = json.loads(report["files"]["/tmp/x/cmp.json"])
        self.assertEqual("docker", data["baseline"])
        kvm = [g for g in data["groups"] if g["kind"] == "kvm"
               and g["metric"] == "vmct.build"][0]
        self.assertAlmostEqual(4.0, kvm["ratio"], delta=0.2)   # geometric means, ~12 / 3
        rows = list(csv.DictReader(io.StringIO(report["files"]["/tmp/x/cmp.csv"])))
        row = [r for r in rows if r["kind"] == "kvm" and r["metric"] == "vmct.build"][0]
        self.assertEqual(("3", "0", "12", "2", repr(kvm["ratio"])),
                         (row["n"], row["failures"], row["mean"], row["sd"], row["ratio"]))
        self.assertIn("<svg", report["files"]["/tmp/x/cmp.html"])

    def test_print_without_destination(self):
        report = exporter.TaskExporter.make(plugin.ComparisonExporter, _tasks(), None)
        self.assertEqual(["print"], list(report))
        self.assertTrue(report["print"].startswith("<!DOCTYPE html>"))
        report = exporter.TaskExporter.make(plugin.ComparisonCSVExporter, _tasks(),
                                            None)
        self.assertTrue(report["print"].startswith("kind,concurrency,source,"))
        report = exporter.TaskExporter.make(plugin.ComparisonJSONExporter, _tasks(),
                                            "?confidence=0.9")
        self.assertEqual(0.9, json.loads(report["print"])["confidence"])

    def test_single_file_types(self):
        report = exporter.TaskExporter.make(plugin.ComparisonCSVExporter, _tasks(),
                                            "/tmp/y.csv")
        self.assertEqual(["/tmp/y.csv"], list(report["files"]))
        report = exporter.TaskExporter.make(plugin.ComparisonJSONExporter, _tasks(),
                                            "/tmp/y.json")
        self.assertEqual("vmct-comparison",
                         json.loads(report["files"]["/tmp/y.json"])["format"])

    def test_unknown_baseline_is_a_validation_error(self):
        e = self.assertRaises(exceptions.ValidationError, exporter.TaskExporter.make,
                              plugin.ComparisonExporter, _tasks(),
                              "a.html?baseline=xen")
        self.assertIn("kinds found: kvm, docker", str(e))


class TestRender(testtools.TestCase):

    def test_html_escapes_user_text(self):
        w = sr.workload("VMCT.x", "<img src=x onerror=alert(1)>", [sr.iteration(
            [sr.action("<b>act</b>", 1.0)])])
        page = render.render_html(analyse.compare([sr.task(w, title="<i>t</i>")]))
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
        page = render.render_html(analyse.compare([sr.task(kvm, docker)]), "<i>stamp</i>")
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
        page = render.render_html(analyse.compare(sr.demo_tasks(times=3)))
        self.assertNotIn("<script", page)
        self.assertNotIn("<link", page)
        # no resource fetched from anywhere: the only URLs are SVG namespaces
        urls = set(re.findall(r"(?:https?:)?//[\w.-]+[^\s\"'<>]*", page))
        self.assertEqual({"http://www.w3.org/2000/svg"}, urls)

    def test_html_has_chart_per_metric_and_units(self):
        data = analyse.compare(sr.demo_tasks(times=3))
        page = render.render_html(data)
        # + the lifecycle breakdown + a scale chart per phase (levels 1 and 4)
        self.assertEqual(["build", "network wait", "delete"],
                         [phase["phase"] for phase in data["scale"]])
        self.assertEqual(len(data["metrics"]) + 1 + 3, page.count('<svg class="chart'))
        self.assertEqual(len(data["metrics"]), page.count('<table class="stats'))
        for label in ("vmct.build [s]", "sysbench cpu: events_per_second [events/s]",
                      "netperf TCP_STREAM: throughput [Mbit/s]", "mean time [s]",
                      "mean ± SD [Mbit/s]", "soft fell back"):
            self.assertIn(label, page)

    def test_html_of_nothing(self):
        page = render.render_html(analyse.compare([]))
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
            for v in (0.0, 300.0)])
        kvm = sr.workload("VMCT.boot_and_benchmark", "kvm", [
            sr.iteration([sr.action("vmct.build", b)], [output.stats_chart(
                "kvm", "sysbench cpu", "events/s", [("events_per_second", v)])])
            for b, v in ((10.1, 150.0), (10.5, 160.0), (11.2, 150.5), (10.8, 151.0),
                         (10.3, 152.0), (11.0, 153.0), (10.7, 154.0), (10.9, 155.0))])
        return analyse.compare([sr.task(
            native, kvm, builds("docker", [3.1, 2.9, 3.4, 3.0, 3.3, 2.8, 3.2, 3.5]),
            builds("lxc", [3.0, 4.2]))])

    def test_html_marks_significance_cv_and_unbounded(self):
        data = self._significance_data()
        page = render.render_html(data)
        # docker build: 8 vs 8, its interval excludes 1: p=, green (faster), the rule named
        docker = [r for r in data["groups"] if r["kind"] == "docker"
                  and r["metric"] == "vmct.build"][0]
        self.assertTrue(docker["significant"])
        self.assertIn('<td class="num ci better">×%s' % formatting.fmt(docker["ratio"]), page)
        self.assertIn(html.escape(
            "<span class=sig title=\"Welch t on log values, Hsu df = min(N) − 1 over the "
            "iterations: the interval covers only the variation within a run, not between "
            "runs: "
            "the 95 % interval excludes 1, p = {0} (uncorrected, α = 0.05); "
            "robustness note, not the verdict: Mann–Whitney U (exact) p = {1}\">"
            "p{0}</span>".format(formatting.fmt_p(docker["p_value"]),
                                 formatting.fmt_p(docker["mwu_p_value"])),
            quote=False).replace("&lt;span", "<span").replace("&gt;p", ">p").replace(
                "&lt;/span&gt;", "</span>").replace("\">", "\">"), page)
        # lxc build [3.0, 4.2] vs kvm at Hsu df 1: the interval contains 1, "~" with
        # the ratios this N could detect
        lxc = [r for r in data["groups"] if r["kind"] == "lxc"
               and r["metric"] == "vmct.build"][0]
        self.assertFalse(lxc["significant"])
        self.assertLessEqual(lxc["ratio_ci_low"], 1)
        self.assertIn("the test detects (80 % power) only ratios below ×", page)
        self.assertIn('>~</span>', page)
        # the unbounded interval (a value <= 0: Fieller) and the noisy baseline are marked
        # (two half-lines: the set excludes a gap, which here does not hold 1)
        self.assertRegex(page, r"\[unbounded: \(−∞, -?[\d.]+\] ∪ \[[\d.]+, ∞\)\]</small>")
        self.assertIn('<td class="num cvhigh">141.4 <span class=flag', page)
        for words in ("log values with Hsu's df", "Exploratory, uncorrected",
                      ("of the 4 compared cells is tested at α = 0.05, so if no kind differed at "
                       "all about\n0.2 of them would be marked by chance"), "Fieller",
                      "Mann–Whitney U", "N too small", "TOST"):
            self.assertIn(words, page)
        self.assertNotIn("Holm–Bonferroni", page)

    def test_tiny_p_is_escaped(self):
        cell = {"p_value": 1e-9, "significant": True, "rule": "welch-t-log-hsu",
                "ratio_ci_low": 0.1, "ratio_ci_high": 0.2}
        mark = render.macro("comparison_cells.html", "mark")
        self.assertIn(">p&lt;0.0001</span>", mark(view.significance(cell, 0.05)))

    def test_html_says_when_n_is_too_small(self):
        kvm = sr.workload("VMCT.x", "kvm", [sr.iteration([sr.action("vmct.x", v)])
                                            for v in (4870.0, 5630.0)])
        docker = sr.workload("VMCT.x", "docker", [sr.iteration([sr.action("vmct.x", 3920.0)])])
        page = render.render_html(analyse.compare([sr.task(kvm, docker)]))
        self.assertIn('title="no verdict: fewer than 2 candidate samples: no interval">~'
                      '</span> <small>N too small</small>', page)
        self.assertNotIn("[-", page)

    def test_csv_has_every_column_and_json_values(self):
        data = self._significance_data()
        rows = list(csv.DictReader(io.StringIO(render.render_csv(data))))
        self.assertEqual(list(analyse.CSV_COLUMNS), list(rows[0]))
        for field in ("cv_high", "ratio_ci_unbounded", "rule", "level", "p_value",
                      "significant", "detectable_low", "mwu_p_value", "log_sd"):
            self.assertIn(field, analyse.CSV_COLUMNS)
        by_key = {(r["kind"], r["metric"]): r for r in rows}
        docker = by_key[("docker", "vmct.build")]
        self.assertEqual(("true", "welch-t-log-hsu", "mann-whitney-u exact"),
                         (docker["significant"], docker["rule"], docker["mwu_test"]))
        group = [g for g in data["groups"] if g["kind"] == "docker"
                 and g["metric"] == "vmct.build"][0]
        for field in analyse.CSV_COLUMNS:
            if isinstance(group.get(field), float):
                self.assertEqual(group[field], float(docker[field]), field)
        cpu = by_key[("kvm", "events_per_second")]
        self.assertEqual(("", "", "true", "false"),
                         (cpu["ratio_ci_low"], cpu["ratio_ci_high"],
                          cpu["ratio_ci_unbounded"], cpu["significant"]))
        native = by_key[("native", "events_per_second")]
        self.assertEqual(("", "false", "true"), (native["rule"], native["significant"],
                                                 native["cv_high"]))
        # JSON: null for an unbounded interval
        loaded = json.loads(render.render_json(data))
        kvm = [g for g in loaded["groups"] if g["kind"] == "kvm"
               and g["metric"] == "events_per_second"][0]
        self.assertEqual((None, None, True), (kvm["ratio_ci_low"], kvm["ratio_ci_high"],
                                              kvm["ratio_ci_unbounded"]))

    def test_csv_exporter_doc_lists_the_columns(self):
        doc = plugin.ComparisonCSVExporter.__doc__
        for column in analyse.CSV_COLUMNS:
            self.assertIsNotNone(re.search(r"\b%s\b" % column, doc), column)

    def test_csv_reboot_rows(self):
        its = [sr.iteration(charts=[output.stats_chart(
            "kvm", output.REBOOT_PATH_GROUP, "count",
            [("soft", 1), ("soft_fell_back_to_hard", 0), ("hard", 0)])])] * 3
        data = analyse.compare([sr.task(sr.workload("VMCT.r", "kvm", its,
                                                    reboot_type="soft"))])
        rows = list(csv.reader(io.StringIO(render.render_csv(data))))
        self.assertEqual(list(analyse.CSV_COLUMNS), rows[0])
        paths = [r for r in rows if r[2] == "reboot_path"]
        self.assertEqual([["kvm", "1", "reboot_path", "reboot path", "soft", "reboots",
                           "3"],
                          ["kvm", "1", "reboot_path", "reboot path",
                           "soft_fell_back_to_hard", "reboots", "0"],
                          ["kvm", "1", "reboot_path", "reboot path", "hard", "reboots",
                           "0"]], [r[:7] for r in paths])
        self.assertTrue(all(len(r) == len(analyse.CSV_COLUMNS) for r in rows))

    def test_csv_lines_fill_only_csv_columns(self):
        # A line's key that is no column would vanish from the CSV without a word.
        data = analyse.compare(sr.demo_tasks(times=3, facts=True))
        lines = list(render._csv_lines(data))[len(data["groups"]):]
        self.assertEqual({"reboot_path", "fact"}, {line["source"] for line in lines})
        for line in lines:
            self.assertLessEqual(set(line), set(analyse.CSV_COLUMNS), line)


class TestTemplates(testtools.TestCase):

    def test_templates_ship_as_package_data(self):
        # A wheel or sdist carries files that are not Python only when setup.cfg's
        # package_data lists them; a template it misses breaks installed exports.
        folder = importlib.resources.files("rally_vmct.task.exporters.comparison") / "templates"
        names = sorted(entry.name for entry in folder.iterdir())
        self.assertEqual(["comparison.css", "comparison.html", "comparison_cells.html",
                          "comparison_charts.html"], names)
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5, "setup.cfg"))
        patterns = cfg["options.package_data"]["rally_vmct.task.exporters.comparison"].split()
        for name in names:
            self.assertTrue(any(fnmatch.fnmatch("templates/" + name, pattern)
                                for pattern in patterns), name)
        # and the page loads them from the package, as Rally loads its reports'
        self.assertEqual(names, sorted(render._JINJA.list_templates()))


def _level(c, n, p50, p95, p99, bounds=None):
    """A scale level; ``bounds``: {field: (low, high)}, None where N is too small."""
    level = {"concurrency": c, "n": n, "failures": 0, "p50": p50, "p95": p95, "p99": p99}
    for field in ("p50", "p95", "p99"):
        level[field + "_ci_low"], level[field + "_ci_high"] = (bounds or {}).get(
            field, (None, None))
    return level


class TestScale(testtools.TestCase):

    def _chart(self):
        levels = [_level(1, 10, 2.0, 3.0, 4.0, {"p50": (1.0, 5.0)}),
                  _level(4, 80, 4.0, 6.0, 7.0, {"p50": (3.5, 4.5), "p95": (5.0, 8.0),
                                                "p99": (6.5, None)}),
                  _level(16, 400, 8.0, 9.0, 9.5, {"p99": (9.0, 10.0)})]
        return charts.quantiles("vmct.build [s]", "s", [("kvm", levels)], {"kvm": "#111"},
                                95)

    def test_log_axis_and_dodge(self):
        c = self._chart()
        # log2 axis 0..4 over 1006 px less 40 px each end: 1 -> 118, 4 -> 581, 16 -> 1044
        self.assertEqual([(118.0, 1), (581.0, 4), (1044.0, 16)],
                         [(col["x"], col["label"]) for col in c["columns"]])
        self.assertEqual(["p50", "p95", "p99"], [s["field"] for s in c["series"]])
        # one kind: its three quantiles 4 px apart around each level
        self.assertEqual([114.0, 118.0, 122.0], [s["points"][0]["x"] for s in c["series"]])
        self.assertEqual([(None, 2.0), ("7 4", 1.5), ("2 3", 1.5)],
                         [(s["dash"], s["width"]) for s in c["series"]])

    def test_y_axis_covers_the_whiskers_and_whiskers_only_where_bounded(self):
        c = self._chart()
        # highest figure: p99's upper bound 10 -> ticks 0..10; y(v) = 34 + 240 (1 - v/10)
        self.assertEqual(["0", "2", "4", "6", "8", "10"], [t["label"] for t in c["ticks"]])
        p50, p95, p99 = c["series"]
        self.assertEqual({"x": 114.0, "y": 226.0, "low": 250.0, "high": 154.0},
                         {k: p50["points"][0][k] for k in ("x", "y", "low", "high")})
        self.assertEqual((None, None), (p95["points"][0]["low"], p95["points"][0]["high"]))
        self.assertEqual((118.0, None), (p99["points"][1]["low"], p99["points"][1]["high"]))
        self.assertEqual("kvm, concurrency 4: p99 7 s, 95 % CI [6.500 s, N too small] (N=80)",
                         p99["points"][1]["tip"])
        self.assertEqual("114.0,226.0 577.0,178.0 1040.0,82.0", p50["line"])

    def test_chart_of_no_figure_and_single_point(self):
        self.assertIsNone(charts.quantiles("t", "s", [("kvm", [
            _level(1, 0, None, None, None)])], {"kvm": "#111"}, 95))
        c = charts.quantiles("t", "s", [("kvm", [_level(1, 3, 1.0, 2.0, 3.0)]),
                                        ("docker", [_level(1, 3, 1.0, 2.0, 3.0),
                                                    _level(8, 3, 1.0, 2.0, 3.0)])],
                             {"kvm": "#111", "docker": "#222"}, 95)
        self.assertEqual([None] * 3, [s["line"] for s in c["series"][:3]])
        self.assertEqual(6, sum(1 for s in c["series"][3:] for _ in s["points"]))
        # two kinds: six slots 4 px apart, -10 .. +10 around the level
        self.assertEqual([-10.0, -6.0, -2.0, 2.0, 6.0, 10.0],
                         [s["points"][0]["x"] - c["columns"][0]["x"] for s in c["series"]])

    def test_svg_is_accessible(self):
        svg = render.macro("comparison_charts.html", "quantiles")(self._chart(), "scale-0")
        self.assertIn('role="img" aria-labelledby="scale-0-title scale-0-desc"', svg)
        self.assertIn('<title id="scale-0-title">vmct.build [s]</title>', svg)
        self.assertIn('<desc id="scale-0-desc">p50, p95, p99 of vmct.build [s] per kind '
                      '(kvm) at concurrency 1, 4, 16, on a log scale; whiskers: 95 % '
                      'confidence intervals', svg)
        self.assertIn('stroke-dasharray="2 3" points="', svg)
        self.assertIn("concurrency (log scale)", svg)

    def test_section_with_table(self):
        data = analyse.compare(sr.scale_tasks(levels=(1, 8), minimum=10))
        page = render.render_html(data)
        self.assertIn('<h2 id="scale">Scale: latency against concurrency</h2>', page)
        self.assertEqual(2, page.count('<svg class="chart scale"'))
        self.assertEqual(2, page.count('<table class="quantiles tight">'))
        for words in ('<section class="scale" id="scale-0" data-phase="build">',
                      '<section class="scale" id="scale-1" data-phase="delete">',
                      "the fewest for a lower / an upper bound are p50: 6 / 6, p95: 2 / 72, "
                      "p99: 1 / 368.",
                      '<i title="a 95 % upper bound of p95 needs N ≥ 72 (here N = 10)">'
                      'N too small</i>',
                      "the CIs of p50, p95 and p99"):
            self.assertIn(words, page)
        row = [g for g in data["groups"] if g["kind"] == "docker" and g["concurrency"] == 8
               and g["metric"] == "vmct.build"][0]
        self.assertIn('<td class="num ci">%s <small>[%s, %s]</small></td>' % (
            formatting.fmt(row["p50"]), formatting.fmt(row["p50_ci_low"]),
            formatting.fmt(row["p50_ci_high"])), page)

    def test_no_section_with_one_level(self):
        page = render.render_html(analyse.compare(_tasks()))
        self.assertNotIn('id="scale"', page)
        self.assertNotIn("chart scale", page)

    def test_hostile_kind_name_is_escaped(self):
        bad = '<script>alert("x")</script>'
        escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
        data = analyse.compare(sr.scale_tasks(levels=(1, 4), kinds=(bad,)))
        page = render.render_html(data)
        self.assertNotIn("<script", page)
        for where in ('<text x="94.0" y="18">%s</text>',                 # legend
                      "<title>%s, concurrency 4: p50 ",                   # tooltip
                      "per kind (%s) at concurrency 1, 4",                # description
                      '<span class="kind" style="background:#1f77b4"></span>%s</td>'
                      '<td class=num>4</td>'):                            # table
            self.assertIn(where % escaped, page)

    def test_csv_and_json_fields(self):
        data = analyse.compare(sr.scale_tasks(levels=(1, 128), kinds=("kvm",)))
        rows = list(csv.DictReader(io.StringIO(render.render_csv(data))))
        row = [r for r in rows if r["metric"] == "vmct.build" and r["concurrency"] == "128"][0]
        group = [g for g in data["groups"] if g["metric"] == "vmct.build"
                 and g["concurrency"] == 128][0]
        self.assertEqual((126, 2), (group["n"], group["failures"]))   # 1 in 64 fail
        for field in analyse.QUANTILE_INTERVAL_FIELDS:
            self.assertIn(field, analyse.CSV_COLUMNS)
            if group[field] is None:
                self.assertEqual("", row[field], field)
            else:
                self.assertEqual(group[field], float(row[field]), field)
        self.assertEqual("", row["p99_ci_high"])             # N = 126 < 368
        self.assertNotEqual("", row["p95_ci_high"])
        loaded = json.loads(render.render_json(data))
        self.assertEqual(7, loaded["format_version"])
        level = loaded["scale"][0]["kinds"][0]["levels"][1]
        self.assertEqual((128, None), (level["concurrency"], level["p99_ci_high"]))
        self.assertEqual(group["p95_ci_high"], level["p95_ci_high"])
