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
"""What the comparison page shows, ready for its templates.

:func:`page` turns a comparison (:func:`.analyse.compare`) into the
context of ``templates/comparison.html``: numbers formatted
(:mod:`.formatting`), cells classified (better, worse, noisy, mixed, which
verdict) and the charts' geometry (:mod:`.comparison_charts`). The templates
lay it out and escape it. Pure Python, no Rally import.
"""

from rally_vmct.task.exporters.comparison import charts
from rally_vmct.task.exporters.comparison import environment as env_lib
from rally_vmct.task.exporters.comparison import formatting
from rally_vmct.task.exporters.comparison import seed_check
from rally_vmct.task import output
from rally_vmct import inference
from rally_vmct import stats

NA = formatting.NA
NOT_SIGNIFICANT = "~"
CV_FLAG = "!"
HIGH_CV_PERCENT = "%g" % (100 * stats.HIGH_CV)
QUANTILES = ("min", "p50", "p90", "p95", "p99", "max")
_HINTS = {"higher": "higher is better", "lower": "lower is better"}
_VERDICT_CLASS = {seed_check.AGREES: "agrees", seed_check.DISAGREES: "disagrees",
                  seed_check.CANNOT_TELL: "cannot", seed_check.NO_DIRECTION: "nodir"}

fmt = formatting.fmt


def page(data, generated_at=""):
    """The context of ``comparison.html`` for one comparison."""
    colors = charts.kind_colors(data["kinds"])
    tasks = ", ".join("%s%s" % (t["uuid"], " (%s)" % t["title"] if t.get("title") else "")
                      for t in data["tasks"])
    return {"title": data.get("title") or " vs ".join(data["kinds"]) or "no data",
            "tasks": tasks or "none", "generated_at": generated_at,
            "baseline": data["baseline"] or NA, "pct": round(100 * data["confidence"]),
            "warnings": [w["text"] for w in data.get("warnings") or ()],
            "empty": not data["groups"], "kinds": data["kinds"], "colors": colors,
            "environment": environment(data.get("environment")),
            "legend": legend(data), "headlines": headlines(data), "seeds": seeds(data),
            "host_cost": summary_rows(data.get("host_cost") or (), data),
            "density": density(data.get("density"), colors),
            "lifecycle": lifecycle(data["lifecycle"]), "scale": scale(data, colors),
            "reboots": reboot_paths(data["reboot_paths"]),
            "metrics": metric_sections(data, colors),
            "skipped": data["skipped_workloads"], "method": method(data)}


# -- cells --------------------------------------------------------------------

def ratio(cell):
    """``×R [low, high]`` (the rule's interval), ``[unbounded]`` with why, or why no R."""
    if cell.get("ratio") is None:
        return {"value": None, "note": cell.get("ratio_note") or NA}
    low = cell.get("ratio_ci_low")
    gap = cell.get("ratio_ci_excludes_low")
    return {"value": fmt(cell["ratio"]), "low": None if low is None else fmt(low),
            "high": fmt(cell.get("ratio_ci_high")),
            "unbounded": bool(cell.get("ratio_ci_unbounded")),
            "excludes": None if gap is None else (
                fmt(gap), fmt(cell.get("ratio_ci_excludes_high"))),
            "title": cell.get("ratio_note")}


def _robustness(cell):
    if cell.get("mwu_p_value") is None:
        return ""
    exact = cell.get("mwu_test") == stats.MWU_EXACT
    text = "; robustness note, not the verdict: Mann–Whitney U (%s) p = %s" % (
        ("exact, with ties" if cell.get("mwu_note") else "exact") if exact
        else "normal approximation", formatting.fmt_p(cell["mwu_p_value"]))
    if cell.get("mwu_p_min") is not None and cell["mwu_p_min"] >= cell["level_alpha"]:
        text += " (its smallest possible p here is %s)" % formatting.fmt_p(cell["mwu_p_min"])
    return text


