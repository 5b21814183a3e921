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
"""Base class of the rally-vmct scenarios that boot one Nova server of a kind.

It times each lifecycle phase itself (see :mod:`rally_vmct.common.waiter`) and
records it as a Rally atomic action bounded by the observed transitions
(:mod:`rally_vmct.common.timeline`):

==========================  ===================================================
``vmct.build``              create request -> ACTIVE
``vmct.wait_for_network``   ACTIVE -> reachable (TCP connect / ping / SSH)
``vmct.wait_for_ssh``       reachable -> an SSH command succeeds (optional)
``vmct.delete``             delete request -> gone (404)
==========================  ===================================================

Subclasses (``VMCT.boot_and_benchmark`` too) call :meth:`_boot`,
:meth:`_wait_for_network`, :meth:`_delete` and :meth:`_ssh_client` inside
``try: ... finally: self._finish()``, which deletes a server left behind by a
failure and adds the diagnostic tables (server transitions, instance actions)
to the iteration output.
"""

import os

from rally.common import logging
from rally_openstack.task.scenarios.nova import utils as nova_utils

from rally_vmct.common import instance_actions
from rally_vmct.common import probes
from rally_vmct.common import ssh as vmct_ssh
from rally_vmct.common import timeline
from rally_vmct.common import waiter
from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.task import output

LOG = logging.getLogger(__name__)

# Microversion from which non-admin users see instance action events.
ACTIONS_MICROVERSION = "2.51"


