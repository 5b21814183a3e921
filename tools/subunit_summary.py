"""Sum the subunit v2 streams the test stages wrote and print the closing line.

usage: subunit_summary.py RESULTS_DIR [BROKEN_STAGE ...]

Prints every failed test with its traceback, every skip with its reason, one line per stage,
each failure again in short (its test and the assertion's first lines: CI shows only the end
of the output), the number of distinct tests, then ``N passed, N failed, N skipped`` alone on
the last line. That line counts each test id once over all stages (a failure in any stage
wins, then a pass); ids reported by more than one stage are named. A test that started and
never finished counts as failed. A stage named as broken (it could not run at all) counts as
one failure. Exit status 1 when anything failed or nothing ran.
"""

import collections
import pathlib
import re
import sys

import subunit
import testtools

PASSED = {"success", "xfail"}
FAILED = {"fail", "uxsuccess"}
RANK = {"skipped": 0, "passed": 1, "failed": 2}
ERROR_LINE = re.compile(r"[\w.]*(Error|Exception|Failure)\b")


def read_stream(path):
    """Final status and details of every test in one subunit v2 file."""
    tests = {}

    def on_test(test):
        if test["status"] == "exists":
            return
        tests[test["id"]] = test

    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    with open(path, "rb") as stream:
        subunit.ByteStreamToStreamResult(stream, non_subunit_name="stdout").run(result)
    result.stopTestRun()
    return tests


def details_text(test):
    parts = []
    for name, content in test["details"].items():
        if name in ("traceback", "reason") or name.startswith("stderr"):
            parts.append("".join(content.iter_text()))
    return "\n".join(parts).strip()


def in_short(test_id, text, width=400):
    """One line: the test and its error's first lines, at most ``width`` characters."""
    lines = text.splitlines()
    # the traceback's last 'SomethingError: ...' line starts the assertion's message
    starts = [i for i, line in enumerate(lines) if ERROR_LINE.match(line)]
    start = starts[-1] if starts else max(len(lines) - 3, 0)
    return ("  %s: %s" % (test_id, " | ".join(lines[start:start + 4])))[:width]


def kind_of(status):
    """passed, failed or skipped; a test that never finished (a worker that died) failed."""
    return ("passed" if status in PASSED else
            "skipped" if status == "skip" else "failed")


def main(argv):
    results = pathlib.Path(argv[1])
    broken = argv[2:]
    # each test id counted once over all stages: a failure anywhere wins, then a pass
    outcome = {}
    stages_of = collections.defaultdict(list)
    short = []
    for path in sorted(results.glob("*.subunit")):
        counts = collections.Counter()
        for test_id, test in sorted(read_stream(path).items()):
            kind = kind_of(test["status"])
            counts[kind] += 1
            stages_of[test_id].append(path.stem)
            text = details_text(test) or "status %s" % test["status"]
            if kind == "failed":
                print("FAILED %s\n%s\n" % (test_id, text))
                short.append(in_short(test_id, text))
            elif kind == "skipped":
                print("skipped %s: %s" % (test_id, text))
            if test_id not in outcome or RANK[kind] > RANK[outcome[test_id]]:
                outcome[test_id] = kind
        print("%s: %d passed, %d failed, %d skipped" % (
            path.stem, counts["passed"], counts["failed"], counts["skipped"]))
    again = {t: s for t, s in stages_of.items() if len(s) > 1}
    if again:
        named = ", ".join("%s (%s)" % (t, " ".join(s)) for t, s in sorted(again.items())[:10])
        print("%d test ids reported by more than one stage, counted once: %s" % (
            len(again), named))
    totals = collections.Counter(outcome.values())
    for stage in broken:
        print("stage %s could not run" % stage)
        short.append("  stage %s could not run" % stage)
        totals["failed"] += 1
    if short:
        print("Failures in short:")
        print("\n".join(short))
    print("%d distinct tests in %d stages' results" % (
        len(outcome), len(list(results.glob("*.subunit")))))
    print("%d passed, %d failed, %d skipped" % (
        totals["passed"], totals["failed"], totals["skipped"]))
    return 1 if totals["failed"] or not totals["passed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
