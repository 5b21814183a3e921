"""The dynamic run count with the real sysbench of this host (sysbench cpu, 1 s runs)."""

import testtools

from rally_vmct.workloads import plan
from rally_vmct.workloads import repeat
from rally_vmct.workloads import runner
from tests.functional import test_runner_local


class RealRepetitionTestCase(testtools.TestCase):

    def run_cpu(self, policy):
        (cpu,) = plan.parse_plan([{"sysbench": "cpu", "max_prime": 2000, "time": 1}])
        result = runner.run_workload(test_runner_local.local_execute, cpu, "1.0",
                                     timeout=30, policy=policy)
        self.assertTrue(result.ok, result.error)
        return result

    def test_stops_at_the_cv_target_or_max_runs(self):
        # A CPU-bound loop on an idle core varies by well under 10 % from run to run.
        policy = repeat.RunPolicy(min_runs=2, max_runs=4, cv_target=10)
        result = self.run_cpu(policy)
        values = result.primary_values()
        self.assertGreaterEqual(len(values), 2)
        self.assertLessEqual(len(values), 4)
        cv = policy.cv_percent(values)
        if len(values) < 4:
            self.assertLessEqual(cv, 10)
            self.assertIn("<= cv_target 10 %", result.stop_reason)
        # every earlier prefix (from min_runs on) was still above the target
        for n in range(2, len(values)):
            self.assertGreater(policy.cv_percent(values[:n]), 10)
        self.assertAlmostEqual(sum(values) / len(values),
                               result.metrics["events_per_second"].value)

    def test_an_unreachable_target_stops_at_max_runs(self):
        policy = repeat.RunPolicy(min_runs=1, max_runs=3, cv_target=1e-6)
        result = self.run_cpu(policy)
        self.assertEqual(3, len(result.runs))
        self.assertIn("max_runs 3 reached", result.stop_reason)
