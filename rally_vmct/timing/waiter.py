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
"""Fast, gentle polling of one Nova server, with every state change time-stamped.

rally-openstack's helpers sleep 1-2 s and then poll every 2 s, so they cannot
resolve a phase shorter than a few seconds. :class:`ServerWaiter` polls one server
every ``interval`` seconds (``[vmct] poll_interval``, 0.2 s by default) and:

* never sends more than ``max_requests_per_second`` requests for that server,
  whatever the interval (a :class:`Pacer` spaces request *starts*, so a slow API
  is never hit by more than one request per server at a time);
* backs off exponentially, up to ``max_interval``, while the API answers with
  transient errors (5xx, 408/409/429, connection failures), and resumes the fast
  pace after the first good answer; permanent errors (401, 403, 400...) are
  raised at once;
* records every change of status, task state, VM state and power state as a
  :class:`Transition` with monotonic timestamps: ``at`` is when the answer that
  showed the new value arrived, ``since`` when the previous poll (which still saw
  the old value) was sent, so the change happened in ``(since, at]``;
* raises :class:`ServerFault` with Nova's fault message when the server goes to
  ERROR, and :class:`WaitTimeout` naming what it waited for and what it last saw;
* counts the requests its polls cost (:meth:`ServerWaiter.cost`).

Given a :class:`rally_vmct.timing.watcher.Watcher` (``[vmct] poll_mode = batched``),
a waiter gets its server's state from the watcher's one list call per poll for
every server the process waits for, instead of a GET of its own; the
transitions, observations and errors are the same.

The clock (``monotonic``, ``wall``, ``sleep``) is injected, so unit tests run
instantly against fake clients. Nothing here imports Rally or OpenStack clients.
"""

import contextlib
import dataclasses
import time

ACTIVE = "ACTIVE"
ERROR = "ERROR"
SHUTOFF = "SHUTOFF"
# Status of a server the API answers 404 for.
GONE = "GONE"
# Statuses of a server that is deleted but still listed (soft delete / reclaim).
DELETED_STATUSES = frozenset(["DELETED", "SOFT_DELETED"])
# What a batched poll answers for a server absent from a changes-since list.
UNCHANGED = object()
# [vmct] poll_mode: a GET per server and poll, or one list per poll for all servers.
PER_SERVER, BATCHED = "per_server", "batched"

_TRANSIENT_CODES = frozenset([408, 409, 429])
# Exception classes (by name, so that no client library has to be imported) that
# mean "the API could not be reached this time": keystoneauth's ConnectFailure,
# ConnectTimeout, requests' ConnectionError, ...
_TRANSIENT_NAMES = frozenset([
    "ConnectionError", "ConnectFailure", "ConnectTimeout", "RetriableConnectionFailure",
    "UnknownConnectionError", "SSLError", "Timeout", "ReadTimeout", "RequestTimeout",
    "ServiceUnavailable", "GatewayTimeout", "BadGateway",
])


class Clock:
    """Real time: ``monotonic`` for durations, ``wall`` for Rally's timestamps."""

    monotonic = staticmethod(time.monotonic)
    wall = staticmethod(time.time)
    sleep = staticmethod(time.sleep)

    @staticmethod
    def wait(condition, timeout):
        """Wait on a held ``threading.Condition`` for a notification or ``timeout`` s."""
        condition.wait(timeout)

    def wall_of(self, monotonic):
        """The wall-clock time of a past ``monotonic()`` instant."""
        return self.wall() - (self.monotonic() - monotonic)


class WaitError(Exception):
    """A wait for a server state or for a probe did not succeed."""


class WaitTimeout(WaitError):
    """The awaited state or probe result did not come in time."""


# GETs of a server seen in ERROR without a fault, until Nova has recorded it.
FAULT_READS = 5


class ServerFault(WaitError):
    """The server went to ERROR; the message carries Nova's fault."""

    def __init__(self, message, fault=None):
        super().__init__(message)
        self.fault = fault


class ServerGone(WaitError):
    """The server disappeared (404) while a state was awaited."""


