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
"""Lifecycle scenarios: boot / wait for network / delete, reboots, stop and start.

Each phase is timed from the transitions the fast waiter observed (poll every
``[vmct] poll_interval`` s) and recorded as a ``vmct.*`` atomic action; see
:mod:`rally_vmct.task.scenarios.instance` for the shared phases. Reboots are
recorded as ``vmct.reboot_<type>`` with the children ``.left_active``,
``.active``, ``.reachable`` and ``.ssh_ready`` (in that order); a soft reboot
that the compute driver turned into a hard one is recorded as
``vmct.reboot_soft_fell_back_to_hard`` instead, so it is never averaged with
real soft reboots.
"""

import collections
import typing as t

from rally.task import scenario
from rally.task import validation
from rally_openstack.common import consts

from rally_vmct.common import instance_actions
from rally_vmct.common import ssh as vmct_ssh
from rally_vmct.common import waiter
from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.task import output
from rally_vmct.task.scenarios import instance

Probe = t.Literal["tcp", "ping", "ssh"]
REBOOT_STATUSES = ("REBOOT", "HARD_REBOOT")


class RebootNotSeen(waiter.WaitError):
    """The instance answered after a reboot request but had not restarted."""


def _validated(cls):
    """The validators every lifecycle scenario has."""
    for name, kwargs in (("vmct_kind_resources", {}),
                         ("required_services", {"services": [consts.Service.NOVA]}),
                         ("required_platform", {"platform": "openstack", "users": True}),
                         ("vmct_access", {}),
                         ("vmct_kind", {})):
        cls = validation.add(name, **kwargs)(cls)
    return cls


class PowerActions(instance.InstanceScenario):
    """Reboot, stop and start phases on top of the boot/delete phases."""

    def _start_iteration(self, *args, **kwargs):
        super()._start_iteration(*args, **kwargs)
        self.paths = collections.Counter()

    def _can_ssh(self):
        return self.wait_ssh or self.probe_name == "ssh"

    def _incarnation(self):
        if not self._can_ssh():
            return None
        with self._ssh_client() as client:
            return vmct_ssh.incarnation(client)

    def _left_active(self, request_id, reboot_type, before):
        checked = {"ssh_at": None}

        def accept(state):
            if state.status == waiter.ERROR:
                return False            # the waiter raises with Nova's fault
            if state.status != waiter.ACTIVE or str(state.task_state or "").startswith("reboot"):
                return "left"
            if not state.settled:
                return False
            # ACTIVE with no task: either done already (too fast to see) or not begun.
            action = self._fetch_action(request_id)
            if action is not None:
                bad = instance_actions.failed_events(action)
                if bad:
                    raise waiter.ServerFault(
                        "Nova reports that the %s reboot of server %s failed: event %s "
                        "result %s" % (reboot_type, self.server.id, bad[0]["event"],
                                       bad[0]["result"]))
                if instance_actions.finished(action):
                    return "done"
            if before is not None:
                now = self.clock.monotonic()
                if checked["ssh_at"] is None or now - checked["ssh_at"] >= 1.0:
                    checked["ssh_at"] = now
                    try:
                        after = self._incarnation()
                    except Exception:
                        after = None
                    if after is not None and after != before:
                        return "done"
            return False
        return accept

    def _reboot(self, reboot_type, threshold):
        """One reboot, as ``vmct.reboot_<type>`` with its children; returns its path."""
        name = "vmct.reboot_%s" % reboot_type
        before = self._incarnation()
        timeout = opts.get("reboot_timeout")
        self.pacer.before_action()
        t_req = self.clock.monotonic()
        with self.timeline.phase(name, start=t_req) as parent:
            self._mark(name)
            response = self._nova().servers.reboot(self.server, reboot_type.upper())
            request_id = self._remember_request(response)
            with self.timeline.phase(name + ".left_active", start=t_req) as left:
                seen = self.server_waiter.wait_for(
                    self._left_active(request_id, reboot_type, before), timeout,
                    "server to leave ACTIVE after the %s reboot request (no %s status or "
                    "reboot task state seen, and Nova's instance action did not finish)"
                    % (reboot_type, "/".join(REBOOT_STATUSES)), started_at=t_req)
                if seen.verdict == "left":
                    left.end(seen.at)
                else:
                    left.discard()
            with self.timeline.phase(name + ".active",
                                     start=seen.at if seen.verdict == "left" else t_req) as back:
                self._mark(name + ".active")
                active = seen
                if seen.verdict == "left":
                    active = self.server_waiter.wait_for_status(
                        waiter.ACTIVE, timeout,
                        "server to become ACTIVE again after the %s reboot" % reboot_type,
                        started_at=seen.at)
                back.end(active.at)
            ready = self._wait_probe(self.probe_name, name + ".reachable", active.at).finish
            if self.wait_ssh:
                ready = self._wait_probe("ssh", name + ".ssh_ready", ready).finish
            parent.end(ready)
        after = self._incarnation()
        if before is not None and after is not None and before == after:
            raise RebootNotSeen(
                "Server %s answered after the %s reboot request but did not restart (boot id "
                "and PID 1 start time unchanged: %s)" % (self.server.id, reboot_type, after))
        action = self._fetch_action(request_id)
        path = instance_actions.reboot_path(
            reboot_type, threshold,
            event_seconds=instance_actions.event_duration(action) if action else None,
            active_seconds=active.at - t_req)
        if path == instance_actions.FALLBACK:
            parent.rename("vmct.reboot_" + path)
        self.paths[path] += 1
        self._row("reboot_" + path, parent.duration)
        return path

    def _stop(self):
        """``vmct.stop``: stop request -> SHUTOFF."""
        self.pacer.before_action()
        with self.timeline.phase("vmct.stop") as phase:
            self._mark("vmct.stop")
            self._remember_request(self._nova().servers.stop(self.server))
            off = self.server_waiter.wait_for_status(
                waiter.SHUTOFF, opts.get("reboot_timeout"), "server to become SHUTOFF (stop)",
                started_at=phase.start)
            phase.end(off.at)
        self._row("stop", phase.duration)

    def _start(self):
        """``vmct.start``: start request -> ACTIVE (``.active``) -> reachable (``.reachable``)."""
        self.pacer.before_action()
        with self.timeline.phase("vmct.start") as parent:
            self._mark("vmct.start")
            self._remember_request(self._nova().servers.start(self.server))
            with self.timeline.phase("vmct.start.active", start=parent.start) as phase:
                active = self.server_waiter.wait_for_status(
                    waiter.ACTIVE, opts.get("reboot_timeout"),
                    "server to become ACTIVE (start)", started_at=parent.start)
                phase.end(active.at)
            ready = self._wait_probe(self.probe_name, "vmct.start.reachable", active.at).finish
            if self.wait_ssh:
                ready = self._wait_probe("ssh", "vmct.start.ssh_ready", ready).finish
            parent.end(ready)
        self._row("start", parent.duration)


