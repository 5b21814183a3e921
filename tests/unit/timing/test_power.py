"""power.RebootBegun: the predicate that tells a begun reboot from one not yet seen."""

import types

import testtools

from rally_vmct.timing import waiter
from rally_vmct.timing import power
from tests.unit.timing import fakes


class FakeSession:
    """What RebootBegun reads of a session: its clock, actions and the guest's boot id."""

    def __init__(self, action=None, lives=()):
        self.clock = fakes.FakeClock()
        self.server = types.SimpleNamespace(id="srv-1")
        self.action = action
        self.lives = list(lives)
        self.ssh_looks = 0

    def fetch_action(self, request_id):
        return self.action

    def incarnation(self):
        self.ssh_looks += 1
        return self.lives.pop(0)


def state(status="ACTIVE", task_state=None):
    return waiter.ServerState(status=status, task_state=task_state)


def action(finish_time=None, result="Success"):
    return {"action": "reboot", "message": None,
            "events": [{"event": "compute_reboot_instance", "result": result,
                        "start_time": "2026-01-01T00:00:00", "finish_time": finish_time}]}


class RebootBegunTestCase(testtools.TestCase):

    def test_reboot_status_or_task_state_means_left(self):
        begun = power.RebootBegun(FakeSession(), "req-1", "soft", None)
        self.assertEqual(begun.LEFT, begun(state("REBOOT", "rebooting")))
        self.assertEqual(begun.LEFT, begun(state("ACTIVE", "reboot_started")))
        self.assertEqual(begun.LEFT, begun(state("HARD_REBOOT")))

    def test_error_and_unsettled_are_not_yet(self):
        begun = power.RebootBegun(FakeSession(), "req-1", "hard", None)
        self.assertFalse(begun(state("ERROR")))
        self.assertFalse(begun(state("ACTIVE", "powering-off")))
        self.assertFalse(begun(state("ACTIVE")))      # no action, no SSH: not begun

    def test_finished_instance_action_means_done(self):
        begun = power.RebootBegun(FakeSession(action(finish_time="2026-01-01T00:00:05")),
                                  "req-1", "soft", None)
        self.assertEqual(begun.DONE, begun(state()))

    def test_failed_event_raises_the_fault(self):
        session = FakeSession(action(finish_time="2026-01-01T00:00:05", result="Error"))
        begun = power.RebootBegun(session, "req-1", "hard", None)
        e = self.assertRaises(waiter.ServerFault, begun, state())
        self.assertIn("hard reboot of server srv-1 failed", str(e))

    def test_changed_boot_id_means_done_looked_at_most_once_a_second(self):
        session = FakeSession(lives=["boot-1", "boot-2"])
        begun = power.RebootBegun(session, None, "soft", "boot-1")
        self.assertFalse(begun(state()))
        self.assertFalse(begun(state()))              # too soon for another SSH look
        self.assertEqual(1, session.ssh_looks)
        session.clock.advance(power.RebootBegun.SSH_CHECK_GAP)
        self.assertEqual(begun.DONE, begun(state()))
        self.assertEqual(2, session.ssh_looks)
