"""rally_vmct.timing.watcher: batched polling against the fake Nova's changes-since list."""

import statistics
import threading
from unittest import mock

import testtools

from rally_vmct.timing import waiter
from rally_vmct.timing import watcher
from tests.unit.timing import fakes

SETTLED_OR_LEFT = "server to leave ACTIVE"


def left_active(state):
    return state.status != waiter.ACTIVE or not state.settled


class Lifecycle:
    """One server built, hard rebooted, stopped, started and deleted, as the session does.

    ``rows``: its transitions, each with its phase and its times from the phase's
    request, so that runs whose phases start at other times compare equal.
    """

    def __init__(self, clock, nova, watch=None):
        self.clock, self.nova = clock, nova
        self.pacer = waiter.Pacer(0.2, 2.0, 5.0, clock=clock)
        self.watch = watch
        self.marks = []

    def waiter_of(self, server_id):
        return waiter.ServerWaiter(self.nova.servers.get, server_id, pacer=self.pacer,
                                   watcher=self.watch)

    def phase(self, name, request, *waits):
        self.pacer.before_action()
        start = self.clock.monotonic()
        self.marks.append((len(self.waiter.transitions) if self.marks else 0, name, start))
        request()
        self.pacer.sent()
        if not hasattr(self, "waiter"):
            self.waiter = self.waiter_of(self.server.id)
        seen = start
        for wait in waits:
            seen = wait(seen).at

    def create(self):
        self.server = self.nova.servers.create("s", "img", "flv")

    def run(self):
        servers = self.nova.servers
        active = self.until_status(waiter.ACTIVE)
        self.phase("build", self.create, active)
        self.phase("reboot", lambda: servers.reboot(self.server, "HARD"),
                   lambda t: self.waiter.wait_for(left_active, 60, SETTLED_OR_LEFT,
                                                  started_at=t), active)
        self.phase("stop", lambda: servers.stop(self.server), self.until_status(waiter.SHUTOFF))
        self.phase("start", lambda: servers.start(self.server), active)
        self.phase("delete", lambda: servers.delete(self.server),
                   lambda t: self.waiter.wait_gone(60, started_at=t))
        return self

    def until_status(self, status):
        return lambda t: self.waiter.wait_for_status(status, 60, started_at=t)

    @property
    def rows(self):
        rows = []
        marks = list(self.marks)
        for index, tr in enumerate(self.waiter.transitions):
            while marks and marks[0][0] <= index:
                _, name, start = marks.pop(0)
            rows.append((name, tr.field, tr.old, tr.new, round(tr.at - start, 6),
                         round(tr.since - start, 6)))
        return rows


def requests(nova, what):
    return len([1 for _, sent in nova.requests if sent == what])


class WatcherTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = fakes.FakeClock()
        self.nova = fakes.FakeNova(self.clock)

    def watcher(self, margin=2.0, interval=0.2, nova=None):
        return watcher.Watcher(watcher.lister(nova or self.nova), interval=interval,
                               clock=self.clock, margin=margin)

    def waiters(self, count, watch):
        found = []
        for _ in range(count):
            server = self.nova.servers.create("s", "img", "flv")
            found.append(waiter.ServerWaiter(self.nova.servers.get, server.id,
                                             pacer=waiter.Pacer(clock=self.clock),
                                             watcher=watch))
        return found