@_validated
@scenario.configure(name="VMCT.boot_and_delete_server", platform="openstack",
                    context={"cleanup@openstack": ["nova"]})
class BootAndDeleteServer(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg, probe: Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None):
        """Boot a server of a kind, wait until it is reachable, delete it; time each phase.

        Atomic actions, in order: vmct.build (create request -> ACTIVE),
        vmct.wait_for_network (ACTIVE -> reachable), vmct.wait_for_ssh (only with
        wait_for_ssh), vmct.delete (delete request -> 404). Output: the additive
        StatsTable "<kind>: lifecycle [s]" (build, wait_for_network,
        wait_for_ssh, build_and_network, delete, total), and tables of the
        server's state transitions and of Nova's instance actions. Phases are timed by polling every
        [vmct] poll_interval seconds (0.2 by default), not Rally's 2 s.

        :param kind: instance kind: {name: LABEL, image: {name|id|regex: ...},
            flavor: {name|id|regex: ...}, availability_zone: AZ (optional),
            scheduler_hints: {...} (optional), ssh_user: root, ssh_port: 22,
            ssh_key_file: PATH (optional; else the keypair context's key)}.
            The name labels every chart and the comparison exporter's groups.
        :param probe: what "reachable" means: "tcp" (connect to ssh_port; through
            a proxy command: the SSH banner arrives), "ping" (one ICMP echo; not
            through a proxy) or "ssh" (an SSH login runs `true`; needs a key)
        :param wait_for_ssh: after reachable, also time until an SSH command
            succeeds (vmct.wait_for_ssh); needs the keypair context or
            kind.ssh_key_file
        :param proxy_command: reach instances through this command, OpenSSH
            ProxyCommand syntax with %h %p %r (e.g. "ssh -W %h:%p bastion" or
            "ip netns exec NS nc %h %p"); default [vmct] ssh_proxy_command;
            "" for none
        :param boot_args: extra arguments for Nova's server create, e.g.
            {nics: [{net-name: private}], config_drive: true}; without nics the
            network context's network is used
        """
        self._start_iteration(kind, probe, wait_for_ssh, proxy_command)

        def body():
            active = self._boot(boot_args)
            self._wait_for_network(active)
            self._row("build_and_network",
                      sum(s for n, s in self.rows if n in ("build", "wait_for_network")))
            self._fetch_actions()
            gone = self._delete()
            self.add_output(additive=self._lifecycle_chart(gone.at - self.t0))
        self._run_iteration(body)


@_validated
@scenario.configure(name="VMCT.boot_and_reboot_server", platform="openstack",
                    context={"cleanup@openstack": ["nova"]})