class InstanceScenario(nova_utils.NovaScenario):
    """Boot one server of an instance kind and time its lifecycle precisely."""

    # Real time; unit tests put a fake clock on the instance.
    clock = waiter.Clock()

    def _start_iteration(self, kind, probe="tcp", wait_for_ssh=False, proxy_command=None):
        """Per-iteration state; call first in ``run()``."""
        self.kind = kind
        self.kind_label = kinds.label(kind)
        self.probe_name = probe
        self.wait_ssh = bool(wait_for_ssh) and probe != "ssh"
        if proxy_command is None:
            proxy_command = opts.get("ssh_proxy_command")
        self.proxy_command = proxy_command or None
        self.poll_interval = opts.get("poll_interval")
        self.connect_timeout = opts.get("ssh_connect_timeout")
        self.timeline = timeline.Timeline(self._atomic_actions, self.clock)
        self.pacer = waiter.Pacer(self.poll_interval, opts.get("poll_max_interval"),
                                  opts.get("max_requests_per_second"), clock=self.clock)
        self.server = None
        self.server_waiter = None
        self.deleted = False
        self.address = None
        self.actions = {}            # request id -> normalized instance action
        self.request_ids = []
        self.marks = []              # (index into transitions, phase name)
        self.probe_rows = []         # [phase, "probe NAME", failures, result, at, since]
        self.rows = []               # lifecycle chart rows: (name, seconds)
        self.t0 = self.clock.monotonic()

    # -- Nova -------------------------------------------------------------

    def _nova(self):
        return self.clients("nova")

    def _boot_kwargs(self, boot_args=None):
        kwargs = dict(boot_args or {})
        if self.kind.get("availability_zone"):
            kwargs["availability_zone"] = self.kind["availability_zone"]
        if self.kind.get("scheduler_hints"):
            kwargs["scheduler_hints"] = dict(self.kind["scheduler_hints"])
        user = self.context.get("user", {})
        if user.get("keypair") and "key_name" not in kwargs:
            kwargs["key_name"] = user["keypair"]["name"]
        secgroup = user.get("secgroup")
        if secgroup:
            groups = list(kwargs.get("security_groups") or [])
            if secgroup["name"] not in groups:
                groups.append(secgroup["name"])
            kwargs["security_groups"] = groups
        if not kwargs.get("nics"):
            nic = self._pick_random_nic()
            if nic:
                kwargs["nics"] = nic
        for nic in kwargs.get("nics") or []:
            if not nic.get("net-id") and nic.get("net-name"):
                nic["net-id"] = self._get_network_id(nic.pop("net-name"))
        return kwargs

    def _image_and_flavor(self):
        image_id, flavor_id = self.kind.get("image_id"), self.kind.get("flavor_id")
        if image_id and flavor_id:
            return image_id, flavor_id
        # run() called without Rally's pre-processing (e.g. from another scenario).
        from rally_openstack.task import types as openstack_types
        ctx = {"admin": self.context.get("admin"), "users": [self.context["user"]]} \
            if self.context.get("user") else self.context
        image_id = image_id or openstack_types.GlanceImage(ctx).pre_process(
            self.kind["image"], config={})
        flavor_id = flavor_id or openstack_types.Flavor(ctx).pre_process(
            self.kind["flavor"], config={})
        return image_id, flavor_id

    def _remember_request(self, response):
        """Note an action request (create, reboot...): its id, and poll right after it."""
        self.pacer.sent()
        ids = getattr(response, "request_ids", None) or []
        request_id = ids[0] if ids else None
        if request_id:
            self.request_ids.append(request_id)
        return request_id

    def _mark(self, phase):
        waiter_ = self.server_waiter
        self.marks.append((len(waiter_.transitions) if waiter_ else 0, phase))

    def _row(self, name, seconds):
        self.rows.append((name, round(seconds, 6)))

    # -- phases -------------------------------------------------------------

    def _boot(self, boot_args=None):
        """``vmct.build``: create -> ACTIVE. Returns the ACTIVE :class:`Observation`."""
        image_id, flavor_id = self._image_and_flavor()
        kwargs = self._boot_kwargs(boot_args)
        name = self.generate_random_name()
        nova = self._nova()
        self.pacer.before_action()
        with self.timeline.phase("vmct.build") as phase:
            # The iteration's clock starts with the create request.
            self.t0 = phase.start
            self._mark("vmct.build")
            server = nova.servers.create(name, image_id, flavor_id, **kwargs)
            self.server = server
            self._remember_request(server)
            self.server_waiter = waiter.ServerWaiter(nova.servers.get, server.id,
                                                     pacer=self.pacer, clock=self.clock)
            active = self.server_waiter.wait_for_status(
                waiter.ACTIVE, opts.get("build_timeout"),
                "server to become ACTIVE (build)", started_at=phase.start)
            phase.end(active.at)
        self._row("build", phase.duration)
        return active

    def _server_address(self):
        server = self.server_waiter.last_server or self._nova().servers.get(self.server.id)
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

    def _key(self):
        """``(pkey, key_filename)`` for SSH to the instance, (None, None) without one."""
        if self.kind.get("ssh_key_file"):
            return None, os.path.expanduser(self.kind["ssh_key_file"])
        keypair = self.context.get("user", {}).get("keypair")
        if keypair:
            return keypair["private"], None
        return None, None

    def _ssh_client(self):
        """A :class:`rally_vmct.common.ssh.SSH` to the server (proxy command applied)."""
        pkey, key_filename = self._key()
        return vmct_ssh.SSH(kinds.ssh_user(self.kind), self.address, kinds.ssh_port(self.kind),
                            pkey=pkey, key_filename=key_filename,
                            proxy_command=self.proxy_command,
                            connect_timeout=self.connect_timeout)

    def _make_probe(self, name):
        pkey, key_filename = self._key()
        if name == "ssh" and not (pkey or key_filename):
            raise waiter.WaitError(
                "SSH to instances needs a key: add the 'keypair' context to the workload "
                "or set kind.ssh_key_file")
        return probes.make_probe(name, self.address, kinds.ssh_port(self.kind),
                                 user=kinds.ssh_user(self.kind), pkey=pkey,
                                 key_filename=key_filename, proxy_command=self.proxy_command,
                                 connect_timeout=self.connect_timeout,
                                 monotonic=self.clock.monotonic)

    def _wait_probe(self, name, phase_name, start):
        """Phase ``phase_name`` from ``start`` until probe ``name`` succeeds."""
        with self.timeline.phase(phase_name, start=start) as phase:
            self._mark(phase_name)
            with self._make_probe(name) as probe:
                try:
                    result = waiter.wait_until(
                        probe.check, opts.get("network_timeout"), self.poll_interval,
                        "%s (server %s)" % (probe.what, self.server.id), clock=self.clock,
                        started_at=start)
                except waiter.WaitTimeout as e:
                    summary = probe.summary()
                    self.probe_rows.append([phase_name, "probe " + name, summary[:300],
                                            "no answer", self.clock.monotonic(), start])
                    if not summary:
                        raise
                    raise waiter.WaitTimeout("%s; failed attempts: %s" % (e, summary)) from None
                self.probe_rows.append([phase_name, "probe " + name, probe.summary()[:300],
                                        "answered (check %d)" % result.attempts,
                                        result.at, result.since])
            phase.end(result.at)
        return phase

    def _wait_for_network(self, active):
        """``vmct.wait_for_network`` (+ ``vmct.wait_for_ssh``) from the ACTIVE observation.

        Returns the monotonic instant the instance was last found ready.
        """
        self.address = self.address or self._server_address()
        network = self._wait_probe(self.probe_name, "vmct.wait_for_network", active.at)
        self._row("wait_for_network", network.duration)
        ready = network.finish
        if self.wait_ssh:
            ssh_phase = self._wait_probe("ssh", "vmct.wait_for_ssh", ready)
            self._row("wait_for_ssh", ssh_phase.duration)
            ready = ssh_phase.finish
        return ready

    def _delete(self):
        """``vmct.delete``: delete request -> 404."""
        self.pacer.before_action()
        with self.timeline.phase("vmct.delete") as phase:
            self._mark("vmct.delete")
            response = self._nova().servers.delete(self.server)
            self._remember_request(response)
            self.deleted = True
            gone = self.server_waiter.wait_gone(opts.get("delete_timeout"),
                                                "server to be deleted (404)",
                                                started_at=phase.start)
            phase.end(gone.at)
        self._row("delete", phase.duration)
        return gone

    # -- instance actions -----------------------------------------------------

    def _actions_nova(self):
        try:
            return self.clients("nova", version=ACTIONS_MICROVERSION)
        except Exception as e:
            LOG.debug("Nova client %s unavailable (%s), events may be hidden"
                      % (ACTIONS_MICROVERSION, e))
            return self._nova()

    def _fetch_action(self, request_id, deadline=None):
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
        self.actions[request_id] = action
        return action

    def _fetch_actions(self):
        """Refresh the instance actions of every request this iteration made."""
        for request_id in self.request_ids:
            known = self.actions.get(request_id)
            if known is None or not instance_actions.finished(known):
                self._fetch_action(request_id)

    # -- output and cleanup --------------------------------------------------

    def _transitions_table(self):
        rows = []
        marks = list(self.marks)
        phase = ""
        transitions = self.server_waiter.transitions if self.server_waiter else []
        for index, tr in enumerate(transitions):
            while marks and marks[0][0] <= index:
                phase = marks.pop(0)[1]
            rows.append([phase, tr.field, str(tr.old), str(tr.new), tr.at, tr.since])
        rows.extend(list(row) for row in self.probe_rows)
        rows.sort(key=lambda row: row[4])
        for row in rows:
            row[4] = round(row[4] - self.t0, 3)
            row[5] = round(row[5] - self.t0, 3)
        return {"title": "%s: server state transitions (polled every %.2g s)"
                         % (self.kind_label, self.pacer.min_gap),
                "description": "Each change of the server's status, task state, VM state "
                               "and power state, seen by the poll answered 'seen' seconds "
                               "after the create request; it happened after 'not before' "
                               "(the previous poll, or the phase's request). 'probe' rows: "
                               "when the instance answered, and the failed attempts before.",
                "chart_plugin": "Table",
                "data": {"cols": ["phase", "field", "from", "to", "seen [s]",
                                  "not before [s]"], "rows": rows}}

    def _actions_table(self):
        return {"title": "%s: instance actions (os-instance-actions)" % self.kind_label,
                "description": "Nova's own record of each request of this iteration, with "
                               "compute events timed by the cloud's clock (UTC).",
                "chart_plugin": "Table",
                "data": {"cols": instance_actions.TABLE_COLUMNS,
                         "rows": instance_actions.table_rows(list(self.actions.values()))}}

    def _lifecycle_chart(self, total):
        # Mean per phase name over this iteration's repetitions (reboots, cycles),
        # in the order the phases first happened.
        groups = {}
        for name, seconds in self.rows:
            groups.setdefault(name, []).append(seconds)
        rows = [(name, round(sum(v) / len(v), 6)) for name, v in groups.items()]
        rows.append(("total", round(total, 6)))
        return output.stats_chart(self.kind_label, "lifecycle", "s", rows,
                                  description="Phases of this iteration, timed from the "
                                              "observed transitions.")

    def _cleanup_server(self):
        """Delete a server a failed iteration left behind (best effort, untimed)."""
        if self.server is None or self.deleted:
            return
        self.deleted = True
        nova = self._nova()
        try:
            nova.servers.delete(self.server.id)
            cleanup = waiter.ServerWaiter(nova.servers.get, self.server.id,
                                          pacer=self.pacer, clock=self.clock)
            cleanup.wait_gone(opts.get("delete_timeout"), "server to be deleted (cleanup)")
        except Exception as e:
            if not waiter.is_not_found(e):
                LOG.warning("Could not delete server %s after a failed iteration (%s); "
                            "cleanup@openstack will: %s" % (self.server.id, type(e).__name__, e))

    def _finish(self, failed):
        """Delete leftovers; add the diagnostic tables (always)."""
        if self.server is not None:
            try:
                self._fetch_actions()
            except Exception as e:
                LOG.debug("instance actions unavailable: %s" % e)
        if failed:
            self._cleanup_server()
        if self.server_waiter is not None:
            self.add_output(complete=self._transitions_table())
        if self.actions:
            self.add_output(complete=self._actions_table())

    def _run_iteration(self, body):
        """Run ``body()`` (the phases); cleanup and output whatever happens."""
        failed = True
        try:
            result = body()
            failed = False
            return result
        finally:
            self._finish(failed)
