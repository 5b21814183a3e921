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

Each phase is timed by the server's session
(:mod:`rally_vmct.timing.session`: boot, network, delete;
:mod:`rally_vmct.timing.power`: reboots, stop and start) from the
transitions the fast waiter observed (poll every ``[vmct] poll_interval`` s)
and recorded as a ``vmct.*`` atomic action. With ``probe: none`` (a kind whose
instances cannot be reached, e.g. Nova's fake driver) the network and SSH
phases are left out: build and delete (and reboot, stop, start up to ACTIVE or
SHUTOFF) are still timed.
"""

import typing as t

from rally.task import scenario

from rally_vmct.task import kinds
from rally_vmct.task import output
from rally_vmct.task.scenarios import instance
from rally_vmct.timing import diagnostics
from rally_vmct.timing import power
from rally_vmct.task import validators

# "none": the instances cannot be reached; no network or SSH phase (session.NO_PROBE)
Probe = t.Literal["tcp", "ping", "ssh", "none"]
PollMode = t.Literal["per_server", "batched"]
Count = t.Annotated[int, scenario.Field(ge=1)]


@validators.instance_scenario
@scenario.configure(name="VMCT.boot_and_delete_server", platform="openstack",
                    context={"cleanup@openstack": ["nova", "neutron"]})
class BootAndDeleteServer(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg, probe: Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None,
            poll_mode: PollMode | None = None):
        """Boot a server of a kind, wait until it is reachable, delete it; time each phase.

        Atomic actions, in order: vmct.build (create request -> ACTIVE),
        vmct.associate_floating_ip (with kind.floating_network: ACTIVE ->
        Neutron created the floating IP on the server's port),
        vmct.wait_for_network (-> reachable; not with probe "none"),
        vmct.wait_for_ssh (only with wait_for_ssh), vmct.delete (delete request
        -> 404). Output: the additive StatsTable "<kind>: lifecycle [s]" (build,
        wait_for_network, wait_for_ssh, build_and_network, delete, total; with
        probe "none": build, delete, total), and tables of the
        server's state transitions and of Nova's instance actions. Phases are timed by polling every
        [vmct] poll_interval seconds (0.2 by default), not Rally's 2 s.

        :param kind: instance kind: {name: LABEL, image: {name|id|regex: ...},
            flavor: {name|id|regex: ...}, availability_zone: AZ (optional),
            scheduler_hints: {...} (optional), ssh_user: root, ssh_port: 22,
            ssh_key_file: PATH (optional; else the keypair context's key),
            floating_network: NET (optional: an external network; the server
            is reached at a floating IP of it, created and associated once
            ACTIVE as vmct.associate_floating_ip, released with the server)}.
            The name labels every chart and the comparison exporter's groups.
        :param probe: what "reachable" means: "tcp" (connect to ssh_port; through
            a proxy command: the SSH banner arrives), "ping" (one ICMP echo; not
            through a proxy), "ssh" (an SSH login runs `true`; needs a key) or
            "none" (the kind's instances cannot be reached, e.g. Nova's fake
            driver: no network phase and no address needed, build and delete
            are timed; not with wait_for_ssh)
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
        :param poll_mode: how the server is polled, "per_server" (a GET each
            poll) or "batched" (one list per poll for every server of the
            process: high concurrency); default [vmct] poll_mode
        """
        session = self._open_session(kind, probe, wait_for_ssh, proxy_command, poll_mode)
        try:
            session.wait_for_network(self._boot(session, boot_args))
            if session.access.reachable:
                session.add_row("build_and_network", session.row_total(
                    "build", "associate_floating_ip", "wait_for_network"))
            session.fetch_actions()
            gone = session.delete()
            self.add_output(additive=diagnostics.lifecycle_chart(session, gone.estimate))
        finally:
            self._finish(session)


@validators.instance_scenario
@scenario.configure(name="VMCT.boot_and_reboot_server", platform="openstack",
                    context={"cleanup@openstack": ["nova", "neutron"]})
class BootAndRebootServer(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg, reboot_type: t.Literal["hard", "soft"] = "soft",
            reboots: Count = 1,
            soft_reboot_fallback_seconds: t.Annotated[float, scenario.Field(gt=0)] = 120.0,
            probe: Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None):
        """Boot a server of a kind, reboot it N times (hard or soft), delete it; time each step.

        Each reboot is the atomic action vmct.reboot_<type> with children, in
        order: .left_active (request -> REBOOT/HARD_REBOOT status or reboot task
        state seen; absent when the reboot finished between two polls, which
        Nova's instance action or a changed boot id then proves), .active
        (-> ACTIVE with no task), .reachable (-> probe succeeds; not with probe
        "none"), .ssh_ready (-> SSH command succeeds, with wait_for_ssh). With
        probe "none" there is no vmct.wait_for_network either and a reboot ends
        when the server is ACTIVE again. With SSH, the guest's boot
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
        :param probe: what "reachable" means: "tcp", "ping", "ssh" or "none"
            (not reachable: each reboot ends at ACTIVE; see
            VMCT.boot_and_delete_server)
        :param wait_for_ssh: also time until an SSH command succeeds after each
            reboot and check that the guest really restarted; needs the keypair
            context or kind.ssh_key_file
        :param proxy_command: OpenSSH ProxyCommand-style command to reach
            instances (%h %p %r); default [vmct] ssh_proxy_command; "" for none
        :param boot_args: extra arguments for Nova's server create (nics, ...)
        """
        session = self._open_session(kind, probe, wait_for_ssh, proxy_command)
        try:
            session.wait_for_network(self._boot(session, boot_args))
            session.fetch_actions()
            for _ in range(reboots):
                power.reboot(session, reboot_type, soft_reboot_fallback_seconds)
            gone = session.delete()
            self.add_output(additive=self._reboot_paths_chart(session))
            self.add_output(additive=diagnostics.lifecycle_chart(session, gone.estimate))
        finally:
            self._finish(session)

    @staticmethod
    def _reboot_paths_chart(session):
        return output.stats_chart(
            session.label, output.REBOOT_PATH_GROUP, "count",
            [(path, session.record.paths[path]) for path in output.REBOOT_PATHS],
            description="Which path each reboot took; soft_fell_back_to_hard is a soft "
                        "reboot the driver turned into a hard one.")


@validators.instance_scenario
@scenario.configure(name="VMCT.boot_stop_start_server", platform="openstack",
                    context={"cleanup@openstack": ["nova", "neutron"]})
class BootStopStartServer(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg, cycles: Count = 1,
            probe: Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None):
        """Boot a server of a kind, stop and start it N times, delete it; time each step.

        Atomic actions: vmct.build, vmct.wait_for_network, then per cycle
        vmct.stop (request -> SHUTOFF) and vmct.start with children
        vmct.start.active (request -> ACTIVE), vmct.start.reachable (-> probe
        succeeds) and vmct.start.ssh_ready (with wait_for_ssh); vmct.delete.
        With probe "none" there is no vmct.wait_for_network and no
        vmct.start.reachable: a start ends when the server is ACTIVE.
        Output: "<kind>: lifecycle [s]" (build, wait_for_network, stop, start,
        delete, total; stop and start are means over the cycles) and the
        transitions and instance-action tables.

        :param kind: instance kind (see VMCT.boot_and_delete_server)
        :param cycles: stop/start cycles per iteration (>= 1)
        :param probe: what "reachable" means after boot and each start: "tcp",
            "ping", "ssh" or "none" (not reachable; see
            VMCT.boot_and_delete_server)
        :param wait_for_ssh: also time until an SSH command succeeds after boot
            and each start; needs the keypair context or kind.ssh_key_file
        :param proxy_command: how to reach instances, as in
            VMCT.boot_and_delete_server
        :param boot_args: extra arguments for Nova's server create, as in
            VMCT.boot_and_delete_server
        """
        session = self._open_session(kind, probe, wait_for_ssh, proxy_command)
        try:
            session.wait_for_network(self._boot(session, boot_args))
            session.fetch_actions()
            for _ in range(cycles):
                power.stop(session)
                power.start(session)
                session.fetch_actions()
            gone = session.delete()
            self.add_output(additive=diagnostics.lifecycle_chart(session, gone.estimate))
        finally:
            self._finish(session)
