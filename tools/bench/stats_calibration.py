"""Calibration of the comparison's statistics: false-positive rates and power, simulated.

    python3 tools/bench/stats_calibration.py [--reps 4000] [--seed 1]

Draws log-normal samples (the shape of benchmark timings and rates) and runs each
procedure of the comparison page exactly as the exporter does, through
rally_vmct.inference and stats:

* false-positive rate (true ratio of medians 1; the nominal level 0.05) at N = 3, 5, 8
  per side, with equal CVs (10 % and 10 %) and tenfold different CVs (5 % and 50 %):
  the page's cell rule (Welch t on logs, Hsu df), the same with the
  Welch-Satterthwaite df (not used: shown for why), the Mann-Whitney U note, the seed
  check's Holm family of 5 null directions (family-wise rate), TOST's "equivalent"
  at the band's edge (true ratio 0.95) and "outside the band" just inside it (1.05);
* power at the seed studies' published effects (CV 10 % and 25 % on both sides) at
  the seed family's strictest Holm level (0.05 / 5 = 0.01) and at 0.05;
* shared variation (``--shared``, the issue's table): iterations of one run share a
  run-level effect (log SD 2.5 % or 5 %), or at concurrency 5 the iterations of one
  wave share its contention (log SD 10 %); within-run CV 10 %. The rate of the rule
  over the pooled iterations (one run a side, as a single task gives it) against the
  page's rule over 3 runs a side (:func:`rally_vmct.inference.compare_runs`), and
  the latter's power for a ×1.3 difference.

Prints a reST table (doc/source/design/statistics.rst carries it with the date,
commit and machine). Pure Python; about two minutes at 4000 replications on a
2-core machine.
"""

import argparse
import math
import os
import platform
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from rally_vmct import inference  # noqa: E402
from rally_vmct import stats  # noqa: E402

ALPHA = 0.05
BAND = 0.05
SIZES = (3, 5, 8)
# (label, CV of the candidate, CV of the baseline)
SPREADS = (("CV 10 % / 10 %", 0.10, 0.10), ("CV 5 % / 50 %", 0.05, 0.50))
POWER_SPREADS = (("CV 10 %", 0.10, 0.10), ("CV 25 %", 0.25, 0.25))
# The seeds' published effects as candidate / baseline ratios (seed_check.SEEDS)
EFFECTS = (("(a) boot 28 % faster", 0.72), ("(b) delete 34 % faster", 0.66),
           ("(c) soft reboot 96 % faster", 0.04), ("(e) fileio 60 % worse", 0.40))
FAMILY = 5
# cpu and memory figures are steady: TOST's power is shown at this CV on both sides
TOST_CV = 0.02


def _sigma(cv):
    """The log-normal's log SD for a given CV."""
    return math.sqrt(math.log1p(cv * cv))


def _sample(rng, n, median, cv):
    sigma = _sigma(cv)
    return [rng.lognormvariate(math.log(median), sigma) for _ in range(n)]


def _rule(a, b, alpha):
    return inference.compare(inference.sample(a), inference.sample(b), alpha)


def _welch_satterthwaite(a, b, alpha):
    la, lb = stats.log_moments(a), stats.log_moments(b)
    va, vb = la.sd ** 2 / la.n, lb.sd ** 2 / lb.n
    df = (va + vb) ** 2 / (va * va / (la.n - 1) + vb * vb / (lb.n - 1))
    return stats.log_ratio(la, lb, 1 - alpha, df=df).p < alpha


def false_positives(rng, reps):
    rows = []
    for label, cv_a, cv_b in SPREADS:
        for n in SIZES:
            counts = dict.fromkeys(("rule", "ws", "mwu", "holm", "tost", "outside"), 0)
            for _ in range(reps):
                a, b = _sample(rng, n, 1.0, cv_a), _sample(rng, n, 1.0, cv_b)
                counts["rule"] += _rule(a, b, ALPHA)["significant"]
                counts["ws"] += _welch_satterthwaite(a, b, ALPHA)
                counts["mwu"] += stats.mann_whitney(a, b).p < ALPHA
                ps = [_rule(_sample(rng, n, 1.0, cv_a), _sample(rng, n, 1.0, cv_b),
                            ALPHA)["p_value"] for _ in range(FAMILY)]
                counts["holm"] += any(r for r, _ in stats.holm_levels(ps, ALPHA))
                edge = _rule(_sample(rng, n, 1 - BAND, cv_a), b, ALPHA)
                counts["tost"] += inference.band_decision(edge, BAND, ALPHA)[0] == \
                    "equivalent"
                inside = _rule(_sample(rng, n, 1 + BAND, cv_a), b, ALPHA)
                counts["outside"] += inference.band_decision(inside, BAND, ALPHA)[0] == \
                    "outside"
            rows.append((label, n, {k: v / reps for k, v in counts.items()}))
    return rows


