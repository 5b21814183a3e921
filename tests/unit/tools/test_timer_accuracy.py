# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""tools/bench/timer_accuracy_calc.py: observers' records, the truth, the error statistics."""

import datetime
import json
import os

import testtools

from tests.unit import tools

calc = tools.load("timer_accuracy_calc",
                  os.path.join(tools.TOOLS, "bench", "timer_accuracy_calc.py"))

UUID = "5c0e8a1e-2f3b-4d5a-9b7c-0123456789ab"
T0 = 1_795_000_000.0     # the build request (epoch s)


def stamp(seconds):
    """Nova's notification timestamp (str(utcnow()): naive UTC, microseconds) at T0 + s."""
    return str(datetime.datetime.fromtimestamp(T0 + seconds, datetime.timezone.utc)
               .replace(tzinfo=None))


def log_line(event_type, seconds, uuid=UUID, **data):
    """A line of nova-compute's log: oslo.messaging's LogDriver logging one notification."""
    message = {
        "message_id": "4f7a1a52-8d2c-4f0e-a2b3-9c8d7e6f5a4b",
        "publisher_id": "nova-compute:vmct-aio-docker", "event_type": event_type,
        "priority": "INFO",
        "payload": {"nova_object.name": "InstanceActionPayload", "nova_object.namespace": "nova",
                    "nova_object.version": "1.8",
                    "nova_object.data": dict({"uuid": uuid, "host": "vmct-aio-docker",
                                              "flavor": {"nova_object.data": {"vcpus": 1}}},
                                             **data)},
        "timestamp": stamp(seconds)}
    return ("2026-11-24 06:10:11.125 4242 INFO oslo.messaging.notification.%s "
            "[None req-0d9a7c55-6d55-4b4c-9d7e-1f0c1a1b2c3d admin admin] %s\n"
            % (event_type, json.dumps(message)))


def update_line(seconds, old_state, state, old_task, new_task):
    return log_line("instance.update", seconds, state=state, task_state=new_task,
                    state_update={"nova_object.name": "InstanceStateUpdatePayload",
                                  "nova_object.data": {"old_state": old_state, "state": state,
                                                       "old_task_state": old_task,
                                                       "new_task_state": new_task}})


def polls(*states, start=0.1, period=0.05, latency=0.01):
    """Polls ``[sent, received, status, task_state]`` every period from T0 + start."""
    return [[T0 + start + i * period, T0 + start + i * period + latency, status, task]
            for i, (status, task) in enumerate(states)]


class TestCase(testtools.TestCase):

    def near(self, expected, actual):
        """Equal to 10 µs (epoch seconds as floats carry about 0.2 µs)."""
        self.assertAlmostEqual(expected, actual, delta=1e-5)


