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
"""The density curve per kind, from ``VMCT.density``'s tables.

The tables are :mod:`rally_vmct.hostcost.density`'s, their titles and columns
:mod:`rally_vmct.task.output`'s.

:class:`DensityTally` reads each iteration's ``"<kind>: density"`` and
``"<kind>: density limit"`` tables; :func:`curves` gives, per curve (:data:`CURVES`)
and kind, a point per instance count with the samples' statistics (N, mean, SD,
the mean's interval) and the ratio to the baseline kind at the same count
(the page's one rule, :func:`rally_vmct.inference.compare`; the first kind
that has the point stands in when the baseline has not),
and per kind how often each limit stopped the filling.
"""

import collections

from rally_vmct import inference
from rally_vmct import stats
from rally_vmct.task import output

# (table column, curve label, unit, x: "running" = instances once reachable,
#  "before" = instances already running while it booted)
CURVES = (
    (output.DENSITY_BOOT, "provision time (boot to reachable)", "s", "before"),
    (output.DENSITY_PSS, "instance PSS per instance", "MiB", "running"),
    (output.DENSITY_CGROUP, "container memory cgroup per instance", "MiB", "running"),
    (output.DENSITY_MEMORY_INCREASE, "host memory increase per instance", "MiB", "running"),
)
X_LABELS = {"before": "instances already running", "running": "instances running"}
POINT_FIELDS = ("x", "n", "mean", "sd", "min", "max", "ci_low", "ci_high", "baseline_kind",
                "ratio", "ratio_ci_low", "ratio_ci_high", "ratio_ci_unbounded", "ratio_note")


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _table(chart):
    data = chart.get("data") if isinstance(chart, dict) else None
    if chart.get("chart_plugin") != "Table" or not isinstance(data, dict):
        return None, None
    return data.get("cols") or [], data.get("rows") or []


class DensityTally:
    """Samples per (curve, kind, x) and limits per kind, over every density iteration."""

    def __init__(self):
        self.points = collections.defaultdict(list)     # (column, kind, x) -> [values]
        self.limits = collections.defaultdict(collections.Counter)   # kind -> {limit: n}
        self.reasons = collections.defaultdict(collections.Counter)  # kind -> {reason: n}
        self.kinds = []

    def add_iteration(self, iteration):
        for chart in (iteration.get("output") or {}).get("complete") or ():
            title = chart.get("title") if isinstance(chart, dict) else None
            if not isinstance(title, str):
                continue
            if title.endswith(output.DENSITY_LIMIT_SUFFIX):
                self._add_limit(title[:-len(output.DENSITY_LIMIT_SUFFIX)], chart)
            elif title.endswith(output.DENSITY_TABLE_SUFFIX):
                self._add_rows(title[:-len(output.DENSITY_TABLE_SUFFIX)], chart)

    def _kind(self, kind):
        if kind not in self.kinds:
            self.kinds.append(kind)

    def _add_rows(self, kind, chart):
        cols, rows = _table(chart)
        if output.DENSITY_INSTANCES not in (cols or ()):
            return
        self._kind(kind)
        for row in rows:
            record = dict(zip(cols, row))
            count = _number(record.get(output.DENSITY_INSTANCES))
            for column, _, _, x in CURVES:
                value = _number(record.get(column))
                if count is not None and value is not None:
                    at = int(count) - 1 if x == "before" else int(count)
                    self.points[(column, kind, at)].append(value)

    def _add_limit(self, kind, chart):
        cols, rows = _table(chart)
        for row in rows or ():
            record = dict(zip(cols, row))
            self._kind(kind)
            self.limits[kind][str(record.get(output.DENSITY_LIMIT))] += 1
            self.reasons[kind][str(record.get(output.DENSITY_REASON))] += 1


def _point(x, values, base_values, base_kind, confidence):
    summary = stats.summary(sorted(values), confidence)
    point = {"x": x, "n": summary.n, "mean": summary.mean, "sd": summary.sd,
             "min": summary.min, "max": summary.max, "ci_low": summary.ci_low,
             "ci_high": summary.ci_high, "baseline_kind": base_kind}
    if base_values is None:
        point.update(ratio=None, ratio_ci_low=None, ratio_ci_high=None,
                     ratio_ci_unbounded=False, ratio_note="baseline")
        return point
    # the page's one rule (rally_vmct.inference), at the page's level
    r = inference.compare(inference.sample(values), inference.sample(base_values),
                          round(1.0 - confidence, 12))
    point.update({k: r[k] for k in ("rule", "ratio", "ratio_ci_low", "ratio_ci_high",
                                    "ratio_ci_unbounded", "ratio_note", "p_value",
                                    "significant")})
    return point


def _curve(tally, column, kinds, confidence):
    xs = sorted({x for (col, _, x) in tally.points if col == column})
    out = []
    for kind in kinds:
        points = []
        for x in xs:
            values = tally.points.get((column, kind, x))
            if not values:
                continue
            base = next(k for k in kinds if tally.points.get((column, k, x)))
            base_values = None if base == kind else tally.points[(column, base, x)]
            points.append(_point(x, values, base_values, base, confidence))
        if points:
            out.append({"kind": kind, "points": points})
    return out


def curves(tally, kinds, confidence):
    """The density section of the comparison: its curves and each kind's limits."""
    order = [k for k in kinds if k in tally.kinds] + [k for k in tally.kinds if k not in kinds]
    found = []
    for column, label, unit, x in CURVES:
        per_kind = _curve(tally, column, order, confidence)
        if per_kind:
            found.append({"metric": column, "label": label, "unit": unit,
                          "x": X_LABELS[x], "kinds": per_kind})
    limits = [{"kind": kind, "iterations": sum(tally.limits[kind].values()),
               "limits": dict(tally.limits[kind]), "reasons": dict(tally.reasons[kind])}
              for kind in order if tally.limits.get(kind)]
    return {"curves": found, "limits": limits}


def csv_lines(density):
    """The density section's CSV lines (the comparison's CSV_COLUMNS names)."""
    for curve in density["curves"]:
        for entry in curve["kinds"]:
            for point in entry["points"]:
                line = {key: point[key] for key in POINT_FIELDS if key != "x"}
                line.update(kind=entry["kind"], source="density", group=curve["label"],
                            metric="%s = %d" % (curve["x"], point["x"]), unit=curve["unit"])
                yield line
    for entry in density["limits"]:
        for reason, count in entry["reasons"].items():
            yield {"kind": entry["kind"], "source": "density_limit", "group": "density limit",
                   "metric": reason, "n": count}
