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
"""The maths of tools/bench/timer_accuracy.py: observers' records, the truth, the errors.

No I/O and no OpenStack import: it reads the raw records the benchmark writes (one dict
per server, see :func:`analyse`) and the text lines the observers print, so it runs (and
is tested) anywhere. The definitions (what "truth" is per phase, what each observer can
see) are in timer_accuracy.py's docstring; the code that applies them is here.

Times are epoch seconds (UTC, floats). A phase starts at ``t_send``, the instant the
benchmark sent the phase's request (create, reboot, stop, start, delete), and its window
runs until the next phase's request (the last one: :data:`LAST_WINDOW` seconds).
"""

import dataclasses
import datetime
import json
import re
import statistics

PHASES = ("build", "reboot_hard", "reboot_soft", "stop", "start", "delete")
GONE = "GONE"
# The last phase's window (delete: request -> every observer has seen the end).
LAST_WINDOW = 300.0

# Nova's versioned notifications that end (and start) each phase on the compute host. Delete:
# nova-compute saves vm_state DELETED (the API's DELETED: gone) right after
# instance.shutdown.end (only the volumes' cleanup in between); instance.delete.end follows
# placement's allocation delete and the row's destroy, 0.2-0.7 s later on the AIO.
END_EVENT = {"build": "instance.create.end", "reboot_hard": "instance.reboot.end",
             "reboot_soft": "instance.reboot.end", "stop": "instance.power_off.end",
             "start": "instance.power_on.end", "delete": "instance.shutdown.end"}
START_EVENT = {phase: event[:-len("end")] + "start" for phase, event in END_EVENT.items()}
UPDATE_EVENT = "instance.update"
# The hypervisor's last event of each phase: Docker's event action, libvirt's lifecycle
# event (first word of virsh's detail: "Started Booted", "Stopped Destroyed"...).
DOCKER_END = {"build": "start", "reboot_hard": "start", "reboot_soft": "start",
              "stop": "die", "start": "start", "delete": "destroy"}
LIBVIRT_END = {"build": "Started", "reboot_hard": "Started", "reboot_soft": "Started",
               "stop": "Stopped", "start": "Started", "delete": "Undefined"}

# Truth sources, best first (see timer_accuracy.py).
UPDATE, POLLER, NOTIFICATION = "instance.update", "poller", "end notification"
POLLER_NOTIFICATION = "poller+notification"     # the poller's bracket closed by the notification
TRUTH_ORDER = (UPDATE, POLLER_NOTIFICATION, POLLER, NOTIFICATION)

# oslo.messaging's LogDriver logs each notification as JSON on logger
# oslo.messaging.notification.<event_type>:
# 2026-11-24 06:10:11.123 4242 INFO oslo.messaging.notification.instance.create.end
#   [None req-... admin admin] {"message_id": "...", "event_type": ..., "timestamp": ...}
NOTIFICATION_LOGGER = re.compile(r"\boslo\.messaging\.notification\.(?P<event>[\w.-]+)")
# virsh event --all --loop --timestamp:
# 2026-11-24 06:10:11.123+0000: event 'lifecycle' for domain 'instance-0000000a': Started Booted
VIRSH_EVENT = re.compile(r"^(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)(?:\+0000)?: "
                         r"event '(?P<event>[\w-]+)' for domain '(?P<domain>[^']+)'"
                         r"(?:: (?P<detail>.*))?$")


# -- parsing -------------------------------------------------------------------------------

def epoch(text):
    """Epoch seconds of an ISO 8601 / Nova / Docker time (naive = UTC); None if unset.

    Docker's nanoseconds are cut to microseconds; its "0001-01-01T00:00:00Z" (never)
    is None.
    """
    if not text:
        return None
    text = text.strip()
    found = re.match(r"^(.*?[T ]\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)?$", text)
    if not found:
        raise ValueError("not a time: %r" % text)
    base, fraction, zone = found.groups()
    when = datetime.datetime.fromisoformat(base.replace("T", " "))
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        when -= sign * datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    if when.year < 1971:
        return None
    seconds = when.replace(tzinfo=datetime.timezone.utc).timestamp()
    return seconds + (float(fraction) if fraction else 0.0)


