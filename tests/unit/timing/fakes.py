"""A fake clock and a scripted fake Nova, so waiter and scenario tests run instantly.

The fake Nova plays, for every action (create, reboot, stop, start, delete), a
script of ``(seconds after the request, status, task_state, power_state)`` steps
against the fake clock, records ``os-instance-actions`` with events whose
``finish_time`` appears when the script ends, and counts every request. Its
``servers.list(search_opts={"changes-since": T})`` answers as Nova does: the
servers whose last step is at or after T, deleted ones as ``DELETED``.
"""

import datetime
import itertools
import math
import threading
import time

RUNNING, SHUTDOWN = 1, 4

# Scripts: (delay, status, task_state, power_state)
BUILD = [(0.0, "BUILD", "scheduling", 0), (0.5, "BUILD", "spawning", 0),
         (2.0, "ACTIVE", None, RUNNING)]
REBOOT = {
    "SOFT": [(0.0, "REBOOT", "reboot_pending", RUNNING),
             (0.3, "REBOOT", "reboot_started", RUNNING),
             (3.0, "ACTIVE", None, RUNNING)],
    "HARD": [(0.0, "HARD_REBOOT", "reboot_pending_hard", RUNNING),
             (0.3, "HARD_REBOOT", "reboot_started_hard", RUNNING),
             (2.0, "ACTIVE", None, RUNNING)],
}
STOP = [(0.0, "ACTIVE", "powering-off", RUNNING), (1.5, "SHUTOFF", None, SHUTDOWN)]
START = [(0.0, "SHUTOFF", "powering-on", SHUTDOWN), (1.0, "ACTIVE", None, RUNNING)]
DELETE = [(0.0, "ACTIVE", "deleting", RUNNING), (1.0, "GONE", None, None)]
# rescue, suspend, pause and their undo (VMCT.boot_and_check_actions)
SET_ASIDE = {
    "rescue": [(0.0, "ACTIVE", "rescuing", RUNNING), (2.0, "RESCUE", None, RUNNING)],
    "unrescue": [(0.0, "RESCUE", "unrescuing", RUNNING), (1.0, "ACTIVE", None, RUNNING)],
    "suspend": [(0.0, "ACTIVE", "suspending", RUNNING), (1.0, "SUSPENDED", None, SHUTDOWN)],
    "resume": [(0.0, "SUSPENDED", "resuming", SHUTDOWN), (1.0, "ACTIVE", None, RUNNING)],
    "pause": [(0.0, "ACTIVE", "pausing", RUNNING), (0.5, "PAUSED", None, 3)],
    "unpause": [(0.0, "PAUSED", "unpausing", 3), (0.5, "ACTIVE", None, RUNNING)],
}
EVENTS = {"create": "compute__do_build_and_run_instance", "reboot": "compute_reboot_instance",
          "stop": "compute_stop_instance", "start": "compute_start_instance",
          "delete": "compute_terminate_instance", "rescue": "compute_rescue_instance",
          "unrescue": "compute_unrescue_instance", "suspend": "compute_suspend_instance",
          "resume": "compute_resume_instance", "pause": "compute_pause_instance",
          "unpause": "compute_unpause_instance"}
EPOCH = 1_800_000_000.0


class FakeClock:
    """Monotonic time that only moves when someone sleeps (or :meth:`advance`)."""

    def __init__(self, start=100.0):
        self.now = start
        self.sleeps = []

    def monotonic(self):
        return self.now

    def wall(self):
        return EPOCH + self.now

    def sleep(self, seconds):
        assert seconds >= 0, seconds
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds):
        self.now += seconds

    def wall_of(self, monotonic):
        return EPOCH + monotonic

    def wait(self, condition, timeout):
        """Nobody else can notify in a single thread: the whole timeout passes."""
        assert timeout is not None, "a single thread would wait forever"
        self.sleep(timeout)


class RealClock(FakeClock):
    """Real time under the fake clock's names, for tests and benchmarks with threads."""

    def __init__(self, start=100.0):
        self.base = time.monotonic() - start
        super().__init__(start)

    @property
    def now(self):
        return time.monotonic() - self.base

    @now.setter
    def now(self, value):
        pass

    def sleep(self, seconds):
        time.sleep(seconds)

    def wait(self, condition, timeout):
        condition.wait(timeout)

    def advance(self, seconds):
        raise AssertionError("real time cannot be advanced")


