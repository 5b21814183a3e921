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

* **regressed**: the interval excludes 1 on the worse side (slower for times, lower
  for rates) and reaches beyond the tolerance there: e.g. [1.02, 1.36] for a
  duration with ±5 %;
* **improved**: the same on the better side;
* **same**: the ``1 - 2 alpha`` interval within ``1 -/+ tolerance`` (two one-sided
  tests), or an interval that excludes 1 but lies wholly within the tolerance;
* **cannot tell**: none of these (an interval that holds 1 and reaches past the
  tolerance, or no interval at all, as with one value a side): the line gives the
  values per side that would tell a change of the tolerance's size;
* **more failures**: the candidate's share of failed samples is higher (Fisher's
  exact test, one-sided), whatever its values;
* **missing**: the baseline measured it, the candidate has no value of it (a kind,
  a concurrency or a metric gone, or every sample failed); **new**: the other way
  round (said, never a failure).

Regressed and improved are decided as one family over the compared metrics (the
test of "the ratio is 1", Holm at ``alpha``), and so are the failure tests, so the
chance that a gate fails on a run no worse than its baseline is at most ``alpha``
for each family whatever the number of metrics; each line prints the level its
interval was taken at. Exit status: 1 when a metric regressed, has more failures or
is missing; else 3 when one cannot be told; 0 when every metric is the same or
better; 2 on bad input. Pure Python (no Rally import): usable on a machine without
Rally.
"""

import argparse
import collections
import json
import math
import sys

from rally_vmct import inference
from rally_vmct import stats

REGRESSED, IMPROVED, SAME, CANNOT_TELL = "regressed", "improved", "same", "cannot tell"
MORE_FAILURES, MISSING, NEW = "more failures", "missing", "new"
VERDICTS = (REGRESSED, MORE_FAILURES, MISSING, IMPROVED, SAME, CANNOT_TELL, NEW)
FAILING = (REGRESSED, MORE_FAILURES, MISSING)
KEY_FIELDS = ("kind", "concurrency", "source", "group", "metric", "unit", "dialect",
              "sysbench_mode")
# atomic actions of the benchmark workloads themselves, not lifecycle phases
WORKLOAD_PREFIXES = ("vmct.sysbench_", "vmct.netperf_")
DEFAULT_TOLERANCE = 0.05
DEFAULT_ALPHA = 0.05
EXIT_REGRESSED = 1
EXIT_BAD_INPUT = 2
EXIT_CANNOT_TELL = 3

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
              if g.get("n") or g.get("failures")}
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
        logs = stats.LogMoments(group["n"], group["log_mean"], group.get("log_sd"),
                                group.get("value_step"))
    return summary, logs


def _beyond(low, high, direction, tolerance):
    """``(worse, better)``: the interval excludes 1 on that side, past the tolerance."""
    above = low > 1 and high > 1 + tolerance
    below = high < 1 and low < 1 - tolerance
    if direction == "higher":
        return below, above
    return above, below


def _measured(group):
    """``(Summary, LogMoments or None)`` of a group with values, else None."""
    return _sample(group) if group and group.get("n") else None


def compare(baseline, candidate, tolerance=DEFAULT_TOLERANCE, alpha=DEFAULT_ALPHA,
            everything=False):
    """``[row dict]``: a verdict per metric either run has (see the module doc)."""
    keys = sorted((k for k in set(baseline.groups) | set(candidate.groups)
                   if everything or is_lifecycle(k)), key=str)
    rows, measured = [], []
    for key in keys:
        base, cand = baseline.groups.get(key), candidate.groups.get(key)
        base_s, cand_s = _measured(base), _measured(cand)
        row = {"key": key, "direction": baseline.directions.get(
            key[2:], candidate.directions.get(key[2:])), "level": alpha,
            "baseline": base_s and base_s[0], "candidate": cand_s and cand_s[0],
            "baseline_failures": (base or {}).get("failures") or 0,
            "candidate_failures": (cand or {}).get("failures") or 0,
            "samples": (base_s, cand_s), "result": dict.fromkeys(inference.FIELDS)}
        rows.append(row)
        if base_s is None or cand_s is None:
            row["verdict"], row["why"] = _one_side(row)
        else:
            row["first"] = inference.compare(cand_s, base_s, alpha)
            measured.append(row)
    _decide_values(measured, tolerance, alpha)
    _decide_failures(measured, alpha)
    return rows


def _one_side(row):
    if row["baseline"] is None and row["candidate"] is None:
        return CANNOT_TELL, "no value on either side (every sample failed on both)"
    if row["candidate"] is None:
        return MISSING, ("the baseline has %d value(s), the candidate none%s" % (
            row["baseline"].n, " (all %d failed)" % row["candidate_failures"]
            if row["candidate_failures"] else ": not measured"))
    return NEW, "the candidate has %d value(s), the baseline none" % row["candidate"].n


def _decide_values(rows, tolerance, alpha):
    decisions = stats.holm_levels([r["first"].get("p_value") for r in rows], alpha)
    for row, decision in zip(rows, decisions):
        level = decision[1] if decision else alpha
        base_s, cand_s = row["samples"]
        result = inference.compare(cand_s, base_s, level)
        row.update(level=level, result=result)
        row["verdict"], row["why"] = _verdict(row, result, decision, tolerance, alpha)


def _verdict(row, result, decision, tolerance, alpha):
    if result.get("ratio") is None:
        return CANNOT_TELL, "no ratio: %s" % (result.get("ratio_note") or "no data")
    if result.get("ratio_ci_low") is None:
        return CANNOT_TELL, "no interval: %s%s" % (
            result.get("ratio_note") or "N < 2", _would_tell(row, tolerance, alpha))
    if row["direction"] not in ("higher", "lower"):
        return CANNOT_TELL, "the unit %r says nothing of better or worse" % row["key"][5]
    low, high = result["ratio_ci_low"], result["ratio_ci_high"]
    worse, better = _beyond(low, high, row["direction"], tolerance)
    pct = "%.4g %%" % (100 * (1 - row["level"]))
    rejected = bool(decision and decision[0])
    if rejected and (worse or better):
        return (REGRESSED if worse else IMPROVED), (
            "the %s interval excludes 1 (Holm) and reaches past ±%g %% on the %s side"
            % (pct, 100 * tolerance, "worse" if worse else "better"))
    decision_same, _, _, tost = inference.band_decision(row["first"], tolerance, alpha)
    if decision_same == "equivalent":
        return SAME, "TOST: the %g %% interval [%.4g, %.4g] lies within ±%g %%" % (
            100 * (1 - 2 * alpha), tost[0], tost[1], 100 * tolerance)
    if rejected:
        return SAME, "the %s interval excludes 1 (Holm) but lies within ±%g %%" % (
            pct, 100 * tolerance)
    return CANNOT_TELL, "the %s interval holds 1 and reaches past ±%g %%%s" % (
        pct, 100 * tolerance, _would_tell(row, tolerance, alpha))


def _would_tell(row, tolerance, alpha):
    """"; about N a side would tell" from the log SDs (each side's, else the other's)."""
    sds = [s[1].sd for s in row["samples"] if s and s[1] and s[1].sd]
    if not sds:
        return ""
    n = stats.n_per_side(math.log(1 + tolerance), max(sds), max(sds), alpha)
    if n is None:
        return ""
    return "; about %d values a side would tell a ±%g %% change (80 %% power)" % (
        n, 100 * tolerance)


def _decide_failures(rows, alpha):
    """More failures: Fisher's exact test, one-sided, Holm over the measured metrics."""
    tested = [r for r in rows if r["candidate_failures"] > 0]
    ps = [stats.fisher_greater(r["candidate_failures"], r["candidate"].n,
                               r["baseline_failures"], r["baseline"].n)
          for r in tested]
    for row, p, decision in zip(tested, ps, stats.holm_levels(ps, alpha)):
        row["failures_p"] = p
        if decision and decision[0]:
            row["verdict"], row["why"] = MORE_FAILURES, (
                "%d of %d failed, the baseline %d of %d: one-sided Fisher p = %.3g "
                "(Holm, α = %g)" % (
                    row["candidate_failures"], row["candidate_failures"] +
                    row["candidate"].n, row["baseline_failures"],
                    row["baseline_failures"] + row["baseline"].n, p, alpha))


