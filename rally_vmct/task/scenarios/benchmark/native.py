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
"""VMCT.native_benchmark: the bare-metal baseline, no cloud needed."""

import typing as t

from rally.task import scenario
from rally.task import validation

from rally_vmct.task.scenarios.benchmark import report
from rally_vmct.task.scenarios.benchmark import shared
from rally_vmct.hostcost import iteration
from rally_vmct.task import kinds
from rally_vmct.task import output
from rally_vmct.task import validators  # noqa: F401  (registers vmct_workloads...)
from rally_vmct.workloads import facts as facts_lib
from rally_vmct.workloads import plan as plan_lib


def native_facts(plan, netperf_peer):
    """Facts a host benchmark adds to the script's: not Nova, and the netperf path."""
    path = facts_lib.NO_NETPERF
    if netperf_peer and "netperf" in plan_lib.needed_tools(plan):
        path = facts_lib.native_netperf_path(netperf_peer["host"])
    return {"nova_hypervisor_type": facts_lib.NOT_NOVA,
            "nova_hypervisor_version": facts_lib.NOT_NOVA, "netperf_path": path}


@validation.add("vmct_hosts")
@validation.add("vmct_native_monitor")
@validation.add("vmct_non_empty_list", param_name="hosts")
@validation.add("vmct_workloads", param_name="workloads", peer_param="netperf_peer")
@validation.add("vmct_workload_options")
@scenario.configure(name="VMCT.native_benchmark")
class NativeBenchmark(scenario.Scenario):

    def run(self, hosts: list[shared.Host],
            workloads: list[dict[str, t.Any]] | None = None,
            netperf_peer: shared.NetperfPeer | None = None,
            kind: kinds.Label = output.NATIVE_KIND,
            command_timeout: shared.Timeout | None = None,
            fileio_dir: str | None = None,
            min_runs: shared.RunCount = 1,
            max_runs: shared.RunCount | None = None,
            cv_target: shared.CvTarget | None = None):
        """Run sysbench and netperf over SSH on existing hosts (bare-metal baseline).

        The same workloads as VMCT.boot_and_benchmark, on machines that already
        exist, so the comparison has a native reference. Iteration N runs on
        hosts[(N - 1) % len(hosts)]. Needs no OpenStack: an empty Rally env will do.
        Each iteration records the host's facts ("<kind>: instance facts"):
        virtualisation detected from CPU flags, clocksources, DMI, dmesg and
        container evidence (so a "native" host that is itself a VM says so),
        CPU, memory, kernel, tool versions, the netperf path (loopback or another
        host), where fileio's files live (file system, device, O_DIRECT on/off)
        and the run count; nova_hypervisor_type is "none (not a Nova instance)".
        With the vmct_host_monitor context measuring the host's SSH port
        (its native_ports; validation asks for it), the iteration adds that
        context's charts and "<kind>: host cost by phase on <host>" table for
        the monitored host that is this one: the sshd's process tree (its
        sessions, sysbench, netperf) as the instance, so the comparison's
        host cost has a native baseline (phases: benchmark, idle, iteration;
        start_netserver with netperf_peer.ssh).

        :param hosts: machines to benchmark, each {host, port (22), user (root),
            key_file or password, proxy_command (OpenSSH ProxyCommand syntax,
            default [vmct] ssh_proxy_command)}
        :param workloads: list such as [{sysbench: cpu, max_prime: 20000},
            {sysbench: fileio, test_mode: rndrd, block_size: 4K},
            {netperf: TCP_RR, duration: 10}]; default: the KEK study's workloads
            (netperf ones only when netperf_peer is set). A fileio workload with
            extra_flags: direct is named "... direct" (e.g. vmct.sysbench_fileio_rndrd_direct)
        :param netperf_peer: netserver for the netperf workloads: {host,
            control_port (12865), data_port (12866), ssh: a host entry on which
            the scenario starts netserver if it is not running, listen: the
            address that netserver binds (default: all)}
        :param kind: label of these hosts in reports and comparisons
        :param command_timeout: seconds one workload command may run (default
            [vmct] command_timeout)
        :param fileio_dir: absolute directory where sysbench fileio writes its
            files, on block storage (O_DIRECT); default /var/tmp/vmct-fileio (the
            host's disk). Made if missing (and then removed afterwards)
        :param min_runs: runs of each workload per iteration, at least (default
            1), as in VMCT.boot_and_benchmark
        :param max_runs: runs of each workload per iteration, at most (default
            min_runs), as in VMCT.boot_and_benchmark
        :param cv_target: percent: stop repeating a workload after min_runs
            once its primary metric's coefficient of variation is at most
            this, as in VMCT.boot_and_benchmark
        """
        host = hosts[(self.context["iteration"] - 1) % len(hosts)]
        where = "host %s" % host["host"]
        options = shared.run_options(fileio_dir, min_runs, max_runs, cv_target)
        plan = plan_lib.parse_plan(workloads or plan_lib.default_workloads(
            with_network=bool(netperf_peer)))
        try:
            peer = shared.peer_arguments(self, netperf_peer) if netperf_peer else {}
            with shared.connect(host) as client:
                facts, dialect, results = shared.run_workloads(
                    self, client, plan, where, command_timeout, options, peer)
            facts.update(native_facts(plan, netperf_peer))
            report.report(self, kind, facts, dialect, results, where)
        finally:
            iteration.add_charts(self, kind, iteration.native_instance(host),
                                 address=host["host"])
