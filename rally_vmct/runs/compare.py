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
"""Compare a run with a baseline run: regressed, improved or the same, per metric.

    vmct-compare-runs BASELINE.json CANDIDATE.json [--tolerance 0.05] [--alpha 0.05]
                      [--all] [--json]

Both files are ``vmct-comparison`` JSON exports (``rally task export UUID --type
vmct-comparison-json --to FILE.json``, or the ``.json`` next to the HTML page). For
every metric that both runs measured for the same kind, concurrency and sysbench
dialect (lifecycle phases by default, every group with ``--all``), the candidate run
is compared with the baseline run by the comparison page's one rule
(:func:`rally_vmct.inference.compare`: Welch's t on log values, Hsu's df):
the ratio candidate / baseline of geometric means and its interval.

* **regressed**: the interval lies wholly beyond the tolerance on the worse side
  (slower for times, lower for rates: e.g. wholly above 1.05 for a duration);
* **improved**: wholly beyond it on the better side;
* **same**: two one-sided tests, the ``1 - 2 alpha`` interval within ``1 -/+
  tolerance`` (uncorrected: a claim of sameness cannot fail a gate);
* **cannot tell**: none of these; the line says what the interval was.

Regressed and improved are decided as one family over the compared metrics, Holm at
``alpha``, so the chance that a gate fails on a run no worse than its baseline is at
most ``alpha`` whatever the number of metrics; each line prints the level its
interval was taken at. The exit status is 1 when a metric regressed, 0 otherwise,
2 on bad input. Pure Python (no Rally import): usable on a machine without Rally.
"""

import argparse
import collections
import json
import sys

from rally_vmct import inference
from rally_vmct import stats

REGRESSED, IMPROVED, SAME, CANNOT_TELL = "regressed", "improved", "same", "cannot tell"
KEY_FIELDS = ("kind", "concurrency", "source", "group", "metric", "unit", "dialect",
              "sysbench_mode")
# atomic actions of the benchmark workloads themselves, not lifecycle phases
WORKLOAD_PREFIXES = ("vmct.sysbench_", "vmct.netperf_")
DEFAULT_TOLERANCE = 0.05
DEFAULT_ALPHA = 0.05
EXIT_REGRESSED = 1
EXIT_BAD_INPUT = 2

Run = collections.namedtuple("Run", ["path", "groups", "directions", "tasks"])


class BadInput(ValueError):
    """A file is not a vmct-comparison JSON export (the message says what to do)."""