class TestSameTransitionsAsPerServer(WatcherTestCase):

    def per_server(self):
        clock = fakes.FakeClock()
        return Lifecycle(clock, fakes.FakeNova(clock)).run()

    def test_lifecycle_transitions_are_identical(self):
        expected = self.per_server()
        got = Lifecycle(self.clock, self.nova, self.watcher()).run()
        self.assertEqual(expected.rows, got.rows)
        self.assertEqual(31, len(got.rows))
        self.assertEqual(("delete", "status", "ACTIVE", waiter.GONE, 1.0, 0.8), got.rows[-4])
        self.assertEqual(0, requests(self.nova, "GET /servers/id"))
        self.assertEqual(expected.waiter.polls, got.waiter.polls)

    def test_whole_second_updated_at_is_covered_by_the_margin(self):
        self.nova.updated_resolution = 1.0          # MySQL's DATETIME
        got = Lifecycle(self.clock, self.nova, self.watcher()).run()
        self.assertEqual(self.per_server().rows, got.rows)

    def test_without_margin_whole_seconds_hide_changes(self):
        self.nova.updated_resolution = 1.0
        lifecycle = Lifecycle(self.clock, self.nova, self.watcher(margin=0.0))
        e = self.assertRaises(waiter.WaitTimeout, lifecycle.run)
        # build's "spawning" at +0.5 s has updated_at +0.0: not listed after +0.2 s
        self.assertNotIn("spawning", [row[3] for row in lifecycle.rows])
        # nor stop's SHUTOFF at +1.5 s: the phase never ends
        self.assertIn("waiting for server to become SHUTOFF", str(e))