def significance(cell, alpha):
    """The mark of a compared cell, from its interval; None without a test.

    ``label`` gives the (uncorrected) p of a difference whose interval excludes 1;
    a cell without an interval is ``too_small``; ``detail`` names the rule, the
    level and, when the interval contains 1, the ratios this N could detect.
    """
    if cell.get("p_value") is None:
        if cell.get("ratio") is None or cell.get("ratio_ci_unbounded"):
            return None
        return {"significant": False, "too_small": True, "label": None,
                "detail": "no verdict: %s" % (cell.get("ratio_note") or "N too small")}
    cell = dict(cell, level_alpha=alpha)
    pct = "%g %%" % (100 * (1 - alpha))
    rule = inference.RULE_TEXT.get(cell.get("rule"), "")
    significant = bool(cell.get("significant"))
    p = formatting.fmt_p(cell["p_value"])
    if cell.get("replicate") == inference.REPLICATE_RUN:
        rule += " (%d vs %d runs, each one value)" % (cell["runs"], cell["baseline_runs"])
    elif cell.get("replicate") == inference.REPLICATE_ITERATION:
        rule += (" over the iterations: the interval covers only the variation within a "
                 "run, not between runs")
    if significant and cell.get("ratio_ci_low") is None:
        detail = ("%s: the %s set is two half-lines, below ×%s and above ×%s, and the "
                  "ratios between them, 1 among them, are excluded: p = %s (uncorrected, "
                  "α = %g)" % (rule, pct, fmt(cell["ratio_ci_excludes_low"]),
                               fmt(cell["ratio_ci_excludes_high"]), p, alpha))
    elif significant:
        detail = "%s: the %s interval excludes 1, p = %s (uncorrected, α = %g)" % (
            rule, pct, p, alpha)
    elif cell.get("ratio_ci_low") is None:
        detail = "%s: no interval (%s)" % (rule, cell.get("ratio_note") or "N too small")
    else:
        detail = "%s: the %s interval contains 1, p = %s (uncorrected, α = %g)" % (
            rule, pct, p, alpha)
        if cell.get("detectable_low") is not None:
            detail += ("; at this N and spread the test detects (80 %% power) only "
                       "ratios below ×%s or above ×%s" % (fmt(cell["detectable_low"]),
                                                          fmt(cell["detectable_high"])))
    detail += _robustness(cell)
    return {"significant": significant, "detail": detail,
            "label": "p" + p if p.startswith("<") else "p=" + p,
            "too_small": not significant and cell.get("ratio_ci_low") is None
            and not cell.get("ratio_ci_unbounded")}


def cv(cell):
    """The CV in percent, one decimal (None: n/a), and whether it is flagged."""
    value = cell.get("cv")
    return {"text": None if value is None else "%.1f" % (100 * value),
            "high": bool(cell.get("cv_high"))}


def ratio_class(cell, better):
    """Green/red when the interval excludes 1."""
    r = cell.get("ratio")
    if not cell.get("significant") or r is None or better is None or r == 1:
        return "num ci"
    good = (r > 1) == (better == "higher")
    return "num ci better" if good else "num ci worse"


def _compared(cell, better, alpha):
    return {"css": ratio_class(cell, better), "ratio": ratio(cell),
            "mark": significance(cell, alpha)}


# -- sections -----------------------------------------------------------------

def environment(entries):
    """One row per disclosed fact, one cell per kind: unknown, mixed or plain."""
    if not entries:
        return None
    return {"kinds": [{"kind": e["kind"], "emulated": e["emulated"]} for e in entries],
            "tables": [e["facts_tables"] for e in entries],
            "facts": [{"key": key, "label": label,
                       "cells": [_environment_cell(e["facts"][index]) for e in entries]}
                      for index, (key, label) in enumerate(output.DISCLOSED_FACTS)]}


