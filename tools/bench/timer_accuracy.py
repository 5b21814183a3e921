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
"""Timer accuracy, measured: VMCT's and rally-openstack's phase figures against the truth.

    tools/bench/timer-accuracy [--kinds fake docker qemu-tcg] [--count 3] [--out FILE]
    tools/bench/timer-accuracy --from-json FILE     # the tables of a saved run again

On the all-in-one cloud, one server at a time (names ``vmct-timer-*``), per instance kind:
build (create request -> ACTIVE), hard reboot, soft reboot, stop, start, delete (request ->
gone). Each request is sent once, by VMCT's own :class:`ServerSession` (``rally_vmct.task.
server.session`` and ``power``, the code the scenarios run, probe ``none``: no network
phase); at the same instant a thread runs rally-openstack's own helper for that phase
(``NovaScenario._boot_server``, ``_reboot_server``, ``_soft_reboot_server``, ``_stop_server``,
``_start_server``, ``_delete_server``, with their atomic timers, ``sleep_between`` pre-poll
sleeps and ``rally.task.utils.wait_for_status`` polling at rally-openstack's default
``[openstack] nova_server_*`` options) on the same server: its action methods do not send
the request a second time, they wait until VMCT's request was answered. Both figures are
their atomic action durations. Meanwhile independent observers record what happened.

The truth, per phase
--------------------
Start: ``t_send``, the instant the benchmark's client sent the phase's request (stamped
right before the HTTP call; both timers start their clocks within a millisecond of it).

End: the instant from which Nova's API answers the state that ends the phase, the state
both timers wait for: ACTIVE with no task state (build, hard and soft reboot, start),
SHUTOFF with no task state (stop), 404 or DELETED (delete). Its source, best first:

1. ``instance.update``: Nova sends it right after the database save that makes the API show
   the new state (microsecond timestamp); the last one in the phase's window whose
   ``state_update`` goes into the end state. Only there when Nova runs with ``[notifications]
   notify_on_state_change = vm_and_task_state`` (otherwise the next source is used). Error:
   the milliseconds between the commit and the emit.
2. ``poller`` (closed by the end notification): a separate poller with a keystone session
   of its own GETs the server every ``--poll-period`` (0.05 s, start to start;
   ``--poll-threads`` threads share the slot grid so that a slow answer does not skip
   slots). What is certain: the change came after the last poll that still saw another
   state was sent (L), before the next poll was answered (U) and, where nova-compute
   emitted the phase's end notification (source 3) in between, before that (N: it is sent
   after the save). Truth = the middle of (L, min(U, N)), within +- half of it (the
   table's "+-max" column: the largest). Nova reads the instance at the start of a GET
   and spends most of it building the view (Neutron calls for the security groups), so
   the middle of the two polls' send times is the poller's own estimate; it is shown as
   an observer ("poller") next to the others.
3. ``end notification``: the phase's versioned notification from nova-compute
   (``instance.create.end``, ``reboot.end``, ``power_off.end``, ``power_on.end``; for
   delete ``shutdown.end``, after which nova-compute saves DELETED with only the volumes'
   cleanup in between: ``delete.end`` follows placement's allocation delete and the row's
   destroy, 0.2-0.7 s later here), emitted after the save, so late by the work in between.
   Used only when the poller saw no change (a reboot quicker than its period) or runs with
   ``--poll-threads 0`` (no API load of its own).

What each observer can and cannot see
-------------------------------------
* The poller sees exactly what the API answers, no finer than its period plus one answer's
  latency; nothing inside the compute host; a state that comes and goes between two polls
  is invisible to it (a fake-driver reboot may be).
* Nova's notifications (parsed from the services' logs, ``[oslo_messaging_notifications]
  driver = log``, matched by instance uuid) see the compute side (and API-side saves), not
  the request's arrival or the scheduling; ``*.start`` / ``*.end`` bracket nova-compute's
  work; each is emitted after the save it reports.
* Docker (``docker events`` of the instance's container, by its ``nova.instance_uuid`` label,
  nanosecond times; ``docker inspect`` State.StartedAt / FinishedAt after each phase; the
  container is nova-docker's ``container_name``: ``nova-<uuid>``) and libvirt (``virsh event
  --all --loop --timestamp`` on the AIO's libvirt, millisecond times, lifecycle events
  Started / Stopped / Undefined by domain name) see the hypervisor only: a container or a
  domain starts before Nova saves ACTIVE (post-start work, the VIF wait, the save), so their
  events bound the truth from below and show Nova's own share; they are never the truth.
  The fake kind has no hypervisor observer.

Each figure's error is ``figure - (truth end - t_send)``; per kind and phase the table prints
N, the truth sources, the median truth, median and max |error| and the signed median (bias)
of VMCT and rally-openstack, and "VMCT-mid": what VMCT's figure would be if it ended the
phase in the middle between the send times of its last two polls (``since`` and the
answering poll's send: where the API read the change) instead of at the answer (``at``). A
second table gives every other observer's median offset from the truth. The raw
observations of every server go to ``--out`` (JSON; ``--from-json`` prints the tables again).

Every server, port and keypair (none: nothing logs in) it creates is deleted, also after a
failure or Ctrl-C. Runs with the AIO's Rally venv and admin credentials
(tools/bench/timer-accuracy).
"""