class BootAndRebootServer(PowerActions):

    def run(self, kind: kinds.KindArg, reboot_type: t.Literal["hard", "soft"] = "soft",
            reboots: t.Annotated[int, scenario.Field(ge=1)] = 1,
            soft_reboot_fallback_seconds: t.Annotated[float, scenario.Field(gt=0)] = 120.0,
            probe: Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None):
        """Boot a server of a kind, reboot it N times (hard or soft), delete it; time each step.

        Each reboot is the atomic action vmct.reboot_<type> with children, in
        order: .left_active (request -> REBOOT/HARD_REBOOT status or reboot task
        state seen; absent when the reboot finished between two polls, which
        Nova's instance action or a changed boot id then proves), .active
        (-> ACTIVE with no task), .reachable (-> probe succeeds), .ssh_ready
        (-> SSH command succeeds, with wait_for_ssh). With SSH, the guest's boot
        id and PID 1 start time must change, else the iteration fails. A soft
        reboot whose compute event (or request -> ACTIVE time) lasted at least
        soft_reboot_fallback_seconds was turned into a hard reboot by the
        driver: it is recorded as vmct.reboot_soft_fell_back_to_hard. Output:
        "<kind>: reboot path [count]" (soft, soft_fell_back_to_hard, hard),
        "<kind>: lifecycle [s]" (build, wait_for_network, reboot_<path> mean,
        delete, total) and the transitions and instance-action tables.

        :param kind: instance kind: {name: LABEL, image: {name|id|regex: ...},
            flavor: {name|id|regex: ...}, availability_zone: AZ (optional),
            scheduler_hints: {...} (optional), ssh_user: root, ssh_port: 22,
            ssh_key_file: PATH (optional; else the keypair context's key)}
        :param reboot_type: "soft" (ACPI shutdown, then start) or "hard"
            (power cycle)
        :param reboots: reboots per iteration (>= 1)
        :param soft_reboot_fallback_seconds: the cloud's [libvirt]
            wait_soft_reboot_seconds (120 by default): a soft reboot at least
            this long is reported as soft_fell_back_to_hard
        :param probe: what "reachable" means: "tcp", "ping" or "ssh" (see
            VMCT.boot_and_delete_server)
        :param wait_for_ssh: also time until an SSH command succeeds after each
            reboot and check that the guest really restarted; needs the keypair
            context or kind.ssh_key_file
        :param proxy_command: OpenSSH ProxyCommand-style command to reach
            instances (%h %p %r); default [vmct] ssh_proxy_command; "" for none
        :param boot_args: extra arguments for Nova's server create (nics, ...)
        """
        self._start_iteration(kind, probe, wait_for_ssh, proxy_command)

        def body():
            active = self._boot(boot_args)
            self._wait_for_network(active)
            self._fetch_actions()
            for _ in range(reboots):
                self._reboot(reboot_type, soft_reboot_fallback_seconds)
            gone = self._delete()
            self.add_output(additive=output.stats_chart(
                self.kind_label, output.REBOOT_PATH_GROUP, "count",
                [(path, self.paths[path]) for path in output.REBOOT_PATHS],
                description="Which path each reboot took; soft_fell_back_to_hard is a soft "
                            "reboot the driver turned into a hard one."))
            self.add_output(additive=self._lifecycle_chart(gone.at - self.t0))
        self._run_iteration(body)


@_validated
@scenario.configure(name="VMCT.boot_stop_start_server", platform="openstack",
                    context={"cleanup@openstack": ["nova"]})
class BootStopStartServer(PowerActions):

    def run(self, kind: kinds.KindArg, cycles: t.Annotated[int, scenario.Field(ge=1)] = 1,
            probe: Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None):
        """Boot a server of a kind, stop and start it N times, delete it; time each step.

        Atomic actions: vmct.build, vmct.wait_for_network, then per cycle
        vmct.stop (request -> SHUTOFF) and vmct.start with children
        vmct.start.active (request -> ACTIVE), vmct.start.reachable (-> probe
        succeeds) and vmct.start.ssh_ready (with wait_for_ssh); vmct.delete.
        Output: "<kind>: lifecycle [s]" (build, wait_for_network, stop, start,
        delete, total; stop and start are means over the cycles) and the
        transitions and instance-action tables.

        :param kind: instance kind: {name: LABEL, image: {name|id|regex: ...},
            flavor: {name|id|regex: ...}, availability_zone: AZ (optional),
            scheduler_hints: {...} (optional), ssh_user: root, ssh_port: 22,
            ssh_key_file: PATH (optional; else the keypair context's key)}
        :param cycles: stop/start cycles per iteration (>= 1)
        :param probe: what "reachable" means: "tcp", "ping" or "ssh" (see
            VMCT.boot_and_delete_server)
        :param wait_for_ssh: also time until an SSH command succeeds after boot
            and each start; needs the keypair context or kind.ssh_key_file
        :param proxy_command: OpenSSH ProxyCommand-style command to reach
            instances (%h %p %r); default [vmct] ssh_proxy_command; "" for none
        :param boot_args: extra arguments for Nova's server create (nics, ...)
        """
        self._start_iteration(kind, probe, wait_for_ssh, proxy_command)

        def body():
            active = self._boot(boot_args)
            self._wait_for_network(active)
            self._fetch_actions()
            for _ in range(cycles):
                self._stop()
                self._start()
                self._fetch_actions()
            gone = self._delete()
            self.add_output(additive=self._lifecycle_chart(gone.at - self.t0))
        self._run_iteration(body)