def iso(clock_value):
    return datetime.datetime.fromtimestamp(EPOCH + clock_value, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%S.%f")


def clock_value(iso_time):
    """The fake clock's value of an ISO 8601 time (what ``iso`` and changes-since give)."""
    parsed = datetime.datetime.fromisoformat(iso_time.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.timestamp() - EPOCH


class APIError(Exception):

    def __init__(self, code, message="boom"):
        super().__init__("%s (HTTP %s)" % (message, code))
        self.code = code


class NotFound(APIError):

    def __init__(self):
        super().__init__(404, "Instance could not be found")


class Obj:

    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def to_dict(self):
        return dict(self.__dict__)


class FakeServerRecord:

    def __init__(self, nova, server_id, name, kwargs):
        self.nova = nova
        self.id = server_id
        self.name = name
        self.kwargs = kwargs
        self.steps = []          # absolute (time, status, task_state, power_state)
        self.fault = None
        self.actions = []
        self.ports = [("port-0", "net-1", None)]    # (port id, network id, detached at)

    def play(self, script, action, result="Success", hide_events=False):
        start = self.nova.clock.now
        if self.nova.jitter is not None:        # every step after the first, later by as much
            late = self.nova.jitter()
            script = [(d + late if d else d, s, t, p) for d, s, t, p in script]
        self.steps.extend((start + d, s, t, p) for d, s, t, p in script)
        request_id = "req-%d" % next(self.nova.request_ids)
        end = start + script[-1][0]
        if script[-1][1] == "ERROR":
            self.fault = self.nova.fault
            result = "Error"
        self.actions.append({"action": action, "request_id": request_id, "start": start,
                             "events": [] if hide_events else
                             [{"event": EVENTS[action], "start": start + 0.01,
                               "finish": end, "result": result}]})
        return request_id

    def state(self):
        now = self.nova.clock.now
        current = None
        for step in self.steps:
            if step[0] <= now:
                current = step
        return current

    def updated(self, step):
        """Nova's ``updated_at`` of ``step`` (None: never saved since its create)."""
        if self.nova.hide_unsaved and step is self.steps[0]:
            return None
        resolution = self.nova.updated_resolution
        return math.floor(step[0] / resolution) * resolution if resolution else step[0]


class FakeServer(Obj):
    """What ``servers.get`` returns: a snapshot plus the action methods."""

    def __init__(self, record, state):
        when, status, task_state, power_state = state
        if status == "GONE":      # only a list shows it: as Nova lists a deleted instance
            status, task_state, power_state = "DELETED", None, 0
        super().__init__(id=record.id, name=record.name, status=status,
                         updated=iso(record.updated(state) or when),
                         addresses=record.nova.addresses,
                         networks={k: [a["addr"] for a in v]
                                   for k, v in record.nova.addresses.items()})
        setattr(self, "OS-EXT-STS:task_state", task_state)
        setattr(self, "OS-EXT-STS:power_state", power_state)
        setattr(self, "OS-EXT-STS:vm_state", status.lower())
        if status == "ERROR" and record.nova.clock.now >= when + record.nova.fault_delay:
            self.fault = record.fault
        self._record = record

    def reboot(self, reboot_type="SOFT"):
        return self._record.nova.servers.reboot(self, reboot_type)

    def stop(self):
        return self._record.nova.servers.stop(self)

    def start(self):
        return self._record.nova.servers.start(self)

    def delete(self):
        return self._record.nova.servers.delete(self)


class WithMeta(tuple):

    def __new__(cls, request_id):
        obj = super().__new__(cls, (None, None))
        obj.request_ids = [request_id]
        return obj


def _sid(server):
    return getattr(server, "id", server)


class FakeServers:

    def __init__(self, nova):
        self.nova = nova
        self.records = {}
        self.created = []
        self.deleted = []
        self.ids = itertools.count(1)

    def _record(self, server):
        record = self.records.get(_sid(server))
        if record is None or record.state() is None or record.state()[1] == "GONE":
            raise NotFound()
        return record

    def create(self, name, image, flavor, **kwargs):
        self.nova.count("POST /servers")
        server_id = "srv-%d" % next(self.ids)
        record = FakeServerRecord(self.nova, server_id, name,
                                  dict(kwargs, image=image, flavor=flavor))
        with self.nova.lock:
            self.records[server_id] = record
        self.created.append(record)
        record.play(self.nova.scripts["create"], "create")
        server = FakeServer(record, record.state())
        server.request_ids = [record.actions[-1]["request_id"]]
        return server

    def get(self, server):
        self.nova.count("GET /servers/id")
        error = self.nova.next_error()
        if error:
            raise error
        record = self._record(server)
        return FakeServer(record, record.state())

    def list(self, detailed=True, search_opts=None, marker=None, limit=None):
        """``GET /servers/detail``: with changes-since, deleted servers too (as DELETED)."""
        self.nova.count("GET /servers/detail")
        error = self.nova.next_error()
        if error:
            raise error
        since = (search_opts or {}).get("changes-since")
        since = clock_value(since) if since else None
        with self.nova.lock:
            records = list(self.records.values())
        if marker is not None:
            records = records[[r.id for r in records].index(marker) + 1:]
        listed = []
        for record in records:
            state = record.state()
            if state is None:
                continue
            if since is None:
                if state[1] != "GONE":
                    listed.append(FakeServer(record, state))
                continue
            updated = record.updated(state)
            if updated is not None and updated >= since:
                listed.append(FakeServer(record, state))
        page = limit or self.nova.page_size
        return listed[:page]

    def _act(self, server, action, script, **kw):
        self.nova.count("POST /servers/id/action " + action)
        record = self._record(server)
        return WithMeta(record.play(script, action, **kw))

    def reboot(self, server, reboot_type="SOFT"):
        script = self.nova.scripts.get("reboot_" + reboot_type) or REBOOT[reboot_type]
        return self._act(server, "reboot", script,
                         hide_events=self.nova.hide_reboot_events)

    def stop(self, server):
        return self._act(server, "stop", self.nova.scripts["stop"])

    def start(self, server):
        return self._act(server, "start", self.nova.scripts["start"])

    def delete(self, server):
        self.deleted.append(_sid(server))
        return self._act(server, "delete", self.nova.scripts["delete"])

    def _refusable(self, server, action):
        refusal = self.nova.refusals.get(action)
        if refusal is not None:
            self.nova.count("POST /servers/id/action " + action)
            raise refusal
        script = self.nova.scripts.get(action) or SET_ASIDE[action]
        result = "Error" if action in self.nova.compute_refuses else "Success"
        return self._act(server, action, script, result=result)

    def _refusable_action(action):
        def act(self, server):
            return self._refusable(server, action)
        act.__name__ = action
        return act

    rescue = _refusable_action("rescue")
    unrescue = _refusable_action("unrescue")
    suspend = _refusable_action("suspend")
    resume = _refusable_action("resume")
    pause = _refusable_action("pause")
    unpause = _refusable_action("unpause")
    del _refusable_action

    def interface_list(self, server):
        self.nova.count("GET os-interface")
        record = self._record(server)
        now = self.nova.clock.now
        return [Obj(port_id=port, net_id=net) for port, net, gone_at in record.ports
                if gone_at is None or gone_at > now]

    def interface_attach(self, server, port_id, net_id, fixed_ip, tag=None):
        self.nova.count("POST os-interface")
        refusal = self.nova.refusals.get("attach_interface")
        if refusal is not None:
            raise refusal
        record = self._record(server)
        port = "port-%d" % (len(record.ports) + 1)
        record.ports.append((port, net_id, None))
        return Obj(port_id=port, net_id=net_id)

    def interface_detach(self, server, port_id):
        self.nova.count("DELETE os-interface")
        record = self._record(server)
        gone_at = self.nova.clock.now + self.nova.detach_seconds
        record.ports = [(p, n, gone_at if p == port_id else g) for p, n, g in record.ports]

    def _console_request(self, server, request, refusal_key):
        """Count ``request``; raise the refusal set for ``refusal_key``, if any."""
        self.nova.count(request)
        refusal = self.nova.refusals.get(refusal_key)
        if refusal is not None:
            raise refusal
        self._record(server)

    def get_console_output(self, server, length=None):
        self._console_request(server, "POST os-getConsoleOutput", "console_output")
        lines = self.nova.console.splitlines(keepends=True)
        return "".join(lines[-length:] if length else lines)

    def get_console_url(self, server, console_type):
        self._console_request(server, "POST remote-consoles", "console_url")
        return {"remote_console": {"type": console_type, "protocol": "vnc",
                                   "url": "http://127.0.0.1:6080/vnc_auto.html?token=t"}}


class FakeInstanceActions:

    def __init__(self, nova):
        self.nova = nova

    def _action(self, record, action):
        now = self.nova.clock.now
        events = [{"event": e["event"], "start_time": iso(e["start"]),
                   "finish_time": iso(e["finish"]) if e["finish"] <= now else None,
                   "result": e["result"] if e["finish"] <= now else None}
                  for e in action["events"]]
        return Obj(action=action["action"], request_id=action["request_id"],
                   start_time=iso(action["start"]), message=None, events=events)

    def list(self, server):
        self.nova.count("GET os-instance-actions")
        record = self.nova.servers.records[_sid(server)]
        return [Obj(action=a["action"], request_id=a["request_id"],
                    start_time=iso(a["start"]), message=None)
                for a in reversed(record.actions)]

    def get(self, server, request_id):
        self.nova.count("GET os-instance-actions/id")
        record = self.nova.servers.records[_sid(server)]
        for action in record.actions:
            if action["request_id"] == request_id:
                return self._action(record, action)
        raise NotFound()


class FakeNova:
    """``nova`` client look-alike with scripted servers on a :class:`FakeClock`."""

    def __init__(self, clock, **scripts):
        self.clock = clock
        self.scripts = {"create": BUILD, "stop": STOP, "start": START, "delete": DELETE}
        self.scripts.update(scripts)
        self.servers = FakeServers(self)
        self.instance_action = FakeInstanceActions(self)
        self.addresses = {"private": [{"addr": "10.0.0.5", "version": 4,
                                       "OS-EXT-IPS:type": "fixed"}]}
        self.fault = {"code": 500, "message": "No valid host was found. There are not "
                      "enough hosts available.", "created": "2026-01-01T00:00:00Z"}
        # seconds a server shows ERROR before its fault (Nova saves the state first)
        self.fault_delay = 0.0
        self.errors = []          # exceptions the next GETs raise, in order
        self.hide_reboot_events = False
        self.refusals = {}        # action -> exception the API answers with
        self.compute_refuses = set()   # actions whose compute event ends in Error
        self.detach_seconds = 2.0
        self.console = ""              # every server's console log
        # updated_at's resolution (1.0: MySQL's whole seconds); whether a server's
        # first step has no updated_at yet (an instance never saved: not listed).
        self.updated_resolution = 0.0
        self.hide_unsaved = False
        self.page_size = 1000          # [api] max_limit
        self.jitter = None             # callable: seconds to add to a script's steps
        self.requests = []
        self.request_ids = itertools.count(1)
        self.lock = threading.Lock()

    def count(self, what):
        with self.lock:
            self.requests.append((self.clock.now, what))

    def next_error(self):
        with self.lock:
            return self.errors.pop(0) if self.errors else None


class FakeClients:
    """``osclients.Clients`` look-alike for ``Scenario(context, clients=...)``."""

    def __init__(self, nova):
        self._nova = nova

    def nova(self, version=None):
        return self._nova


class FakeProbe:
    """A probe that succeeds ``delay`` s after the server last became ACTIVE."""

    what = "fake probe"

    def __init__(self, nova, server_id, delay):
        self.nova, self.server_id, self.delay = nova, server_id, delay
        self.checks = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def summary(self):
        return "refused x%d" % (self.checks - 1) if self.checks > 1 else ""

    def check(self):
        self.checks += 1
        record = self.nova.servers.records[self.server_id]
        now = self.nova.clock.now
        since = None
        for when, status, task_state, _ in record.steps:
            if when > now:
                break
            if status == "ACTIVE" and task_state is None:
                since = when if since is None else since
            else:
                since = None
        restarts = [a["start"] for a in record.actions
                    if a["action"] in ("create", "reboot", "start") and a["start"] <= now]
        if since is not None and restarts:
            since = max(since, max(restarts))   # an instant reboot still restarts the guest
        if since is not None and now >= since + self.delay:
            return True, "answered"
        return False, "refused"