class TestBatchedPolling(WatcherTestCase):

    def test_deleted_server_is_gone_and_stays_gone(self):
        watch = self.watcher()
        [w] = self.waiters(1, watch)
        w.wait_for_status(waiter.ACTIVE, 60)
        w.pacer.before_action()
        t0 = self.clock.now
        self.nova.servers.delete(w.server_id)
        w.pacer.sent()
        gone = w.wait_gone(60, started_at=t0)
        self.assertEqual(waiter.GONE, gone.state.status)
        self.assertAlmostEqual(1.0, gone.at - t0, places=6)
        listed = self.nova.servers.list(search_opts={"changes-since": fakes.iso(t0)})
        self.assertEqual(["DELETED"], [s.status for s in listed])  # as Nova lists it
        self.clock.advance(0.5)
        self.assertTrue(w.poll(self.clock.now + 5)[0].gone)
        self.assertEqual(0, requests(self.nova, "GET /servers/id"))

    def test_error_raises_the_fault_from_the_list(self):
        self.nova.scripts["create"] = [(0.0, "BUILD", "scheduling", 0), (0.7, "ERROR", None, 0)]
        [w] = self.waiters(1, self.watcher())
        e = self.assertRaises(waiter.ServerFault, w.wait_for_status, waiter.ACTIVE, 60)
        self.assertIn("No valid host was found", str(e))

    def test_servers_interleaved_share_each_list(self):
        watch = self.watcher()
        ws = self.waiters(4, watch)
        with ws[0].polling(), ws[1].polling(), ws[2].polling(), ws[3].polling():
            for _ in range(12):
                for w in ws:
                    w.poll(self.clock.now + 60)
        self.assertEqual(0, requests(self.nova, "GET /servers/id"))
        lists = requests(self.nova, "GET /servers/detail")
        # one list per round once all four are in (the first round: one each)
        self.assertEqual(4 + 11, lists)
        self.assertEqual(lists, watch.requests)
        self.assertAlmostEqual(lists, sum(w.cost().requests for w in ws), places=9)
        self.assertEqual([waiter.ACTIVE] * 4, [w.state.status for w in ws])
        for w in ws:
            self.assert_bounds_hold(w)

    def assert_bounds_hold(self, w):
        """Every change happened in (since, at], as the script says."""
        record = self.nova.servers.records[w.server_id]
        for tr in w.transitions:
            if tr.old is None and tr.field == "status":
                continue
            if tr.field != "status":
                continue
            changed = [when for when, status, _, _ in record.steps if status == tr.new]
            self.assertTrue(any(tr.since < when <= tr.at for when in changed),
                            (tr, changed))

    def test_requests_per_server_per_second(self):
        watch = self.watcher()
        a, b = self.waiters(2, watch)
        a_start = self.clock.now
        with a.polling():
            a.poll(self.clock.now + 60)                  # list 1: a alone
            b_start = self.clock.now
            with b.polling():
                for _ in range(3):                       # lists 2-4: a and b
                    b.poll(self.clock.now + 60)
                    a.poll(self.clock.now + 60)
            b_end = self.clock.now
            self.clock.advance(0.5)
        self.assertEqual(4, watch.requests)
        self.assertAlmostEqual(1 + 3 / 2, a.cost().requests, places=9)
        self.assertAlmostEqual(3 / 2, b.cost().requests, places=9)
        self.assertAlmostEqual(self.clock.now - a_start, a.cost().seconds, places=9)
        self.assertAlmostEqual(b_end - b_start, b.cost().seconds, places=9)
        self.assertAlmostEqual(1.1, a.cost().seconds, places=9)   # 3 gaps of 0.2, 0.5
        self.assertAlmostEqual(2.5 / 1.1, a.cost().rate, places=9)
        self.assertEqual((waiter.BATCHED, 0.2), (a.cost().mode, a.cost().interval))
        self.assertEqual(0.0, waiter.ServerWaiter(None, "x").cost().rate)

    def test_unsaved_new_server_is_got_once(self):
        self.nova.hide_unsaved = True       # updated_at is empty until the first save
        [w] = self.waiters(1, self.watcher())
        w.wait_for_status(waiter.ACTIVE, 60)
        self.assertEqual(1, requests(self.nova, "GET /servers/id"))
        self.assertEqual(["scheduling", "spawning", None],
                         [tr.new for tr in w.transitions if tr.field == "task_state"])
        self.assertEqual(1 + requests(self.nova, "GET /servers/detail"), w.cost().requests)

    def test_late_joiner_looks_once_instead_of_widening_the_window(self):
        asked = []
        watch = self.watcher()
        listing = watch.list_servers
        watch.list_servers = lambda since, marker: asked.append(since) or listing(since, marker)
        [w] = self.waiters(1, watch)
        w.wait_for_status(waiter.ACTIVE, 60)
        self.clock.advance(30)               # e.g. a benchmark: nobody polls the server
        looked_at = self.clock.now
        with w.polling():
            w.poll(self.clock.now + 60)      # its GET
            w.poll(self.clock.now + 60)      # the list, from its GET on
        self.assertEqual(1, requests(self.nova, "GET /servers/id"))
        self.assertAlmostEqual(looked_at - 2.0, fakes.clock_value(asked[-1]), places=5)

    def test_action_makes_the_next_list_go_at_once(self):
        watch = self.watcher()
        [w] = self.waiters(1, watch)
        w.wait_for_status(waiter.ACTIVE, 60)
        last_list = self.nova.requests[-1][0]
        self.nova.servers.stop(w.server_id)
        w.pacer.sent()
        w.wait_for(left_active, 60, SETTLED_OR_LEFT)
        self.assertEqual(last_list, self.nova.requests[-1][0])   # no gap waited

    def test_transient_list_errors_back_off_then_recover(self):
        self.nova.scripts["create"] = [(0.0, "BUILD", "spawning", 0), (10.0, "ACTIVE", None, 1)]
        watch = self.watcher()
        [w] = self.waiters(1, watch)
        self.nova.errors = [fakes.APIError(503)] * 3
        obs = w.wait_for_status(waiter.ACTIVE, 60)
        self.assertEqual(3, watch.pacer.errors)
        self.assertEqual(waiter.ACTIVE, obs.state.status)
        lists = [t for t, what in self.nova.requests if what == "GET /servers/detail"]
        gaps = [round(b - a, 6) for a, b in zip(lists, lists[1:])]
        self.assertEqual([0.4, 0.8, 1.6, 0.2], gaps[:4])
        self.assertEqual(len(lists), w.cost().requests)

    def test_full_page_is_followed_by_the_next(self):
        self.nova.page_size = 2
        self.useFixture_patch = mock.patch.object(watcher, "PAGE_SIZE", 2)
        self.useFixture_patch.start()
        self.addCleanup(self.useFixture_patch.stop)
        watch = self.watcher()
        ws = self.waiters(5, watch)
        with ws[0].polling():
            ws[0].poll(self.clock.now + 60)
        self.assertEqual(3, requests(self.nova, "GET /servers/detail"))   # 2 + 2 + 1
        self.assertEqual(3, watch.requests)
        self.assertEqual("BUILD", ws[0].state.status)


