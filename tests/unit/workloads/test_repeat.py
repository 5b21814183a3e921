"""The dynamic run count: validation, when to stop, how it is described."""

import testtools

from rally_vmct.workloads import repeat


class RunPolicyTestCase(testtools.TestCase):

    def test_defaults_one_run(self):
        policy = repeat.RunPolicy()
        self.assertFalse(policy.done([]))
        self.assertTrue(policy.done([100.0]))
        self.assertEqual("1", policy.describe())
        self.assertEqual("1 run(s) as asked (no CV)", policy.stop_reason([100.0]))

    def test_fixed_count_without_cv_target(self):
        policy = repeat.RunPolicy(min_runs=3)
        self.assertFalse(policy.done([1.0, 1.0]))
        self.assertTrue(policy.done([1.0, 1.0, 1.0]))
        self.assertEqual("3", policy.describe())
        # Without a CV target nothing stops early: max_runs runs.
        policy = repeat.RunPolicy(min_runs=2, max_runs=4)
        self.assertFalse(policy.done([5.0, 5.0, 5.0]))
        self.assertTrue(policy.done([5.0, 5.0, 5.0, 5.0]))
        self.assertEqual("4", policy.describe())

    def test_stops_at_the_cv_target(self):
        policy = repeat.RunPolicy(min_runs=3, max_runs=5, cv_target=2)
        self.assertFalse(policy.done([100.0, 100.0]))        # below min_runs
        self.assertTrue(policy.done([100.0, 101.0, 99.0]))   # CV 1 %
        self.assertEqual("CV 1 % <= cv_target 2 %", policy.stop_reason([100.0, 101.0, 99.0]))
        self.assertEqual("3-5 (cv_target 2 %)", policy.describe())

    def test_stops_at_max_runs_when_noisy(self):
        policy = repeat.RunPolicy(min_runs=1, max_runs=3, cv_target=0.5)
        self.assertFalse(policy.done([100.0]))               # one value has no CV
        self.assertFalse(policy.done([100.0, 120.0]))
        self.assertTrue(policy.done([100.0, 120.0, 80.0]))
        self.assertEqual("max_runs 3 reached (CV 20 %; cv_target 0.5 %)",
                         policy.stop_reason([100.0, 120.0, 80.0]))

    def test_zero_mean_never_meets_the_target(self):
        policy = repeat.RunPolicy(min_runs=2, max_runs=3, cv_target=5)
        self.assertFalse(policy.done([0.0, 0.0]))
        self.assertTrue(policy.done([0.0, 0.0, 0.0]))

    def test_bad_arguments_name_themselves(self):
        cases = [({"min_runs": 0}, "Argument 'min_runs' must be an integer >= 1"),
                 ({"min_runs": True}, "Argument 'min_runs'"),
                 ({"max_runs": 0}, "Argument 'max_runs' must be an integer >= 1"),
                 ({"min_runs": 3, "max_runs": 2}, "Argument 'max_runs' (2) must be >= "
                                                  "min_runs (3)"),
                 ({"min_runs": 2, "max_runs": 4, "cv_target": 0},
                  "Argument 'cv_target' must be a number of percent > 0"),
                 ({"max_runs": 4, "cv_target": "2%"}, "Argument 'cv_target'"),
                 ({"min_runs": 3, "cv_target": 2},
                  "Argument 'cv_target' needs max_runs > min_runs")]
        for kwargs, message in cases:
            error = self.assertRaises(repeat.RunPolicyError, repeat.RunPolicy, **kwargs)
            self.assertIn(message, str(error), kwargs)