def http_code(exc):
    """HTTP status code carried by a client exception, else None."""
    for attr in ("code", "http_status", "status_code"):
        code = getattr(exc, attr, None)
        if isinstance(code, int):
            return code
    return None


def is_not_found(exc):
    """True for a 404 from any OpenStack client."""
    return http_code(exc) == 404 or type(exc).__name__ == "NotFound"


def is_transient(exc):
    """True for API errors worth retrying after a pause (5xx, 429, no connection)."""
    code = http_code(exc)
    if code is not None:
        return code >= 500 or code in _TRANSIENT_CODES
    if isinstance(exc, OSError):
        return True
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(exc).__mro__)


def fault_text(fault):
    """One line from a Nova ``fault`` (``{"code", "message", "details"}``)."""
    if not fault:
        return "no fault recorded by Nova"
    if not isinstance(fault, dict):
        return str(fault)
    text = "Nova fault %s: %s" % (fault.get("code", "?"), fault.get("message") or "(no message)")
    details = (fault.get("details") or "").strip()
    if details:
        # details is a traceback for admins; its last line names the exception.
        text += " [%s]" % details.splitlines()[-1].strip()[:300]
    return text


@dataclasses.dataclass(frozen=True)
class ServerState:
    """What one GET of a server showed (``status`` is ``GONE`` after a 404)."""

    status: str
    task_state: object = None
    vm_state: object = None
    power_state: object = None
    fault: object = dataclasses.field(default=None, compare=False)

    FIELDS = ("status", "task_state", "vm_state", "power_state")

    @classmethod
    def of(cls, server):
        """State of a novaclient ``Server`` (extended attributes if visible)."""
        if server is None:
            return cls(GONE)
        return cls(status=getattr(server, "status", None),
                   task_state=getattr(server, "OS-EXT-STS:task_state", None),
                   vm_state=getattr(server, "OS-EXT-STS:vm_state", None),
                   power_state=getattr(server, "OS-EXT-STS:power_state", None),
                   fault=getattr(server, "fault", None))

    @property
    def gone(self):
        return self.status == GONE or self.status in DELETED_STATUSES

    @property
    def settled(self):
        """No task in progress (``task_state`` is None)."""
        return self.task_state is None

    def describe(self):
        if self.status == GONE:
            return "gone (404)"
        return "%s (task_state=%s, power_state=%s)" % (self.status, self.task_state,
                                                       self.power_state)


@dataclasses.dataclass(frozen=True)
class Transition:
    """One field of a server changed from ``old`` to ``new`` in ``(since, at]``."""

    field: str
    old: object
    new: object
    at: float
    since: float


@dataclasses.dataclass(frozen=True)
class PollCost:
    """Nova API requests the polls of one server cost, over the seconds it was polled.

    Batched polls count a share of each list call: its requests divided among the
    servers waited for while it ran.
    """

    mode: str
    interval: float
    requests: float
    seconds: float

    def __add__(self, other):
        return dataclasses.replace(self, requests=self.requests + other.requests,
                                   seconds=self.seconds + other.seconds)

    @property
    def rate(self):
        """Requests per second of polling (0 when never polled)."""
        return self.requests / self.seconds if self.seconds > 0 else 0.0


@dataclasses.dataclass(frozen=True)
class Observation:
    """The awaited condition held at ``at``; it did not yet at ``since``.

    ``at`` is when the answer that showed it arrived, ``sent`` when that poll was
    sent, ``since`` when the previous poll (which still saw the old state) was
    sent: Nova read the state a moment after each send, so the change happened
    between ``since`` and ``sent`` (plus that moment). :attr:`estimate`, the
    middle, is where a timed phase ends: ``at`` would add the rest of the GET
    (Nova builds the view after the read: 0.1-0.4 s on the all-in-one cloud,
    tools/bench/timer-accuracy) to a median error of half a poll interval.
    """

    state: object
    at: float
    since: float
    polls: int
    verdict: object = True
    sent: float | None = None

    @property
    def resolution(self):
        """Width of the interval the change happened in (seconds)."""
        return self.at - self.since

    @property
    def estimate(self):
        """When the change most likely happened: between ``since`` and ``sent``."""
        sent = self.at if self.sent is None else self.sent
        return (self.since + sent) / 2 if sent > self.since else sent