class TestThreads(testtools.TestCase):
    """Real threads and real time (short scripts): one list per poll for all of them."""

    def run_servers(self, count, watch_it):
        clock = fakes.RealClock()
        nova = fakes.FakeNova(clock, create=[(0.0, "BUILD", "scheduling", 0),
                                             (0.3, "ACTIVE", None, 1)],
                              delete=[(0.0, "ACTIVE", "deleting", 1), (0.1, "GONE", None, None)])
        watch = watcher.Watcher(watcher.lister(nova), interval=0.02, max_requests_per_second=100,
                                clock=clock) if watch_it else None
        results, errors = [], []

        def lifecycle():
            try:
                pacer = waiter.Pacer(0.02, 0.5, 100, clock=clock)
                start = clock.monotonic()
                server = nova.servers.create("s", "img", "flv")
                pacer.sent()
                w = waiter.ServerWaiter(nova.servers.get, server.id, pacer=pacer, watcher=watch)
                build = w.wait_for_status(waiter.ACTIVE, 10, started_at=start).at - start
                pacer.before_action()
                start = clock.monotonic()
                nova.servers.delete(server)
                pacer.sent()
                delete = w.wait_gone(10, started_at=start).at - start
                results.append((build, delete, w.cost()))
            except Exception as e:      # reported by the test
                errors.append(e)
        threads = [threading.Thread(target=lifecycle) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertEqual([], errors)
        self.assertEqual(count, len(results))
        return nova, results

    def test_threads_share_lists_and_keep_the_timings(self):
        nova, results = self.run_servers(16, True)
        self.assertEqual(0, requests(nova, "GET /servers/id"))
        builds = [r[0] for r in results]
        deletes = [r[1] for r in results]
        self.assertTrue(all(b >= 0.3 for b in builds), builds)
        self.assertTrue(all(d >= 0.1 for d in deletes), deletes)
        # every server's phases seen within a few poll periods of the truth
        self.assertLess(statistics.median(builds), 0.3 + 0.1)
        self.assertLess(statistics.median(deletes), 0.1 + 0.1)
        lists = requests(nova, "GET /servers/detail")
        self.assertAlmostEqual(lists, sum(r[2].requests for r in results), places=6)
        per_server, _ = self.run_servers(16, False)
        self.assertLess(lists, requests(per_server, "GET /servers/id") / 2)


class TestShared(testtools.TestCase):

    def test_one_watcher_per_endpoint_project_and_user(self):
        def nova(project, user="u"):
            http = fakes.Obj(get_endpoint=lambda: "http://nova", get_project_id=lambda: project,
                             get_user_id=lambda: user)
            return fakes.Obj(client=http, servers=None)
        self.addCleanup(watcher._forget_after_fork)
        first = watcher.shared(nova("p1"), interval=0.5)
        self.assertIs(first, watcher.shared(nova("p1")))
        self.assertIsNot(first, watcher.shared(nova("p2")))
        self.assertIsNot(first, watcher.shared(nova("p1", "u2")))
        self.assertEqual(0.5, first.pacer.min_gap)
        bare = fakes.FakeNova(fakes.FakeClock())        # no keystone session: by client
        self.assertIs(watcher.shared(bare), watcher.shared(bare))
        self.assertEqual(("client", id(bare)), watcher.client_key(bare))
        self.assertEqual("client", watcher.client_key(nova(None))[0])   # a token alone
        watcher._forget_after_fork()
        self.assertIsNot(first, watcher.shared(nova("p1")))

    def test_changes_since_is_iso_utc(self):
        self.assertEqual("2027-01-15T08:00:00.250000Z", watcher.iso(1800000000.25))
