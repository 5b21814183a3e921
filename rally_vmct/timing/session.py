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
"""One Nova server driven and timed phase by phase: :class:`ServerSession`.

Each phase is timed from the transitions the fast waiter observed (see
:mod:`rally_vmct.timing.waiter`) and recorded as a Rally atomic action bounded
by them (:mod:`rally_vmct.timing.timeline`):

==========================  ===================================================
``vmct.build``              create request -> ACTIVE (:meth:`ServerSession.boot`)
``vmct.associate_floating_ip``  ACTIVE -> Neutron created the floating IP on the
                            server's port (only with the kind's ``floating_network``)
``vmct.wait_for_network``   ACTIVE (or associated) -> reachable (TCP / ping / SSH)
``vmct.wait_for_ssh``       reachable -> an SSH command succeeds (optional)
``vmct.delete``             delete request -> gone (404)
==========================  ===================================================

Reboot, stop and start are in :mod:`rally_vmct.timing.power`. What the
session observed (requests, transitions, probe attempts, phase durations) is
its :class:`Record`, from which :mod:`rally_vmct.timing.diagnostics`
makes the iteration's tables.

With the kind's ``floating_network`` the session's ``address`` (every probe,
SSH session and workload) is the floating IP it created; :meth:`ServerSession.finish`
releases it, after a failed iteration too (:mod:`rally_vmct.access.floating_ip`).
"""

import collections
import dataclasses
import os

from rally.common import logging

from rally_vmct.timing import instance_actions
from rally_vmct.access import probes
from rally_vmct.access import ssh as vmct_ssh
from rally_vmct.timing import timeline
from rally_vmct.timing import waiter
from rally_vmct.timing import watcher
from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.task import lookup
from rally_vmct.access import floating_ip as floating_ip_lib

LOG = logging.getLogger(__name__)

# Microversion from which non-admin users see instance action events.
ACTIONS_MICROVERSION = "2.51"
# The probe of instances the harness cannot reach: no network, SSH or address phases.
NO_PROBE = "none"
FLOATING_IP_PHASE = "vmct.associate_floating_ip"
# Lines of the guest's console kept when it never answered a probe: enough for a kernel
# panic's reason and the lines before it; the error message carries the last few.
CONSOLE_LINES = 40
CONSOLE_LINES_IN_ERROR = 5
NO_PROBE_WITH_SSH = ("Arguments 'probe: none' and 'wait_for_ssh: true' contradict each other: "
                     "probe none means the instances cannot be reached, so there is no SSH to "
                     "wait for; set wait_for_ssh: false, or a probe (tcp, ping, ssh)")


@dataclasses.dataclass(frozen=True)
class Access:
    """How the harness reaches an instance: the reachability probe, SSH and its proxy."""

    probe: str = "tcp"
    wait_for_ssh: bool = False
    proxy_command: str | None = None
    pkey: str | None = None
    key_filename: str | None = None
    connect_timeout: float = 10.0

    @classmethod
    def of(cls, kind, probe="tcp", wait_for_ssh=False, proxy_command=None, keypair=None):
        """From task arguments: ``proxy_command`` None means [vmct] ssh_proxy_command."""
        if probe == NO_PROBE and wait_for_ssh:
            raise ValueError(NO_PROBE_WITH_SSH)
        if proxy_command is None:
            proxy_command = opts.get("ssh_proxy_command")
        pkey = key_filename = None
        if kind.get("ssh_key_file"):
            key_filename = os.path.expanduser(kind["ssh_key_file"])
        elif keypair:
            pkey = keypair["private"]
        # With probe "ssh" the network wait already is an SSH wait.
        return cls(probe=probe, wait_for_ssh=bool(wait_for_ssh) and probe != "ssh",
                   proxy_command=proxy_command or None, pkey=pkey, key_filename=key_filename,
                   connect_timeout=opts.get("ssh_connect_timeout"))

    @property
    def reachable(self):
        """Does the harness reach the instances at all (any probe but "none")?"""
        return self.probe != NO_PROBE

    @property
    def has_key(self):
        return bool(self.pkey or self.key_filename)

    @property
    def can_ssh(self):
        return self.wait_for_ssh or self.probe == "ssh"