import argparse
import dataclasses
import datetime
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import types
import uuid as uuidlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path[:0] = [HERE, ROOT, os.path.join(ROOT, "tools", "aio")]

from oslo_config import cfg  # noqa: E402
from rally.common import opts as rally_opts  # noqa: E402
from rally_openstack.common import osclients  # noqa: E402
from rally_openstack.task.scenarios.nova import utils as nova_utils  # noqa: E402

from rally_vmct.timing import waiter  # noqa: E402
from rally_vmct import opts as vmct_opts  # noqa: E402
from rally_vmct.timing import power  # noqa: E402
from rally_vmct.timing import session as server_session  # noqa: E402
import smoke  # noqa: E402  (tools/aio/smoke.py: task-args.yaml's kinds, the connection)
import timer_accuracy_calc as calc  # noqa: E402

AIO = os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio")
PREFIX = "vmct-timer-"
PHASE_TIMEOUT = 600.0
# Seconds between two phases, per hypervisor: the QEMU guest must have booted before a soft
# reboot (its ACPI handler), and separated phases keep the observers' windows apart.
SETTLE = {"libvirt": 4.0, "docker": 1.0, "fake": 1.0}
# The request of each phase (novaclient servers.<method>) and rally-openstack's helper.
REQUEST = {"build": "create", "reboot_hard": "reboot", "reboot_soft": "reboot",
           "stop": "stop", "start": "start", "delete": "delete"}
RALLY_HELPER = {"build": "_boot_server", "reboot_hard": "_reboot_server",
                "reboot_soft": "_soft_reboot_server", "stop": "_stop_server",
                "start": "_start_server", "delete": "_delete_server"}
# rally-openstack's options its helpers read ([openstack] group), recorded with the run.
RALLY_OPTIONS = ("nova_server_boot_prepoll_delay", "nova_server_boot_poll_interval",
                 "nova_server_pause_prepoll_delay", "nova_server_reboot_poll_interval",
                 "nova_server_stop_poll_interval", "nova_server_start_poll_interval",
                 "nova_server_delete_poll_interval")
CONTAINER = "nova-%s"          # nova_docker_vmct.container.container_name
UUID_LABEL = "nova.instance_uuid"  # nova_docker_vmct.container.LABEL_UUID


class Aborted(Exception):
    """A phase cannot go on (its request failed, or the run was interrupted)."""


class Stamps:
    """Wall-clock times from one monotonic anchor (no jumps within a run)."""

    def __init__(self):
        self.mono0, self.wall0 = time.monotonic(), time.time()

    def now(self):
        return self.wall0 + (time.monotonic() - self.mono0)

    def drift(self):
        """The system clock minus this clock now (what a notification's time may be off by)."""
        return time.time() - self.now()


# -- one request, two timers ------------------------------------------------------------