class Pacer:
    """Spaces the API requests about one server and backs off after API errors.

    ``interval`` is the wanted gap between two request starts; the effective gap
    is never below ``1 / max_requests_per_second``. Each transient API error
    doubles the gap, up to ``max_interval``; a good answer restores it.
    """

    def __init__(self, interval=0.2, max_interval=2.0, max_requests_per_second=5.0,
                 clock=None, transient=is_transient):
        if interval <= 0:
            raise ValueError("poll interval must be > 0, got %r" % interval)
        if max_requests_per_second <= 0:
            raise ValueError("max_requests_per_second must be > 0, got %r"
                             % max_requests_per_second)
        self.clock = clock or Clock()
        self.min_gap = max(float(interval), 1.0 / max_requests_per_second)
        self.max_gap = max(float(max_interval), self.min_gap)
        self.gap = self.min_gap
        self.transient = transient
        self.requests = 0
        self.errors = 0
        self.last_error = None
        self.actions = 0          # action requests counted by sent()
        self._last_start = None

    def next_start(self):
        """Monotonic instant from which the next request may be sent."""
        if self._last_start is None:
            return self.clock.monotonic()
        return self._last_start + self.gap

    def before_action(self):
        """Wait until the next request (an action: reboot, delete...; or a poll) may be sent."""
        pause = self.next_start() - self.clock.monotonic()
        if pause > 0:
            self.clock.sleep(pause)

    def hurry(self):
        """Let the next request go at once, whatever the gap."""
        self._last_start = None

    def sent(self):
        """Count an action request sent after :meth:`before_action`.

        The next poll is not delayed, so that the state right after the action
        (e.g. the task state the API set) is seen at once: the only time two
        requests about one server come closer than the gap.
        """
        self.requests += 1
        self.actions += 1
        self.hurry()

    def _wait_turn(self):
        self.before_action()
        self._last_start = self.clock.monotonic()
        self.requests += 1
        return self._last_start

    def call(self, fn, deadline, what):
        """``(fn(), sent, received)``: call ``fn`` when allowed, retry transient errors.

        Raises :class:`WaitTimeout` when transient errors last past ``deadline``
        (monotonic), and any permanent error at once.
        """
        while True:
            sent = self._wait_turn()
            try:
                result = fn()
            except Exception as e:
                if not self.transient(e):
                    raise
                self.errors += 1
                self.last_error = e
                self.gap = min(self.max_gap, self.gap * 2)
                if self.clock.monotonic() >= deadline:
                    raise WaitTimeout("API kept failing while %s: %s: %s"
                                      % (what, type(e).__name__, e)) from e
                continue
            self.gap = self.min_gap
            return result, sent, self.clock.monotonic()