def _environment_cell(fact):
    values = fact["values"]
    if not values or [v["value"] for v in values] == [env_lib.NOT_RECORDED]:
        return {"css": "unknown", "text": env_lib.NOT_RECORDED}
    return {"css": "mixed" if len(values) > 1 else None, "text": fact["text"]}


def legend(data):
    """The figures of the summary's legend: level, comparisons, expected false marks."""
    methods = data["methods"]
    return {"pct": round(100 * data["confidence"]), "comparisons": methods["comparisons"],
            "alpha": "%g" % methods["alpha"],
            "expected_false": "%.1f" % methods["expected_false_marks"],
            "high_cv": "%g" % (100 * methods["high_cv"]),
            "runs": methods.get("runs", 1),
            "over_runs": methods.get("comparisons_over_runs", 0)}


def headlines(data):
    """The summary table's rows: a cell per kind (None where it has no group)."""
    return summary_rows(data["headlines"], data)


def summary_rows(entries, data):
    """Rows of a summary-like table (headlines, host cost): a cell per kind or None."""
    alpha = data["methods"]["alpha"]
    rows = []
    for row in entries:
        rows.append({"category": row["category"], "label": row["label"],
                     "hint": _HINTS.get(row["direction"]), "unit": row["unit"],
                     "concurrency": row["concurrency"],
                     "cells": [_headline_cell(row, kind, alpha) for kind in data["kinds"]]})
    return rows


def _headline_cell(row, kind, alpha):
    cell = row["kinds"].get(kind)
    if cell is None:
        return None
    out = _compared(cell, row["direction"], alpha)
    out.update(is_baseline=kind == cell["baseline_kind"],
               mean="%s ± %s" % (fmt(cell["mean"]), fmt(cell["sd"])), n=cell["n"],
               cv=cv(cell), failures=cell["failures"], vs=None, runs=cell.get("runs"))
    if cell["baseline_concurrency"] not in (None, row["concurrency"]):
        out["vs"] = {"kind": cell["baseline_kind"],
                     "concurrency": cell["baseline_concurrency"]}
    return out


def seeds(data):
    """The seed check: who plays which role, and a row per published direction."""
    seeds = data.get("seed_check")
    if not seeds:
        return None
    roles = "; ".join("%s = %s (from %s)%s" % (
        r["kind"], r["role"] or "neither VM, container nor native", r["basis"],
        ", emulated" if r["emulated"] else "") for r in seeds["roles"])
    return {"roles": roles, "alpha": "%g" % seeds["alpha"],
            "band": "%g" % (100 * seeds["band"]), "family": seeds.get("family_size"),
            "checks": [_seed_row(check) for check in seeds["checks"]]}


def _seed_row(check):
    unit = check["unit"] or ""
    p = None
    if check.get("p_decision") is not None and check.get("family_level") is not None:
        p = {"value": formatting.fmt_p(check["p_decision"]),
             "level": "%.3g" % check["family_level"],
             "pct": "%.4g" % (100 * (1 - check["family_level"]))}
    row = {key: check[key] for key in ("id", "claim", "source", "published", "verdict",
                                       "reason", "notes")}
    row.update(_seed_kinds(check), label=check["label"] or NA, p=p,
               sides=[_seed_side(check["candidate_stats"], unit),
                      _seed_side(check["baseline_stats"], unit)],
               ratio=_seed_ratio(check), css=_VERDICT_CLASS[check["verdict"]])
    return row


def _seed_kinds(check):
    """``docker vs kvm`` over ``container vs VM, c=1`` (roles only, kinds missing)."""
    if not check["candidate"]:
        return {"first": check["candidate_role"], "second": check["baseline_role"],
                "pair": None}
    pair = "%s vs %s" % (check["candidate_role"], check["baseline_role"])
    if check["concurrency"] is not None:
        pair += ", c=%s" % check["concurrency"]
        if check["baseline_concurrency"] != check["concurrency"]:
            pair += " vs c=%s" % check["baseline_concurrency"]
    return {"first": check["candidate"], "second": check["baseline"], "pair": pair}