@dataclasses.dataclass
class Record:
    """What one server's session observed; the diagnostics tables are made from it."""

    t0: float                      # the create request (monotonic)
    request_ids: list = dataclasses.field(default_factory=list)
    actions: dict = dataclasses.field(default_factory=dict)   # request id -> action
    marks: list = dataclasses.field(default_factory=list)     # (transition index, phase)
    probe_rows: list = dataclasses.field(default_factory=list)
    rows: list = dataclasses.field(default_factory=list)      # (phase name, seconds)
    paths: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    polling: waiter.PollCost | None = None   # Nova requests the polls cost (finish())
    # (phase, lines) of the console when a probe gave up; lines: [why] when Nova gave none
    console: tuple | None = None


class BootArgsError(ValueError):
    """``boot_args`` names something the cloud does not have."""


def tenant_nics(tenant, iteration):
    """The network context's network as nics, balanced over several by iteration; or None."""
    nets = [net["id"] for net in (tenant or {}).get("networks") or []]
    return [{"net-id": nets[iteration % len(nets)]}] if nets else None


def network_id(neutron, name):
    """The id of the network called ``name`` (for nics given by ``net-name``)."""
    networks = [net for net in neutron.list_networks(name=name)["networks"]
                if net["name"] == name]
    if not networks:
        raise BootArgsError("Argument 'boot_args': no network named %r (nics net-name): "
                            "create it, or give its net-id" % name)
    return networks[0]["id"]


def create_kwargs(kind, boot_args, user, default_nics, network_id, scheduler_hints=None):
    """Keyword arguments of Nova's server create for a server of ``kind``.

    :param boot_args: the task's extra arguments (nics, config_drive...)
    :param user: the Rally user (its keypair and security group are used)
    :param default_nics: nics when boot_args has none (:func:`tenant_nics`)
    :param network_id: callable(name) -> id, for nics given by ``net-name``
    :param scheduler_hints: hints added to the kind's (e.g. the netperf peer's placement)
    """
    kwargs = dict(boot_args or {})
    if kind.get("availability_zone"):
        kwargs["availability_zone"] = kind["availability_zone"]
    if kind.get("scheduler_hints") or scheduler_hints:
        kwargs["scheduler_hints"] = dict(kind.get("scheduler_hints") or {},
                                         **(scheduler_hints or {}))
    if user.get("keypair") and "key_name" not in kwargs:
        kwargs["key_name"] = user["keypair"]["name"]
    secgroup = user.get("secgroup")
    if secgroup:
        groups = list(kwargs.get("security_groups") or [])
        if secgroup["name"] not in groups:
            groups.append(secgroup["name"])
        kwargs["security_groups"] = groups
    if not kwargs.get("nics") and default_nics:
        kwargs["nics"] = default_nics
    for nic in kwargs.get("nics") or []:
        if not nic.get("net-id") and nic.get("net-name"):
            nic["net-id"] = network_id(nic.pop("net-name"))
    return kwargs