def _count(summary):
    return summary.n if summary is not None else 0


def exit_status(rows):
    """1 on a failing verdict, else 3 when one cannot be told, else 0."""
    verdicts = {r["verdict"] for r in rows}
    if verdicts & set(FAILING):
        return EXIT_REGRESSED
    if CANNOT_TELL in verdicts:
        return EXIT_CANNOT_TELL
    return 0


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
        lines.append("%-13s %-9s c=%-3s %-30s baseline %s  candidate %s  ×%s %s at "
                     "%.4g %%: %s" % (
                         row["verdict"].upper() if row["verdict"] in FAILING
                         else row["verdict"], kind, concurrency, "%s [%s]" % (metric, unit),
                         _side(row["baseline"], row["baseline_failures"]),
                         _side(row["candidate"], row["candidate_failures"]),
                         _fmt(r.get("ratio")), interval, 100 * (1 - row["level"]),
                         row["why"]))
    counts = collections.Counter(row["verdict"] for row in rows)
    lines.append("%d metrics (rule: %s; tolerance ±%g %%; regressed/improved: Holm over "
                 "the compared metrics at α = %g, more failures: Fisher, Holm at α = %g; "
                 "same: TOST at α = %g): %s; exit %d" % (
                     len(rows), inference.RULE_TEXT[inference.RULE_LOG], 100 * tolerance,
                     alpha, alpha, alpha,
                     ", ".join("%d %s" % (counts[v], v) for v in VERDICTS),
                     exit_status(rows)))
    return lines


def _side(summary, failures):
    text = "N=0" if summary is None else "N=%d %s" % (summary.n, _fmt(summary.mean))
    return text + (" (%d failed)" % failures if failures else "")


def _json_rows(rows):
    out = []
    for row in rows:
        entry = dict(zip(KEY_FIELDS, row["key"]))
        entry.update(verdict=row["verdict"], why=row["why"], level=row["level"],
                     direction=row["direction"], baseline_n=_count(row["baseline"]),
                     candidate_n=_count(row["candidate"]),
                     baseline_failures=row["baseline_failures"],
                     candidate_failures=row["candidate_failures"],
                     failures_p=row.get("failures_p"))
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
                    "or the same, per metric. Exit 0: no regression; 1: a metric "
                    "regressed, has more failures or is missing; 2: bad input; 3: no "
                    "regression, but a metric cannot be told (too few values).")
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
    return exit_status(rows)


if __name__ == "__main__":
    sys.exit(main())
