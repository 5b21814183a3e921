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
"""VMCT.boot_and_benchmark: sysbench and netperf inside a booted instance of a kind."""

import typing as t

from rally.task import scenario
from rally.task import validation

from rally_vmct.task.scenarios.benchmark import report
from rally_vmct.task.scenarios.benchmark import shared
from rally_vmct.task import kinds
from rally_vmct.task.scenarios.benchmark import nova_facts
from rally_vmct.task.contexts import netperf_peer as peer_context
from rally_vmct.task.contexts import workload_image
from rally_vmct.task.scenarios import instance
from rally_vmct.timing import diagnostics
from rally_vmct.task import validators
from rally_vmct.workloads import facts as facts_lib
from rally_vmct.workloads import plan as plan_lib


# The lifecycle probes but "none": the workloads run over SSH.
Probe = t.Literal["tcp", "ping", "ssh"]
# Where the measured instance lands relative to the netperf peer instance (Nova's
# scheduler hints of the SameHostFilter and DifferentHostFilter).
PeerPlacement = t.Literal["same_host", "different_host"]


class PeerMissing(RuntimeError):
    """netperf_peer "instance" without the vmct_netperf_peer context's server."""


@validation.add("vmct_hosts")
@validation.add("vmct_benchmark_access")
@validation.add("vmct_workloads", param_name="workloads")
@validation.add("vmct_workload_options")
@validators.instance_scenario
@scenario.configure(name="VMCT.boot_and_benchmark", platform="openstack",
                    context={"cleanup@openstack": ["nova", "neutron"]})
