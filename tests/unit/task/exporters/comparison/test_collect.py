"""Samples of Rally task results collected into groups (the whole path: test_analyse)."""

import testtools

from rally_vmct.task.exporters.comparison import collect


class TestCollect(testtools.TestCase):

    def test_concurrency_of_runners(self):
        self.assertEqual(1, collect.concurrency_of({"runner": {"times": 3},
                                                    "runner_type": "serial"}))
        self.assertEqual(8, collect.concurrency_of({"runner": {"concurrency": 8},
                                                    "runner_type": "constant"}))
        self.assertEqual(4, collect.concurrency_of(
            {"runner": {"constant": {"times": 3, "concurrency": 4}}}))
        self.assertEqual(1, collect.concurrency_of({"runner": {"concurrency": "x"},
                                                    "runner_type": "constant"}))
