"""rally_vmct.timing.waiter against a scripted fake Nova on a fake clock."""

import testtools

from rally_vmct.timing import waiter
from tests.unit.timing import fakes


class WaiterTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = fakes.FakeClock()

    def make(self, nova=None, interval=0.2, max_interval=2.0, rps=5.0):
        self.nova = nova or fakes.FakeNova(self.clock)
        self.server = self.nova.servers.create("s", "img", "flv")
        pacer = waiter.Pacer(interval, max_interval, rps, clock=self.clock)
        return waiter.ServerWaiter(self.nova.servers.get, self.server.id, pacer=pacer)


class TestServerWaiter(WaiterTestCase):

    def test_build_records_transitions_with_poll_resolution(self):
        w = self.make()
        t0 = self.clock.now
        obs = w.wait_for_status("ACTIVE", timeout=60, started_at=t0)
        # ACTIVE at +2.0 s; polls at +0.0, +0.2, ... so it is seen at +2.0 exactly.
        self.assertAlmostEqual(2.0, obs.at - t0, places=6)
        self.assertAlmostEqual(0.2, obs.resolution, places=6)
        self.assertEqual("ACTIVE", obs.state.status)
        statuses = [(tr.old, tr.new) for tr in w.transitions if tr.field == "status"]
        self.assertEqual([(None, "BUILD"), ("BUILD", "ACTIVE")], statuses)
        tasks = [tr.new for tr in w.transitions if tr.field == "task_state"]
        self.assertEqual(["scheduling", "spawning", None], tasks)
        spawning = [tr for tr in w.transitions if tr.new == "spawning"][0]
        self.assertAlmostEqual(0.6, spawning.at - t0, places=6)  # first poll after +0.5
        self.assertAlmostEqual(0.4, spawning.since - t0, places=6)
        # 11 polls (0.0 .. 2.0), never faster than the interval
        self.assertEqual(11, obs.polls)
        self.assertTrue(all(abs(s - 0.2) < 1e-9 for s in self.clock.sleeps))

    def test_rate_cap_wins_over_a_shorter_interval(self):
        w = self.make(interval=0.01, rps=4.0)
        t0 = self.clock.now
        w.wait_for_status("ACTIVE", timeout=60)
        gets = [t for t, what in self.nova.requests if what == "GET /servers/id"]
        gaps = [b - a for a, b in zip(gets, gets[1:])]
        self.assertEqual(9, len(gets))                    # 0, 0.25, ... 2.0
        self.assertTrue(all(abs(g - 0.25) < 1e-9 for g in gaps), gaps)
        self.assertLessEqual(len(gets), 4 * (gets[-1] - t0) + 1)

    def test_very_fast_transition_is_seen_on_first_poll(self):
        nova = fakes.FakeNova(self.clock, create=[(0.0, "ACTIVE", None, 1)])
        w = self.make(nova)
        t0 = self.clock.now
        obs = w.wait_for_status("ACTIVE", timeout=60, started_at=t0)
        self.assertEqual(1, obs.polls)
        self.assertEqual(t0, obs.at)
        self.assertEqual(t0, obs.since)

    def test_error_status_raises_with_nova_fault(self):
        nova = fakes.FakeNova(self.clock, create=[(0.0, "BUILD", "scheduling", 0),
                                                  (0.7, "ERROR", None, 0)])
        w = self.make(nova)
        e = self.assertRaises(waiter.ServerFault, w.wait_for_status, "ACTIVE", 60)
        self.assertIn("No valid host was found", str(e))
        self.assertIn("went to ERROR while waiting for server to become ACTIVE", str(e))
        self.assertIn(self.server.id, str(e))
        self.assertEqual(500, e.fault["code"])

    def test_error_before_its_fault_is_read_again_for_the_fault(self):
        nova = fakes.FakeNova(self.clock, create=[(0.0, "BUILD", "scheduling", 0),
                                                  (0.7, "ERROR", None, 0)])
        nova.fault_delay = 0.5      # polls at 0.8 and 1.0 see ERROR without it
        w = self.make(nova)
        e = self.assertRaises(waiter.ServerFault, w.wait_for_status, "ACTIVE", 60)
        self.assertIn("No valid host was found", str(e))
        self.assertGreaterEqual(self.clock.now, 1.2)

    def test_error_without_a_fault_says_so_after_a_few_reads(self):
        nova = fakes.FakeNova(self.clock, create=[(0.0, "BUILD", "scheduling", 0),
                                                  (0.7, "ERROR", None, 0)])
        nova.fault_delay = 1000.0
        w = self.make(nova)
        e = self.assertRaises(waiter.ServerFault, w.wait_for_status, "ACTIVE", 60)
        self.assertIn("no fault recorded by Nova", str(e))
        gets = [t for t, what in self.nova.requests if what == "GET /servers/id"]
        self.assertEqual(5 + waiter.FAULT_READS, len(gets))   # 0.0 .. 0.8, then the reads

    def test_timeout_names_what_and_last_state(self):
        nova = fakes.FakeNova(self.clock, create=[(0.0, "BUILD", "spawning", 0)])
        w = self.make(nova)
        t0 = self.clock.now
        e = self.assertRaises(waiter.WaitTimeout, w.wait_for_status, "ACTIVE", 5.0,
                              "server to become ACTIVE (build)")
        self.assertIn("waiting for server to become ACTIVE (build)", str(e))
        self.assertIn("last seen BUILD (task_state=spawning", str(e))
        self.assertGreaterEqual(self.clock.now - t0, 5.0)
        self.assertLess(self.clock.now - t0, 5.3)

    def test_transient_api_errors_back_off_then_recover(self):
        w = self.make(fakes.FakeNova(self.clock, create=[(0.0, "BUILD", "spawning", 0),
                                                         (10.0, "ACTIVE", None, 1)]))
        self.nova.errors = [fakes.APIError(503)] * 5
        t0 = self.clock.now
        obs = w.wait_for_status("ACTIVE", timeout=60)
        gets = [t - t0 for t, what in self.nova.requests if what == "GET /servers/id"]
        gaps = [round(b - a, 6) for a, b in zip(gets, gets[1:])]
        # 0.4, 0.8, 1.6, 2.0 (capped), 2.0, then back to 0.2 after the first success
        self.assertEqual([0.4, 0.8, 1.6, 2.0, 2.0], gaps[:5])
        self.assertEqual(0.2, gaps[5])
        self.assertEqual(5, w.pacer.errors)
        self.assertEqual("ACTIVE", obs.state.status)

    def test_permanent_api_error_is_raised_at_once(self):
        w = self.make()
        self.nova.errors = [fakes.APIError(403, "Policy doesn't allow")]
        e = self.assertRaises(fakes.APIError, w.wait_for_status, "ACTIVE", 60)
        self.assertEqual(403, e.code)
        self.assertEqual(1, w.polls + 1)   # the failing GET was the only one

    def test_api_errors_until_timeout_mention_the_error(self):
        w = self.make()
        self.nova.errors = [fakes.APIError(500, "db gone")] * 100
        e = self.assertRaises(waiter.WaitTimeout, w.wait_for_status, "ACTIVE", 10)
        self.assertIn("API kept failing while waiting for server to become ACTIVE", str(e))
        self.assertIn("db gone", str(e))

    def test_connection_errors_are_transient(self):
        class ConnectFailure(Exception):
            pass
        self.assertTrue(waiter.is_transient(ConnectFailure("refused")))
        self.assertTrue(waiter.is_transient(ConnectionResetError()))
        self.assertTrue(waiter.is_transient(fakes.APIError(429)))
        self.assertFalse(waiter.is_transient(fakes.APIError(401)))
        self.assertFalse(waiter.is_transient(KeyError("x")))

    def test_wait_gone(self):
        w = self.make()
        w.wait_for_status("ACTIVE", timeout=60)
        t0 = self.clock.now
        self.nova.servers.delete(self.server)
        obs = w.wait_gone(timeout=60, started_at=t0)
        self.assertTrue(obs.state.gone)
        self.assertAlmostEqual(1.0, obs.at - t0, places=6)
        self.assertEqual(waiter.GONE, w.transitions[-1].new if
                         w.transitions[-1].field == "status" else
                         [t for t in w.transitions if t.field == "status"][-1].new)

    def test_gone_while_waiting_for_a_state(self):
        nova = fakes.FakeNova(self.clock, create=[(0.0, "BUILD", None, 0),
                                                  (0.5, "GONE", None, None)])
        w = self.make(nova)
        e = self.assertRaises(waiter.ServerGone, w.wait_for_status, "ACTIVE", 60)
        self.assertIn("disappeared", str(e))

    def test_bad_pacer_arguments(self):
        e = self.assertRaises(ValueError, waiter.Pacer, 0)
        self.assertIn("poll interval", str(e))
        e = self.assertRaises(ValueError, waiter.Pacer, 0.2, 2, 0)
        self.assertIn("max_requests_per_second", str(e))


