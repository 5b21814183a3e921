"""Do two runs of the same task agree? Compares two vmct-comparison JSON exports.

    python3 tools/bench/compare_runs.py RUN_A.json RUN_B.json [--all]

For every lifecycle metric (Rally atomic actions such as vmct.build, vmct.delete,
vmct.reboot_soft; with --all every group, workloads too) that both runs measured for the
same kind and concurrency, it prints N, mean +/- SD and the confidence interval of each run,
whether the two intervals overlap, and Welch's two-sided p of equal means (from the
summaries). The last line counts the metrics whose intervals do not overlap; the exit status
is 0 either way (disagreement is a finding to explain, not a tool error).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from rally_vmct.workloads import stats  # noqa: E402

# atomic actions of the benchmark workloads themselves, not lifecycle phases
WORKLOAD_PREFIXES = ("vmct.sysbench_", "vmct.netperf_")
KEY_FIELDS = ("kind", "concurrency", "source", "group", "metric", "unit", "dialect",
              "sysbench_mode")


def load_groups(path):
    with open(path) as f:
        data = json.load(f)
    if data.get("format") != "vmct-comparison":
        raise SystemExit("%s is not a vmct-comparison JSON export (rally task export "
                         "--type vmct-comparison --to FILE.json)" % path)
    return {tuple(g.get(k) for k in KEY_FIELDS): g for g in data["groups"]}


def is_lifecycle(key):
    source, metric = key[2], key[4]
    return source == "atomic" and not str(metric).startswith(WORKLOAD_PREFIXES)


def _summary(group):
    return stats.Summary(group["n"], group["mean"], group["sd"], group.get("cv"),
                         group.get("min"), group.get("max"), None, None, None, None,
                         group.get("ci_low"), group.get("ci_high"), None)


def compare(group_a, group_b):
    """``{"overlap": bool | None, "p": float | None}`` of one metric in two runs."""
    bounds = [group_a.get("ci_low"), group_a.get("ci_high"),
              group_b.get("ci_low"), group_b.get("ci_high")]
    overlap = None
    if None not in bounds:
        overlap = bounds[0] <= bounds[3] and bounds[2] <= bounds[1]
    p = None
    if group_a.get("sd") is not None and group_b.get("sd") is not None:
        p = stats.welch_test(_summary(group_a), _summary(group_b)).p
    return {"overlap": overlap, "p": p}


def rows(groups_a, groups_b, everything=False):
    for key in sorted(set(groups_a) & set(groups_b), key=str):
        if everything or is_lifecycle(key):
            yield key, groups_a[key], groups_b[key], compare(groups_a[key], groups_b[key])


def _side(group):
    ci = "[%.3g, %.3g]" % (group["ci_low"], group["ci_high"]) if group.get(
        "ci_low") is not None else "[no interval]"
    sd = "%.3g" % group["sd"] if group.get("sd") is not None else "-"
    return "N=%d %.3g +/- %s %s" % (group["n"], group["mean"], sd, ci)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--all", action="store_true", help="every group, not only lifecycle")
    opts = parser.parse_args(argv)
    found = list(rows(load_groups(opts.run_a), load_groups(opts.run_b), opts.all))
    apart = 0
    for key, a, b, verdict in found:
        kind, concurrency, _, _, metric, unit = key[:6]
        overlap = {True: "overlap", False: "APART", None: "no interval"}[verdict["overlap"]]
        apart += verdict["overlap"] is False
        p = "p=%.3g" % verdict["p"] if verdict["p"] is not None else "p=-"
        print("%-9s c=%-3s %-28s [%s]  A: %s  B: %s  %s %s"
              % (kind, concurrency, metric, unit, _side(a), _side(b), overlap, p))
    print("%d metrics compared; %d with intervals apart" % (len(found), apart))
    return 0


if __name__ == "__main__":
    sys.exit(main())