def _seed_side(row, unit):
    if not row:
        return None
    return {"mean": fmt(row["mean"]), "sd": fmt(row["sd"]), "unit": unit, "n": row["n"]}


def _seed_ratio(check):
    if check.get("ratio") is None:
        return None
    low, high = check.get("ratio_ci_low"), check.get("ratio_ci_high")
    bounded = low is not None and high is not None
    return {"value": fmt(check["ratio"]), "low": fmt(low) if bounded else None,
            "high": fmt(high), "unbounded": bool(check.get("ratio_ci_unbounded")),
            "title": None, "observed": check.get("observed") or ""}


def lifecycle(data):
    """The lifecycle breakdown: its phases and chart; None without phases."""
    chart = charts.lifecycle(data)
    if chart is None:
        return None
    return {"phases": " / ".join(data["phases"]), "chart": chart}


def scale(data, colors):
    """The Scale section: per lifecycle phase a quantiles chart and table; None if none.

    A quantile's interval is written ``[low, high]``; a bound N is too small for
    says so, with the N it needs in its tooltip.
    """
    phases = data.get("scale")
    if not phases:
        return None
    pct = round(100 * data["confidence"])
    min_n = data["methods"]["quantile_interval_min_n"]
    fields = [style[0] for style in charts.QUANTILE_STYLES]
    needs = ", ".join("%s: %d / %d" % (f, min_n[f]["low"], min_n[f]["high"])
                      for f in fields)
    return {"pct": pct, "fields": fields, "needs": needs,
            "phases": [_scale_phase(index, phase, colors, pct, min_n, fields)
                       for index, phase in enumerate(phases)]}


def _scale_phase(index, phase, colors, pct, min_n, fields):
    series = [(entry["kind"], entry["levels"]) for entry in phase["kinds"]]
    return {"id": "scale-%d" % index, "label": phase["label"], "phase": phase["phase"],
            "unit": phase["unit"],
            "chart": charts.quantiles(phase["label"], phase["unit"], series, colors, pct),
            "rows": [{"kind": kind, "concurrency": level["concurrency"], "n": level["n"],
                      "failures": level["failures"],
                      "cells": [_quantile_cell(level, field, pct, min_n[field])
                                for field in fields]}
                     for kind, levels in series for level in levels]}


def _quantile_cell(level, field, pct, min_n):
    """A quantile and its interval's bounds (None: N too small, ``why`` says for what)."""
    cell = {"value": fmt(level[field]), "n": level["n"]}
    for side, word in (("low", "lower"), ("high", "upper")):
        value = level["%s_ci_%s" % (field, side)]
        cell[side] = None if value is None else fmt(value)
        cell[side + "_why"] = None if value is not None else (
            "a %d %% %s bound of %s needs N ≥ %d (here N = %d)"
            % (pct, word, field, min_n[side], level["n"]))
    return cell


def density(data, colors):
    """The density section: per curve a mean ± SD chart and table; the limits; None if none."""
    if not data or not (data["curves"] or data["limits"]):
        return None
    return {"curves": [_density_curve(index, curve, colors)
                       for index, curve in enumerate(data["curves"])],
            "limits": [{"kind": e["kind"], "iterations": e["iterations"],
                        "limits": ", ".join("%s: %d" % item for item in e["limits"].items()),
                        "reasons": ["%s (%d×)" % item for item in e["reasons"].items()]}
                       for e in data["limits"]]}


