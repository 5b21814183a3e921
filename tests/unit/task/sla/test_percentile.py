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

    def test_errors_are_left_out_and_merge(self):
        a = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 90, "max_seconds": 5})
        a.add_iteration(_iteration(1.0))
        a.add_iteration(_iteration(100.0, error=["x"]))
        self.assertTrue(a.success)
        b = percentile.PercentileOfAtomicAction(
            {"action": "vmct.build", "percentile": 90, "max_seconds": 5})
        b.add_iteration(_iteration(9.0))
        self.assertFalse(a.merge(b))
        self.assertEqual([1.0, 9.0], a.values)

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
        self.assertIn("no successful 'nova.x'", none.details())

    def test_schema(self):
        schema = percentile.PercentileOfAtomicAction.CONFIG_SCHEMA
        jsonschema.validate({"action": "a", "percentile": 99.9, "max_seconds": 0.5}, schema)
        for bad in ({"action": "a", "percentile": 100, "max_seconds": 1},
                    {"action": "a", "percentile": 95, "max_seconds": 0},
                    {"action": "", "percentile": 95, "max_seconds": 1},
                    {"action": "a", "percentile": 95},
                    {"action": "a", "percentile": 95, "max_seconds": 1, "confidence": 1}):
            self.assertRaises(jsonschema.ValidationError, jsonschema.validate, bad, schema)
