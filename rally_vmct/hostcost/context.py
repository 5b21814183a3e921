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
"""``vmct_host_monitor``: what each instance costs its compute host, sampled during the workload."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from rally.common import logging
from rally.common import validation
from rally_openstack.common import consts
from rally_openstack.task import context

from rally_vmct.access import ssh
from rally_vmct import opts
from rally_vmct.hostcost import iteration
from rally_vmct.task import validators  # noqa: F401  (registers vmct_hosts)
from rally_vmct.hostcost import windows
from rally_vmct.hostcost.agent import sampler

LOG = logging.getLogger(__name__)

KEY = iteration.KEY
NATIVE_PORTS = iteration.NATIVE_PORTS
LOCAL = iteration.LOCAL

# "local", or a Host spec. One schema for both (string keywords apply to strings, object
# keywords to objects) rather than oneOf, so an error names its path from "hosts" on.
HOST_SCHEMA = {
    "type": ["string", "object"],
    "pattern": "^%s$" % LOCAL,
    "properties": {
        "host": {"type": "string", "minLength": 1},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "user": {"type": "string", "minLength": 1},
        "key_file": {"type": "string", "minLength": 1},
        "password": {"type": "string", "minLength": 1},
        "proxy_command": {"type": "string"},
        "name": {"type": "string", "minLength": 1},
        "python": {"type": "string", "minLength": 1},
    },
    "required": ["host"],
    "additionalProperties": False,
}


class MonitorError(RuntimeError):
    """A host's sampler did not start (the message says where and why)."""


def host_name(spec):
    """The label of a host spec: ``local``, else its ``name`` or ``host``."""
    return LOCAL if spec == LOCAL else spec.get("name") or spec["host"]


def agent_args(config, parent):
    """The agent's arguments from the context's config.

    :param parent: the pid of the agent's parent (local), or None: the parent
        it starts with (over SSH)
    """
    args = ["--interval", str(config["interval"]),
            "--disk-interval", str(config["disk_interval"]),
            "--docker-socket", config["docker_socket"] or "", "--watch-stdin"]
    for port in config.get(NATIVE_PORTS) or ():
        args += ["--native-port", str(port)]
    return args + (["--parent-pid", str(parent)] if parent else ["--exit-with-parent"])


def launch(spec, config):
    """``(argv, first bytes on stdin)`` of the sampler process of one host spec.

    Local: the agent itself (this Python). Remote: :mod:`.remote`
    (this Python), which runs the agent with the host's ``python`` (python3).
    """
    if spec == LOCAL:
        return (sampler.command(sys.executable, agent_args(config, os.getpid())),
                sampler.payload())
    host = dict(spec)
    python = host.pop("python", "python3")
    host.pop("name", None)
    # The relay has no rally.conf: what connect() would take from [vmct] is resolved here.
    host["proxy_command"] = host.get("proxy_command") or opts.get("ssh_proxy_command") or ""
    line = {"host": host, "connect_timeout": opts.get("ssh_connect_timeout"),
            "command": sampler.command(python, agent_args(config, None))}
    return ([sys.executable, "-m", "rally_vmct.hostcost.remote"],
            json.dumps(line).encode() + b"\n")


class AgentProcess:
    """One host's agent process (:mod:`.agent.sampler`), writing its JSON lines to ``path``."""

    def __init__(self, name, path, process, address=LOCAL):
        self.name = name
        self.path = path
        self.process = process
        self.address = address      # "local" or the spec's host: which machine it samples

    @classmethod
    def start(cls, spec, config, directory, index):
        name = host_name(spec)
        base = os.path.join(directory, "%02d-%s" % (index, re.sub(r"[^\w.-]", "_", name)))
        argv, first = launch(spec, config)
        with open(base + ".jsonl", "wb") as out, open(base + ".stderr", "wb") as err:
            # A session of its own: a Ctrl-C of the task reaches Rally, whose cleanup
            # stops the sampler, not the sampler first.
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=err,
                                       start_new_session=True)
        agent = cls(name, base + ".jsonl", process, LOCAL if spec == LOCAL else spec["host"])
        try:
            process.stdin.write(first)
            process.stdin.flush()
        except OSError:
            pass        # it exited already: wait_started() says why
        return agent

    def stderr_text(self, limit=1500):
        try:
            with open(self.path[:-len(".jsonl")] + ".stderr", "rb") as f:
                return f.read().decode("utf-8", "replace").strip()[-limit:]
        except OSError:
            return ""

    def started(self):
        """Has the file a start line and a first sample?"""
        try:
            with open(self.path, "rb") as f:
                return windows.read_header(f) is not None and windows.last_time(f) is not None
        except OSError:
            return False

    def wait_started(self, timeout, monotonic=time.monotonic, sleep=time.sleep):
        """Wait for the first sample; :class:`MonitorError` naming why there is none."""
        deadline = monotonic() + timeout
        while not self.started():
            code = self.process.poll()
            if code is not None:
                raise MonitorError(
                    "%s: the sampler of host %r exited (status %s) before its first sample: %s"
                    % (KEY, self.name, code, self.stderr_text() or "no error output"))
            if monotonic() > deadline:
                raise MonitorError(
                    "%s: no sample from host %r within %.0f s (start_timeout): %s"
                    % (KEY, self.name, timeout, self.stderr_text() or "no error output"))
            sleep(0.1)

    def stop(self, grace):
        """Close its stdin (the agent, or the relay and the remote agent, exit), then wait.

        SIGTERM, then SIGKILL, if it is still there after ``grace`` seconds.
        """
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            LOG.warning("%s: the sampler of host %r ignored its closed stdin for %.0f s; "
                        "terminating it" % (KEY, self.name, grace))
        ssh.terminate(self.process)