@dataclasses.dataclass(frozen=True)
class Notification:
    """One of Nova's versioned notifications about an instance."""

    event_type: str
    timestamp: float
    uuid: str
    publisher: str = ""
    state: str | None = None            # vm_state after the change
    task_state: str | None = None       # task_state after the change
    old_state: str | None = None        # instance.update only
    old_task_state: str | None = None   # instance.update only

    def as_dict(self):
        return dataclasses.asdict(self)


def _json_after(line, start):
    """The first JSON object of ``line`` from ``start`` on (the logged message), or None."""
    decoder = json.JSONDecoder()
    position = line.find("{", start)
    while position != -1:
        try:
            value, _ = decoder.raw_decode(line, position)
        except ValueError:
            value = None
        if isinstance(value, dict) and "event_type" in value:
            return value
        position = line.find("{", position + 1)
    return None


def parse_notification(line):
    """A :class:`Notification` from a line of a Nova service log, or None.

    Only instance notifications (``instance.*``, about the instance of the payload's
    ``uuid``) are kept.
    """
    logger = NOTIFICATION_LOGGER.search(line)
    if not logger:
        return None
    message = _json_after(line, logger.end())
    if message is None or not message["event_type"].startswith("instance."):
        return None
    data = (message.get("payload") or {}).get("nova_object.data") or {}
    uuid = data.get("uuid")
    when = epoch(message.get("timestamp"))
    if not uuid or when is None:
        return None
    update = (data.get("state_update") or {}).get("nova_object.data") or {}
    task_state = update["new_task_state"] if "new_task_state" in update \
        else data.get("task_state")
    return Notification(
        event_type=message["event_type"], timestamp=when, uuid=uuid,
        publisher=message.get("publisher_id") or "", state=data.get("state"),
        task_state=task_state, old_state=update.get("old_state"),
        old_task_state=update.get("old_task_state"))


def notifications_by_uuid(lines, uuids=None):
    """``{uuid: [Notification, ...]}`` (oldest first) of the instance notifications in lines."""
    found = {}
    for line in lines:
        if "oslo.messaging.notification." not in line:
            continue
        notification = parse_notification(line)
        if notification is None or (uuids is not None and notification.uuid not in uuids):
            continue
        found.setdefault(notification.uuid, []).append(notification)
    for notifications in found.values():
        notifications.sort(key=lambda n: n.timestamp)
    return found


def parse_virsh_event(line):
    """``{"time", "event", "domain", "detail"}`` of a ``virsh event --timestamp`` line, or None."""
    found = VIRSH_EVENT.match(line.strip())
    if not found:
        return None
    return {"time": epoch(found.group("time")), "event": found.group("event"),
            "domain": found.group("domain"), "detail": (found.group("detail") or "").strip()}


