# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""The ``vmct-comparison`` exporters: KVM vs Docker vs native per concurrency.

``rally task export UUID [UUID...] --type vmct-comparison --to cmp.html`` writes
``cmp.html`` and, next to it, ``cmp.csv`` and ``cmp.json`` with the same numbers.
``--type vmct-comparison-csv`` / ``vmct-comparison-json`` write only that form (to
``--to FILE``, or print it without ``--to``).

Options ride on the destination after a ``?`` (Rally's export passes nothing but
``--to``): ``--to 'cmp.html?baseline=kvm&confidence=0.9'``.

* ``baseline``: kind the ratios are relative to (default ``native`` when the tasks
  have it, else the first kind seen);
* ``confidence``: level of the intervals, in (0, 1) (default 0.95).
"""

import datetime
import os
import urllib.parse

from rally.common import validation
from rally import exceptions
from rally.task import exporter

from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct import stats

OPTIONS = ("baseline", "confidence")


def parse_destination(destination):
    """``(path or None, {option: value})`` of a ``--to`` value; ValueError if bad."""
    if not destination:
        return None, {}
    path, sep, query = destination.partition("?")
    options = {}
    if sep:
        for field in filter(None, query.split("&")):
            key, _, value = field.partition("=")
            key, value = urllib.parse.unquote(key), urllib.parse.unquote(value)
            if key not in OPTIONS:
                raise ValueError(
                    "unknown vmct-comparison option %r in --to %r; known options: %s "
                    "(e.g. --to 'cmp.html?baseline=kvm&confidence=0.95')"
                    % (key, destination, ", ".join(OPTIONS)))
            options[key] = value
    if "confidence" in options:
        try:
            level = float(options["confidence"])
        except ValueError:
            level = None
        if level is None or not 0 < level < 1:
            raise ValueError("vmct-comparison option confidence must be a number in "
                             "(0, 1), e.g. confidence=0.95; got %r" % options["confidence"])
        options["confidence"] = level
    if "baseline" in options and not options["baseline"]:
        raise ValueError("vmct-comparison option baseline needs a kind name, "
                         "e.g. baseline=kvm")
    return path or None, options


def sibling(path, extension):
    """``cmp.html`` -> ``cmp.csv``; never the path itself."""
    stem, ext = os.path.splitext(path)
    if ext.lower() not in (".html", ".htm"):
        stem = path
    return stem + extension


@validation.configure("vmct_comparison_destination")
class DestinationValidator(validation.Validator):
    """Checks the options given after ``?`` in the vmct-comparison destination."""

    def validate(self, context, config, plugin_cls, plugin_cfg):
        try:
            parse_destination((plugin_cfg or {}).get("destination"))
        except ValueError as e:
            self.fail(str(e))


class _ComparisonExporter(exporter.TaskExporter):

    def _comparison(self):
        path, options = parse_destination(self.output_destination)
        try:
            data = analyse.compare(
                self.tasks_results, baseline=options.get("baseline"),
                confidence=options.get("confidence", stats.DEFAULT_CONFIDENCE))
        except analyse.ComparisonError as e:
            raise exceptions.ValidationError(str(e))
        return path, data

    @staticmethod
    def _stamp():
        return "Generated %s UTC by rally-vmct." % datetime.datetime.now(
            datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")

    @staticmethod
    def _one(path, text):
        if path:
            return {"files": {path: text}, "open": "file://" + os.path.abspath(path)}
        return {"print": text}


@validation.add("vmct_comparison_destination")
@exporter.configure("vmct-comparison")
class ComparisonExporter(_ComparisonExporter):
    """KVM vs Docker vs native comparison: HTML plus CSV and JSON siblings.

    Groups every iteration of the exported tasks by instance kind x concurrency x
    metric (lifecycle phases from atomic actions, workload metrics from the
    scenarios' charts; sysbench results also by dialect) with N, failures, mean,
    SD, CV, percentiles and 95 % CI (of the mean, and of p50, p95 and p99, which a
    Scale section draws against concurrency), and ratios to a baseline kind with
    one rule's interval and verdict (Welch t on log values, Hsu df; exploratory,
    uncorrected, the expected number of false marks stated), and a seed check of the
    published directions as a Holm-corrected family of its own (TOST for the
    equivalence claims). The page
    opens with what produced each kind's numbers (instance facts, a warning for
    emulated kinds). ``--to cmp.html`` also
    writes ``cmp.csv`` and ``cmp.json``; without ``--to`` the HTML is printed.
    Options: ``--to 'cmp.html?baseline=kvm&confidence=0.95'``.
    """

    def generate(self):
        path, data = self._comparison()
        page = render.render_html(data, self._stamp())
        if not path:
            return {"print": page}
        return {"files": {path: page,
                          sibling(path, ".csv"): render.render_csv(data),
                          sibling(path, ".json"): render.render_json(data)},
                "open": "file://" + os.path.abspath(path)}


@validation.add("vmct_comparison_destination")
@exporter.configure("vmct-comparison-csv")
class ComparisonCSVExporter(_ComparisonExporter):
    """KVM vs Docker vs native comparison as CSV (one row per group).

    Columns (``analyse.CSV_COLUMNS``): kind, concurrency, source, group,
    metric, unit; n, failures, mean, sd, cv, cv_high, min, p50, p90, p95, p99, max,
    ci_low, ci_high (of the mean); log_mean, log_sd (of the natural logs; empty when
    a value is <= 0); p50_ci_low, p50_ci_high, p95_ci_low, p95_ci_high,
    p99_ci_low, p99_ci_high (the quantiles' distribution-free intervals; empty where N
    is too small for that bound); baseline_kind, baseline_concurrency, rule, level,
    ratio, ratio_se, ratio_ci_low, ratio_ci_high (empty when unbounded),
    ratio_ci_unbounded, ratio_ci_excludes_low, ratio_ci_excludes_high (an unbounded
    set of two half-lines: the gap it excludes), ratio_df, ratio_note, replicate
    (``run``: the interval is over the runs' mean logs, each side having two or more
    runs; ``iteration``: over the iterations, which covers only the variation within
    a run), runs, baseline_runs (tasks with values of the group); p_value
    (uncorrected), significant (the set excludes 1), detectable_low,
    detectable_high (80 % power); mwu_test,
    mwu_p_value, mwu_p_min, mwu_note (the robustness note); dialect, sysbench_mode
    (sysbench results: their dialect and run mode, never mixed in one row); value.
    Then reboot path counts
    (source reboot_path, count in n) and the instance facts per kind (source fact,
    group = the fact's label, metric = its key, the value in value and the number of
    iterations that reported it in n; "not recorded" when results lack it).
    """

    def generate(self):
        path, data = self._comparison()
        return self._one(path, render.render_csv(data))


@validation.add("vmct_comparison_destination")
@exporter.configure("vmct-comparison-json")
class ComparisonJSONExporter(_ComparisonExporter):
    """KVM vs Docker vs native comparison as JSON.

    Groups (with the quantiles' intervals), headlines, the lifecycle and its
    quantiles per concurrency level (``scale``), reboot paths, the host cost per
    lifecycle phase (``host_cost``), the density curves and limits per kind
    (``density``), the environment per kind (every disclosed instance fact with its
    values and counts), warnings (emulated kinds) and the seed check (each published
    direction: agrees, disagrees or cannot tell); the fields are described in
    :mod:`rally_vmct.task.exporters.comparison.analyse` (``format_version`` 7).
    """

    def generate(self):
        path, data = self._comparison()
        return self._one(path, render.render_json(data))