@validation.add("vmct_hosts")
@context.configure(name=KEY, platform="openstack", order=990)
class HostMonitor(context.OpenStackContext):
    """Sample the compute hosts during the workload: host CPU and memory, each instance's cost.

    For each host, a sampler (rally_vmct/hostcost/agent/sampler.py, Python 3
    stdlib only) runs from setup to cleanup and records, about every
    ``interval`` seconds: the host's CPU time split (user, system, iowait,
    steal; all CPUs), memory used and available, and for every Nova instance
    on it: the QEMU process whose command line has ``-uuid <server id>`` (PSS
    and RSS from smaps_rollup, CPU time, the instance directory's disk use) or
    the Docker container ``nova-<server id>`` (its memory cgroup: usage, anon,
    file; PSS and RSS of its processes; CPU time of its cgroup; its writable
    layer's disk use, every ``disk_interval`` seconds). Each iteration of the
    VMCT.* server scenarios then adds, for the hosts its server was on: Lines
    charts over the iteration (host CPU [%], host memory [MiB], the instance's
    memory and disk [MiB]) and a table per lifecycle phase (build, reboot, stop,
    start, benchmark, delete, idle, the whole iteration): host CPU seconds and
    split, host memory, the instance's CPU seconds, PSS, RSS, cgroup memory and
    disk. With concurrency above 1 the host figures include the other
    iterations' instances.

    The bare-metal baseline: with native_ports, each host's sampler also
    follows, as instance "native:<port>", the process listening on each of
    these TCP ports with all its descendants, e.g. the sshd that
    VMCT.native_benchmark logs in to and the sessions, sysbench and netperf it
    runs: their PSS, RSS and CPU time summed (what a bare process set costs).
    VMCT.native_benchmark then adds the same charts and phase table for its
    host (kind: its ``kind`` argument), and its validator asks for the port
    of each of its hosts here.

    Config: hosts (default ["local"]: the Rally host itself, e.g. the all-in-one
    cloud): "local", or {host, port (22), user (root), key_file or password,
    proxy_command (OpenSSH ProxyCommand syntax, default [vmct]
    ssh_proxy_command), name (the label; default host), python (python3)} as
    VMCT.native_benchmark's hosts, reached over SSH; the user must read the
    QEMU processes' /proc files (root). interval (1.0 s), disk_interval (10.0
    s), docker_socket (/var/run/docker.sock; null for none: the Docker engine's
    API, read without the docker CLI), start_timeout (60 s for every host's
    first sample), native_ports (none: TCP ports whose listener's process tree
    is measured, e.g. [22] or the native target's port). Samples go to
    JSON-lines files in a temporary directory, context["vmct_host_monitor"] =
    {interval, native_ports, hosts: [{name, address ("local" or the spec's
    host), path}]}. Cleanup closes the samplers' stdin (they, and a remote
    agent, exit when it closes or when the Rally process is gone), stops any
    left and removes the directory.
    """

    CONFIG_SCHEMA = {
        "type": "object",
        "$schema": consts.JSON_SCHEMA,
        "properties": {
            "hosts": {"type": "array", "minItems": 1,
                      "items": HOST_SCHEMA},
            "interval": {"type": "number", "minimum": 0.1, "maximum": 60},
            "disk_interval": {"type": "number", "minimum": 0},
            "docker_socket": {"type": ["string", "null"], "minLength": 1},
            "start_timeout": {"type": "number", "minimum": 1},
            NATIVE_PORTS: {"type": "array", "minItems": 1, "uniqueItems": True,
                           "items": {"type": "integer", "minimum": 1, "maximum": 65535}},
        },
        "additionalProperties": False,
    }
    DEFAULT_CONFIG = {"hosts": [LOCAL], "interval": 1.0, "disk_interval": 10.0,
                      "docker_socket": sampler.DEFAULT_SOCKET, "start_timeout": 60.0,
                      NATIVE_PORTS: []}
    # Seconds (plus two intervals) a sampler has to exit once its stdin is closed.
    stop_grace = 5.0

    def setup(self):
        self._dir = tempfile.mkdtemp(prefix="vmct-hostmon-")
        self._agents = []
        try:
            for index, spec in enumerate(self.config["hosts"]):
                spec = spec if spec == LOCAL else dict(spec)
                self._agents.append(AgentProcess.start(spec, self.config, self._dir, index))
            for agent in self._agents:
                agent.wait_started(self.config["start_timeout"])
        except Exception:
            self._stop()
            raise
        self.context[KEY] = {"interval": self.config["interval"],
                             NATIVE_PORTS: list(self.config[NATIVE_PORTS]),
                             "hosts": [{"name": s.name, "address": s.address, "path": s.path}
                                       for s in self._agents]}
        LOG.info("%s: sampling %s every %s s into %s" % (
            KEY, ", ".join(s.name for s in self._agents), self.config["interval"], self._dir))

    def _stop(self):
        grace = self.stop_grace + 2 * self.config["interval"]
        while getattr(self, "_agents", None):
            self._agents.pop().stop(grace)
        if getattr(self, "_dir", None):
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def cleanup(self):
        self._stop()
        self.context.pop(KEY, None)
