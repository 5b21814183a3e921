"""The conformance table: pass / skip / fail per instance kind, from Rally and tempest.

usage: summary.py --expected expected.yaml --exclude tempest-exclude.txt --out DIR
                  [--rally-json rally.json] [--tempest-subunit tempest.subunit]
                  [--tempest-kind docker] [--tempest-set fast|full] [--seconds NAME=S ...]

Reads ``rally task report --json`` of samples/tasks/conformance.yaml (one subtask per
kind, titled "<kind>: conformance") and the subunit stream of the tempest run, and writes
DIR/conformance.json and DIR/conformance.txt (printed too):

* Rally: one test per workload (pass: it ran, no failed iteration, SLA met), one per
  VMCT.boot_and_check_actions check ("check <action>: <outcome>"), and a skip for every
  scenario expected.yaml lists as not run on the kind, with its reason.
* tempest: every test of the stream; a skip is "explained" by the first entry of
  expected.yaml's tempest.skips whose regexes match the test id and tempest's skip message;
  the exclude list's entries are listed with their reasons.
Exit status 1 when anything failed or a skip has no explanation.
"""

import argparse
import collections
import json
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

PASSED = {"success", "xfail"}
FAILED = {"fail", "uxsuccess"}
CHECK_SCENARIO = "VMCT.boot_and_check_actions"
CHECKS_TITLE = ": action checks"
SNAPSHOT_SCENARIO = "NovaServers.snapshot_server"


def _kind_of(subtask, workload):
    for text in (subtask.get("title") or "", workload.get("description") or ""):
        if ": " in text:
            return text.split(": ", 1)[0]
    return "?"


def _first_error(workload):
    for iteration in workload.get("data") or []:
        error = iteration.get("error") or []
        if error:
            return ": ".join(str(e) for e in error[:2])[:500]
    for result in workload.get("contexts_results") or []:
        setup = result.get("setup") or {}
        if setup.get("error"):
            return "context %s: %s" % (result.get("plugin_name"), setup["error"])[:500]
    return None


def _atomic_names(actions):
    for action in actions:
        yield action["name"]
        yield from _atomic_names(action.get("children") or [])


def _check_tables(workload):
    for iteration in workload.get("data") or []:
        for chart in (iteration.get("output") or {}).get("complete") or []:
            if chart.get("title", "").endswith(CHECKS_TITLE):
                cols = chart["data"]["cols"]
                yield [dict(zip(cols, row)) for row in chart["data"]["rows"]]


def rally_tests(report, expected):
    """{kind: [test]} from a Rally JSON report; test = {name, status, detail, ...}."""
    kinds = collections.OrderedDict()
    refusals = expected.get("refusals") or {}
    for task in report["tasks"]:
        for subtask in task["subtasks"]:
            for workload in subtask["workloads"]:
                kind = _kind_of(subtask, workload)
                scenario = list(workload["scenario"])[0]
                label = (workload.get("description") or scenario).split(": ", 1)[-1]
                ran = workload.get("total_iteration_count", len(workload.get("data") or []))
                ok = (ran > 0 and not workload.get("failed_iteration_count")
                      and workload.get("pass_sla", False))
                names = set()
                for iteration in workload.get("data") or []:
                    names.update(_atomic_names(iteration.get("atomic_actions") or []))
                tests = kinds.setdefault(kind, [])
                tests.append({
                    "name": "%s (%s)" % (label, scenario), "scenario": scenario,
                    "status": "passed" if ok else "failed",
                    "detail": None if ok else (_first_error(workload) or "no iteration ran"),
                    "iterations": ran, "atomic_actions": sorted(names)})
                for rows in _check_tables(workload):
                    for row in rows:
                        reason = None
                        refusal = refusals.get(row["action"])
                        if row["outcome"] == "refused" and refusal and _applies(refusal, kind):
                            reason = refusal["reason"]
                        tests.append({
                            "name": "check %s: %s (expected %s)" % (
                                row["action"], row["outcome"], row["expected"]),
                            "scenario": CHECK_SCENARIO, "action": row["action"],
                            "outcome": row["outcome"], "state_after": row["state after"],
                            "status": "passed" if row["ok"] == "yes" else "failed",
                            "detail": row["detail"], "reason": reason})
    for kind, tests in kinds.items():
        for entry in expected.get("not_run") or []:
            if _applies(entry, kind):
                for scenario in entry["scenarios"]:
                    tests.append({"name": scenario, "scenario": scenario, "status": "skipped",
                                  "reason": _one_line(entry["reason"]), "explained": True})
    return kinds