def parse_docker_event(line):
    """``{"time", "action", "name"}`` of a ``docker events --format '{{json .}}'`` line, or None."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("Type", "container") != "container":
        return None
    action = event.get("Action") or event.get("status")
    if event.get("timeNano"):
        when = int(event["timeNano"]) / 1e9
    elif event.get("time"):
        when = float(event["time"])
    else:
        return None
    name = ((event.get("Actor") or {}).get("Attributes") or {}).get("name")
    return {"time": when, "action": action, "name": name}


# -- the truth -----------------------------------------------------------------------------

def api_done(phase, status, task_state):
    """Does a server the API shows as ``status`` / ``task_state`` end ``phase``?

    What both timers wait for: ACTIVE (build, reboots, start) or SHUTOFF (stop) with no
    task; for delete a 404 or a DELETED / SOFT_DELETED status.
    """
    if phase == "delete":
        return status in (GONE, "DELETED", "SOFT_DELETED")
    return status == ("SHUTOFF" if phase == "stop" else "ACTIVE") and task_state is None


def db_done(phase, vm_state, task_state):
    """The same in Nova's database terms (an ``instance.update``'s vm_state / task_state)."""
    if phase == "delete":
        return vm_state in ("deleted", "soft-delete")
    return vm_state == ("stopped" if phase == "stop" else "active") and task_state is None


@dataclasses.dataclass(frozen=True)
class Bracket:
    """A change the API read between polls sent at ``low`` and ``high``; surely before ``bound``.

    Nova reads the instance at the start of a GET (after the token check) and spends the
    rest of it building the view (the security groups: Neutron calls), so a poll shows the
    state of about its send time: the change is estimated in ``(low, high]`` (shifted by
    the few ms to the read), and was surely in ``(low, bound)`` (``bound``: when the first
    poll that showed it was answered).
    """

    low: float
    high: float
    bound: float | None = None

    @property
    def mid(self):
        return (self.low + self.high) / 2

    @property
    def half_width(self):
        return (self.high - self.low) / 2


def poll_bracket(polls, phase, start, end):
    """When the polls saw the last change into ``phase``'s end state; a :class:`Bracket` or None.

    :param polls: ``[sent, received, status, task_state, ...]`` per poll (any order; from
        several threads); a poll read the server somewhere in ``(sent, received)``
    :param start, end: the phase's window (polls *sent* in it count)

    The last poll (by send time) that still saw a state not ending the phase read the
    server before the change; the next one saw the end state. None when the window has no
    such pair: the change was quicker than the poll period (a reboot seen only as
    ACTIVE), or the phase did not end in the window.
    """
    window = sorted((p for p in polls if start <= p[0] < end), key=lambda p: p[0])
    last_not_done = None
    for index, poll in enumerate(window):
        if not api_done(phase, poll[2], poll[3]):
            last_not_done = index
    if last_not_done is None or last_not_done == len(window) - 1:
        return None
    after = window[last_not_done + 1:]
    return Bracket(window[last_not_done][0], after[0][0], min(p[1] for p in after))


def in_window(items, start, end, key="time"):
    return [item for item in items if start <= item[key] < end]


def update_into_done(notifications, phase, start, end):
    """The last ``instance.update`` in the window that changed the instance into the end state."""
    found = None
    for n in notifications:
        if n["event_type"] != UPDATE_EVENT or not start <= n["timestamp"] < end:
            continue
        if db_done(phase, n["state"], n["task_state"]) and not db_done(
                phase, n["old_state"], n["old_task_state"]):
            found = n
    return found


def last_event(events, start, end, accept, key="time"):
    chosen = [e for e in in_window(events, start, end, key) if accept(e)]
    return chosen[-1] if chosen else None


@dataclasses.dataclass(frozen=True)
class Truth:
    """When a phase really ended: ``end`` (epoch s) from ``source``, within ``± uncertainty``.

    ``uncertainty`` is None where the source is biased by an unknown amount (the end
    notification is emitted after the state was saved).
    """

    end: float
    source: str
    uncertainty: float | None


def observers(server, phase, start, end):
    """``{observer: epoch}`` of every observer's end of ``phase`` in the window, and the bracket."""
    notifications = sorted(server.get("notifications") or [], key=lambda n: n["timestamp"])
    seen = {}
    update = update_into_done(notifications, phase, start, end)
    if update is not None:
        seen[UPDATE] = update["timestamp"]
    bracket = poll_bracket(server.get("polls") or [], phase, start, end)
    if bracket is not None:
        seen[POLLER] = bracket.mid
    ended = last_event(notifications, start, end,
                       lambda n: n["event_type"] == END_EVENT[phase], key="timestamp")
    if ended is not None:
        seen[NOTIFICATION] = ended["timestamp"]
    begun = last_event(notifications, start, end,
                       lambda n: n["event_type"] == START_EVENT[phase], key="timestamp")
    if begun is not None:
        seen["start notification"] = begun["timestamp"]
    docker = last_event(server.get("docker_events") or [], start, end,
                        lambda e: e["action"] == DOCKER_END[phase])
    if docker is not None:
        seen["docker"] = docker["time"]
    libvirt = last_event(server.get("libvirt_events") or [], start, end,
                         lambda e: e["event"] == "lifecycle"
                         and e["detail"].split(" ")[0] == LIBVIRT_END[phase])
    if libvirt is not None:
        seen["libvirt"] = libvirt["time"]
    return seen, bracket


