"""VMCT.boot_and_check_actions against the scripted fake Nova on a fake clock."""

from oslo_config import cfg
from rally import plugins
import testtools

from rally_vmct.timing import waiter
from rally_vmct import opts
from rally_vmct.task.scenarios import conformance
from tests.unit.timing import fakes
from tests.unit.task.scenarios import test_lifecycle

KIND = dict(test_lifecycle.KIND, name="docker")
RUNNING, SHUTDOWN = fakes.RUNNING, fakes.SHUTDOWN


class ConformanceTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()
        self.addCleanup(cfg.CONF.clear_override, "reboot_timeout", opts.GROUP)
        self.clock = fakes.FakeClock()
        self.nova = fakes.FakeNova(self.clock)

    def make(self):
        ctx = {"task": {"uuid": "task-uuid"}, "owner_id": "owner-uuid", "iteration": 1,
               "user": {"credential": test_lifecycle.CREDENTIAL},
               "tenant": {"networks": [{"id": "net-1"}]}}
        scenario = conformance.BootAndCheckActions(ctx, clients=fakes.FakeClients(self.nova))
        scenario.clock = self.clock
        return scenario

    def run_checks(self, *checks, fails=False):
        s = self.make()
        if fails:
            e = self.assertRaises(conformance.CheckFailed, s.run, dict(KIND), list(checks))
            self.error = str(e)
        else:
            s.run(dict(KIND), list(checks))
        [table] = [c for c in s._output["complete"] if "action checks" in c["title"]]
        self.assertEqual("docker: action checks", table["title"])
        self.assertEqual(conformance.CHECKS_COLUMNS, table["data"]["cols"])
        self.scenario = s
        return [dict(zip(conformance.CHECKS_COLUMNS, row)) for row in table["data"]["rows"]]

    def posts(self):
        return [what for _, what in self.nova.requests
                if what.startswith(("POST", "DELETE"))]


class TestDone(ConformanceTestCase):

    def test_rescue_suspend_pause_done_and_undone(self):
        rows = self.run_checks({"action": "rescue", "expect": "done"},
                               {"action": "suspend", "expect": "done"},
                               {"action": "pause"})
        self.assertEqual(["rescue", "suspend", "pause"], [r["action"] for r in rows])
        self.assertEqual(["done"] * 3, [r["outcome"] for r in rows])
        self.assertEqual(["yes"] * 3, [r["ok"] for r in rows])
        self.assertEqual(["done", "done", "either"], [r["expected"] for r in rows])
        self.assertIn("RESCUE, then unrescue: ACTIVE", rows[0]["detail"])
        self.assertIn("SUSPENDED, then resume", rows[1]["detail"])
        for row in rows:
            self.assertTrue(row["state after"].startswith("ACTIVE (task_state=None"), row)
        # 2 s to RESCUE + 1 s back, each seen by a poll at most 0.2 s later
        self.assertGreaterEqual(rows[0]["seconds"], 3.0)
        self.assertLessEqual(rows[0]["seconds"], 3.4 + 1e-9)
        self.assertEqual(
            ["POST /servers", "POST /servers/id/action rescue",
             "POST /servers/id/action unrescue", "POST /servers/id/action suspend",
             "POST /servers/id/action resume", "POST /servers/id/action pause",
             "POST /servers/id/action unpause", "POST /servers/id/action delete"], self.posts())
        names = [a["name"] for a in self.scenario.atomic_actions()]
        self.assertEqual(["vmct.build", "vmct.check_rescue", "vmct.check_suspend",
                          "vmct.check_pause", "vmct.delete"], names)

    def test_attach_interface_done_waits_for_the_detach(self):
        [row] = self.run_checks({"action": "attach_interface", "expect": "done"})
        self.assertEqual(("done", "yes"), (row["outcome"], row["ok"]))
        self.assertIn("port port-2 attached on network net-1, listed, detached", row["detail"])
        self.assertGreaterEqual(row["seconds"], self.nova.detach_seconds)
        self.assertIn("DELETE os-interface", self.posts())

    def test_detach_that_never_ends_fails_the_check(self):
        cfg.CONF.set_override("reboot_timeout", 10.0, opts.GROUP)
        self.nova.detach_seconds = 1e6
        [row] = self.run_checks({"action": "attach_interface"}, fails=True)
        self.assertEqual(("error", "no"), (row["outcome"], row["ok"]))
        self.assertIn("port port-2 still attached", row["detail"])
        self.assertIn("attach_interface", self.error)

    def test_console_url_done(self):
        [row] = self.run_checks({"action": "console_url", "expect": "done",
                                 "console_type": "novnc"})
        self.assertEqual("done", row["outcome"])
        self.assertIn("novnc console at http://127.0.0.1:6080/", row["detail"])