def _applies(entry, kind):
    kinds = entry.get("kinds", "*")
    return kinds == "*" or kind in kinds


def _one_line(text):
    return " ".join(str(text).split())


def read_subunit(path):
    """{test id: (status, skip reason or failure text)} of a subunit v2 stream."""
    import subunit_summary  # tools/: the one reader of the test stages' streams

    tests = {}
    for test_id, test in subunit_summary.read_stream(path).items():
        text = ""
        for name in ("reason", "traceback"):
            if name in test["details"]:
                text = "".join(test["details"][name].iter_text()).strip()
                break
        tests[test_id] = (test["status"], text)
    return tests


def explain_skip(test_id, message, skips):
    """The expected.yaml entry that explains a tempest skip, or None."""
    for entry in skips:
        if "match" in entry and not re.search(entry["match"], test_id):
            continue
        if "message" in entry and not re.search(entry["message"], message or ""):
            continue
        return entry
    return None


def tempest_tests(results, expected):
    tests = []
    skips = expected.get("skips") or []
    # a class fixture that failed ("setUpClass (tempest...Class)") is a failed test too
    for name, (status, text) in sorted(results.items()):
        if status in PASSED:
            tests.append({"name": name, "status": "passed"})
        elif status in FAILED:
            tests.append({"name": name, "status": "failed", "detail": text[-1500:]})
        else:
            entry = explain_skip(name, text, skips)
            tests.append({"name": name, "status": "skipped", "tempest_reason": text,
                          "reason": _one_line(entry["reason"]) if entry else None,
                          "explained": entry is not None})
    return tests


def read_exclusions(path):
    """[(regex, reason)] of a stestr exclude list ('regex  # reason' lines)."""
    out = []
    with open(path) as f:
        for line in f:
            regex, _, reason = line.strip().partition("#")
            if regex.strip():
                out.append((regex.strip(), reason.strip()))
    return out


def counts(tests):
    c = collections.Counter(t["status"] for t in tests)
    return {k: c.get(k, 0) for k in ("passed", "skipped", "failed")}


def summarize(rally_report, tempest_results, expected, exclusions, tempest_kind="docker",
              tempest_set="fast", seconds=None):
    kinds = collections.OrderedDict()
    for kind, tests in rally_tests(rally_report or {"tasks": []},
                                   expected.get("rally") or {}).items():
        kinds.setdefault(kind, {})["rally"] = dict(counts(tests), tests=tests)
    if tempest_results is not None:
        tests = tempest_tests(tempest_results, expected.get("tempest") or {})
        kinds.setdefault(tempest_kind, {})["tempest"] = dict(
            counts(tests), excluded=[{"regex": r, "reason": why} for r, why in exclusions],
            set=tempest_set, tests=tests)
    problems = []
    for kind, suites in kinds.items():
        for suite, data in suites.items():
            for test in data["tests"]:
                if test["status"] == "failed":
                    problems.append("%s %s FAILED %s: %s" % (kind, suite, test["name"],
                                                             test.get("detail")))
                elif test["status"] == "skipped" and not test.get("explained"):
                    problems.append("%s %s unexplained skip %s: %s" % (
                        kind, suite, test["name"], test.get("tempest_reason")))
    tasks = (rally_report or {}).get("tasks") or []
    return {"rally_tasks": [t["uuid"] for t in tasks], "kinds": kinds, "problems": problems,
            "seconds": seconds or {}}


