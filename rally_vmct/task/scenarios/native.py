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
from rally_vmct.workloads import netperf
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import runner


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
@scenario.configure(name="VMCT.native_benchmark")
class NativeBenchmark(scenario.Scenario):

    def run(self, hosts: list[Host],
            workloads: list[dict[str, t.Any]] | None = None,
            netperf_peer: NetperfPeer | None = None,
            kind: t.Annotated[str, scenario.Field(min_length=1)] = output.NATIVE_KIND,
            command_timeout: t.Annotated[float, scenario.Field(gt=0)] | None = None):
        """Run sysbench and netperf over SSH on existing hosts (bare-metal baseline).

        The same workloads as VMCT.boot_and_benchmark, on machines that already
        exist, so the comparison has a native reference. Iteration N runs on
        hosts[(N - 1) % len(hosts)]. Needs no OpenStack: an empty Rally env will do.

        :param hosts: machines to benchmark, each {host, port (22), user (root),
            key_file or password, proxy_command (OpenSSH ProxyCommand syntax,
            default [vmct] ssh_proxy_command)}
        :param workloads: list such as [{sysbench: cpu, max_prime: 20000},
            {sysbench: fileio, test_mode: rndrd, block_size: 4K},
            {netperf: TCP_RR, duration: 10}]; default: the KEK study's workloads
            (netperf ones only when netperf_peer is set)
        :param netperf_peer: netserver for the netperf workloads: {host,
            control_port (12865), data_port (12866), ssh: a host entry on which
            the scenario starts netserver if it is not running, listen: the
            address that netserver binds (default: all)}
        :param kind: label of these hosts in reports and comparisons
        :param command_timeout: seconds one workload command may run (default
            [vmct] command_timeout)
        """
        host = hosts[(self.context["iteration"] - 1) % len(hosts)]
        where = "host %s" % host["host"]
        plan = plan_lib.parse_plan(workloads or plan_lib.default_workloads(
            with_network=bool(netperf_peer)))
        peer = peer_arguments(self, netperf_peer) if netperf_peer else {}
        timeout = command_timeout or opts.get("command_timeout")
        with connect(host) as client:
            facts, dialect, results = runner.run_plan(
                ssh.executor(client), plan, where, timeout=timeout,
                timer=functools.partial(atomic.ActionTimer, self), **peer)
        benchmark_report.report(self, kind, facts, dialect, results, where)