def load(path):
    """A :data:`Run` of a vmct-comparison JSON export; BadInput naming the fix."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput("cannot read %s as JSON: %s" % (path, e))
    if not isinstance(data, dict) or data.get("format") != "vmct-comparison":
        raise BadInput("%s is not a vmct-comparison JSON export: make one with "
                       "'rally task export UUID --type vmct-comparison-json --to "
                       "FILE.json'" % path)
    directions = {(m["source"], m["group"], m["metric"], m["unit"], m.get("dialect"),
                   m.get("sysbench_mode")): m.get("direction")
                  for m in data.get("metrics", ())}
    groups = {tuple(g.get(k) for k in KEY_FIELDS): g for g in data.get("groups", ())
              if g.get("n")}
    return Run(path, groups, directions, [t.get("uuid") for t in data.get("tasks", ())])


def is_lifecycle(key):
    source, metric = key[2], key[4]
    return source == "atomic" and not str(metric).startswith(WORKLOAD_PREFIXES)


def _sample(group):
    summary = stats.Summary(group["n"], group["mean"], group.get("sd"), group.get("cv"),
                            group.get("min"), group.get("max"), None, None, None, None,
                            None, None, None)
    logs = None
    if group.get("log_mean") is not None and (group.get("log_sd") is not None
                                              or group["n"] < 2):
        logs = stats.LogMoments(group["n"], group["log_mean"], group.get("log_sd"))
    return summary, logs


def _outside_p(result, tolerance):
    """p of "the ratio is outside 1 -/+ tolerance" (the family's p of a metric)."""
    if result.get("rule") == inference.RULE_LOG and result.get("ratio_ci_low") is not None:
        _, _, p_out, _ = inference.band_decision(result, tolerance, DEFAULT_ALPHA)
        return p_out
    return result.get("p_value")


def _worse(ratio_low, ratio_high, direction, tolerance):
    """``(worse, better)``: the interval wholly beyond the tolerance on either side."""
    above = ratio_low > 1 + tolerance
    below = ratio_high < 1 - tolerance
    if direction == "higher":
        return below, above
    return above, below


def compare(baseline, candidate, tolerance=DEFAULT_TOLERANCE, alpha=DEFAULT_ALPHA,
            everything=False):
    """``[row dict]``: a verdict per metric both runs have (see the module doc)."""
    keys = sorted((k for k in set(baseline.groups) & set(candidate.groups)
                   if everything or is_lifecycle(k)), key=str)
    rows = []
    for key in keys:
        cand, base = _sample(candidate.groups[key]), _sample(baseline.groups[key])
        first = inference.compare(cand, base, alpha)
        rows.append({"key": key, "direction": baseline.directions.get(key[2:]),
                     "baseline": base[0], "candidate": cand[0],
                     "p": _outside_p(first, tolerance), "first": first})
    decisions = stats.holm_levels([r["p"] for r in rows], alpha)
    for row, decision in zip(rows, decisions):
        level = decision[1] if decision else alpha
        result = inference.compare(_sample(candidate.groups[row["key"]]),
                                   _sample(baseline.groups[row["key"]]), level)
        row.update(level=level, result=result)
        row["verdict"], row["why"] = _verdict(row, result, decision, tolerance, alpha)
    return rows


def _verdict(row, result, decision, tolerance, alpha):
    if result.get("ratio") is None:
        return CANNOT_TELL, "no ratio: %s" % (result.get("ratio_note") or "no data")
    if result.get("ratio_ci_low") is None:
        return CANNOT_TELL, "no interval: %s" % (result.get("ratio_note") or "N < 2")
    if row["direction"] not in ("higher", "lower"):
        return CANNOT_TELL, "the unit %r says nothing of better or worse" % row["key"][5]
    low, high = result["ratio_ci_low"], result["ratio_ci_high"]
    worse, better = _worse(low, high, row["direction"], tolerance)
    pct = "%.4g %%" % (100 * (1 - row["level"]))
    if decision and decision[0] and worse:
        return REGRESSED, "the %s interval lies beyond %s (Holm)" % (
            pct, "×%g" % ((1 + tolerance) if row["direction"] != "higher"
                          else (1 - tolerance)))
    if decision and decision[0] and better:
        return IMPROVED, "the %s interval lies beyond %s (Holm)" % (
            pct, "×%g" % ((1 - tolerance) if row["direction"] != "higher"
                          else (1 + tolerance)))
    decision_same, _, _, tost = inference.band_decision(row["first"], tolerance, alpha)
    if decision_same == "equivalent":
        return SAME, "TOST: the %g %% interval [%.4g, %.4g] lies within ±%g %%" % (
            100 * (1 - 2 * alpha), tost[0], tost[1], 100 * tolerance)
    return CANNOT_TELL, "the %s interval is neither within ±%g %% nor beyond it" % (
        pct, 100 * tolerance)


def _fmt(value):
    return "-" if value is None else "%.4g" % value


def render(rows, tolerance, alpha):
    """The lines the CLI prints, the last one a count per verdict."""
    lines = []
    for row in rows:
        kind, concurrency, _, _, metric, unit = row["key"][:6]
        r = row["result"]
        interval = ("[%s, %s]" % (_fmt(r["ratio_ci_low"]), _fmt(r["ratio_ci_high"]))
                    if r.get("ratio_ci_low") is not None else "[no interval]")
        lines.append("%-11s %-9s c=%-3s %-30s baseline N=%d %s  candidate N=%d %s  "
                     "×%s %s at %.4g %%: %s" % (
                         row["verdict"].upper() if row["verdict"] == REGRESSED
                         else row["verdict"], kind, concurrency, "%s [%s]" % (metric, unit),
                         row["baseline"].n, _fmt(row["baseline"].mean), row["candidate"].n,
                         _fmt(row["candidate"].mean), _fmt(r.get("ratio")), interval,
                         100 * (1 - row["level"]), row["why"]))
    counts = collections.Counter(row["verdict"] for row in rows)
    lines.append("%d metrics compared (rule: %s; tolerance ±%g %%; regressed/improved: "
                 "Holm over the %d metrics at α = %g; same: TOST at α = %g): %s" % (
                     len(rows), inference.RULE_TEXT[inference.RULE_LOG], 100 * tolerance,
                     len(rows), alpha, alpha,
                     ", ".join("%d %s" % (counts[v], v)
                               for v in (REGRESSED, IMPROVED, SAME, CANNOT_TELL))))
    return lines


def _json_rows(rows):
    out = []
    for row in rows:
        entry = dict(zip(KEY_FIELDS, row["key"]))
        entry.update(verdict=row["verdict"], why=row["why"], level=row["level"],
                     direction=row["direction"], baseline_n=row["baseline"].n,
                     candidate_n=row["candidate"].n)
        entry.update({k: row["result"].get(k) for k in inference.FIELDS})
        out.append(entry)
    return out


def _fraction(text):
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("must be a number in (0, 1), e.g. 0.05; got %s"
                                         % text)
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="vmct-compare-runs",
        description="Compare a rally-vmct run with a baseline run: regressed, improved "
                    "or the same, per metric; exit 1 on a regression.")
    parser.add_argument("baseline", help="vmct-comparison JSON export of the baseline run")
    parser.add_argument("candidate", help="vmct-comparison JSON export of the new run")
    parser.add_argument("--tolerance", type=_fraction, default=DEFAULT_TOLERANCE,
                        help="relative change that counts (default 0.05: ±5 %%)")
    parser.add_argument("--alpha", type=_fraction, default=DEFAULT_ALPHA,
                        help="family-wise error rate of the regressions (default 0.05)")
    parser.add_argument("--all", action="store_true",
                        help="every metric, not only the lifecycle phases")
    parser.add_argument("--json", action="store_true", help="print JSON instead of lines")
    opts = parser.parse_args(argv)
    try:
        baseline, candidate = load(opts.baseline), load(opts.candidate)
    except BadInput as e:
        print("vmct-compare-runs: %s" % e, file=sys.stderr)
        return EXIT_BAD_INPUT
    rows = compare(baseline, candidate, opts.tolerance, opts.alpha, opts.all)
    if not rows:
        print("vmct-compare-runs: the two runs have no metric in common%s"
              % ("" if opts.all else " (lifecycle phases; --all for every metric)"),
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if opts.json:
        print(json.dumps({"tolerance": opts.tolerance, "alpha": opts.alpha,
                          "metrics": _json_rows(rows)}, indent=1))
    else:
        for line in render(rows, opts.tolerance, opts.alpha):
            print(line)
    return EXIT_REGRESSED if any(r["verdict"] == REGRESSED for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