class Gate:
    """One phase's request: sent once by VMCT's session, awaited by rally-openstack's helper."""

    def __init__(self, method, stamps, abort, on_answer=None):
        self.method = method
        self.stamps = stamps
        self.abort = abort
        self.on_answer = on_answer
        self.go = threading.Event()        # the request is being sent
        self.back = threading.Event()      # it was answered (or failed)
        self.t_send = self.t_ret = None
        self.response = self.failure = None

    def sending(self):
        self.t_send = self.stamps.now()
        self.go.set()

    def answered(self, response, failure=None):
        self.t_ret = self.stamps.now()
        self.response, self.failure = response, failure
        if failure is None and self.on_answer is not None:
            self.on_answer(response)
        self.back.set()

    def cancel(self, why):
        """Release whoever waits: the request will not be (or was not) answered."""
        if self.failure is None:
            self.failure = Aborted(why)
        self.go.set()
        self.back.set()

    def wait(self, event, timeout=PHASE_TIMEOUT):
        deadline = time.monotonic() + timeout
        while not event.wait(0.05):
            if self.abort.is_set() or time.monotonic() > deadline:
                raise Aborted("phase request %s: no answer" % self.method)
        if self.failure is not None:
            raise Aborted("phase request %s failed: %s" % (self.method, self.failure))


class ServersTap:
    """VMCT's ``nova.servers``: the phase's request marks the gate; the rest passes through."""

    def __init__(self, servers, bench):
        self._servers = servers
        self._bench = bench

    def __getattr__(self, name):
        attr = getattr(self._servers, name)
        gate = self._bench.gate
        if gate is None or gate.method != name or gate.go.is_set():
            return attr

        def send(*args, **kwargs):
            gate.sending()
            try:
                result = attr(*args, **kwargs)
            except BaseException as e:
                gate.answered(None, e)
                raise
            gate.answered(result)
            return result
        return send


class NovaTap:
    def __init__(self, nova, bench):
        self._nova = nova
        self.servers = ServersTap(nova.servers, bench)

    def __getattr__(self, name):
        return getattr(self._nova, name)


def vmct_clients(clients, bench):
    """A scenario's ``clients(name, version=None)`` over rally-openstack's osclients."""
    def get(name, version=None):
        client = getattr(clients, name)(version) if version else getattr(clients, name)()
        return NovaTap(client, bench) if name == "nova" and version is None else client
    return get


class RallyServer:
    """The server as rally-openstack's helpers hold it, sharing VMCT's requests.

    ``manager`` is rally's own novaclient servers manager (what its ``wait_for_status``
    polls); the action methods wait for the request VMCT's session sent instead of sending
    another.
    """

    def __init__(self, manager, server_id, status, gate, name=None):
        self.manager = manager
        self.id = server_id
        self.status = status
        self.name = name or server_id
        self._gate = gate

    def _shared_request(self, *args, **kwargs):
        self._gate.wait(self._gate.back)

    reboot = stop = start = delete = force_delete = _shared_request


class RallyClients:
    """``clients`` of the rally-openstack scenario.

    ``nova().servers.create`` (only ``_boot_server`` calls it) returns the server VMCT's
    create request made.
    """

    def __init__(self, bench):
        self._bench = bench

    def nova(self, version=None):
        return types.SimpleNamespace(servers=types.SimpleNamespace(create=self._create))

    def _create(self, name, image, flavor, **kwargs):
        gate = self._bench.gate
        gate.wait(gate.back)
        created = gate.response
        return RallyServer(self._bench.rally_nova.servers, created.id, "BUILD", gate,
                           getattr(created, "name", None))


def rally_phase(scenario, phase, gate, server_id, status, nova, result):
    """rally-openstack's helper for ``phase``, timed by its own atomic timer (a thread)."""
    try:
        gate.wait(gate.go)
        helper = getattr(scenario, RALLY_HELPER[phase])
        if phase == "build":
            helper("image", "flavor")       # the create request is VMCT's: see RallyClients
        else:
            helper(RallyServer(nova.servers, server_id, status, gate))
        action = scenario.atomic_actions()[-1]
        result.update(action=action["name"],
                      duration=action["finished_at"] - action["started_at"],
                      started_at=action["started_at"], finished_at=action["finished_at"])
    except Exception as e:  # noqa: BLE001 - recorded with the phase
        result["error"] = "%s: %s" % (type(e).__name__, e)


# -- observers --------------------------------------------------------------------------

