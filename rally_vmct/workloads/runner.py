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
"""Runs a workload plan in one instance or host through an ``execute`` callable.

No Rally import: ``execute(command, timeout) -> (exit code, stdout, stderr)`` is
``rally.utils.sshutils.SSH.execute`` (or anything alike), and ``timer(name)`` a
context manager factory such as ``atomic.ActionTimer`` bound to the scenario.
"""

import contextlib
import shlex

from rally_vmct.workloads import facts as facts_lib
from rally_vmct.workloads import netperf
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import sysbench


class ToolMissing(RuntimeError):
    """The instance lacks a tool the plan needs."""


class WorkloadResult(object):
    """Outcome of one workload: metrics, or the error and the raw output."""

    def __init__(self, workload):
        self.workload = workload
        self.metrics = {}
        self.error = None
        self.outputs = []

    @property
    def ok(self):
        return self.error is None

    def raw_output(self):
        return "\n".join("$ %s\n[exit %s]\n%s%s" % (line, rc, out, err)
                         for line, rc, out, err in self.outputs)


def _null_timer(name):
    return contextlib.nullcontext()


def collect_facts(execute, timeout=60):
    """Facts dict of the machine behind ``execute`` (kernel, CPU, tools, ...)."""
    rc, out, err = execute("sh -c %s" % shlex.quote(facts_lib.FACTS_SCRIPT),
                           timeout)
    if rc != 0:
        raise RuntimeError("collecting facts failed (exit %s): %s" % (rc, (err or out)[:400]))
    return facts_lib.parse_facts(out)


def check_tools(facts, plan, where, extra=()):
    """Raise :class:`ToolMissing` naming every tool ``plan`` needs that is absent."""
    missing = facts_lib.missing_tools(facts, list(plan_lib.needed_tools(plan)) + list(extra))
    if missing:
        raise ToolMissing(facts_lib.missing_tools_message(missing, where))


def start_netserver(execute, port=netperf.DEFAULT_CONTROL_PORT, timeout=30, listen=None):
    """Start netserver on control ``port`` behind ``execute`` unless it already listens.

    ``listen``: the address netserver binds (default: all of the host's).
    A second netserver on the same port exits at once ("Address already in use"):
    that is how an already running one shows, so the exit status is not an error.
    Returns ``(exit code, stdout, stderr)``.
    """
    return execute(netperf.shell_command(netperf.netserver_command(port, listen=listen)),
                   timeout)


def run_workload(execute, workload, dialect=None, timer=_null_timer, timeout=900,
                 **peer):
    """Run one workload's steps; clean-up steps run even after a failure."""
    result = WorkloadResult(workload)
    steps = plan_lib.steps(workload, dialect=dialect, **peer)
    with timer(workload.atomic_name):
        for step in steps:
            if result.error and not step.always:
                continue
            try:
                rc, out, err = execute(step.line, timeout)
            except Exception as e:  # SSH timeout or lost connection
                rc, out, err = None, "", "%s: %s" % (type(e).__name__, e)
            result.outputs.append((step.line, rc, out, err))
            if rc != 0:
                how = "failed" if rc is None else "exited %s" % rc
                result.error = result.error or "%s %s %s: %s" % (
                    workload.label, step.command, how, (err or out).strip()[-400:])
                continue
            if step.parsed and not result.error:
                try:
                    result.metrics = plan_lib.parse_output(workload, out, dialect)
                except ValueError as e:
                    result.error = "%s: %s" % (workload.label, e)
    return result


def run_plan(execute, plan, where, timer=_null_timer, timeout=900, **peer):
    """Facts, sysbench dialect and one :class:`WorkloadResult` per workload.

    :param where: how errors name the machine, e.g. ``instance vmct-1 (kvm)``
    :param peer: netperf_host, control_port, data_port for netperf workloads
    """
    facts = collect_facts(execute)
    check_tools(facts, plan, where)
    dialect = None
    if "sysbench" in plan_lib.needed_tools(plan):
        dialect = sysbench.detect_dialect(facts["sysbench"])
    results = [run_workload(execute, workload, dialect, timer, timeout, **peer)
               for workload in plan]
    return facts, dialect, results