class ParseTestCase(TestCase):

    def test_notification_line(self):
        n = calc.parse_notification(log_line("instance.create.end", 2.5, state="active",
                                             task_state=None))
        self.assertEqual("instance.create.end", n.event_type)
        self.assertEqual(UUID, n.uuid)
        self.assertEqual("nova-compute:vmct-aio-docker", n.publisher)
        self.assertEqual("active", n.state)
        self.assertIsNone(n.task_state)
        self.near(T0 + 2.5, n.timestamp)

    def test_instance_update_carries_the_state_change(self):
        n = calc.parse_notification(update_line(1.0, "building", "active", "spawning", None))
        self.assertEqual(("building", "spawning", "active", None),
                         (n.old_state, n.old_task_state, n.state, n.task_state))

    def test_other_lines_are_not_notifications(self):
        self.assertIsNone(calc.parse_notification(
            "2026-11-24 06:10:11.125 4242 INFO nova.compute.manager [None req-1] "
            "[instance: %s] Took 2.1 seconds to spawn the instance on the hypervisor." % UUID))
        # notifications that are not about an instance (a service has a uuid too)
        self.assertIsNone(calc.parse_notification(log_line("service.update", 1.0)))
        self.assertIsNone(calc.parse_notification(
            log_line("instance.create.end", 1.0, uuid=None)))
        # a line cut short: no JSON object to read
        self.assertIsNone(calc.parse_notification(log_line("instance.create.end", 1)[:150]))

    def test_notifications_by_uuid_sorted_and_filtered(self):
        other = "0" * 8 + UUID[8:]
        lines = [log_line("instance.create.end", 3.0), "noise\n",
                 log_line("instance.create.start", 1.0),
                 log_line("instance.create.start", 1.5, uuid=other)]
        found = calc.notifications_by_uuid(lines, {UUID})
        self.assertEqual([UUID], list(found))
        self.assertEqual(["instance.create.start", "instance.create.end"],
                         [n.event_type for n in found[UUID]])

    def test_epoch(self):
        self.near(T0 + 0.123456, calc.epoch(stamp(0.123456)))
        docker_time = datetime.datetime.fromtimestamp(
            T0, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".123456789Z"
        self.near(T0 + 0.123456, calc.epoch(docker_time))
        self.near(T0 - 3600, calc.epoch(
            datetime.datetime.fromtimestamp(T0, datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%S") + "+01:00"))
        self.assertIsNone(calc.epoch("0001-01-01T00:00:00Z"))
        self.assertIsNone(calc.epoch(""))
        self.assertRaises(ValueError, calc.epoch, "yesterday")

    def test_virsh_event(self):
        event = calc.parse_virsh_event(
            "2026-11-24 06:10:11.123+0000: event 'lifecycle' for domain "
            "'instance-0000000a': Started Booted\n")
        self.assertEqual({"event": "lifecycle", "domain": "instance-0000000a",
                          "detail": "Started Booted"},
                         {k: event[k] for k in ("event", "domain", "detail")})
        self.near(calc.epoch("2026-11-24 06:10:11.123"), event["time"])
        reboot = calc.parse_virsh_event(
            "2026-11-24 06:10:12.000+0000: event 'reboot' for domain 'instance-0000000a'")
        self.assertEqual(("reboot", ""), (reboot["event"], reboot["detail"]))
        self.assertIsNone(calc.parse_virsh_event("events loop interrupted"))

    def test_docker_event(self):
        line = json.dumps({"status": "start", "id": "f00", "Type": "container",
                           "Action": "start", "scope": "local", "time": 1795000002,
                           "timeNano": 1795000002123456789,
                           "Actor": {"ID": "f00", "Attributes": {"name": "nova-" + UUID}}})
        event = calc.parse_docker_event(line)
        self.assertEqual(("start", "nova-" + UUID), (event["action"], event["name"]))
        self.near(1795000002.123457, event["time"])
        self.assertIsNone(calc.parse_docker_event(json.dumps({"Type": "network",
                                                              "Action": "connect"})))
        self.assertIsNone(calc.parse_docker_event("not json"))


class TruthTestCase(TestCase):

    def test_build_bracket_is_the_last_poll_before_and_the_next_one(self):
        seen = polls(("BUILD", "scheduling"), ("BUILD", "spawning"), ("ACTIVE", None),
                     ("ACTIVE", None))
        bracket = calc.poll_bracket(seen, "build", T0, T0 + 60)
        # last BUILD poll sent at +0.15, the first ACTIVE one at +0.2, answered at +0.21
        self.near(T0 + 0.15, bracket.low)
        self.near(T0 + 0.2, bracket.high)
        self.near(T0 + 0.21, bracket.bound)
        self.near(T0 + 0.175, bracket.mid)
        self.near(0.025, bracket.half_width)

    def test_reboot_bracket_ends_the_last_change_into_active(self):
        seen = polls(("ACTIVE", None), ("HARD_REBOOT", "reboot_started_hard"),
                     ("HARD_REBOOT", "reboot_started_hard"), ("ACTIVE", None))
        bracket = calc.poll_bracket(seen, "reboot_hard", T0, T0 + 60)
        self.near(T0 + 0.2, bracket.low)
        self.near(T0 + 0.25, bracket.high)

    def test_no_bracket_when_the_change_was_not_seen_or_not_finished(self):
        quick = polls(("ACTIVE", None), ("ACTIVE", None))
        self.assertIsNone(calc.poll_bracket(quick, "reboot_soft", T0, T0 + 60))
        unfinished = polls(("ACTIVE", "powering-off"), ("ACTIVE", "powering-off"))
        self.assertIsNone(calc.poll_bracket(unfinished, "stop", T0, T0 + 60))
        # polls sent outside the window do not count
        self.assertIsNone(calc.poll_bracket(
            polls(("BUILD", None), ("ACTIVE", None)), "build", T0 + 10, T0 + 60))

    def test_bracket_of_polls_from_two_threads_out_of_order(self):
        seen = [[T0 + 0.10, T0 + 0.19, "SHUTOFF", "powering-on"],
                [T0 + 0.15, T0 + 0.17, "SHUTOFF", "powering-on"],
                [T0 + 0.25, T0 + 0.28, "ACTIVE", None],
                [T0 + 0.20, T0 + 0.30, "ACTIVE", None]]
        bracket = calc.poll_bracket(list(reversed(seen)), "start", T0, T0 + 60)
        self.near(T0 + 0.15, bracket.low)
        self.near(T0 + 0.2, bracket.high)
        self.near(T0 + 0.28, bracket.bound)     # the later poll was answered first

    def test_delete_ends_with_a_404_or_deleted(self):
        seen = polls(("ACTIVE", "deleting"), (calc.GONE, None))
        self.near(T0 + 0.1, calc.poll_bracket(seen, "delete", T0, T0 + 9).low)
        self.assertTrue(calc.api_done("delete", "DELETED", None))
        self.assertFalse(calc.api_done("stop", "SHUTOFF", "powering-off"))
        self.assertTrue(calc.api_done("stop", "SHUTOFF", None))
        self.assertFalse(calc.api_done("start", "SHUTOFF", None))

    def test_update_into_done_takes_the_last_change_into_the_end_state(self):
        notes = [calc.parse_notification(line).as_dict() for line in (
            update_line(0.5, "active", "active", None, "reboot_pending"),
            update_line(0.9, "active", "active", "reboot_pending", "reboot_started"),
            update_line(2.0, "active", "active", "reboot_started", None),
            # an update that changes nothing of the state does not end anything
            update_line(2.5, "active", "active", None, None))]
        found = calc.update_into_done(notes, "reboot_soft", T0, T0 + 60)
        self.near(T0 + 2.0, found["timestamp"])
        self.assertIsNone(calc.update_into_done(notes, "stop", T0, T0 + 60))
        delete = calc.parse_notification(update_line(1, "active", "deleted", "deleting", None))
        self.assertIsNotNone(calc.update_into_done([delete.as_dict()], "delete", T0, T0 + 9))

    def server(self, notifications=(), **phase):
        return {"kind": "docker", "uuid": UUID, "notifications": list(notifications),
                "polls": polls(("BUILD", "spawning"), ("BUILD", "spawning"),
                               ("ACTIVE", None), start=2.0),
                "docker_events": [{"time": T0 + 1.7, "action": "start"}],
                "phases": [dict({"phase": "build", "t_send": T0,
                                 "vmct": {"action": "vmct.build", "duration": 2.2,
                                          "resolution": 0.2},
                                 "rally": {"action": "nova.boot_server", "duration": 3.0}},
                                **phase)]}

    def test_the_poller_is_the_truth_without_instance_update(self):
        seen, bracket = calc.observers(self.server(), "build", T0, T0 + 60)
        truth = calc.choose_truth(seen, bracket)
        self.assertEqual(calc.POLLER, truth.source)
        # last BUILD poll sent at +2.05, the first ACTIVE one answered at +2.11
        self.near(T0 + 2.08, truth.end)
        self.near(0.03, truth.uncertainty)
        self.near(T0 + 2.075, seen[calc.POLLER])       # the middle of the send times

    def test_the_end_notification_closes_the_pollers_bracket(self):
        notes = [calc.parse_notification(log_line("instance.create.end", 2.09)).as_dict()]
        seen, bracket = calc.observers(self.server(notes), "build", T0, T0 + 60)
        truth = calc.choose_truth(seen, bracket)
        # after +2.05 (a poll still saw BUILD), before +2.09 (emitted after the save)
        self.assertEqual(calc.POLLER_NOTIFICATION, truth.source)
        self.near(T0 + 2.07, truth.end)
        self.near(0.02, truth.uncertainty)
        self.near(T0 + 1.7, seen["docker"])

    def test_instance_update_wins_then_poller_then_end_notification(self):
        update = calc.parse_notification(update_line(2.07, "building", "active", "spawning",
                                                     None)).as_dict()
        ended = calc.parse_notification(log_line("instance.create.end", 2.1)).as_dict()
        truth = calc.choose_truth(*calc.observers(self.server([update, ended]), "build", T0,
                                                  T0 + 60))
        self.assertEqual((calc.UPDATE, 0.0), (truth.source, truth.uncertainty))
        self.near(T0 + 2.07, truth.end)
        server = self.server([ended])
        server["polls"] = []
        truth = calc.choose_truth(*calc.observers(server, "build", T0, T0 + 60))
        self.assertEqual((calc.NOTIFICATION, None), (truth.source, truth.uncertainty))
        server["notifications"] = []
        self.assertIsNone(calc.choose_truth(*calc.observers(server, "build", T0, T0 + 60)))

    def test_errors_of_a_server(self):
        [row] = calc.observe_server(self.server())
        self.assertEqual(calc.POLLER, row["truth_source"])
        self.near(2.08, row["truth"])
        self.near(0.12, row["vmct_error"])
        self.near(0.02, row["vmct_mid_error"])       # 2.2 - 0.2 / 2 - 2.08
        self.near(0.92, row["rally_error"])
        self.near(-0.38, row["offsets"]["docker"])
        self.assertNotIn(calc.POLLER, row["offsets"])

    def test_vmct_mid_is_between_the_send_times_of_its_last_two_polls(self):
        # polls sent at 1.85 and 2.05 (answered at 2.2): the middle is 1.95
        [row] = calc.observe_server(self.server(vmct={
            "action": "vmct.build", "duration": 2.2, "resolution": 0.35,
            "answer_latency": 0.15}))
        self.near(1.95 - 2.08, row["vmct_mid_error"])

    def test_a_failed_figure_has_no_error(self):
        [row] = calc.observe_server(self.server(rally={"error": "TimeoutException: ..."}))
        self.assertIsNone(row["rally"])
        self.assertIsNone(row["rally_error"])
        self.assertIsNotNone(row["vmct_error"])

    def test_phase_windows_end_at_the_next_request(self):
        phases = [{"phase": "reboot_hard", "t_send": T0 + 10}, {"phase": "build", "t_send": T0}]
        windows = calc.phase_windows(phases)
        self.assertEqual([("build", T0, T0 + 10),
                          ("reboot_hard", T0 + 10, T0 + 10 + calc.LAST_WINDOW)],
                         [(p["phase"], start, end) for p, start, end in windows])


class StatisticsTestCase(TestCase):

    def test_error_stats(self):
        stats = calc.error_stats([0.05, -0.2, 0.1, None])
        self.assertEqual(3, stats.n)
        self.near(0.1, stats.median_abs)
        self.near(0.2, stats.max_abs)
        self.near(0.05, stats.bias)
        self.assertIsNone(calc.error_stats([None]))

    def rows(self, kind, phase, vmct_errors, rally_errors, source=calc.POLLER):
        return [{"kind": kind, "phase": phase, "server": str(i), "vmct_action": "vmct." + phase,
                 "truth_source": source, "uncertainty": 0.03, "truth": 2.0, "vmct": 2.0 + v,
                 "rally": 2.0 + r, "vmct_error": v, "vmct_mid_error": v - 0.1,
                 "rally_error": r, "offsets": {"docker": -0.4}}
                for i, (v, r) in enumerate(zip(vmct_errors, rally_errors))]

    def test_summary_table_and_verdict(self):
        rows = (self.rows("docker", "build", [0.05, 0.08, 0.12], [0.9, 1.8, 1.1])
                + self.rows("docker", "delete", [0.15, 0.14, 0.16], [0.5, 0.6, 0.7])
                + self.rows("fake", "build", [0.02], [1.0], source=calc.UPDATE))
        summary = calc.summarise(rows)
        self.assertEqual([("docker", "build"), ("docker", "delete"), ("fake", "build")],
                         [(s["kind"], s["phase"]) for s in summary])
        build = summary[0]
        self.assertEqual((3, {calc.POLLER: 3}), (build["n"], build["sources"]))
        self.near(0.08, build["vmct"].median_abs)
        self.near(1.8, build["rally"].max_abs)
        self.near(-0.4, build["offsets"]["docker"])
        lines = calc.accuracy_table(summary)
        self.assertIn("poller:3", lines[1])
        self.assertIn(" 0.080  0.120  +0.080", lines[1])
        self.assertIn("update:1", lines[3])
        self.assertIn("      -0.400", calc.offsets_table(summary)[1])
        met, missed = calc.goal_verdict(summary)
        self.assertFalse(met)
        self.assertEqual([("docker", "delete")], [m[:2] for m in missed])

    def test_analyse_a_raw_run(self):
        server = TruthTestCase.server(None)
        rows, summary = calc.analyse({"servers": [server]})
        self.assertEqual(1, len(rows))
        self.assertEqual(("docker", "build", 1), (summary[0]["kind"], summary[0]["phase"],
                                                  summary[0]["n"]))
