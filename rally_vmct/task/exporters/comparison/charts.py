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
"""Geometry of the comparison page's inline SVG charts.

The macros of ``templates/comparison_charts.html`` draw the charts; this module
works out where everything goes (pixels of the chart's viewBox) and what the
labels and tooltips say, so that the templates only lay it out. Pure Python.
"""

import math

from rally_vmct.task.exporters.comparison import formatting

KIND_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
               "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
PHASE_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1")
WIDTH = 1100


def kind_colors(kinds):
    return {kind: KIND_COLORS[i % len(KIND_COLORS)] for i, kind in enumerate(kinds)}


def _nice_step(span, ticks=5):
    if span <= 0:
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def _ticks(lo, hi):
    step = _nice_step(hi - lo)
    start = math.floor(lo / step) * step
    out = []
    v = start
    while v <= hi + step * 1e-9:
        out.append(round(v, 12))
        v += step
    if out[-1] < hi:
        out.append(out[-1] + step)
    return out


def _legend(names, colors, left, pad):
    """Legend entries from ``left`` on: a swatch, then the name (about 7 px a letter)."""
    entries = []
    x = left
    for name in names:
        entries.append({"x": x, "color": colors[name], "label": name})
        x += pad + 7 * len(name)
    return entries


def _y_scale(points, top, height):
    """``(ticks, y)``: an axis from 0 (or below) to the highest mean + SD."""
    lo = min(0.0, min(m - s for m, s in points))
    hi = max(m + s for m, s in points)
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    ticks = _ticks(lo, hi)
    lo, hi = ticks[0], ticks[-1]
    return ticks, lambda v: top + height - (v - lo) / (hi - lo) * height


def _series(kind, points, unit, x_of, y, x_name="concurrency"):
    """One kind's markers (with error bar ends when SD > 0) and line."""
    markers, coords = [], []
    for c, mean, sd, n in points:
        if mean is None:
            continue
        x = x_of[c]
        coords.append("%.1f,%.1f" % (x, y(mean)))
        markers.append({
            "x": x, "y": y(mean),
            "low": y(mean - sd) if sd else None, "high": y(mean + sd) if sd else None,
            "tip": "%s, %s %s: mean %s ± SD %s (N=%d)" % (
                kind, x_name, c, formatting.fmt(mean, unit), formatting.fmt(sd, unit), n)})
    return {"markers": markers, "line": " ".join(coords) if len(coords) > 1 else None}


def mean_sd(title, unit, series, concurrencies, colors, x_name="concurrency"):
    """Mean ± SD against concurrency, one series per kind; None when no mean.

    ``series``: ``[(kind, [(concurrency, mean, sd, n), ...])]``. The kinds'
    markers sit side by side around each concurrency's column. ``x_name``: what
    the columns are when not concurrency levels (the density's instance counts).
    """
    points = [(m, s or 0.0) for _, pts in series for _, m, s, _ in pts if m is not None]
    if not points:
        return None
    height, left, right, top, bottom = 300, 78, 16, 34, 46
    pw, ph = WIDTH - left - right, height - top - bottom
    ticks, y = _y_scale(points, top, ph)
    band = pw / len(concurrencies)
    columns = {c: left + (i + 0.5) * band for i, c in enumerate(concurrencies)}
    spread = min(12.0, band / (len(series) + 1))
    drawn = []
    for index, (kind, pts) in enumerate(series):
        offset = (index - (len(series) - 1) / 2.0) * spread
        x_of = {c: x + offset for c, x in columns.items()}
        drawn.append(dict(_series(kind, pts, unit, x_of, y, x_name), color=colors[kind]))
    return {"title": title, "unit": unit, "width": WIDTH, "height": height, "x_name": x_name,
            "left": left, "right": WIDTH - right, "axis_y": top + ph,
            "center_x": left + pw / 2, "mid_y": top + ph / 2,
            "ticks": [{"y": y(t), "label": formatting.fmt_tick(t)} for t in ticks],
            "columns": [{"x": x, "label": c} for c, x in columns.items()],
            "legend": _legend([kind for kind, _ in series], colors, left, 28),
            "series": drawn}


# The quantiles of the scale charts: (field, marker, stroke-dasharray, stroke width).
QUANTILE_STYLES = (("p50", "circle", None, 2.0), ("p95", "square", "7 4", 1.5),
                   ("p99", "ring", "2 3", 1.5))
_DODGE = 4.0    # px between the markers of one level, so that whiskers stay apart


def _log_axis(levels, left, width, margin=40.0):
    """``{level: x}`` on a log2 scale, ``margin`` px in from each end."""
    lo, hi = math.log2(levels[0]), math.log2(levels[-1])
    span = (hi - lo) or 1.0
    return {c: left + margin + (math.log2(c) - lo) / span * (width - 2 * margin)
            for c in levels}


def _whisker(level, field, y):
    """The y of a quantile's interval bounds; None where N is too small for one."""
    low, high = level[field + "_ci_low"], level[field + "_ci_high"]
    return (None if low is None else y(low)), (None if high is None else y(high))


def _interval_text(level, field, unit):
    bounds = [formatting.fmt(level[field + side], unit)
              if level[field + side] is not None else "N too small"
              for side in ("_ci_low", "_ci_high")]
    return "[%s, %s]" % tuple(bounds)


