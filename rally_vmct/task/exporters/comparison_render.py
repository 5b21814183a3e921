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
"""HTML, CSV and JSON renderings of a comparison from :mod:`.comparison_data`.

The HTML is one self-contained file: inline CSS and inline SVG charts drawn here,
no script, no font or library fetched from anywhere, so it reads the same offline
and in a CI artifact viewer. Pure Python, no Rally import.
"""

import csv
import html
import io
import json
import math

from rally_vmct.task.exporters import comparison_data as cdata
from rally_vmct.task.exporters import environment as env_lib
from rally_vmct.task.exporters import seed_check
from rally_vmct.task import output
from rally_vmct.workloads import stats

KIND_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
               "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
PHASE_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1")
NA = "n/a"
NOT_SIGNIFICANT = "~"
CV_FLAG = "!"
_SI = ("", "k", "M", "G", "T", "P", "E")

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#1d2430;margin:0;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:16px 20px 40px;background:#fff}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;
 border-bottom:2px solid #dde3ea;padding-bottom:4px}h3{font-size:15px;margin:22px 0 6px}
p.meta,p.note{color:#4b5563;margin:4px 0}p.note{font-size:12.5px}
table{border-collapse:collapse;width:100%;font-size:12.5px;margin:6px 0 10px}
th,td{border-bottom:1px solid #e5e7eb;padding:3px 6px;vertical-align:top}
th{background:#f1f4f8;text-align:left;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.ci{white-space:normal}
@media (max-width:1100px){table{font-size:11.5px}.tight td,.tight th{padding:2px 3px}}
td.better{background:#e3f4e6}td.worse{background:#fbe4e4}
td.cvhigh{background:#fff4d6}span.flag{color:#b45309;font-weight:700}
span.ns{color:#6b7280;font-weight:700}span.sig{font-weight:600}
td small,th small{color:#6b7280;font-weight:normal}
span.kind{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
svg.chart{display:block;width:100%;height:auto;margin:4px 0}
svg text{font:11px system-ui,"DejaVu Sans",sans-serif;fill:#1d2430}
caption{caption-side:top;text-align:left;font-size:12px;color:#4b5563;padding:2px 0}
nav ul{columns:2;font-size:12.5px;margin:4px 0;padding-left:18px}
.tight td,.tight th{padding:2px 4px}
div.warnings{border:2px solid #b91c1c;background:#fef2f2;color:#7f1d1d;
 padding:6px 12px;margin:10px 0;border-radius:4px}
div.warnings p{margin:4px 0;font-weight:600}
table.env td,table.seeds td{overflow-wrap:anywhere}table.env td:first-child{width:11em}
table.env td.mixed{background:#fff4d6}table.env td.unknown,td.unknown{color:#6b7280;
 font-style:italic}span.emu{color:#b91c1c;font-weight:700}
td.agrees{background:#e3f4e6}td.disagrees{background:#fbe4e4}
td.cannot{background:#f3f4f6}td.nodir{background:#eef2ff}
table.seeds ul{margin:2px 0;padding-left:16px}
table.seeds{table-layout:fixed}table.seeds td.num,table.seeds th{white-space:normal}
"""


def fmt(value, unit=None):
    """A number for people: 4 significant digits, thousands grouped; n/a for None."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return NA
    a = abs(value)
    if a >= 1e6:
        # Keeps wide tables narrow: 5.283 M instead of 5,283,367.
        power = min(int(math.log10(a)) // 3, len(_SI) - 1)
        text = fmt(value / 1000 ** power) + " " + _SI[power]
        return "%s %s" % (text, unit) if unit else text
    if a >= 10000 or value == int(value):
        text = "{:,.0f}".format(value)
    elif a >= 1:
        text = "%.*f" % (3 - int(math.floor(math.log10(a))), value)
    else:
        text = "%.3g" % value
    return "%s %s" % (text, unit) if unit else text


def fmt_tick(value):
    if abs(value) >= 1e6:
        return fmt(value)
    if abs(value) >= 10000:
        return "{:,.0f}".format(value)
    return "%g" % value


def _e(text):
    return html.escape(str(text), quote=True)


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


def kind_colors(kinds):
    return {kind: KIND_COLORS[i % len(KIND_COLORS)] for i, kind in enumerate(kinds)}


def svg_mean_sd_chart(title, unit, series, concurrencies, colors):
    """Mean +/- SD against concurrency, one series per kind (inline SVG).

    ``series``: ``[(kind, [(concurrency, mean, sd, n), ...])]``.
    """
    width, height = 1100, 300
    left, right, top, bottom = 78, 16, 34, 46
    pw, ph = width - left - right, height - top - bottom
    points = [(m, s or 0.0) for _, pts in series for _, m, s, _ in pts if m is not None]
    if not points:
        return ""
    lo = min(0.0, min(m - s for m, s in points))
    hi = max(m + s for m, s in points)
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    ticks = _ticks(lo, hi)
    lo, hi = ticks[0], ticks[-1]

    def y(v):
        return top + ph - (v - lo) / (hi - lo) * ph

    band = pw / len(concurrencies)
    xi = {c: left + (i + 0.5) * band for i, c in enumerate(concurrencies)}
    spread = min(12.0, band / (len(series) + 1))
    out = ['<svg class="chart" role="img" viewBox="0 0 %d %d" '
           'xmlns="http://www.w3.org/2000/svg"><title>%s</title>'
           % (width, height, _e(title))]
    for t in ticks:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e7eb"/>'
                   '<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                   % (left, width - right, y(t), y(t), left - 6, y(t) + 4, _e(fmt_tick(t))))
    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#6b7280"/>'
               % (left, width - right, top + ph, top + ph))
    for c, x in xi.items():
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x, top + ph + 16, c))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">concurrency</text>'
               % (left + pw / 2, height - 8))
    out.append('<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">'
               'mean ± SD [%s]</text>' % (top + ph / 2, _e(unit)))
    lx = left
    for kind, _ in series:
        out.append('<rect x="%.1f" y="8" width="12" height="12" rx="2" fill="%s"/>'
                   '<text x="%.1f" y="18">%s</text>' % (lx, colors[kind], lx + 16, _e(kind)))
        lx += 28 + 7 * len(kind)
    for s_index, (kind, pts) in enumerate(series):
        color = colors[kind]
        offset = (s_index - (len(series) - 1) / 2.0) * spread
        coords = []
        for c, mean, sd, n in pts:
            if mean is None:
                continue
            x = xi[c] + offset
            coords.append("%.1f,%.1f" % (x, y(mean)))
            tip = "%s, concurrency %s: mean %s ± SD %s (N=%d)" % (
                kind, c, fmt(mean, unit), fmt(sd, unit), n)
            if sd:
                out.append('<g stroke="%s" stroke-width="1.5">'
                           '<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>'
                           '<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/>'
                           '<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/></g>'
                           % (color, x, x, y(mean - sd), y(mean + sd),
                              x - 4, x + 4, y(mean - sd), y(mean - sd),
                              x - 4, x + 4, y(mean + sd), y(mean + sd)))
            out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title>'
                       '</circle>' % (x, y(mean), color, _e(tip)))
        if len(coords) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" '
                       'stroke-opacity="0.6" points="%s"/>' % (color, " ".join(coords)))
    out.append("</svg>")
    return "".join(out)


def svg_lifecycle_chart(lifecycle):
    """Stacked horizontal bars of the mean lifecycle phases per kind x concurrency."""
    phases, rows = lifecycle["phases"], lifecycle["rows"]
    if not rows or not phases:
        return ""
    width = 1100
    left, right, top, bar, gap = 130, 80, 34, 18, 6
    height = top + len(rows) * (bar + gap) + 40
    pw = width - left - right
    totals = [sum(r["phases"].get(p, {}).get("mean") or 0 for p in phases) for r in rows]
    ticks = _ticks(0.0, max(totals) or 1.0)
    hi = ticks[-1]

    def x(v):
        return left + v / hi * pw

    out = ['<svg class="chart lifecycle" role="img" viewBox="0 0 %d %d" '
           'xmlns="http://www.w3.org/2000/svg"><title>Lifecycle breakdown'
           '</title>' % (width, height)]
    axis_y = top + len(rows) * (bar + gap)
    for t in ticks:
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e5e7eb"/>'
                   '<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x(t), x(t), top - 4, axis_y, x(t), axis_y + 14, _e(fmt_tick(t))))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">mean time [s]</text>'
               % (left + pw / 2, height - 6))
    lx = left
    for i, phase in enumerate(phases):
        out.append('<rect x="%.1f" y="8" width="12" height="12" rx="2" fill="%s"/>'
                   '<text x="%.1f" y="18">%s</text>'
                   % (lx, PHASE_COLORS[i % len(PHASE_COLORS)], lx + 16, _e(phase)))
        lx += 36 + 7 * len(phase)
    for r_index, (row, total) in enumerate(zip(rows, totals)):
        y = top + r_index * (bar + gap)
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s · c=%s</text>'
                   % (left - 6, y + bar - 5, _e(row["kind"]), row["concurrency"]))
        pos = 0.0
        for i, phase in enumerate(phases):
            cell = row["phases"].get(phase)
            if not cell or not cell["mean"]:
                continue
            tip = "%s c=%s %s: mean %s ± SD %s (N=%d)" % (
                row["kind"], row["concurrency"], phase, fmt(cell["mean"], "s"),
                fmt(cell["sd"], "s"), cell["n"])
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s">'
                       '<title>%s</title></rect>'
                       % (x(pos), y, max(x(pos + cell["mean"]) - x(pos), 0.5), bar,
                          PHASE_COLORS[i % len(PHASE_COLORS)], _e(tip)))
            pos += cell["mean"]
        out.append('<text x="%.1f" y="%.1f">%s</text>'
                   % (x(total) + 4, y + bar - 5, _e(fmt(total, "s"))))
    out.append("</svg>")
    return "".join(out)


def fmt_p(p):
    """A p-value for people: 3 significant digits, ``<0.0001`` below that."""
    if p is None:
        return NA
    if p < 0.0001:
        return "<0.0001"
    return "%.3g" % p


def _ratio_text(cell):
    """``×R [low, high]`` (Fieller), ``[unbounded]``, or the note when R is n/a."""
    if cell.get("ratio") is None:
        return _e(cell.get("ratio_note") or NA)
    text = "×%s" % fmt(cell["ratio"])
    if cell.get("ratio_ci_low") is not None:
        text += " <small>[%s, %s]</small>" % (fmt(cell["ratio_ci_low"]),
                                              fmt(cell["ratio_ci_high"]))
    elif cell.get("ratio_ci_unbounded"):
        text += ' <small title="%s">[unbounded]</small>' % _e(cell.get("ratio_note"))
    return text


def _mark(cell, alpha):
    """The significance mark: ``p=…`` (Holm-adjusted) when significant, else ``~``.

    ``~`` is followed by "N too small" when no outcome at these sample sizes could
    have reached p < alpha.
    """
    if cell.get("p_value") is None:
        return ""
    detail = "Mann–Whitney U (%s): p = %s, Holm-adjusted p = %s" % (
        "exact" if cell["test"] == stats.MWU_EXACT else "normal approximation",
        fmt_p(cell["p_value"]), fmt_p(cell["p_adjusted"]))
    if cell.get("test_note"):
        detail += "; " + cell["test_note"]
    if cell.get("significant"):
        adjusted = fmt_p(cell["p_adjusted"])
        label = "p" + adjusted if adjusted.startswith("<") else "p=" + adjusted
        return ' <span class=sig title="%s">%s</span>' % (_e(detail), _e(label))
    text = ' <span class=ns title="not significant after correction; %s">%s</span>' % (
        _e(detail), NOT_SIGNIFICANT)
    if cell["p_min"] >= alpha:
        text += " <small>N too small</small>"
    return text


def _cv_text(cell, unit=""):
    """The CV in percent (``unit`` after the number), flagged when high."""
    if cell.get("cv") is None:
        return NA
    text = "%.1f%s" % (100 * cell["cv"], unit)
    if cell.get("cv_high"):
        text += ' <span class=flag title="CV above %g %%: noisy">%s</span>' % (
            100 * stats.HIGH_CV, CV_FLAG)
    return text


def _ratio_class(cell, better):
    """Green/red when the difference is significant after correction."""
    r = cell.get("ratio")
    if not cell.get("significant") or r is None or better is None or r == 1:
        return "num ci"
    good = (r > 1) == (better == "higher")
    return "num ci better" if good else "num ci worse"


def _legend(data):
    """How to read the ratio cells: interval method, test, correction, CV flag."""
    methods = data["methods"]
    alpha = methods["alpha"]
    return (
        "<p class=note id=legend>Each cell: <b>×R</b> = mean of the kind ÷ mean of "
        "the baseline at the same concurrency c, with its %d %% <b>Fieller</b> "
        "confidence interval [low, high] (<i>unbounded</i> when the baseline mean is "
        "too uncertain to bound the ratio; never below 0 for non-negative samples). "
        "Then the <b>significance</b> of the difference: two-sided Mann–Whitney U "
        "test, p-values <b>Holm–Bonferroni</b> adjusted over all %d comparisons of "
        "this page; <span class=sig>p=…</span> gives the adjusted p of a significant "
        "difference (green better, red worse), <span class=ns>%s</span> means not "
        "significant at α = %g after correction, and <i>N too small</i> that no result "
        "could be significant with so few samples (2 vs 2: the smallest possible p is "
        "1/3; with equal N at least %d per side are needed). Below: the kind's mean ± "
        "SD, sample count N and CV, flagged <span class=flag>%s</span> above %g %%.</p>"
        % (round(100 * data["confidence"]), methods["comparisons"], NOT_SIGNIFICANT,
           alpha, seed_check.min_equal_n(alpha), CV_FLAG, 100 * methods["high_cv"]))


def _swatch(kind, colors):
    return '<span class="kind" style="background:%s"></span>%s' % (colors[kind], _e(kind))


def _headline_table(data, colors):
    rows = data["headlines"]
    if not rows:
        return "<p class=note>No headline metric (build, network wait, delete, reboot, " \
               "sysbench cpu/memory/fileio, netperf) in these tasks.</p>"
    kinds = data["kinds"]
    alpha = data["methods"]["alpha"]
    out = ['<table class="summary" id="summary-table"><thead><tr><th>comparison</th>'
           '<th>metric [unit]</th><th class=num>c</th>']
    out += ['<th class=num>%s</th>' % _swatch(k, colors) for k in kinds]
    out.append("</tr></thead><tbody>")
    for row in rows:
        better = row["direction"]
        hint = {"higher": " <small>(higher is better)</small>",
                "lower": " <small>(lower is better)</small>"}.get(better, "")
        out.append("<tr><td>%s</td><td>%s%s</td><td class=num>%s</td>"
                   % (_e(row["category"]), _e(row["label"]), hint, row["concurrency"]))
        for kind in kinds:
            cell = row["kinds"].get(kind)
            if cell is None:
                out.append("<td class=num>–</td>")
                continue
            mean = "%s ± %s" % (fmt(cell["mean"]), fmt(cell["sd"]))
            fails = (" <small>%d failed</small>" % cell["failures"]
                     if cell["failures"] else "")
            if kind == cell["baseline_kind"]:
                out.append("<td class=num><b>baseline</b><br><small>%s %s, N=%d, CV %s"
                           "</small>%s</td>" % (mean, _e(row["unit"]), cell["n"],
                                                _cv_text(cell, " %"), fails))
                continue
            vs = ""
            if cell["baseline_concurrency"] not in (None, row["concurrency"]):
                vs = "<br><small>vs %s at c=%s</small>" % (
                    _e(cell["baseline_kind"]), cell["baseline_concurrency"])
            out.append('<td class="%s">%s%s<br><small>%s %s, N=%d, CV %s</small>%s%s'
                       '</td>' % (_ratio_class(cell, better), _ratio_text(cell),
                                  _mark(cell, alpha), mean, _e(row["unit"]), cell["n"],
                                  _cv_text(cell, " %"), fails, vs))
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _reboot_table(data, colors):
    rows = data["reboot_paths"]
    if not rows:
        return ""
    paths = []
    for row in rows:
        for path in row["counts"]:
            if path not in paths:
                paths.append(path)
    out = ['<h2 id="reboot-paths">Reboot paths</h2><p class=note>Which way each reboot '
           'went, as the scenarios reported it. Soft reboots that the driver turned into '
           'hard ones are timed apart (<i>vmct.reboot_soft_fell_back_to_hard</i>, or '
           'metrics marked <i>fell back to hard</i>), never averaged with real soft '
           'reboots.</p>'
           '<table class="reboots tight"><thead><tr><th>kind</th><th class=num>c</th>']
    out += ["<th class=num>%s <small>[reboots]</small></th>" % _e(p.replace("_", " "))
            for p in paths]
    out.append("<th class=num>soft fell back <small>[%]</small></th></tr></thead><tbody>")
    for row in rows:
        out.append("<tr><td>%s</td><td class=num>%s</td>"
                   % (_swatch(row["kind"], colors), row["concurrency"]))
        out += ["<td class=num>%s</td>" % fmt(row["counts"].get(p, 0)) for p in paths]
        frac = row["fallback_fraction"]
        out.append("<td class=num>%s</td></tr>"
                   % (NA if frac is None else "%.1f %%" % (100 * frac)))
    out.append("</tbody></table>")
    return "".join(out)


def _warnings(data):
    """The emulation warnings, in a box at the top of the page."""
    warnings = data.get("warnings") or ()
    if not warnings:
        return ""
    return ('<div class="warnings" id="warnings" role="alert">%s</div>'
            % "".join("<p>Warning: %s.</p>" % _e(w["text"]) for w in warnings))


def _environment_cell(fact):
    values = fact["values"]
    if not values or [v["value"] for v in values] == [env_lib.NOT_RECORDED]:
        return '<td class="unknown">%s</td>' % env_lib.NOT_RECORDED
    if len(values) > 1:
        return ('<td class="mixed" title="iterations disagree">%s</td>'
                % _e(fact["text"]))
    return "<td>%s</td>" % _e(fact["text"])


def _environment_table(data, colors):
    """What produced each kind's numbers: one row per disclosed fact."""
    entries = data.get("environment") or ()
    if not entries:
        return ""
    out = ['<h2 id="environment">Environment per kind</h2><p class=note>What produced '
           'each kind\'s numbers, from the instance facts every benchmark iteration '
           'records. Where iterations disagree, every value is listed with the number of '
           'iterations that reported it; <i>%s</i>: the results do not say (older '
           'results, or no benchmark iteration of that kind).</p>' % env_lib.NOT_RECORDED,
           '<table class="env tight" id="environment-table"><thead><tr><th>fact</th>']
    for entry in entries:
        mark = ' <span class=emu>(emulated)</span>' if entry["emulated"] else ""
        out.append("<th>%s%s</th>" % (_swatch(entry["kind"], colors), mark))
    out.append('</tr></thead><tbody><tr><td>iterations with facts</td>')
    out += ["<td>%d</td>" % e["facts_tables"] for e in entries]
    out.append("</tr>")
    for index, (key, label) in enumerate(output.DISCLOSED_FACTS):
        out.append('<tr data-fact="%s"><td>%s</td>' % (_e(key), _e(label)))
        out += [_environment_cell(e["facts"][index]) for e in entries]
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


_VERDICT_CLASS = {seed_check.AGREES: "agrees", seed_check.DISAGREES: "disagrees",
                  seed_check.CANNOT_TELL: "cannot", seed_check.NO_DIRECTION: "nodir"}


def _seed_side(stats_row, unit):
    if not stats_row:
        return "<td class=num>–</td>"
    return "<td class=num>%s ± %s %s<br><small>N=%d</small></td>" % (
        fmt(stats_row["mean"]), fmt(stats_row["sd"]), _e(unit), stats_row["n"])


def _seed_ratio(check):
    if check.get("ratio") is None:
        return "<td class=num>%s</td>" % NA
    text = "×%s" % fmt(check["ratio"])
    if check.get("ratio_ci_low") is not None and check.get("ratio_ci_high") is not None:
        text += " <small>[%s, %s]</small>" % (fmt(check["ratio_ci_low"]),
                                              fmt(check["ratio_ci_high"]))
    elif check.get("ratio_ci_unbounded"):
        text += " <small>[unbounded]</small>"
    return '<td class="num ci">%s<br><small>%s</small></td>' % (
        text, _e(check.get("observed") or ""))


def _seed_kinds(check):
    """``docker vs kvm`` over ``container vs VM, c=1``."""
    if not check["candidate"]:
        return "%s vs %s" % (_e(check["candidate_role"]), _e(check["baseline_role"]))
    detail = "%s vs %s" % (check["candidate_role"], check["baseline_role"])
    if check["concurrency"] is not None:
        detail += ", c=%s" % check["concurrency"]
        if check["baseline_concurrency"] != check["concurrency"]:
            detail += " vs c=%s" % check["baseline_concurrency"]
    return "%s vs %s<br><small>%s</small>" % (_e(check["candidate"]),
                                              _e(check["baseline"]), _e(detail))


def _seed_row(check):
    p = NA
    if check.get("p_value") is not None:
        p = "%s<br><small>Holm %s</small>" % (fmt_p(check["p_value"]),
                                              fmt_p(check["p_adjusted"]))
    notes = "".join("<li>%s</li>" % _e(n) for n in check["notes"])
    return ('<tr data-seed="%s"><td><b>(%s)</b> %s<br><small>%s: %s</small></td>'
            "<td>%s</td><td>%s</td>%s%s%s<td class=num>%s</td>"
            '<td class="%s"><b>%s</b><br><small>%s</small>%s</td></tr>'
            % (_e(check["id"]), _e(check["id"]), _e(check["claim"]), _e(check["source"]),
               _e(check["published"]), _seed_kinds(check), _e(check["label"] or NA),
               _seed_side(check["candidate_stats"], check["unit"] or ""),
               _seed_side(check["baseline_stats"], check["unit"] or ""),
               _seed_ratio(check), p, _VERDICT_CLASS[check["verdict"]],
               _e(check["verdict"]), _e(check["reason"]),
               "<ul>%s</ul>" % notes if notes else ""))


def _seed_section(data):
    """Seed check: each published direction, agreed, disagreed or undecided."""
    seeds = data.get("seed_check")
    if not seeds:
        return ""
    roles = "; ".join("%s = %s (from %s)%s" % (
        r["kind"], r["role"] or "neither VM, container nor native", r["basis"],
        ", emulated" if r["emulated"] else "") for r in seeds["roles"])
    out = ['<h2 id="seed-check">Seed check: the published directions</h2>'
           '<p class=note id="seed-roles">Which kind plays which part: %s.</p>'
           '<p class=note><b>agrees</b>: the difference is significant (Mann–Whitney U, '
           'Holm-adjusted with the rest of this page, α = %g) and goes the published '
           'way; for "within 2–5 %%" the ratio\'s interval lies within ±%g %%. '
           '<b>disagrees</b>: significant the other way (or wholly outside the band). '
           '<b>cannot tell</b>: the reason is given. Ratios are candidate ÷ baseline '
           '(first kind ÷ second) with the page\'s %d %% Fieller interval.</p>'
           % (_e(roles), seeds["alpha"], 100 * seeds["band"],
              round(100 * data["confidence"])),
           '<table class="seeds tight" id="seed-check-table"><colgroup>'
           '<col style="width:16%"><col style="width:10%"><col style="width:14%">'
           '<col style="width:10%"><col style="width:10%"><col style="width:10%">'
           '<col style="width:7%"><col style="width:23%"></colgroup><thead><tr>'
           '<th>published direction</th><th>kinds</th><th>metric</th>'
           '<th class=num>first kind <small>mean ± SD</small></th>'
           '<th class=num>second kind <small>mean ± SD</small></th>'
           '<th class=num>ratio <small>[CI]</small></th><th class=num>p</th>'
           '<th>this run</th></tr></thead><tbody>']
    out += [_seed_row(check) for check in seeds["checks"]]
    out.append("</tbody></table>")
    return "".join(out)


_STAT_HEAD = ("<thead><tr><th>kind</th><th class=num>c</th><th class=num>N</th>"
              "<th class=num>fail</th><th class=num>mean <small>[%s]</small></th>"
              "<th class=num>SD</th><th class=num>CV <small>[%%]</small></th>"
              "<th class=num>min</th><th class=num>p50</th><th class=num>p90</th>"
              "<th class=num>p95</th><th class=num>p99</th><th class=num>max</th>"
              "<th class=num>%d %% CI of mean</th>"
              "<th class=num>ratio <small>[%d %% CI]</small> · test</th></tr></thead>")


def _metric_section(index, metric, rows, data, colors):
    unit = metric["unit"]
    by_kind = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    concurrencies = sorted({row["concurrency"] for row in rows})
    series = [(kind, [(r["concurrency"], r["mean"], r["sd"], r["n"]) for r in by_kind[kind]])
              for kind in data["kinds"] if kind in by_kind]
    out = ['<section class="metric" id="m%d"><h3>%s</h3>' % (index, _e(metric["label"]))]
    hint = {"higher": "higher is better", "lower": "lower is better"}.get(
        metric["direction"])
    note = "values in %s" % unit
    if hint:
        note += "; %s" % hint
    if metric["baseline_kind"]:
        note += "; ratios relative to %s" % metric["baseline_kind"]
    out.append("<p class=note>%s</p>" % _e(note))
    out.append(svg_mean_sd_chart(metric["label"], unit, series, concurrencies, colors))
    pct = round(100 * data["confidence"])
    alpha = data["methods"]["alpha"]
    out.append('<table class="stats tight"><caption>%s per kind and concurrency; all '
               'values in %s</caption>' % (_e(metric["label"]), _e(unit))
               + _STAT_HEAD % (_e(unit), pct, pct) + "<tbody>")
    for r in rows:
        ci = NA if r["ci_low"] is None else "%s – %s" % (fmt(r["ci_low"]), fmt(r["ci_high"]))
        if r["kind"] == r["baseline_kind"]:
            ratio = "<td class=num>baseline</td>"
        else:
            ratio = '<td class="%s">%s%s%s</td>' % (
                _ratio_class(r, metric["direction"]), _ratio_text(r), _mark(r, alpha),
                "" if r["baseline_concurrency"] in (None, r["concurrency"])
                else " <small>vs c=%s</small>" % r["baseline_concurrency"])
        out.append("<tr><td>%s</td><td class=num>%s</td><td class=num>%d</td>"
                   "<td class=num>%d</td>" % (_swatch(r["kind"], colors), r["concurrency"],
                                              r["n"], r["failures"]))
        out += ["<td class=num>%s</td>" % fmt(r[k]) for k in ("mean", "sd")]
        cv_class = "num cvhigh" if r["cv_high"] else "num"
        out.append('<td class="%s">%s</td>' % (cv_class, _cv_text(r)))
        out += ["<td class=num>%s</td>" % fmt(r[k])
                for k in ("min", "p50", "p90", "p95", "p99", "max")]
        out.append("<td class=\"num ci\">%s</td>%s</tr>" % (ci, ratio))
    out.append("</tbody></table></section>")
    return "".join(out)


def _page_head(data, generated_at):
    """From <!DOCTYPE> to the baseline line: title, tasks, stamp, warnings."""
    title = data.get("title") or " vs ".join(data["kinds"]) or "no data"
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
           '<meta name="viewport" content="width=device-width, initial-scale=1">'
           '<title>rally-vmct comparison: %s</title><style>%s</style></head><body><main>'
           % (_e(title), _CSS)]
    out.append("<h1>Instance kinds compared: %s</h1>" % _e(title))
    tasks = ", ".join("%s%s" % (t["uuid"], " (%s)" % t["title"] if t.get("title") else "")
                      for t in data["tasks"])
    out.append("<p class=meta>Tasks: %s. %s</p>" % (_e(tasks or "none"), _e(generated_at)))
    out.append(_warnings(data))
    out.append("<p class=meta>Baseline kind: <b>%s</b> (metrics it has no samples of use "
               "the first kind that has them). Intervals are %d %% confidence intervals."
               "</p>" % (_e(data["baseline"] or NA), round(100 * data["confidence"])))
    return "".join(out)


def _method(data):
    return (
        '<h2 id="method">Method</h2><p class=note>Groups are kind × concurrency × '
        'metric over every iteration of the exported tasks; sysbench results are also '
        'grouped by the sysbench dialect (and run mode) their iteration recorded, and '
        'only results of comparable dialects and workload parameters get a ratio. '
        'Atomic actions (nested '
        'ones too) are in seconds, one sample per occurrence; workload metrics come '
        'from the scenarios\' charts with the unit in their title. N counts '
        'successful samples; <i>fail</i> counts failed actions, non-numeric values and '
        'failed iterations that did not produce the metric. SD is the sample standard '
        'deviation (n−1), CV = SD/|mean|, flagged %s above %g %%. Percentiles '
        'interpolate linearly between ranks (numpy\'s default, as in Rally\'s '
        'report). The CI of the mean uses Student\'s t with n−1 degrees of freedom '
        '(its lower bound raised to 0 when no value is negative). '
        'Ratio interval (Fieller): every ratio ρ for which Welch\'s t-test of '
        'mean_a − ρ·mean_b = 0 does not reject, i.e. (mean_a − ρ·mean_b)² ≤ '
        't²·(se_a² + ρ²·se_b²) with se = SD/√N and t at the Welch–Satterthwaite '
        'degrees of freedom of se_a² + R²·se_b²; unbounded when the baseline mean is '
        'not significantly different from 0; intersected with [0, ∞) when no value '
        'is negative. Tests: two-sided Mann–Whitney U of each kind against its '
        'baseline (exact when there are no ties and both N ≤ %d, else the normal '
        'approximation with tie correction and continuity correction); Welch\'s '
        't-test p is in the CSV and JSON for reference. The U p-values of all %d '
        'comparisons (the seed check\'s own included) are Holm–Bonferroni adjusted '
        'together. n/a means the figure '
        'cannot be computed (fewer than 2 samples, zero baseline).</p>'
        % (CV_FLAG, 100 * stats.HIGH_CV, stats.MWU_EXACT_LIMIT,
           data["methods"]["comparisons"]))


def _metrics_part(data, colors):
    rows_of = {}
    for row in data["groups"]:
        rows_of.setdefault(seed_check.metric_key(row), []).append(row)
    out = ['<h2 id="metrics">Per metric</h2><nav><ul>']
    for i, metric in enumerate(data["metrics"]):
        out.append('<li><a href="#m%d">%s</a></li>' % (i, _e(metric["label"])))
    out.append("</ul></nav>")
    for i, metric in enumerate(data["metrics"]):
        rows = rows_of.get(seed_check.metric_key(metric), [])
        out.append(_metric_section(i, metric, rows, data, colors))
    return "".join(out)


def render_html(data, generated_at=""):
    """The comparison as one self-contained HTML page."""
    colors = kind_colors(data["kinds"])
    out = [_page_head(data, generated_at)]
    if not data["groups"]:
        out.append("<p class=note><b>No rally-vmct workload in these tasks</b> (none has "
                   "a kind argument, a VMCT scenario or a rally-vmct chart).</p>")
    out.append(_environment_table(data, colors))
    out.append('<h2 id="summary">Summary: ratios to the baseline</h2>')
    out.append(_legend(data))
    out.append(_headline_table(data, colors))
    out.append(_seed_section(data))
    lifecycle = svg_lifecycle_chart(data["lifecycle"])
    if lifecycle:
        out.append('<h2 id="lifecycle">Lifecycle breakdown</h2><p class=note>Mean time '
                   'of each phase (%s) per kind and concurrency, stacked; hover a bar '
                   'for its SD and N.</p>' % _e(" / ".join(data["lifecycle"]["phases"])))
        out.append(lifecycle)
    out.append(_reboot_table(data, colors))
    out.append(_metrics_part(data, colors))
    if data["skipped_workloads"]:
        out.append('<h2 id="skipped">Skipped workloads</h2><ul>')
        out += ["<li>%s in task %s: %s</li>"
                % (_e(w["scenario"]), _e(w["task"]), _e(w["reason"]))
                for w in data["skipped_workloads"]]
        out.append("</ul>")
    out.append(_method(data))
    out.append("</main></body></html>")
    return "".join(out)


def render_csv(data):
    """One row per kind x concurrency x metric group, then reboot paths and facts.

    Reboot path rows have source ``reboot_path``, metric = the path, unit
    ``reboots`` and the count in ``n``. Facts rows have source ``fact``, group = the
    fact's label, metric = its key, the value in ``value`` and in ``n`` how many
    facts tables (iterations) of the kind reported it: one row per distinct value.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    columns = cdata.CSV_COLUMNS
    writer.writerow(columns)
    for row in data["groups"]:
        writer.writerow([_csv_value(row.get(k)) for k in columns])
    for row in data["reboot_paths"]:
        for path, count in row["counts"].items():
            line = {"kind": row["kind"], "concurrency": row["concurrency"],
                    "source": "reboot_path", "group": "reboot path", "metric": path,
                    "unit": "reboots", "n": count}
            writer.writerow([_csv_value(line.get(k)) for k in columns])
    for entry in data.get("environment") or ():
        for fact in entry["facts"]:
            values = fact["values"] or [{"value": env_lib.NOT_RECORDED, "count": 0}]
            for value in values:
                line = {"kind": entry["kind"], "source": "fact", "group": fact["label"],
                        "metric": fact["key"], "n": value["count"],
                        "value": value["value"]}
                writer.writerow([_csv_value(line.get(k)) for k in columns])
    return buf.getvalue()


def _csv_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return value


def render_json(data):
    return json.dumps(data, indent=1, sort_keys=False)