def choose_truth(seen, bracket):
    """The :class:`Truth` from the best source seen (:data:`TRUTH_ORDER`), or None.

    With the poller's bracket, the truth is the middle of what is certain: after the last
    poll that still saw another state was sent, before the next poll was answered, and
    before the phase's end notification (emitted after the save).
    """
    if UPDATE in seen:
        return Truth(seen[UPDATE], UPDATE, 0.0)
    if bracket is not None:
        high, source = (bracket.bound if bracket.bound is not None else bracket.high), POLLER
        ended = seen.get(NOTIFICATION)
        if ended is not None and bracket.low < ended < high:
            high, source = ended, POLLER_NOTIFICATION
        return Truth((bracket.low + high) / 2, source, (high - bracket.low) / 2)
    if NOTIFICATION in seen:
        return Truth(seen[NOTIFICATION], NOTIFICATION, None)
    return None


# -- errors ----------------------------------------------------------------------------------

def phase_windows(phases):
    """``[(phase record, start, end)]``: each phase until the next one's request."""
    ordered = sorted(phases, key=lambda p: p["t_send"])
    windows = []
    for index, phase in enumerate(ordered):
        end = (ordered[index + 1]["t_send"] if index + 1 < len(ordered)
               else phase["t_send"] + LAST_WINDOW)
        windows.append((phase, phase["t_send"], end))
    return windows


def _figure(result):
    if not result or result.get("error") or result.get("duration") is None:
        return None
    return result["duration"]


def observe_server(server):
    """One row per phase of a server: truth, VMCT's and rally-openstack's figures and errors.

    ``vmct_mid_error``: the error VMCT would have if it ended the phase in the middle
    between the send times of its last two polls (where the API read the change: ``since``
    and ``at - answer_latency``) instead of at the answer (``at``); without
    ``answer_latency``, in the middle of ``(since, at]``.
    """
    rows = []
    for phase, start, end in phase_windows(server.get("phases") or []):
        name = phase["phase"]
        seen, bracket = observers(server, name, start, end)
        truth = choose_truth(seen, bracket)
        vmct = _figure(phase.get("vmct"))
        rally = _figure(phase.get("rally"))
        row = {"kind": server["kind"], "server": server.get("uuid"), "phase": name,
               "vmct_action": (phase.get("vmct") or {}).get("action"),
               "truth_source": truth.source if truth else None,
               "uncertainty": truth.uncertainty if truth else None,
               "truth": None, "vmct": vmct, "rally": rally, "vmct_error": None,
               "vmct_mid_error": None, "rally_error": None, "offsets": {}}
        if truth is not None:
            row["truth"] = truth.end - start
            if vmct is not None:
                row["vmct_error"] = vmct - row["truth"]
                resolution = (phase.get("vmct") or {}).get("resolution")
                answer = (phase.get("vmct") or {}).get("answer_latency") or 0.0
                if resolution is not None:
                    row["vmct_mid_error"] = vmct - (resolution + answer) / 2 - row["truth"]
            if rally is not None:
                row["rally_error"] = rally - row["truth"]
            row["offsets"] = {source: when - truth.end for source, when in seen.items()
                              if source != truth.source}
        rows.append(row)
    return rows


@dataclasses.dataclass(frozen=True)
class ErrorStats:
    """Median and max of ``|error|`` and the median signed error (bias) of N figures."""

    n: int
    median_abs: float
    max_abs: float
    bias: float


def error_stats(errors):
    values = [e for e in errors if e is not None]
    if not values:
        return None
    absolute = [abs(e) for e in values]
    return ErrorStats(len(values), statistics.median(absolute), max(absolute),
                      statistics.median(values))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(rows, kinds=None):
    """Per (kind, phase), in run order: N, truth sources, error statistics, observer offsets."""
    kinds = kinds or list(dict.fromkeys(row["kind"] for row in rows))
    summary = []
    for kind in kinds:
        for phase in PHASES:
            group = [r for r in rows if r["kind"] == kind and r["phase"] == phase]
            if not group:
                continue
            sources = {}
            for r in group:
                source = r["truth_source"] or "none"
                sources[source] = sources.get(source, 0) + 1
            actions = sorted({r["vmct_action"] for r in group if r["vmct_action"]})
            offsets = {}
            for r in group:
                for source, value in r["offsets"].items():
                    offsets.setdefault(source, []).append(value)
            summary.append({
                "kind": kind, "phase": phase,
                "n": len([r for r in group if r["truth"] is not None]),
                "servers": len(group), "sources": sources, "vmct_actions": actions,
                "truth_median": median(r["truth"] for r in group),
                "uncertainty_max": max((r["uncertainty"] for r in group
                                        if r["uncertainty"] is not None), default=None),
                "vmct": error_stats(r["vmct_error"] for r in group),
                "vmct_mid": error_stats(r["vmct_mid_error"] for r in group),
                "rally": error_stats(r["rally_error"] for r in group),
                "offsets": {source: median(values) for source, values in offsets.items()},
            })
    return summary