class Poller:
    """GETs one server every ``period`` s (start to start) from one thread per nova client.

    Each poll is ``[sent, received, status, task_state, vm_state, power_state]`` (status
    ``GONE`` after a 404). The threads share one grid of slots, so a slow answer in one
    thread does not delay the next poll.
    """

    def __init__(self, novas, server_id, period, stamps):
        self.novas = novas
        self.server_id = server_id
        self.period = period
        self.stamps = stamps
        self.polls = []
        self.errors = []
        self.instance_name = None
        self.gone_seen = 0
        self._next = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = []

    def start(self):
        for nova in self.novas:
            thread = threading.Thread(target=self._run, args=(nova,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(10)

    def _slot(self):
        with self._lock:
            now = time.monotonic()
            slot = now if self._next is None else max(self._next, now)
            self._next = slot + self.period
            return slot

    def _run(self, nova):
        while not self._stop.is_set():
            pause = self._slot() - time.monotonic()
            if pause > 0 and self._stop.wait(pause):
                break
            sent = self.stamps.now()
            try:
                server = nova.servers.get(self.server_id)
                state = [server.status, getattr(server, "OS-EXT-STS:task_state", None),
                         getattr(server, "OS-EXT-STS:vm_state", None),
                         getattr(server, "OS-EXT-STS:power_state", None)]
                self.instance_name = self.instance_name or getattr(
                    server, "OS-EXT-SRV-ATTR:instance_name", None)
            except Exception as e:  # noqa: BLE001 - a 404 is an observation, the rest noted
                if not waiter.is_not_found(e):
                    self.errors.append("%.3f %s: %s" % (sent, type(e).__name__, e))
                    continue
                state = [calc.GONE, None, None, None]
                self.gone_seen += 1
            received = self.stamps.now()
            with self._lock:
                self.polls.append([round(sent, 6), round(received, 6)] + state)

    def latency(self):
        return calc.median(p[1] - p[0] for p in self.polls)


class VirshEvents:
    """``virsh event --all --loop --timestamp`` in the background: libvirt's domain events."""

    def __init__(self, uri):
        self.uri = uri
        self.events = []
        self.proc = None
        self.error = None

    def start(self):
        command = ["virsh", "-c", self.uri, "event", "--all", "--loop", "--timestamp"]
        try:
            self.proc = subprocess.Popen(["stdbuf", "-oL"] + command, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
        except OSError as e:
            self.error = "cannot run virsh: %s" % e
            return
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            event = calc.parse_virsh_event(line)
            if event is not None:
                self.events.append(event)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is not None:
            self.error = "virsh event exited: %s" % self.proc.stderr.read().strip()[:300]
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def of_domain(self, domain):
        return [dict(e) for e in self.events if domain and e["domain"] == domain]


class NovaLogs:
    """Nova's versioned notifications appended to the services' logs since the run began."""

    PATTERNS = ("nova-*.log", "nova-*.out")

    def __init__(self, directory):
        self.directory = directory
        self.offsets = {path: os.path.getsize(path) for path in self.paths()}

    def paths(self):
        return sorted({path for pattern in self.PATTERNS
                       for path in glob.glob(os.path.join(self.directory, pattern))})

    def lines(self):
        for path in self.paths():
            with open(path, errors="replace") as f:
                f.seek(self.offsets.get(path, 0))
                yield from f

    def notifications(self, uuids):
        return calc.notifications_by_uuid(self.lines(), set(uuids))


def docker(*args, timeout=30):
    try:
        done = subprocess.run(["docker"] + list(args), capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    return (done.stdout, None) if done.returncode == 0 else (None, done.stderr.strip()[:300])


def docker_state(server_id):
    """State.StartedAt / FinishedAt of the instance's container (raw and epoch), or an error."""
    out, error = docker("inspect", "--format", "{{json .State}}", CONTAINER % server_id)
    if out is None:
        return {"error": error}
    state = json.loads(out)
    return {key: state.get(key) for key in ("Status", "StartedAt", "FinishedAt")} | {
        "started": calc.epoch(state.get("StartedAt")),
        "finished": calc.epoch(state.get("FinishedAt"))}


def docker_events(server_id, since, until):
    out, error = docker("events", "--since", "%.6f" % since, "--until", "%.6f" % until,
                        "--filter", "type=container",
                        "--filter", "label=%s=%s" % (UUID_LABEL, server_id),
                        "--format", "{{json .}}")
    if out is None:
        return [], error
    events = [calc.parse_docker_event(line) for line in out.splitlines()]
    return [e for e in events if e is not None], None


# -- the benchmark ----------------------------------------------------------------------

def kinds_of(args, conn):
    """``{kind: spec}`` of task-args.yaml (smoke's reading) with each one's hypervisor."""
    kinds = smoke.smoke_kinds(args)
    for name, spec in kinds.items():
        if not spec["reachable"]:
            spec["hypervisor"] = "fake"
        elif name == args.get("libvirt_kind"):
            spec["hypervisor"] = "libvirt"
        else:
            image = conn.image.find_image(spec["image"], ignore_missing=False)
            spec["hypervisor"] = "docker" if image.container_format == "docker" else "other"
    return kinds


class Bench:
    def __init__(self, opts, args, conn, stamps):
        self.opts = opts
        self.args = args
        self.conn = conn
        self.stamps = stamps
        self.abort = threading.Event()
        self.gate = None
        self.run_id = uuidlib.uuid4().hex
        # separate keystone sessions: VMCT's, rally-openstack's, one per poller thread
        self.vmct_os = osclients.Clients.create_from_env()
        self.rally_nova = osclients.Clients.create_from_env().nova()
        self.poller_novas = [osclients.Clients.create_from_env().nova()
                             for _ in range(opts.poll_threads)]
        self.created = {}        # server id -> name: what the cleanup deletes
        self.names = set()       # every name a create request was sent with
        self.gone = set()
        self.records = []        # every server's record, also of one interrupted

    # -- one server

    def run_server(self, kind, spec, index):
        name = "%s%s-%d-%s" % (PREFIX, kind, index, uuidlib.uuid4().hex[:6])
        record = {"kind": kind, "hypervisor": spec["hypervisor"], "name": name, "uuid": None,
                  "phases": [], "error": None}
        self.records.append(record)
        actions = []
        session = server_session.ServerSession(
            vmct_clients(self.vmct_os, self), {"name": kind},
            server_session.Access(probe=server_session.NO_PROBE), actions,
            clock=waiter.Clock())
        scenario = nova_utils.NovaScenario(
            context={"task": {"uuid": self.run_id}, "owner_id": self.run_id},
            clients=RallyClients(self))
        image = self.conn.image.find_image(spec["image"], ignore_missing=False)
        flavor = self.conn.compute.find_flavor(spec["flavor"], ignore_missing=False)
        boot = {"availability_zone": spec["availability_zone"],
                "nics": [{"net-id": self.args["network_id"]}]}
        poller = None

        def created(server):
            nonlocal poller
            record["uuid"] = server.id
            self.created[server.id] = name
            poller = Poller(self.poller_novas, server.id, self.opts.poll_period, self.stamps)
            poller.start()

        steps = {
            "build": lambda: session.boot(name, image.id, flavor.id, dict(boot)),
            "reboot_hard": lambda: power.reboot(session, "hard", self.soft_threshold),
            "reboot_soft": lambda: power.reboot(session, "soft", self.soft_threshold),
            "stop": lambda: power.stop(session),
            "start": lambda: power.start(session),
            "delete": session.delete,
        }
        settle = self.opts.settle if self.opts.settle is not None else SETTLE.get(
            spec["hypervisor"], 1.0)
        self.names.add(name)
        started = self.stamps.now()
        try:
            for phase in calc.PHASES:
                entry = self.run_phase(phase, steps[phase], session, actions, scenario,
                                       record, created if phase == "build" else None)
                print(progress(kind, index, entry), flush=True)
                if entry["vmct"].get("error"):
                    raise Aborted(entry["vmct"]["error"])
                if phase == "build":      # libvirt's domain name (admin), were the poller off
                    record["instance_name"] = getattr(
                        session.waiter.last_server, "OS-EXT-SRV-ATTR:instance_name", None)
                if phase != "delete":
                    time.sleep(settle)
            self.gone.add(record["uuid"])
        except Aborted as e:
            record["error"] = str(e)
            print("%-9s #%d FAILED: %s" % (kind, index, e), flush=True)
        finally:
            if poller is not None:
                self.wait_gone_seen(poller, record["uuid"] in self.gone)
                poller.stop()
                record["polls"] = poller.polls
                record["poll_errors"] = poller.errors[:20]
                record["poll_latency_median"] = poller.latency()
                record["instance_name"] = record.get("instance_name") or poller.instance_name
            try:
                session.finish()
            except Exception as e:  # noqa: BLE001 - the cleanup sweep deletes it
                print("%-9s #%d cleanup of the session failed: %s" % (kind, index, e))
        if record["uuid"] and spec["hypervisor"] == "docker":
            record["docker_events"], error = docker_events(
                record["uuid"], started - 1, self.stamps.now() + 1)
            if error:
                record["docker_events_error"] = error
        return record

    @property
    def soft_threshold(self):
        return float(self.args.get("soft_reboot_fallback_seconds", 20))

    def wait_gone_seen(self, poller, deleted):
        """Let the poller see the 404 a few times (at most 5 s) before it stops."""
        deadline = time.monotonic() + 5
        while deleted and poller.gone_seen < 3 and time.monotonic() < deadline:
            time.sleep(self.opts.poll_period)

    def run_phase(self, phase, step, session, actions, scenario, record, on_answer):
        gate = Gate(REQUEST[phase], self.stamps, self.abort, on_answer)
        entry = {"phase": phase, "vmct": {}, "rally": {}}
        record["phases"].append(entry)
        status = {"build": "BUILD", "start": "SHUTOFF"}.get(phase, "ACTIVE")
        rally = threading.Thread(target=rally_phase, daemon=True, args=(
            scenario, phase, gate, record["uuid"], status, self.rally_nova, entry["rally"]))
        self.gate = gate
        rally.start()
        before = len(actions)
        try:
            step()
            entry["vmct"] = vmct_figure(session, actions[before:])
        except Exception as e:  # noqa: BLE001 - recorded, the server is then given up
            entry["vmct"] = {"error": "%s: %s" % (type(e).__name__, e)}
            gate.cancel("VMCT's phase failed")
        finally:
            self.gate = None
            entry["t_send"], entry["t_ret"] = gate.t_send, gate.t_ret
        # after a failure of VMCT's phase the server is given up: rally's wait is not awaited
        patience = 5.0 if entry["vmct"].get("error") else PHASE_TIMEOUT
        rally.join(patience)
        if rally.is_alive():
            entry["rally"]["error"] = "still waiting after %d s" % patience
        if record["uuid"] and record["hypervisor"] == "docker" and phase != "delete":
            entry["docker_state"] = docker_state(record["uuid"])
        if entry["t_send"] is None:
            entry["vmct"].setdefault("error", "the request was never sent")
        return entry

    # -- cleanup

    def clean_up(self):
        """Delete every server this run created (and its ports); wait until they are gone."""
        leftovers = {sid: name for sid, name in self.created.items() if sid not in self.gone}
        try:
            for server in self.conn.compute.servers():
                if server.name in self.names and server.id not in leftovers:
                    leftovers[server.id] = server.name
        except Exception as e:  # noqa: BLE001 - go on with what is known
            print("cleanup: cannot list servers: %s" % e)
        for server_id, name in leftovers.items():
            print("cleanup: deleting server %s (%s)" % (name, server_id), flush=True)
            try:
                self.conn.compute.delete_server(server_id, ignore_missing=True)
            except Exception as e:  # noqa: BLE001
                print("cleanup: delete of %s failed: %s" % (server_id, e))
        deadline = time.monotonic() + 180
        for server_id in leftovers:
            while time.monotonic() < deadline:
                if self.conn.compute.find_server(server_id, ignore_missing=True) is None:
                    break
                time.sleep(1)
            else:
                print("cleanup: server %s still there after 180 s" % server_id)
        for server_id in list(leftovers) + list(self.created):
            for port in self.conn.network.ports(device_id=server_id):
                print("cleanup: deleting port %s of %s" % (port.id, server_id))
                self.conn.network.delete_port(port, ignore_missing=True)


def vmct_figure(session, new_actions):
    """VMCT's figure of a phase: its top-level atomic action, and its last poll interval.

    ``resolution`` is ``at - since`` of the poll that ended the phase (the transition whose
    answer time is the action's end), when a transition ended it; ``answer_latency`` is
    ``at`` minus that poll's send time.
    """
    if not new_actions:
        return {"error": "no atomic action recorded"}
    action = new_actions[-1]
    figure = {"action": action["name"], "duration": action["finished_at"] - action["started_at"],
              "resolution": None}
    if action.get("failed"):
        figure["error"] = "atomic action failed"
    for transition in reversed(session.waiter.transitions if session.waiter else []):
        if abs(session.timeline.wall(transition.at) - action["finished_at"]) < 1e-6:
            figure["resolution"] = transition.at - transition.since
            # the waiter's last poll is the one that ended the phase (nothing polls after it)
            sent = getattr(session.waiter, "_last_sent", None)
            if sent is not None and transition.since < sent <= transition.at:
                figure["answer_latency"] = transition.at - sent
            break
    return figure


def progress(kind, index, entry):
    def figure(result):
        if result.get("error"):
            return "error (%s)" % " ".join(result["error"].split())[:120]
        return "%7.3f s" % result["duration"]
    return "%-9s #%d %-12s VMCT %s  rally-openstack %s" % (
        kind, index, entry["phase"], figure(entry["vmct"]), figure(entry["rally"]))


def configure(opts):
    """Rally's options, rally-openstack's ([openstack]) and ours ([vmct]); their values."""
    rally_opts.register()
    rally_opts.register_options_from_path("rally_openstack.common.cfg.opts:list_opts")
    vmct_opts.register()
    if opts.vmct_poll_interval is not None:
        cfg.CONF.set_override("poll_interval", opts.vmct_poll_interval, vmct_opts.GROUP)
        cfg.CONF.set_override("max_requests_per_second", 1.0 / opts.vmct_poll_interval,
                              vmct_opts.GROUP)
    names = ("poll_interval", "max_requests_per_second", "poll_mode")
    return {"vmct": {name: vmct_opts.get(name) for name in names},
            "rally_openstack": {name: getattr(cfg.CONF.openstack, name)
                                for name in RALLY_OPTIONS}}


def notifications_note(servers):
    kinds = {n["event_type"] for s in servers for n in s.get("notifications") or []}
    if not kinds:
        return ("no Nova notification found in %s/logs: is nova running with [notifications] "
                "notification_format = versioned and [oslo_messaging_notifications] driver = "
                "log (tools/aio/up restarts it)?" % AIO)
    if calc.UPDATE_EVENT not in kinds:
        return ("no instance.update notification (Nova's [notifications] notify_on_state_"
                "change is unset): the truth is the poller's bracket, closed by the end "
                "notification where it came first")
    return None


def run(opts):
    settings = configure(opts)
    args = smoke.task_args()
    conn = smoke.connect()
    stamps = Stamps()
    kinds = kinds_of(args, conn)
    chosen = opts.kinds or list(kinds)
    unknown = [k for k in chosen if k not in kinds]
    if unknown:
        raise SystemExit("unknown kind(s) %s; this cloud has %s" % (unknown, list(kinds)))
    logs = NovaLogs(opts.logs)
    virsh = None
    if any(kinds[k]["hypervisor"] == "libvirt" for k in chosen):
        virsh = VirshEvents(opts.libvirt_uri)
        virsh.start()
    bench = Bench(opts, args, conn, stamps)
    meta = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "host": socket.gethostname(), "kinds": {k: kinds[k] for k in chosen},
            "count": opts.count, "poll_period": opts.poll_period,
            "poll_threads": opts.poll_threads, "settle": opts.settle, **settings,
            "command": " ".join(["tools/bench/timer-accuracy"] + sys.argv[1:])}
    servers = bench.records
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        for kind in chosen:
            for index in range(1, opts.count + 1):
                bench.run_server(kind, kinds[kind], index)
    except KeyboardInterrupt:
        print("interrupted: cleaning up", flush=True)
        meta["interrupted"] = True
    finally:
        bench.abort.set()
        bench.clean_up()
        signal.signal(signal.SIGTERM, previous)
        if virsh is not None:
            time.sleep(1)
            virsh.stop()
    time.sleep(2)       # the last notifications reach the logs
    found = logs.notifications([s["uuid"] for s in servers if s["uuid"]])
    for server in servers:
        server["notifications"] = [n.as_dict() for n in found.get(server["uuid"], [])]
        if virsh is not None and server["hypervisor"] == "libvirt":
            server["libvirt_events"] = virsh.of_domain(server.get("instance_name"))
    meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    meta["clock_drift"] = stamps.drift()
    meta["virsh_error"] = virsh.error if virsh else None
    return {"meta": meta, "servers": servers}


def interrupt(signum, frame):
    raise KeyboardInterrupt()


def report(run_data):
    """Print the tables of a run; the summary rows."""
    rows, summary = calc.analyse(run_data)
    meta = run_data.get("meta") or {}
    latencies = [s["poll_latency_median"] for s in run_data["servers"]
                 if s.get("poll_latency_median") is not None]
    print()
    print("Timer accuracy: |figure - truth| in seconds per kind and phase (%s)"
          % meta.get("command", ""))
    print("  VMCT: [vmct] %s; rally-openstack: [openstack] %s" % (
        json.dumps(meta.get("vmct")), json.dumps(meta.get("rally_openstack"))))
    if meta.get("poll_threads") == 0:
        print("  poller: off (--poll-threads 0): no API load of its own; the truth is the end "
              "notification, which comes after the save")
    else:
        print("  poller: every %s s from %s threads, median answer %s s" % (
            meta.get("poll_period"), meta.get("poll_threads"),
            calc.seconds_text(calc.median(latencies))))
    print()
    for line in calc.accuracy_table(summary):
        print(line)
    print()
    print("Other observers: median (observer's end - truth), seconds (negative: before the "
          "truth)")
    for line in calc.offsets_table(summary):
        print(line)
    note = notifications_note(run_data["servers"])
    if note:
        print("\nnote: " + note)
    failed = [s for s in run_data["servers"] if s.get("error")]
    for server in failed:
        print("failed: %s %s: %s" % (server["kind"], server["name"], server["error"]))
    met, missed = calc.goal_verdict(summary)
    verdict = "yes" if met else "no (%s)" % ", ".join("%s %s %.3f s" % m for m in missed)
    print("\nVMCT <= 0.1 s median |error| in every phase: " + verdict)
    return rows, summary


def to_json(value):
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    raise TypeError(type(value).__name__)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kinds", nargs="+", help="instance kinds (default: every kind of "
                   "$VMCT_AIO_DIR/task-args.yaml, the fake kind too)")
    p.add_argument("--count", type=int, default=3, help="servers per kind, one at a time")
    p.add_argument("--out", help="raw observations (JSON; default $VMCT_AIO_DIR/reports/"
                   "timer-accuracy-<time>.json)")
    p.add_argument("--from-json", help="print the tables of a saved run, run nothing")
    p.add_argument("--poll-period", type=float, default=0.05,
                   help="the independent poller's period (s)")
    p.add_argument("--poll-threads", type=int, default=2)
    p.add_argument("--settle", type=float, help="seconds between phases (default: 4 for "
                   "libvirt, 1 otherwise)")
    p.add_argument("--vmct-poll-interval", type=float,
                   help="[vmct] poll_interval (and max_requests_per_second to match); "
                   "default: the option's default")
    p.add_argument("--libvirt-uri", default="qemu:///system")
    p.add_argument("--logs", default=os.path.join(AIO, "logs"), help="Nova's logs")
    opts = p.parse_args(argv)
    if opts.from_json:
        with open(opts.from_json) as f:
            report(json.load(f))
        return 0
    if not 0 < opts.poll_period <= 0.05:
        p.error("--poll-period must be in (0, 0.05]")
    out = opts.out or os.path.join(AIO, "reports", "timer-accuracy-%s.json"
                                   % time.strftime("%Y%m%d-%H%M%S"))
    run_data = run(opts)
    rows, summary = report(run_data)
    run_data["rows"], run_data["summary"] = rows, summary
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(run_data, f, default=to_json)
    print("raw observations: %s" % out)
    return 1 if any(s.get("error") for s in run_data["servers"]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