def _density_curve(index, curve, colors):
    series = [(e["kind"], [(p["x"], p["mean"], p["sd"], p["n"]) for p in e["points"]])
              for e in curve["kinds"]]
    xs = sorted({p["x"] for e in curve["kinds"] for p in e["points"]})
    chart = charts.mean_sd(curve["label"], curve["unit"], series, xs, colors, curve["x"])
    rows = [{"kind": e["kind"], "x": p["x"], "n": p["n"],
             "mean": "%s ± %s" % (fmt(p["mean"]), fmt(p["sd"])),
             "ci": NA if p["ci_low"] is None else "%s – %s" % (fmt(p["ci_low"]),
                                                               fmt(p["ci_high"])),
             "ratio": None if p["baseline_kind"] == e["kind"] else dict(
                 ratio(p), vs=p["baseline_kind"])}
            for e in curve["kinds"] for p in e["points"]]
    return {"id": "density-%d" % index, "label": curve["label"], "unit": curve["unit"],
            "x": curve["x"], "chart": chart, "rows": rows}


def reboot_paths(rows):
    """Reboot counts per path (every path any row has) and the fallback share."""
    if not rows:
        return None
    paths = []
    for row in rows:
        paths += [path for path in row["counts"] if path not in paths]
    return {"paths": [path.replace("_", " ") for path in paths],
            "rows": [{"kind": row["kind"], "concurrency": row["concurrency"],
                      "counts": [fmt(row["counts"].get(path, 0)) for path in paths],
                      "fallback": (NA if row["fallback_fraction"] is None
                                   else "%.1f %%" % (100 * row["fallback_fraction"]))}
                     for row in rows]}


def metric_sections(data, colors):
    """A section per metric: its chart and its groups' statistics."""
    rows_of = {}
    for row in data["groups"]:
        rows_of.setdefault(seed_check.metric_key(row), []).append(row)
    return [_metric_section(index, metric, rows_of.get(seed_check.metric_key(metric), []),
                            data, colors)
            for index, metric in enumerate(data["metrics"])]


def _metric_section(index, metric, rows, data, colors):
    by_kind = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    series = [(kind, [(r["concurrency"], r["mean"], r["sd"], r["n"]) for r in by_kind[kind]])
              for kind in data["kinds"] if kind in by_kind]
    note = "values in %s" % metric["unit"]
    if _HINTS.get(metric["direction"]):
        note += "; %s" % _HINTS[metric["direction"]]
    if metric["baseline_kind"]:
        note += "; ratios relative to %s" % metric["baseline_kind"]
    chart = charts.mean_sd(metric["label"], metric["unit"], series,
                           sorted({row["concurrency"] for row in rows}), colors)
    return {"index": index, "label": metric["label"], "unit": metric["unit"], "note": note,
            "chart": chart, "rows": [_stat_row(row, metric["direction"],
                                               data["methods"]["alpha"]) for row in rows]}


def _stat_row(r, better, alpha):
    """A group's statistics; ``ratio`` None for the baseline's own row."""
    row = {key: r[key] for key in ("kind", "concurrency", "n", "failures")}
    row.update(mean=fmt(r["mean"]), sd=fmt(r["sd"]), cv=cv(r),
               quantiles=[fmt(r[key]) for key in QUANTILES], ratio=None,
               ci=(NA if r["ci_low"] is None
                   else "%s – %s" % (fmt(r["ci_low"]), fmt(r["ci_high"]))))
    if r["kind"] != r["baseline_kind"]:
        row["ratio"] = _compared(r, better, alpha)
        row["ratio"]["vs"] = (None if r["baseline_concurrency"] in (None, r["concurrency"])
                              else r["baseline_concurrency"])
    return row


def method(data):
    """The figures of the method section."""
    methods = data["methods"]
    return {"high_cv": HIGH_CV_PERCENT, "exact_limit": stats.MWU_EXACT_LIMIT,
            "exact_ties_limit": stats.MWU_EXACT_TIES_LIMIT,
            "comparisons": methods["comparisons"], "alpha": "%g" % methods["alpha"],
            "expected_false": "%.1f" % methods["expected_false_marks"],
            "power": "%g" % (100 * stats.DEFAULT_POWER)}