def text_table(summary):
    header = ("kind", "suite", "passed", "skipped", "failed", "excluded")
    tasks = " ".join(summary["rally_tasks"]) or "none"
    lines = ["conformance of the all-in-one cloud (rally tasks: %s)" % tasks, "",
             "%-10s %-14s %7s %8s %7s %9s" % header]
    for kind, suites in summary["kinds"].items():
        for suite, data in suites.items():
            lines.append("%-10s %-14s %7d %8d %7d %9s" % (
                kind, suite if suite != "tempest" else "tempest:" + data["set"],
                data["passed"], data["skipped"], data["failed"],
                len(data["excluded"]) if "excluded" in data else "-"))
    lines += ["", "skipped, with the reason (kinds with the same skips share a line):"]
    groups = collections.OrderedDict()      # (suite, reason, names) -> kinds
    excluded_lines = []
    for kind, suites in summary["kinds"].items():
        for suite, data in suites.items():
            by_reason = collections.OrderedDict()
            for test in data["tests"]:
                if test["status"] == "skipped":
                    by_reason.setdefault(test.get("reason") or "UNEXPLAINED: %s" % (
                        test.get("tempest_reason")), []).append(test["name"])
            for reason, names in by_reason.items():
                groups.setdefault((suite, reason, tuple(names)), []).append(kind)
            for excluded in data.get("excluded", []):
                excluded_lines.append("  %s %s excluded %s: %s" % (kind, suite, _short(
                    excluded["regex"]), excluded["reason"]))
    for (suite, reason, names), kinds in groups.items():
        shown = ", ".join(_short(n) for n in names[:4])
        more = " and %d more" % (len(names) - 4) if len(names) > 4 else ""
        lines.append("  %s %s (%d): %s: %s%s" % (
            ", ".join(kinds), suite, len(names), reason, shown, more))
    lines += excluded_lines
    refused = [(kind, t) for kind, suites in summary["kinds"].items()
               for t in suites.get("rally", {}).get("tests", []) if t.get("reason")
               and t["status"] == "passed"]
    if refused:
        lines += ["", "refused as expected (the instance stayed ACTIVE):"]
        lines += ["  %s %s: %s" % (kind, t["action"], t["reason"]) for kind, t in refused]
    if summary["seconds"]:
        lines += ["", "time: " + ", ".join("%s %d s" % (k, v)
                                           for k, v in summary["seconds"].items())]
    lines += ["", "problems:" if summary["problems"] else "problems: none"]
    lines += ["  " + p for p in summary["problems"]]
    return "\n".join(lines) + "\n"


def _short(name):
    name = re.sub(r"\[.*\]$", "", name)
    return name.replace("\\", "").lstrip("^").replace("tempest.api.compute.servers.", "")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--expected", required=True)
    parser.add_argument("--exclude", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rally-json")
    parser.add_argument("--tempest-subunit")
    parser.add_argument("--tempest-kind", default="docker")
    parser.add_argument("--tempest-set", default="fast")
    parser.add_argument("--seconds", nargs="*", default=[])
    args = parser.parse_args(argv)
    with open(args.expected) as f:
        expected = yaml.safe_load(f)
    report = None
    if args.rally_json and os.path.exists(args.rally_json):
        with open(args.rally_json) as f:
            report = json.load(f)
    results = None
    if args.tempest_subunit and os.path.exists(args.tempest_subunit):
        results = read_subunit(args.tempest_subunit)
    seconds = {k: int(float(v)) for k, v in (s.split("=", 1) for s in args.seconds)}
    summary = summarize(report, results, expected, read_exclusions(args.exclude),
                        args.tempest_kind, args.tempest_set, seconds)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "conformance.json"), "w") as f:
        json.dump(summary, f, indent=1)
    text = text_table(summary)
    with open(os.path.join(args.out, "conformance.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
