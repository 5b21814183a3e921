"""rally_vmct.timing.instance_actions and rally_vmct.timing.timeline."""

import testtools

from rally_vmct.timing import instance_actions as ia
from rally_vmct.timing import timeline
from tests.unit.timing import fakes


class TestInstanceActions(testtools.TestCase):

    def test_parse_time(self):
        self.assertEqual(1800000000.5, ia.parse_time("2027-01-15T08:00:00.500000"))
        self.assertEqual(1800000000.0, ia.parse_time("2027-01-15T08:00:00Z"))
        self.assertIsNone(ia.parse_time(None))
        self.assertIsNone(ia.parse_time("yesterday"))

    def test_normalize_and_table(self):
        action = fakes.Obj(action="reboot", request_id="req-1", message=None,
                           start_time="2027-01-15T08:00:00.000000",
                           events=[{"event": "compute_reboot_instance",
                                    "start_time": "2027-01-15T08:00:01.000000",
                                    "finish_time": "2027-01-15T08:02:04.250000",
                                    "result": "Success"}])
        norm = ia.normalize(action)
        self.assertTrue(ia.finished(norm))
        self.assertEqual([], ia.failed_events(norm))
        self.assertEqual(123.25, ia.event_duration(norm))
        pending = ia.normalize({"action": "create", "request_id": "req-0", "events": [],
                                "start_time": "2027-01-15T07:59:00.000000"})
        self.assertFalse(ia.finished(pending))
        rows = ia.table_rows([norm, pending])
        self.assertEqual(["create", "req-0", "(no events visible)"], rows[0][:3])
        self.assertEqual(["reboot", "req-1", "compute_reboot_instance"], rows[1][:3])
        self.assertEqual(123.25, rows[1][5])
        self.assertEqual(len(ia.TABLE_COLUMNS), len(rows[1]))

    def test_reboot_path(self):
        self.assertEqual("hard", ia.reboot_path("hard", 120, event_seconds=500))
        self.assertEqual("soft", ia.reboot_path("soft", 120, event_seconds=5,
                                                active_seconds=200))
        self.assertEqual("soft_fell_back_to_hard", ia.reboot_path("soft", 120,
                                                                  event_seconds=121))
        self.assertEqual("soft_fell_back_to_hard", ia.reboot_path("soft", 120,
                                                                  active_seconds=123.4))
        self.assertEqual("soft", ia.reboot_path("soft", 120))


class TestTimeline(testtools.TestCase):

    def test_phases_nest_rename_and_discard(self):
        clock = fakes.FakeClock()
        actions = []
        tl = timeline.Timeline(actions, clock)
        with tl.phase("vmct.reboot_soft") as parent:
            with tl.phase("vmct.reboot_soft.left_active") as gone:
                gone.discard()
            with tl.phase("vmct.reboot_soft.active") as child:
                clock.advance(2)
                child.end(clock.now - 0.5)
            clock.advance(1)
            parent.rename("vmct.reboot_soft_fell_back_to_hard")
        self.assertEqual("vmct.reboot_soft_fell_back_to_hard", actions[0]["name"])
        [child_action] = actions[0]["children"]
        self.assertEqual("vmct.reboot_soft_fell_back_to_hard.active", child_action["name"])
        self.assertEqual(1.5, child_action["finished_at"] - child_action["started_at"])
        self.assertEqual(3.0, actions[0]["finished_at"] - actions[0]["started_at"])
        self.assertEqual(fakes.EPOCH + 100.0, actions[0]["started_at"])

    def test_failed_phase_is_marked(self):
        clock = fakes.FakeClock()
        actions = []
        tl = timeline.Timeline(actions, clock)
        self.assertRaises(ValueError, self._fail, tl)
        self.assertTrue(actions[0]["failed"])
        self.assertIn("finished_at", actions[0])

    @staticmethod
    def _fail(tl):
        with tl.phase("vmct.build"):
            raise ValueError("boom")
