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
"""Nova's server-side record of what happened (``os-instance-actions``) and reboot paths.

Nova records every action on a server (create, reboot, stop, start, delete...)
with the request id and, per compute step, events with start and finish times
(Nova's clock, UTC). Non-admin users see the events from API microversion 2.51.

This module turns those records into plain dicts and a Rally Table chart, and
decides which path a reboot took. libvirt's soft reboot sends ACPI shutdown and
waits up to ``[libvirt] wait_soft_reboot_seconds`` (120 s by default) for the
guest to power off; when the guest does not, it hard-reboots instead, and the
API shows nothing but a long soft reboot. So a soft reboot whose compute event
(or, without events, whose request-to-ACTIVE time) lasted at least that long is
reported as ``soft_fell_back_to_hard``. No Rally or client import.
"""

import datetime

SOFT, FALLBACK, HARD = "soft", "soft_fell_back_to_hard", "hard"
REBOOT_EVENT = "compute_reboot_instance"
TABLE_COLUMNS = ["action", "request id", "event", "start (UTC)", "finish (UTC)",
                 "duration [s]", "result"]


def parse_time(text):
    """Epoch seconds of a Nova timestamp (``2026-11-22T05:44:35.000000``, UTC), or None."""
    if not text:
        return None
    text = str(text).strip().replace("Z", "+00:00")
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value.timestamp()


def _get(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def normalize(action, events=None):
    """A plain dict of one instance action (novaclient object or dict)."""
    raw_events = events if events is not None else (_get(action, "events") or [])
    out = {"action": _get(action, "action"), "request_id": _get(action, "request_id"),
           "start_time": _get(action, "start_time"), "message": _get(action, "message"),
           "events": []}
    for event in raw_events:
        start = _get(event, "start_time")
        finish = _get(event, "finish_time")
        t0, t1 = parse_time(start), parse_time(finish)
        out["events"].append({
            "event": _get(event, "event"), "start_time": start, "finish_time": finish,
            "duration": (t1 - t0) if t0 is not None and t1 is not None else None,
            "result": _get(event, "result"), "host": _get(event, "host"),
            "details": _get(event, "details")})
    return out


def finished(action):
    """True when the action has events and every one has a finish time."""
    events = action["events"]
    return bool(events) and all(e["finish_time"] for e in events)


def failed_events(action):
    """Events whose result is Error."""
    return [e for e in action["events"] if (e["result"] or "").lower() == "error"]


def event_duration(action, name=REBOOT_EVENT):
    """Seconds the named event took (server clock), or None."""
    for event in action["events"]:
        if event["event"] == name and event["duration"] is not None:
            return event["duration"]
    return None


def reboot_path(reboot_type, threshold, event_seconds=None, active_seconds=None):
    """``soft``, ``soft_fell_back_to_hard`` or ``hard`` for one reboot.

    :param reboot_type: "soft" or "hard" (what was requested)
    :param threshold: the cloud's ``wait_soft_reboot_seconds``
    :param event_seconds: duration of the compute reboot event, if Nova showed it
    :param active_seconds: request -> ACTIVE again, as measured by the waiter
    """
    if reboot_type.lower() == HARD:
        return HARD
    evidence = event_seconds if event_seconds is not None else active_seconds
    if evidence is not None and evidence >= threshold:
        return FALLBACK
    return SOFT


def table_rows(actions):
    """Rows for :data:`TABLE_COLUMNS`, oldest action first, one per event."""
    rows = []
    for action in sorted(actions, key=lambda a: parse_time(a["start_time"]) or 0):
        if not action["events"]:
            rows.append([action["action"], action["request_id"], "(no events visible)",
                         action["start_time"], "", "", ""])
        for event in action["events"]:
            duration = event["duration"]
            rows.append([action["action"], action["request_id"], event["event"],
                         event["start_time"], event["finish_time"] or "",
                         round(duration, 3) if duration is not None else "",
                         event["result"] or ""])
    return rows