class ServerSession:
    """One server of a kind: boot, wait until reachable, delete; every phase timed.

    :param clients: callable(client_type, version=None) -> client, as a Rally
        scenario's ``clients``
    :param kind: the instance kind (:mod:`rally_vmct.task.kinds`)
    :param access: :class:`Access`
    :param atomic_actions: the list the ``vmct.*`` atomic actions go into
    :param clock: :class:`rally_vmct.timing.waiter.Clock` (tests: a fake one)
    """

    clock = waiter.Clock()

    def __init__(self, clients, kind, access, atomic_actions, clock=None, poll_mode=None):
        self.clients = clients
        self.poll_mode = poll_mode or opts.get("poll_mode")
        self.kind = kind
        self.label = kinds.label(kind)
        self.access = access
        self.clock = clock or self.clock
        self.poll_interval = opts.get("poll_interval")
        self.timeline = timeline.Timeline(atomic_actions, self.clock)
        self.pacing = {"interval": self.poll_interval,
                       "max_interval": opts.get("poll_max_interval"),
                       "max_requests_per_second": opts.get("max_requests_per_second")}
        self.pacer = waiter.Pacer(clock=self.clock, **self.pacing)
        self.server = None
        self.waiter = None
        self.waiters = []
        self.deleted = False
        self.name = None
        self.address = None
        self.fixed_address = None     # the server's own address, when address is floating
        self.floating_ip = None       # Neutron's record of the floating IP this session made
        self.record = Record(t0=self.clock.monotonic())

    # -- bookkeeping ----------------------------------------------------------

    def nova(self):
        return self.clients("nova")

    def request(self, response):
        """Note an action request (create, reboot...): its id, and poll right after it."""
        self.pacer.sent()
        ids = getattr(response, "request_ids", None) or []
        request_id = ids[0] if ids else None
        if request_id:
            self.record.request_ids.append(request_id)
        return request_id

    def new_waiter(self, nova):
        """A waiter of the server: its own GETs, or the shared watcher's lists (poll_mode)."""
        shared = None
        if self.poll_mode == waiter.BATCHED:
            shared = watcher.shared(nova, clock=self.clock,
                                    margin=opts.get("changes_since_margin"), **self.pacing)
        found = waiter.ServerWaiter(nova.servers.get, self.server.id, pacer=self.pacer,
                                    clock=self.clock, watcher=shared)
        self.waiters.append(found)
        return found

    def poll_cost(self):
        """:class:`~rally_vmct.timing.waiter.PollCost` of every poll of the server so far."""
        costs = [found.cost() for found in self.waiters]
        return sum(costs[1:], costs[0]) if costs else None

    def mark(self, phase):
        """Transitions seen from now on belong to ``phase`` (transitions table)."""
        self.record.marks.append((len(self.waiter.transitions) if self.waiter else 0, phase))

    def add_row(self, name, seconds):
        """A row of the iteration's lifecycle chart."""
        self.record.rows.append((name, round(seconds, 6)))

    def row_total(self, *names):
        return sum(seconds for name, seconds in self.record.rows if name in names)

    # -- boot and reachability ------------------------------------------------

    def boot(self, name, image_id, flavor_id, kwargs):
        """``vmct.build``: create -> ACTIVE. Returns the ACTIVE :class:`Observation`."""
        nova = self.nova()
        self.pacer.before_action()
        with self.timeline.phase("vmct.build") as phase:
            # The iteration's clock starts with the create request.
            self.record.t0 = phase.start
            self.mark("vmct.build")
            self.name = name
            self.server = nova.servers.create(name, image_id, flavor_id, **kwargs)
            self.request(self.server)
            self.waiter = self.new_waiter(nova)
            active = self.waiter.wait_for_status(
                waiter.ACTIVE, opts.get("build_timeout"),
                "server to become ACTIVE (build)", started_at=phase.start)
            phase.end(active.estimate)
        self.add_row("build", phase.duration)
        return active

    def server_address(self):
        """The address to reach the server at: floating first, then IPv4 first."""
        server = self.waiter.last_server or self.nova().servers.get(self.server.id)
        candidates = []
        for network, addresses in sorted((getattr(server, "addresses", None) or {}).items()):
            for address in addresses:
                kind = address.get("OS-EXT-IPS:type", "fixed")
                candidates.append((kind != "floating", address.get("version", 4) != 4,
                                   address["addr"]))
        if not candidates:
            raise waiter.WaitError(
                "Server %s has no IP address: give the workload a network (the 'network' "
                "or 'existing_network' context, or boot_args nics: [{net-name: NAME}])"
                % self.server.id)
        return sorted(candidates)[0][2]

    def ssh_client(self):
        """A :class:`rally_vmct.access.ssh.SSH` to the server (proxy command applied)."""
        return vmct_ssh.SSH(kinds.ssh_user(self.kind), self.address, kinds.ssh_port(self.kind),
                            pkey=self.access.pkey, key_filename=self.access.key_filename,
                            proxy_command=self.access.proxy_command,
                            connect_timeout=self.access.connect_timeout)

    def make_probe(self, name):
        """The reachability probe ``name`` (tcp, ping, ssh) aimed at the server."""
        if name == "ssh" and not self.access.has_key:
            raise waiter.WaitError(
                "SSH to instances needs a key: add the 'keypair' context to the workload "
                "or set kind.ssh_key_file")
        return probes.make_probe(name, self.address, kinds.ssh_port(self.kind),
                                 user=kinds.ssh_user(self.kind), pkey=self.access.pkey,
                                 key_filename=self.access.key_filename,
                                 proxy_command=self.access.proxy_command,
                                 connect_timeout=self.access.connect_timeout,
                                 monotonic=self.clock.monotonic)

    def wait_probe(self, name, phase_name, start):
        """Phase ``phase_name`` from ``start`` until probe ``name`` succeeds."""
        try:
            with self.timeline.phase(phase_name, start=start) as phase:
                self.mark(phase_name)
                with self.make_probe(name) as probe:
                    result = self._probe_until_answer(probe, name, phase_name, start)
                phase.end(result.at)
        except waiter.WaitTimeout as e:
            # read after the phase ended: its failed duration stays the wait's
            raise waiter.WaitTimeout(str(e) + self.keep_console(phase_name)) from None
        return phase

    def probe_target(self):
        """Where probes go, for the transitions table: ADDRESS:PORT, and whether floating."""
        where = "%s:%d" % (self.address, kinds.ssh_port(self.kind))
        return where + (" (floating IP)" if self.floating_ip is not None else "")

    def _probe_until_answer(self, probe, name, phase_name, start):
        try:
            result = waiter.wait_until(
                probe.check, opts.get("network_timeout"), self.poll_interval,
                "%s (server %s)" % (probe.what, self.server.id), clock=self.clock,
                started_at=start)
        except waiter.WaitTimeout as e:
            summary = probe.summary()
            self.record.probe_rows.append([phase_name, "probe " + name,
                                           ("%s: %s" % (self.probe_target(), summary))[:300],
                                           "no answer", self.clock.monotonic(), start])
            if not summary:
                raise
            raise waiter.WaitTimeout("%s; failed attempts: %s" % (e, summary)) from None
        tried = ": ".join(filter(None, (self.probe_target(), probe.summary())))
        self.record.probe_rows.append([phase_name, "probe " + name, tried[:300],
                                       "answered (check %d)" % result.attempts,
                                       result.at, result.since])
        return result

    def keep_console(self, phase_name):
        """Keep the console's last lines (the report's table); the text for the error.

        A guest that never answered often said why on its console (a kernel panic, a
        service that did not start); Nova keeps it only as long as the server.
        """
        try:
            text = self.nova().servers.get_console_output(self.server, length=CONSOLE_LINES)
        except Exception as e:
            why = "console log unavailable (%s: %s)" % (type(e).__name__, e)
            self.record.console = (phase_name, [why])
            return "; " + why
        lines = [line.rstrip() for line in str(text or "").splitlines()][-CONSOLE_LINES:]
        self.record.console = (phase_name, lines)
        said = [line for line in lines if line]
        if not said:
            return "; the console log is empty"
        return "; the console's last lines: " + " | ".join(said[-CONSOLE_LINES_IN_ERROR:])

    def wait_ready(self, prefix, start):
        """``<prefix>.reachable`` (+ ``<prefix>.ssh_ready``) from ``start``; when ready.

        Without a probe (``"none"``) there is nothing to wait for: ``start``.
        """
        if not self.access.reachable:
            return start
        ready = self.wait_probe(self.access.probe, prefix + ".reachable", start).finish
        if self.access.wait_for_ssh:
            ready = self.wait_probe("ssh", prefix + ".ssh_ready", ready).finish
        return ready

    def wait_for_network(self, active):
        """``vmct.wait_for_network`` (+ ``vmct.wait_for_ssh``) from the ACTIVE observation.

        Returns the monotonic instant the instance was last found ready; without a
        probe (``"none"``) no phase is timed and that is the ACTIVE observation's.
        """
        if not self.access.reachable:
            return active.estimate
        start = active.estimate
        if self.kind.get("floating_network") and self.floating_ip is None:
            start = self.associate_floating_ip(start)
        self.address = self.address or self.server_address()
        network = self.wait_probe(self.access.probe, "vmct.wait_for_network", start)
        self.add_row("wait_for_network", network.duration)
        ready = network.finish
        if self.access.wait_for_ssh:
            ssh_phase = self.wait_probe("ssh", "vmct.wait_for_ssh", ready)
            self.add_row("wait_for_ssh", ssh_phase.duration)
            ready = ssh_phase.finish
        return ready

    def associate_floating_ip(self, start):
        """``vmct.associate_floating_ip`` from ``start`` (ACTIVE); returns when it ended.

        A floating IP of the kind's ``floating_network`` is created on the server's
        port (one Neutron request); its address becomes the session's ``address``.
        """
        neutron = self.clients("neutron")
        network = self.kind["floating_network"]
        network_id = self.kind.get("floating_network_id")
        if not network_id:
            try:
                network_id = lookup.external_network(neutron, network).id
            except lookup.ResourceError as e:
                raise floating_ip_lib.FloatingIPError(str(e)) from None
        with self.timeline.phase(FLOATING_IP_PHASE, start=start) as phase:
            self.mark(FLOATING_IP_PHASE)
            self.floating_ip = floating_ip_lib.create(
                neutron, network_id, network, self.server.id, self.name or self.server.id)
            phase.end(self.clock.monotonic())
        self.address = self.floating_ip["floating_ip_address"]
        self.fixed_address = self.floating_ip.get("fixed_ip_address")
        self.add_row("associate_floating_ip", phase.duration)
        return phase.finish

    def release_floating_ip(self):
        """Delete the floating IP this session created (best effort, untimed)."""
        if self.floating_ip is None:
            return
        floating, self.floating_ip = self.floating_ip, None
        try:
            floating_ip_lib.release(self.clients("neutron"), floating["id"])
        except Exception as e:
            LOG.warning("Could not release floating IP %s (%s) of server %s (%s: %s); "
                        "cleanup@openstack (neutron) will"
                        % (floating.get("floating_ip_address"), floating["id"],
                           self.server.id if self.server is not None else None,
                           type(e).__name__, e))

    def incarnation(self):
        """The guest's boot id and PID 1 start time over SSH; None without SSH."""
        if not self.access.can_ssh:
            return None
        with self.ssh_client() as client:
            return vmct_ssh.incarnation(client)

    # -- delete and cleanup ---------------------------------------------------

    def delete(self):
        """``vmct.delete``: delete request -> 404."""
        self.pacer.before_action()
        with self.timeline.phase("vmct.delete") as phase:
            self.mark("vmct.delete")
            self.request(self.nova().servers.delete(self.server))
            self.deleted = True
            gone = self.waiter.wait_gone(opts.get("delete_timeout"),
                                         "server to be deleted (404)", started_at=phase.start)
            phase.end(gone.estimate)
        self.add_row("delete", phase.duration)
        return gone

    def cleanup(self, again=False):
        """Delete a server a failure left behind (best effort, untimed).

        :param again: also when a delete was requested already (a retry)
        """
        if self.server is None or (self.deleted and not again):
            return
        self.deleted = True
        nova = self.nova()
        try:
            nova.servers.delete(self.server.id)
            self.new_waiter(nova).wait_gone(opts.get("delete_timeout"),
                                            "server to be deleted (cleanup)")
        except Exception as e:
            if not waiter.is_not_found(e):
                LOG.warning("Could not delete server %s after a failed iteration (%s); "
                            "cleanup@openstack will: %s" % (self.server.id, type(e).__name__, e))

    def finish(self):
        """Read Nova's instance actions, delete a server and release a floating IP left behind.

        Never raises for those.
        """
        if self.server is not None:
            try:
                self.fetch_actions()
            except Exception as e:
                LOG.debug("instance actions unavailable: %s" % e)
        self.cleanup()
        self.release_floating_ip()
        self.record.polling = self.poll_cost()

    # -- instance actions -----------------------------------------------------

    def _actions_nova(self):
        try:
            return self.clients("nova", version=ACTIONS_MICROVERSION)
        except Exception as e:
            LOG.debug("Nova client %s unavailable (%s), events may be hidden"
                      % (ACTIONS_MICROVERSION, e))
            return self.nova()

    def fetch_action(self, request_id, deadline=None):
        """The normalized instance action of ``request_id`` (paced), or None."""
        if not request_id or self.server is None:
            return None
        deadline = deadline if deadline is not None else self.clock.monotonic() + 30
        nova = self._actions_nova()
        try:
            action, _, _ = self.pacer.call(
                lambda: nova.instance_action.get(self.server.id, request_id), deadline,
                "reading instance action %s" % request_id)
        except Exception as e:
            LOG.debug("Cannot read instance action %s of %s: %s"
                      % (request_id, self.server.id, e))
            return None
        action = instance_actions.normalize(action)
        self.record.actions[request_id] = action
        return action

    def fetch_actions(self):
        """Refresh the instance actions of every request this session made."""
        for request_id in self.record.request_ids:
            known = self.record.actions.get(request_id)
            if known is None or not instance_actions.finished(known):
                self.fetch_action(request_id)