def power(rng, reps):
    rows = []
    for label, cv_a, cv_b in POWER_SPREADS:
        for n in SIZES:
            cells = []
            for _, effect in EFFECTS:
                hits = {0.01: 0, ALPHA: 0}
                for _ in range(reps // 4):
                    r = _rule(_sample(rng, n, effect, cv_a), _sample(rng, n, 1.0, cv_b),
                              ALPHA)
                    for level in hits:
                        hits[level] += r["p_value"] < level and r["ratio"] < 1
                cells.append((hits[0.01] / (reps // 4), hits[ALPHA] / (reps // 4)))
            equal = 0
            for _ in range(reps // 4):
                r = _rule(_sample(rng, n, 0.98, TOST_CV), _sample(rng, n, 1.0, TOST_CV),
                          ALPHA)
                equal += inference.band_decision(r, BAND, ALPHA)[0] == "equivalent"
            cells.append((None, equal / (reps // 4)))
            rows.append((label, n, cells))
    return rows


# (label, run-level log SD, wave log SD, concurrency)
SHARED = (("run effect 2.5 %", 0.025, 0.0, 1), ("run effect 5 %", 0.05, 0.0, 1),
          ("wave of 5 shares 10 %", 0.0, 0.10, 5))
SHARED_SIZES = (5, 10, 30)
SHARED_RUNS = 3
SHARED_CV = 0.10


def _run(rng, n, run_sd, wave_sd, concurrency, shift):
    """One run's n values: its run effect, each wave's effect, each iteration's."""
    effect = rng.gauss(0, run_sd)
    values = []
    for start in range(0, n, concurrency):
        wave = rng.gauss(0, wave_sd)
        values += [math.exp(shift + effect + wave + rng.gauss(0, _sigma(SHARED_CV)))
                   for _ in range(min(concurrency, n - start))]
    return values


def _mean_log(values):
    return math.fsum(math.log(v) for v in values) / len(values)


def shared(rng, reps):
    """[(label, N, {"pooled", "runs", "power"})]: see the module doc."""
    out = []
    for label, run_sd, wave_sd, concurrency in SHARED:
        for n in SHARED_SIZES:
            counts = {"pooled": 0, "runs": 0, "power": 0}
            for _ in range(reps):
                one = [_run(rng, n, run_sd, wave_sd, concurrency, 0.0) for _ in range(2)]
                counts["pooled"] += inference.compare(
                    inference.sample(one[0]), inference.sample(one[1]), ALPHA)["significant"]
                for key, shift in (("runs", 0.0), ("power", math.log(1.3))):
                    a = [_mean_log(_run(rng, n, run_sd, wave_sd, concurrency, shift))
                         for _ in range(SHARED_RUNS)]
                    b = [_mean_log(_run(rng, n, run_sd, wave_sd, concurrency, 0.0))
                         for _ in range(SHARED_RUNS)]
                    counts[key] += inference.compare_runs(a, b, ALPHA)["significant"]
            out.append((label, n, {k: v / reps for k, v in counts.items()}))
    return out


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _table(header, rows):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    line = "  ".join("=" * w for w in widths)
    out = [line, "  ".join(str(h).ljust(w) for h, w in zip(header, widths)).rstrip(), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()
            for row in rows]
    return "\n".join(out + [line])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000,
                        help="replications per false-positive cell (power: a quarter)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shared", action="store_true",
                        help="only the run-level and wave table")
    opts = parser.parse_args(argv)
    rng = random.Random(opts.seed)
    started = time.time()
    if opts.shared:
        print_shared(shared(rng, opts.reps), opts.reps)
        print(_footer(started))
        return 0
    fp = false_positives(rng, opts.reps)
    pw = power(rng, opts.reps)
    pct = "%.1f %%"
    print("False-positive rates, nominal 5 %% (%d replications per row; 2 SE at 5 %%: "
          "%.1f points)\n" % (opts.reps, 200 * math.sqrt(0.05 * 0.95 / opts.reps)))
    print(_table(
        ("spread", "N", "cell rule", "Welch-Satt. df", "Mann-Whitney", "Holm, 5 nulls",
         "TOST at 0.95", "outside at 1.05"),
        [(label, n, pct % (100 * r["rule"]), pct % (100 * r["ws"]),
          pct % (100 * r["mwu"]), pct % (100 * r["holm"]), pct % (100 * r["tost"]),
          pct % (100 * r["outside"])) for label, n, r in fp]))
    print("\nPower of the cell rule at the seeds' published effects, per side N, at "
          "alpha 0.01 (the seed family's first Holm step) / 0.05; and TOST's power to "
          "show +/-5 %% equivalence when the true ratio is 0.98, CV %g %% (%d replications "
          "per cell)\n" % (100 * TOST_CV, opts.reps // 4))
    header = ("spread", "N") + tuple(label for label, _ in EFFECTS) + ("(f) TOST at 0.98, CV 2 %",)
    print(_table(header, [
        (label, n) + tuple("%s / %s" % (pct % (100 * lo), pct % (100 * hi))
                           for lo, hi in cells[:-1]) + (pct % (100 * cells[-1][1]),)
        for label, n, cells in pw]))
    print()
    print_shared(shared(rng, opts.reps // 4), opts.reps // 4)
    print(_footer(started))
    return 0


def print_shared(rows, reps):
    pct = "%.1f %%"
    print("Shared variation: false-positive rates of the rule over one run's pooled "
          "iterations and over %d runs a side (run means), and the latter's power for "
          "x1.3; within-run CV %g %% (%d replications per row)\n"
          % (SHARED_RUNS, 100 * SHARED_CV, reps))
    print(_table(("what is shared", "N a run", "pooled, 1 run", "over 3 runs",
                  "power at x1.3, 3 runs"),
                 [(label, n, pct % (100 * r["pooled"]), pct % (100 * r["runs"]),
                   pct % (100 * r["power"])) for label, n, r in rows]))


def _footer(started):
    return ("\n%s, commit %s, %s (%s, %d CPUs), Python %s, %.0f s"
            % (time.strftime("%Y-%m-%d"), _commit(), platform.node() or "unknown host",
               platform.processor() or platform.machine(), os.cpu_count() or 0,
               platform.python_version(), time.time() - started))


if __name__ == "__main__":
    sys.exit(main())
