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

import functools
import typing as t

import typing_extensions as te

from rally.task import atomic
from rally.task import scenario
from rally.task import validation

from rally_vmct.common import ssh
from rally_vmct import opts
from rally_vmct.task import benchmark_report
from rally_vmct.task import output
from rally_vmct.task import workload_validators  # noqa: F401  (registers validator)
from rally_vmct.workloads import facts as facts_lib
from rally_vmct.workloads import netperf
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import repeat
from rally_vmct.workloads import runner
from rally_vmct.workloads import storage

# Typed run() arguments shared with VMCT.boot_and_benchmark (checked again by
# vmct_workload_options: fileio_dir absolute, max_runs >= min_runs, ...).
RunCount = t.Annotated[int, scenario.Field(ge=1)]
CvTarget = t.Annotated[float, scenario.Field(gt=0)]


class Host(te.TypedDict, total=False, closed=True):
    """An existing machine reached over SSH."""

    host: t.Required[str]
    port: int
    user: str
    key_file: str
    password: str
    proxy_command: str


class NetperfPeer(te.TypedDict, total=False, closed=True):
    """Where netserver listens; with ``ssh``, the scenario starts it there."""

    host: t.Required[str]
    control_port: int
    data_port: int
    listen: str
    ssh: Host


def connect(host_spec, connect_timeout=None):
    """:class:`rally_vmct.common.ssh.SSH` client for a :class:`Host` spec."""
    return ssh.SSH(host_spec.get("user", "root"), host_spec["host"],
                   port=host_spec.get("port", 22), key_filename=host_spec.get("key_file"),
                   password=host_spec.get("password"),
                   proxy_command=host_spec.get("proxy_command") or opts.get(
                       "ssh_proxy_command"),
                   connect_timeout=connect_timeout or opts.get("ssh_connect_timeout"))


def ensure_netserver(peer, timeout=30):
    """Start netserver on the peer's SSH host unless it already listens there."""
    port = peer.get("control_port", netperf.DEFAULT_CONTROL_PORT)
    with connect(peer["ssh"]) as client:
        runner.start_netserver(ssh.executor(client), port, timeout, listen=peer.get("listen"))


def run_options(fileio_dir=None, min_runs=1, max_runs=None, cv_target=None):
    """run_plan's ``policy`` and ``fileio_dir`` from the task arguments.

    Raises ValueError naming the argument (the validator reports the same earlier).
    """
    return {"policy": repeat.RunPolicy(min_runs, max_runs, cv_target),
            "fileio_dir": storage.check_fileio_dir(fileio_dir or storage.DEFAULT_FILEIO_DIR)}


def native_facts(plan, netperf_peer):
    """Facts a host benchmark adds to the script's: not Nova, and the netperf path."""
    path = facts_lib.NO_NETPERF
    if netperf_peer and "netperf" in plan_lib.needed_tools(plan):
        path = facts_lib.native_netperf_path(netperf_peer["host"])
    return {"nova_hypervisor_type": facts_lib.NOT_NOVA,
            "nova_hypervisor_version": facts_lib.NOT_NOVA, "netperf_path": path}


def peer_arguments(scenario, netperf_peer):
    """run_plan's netperf_host/control_port/data_port for a :class:`NetperfPeer`.

    With ``ssh``, netserver is started there first (atomic vmct.start_netserver).
    """
    if netperf_peer.get("ssh"):
        with atomic.ActionTimer(scenario, "vmct.start_netserver"):
            ensure_netserver(netperf_peer)
    return {"netperf_host": netperf_peer["host"],
            "control_port": netperf_peer.get("control_port"),
            "data_port": netperf_peer.get("data_port")}


@validation.add("vmct_non_empty_list", param_name="hosts")
@validation.add("vmct_workloads", param_name="workloads", peer_param="netperf_peer")
@validation.add("vmct_workload_options")
@scenario.configure(name="VMCT.native_benchmark")
class NativeBenchmark(scenario.Scenario):

    def run(self, hosts: list[Host],
            workloads: list[dict[str, t.Any]] | None = None,
            netperf_peer: NetperfPeer | None = None,
            kind: t.Annotated[str, scenario.Field(min_length=1)] = output.NATIVE_KIND,
            command_timeout: t.Annotated[float, scenario.Field(gt=0)] | None = None,
            fileio_dir: str | None = None,
            min_runs: RunCount = 1,
            max_runs: RunCount | None = None,
            cv_target: CvTarget | None = None):
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
        :param min_runs: runs of each workload per iteration, at least (default 1)
        :param max_runs: runs of each workload per iteration, at most (default
            min_runs); without cv_target every workload runs max_runs times
        :param cv_target: percent; after min_runs runs, stop repeating a
            workload once the coefficient of variation of its primary metric
            (sysbench events_per_second, or total_time for fixed-work 0.4/0.5
            runs; netperf throughput, or transaction_rate for RR tests) is at
            most this (needs max_runs > min_runs). Every run is in the table
            "<kind>: <workload> runs"; the charts show the mean
        """
        host = hosts[(self.context["iteration"] - 1) % len(hosts)]
        where = "host %s" % host["host"]
        options = run_options(fileio_dir, min_runs, max_runs, cv_target)
        plan = plan_lib.parse_plan(workloads or plan_lib.default_workloads(
            with_network=bool(netperf_peer)))
        peer = peer_arguments(self, netperf_peer) if netperf_peer else {}
        timeout = command_timeout or opts.get("command_timeout")
        with connect(host) as client:
            facts, dialect, results = runner.run_plan(
                ssh.executor(client), plan, where, timeout=timeout,
                timer=functools.partial(atomic.ActionTimer, self), **options, **peer)
        facts.update(native_facts(plan, netperf_peer))
        benchmark_report.report(self, kind, facts, dialect, results, where)
