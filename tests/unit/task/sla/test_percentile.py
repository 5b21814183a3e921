"""The vmct_percentile SLA on hand-built iterations (Rally's iteration dicts)."""

import jsonschema
import testtools

from rally_vmct.task.sla import percentile
from rally_vmct import stats


def _iteration(seconds, name="vmct.build", error=None, nested=False):
    action = {"name": name, "started_at": 10.0, "finished_at": 10.0 + seconds,
              "children": []}
    if nested:
        action = {"name": "outer", "started_at": 10.0, "finished_at": 11.0 + seconds,
                  "children": [action]}
    return {"error": error or [], "atomic_actions": [action]}


class TestPercentileSLA(testtools.TestCase):

    def test_percentile_as_rallys_report_and_interval_in_details(self):
        values = [float(v) for v in range(1, 21)]
        sla = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 50, "max_seconds": 15})
        for v in values:
            sla.add_iteration(_iteration(v, nested=v % 2 == 0))
        self.assertTrue(sla.success)
        interval = stats.quantile_interval(values, 50)
        details = sla.details()
        self.assertTrue(details.startswith("p50 of vmct.build = 10.500 s (N = 20), "
                                           "limit 15 s; 95 %% interval (order statistics) "
                                           "[%.3f, %.3f]" % (interval.low, interval.high)),
                        details)
        self.assertIn("the limit lies above the interval: met at 95 %", details)

    def test_errored_iterations_count_and_merge(self):
        a = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 50, "max_seconds": 5})
        a.add_iteration(_iteration(1.0))
        # the build succeeded, a later step of the iteration failed: the build counts
        a.add_iteration(_iteration(100.0, error=["x"]))
        self.assertFalse(a.success)
        b = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 50, "max_seconds": 5})
        b.add_iteration(_iteration(2.0))
        b.add_iteration(_iteration(3.0))
        self.assertTrue(a.merge(b))
        self.assertEqual([1.0, 100.0, 2.0, 3.0], a.values)

    def test_time_outs_count_as_longer_than_any_limit(self):
        # eight 10 s builds and two that failed at their 300 s time-out: p95 is a failure
        sla = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 95, "max_seconds": 30})
        for _ in range(8):
            sla.add_iteration(_iteration(10.0))
        for _ in range(2):
            it = _iteration(300.0, error=["TimeoutException"])
            it["atomic_actions"][0]["failed"] = True
            sla.add_iteration(it)
        self.assertFalse(sla.success)
        self.assertIn("p95 of vmct.build = failed (N = 10, 2 failed or unfinished, "
                      "counted as longer than any limit)", sla.details())
        # the median is still a real duration
        median = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 50, "max_seconds": 30})
        median.merge(sla)
        self.assertTrue(median.success)

    def test_unfinished_actions_are_not_zero_seconds(self):
        sla = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 50, "max_seconds": 5})
        for _ in range(3):
            it = _iteration(1.0)
            del it["atomic_actions"][0]["finished_at"]
            sla.add_iteration(it)
        self.assertFalse(sla.success)
        self.assertIn("= failed (N = 3, 3 failed or unfinished", sla.details())

    def test_strict_and_missing(self):
        sla = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 95, "max_seconds": 50,
             "require_upper_bound": True})
        for v in range(10):
            sla.add_iteration(_iteration(1.0 + v))
        self.assertFalse(sla.success)            # an upper bound of p95 needs N >= 72
        self.assertIn("none below N = 72", sla.details())
        none = percentile.PercentileOfAtomicAction(
            {"action": "nova.x", "percentile": 95, "max_seconds": 5})
        self.assertFalse(none.add_iteration(_iteration(1.0)))
        self.assertIn("no 'nova.x' in these iterations", none.details())

    def test_schema(self):
        schema = percentile.PercentileOfAtomicAction.CONFIG_SCHEMA
        jsonschema.validate({"action": "a", "percentile": 99.9, "max_seconds": 0.5}, schema)
        for bad in ({"action": "a", "percentile": 100, "max_seconds": 1},
                    {"action": "a", "percentile": 95, "max_seconds": 0},
                    {"action": "", "percentile": 95, "max_seconds": 1},
                    {"action": "a", "percentile": 95},
                    {"action": "a", "percentile": 95, "max_seconds": 1, "confidence": 1}):
            self.assertRaises(jsonschema.ValidationError, jsonschema.validate, bad, schema)
