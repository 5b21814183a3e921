"""tools/subunit_summary.py: failures told again in short at the end."""

import importlib.util
import os

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