class TestWaitUntil(testtools.TestCase):

    def test_probe_success_time_and_attempts(self):
        clock = fakes.FakeClock()
        ready_at = clock.now + 1.05
        result = waiter.wait_until(lambda: (clock.now >= ready_at, "refused"), 10, 0.2,
                                   "port 22", clock=clock, started_at=clock.now)
        self.assertAlmostEqual(1.2, result.at - 100.0, places=6)
        self.assertAlmostEqual(1.0, result.since - 100.0, places=6)
        self.assertEqual(7, result.attempts)

    def test_probe_timeout_keeps_last_detail(self):
        clock = fakes.FakeClock()
        e = self.assertRaises(waiter.WaitTimeout, waiter.wait_until,
                              lambda: (False, "No route to host"), 3, 0.5, "TCP 10.0.0.5:22",
                              clock=clock)
        self.assertIn("TCP 10.0.0.5:22", str(e))
        self.assertIn("No route to host", str(e))

    def test_slow_attempts_are_not_followed_by_extra_sleep(self):
        clock = fakes.FakeClock()

        def check():
            clock.advance(0.5)       # an attempt that takes longer than the interval
            return clock.now >= 101.4, "slow"
        result = waiter.wait_until(check, 10, 0.2, "x", clock=clock)
        self.assertEqual(3, result.attempts)
        self.assertEqual([], clock.sleeps)
