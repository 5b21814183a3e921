"""The ``vmct_percentile`` SLA under real Rally: ``rally task start`` with Dummy.dummy.

Rally's own Dummy.dummy times two nested atomic actions, ``foo`` and ``bar`` (bar
inside foo), each about ``sleep`` seconds. A private Rally DB (RallyHome) runs one
task whose workloads carry the SLA: met, exceeded, an action that never ran, a
strict one that needs more iterations than it has, and actions that failed; then a
task with a bad config.
"""

import json
import os


from tests.functional import rally_home


def _workload(sla, times=10, sleep=0.02):
    return {"scenario": {"Dummy.dummy": {"sleep": sleep}},
            "runner": {"constant": {"times": times, "concurrency": 2}},
            "sla": {"vmct_percentile": sla}}


TASK = {"version": 2, "title": "vmct_percentile functional test", "subtasks": [
    {"title": "percentile sla", "workloads": [
        _workload({"action": "bar", "percentile": 50, "max_seconds": 5}),
        _workload({"action": "foo", "percentile": 95, "max_seconds": 0.001}),
        _workload({"action": "vmct.build", "percentile": 95, "max_seconds": 30}),
        _workload({"action": "bar", "percentile": 95, "max_seconds": 5,
                   "require_upper_bound": True}),
        # every first dummy_fail_test raises inside its timer: Rally marks it failed
        {"scenario": {"Dummy.dummy_random_fail_in_atomic": {"exception_probability": 1}},
         "runner": {"constant": {"times": 4, "concurrency": 2}},
         "sla": {"vmct_percentile": {"action": "dummy_fail_test", "percentile": 50,
                                     "max_seconds": 5}}},
    ]}]}


class TestPercentileSLA(rally_home.RallyHomeTestCase):

    @classmethod
    def prepare(cls, home):
        home.rally("env", "create", "--name", "vmct-sla", "--no-use")
        path = os.path.join(home.path, "task.json")
        with open(path, "w") as f:
            json.dump(TASK, f)
        cls.start = home.rally("task", "start", path, "--env", "vmct-sla", "--no-use",
                               check=False)
        uuid = home.rally("task", "list", "--env", "vmct-sla", "--uuids-only").stdout.split()[-1]
        check = home.rally("task", "sla-check", "--uuid", uuid, "--json", check=False)
        cls.sla_rc = check.returncode
        cls.results = json.loads(check.stdout[check.stdout.index("["):])

    def criteria(self):
        return [r for r in self.results if r["criterion"] == "vmct_percentile"]

    def test_task_fails_on_the_sla(self):
        self.assertEqual(2, self.start.returncode, self.start.stdout[-2000:])
        self.assertNotEqual(0, self.sla_rc)
        self.assertEqual(["PASS", "FAIL", "FAIL", "FAIL", "FAIL"],
                         [r["status"] for r in self.criteria()])

    def test_met_with_its_interval(self):
        detail = self.criteria()[0]["detail"]
        # a nested action (bar inside foo), 10 samples: p50's interval at 95 % exists
        self.assertTrue(detail.startswith("p50 of bar = 0.0"), detail)
        self.assertIn("(N = 10), limit 5 s; 95 % interval (order statistics) [0.0", detail)
        self.assertIn("the limit lies above the interval: met at 95 %", detail)
        self.assertTrue(detail.endswith("Passed"), detail)

    def test_exceeded(self):
        detail = self.criteria()[1]["detail"]
        self.assertIn("p95 of foo", detail)
        # p95 at N = 10: a lower bound, no upper bound before N = 72
        self.assertIn("none below N = 72]", detail)
        self.assertIn("the limit lies below the interval: exceeded at 95 %", detail)
        self.assertTrue(detail.endswith("Failed"), detail)

    def test_an_action_that_never_ran_fails_naming_it(self):
        self.assertIn("no 'vmct.build' in these iterations",
                      self.criteria()[2]["detail"])

    def test_failed_actions_count_as_longer_than_any_limit(self):
        # Rally's own record of an action that raised (failed: true), in errored
        # iterations: never left out, never 0 s
        detail = self.criteria()[4]["detail"]
        self.assertTrue(detail.startswith(
            "p50 of dummy_fail_test = failed (N = 4, 4 failed or unfinished, counted as "
            "longer than any limit)"), detail)
        self.assertTrue(detail.endswith("Failed"), detail)

    def test_strict_needs_an_upper_bound(self):
        detail = self.criteria()[3]["detail"]
        self.assertIn("pass needs the upper bound within the limit", detail)
        self.assertIn("none below N = 72", detail)

    def test_bad_config_is_rejected_naming_the_field(self):
        bad = {"version": 2, "title": "bad", "subtasks": [{"title": "bad", "workloads": [
            _workload({"action": "bar", "percentile": 150, "max_seconds": 5})]}]}
        path = os.path.join(self.home.path, "bad.json")
        with open(path, "w") as f:
            json.dump(bad, f)
        proc = self.home.rally("task", "validate", path, "--env", "vmct-sla", check=False)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn("150 is greater than or equal to the maximum of 100", proc.stdout)
        self.assertIn("['percentile']", proc.stdout)
        bad["subtasks"][0]["workloads"] = [_workload({"action": "bar", "percentile": 95,
                                                      "max_secs": 5})]
        with open(path, "w") as f:
            json.dump(bad, f)
        proc = self.home.rally("task", "validate", path, "--env", "vmct-sla", check=False)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn("'max_seconds' is a required property", proc.stdout)
        bad["subtasks"][0]["workloads"] = [_workload({"action": "bar", "percentile": 95,
                                                      "max_seconds": 5, "p": 1})]
        with open(path, "w") as f:
            json.dump(bad, f)
        proc = self.home.rally("task", "validate", path, "--env", "vmct-sla", check=False)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn("('p' was unexpected)", proc.stdout)