class ServerWaiter:
    """Polls one server through ``get_server(server_id)`` and records its transitions.

    ``get_server`` raises a 404 client error (see :func:`is_not_found`) once the
    server is gone; every other exception goes through the :class:`Pacer`. With
    a ``watcher`` (:class:`rally_vmct.timing.watcher.Watcher`), each poll is the
    watcher's next list call instead; ``get_server`` is then only used for a
    server the list has not shown yet, or whose last look is too old to extend
    everyone's changes-since window to (one GET, counted to this server).
    """

    def __init__(self, get_server, server_id, pacer=None, clock=None,
                 not_found=is_not_found, watcher=None):
        self.clock = clock or (pacer.clock if pacer else Clock())
        self.pacer = pacer or Pacer(clock=self.clock)
        self.get_server = get_server
        self.server_id = server_id
        self.not_found = not_found
        self.watcher = watcher
        self.state = None
        self.last_server = None
        self.transitions = []
        self.polls = 0
        # Requests of this waiter's own GETs, and its share of the watcher's lists
        # (written by the watcher, under its lock).
        self.get_requests = 0
        self.list_requests = 0.0
        self.polled_seconds = 0.0
        # Wall-clock time the last poll was sent (the watcher's changes-since).
        self.seen_wall = None
        self._last_sent = None
        self._actions_seen = 0
        self._depth = 0
        self._joined = False

    def cost(self):
        """:class:`PollCost` of this waiter's polls so far."""
        mode = BATCHED if self.watcher is not None else PER_SERVER
        pacer = self.watcher.pacer if self.watcher is not None else self.pacer
        return PollCost(mode, pacer.min_gap, self.get_requests + self.list_requests,
                        self.polled_seconds)

    @property
    def urgent(self):
        """Was an action requested since the last poll (the next poll must not wait)?"""
        return self.pacer.actions > self._actions_seen

    @contextlib.contextmanager
    def polling(self):
        """Time spent polling (:meth:`cost`); a batched waiter is watched meanwhile.

        Nested uses count once. Outside of it a batched waiter gets no answers,
        so the watcher only lists while someone waits.
        """
        self._depth += 1
        start = self.clock.monotonic()
        try:
            yield self
        finally:
            self._depth -= 1
            if not self._depth:
                if self._joined:
                    self._joined = False
                    self.watcher.unregister(self)
                self.polled_seconds += self.clock.monotonic() - start

    def _fetch(self):
        try:
            return self.get_server(self.server_id)
        except Exception as e:
            if self.not_found(e):
                return None
            raise

    def _get(self, deadline, what):
        before = self.pacer.requests
        try:
            return self.pacer.call(self._fetch, deadline, what)
        finally:
            self.get_requests += self.pacer.requests - before

    def _answer(self, deadline, what):
        """``(server or None or UNCHANGED, sent, received)`` of the next poll."""
        if self.watcher is None:
            return self._get(deadline, what)
        if not self._joined:
            stale = (self.seen_wall is not None
                     and self.clock.wall() - self.seen_wall > self.watcher.stale_after)
            answer = self._get(deadline, what) if stale else None
            if answer is not None:
                self.seen_wall = self.clock.wall_of(answer[1])
            self.watcher.register(self)
            self._joined = True
            if answer is not None:
                return answer
        answer = self.watcher.next_answer(self, deadline, what)
        if answer[0] is UNCHANGED and self.state is None:
            # Not listed (a new instance Nova has not saved yet): look once.
            return self._get(deadline, what)
        return answer

    def poll(self, deadline, what="polling"):
        """One paced poll: ``(ServerState, sent, received)``; records changes."""
        with self.polling():
            server, sent, received = self._answer(deadline, what)
        self.polls += 1
        if server is UNCHANGED:
            state = self.state
        else:
            if server is not None:
                self.last_server = server
            state = ServerState.of(server)
        previous = self.state
        since = self._last_sent if self._last_sent is not None else sent
        for name in ServerState.FIELDS:
            old = getattr(previous, name) if previous is not None else None
            new = getattr(state, name)
            if previous is None or old != new:
                self.transitions.append(Transition(name, old, new, received, since))
        self.state = state
        self._last_sent = sent
        self._actions_seen = self.pacer.actions
        self.seen_wall = self.clock.wall_of(sent)
        return state, sent, received

    def wait_for(self, accept, timeout, what, started_at=None, error_ok=False,
                 gone_ok=False):
        """Poll until ``accept(state)`` is truthy; returns an :class:`Observation`.

        :param accept: callable(ServerState) -> truthy verdict when done
        :param timeout: seconds from now
        :param what: what is awaited, for messages ("server to become ACTIVE")
        :param started_at: monotonic start of the phase (lower bound when the
            first poll already satisfies ``accept``); now by default
        :param error_ok: do not raise on ERROR status (``accept`` decides)
        :param gone_ok: do not raise when the server is gone
        """
        start = self.clock.monotonic()
        started_at = start if started_at is None else started_at
        deadline = start + timeout
        since = started_at
        if self._last_sent is None or self._last_sent < started_at:
            # What this phase waits for cannot have happened before it started.
            self._last_sent = started_at
        with self.polling():
            polls = 0
            while True:
                state, sent, received = self.poll(deadline, "waiting for " + what)
                polls += 1
                verdict = accept(state)
                if verdict:
                    return Observation(state, received, since, polls, verdict, sent)
                if state.status == ERROR and not error_ok:
                    fault = self._fault_of_error(state, deadline)
                    raise ServerFault("Server %s went to ERROR while waiting for %s: %s"
                                      % (self.server_id, what, fault_text(fault)),
                                      fault=fault)
                if state.gone and not gone_ok:
                    raise ServerGone("Server %s disappeared while waiting for %s"
                                     % (self.server_id, what))
                if self.clock.monotonic() >= deadline:
                    raise self._timeout(what, start, state, polls)
                since = sent

    def _fault_of_error(self, state, deadline):
        """The fault of a server seen in ERROR, read again while Nova shows none yet.

        Nova saves vm_state ERROR first and records the fault after it (the conductor's
        "No valid host", the compute manager's build failure), so a poll in between sees
        ERROR without the reason: up to :data:`FAULT_READS` more paced GETs.
        """
        for _ in range(FAULT_READS):
            if state.fault or self.clock.monotonic() >= deadline:
                break
            server, _, _ = self._get(deadline, "reading the fault of server %s" % self.server_id)
            if server is None:
                break
            state = ServerState.of(server)
        return state.fault

    def _timeout(self, what, start, state, polls):
        message = ("Timed out after %.1f s waiting for %s (server %s): last seen %s after %d "
                   "polls" % (self.clock.monotonic() - start, what, self.server_id,
                              state.describe(), polls))
        pacers = [self.pacer] + ([self.watcher.pacer] if self.watcher is not None else [])
        errors = [p.last_error for p in pacers if p.last_error is not None]
        if errors:
            message += "; last API error: %s" % errors[-1]
        return WaitTimeout(message)

    def wait_for_status(self, statuses, timeout, what=None, started_at=None):
        """Wait for one of ``statuses`` with no task in progress."""
        statuses = (statuses,) if isinstance(statuses, str) else tuple(statuses)
        what = what or "server to become %s" % "/".join(statuses)
        return self.wait_for(lambda s: s.status in statuses and s.settled, timeout, what,
                             started_at=started_at, error_ok=ERROR in statuses)

    def wait_gone(self, timeout, what="server to be deleted", started_at=None):
        """Wait for a 404 (or a DELETED / SOFT_DELETED status)."""
        return self.wait_for(lambda s: s.gone, timeout, what, started_at=started_at,
                             gone_ok=True)


@dataclasses.dataclass(frozen=True)
class ProbeResult:
    """A probe first succeeded at ``at``; the previous attempt (at ``since``) had not."""

    at: float
    since: float
    attempts: int
    detail: str = ""


def wait_until(check, timeout, interval, what, clock=None, started_at=None):
    """Call ``check()`` every ``interval`` s until it answers ``(True, detail)``.

    ``check`` should not block for long (the probes in :mod:`rally_vmct.access.probes`
    keep their attempts in flight between calls). Raises :class:`WaitTimeout`
    with the last failure detail.
    """
    clock = clock or Clock()
    start = clock.monotonic()
    deadline = start + timeout
    since = start if started_at is None else started_at
    attempts = 0
    detail = "no attempt made"
    while True:
        attempt_at = clock.monotonic()
        attempts += 1
        ok, detail = check()
        now = clock.monotonic()
        if ok:
            return ProbeResult(now, since, attempts, detail)
        if now >= deadline:
            raise WaitTimeout("Timed out after %.1f s waiting for %s: %d attempts, last: %s"
                              % (now - start, what, attempts, detail))
        since = attempt_at
        pause = min(attempt_at + interval, deadline) - clock.monotonic()
        if pause > 0:
            clock.sleep(pause)
