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
"""What VMCT.boot_and_benchmark and VMCT.native_benchmark share.

Their typed arguments (hosts, the netperf peer, run counts), the netserver
peer set-up, and running a workload plan over an SSH client with each workload
timed as a ``vmct.<tool>_<test>`` atomic action.
"""

import functools
import typing as t

from rally.task import atomic
from rally.task import scenario
import typing_extensions as te

from rally_vmct.access import ssh
from rally_vmct import opts
from rally_vmct.workloads import netperf
from rally_vmct.workloads import repeat
from rally_vmct.workloads import runner
from rally_vmct.workloads import storage

# Typed run() arguments of both scenarios (checked again by vmct_workload_options:
# fileio_dir absolute, max_runs >= min_runs, ...; by vmct_hosts: proxy commands).
RunCount = t.Annotated[int, scenario.Field(ge=1)]
CvTarget = t.Annotated[float, scenario.Field(gt=0)]
Timeout = t.Annotated[float, scenario.Field(gt=0)]
Port = t.Annotated[int, scenario.Field(ge=1, le=65535)]
Text = t.Annotated[str, scenario.Field(min_length=1)]
# netserver -L: a host name or an IPv4/IPv6 address. netserver's exit status cannot tell a
# bad address from a netserver already running, so a bad one is refused by validation.
Address = t.Annotated[str, scenario.Field(pattern=r"^[A-Za-z0-9.:%_-]+$")]


class Host(te.TypedDict, total=False, closed=True):
    """An existing machine reached over SSH (proxy_command "": the default)."""

    host: t.Required[Text]
    port: Port
    user: Text
    key_file: Text
    password: Text
    proxy_command: str


class NetperfPeer(te.TypedDict, total=False, closed=True):
    """Where netserver listens; with ``ssh``, the scenario starts it there."""

    host: t.Required[Text]
    control_port: Port
    data_port: Port
    listen: Address
    ssh: Host


def connect(host_spec, connect_timeout=None):
    """:class:`rally_vmct.access.ssh.SSH` client for a :class:`Host` spec."""
    return ssh.SSH.of_spec(host_spec, proxy_command=opts.get("ssh_proxy_command"),
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


def peer_arguments(scenario_, netperf_peer):
    """run_plan's netperf_host/control_port/data_port for a :class:`NetperfPeer`.

    With ``ssh``, netserver is started there first (atomic vmct.start_netserver).
    """
    if netperf_peer.get("ssh"):
        with atomic.ActionTimer(scenario_, "vmct.start_netserver"):
            ensure_netserver(netperf_peer)
    return {"netperf_host": netperf_peer["host"],
            "control_port": netperf_peer.get("control_port"),
            "data_port": netperf_peer.get("data_port")}


def run_workloads(scenario_, client, plan, where, command_timeout, options, peer):
    """``(facts, dialect, results)`` of ``plan`` run over ``client``.

    Each workload is the scenario's atomic action ``vmct.<tool>_<test>``.
    """
    return runner.run_plan(
        ssh.executor(client), plan, where,
        timeout=command_timeout or opts.get("command_timeout"),
        timer=functools.partial(atomic.ActionTimer, scenario_), **options, **peer)