class BootAndBenchmark(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg,
            workloads: list[dict[str, t.Any]] | None = None,
            netperf_peer: t.Literal["instance", "none"] | shared.NetperfPeer | None = None,
            probe: Probe = "tcp",
            proxy_command: str | None = None,
            ssh_user: t.Annotated[str, scenario.Field(min_length=1)] | None = None,
            command_timeout: shared.Timeout | None = None,
            boot_args: dict[str, t.Any] | None = None,
            fileio_dir: str | None = None,
            min_runs: shared.RunCount = 1,
            max_runs: shared.RunCount | None = None,
            cv_target: shared.CvTarget | None = None,
            peer_placement: PeerPlacement | None = None):
        """Boot a server of a kind, run sysbench and netperf in it over SSH, delete it.

        Atomic actions, in order: vmct.build, vmct.wait_for_network,
        vmct.wait_for_ssh (until an SSH command succeeds), one vmct.<tool>_<test>
        per workload (e.g. vmct.sysbench_cpu, vmct.sysbench_fileio_rndrd_direct,
        vmct.netperf_tcp_rr), vmct.delete.
        Before the workloads the iteration records the instance's facts (kernel,
        CPU model, vCPUs, memory, tool versions, virtualisation detected from CPU
        flags, clocksources, DMI, dmesg and container evidence: e.g. "QEMU TCG
        (emulated)", "KVM (hardware-assisted)", "container (docker), host: KVM
        guest"; where fileio's files live; the netperf path; with Rally's admin
        credential the Nova hypervisor type and version) and checks the tools: a
        missing sysbench or netperf fails the iteration with one error naming
        the tool and where to get an image with it (tools/images, and
        tools/images/docker/README.md for the Docker image; or the
        vmct_workload_image context with prepare: true). Output: per workload an
        additive StatsTable "<kind>: <workload> [<unit>]" (the mean of its runs),
        "<kind>: lifecycle [s]", a table of every metric, the instance facts,
        one table of every run per workload, the server's state transitions,
        and the raw output of any workload whose output could not be parsed
        (the iteration then fails).

        :param kind: instance kind: {name: LABEL, image: {name|id|regex: ...},
            flavor: {name|id|regex: ...}, availability_zone: AZ (optional),
            scheduler_hints: {...} (optional), ssh_user: root, ssh_port: 22,
            ssh_key_file: PATH (optional; else the keypair context's key)}.
            With the vmct_workload_image context for a kind of the same name,
            the server boots that context's image.
        :param workloads: list such as [{sysbench: cpu, max_prime: 20000},
            {sysbench: fileio, test_mode: rndrd, block_size: 4K},
            {netperf: TCP_RR, duration: 10}]; default: the KEK study's workloads
            (cpu-max-prime 20000; memory 1K read and write; fileio 4K direct
            seqrd/rndrd/seqwr/rndwr; netperf TCP_STREAM and TCP_RR, the netperf
            ones only with a peer)
        :param netperf_peer: where netserver listens: "instance" (the
            vmct_netperf_peer context's server in this tenant; the default
            when that context is present), "none" (no netperf; the default
            without it), or {host, control_port (12865), data_port (12866),
            ssh: {host, port, user, key_file, password, proxy_command}: a host
            on which the scenario starts netserver if it is not running,
            listen: the address that netserver binds there (default: all)}
        :param probe: what "reachable" means before the SSH wait: "tcp",
            "ping" or "ssh" (see VMCT.boot_and_delete_server); not "none": the
            workloads run over SSH, so the instance must be reachable
        :param proxy_command: reach instances through this command, OpenSSH
            ProxyCommand syntax with %h %p %r (e.g. "ssh -W %h:%p bastion");
            default [vmct] ssh_proxy_command; "" for none
        :param ssh_user: user to log in as (default kind.ssh_user, else root)
        :param command_timeout: seconds one workload command may run (default
            [vmct] command_timeout)
        :param boot_args: extra arguments for Nova's server create, e.g.
            {nics: [{net-name: private}]}; without nics the network context's
            network is used
        :param fileio_dir: absolute directory in the instance where sysbench
            fileio writes its files, on block storage so O_DIRECT works; default
            /var/tmp/vmct-fileio (the QEMU guest's virtio disk, a container's
            overlay2 writable layer). Made if missing (and then removed afterwards)
        :param min_runs: runs of each workload per iteration, at least (default 1)
        :param max_runs: runs of each workload per iteration, at most (default
            min_runs); without cv_target every workload runs max_runs times
        :param cv_target: percent; after min_runs runs, stop repeating a
            workload once the coefficient of variation of its primary metric
            (sysbench events_per_second, or total_time for fixed-work 0.4/0.5
            runs; netperf throughput, or transaction_rate for RR tests) is at
            most this (needs max_runs > min_runs). Every run is in the table
            "<kind>: <workload> runs"; the charts show the mean
        :param peer_placement: "same_host" or "different_host": boot the
            instance with that scheduler hint naming the netperf peer instance
            (netperf_peer "instance"), so netperf measures the path within one
            compute host or between two; unset, the scheduler decides. Nova
            honours the hints only with SameHostFilter / DifferentHostFilter in
            its [filter_scheduler] enabled_filters, so the facts record the path
            actually taken: netperf_peer_host "same host", "different host" or
            "unknown" (from the servers' hostId, which every user sees, or their
            compute host where visible), netperf_peer_host_from (how it is known)
            and netperf_peer_placement (what was asked, and whether it held)
        """
        options = shared.run_options(fileio_dir, min_runs, max_runs, cv_target)
        kind = self._kind(kind, ssh_user)
        peer, peer_server_id = self._peer(netperf_peer)
        plan = self._plan(workloads, peer)
        hints = self._placement_hints(peer_placement, peer_server_id)
        session = self._open_session(kind, probe, True, proxy_command)
        try:
            session.wait_for_network(self._boot(session, boot_args, hints))
            facts, dialect, results, where = self._run_workloads(
                session, plan, command_timeout, options, peer)
            facts.update(self._cloud_facts(session, plan, peer, peer_server_id,
                                           peer_placement))
            session.fetch_actions()
            gone = session.delete()
            self.add_output(additive=diagnostics.lifecycle_chart(session, gone.estimate))
            report.report(self, session.label, facts, dialect, results, where)
        finally:
            self._finish(session)

    def _peer(self, netperf_peer):
        """``({netperf_host, control_port, data_port}, peer server id)``; ({}, None) without."""
        tenant = self.context.get("tenant") or {}
        if netperf_peer is None:
            netperf_peer = (peer_context.PEER_INSTANCE if peer_context.KEY in tenant
                            else peer_context.PEER_NONE)
        if netperf_peer == peer_context.PEER_NONE:
            return {}, None
        server_id = None
        if netperf_peer == peer_context.PEER_INSTANCE:
            netperf_peer = tenant.get(peer_context.KEY)
            if not netperf_peer:
                raise PeerMissing("netperf_peer 'instance' needs the %s context (no netserver "
                                  "instance in this tenant)" % peer_context.KEY)
            server_id = netperf_peer.get("server_id")
        return shared.peer_arguments(self, netperf_peer), server_id

    @staticmethod
    def _placement_hints(peer_placement, peer_server_id):
        """Nova scheduler hints placing the instance relative to the peer instance."""
        if not peer_placement:
            return None
        if not peer_server_id:
            raise PeerMissing("Argument 'peer_placement' (%s) places the instance relative "
                              "to the netperf peer instance: it needs netperf_peer 'instance' "
                              "and the %s context; leave it out for another peer"
                              % (peer_placement, peer_context.KEY))
        return {peer_placement: [peer_server_id]}

    @staticmethod
    def _plan(workloads, peer):
        plan = plan_lib.parse_plan(workloads or plan_lib.default_workloads(
            with_network=bool(peer)))
        if "netperf" in plan_lib.needed_tools(plan) and not peer:
            raise plan_lib.PlanError(
                "Argument 'workloads' lists netperf workloads but netperf_peer is 'none': "
                "add the %s context or give netperf_peer {host, control_port, data_port}"
                % peer_context.KEY)
        return plan

    def _kind(self, kind, ssh_user):
        """The kind as booted: ``ssh_user`` applied, the vmct_workload_image context's image."""
        if ssh_user:
            kind = dict(kind, ssh_user=ssh_user)
        image_id = workload_image.image_for(self.context, kind)
        if image_id:
            kind = dict(kind, image_id=image_id)
        return kind

    def _run_workloads(self, session, plan, command_timeout, options, peer):
        """``(facts, dialect, results, where)`` of the plan run in the session's server."""
        where = "instance %s (kind %s, %s)" % (session.server.id, session.label,
                                               session.address)
        with session.ssh_client() as client:
            facts, dialect, results = shared.run_workloads(
                self, client, plan, where, command_timeout, options, peer)
        return facts, dialect, results, where

    def _cloud_facts(self, session, plan, peer, peer_server_id, peer_placement=None):
        """nova_hypervisor_type/version (admin API, never failing), the netperf path."""
        admin = self.admin_clients("nova") if getattr(self, "_admin_clients", None) else None
        facts, same_host = nova_facts.lookup(admin, session.server.id, peer_server_id)
        facts["netperf_path"] = facts_lib.NO_NETPERF
        if peer and "netperf" in plan_lib.needed_tools(plan):
            if peer_server_id:
                host = self._peer_host(session.server.id, peer_server_id, same_host)
                facts.update(host)
                facts["netperf_peer_placement"] = nova_facts.placement_text(
                    peer_placement, host["netperf_peer_host"])
                same_host = {nova_facts.SAME_HOST: True, nova_facts.DIFFERENT_HOST: False}.get(
                    host["netperf_peer_host"])
            facts["netperf_path"] = facts_lib.instance_netperf_path(
                peer["netperf_host"], bool(peer_server_id), same_host)
        return facts

    def _peer_host(self, server_id, peer_server_id, admin_same_host):
        """netperf_peer_host and netperf_peer_host_from: the user's view, else the admin's."""
        answer, how = nova_facts.peer_host(self.clients("nova"), server_id, peer_server_id)
        if answer == nova_facts.UNKNOWN_HOST and admin_same_host is not None:
            answer = nova_facts.SAME_HOST if admin_same_host else nova_facts.DIFFERENT_HOST
            how = "the servers' compute hosts (admin credential)"
        return {"netperf_peer_host": answer, "netperf_peer_host_from": how}