def analyse(run):
    """``(rows, summary)`` of a raw run: ``{"servers": [server record, ...], ...}``.

    A server record: ``kind``, ``uuid``, ``phases`` (``phase``, ``t_send``, ``vmct`` and
    ``rally``: ``{"duration", "resolution", "error", "action"}``), ``polls``
    (``[sent, received, status, task_state, ...]``), ``notifications``
    (:meth:`Notification.as_dict`), ``docker_events``, ``libvirt_events``.
    """
    rows = [row for server in run.get("servers") or [] for row in observe_server(server)]
    kinds = list(dict.fromkeys(server["kind"] for server in run.get("servers") or []))
    return rows, summarise(rows, kinds)


# -- the tables ------------------------------------------------------------------------------

def seconds_text(value, sign=False):
    if value is None:
        return "-"
    return ("%+.3f" if sign else "%.3f") % value


def _stats(stats):
    if stats is None:
        return "%6s %6s %7s" % ("-", "-", "-")
    return "%6.3f %6.3f %+7.3f" % (stats.median_abs, stats.max_abs, stats.bias)


def _sources(sources):
    short = {UPDATE: "update", POLLER: "poller", POLLER_NOTIFICATION: "poller+notif",
             NOTIFICATION: "end-notif", "none": "none"}
    return ",".join("%s:%d" % (short.get(s, s), n) for s, n in sorted(sources.items()))


def accuracy_table(summary):
    """Lines of the main table: per kind x phase, VMCT's and rally-openstack's |error|."""
    lines = [
        "%-9s %-12s %3s %-24s %6s %8s | %-22s | %-22s | %-22s" % (
            "kind", "phase", "N", "truth source", "+-max", "truth", "VMCT |err| med max bias",
            "rally |err| med max bias", "VMCT-mid |err| med max"),
    ]
    for row in summary:
        note = ""
        if any(a.endswith("fell_back_to_hard") for a in row["vmct_actions"] or []):
            note = "  (%s)" % ", ".join(row["vmct_actions"])
        lines.append("%-9s %-12s %3d %-24s %6s %8s | %s | %s | %s%s" % (
            row["kind"], row["phase"], row["n"], _sources(row["sources"]),
            seconds_text(row["uncertainty_max"]), seconds_text(row["truth_median"]),
            _stats(row["vmct"]), _stats(row["rally"]), _stats(row["vmct_mid"]), note))
    return lines


OFFSET_COLUMNS = (POLLER, NOTIFICATION, "start notification", "docker", "libvirt")


def offsets_table(summary):
    """Lines of the cross-check table: median (observer's end - truth) per kind x phase."""
    lines = ["%-9s %-12s " % ("kind", "phase")
             + " ".join("%12s" % c.replace(" notification", "-notif") for c in OFFSET_COLUMNS)]
    for row in summary:
        lines.append("%-9s %-12s " % (row["kind"], row["phase"]) + " ".join(
            "%12s" % seconds_text(row["offsets"].get(c), sign=True) for c in OFFSET_COLUMNS))
    return lines


def goal_verdict(summary, goal=0.1):
    """``(met, [(kind, phase, median |error|)])`` of the phases where VMCT misses ``goal`` s."""
    missed = [(row["kind"], row["phase"], row["vmct"].median_abs) for row in summary
              if row["vmct"] is not None and row["vmct"].median_abs > goal]
    return not missed, missed