class TestRefused(ConformanceTestCase):

    def test_api_refusals_recorded_and_server_checked(self):
        self.nova.refusals = {
            "attach_interface": fakes.APIError(400, "Network interface attach is not "
                                                    "supported for instance"),
            "console_url": fakes.APIError(400, "Unavailable console type novnc."),
            "suspend": fakes.APIError(409, "Cannot 'suspend' instance")}
        rows = self.run_checks({"action": "attach_interface", "expect": "refused"},
                               {"action": "console_url", "expect": "refused"},
                               {"action": "suspend"})
        self.assertEqual(["refused"] * 3, [r["outcome"] for r in rows])
        self.assertEqual(["yes"] * 3, [r["ok"] for r in rows])
        self.assertIn("HTTP 400: Network interface attach is not supported", rows[0]["detail"])
        self.assertIn("the API refused a novnc console: HTTP 400", rows[1]["detail"])
        self.assertIn("the API refused suspend: HTTP 409", rows[2]["detail"])
        # the server is looked at after every refusal, and deleted at the end
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)

    def test_compute_refusal_leaves_the_server_active(self):
        self.nova.scripts["rescue"] = [(0.0, "ACTIVE", "rescuing", RUNNING),
                                       (1.5, "ACTIVE", None, RUNNING)]
        self.nova.compute_refuses = {"rescue"}
        [row] = self.run_checks({"action": "rescue", "expect": "refused"})
        self.assertEqual(("refused", "yes"), (row["outcome"], row["ok"]))
        self.assertIn("the compute refused rescue, the server stayed ACTIVE", row["detail"])
        self.assertIn("event compute_rescue_instance: Error", row["detail"])
        self.assertNotIn("POST /servers/id/action unrescue", self.posts())

    def test_either_accepts_both(self):
        self.nova.refusals = {"console_url": fakes.APIError(400, "no console")}
        rows = self.run_checks({"action": "console_url", "expect": "either"},
                               {"action": "pause", "expect": "either"})
        self.assertEqual([("refused", "yes"), ("done", "yes")],
                         [(r["outcome"], r["ok"]) for r in rows])


class TestFailures(ConformanceTestCase):

    def test_unexpected_outcome_fails_but_later_checks_run(self):
        self.nova.refusals = {"attach_interface": fakes.APIError(400, "not supported")}
        rows = self.run_checks({"action": "attach_interface", "expect": "done"},
                               {"action": "console_url", "expect": "refused"}, fails=True)
        self.assertEqual([("refused", "no"), ("done", "no")],
                         [(r["outcome"], r["ok"]) for r in rows])
        self.assertTrue(rows[0]["detail"].startswith("expected done, got refused; "))
        self.assertIn("attach_interface, console_url", self.error)
        self.assertIn("docker: action checks", self.error)
        # a failed iteration still deletes its server
        self.assertEqual(1, len(self.nova.servers.deleted))

    def test_action_that_breaks_the_instance_stops_the_checks(self):
        self.nova.scripts["rescue"] = [(0.0, "ACTIVE", "rescuing", RUNNING),
                                       (1.0, "ERROR", None, SHUTDOWN)]
        rows = self.run_checks({"action": "rescue", "expect": "either"},
                               {"action": "pause"}, fails=True)
        [row] = rows
        self.assertEqual(("error", "no"), (row["outcome"], row["ok"]))
        self.assertIn("rescue put server", row["detail"])
        self.assertIn("in ERROR: Nova fault 500", row["detail"])
        self.assertTrue(row["state after"].startswith("ERROR"))
        self.assertNotIn("POST /servers/id/action pause", self.posts())

    def test_refusal_that_leaves_a_task_state_times_out(self):
        cfg.CONF.set_override("reboot_timeout", 30.0, opts.GROUP)
        self.nova.scripts["suspend"] = [(0.0, "ACTIVE", "suspending", RUNNING)]
        [row] = self.run_checks({"action": "suspend", "expect": "either"}, fails=True)
        self.assertEqual(("error", "no"), (row["outcome"], row["ok"]))
        self.assertIn("server srv-1 to settle after suspend", row["detail"])
        self.assertIn("task_state=suspending", row["state after"])

    def test_powered_off_after_the_action_fails(self):
        self.nova.scripts["pause"] = [(0.0, "ACTIVE", "pausing", RUNNING),
                                      (0.5, "ACTIVE", None, SHUTDOWN)]
        [row] = self.run_checks({"action": "pause", "expect": "either"}, fails=True)
        self.assertEqual("no", row["ok"])
        self.assertIn("the server is ACTIVE (task_state=None, power_state=4) after pause",
                      row["detail"])


class TestHelpers(testtools.TestCase):

    def test_api_error(self):
        self.assertEqual("HTTP 409: Cannot 'rescue' (HTTP 409)",
                         conformance.api_error(fakes.APIError(409, "Cannot 'rescue'")))
        self.assertIsNone(conformance.api_error(RuntimeError("x")))
        self.assertIsNone(conformance.api_error(waiter.WaitTimeout("x")))

    def test_verdict(self):
        self.assertTrue(conformance.verdict("either", "refused"))
        self.assertTrue(conformance.verdict("done", "done"))
        self.assertFalse(conformance.verdict("refused", "done"))
        self.assertFalse(conformance.verdict("either", "error"))
