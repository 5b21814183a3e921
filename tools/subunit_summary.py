"""Sum the subunit v2 streams the test stages wrote and print the closing line.

usage: subunit_summary.py RESULTS_DIR [BROKEN_STAGE ...]

Prints every failed test with its traceback, one line per stage, each failure again in
short (its test and the assertion's first lines: CI shows only the end of the output), then
``N passed, N failed, N skipped`` alone on the last line. A stage named as
broken (it could not run at all) counts as one failure. Exit status 1 when
anything failed or nothing ran.
"""

import collections
import pathlib
import re
import sys

import subunit
import testtools

PASSED = {"success", "xfail"}
FAILED = {"fail", "uxsuccess"}
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


def main(argv):
    results = pathlib.Path(argv[1])
    broken = argv[2:]
    totals = collections.Counter()
    short = []
    for path in sorted(results.glob("*.subunit")):
        counts = collections.Counter()
        for test_id, test in sorted(read_stream(path).items()):
            status = test["status"]
            kind = ("passed" if status in PASSED else
                    "failed" if status in FAILED else "skipped")
            counts[kind] += 1
            if kind == "failed":
                print("FAILED %s\n%s\n" % (test_id, details_text(test)))
                short.append(in_short(test_id, details_text(test)))
            elif kind == "skipped":
                print("skipped %s: %s" % (test_id, details_text(test)))
        print("%s: %d passed, %d failed, %d skipped" % (
            path.stem, counts["passed"], counts["failed"], counts["skipped"]))
        totals.update(counts)
    for stage in broken:
        print("stage %s could not run" % stage)
        short.append("  stage %s could not run" % stage)
        totals["failed"] += 1
    if short:
        print("Failures in short:")
        print("\n".join(short))
    print("%d passed, %d failed, %d skipped" % (
        totals["passed"], totals["failed"], totals["skipped"]))
    return 1 if totals["failed"] or not totals["passed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
