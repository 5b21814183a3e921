"""What a comparison group measures and how it is named and compared."""

import testtools

from rally_vmct.task.exporters.comparison import collect
from rally_vmct.task.exporters.comparison import labels


class TestLabels(testtools.TestCase):

    def test_direction(self):
        self.assertEqual("higher", labels.direction("events/s"))
        self.assertEqual("higher", labels.direction("Mbit/s"))
        self.assertEqual("lower", labels.direction("s"))
        self.assertEqual("lower", labels.direction("us"))
        self.assertIsNone(labels.direction("count"))

    def test_comparable_helper(self):
        a = {"test": "cpu", "dialect": "1.0", "mode": "fixed-time"}
        b = dict(a, params={"max_prime": 1})
        self.assertEqual((True, ""), labels.comparable([a], [b]))
        self.assertEqual((False, "dialect differs: 1.0 vs 0.4"),
                         labels.comparable([a], [dict(a, dialect="0.4")]))
        self.assertEqual((False, "workload parameters differ within a group"),
                         labels.comparable([a, b], [a]))

    def test_describe_from_the_plan(self):
        plan = collect._plan_index({"workloads": [
            {"sysbench": "fileio", "test_mode": "rndrd", "block_size": "4K",
             "extra_flags": "direct"}]})
        workload = next(w for name, w in plan.items() if name.startswith("sysbench"))
        self.assertIs(workload, plan[workload.atomic_name])
        described = labels.describe_sysbench("fileio", "0.4", workload)
        self.assertEqual(("fileio", "0.4", "fixed-work", "direct"),
                         (described["test"], described["dialect"], described["mode"],
                          described["params"]["extra_flags"]))
        self.assertEqual({"test": "cpu", "dialect": "9.9", "mode": None},
                         labels.describe_sysbench("cpu", "9.9"))
        self.assertEqual({}, collect._plan_index({"workloads": [{"nonsense": 1}]}))