def _quantile_series(kind, levels, style, unit, x_of, y, pct):
    """One kind's line, markers and whiskers for one quantile."""
    field, marker, dash, width = style
    points, coords = [], []
    for level in levels:
        if level[field] is None:
            continue
        x = x_of[level["concurrency"]]
        low, high = _whisker(level, field, y)
        coords.append("%.1f,%.1f" % (x, y(level[field])))
        points.append({"x": x, "y": y(level[field]), "low": low, "high": high,
                       "tip": "%s, concurrency %s: %s %s, %d %% CI %s (N=%d)" % (
                           kind, level["concurrency"], field,
                           formatting.fmt(level[field], unit), pct,
                           _interval_text(level, field, unit), level["n"])})
    return {"field": field, "marker": marker, "dash": dash, "width": width,
            "points": points, "line": " ".join(coords) if len(coords) > 1 else None}


def quantiles(title, unit, series, colors, pct):
    """p50, p95 and p99 against concurrency (log2 axis), per kind; None if no figure.

    ``series``: ``[(kind, [level])]`` with levels as in the comparison's ``scale``
    (concurrency, n, p50, p50_ci_low, p50_ci_high, ...). A line per kind and
    quantile (QUANTILE_STYLES), whiskers over the bounds the interval has.
    """
    fields = [style[0] for style in QUANTILE_STYLES]
    values = [level[f + suffix] for _, levels in series for level in levels
              for f in fields for suffix in ("", "_ci_low", "_ci_high")
              if level[f + suffix] is not None]
    if not values:
        return None
    height, left, right, top, bottom = 320, 78, 16, 34, 46
    pw, ph = WIDTH - left - right, height - top - bottom
    ticks, y = _y_scale([(v, 0.0) for v in values], top, ph)
    levels = sorted({level["concurrency"] for _, pts in series for level in pts})
    columns = _log_axis(levels, left, pw)
    slots = len(series) * len(QUANTILE_STYLES)
    drawn = []
    for index, (kind, pts) in enumerate(series):
        for j, style in enumerate(QUANTILE_STYLES):
            offset = (index * len(QUANTILE_STYLES) + j - (slots - 1) / 2.0) * _DODGE
            x_of = {c: x + offset for c, x in columns.items()}
            drawn.append(dict(_quantile_series(kind, pts, style, unit, x_of, y, pct),
                              color=colors[kind]))
    kinds = [kind for kind, _ in series]
    styles_x = WIDTH - right - 64 * len(QUANTILE_STYLES)
    return {"title": title, "unit": unit, "width": WIDTH, "height": height,
            "left": left, "right": WIDTH - right, "top": top, "axis_y": top + ph,
            "center_x": left + pw / 2, "mid_y": top + ph / 2,
            "desc": "%s of %s per kind (%s) at concurrency %s, on a log scale; whiskers: "
                    "%d %% confidence intervals of the quantiles where N allows one; the "
                    "table below gives the numbers" % (
                        ", ".join(fields), title, ", ".join(kinds),
                        ", ".join(str(c) for c in levels), pct),
            "ticks": [{"y": y(t), "label": formatting.fmt_tick(t)} for t in ticks],
            "columns": [{"x": x, "label": c} for c, x in columns.items()],
            "legend": _legend(kinds, colors, left, 28),
            "styles": [{"x": styles_x + 64 * i, "field": field, "marker": marker,
                        "dash": dash, "width": width}
                       for i, (field, marker, dash, width) in enumerate(QUANTILE_STYLES)],
            "series": drawn}


def _stack(row, phases, colors, x):
    """One kind x concurrency's bars, phase after phase, and their total."""
    bars = []
    pos = 0.0
    for phase in phases:
        cell = row["phases"].get(phase)
        if not cell or not cell["mean"]:
            continue
        bars.append({
            "x": x(pos), "width": max(x(pos + cell["mean"]) - x(pos), 0.5),
            "color": colors[phase],
            "tip": "%s c=%s %s: mean %s ± SD %s (N=%d)" % (
                row["kind"], row["concurrency"], phase, formatting.fmt(cell["mean"], "s"),
                formatting.fmt(cell["sd"], "s"), cell["n"])})
        pos += cell["mean"]
    return bars


def lifecycle(lifecycle):
    """Stacked bars of the mean lifecycle phases per kind x concurrency; None if none."""
    phases, rows = lifecycle["phases"], lifecycle["rows"]
    if not rows or not phases:
        return None
    left, right, top, bar, gap = 130, 80, 34, 18, 6
    pw = WIDTH - left - right
    totals = [sum(r["phases"].get(p, {}).get("mean") or 0 for p in phases) for r in rows]
    ticks = _ticks(0.0, max(totals) or 1.0)

    def x(v):
        return left + v / ticks[-1] * pw

    colors = {phase: PHASE_COLORS[i % len(PHASE_COLORS)] for i, phase in enumerate(phases)}
    return {"width": WIDTH, "height": top + len(rows) * (bar + gap) + 40,
            "left": left, "top": top, "bar": bar, "center_x": left + pw / 2,
            "axis_y": top + len(rows) * (bar + gap),
            "ticks": [{"x": x(t), "label": formatting.fmt_tick(t)} for t in ticks],
            "legend": _legend(phases, colors, left, 36),
            "rows": [{"kind": row["kind"], "concurrency": row["concurrency"],
                      "y": top + i * (bar + gap), "bars": _stack(row, phases, colors, x),
                      "total_x": x(total) + 4, "total": formatting.fmt(total, "s")}
                     for i, (row, total) in enumerate(zip(rows, totals))]}
