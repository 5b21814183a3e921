"""tools/subunit_summary.py: the closing line, and failures told again in short."""

import importlib.util
import os

import fixtures
import subunit
import testtools

PATH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "subunit_summary.py")
spec = importlib.util.spec_from_file_location("subunit_summary", PATH)
subunit_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(subunit_summary)

TRACEBACK = """Traceback (most recent call last):
  File "/check/tests/e2e/test_demo_task.py", line 63, in test_sla_passed
    self.assertTrue(self.task["pass_sla"], failed)
  File "/usr/lib/python3.11/unittest/case.py", line 715, in assertTrue
    raise self.failureException(msg)
AssertionError: False is not true : [('VMCT.boot_and_delete', 'failure_rate 33.3%')]
"""


class InShortTestCase(testtools.TestCase):

    def test_starts_at_the_assertion(self):
        line = subunit_summary.in_short("tests.e2e.X.test_sla_passed", TRACEBACK)
        self.assertEqual("  tests.e2e.X.test_sla_passed: AssertionError: False is not true : "
                         "[('VMCT.boot_and_delete', 'failure_rate 33.3%')]", line)

    def test_long_messages_are_cut(self):
        line = subunit_summary.in_short("t", "ValueError: " + "x" * 1000, width=50)
        self.assertEqual(50, len(line))
        self.assertTrue(line.startswith("  t: ValueError: xxx"))

    def test_without_an_error_line_the_last_lines(self):
        line = subunit_summary.in_short("t", "a\nb\nc\nd\ne")
        self.assertEqual("  t: c | d | e", line)


def stream(path, *results):
    """A subunit v2 file of (test id, status) results."""
    with open(path, "wb") as f:
        out = subunit.StreamResultToBytes(f)
        for test_id, status in results:
            out.status(test_id=test_id, test_status="inprogress")
            if status != "inprogress":
                out.status(test_id=test_id, test_status=status)


class ClosingLineTestCase(testtools.TestCase):
    """The closing line counts each test id once over every stage's results."""

    def summary(self, **files):
        results = self.useFixture(fixtures.TempDir()).path
        for name, results_of in files.items():
            stream(os.path.join(results, name + ".subunit"), *results_of)
        out = self.useFixture(fixtures.StringStream("stdout"))
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", out.stream))
        rc = subunit_summary.main(["summary", results])
        out.stream.flush()
        return rc, out.getDetails()["stdout"].as_text().splitlines()

    def test_a_test_in_two_stages_counts_once(self):
        rc, lines = self.summary(unit=[("t.a", "success"), ("t.b", "success")],
                                 devstack=[("t.b", "success"), ("t.c", "skip")])
        self.assertEqual(0, rc)
        self.assertEqual("2 passed, 0 failed, 1 skipped", lines[-1])
        self.assertEqual("3 distinct tests in 2 stages' results", lines[-2])
        self.assertIn("1 test ids reported by more than one stage, counted once: "
                      "t.b (devstack unit)", lines)

    def test_a_failure_in_any_stage_wins(self):
        rc, lines = self.summary(one=[("t.a", "success")], two=[("t.a", "fail")])
        self.assertEqual(1, rc)
        self.assertEqual("0 passed, 1 failed, 0 skipped", lines[-1])

    def test_a_test_that_never_finished_failed(self):
        rc, lines = self.summary(unit=[("t.a", "success"), ("t.died", "inprogress")])
        self.assertEqual(1, rc)
        self.assertEqual("1 passed, 1 failed, 0 skipped", lines[-1])
        self.assertIn("FAILED t.died", lines)

    def test_nothing_passed_is_a_failure(self):
        rc, lines = self.summary(e2e=[("t.a", "skip")])
        self.assertEqual(1, rc)
        self.assertEqual("0 passed, 0 failed, 1 skipped", lines[-1])
