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

import collections
import contextlib
import shlex

from rally_vmct.workloads import facts as facts_lib
from rally_vmct.workloads import guest_tools
from rally_vmct.workloads import netperf
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import repeat
from rally_vmct import stats
from rally_vmct.workloads import storage
from rally_vmct.workloads import sysbench
from rally_vmct.workloads.metrics import Metric


# The instance or host lacks a tool the plan needs (the message says how to get it).
ToolMissing = guest_tools.ToolMissing


class StorageUnusable(RuntimeError):
    """The fileio work directory cannot be made (the message names fileio_dir)."""


class WorkloadResult(object):
    """Outcome of one workload: every run's metrics and their means, or the error.

    ``runs``: one ``{name: Metric}`` per run of the parsed step, in order;
    ``metrics``: the mean of each metric over the runs (what the charts show);
    ``primary``: the metric whose CV decided the number of runs; ``stop_reason``.
    """

    def __init__(self, workload):
        self.workload = workload
        self.runs = []
        self.metrics = {}
        self.error = None
        self.outputs = []
        self.primary = None
        self.stop_reason = None

    @property
    def ok(self):
        return self.error is None

    def raw_output(self):
        return "\n".join("$ %s\n[exit %s]\n%s%s" % (line, rc, out, err)
                         for line, rc, out, err in self.outputs)

    def primary_values(self):
        return [run[self.primary].value for run in self.runs if self.primary in run]


def mean_metrics(runs):
    """``{name: Metric(mean over the runs that have it, unit)}`` in first-seen order."""
    values = collections.OrderedDict()
    for run in runs:
        for name, metric in run.items():
            values.setdefault(name, (metric.unit, []))[1].append(metric.value)
    return collections.OrderedDict((name, Metric(stats.mean(v), unit))
                                   for name, (unit, v) in values.items())


def _null_timer(name):
    return contextlib.nullcontext()


def collect_facts(execute, timeout=60):
    """Facts of the machine behind ``execute``: kernel, CPU, tools, virtualisation."""
    rc, out, err = execute("sh -c %s" % shlex.quote(facts_lib.FACTS_SCRIPT),
                           timeout)
    if rc != 0:
        raise RuntimeError("collecting facts failed (exit %s): %s" % (rc, (err or out)[:400]))
    facts = facts_lib.parse_facts(out)
    facts.update(facts_lib.classify_virtualization(facts))
    return facts


def fileio_facts(execute, plan, workdir, where, timeout=60):
    """``(facts, existed)``: where fileio's files live (made now), and if it existed.

    Facts: fileio_dir, fileio_fs, fileio_device, fileio_mount, fileio_direct.
    """
    rc, out, err = execute(storage.probe_command(workdir), timeout)
    if rc != 0:
        raise StorageUnusable(
            "cannot create the fileio work directory %s on %s (exit %s): %s; set the task "
            "argument fileio_dir to a writable directory on block storage"
            % (workdir, where, rc, (err or out).strip()[-300:]))
    facts, existed = storage.storage_facts(workdir, out)
    facts["fileio_direct"] = storage.direct_mode(w.params for w in plan if w.fileio)
    return facts, existed


def check_tools(facts, plan, where, extra=()):
    """Raise :class:`ToolMissing` naming every tool ``plan`` needs that is absent."""
    guest_tools.require(list(plan_lib.needed_tools(plan)) + list(extra), facts, where)


def start_netserver(execute, port=netperf.DEFAULT_CONTROL_PORT, timeout=30, listen=None):
    """Start netserver on control ``port`` behind ``execute`` unless it already listens.

    ``listen``: the address netserver binds (default: all of the host's).
    A second netserver on the same port exits at once ("Address already in use"):
    that is how an already running one shows, so the exit status is not an error.
    Returns ``(exit code, stdout, stderr)``.
    """
    return execute(netperf.shell_command(netperf.netserver_command(port, listen=listen)),
                   timeout)


def _clip(text, size=400):
    """``text``, its middle elided past ``size`` characters.

    A failed call (``rc`` None) says what failed first and why last ("SSHError: Connection
    to ... lost while running '<the command>': <cause>"): a long command must push neither out.
    """
    if len(text) <= size:
        return text
    half = (size - 5) // 2
    return text[:half] + " ... " + text[-half:]


def _error(workload, step, rc, out, err, workdir, fileio_fs):
    detail = (err or out).strip()
    # a tool's own error output ends with its cause
    detail = _clip(detail) if rc is None else detail[-400:]
    how = "failed" if rc is None else "exited %s" % rc
    text = "%s %s %s: %s" % (workload.label, step.command, how, detail)
    if workload.direct and storage.direct_refused(out + err):
        text += " -- " + storage.direct_refused_hint(workdir, fileio_fs)
    return text


def _execute(execute, step, timeout):
    try:
        return execute(step.line, timeout)
    except Exception as e:  # SSH timeout or lost connection
        return None, "", "%s: %s" % (type(e).__name__, e)


def _run_step(execute, step, result, timeout, dialect, place):
    """Run one step (once); a parsed step's metrics become one more run.

    ``place``: (fileio work directory, its file system), named in O_DIRECT errors.
    """
    rc, out, err = _execute(execute, step, timeout)
    result.outputs.append((step.line, rc, out, err))
    if rc != 0:
        result.error = result.error or _error(result.workload, step, rc, out, err, *place)
    elif step.parsed and not result.error:
        try:
            result.runs.append(plan_lib.parse_output(result.workload, out, dialect))
        except ValueError as e:
            result.error = "%s: %s" % (result.workload.label, e)


def run_workload(execute, workload, dialect=None, timer=_null_timer, timeout=900,
                 policy=None, fileio_fs=None, **step_args):
    """Run one workload's steps; clean-up steps run even after a failure.

    The parsed step (sysbench/netperf ``run``) repeats as ``policy`` (a
    :class:`repeat.RunPolicy`, default one run) asks; fileio prepares once.
    :param fileio_fs: file system of the work directory, named in O_DIRECT errors
    :param step_args: plan.steps arguments (netperf peer, workdir, remove_workdir)
    """
    policy = policy or repeat.RunPolicy()
    result = WorkloadResult(workload)
    result.primary = plan_lib.primary_metric(workload, dialect)
    steps = plan_lib.steps(workload, dialect=dialect, **step_args)
    place = (step_args.get("workdir", storage.DEFAULT_FILEIO_DIR), fileio_fs)
    with timer(workload.atomic_name):
        for step in steps:
            if result.error and not step.always:
                continue
            _run_step(execute, step, result, timeout, dialect, place)
            while step.parsed and not result.error and not policy.done(
                    result.primary_values()):
                _run_step(execute, step, result, timeout, dialect, place)
    result.metrics = mean_metrics(result.runs)
    if result.runs:
        result.stop_reason = policy.stop_reason(result.primary_values())
    return result


def run_plan(execute, plan, where, timer=_null_timer, timeout=900, policy=None,
             fileio_dir=storage.DEFAULT_FILEIO_DIR, **peer):
    """Facts, sysbench dialect and one :class:`WorkloadResult` per workload.

    :param where: how errors name the machine, e.g. ``instance vmct-1 (kvm)``
    :param policy: :class:`repeat.RunPolicy` (how often each workload runs)
    :param fileio_dir: sysbench fileio's work directory (made if missing, and
        removed afterwards only then)
    :param peer: netperf_host, control_port, data_port for netperf workloads
    """
    policy = policy or repeat.RunPolicy()
    facts = collect_facts(execute)
    check_tools(facts, plan, where)
    dialect = None
    if "sysbench" in plan_lib.needed_tools(plan):
        dialect = sysbench.detect_dialect(facts["sysbench"])
    step_args = dict(peer)
    facts.update(dict.fromkeys(storage.FACT_KEYS, storage.NO_FILEIO))
    if any(w.fileio for w in plan):
        storage_facts, existed = fileio_facts(execute, plan, fileio_dir, where)
        facts.update(storage_facts)
        step_args.update(workdir=fileio_dir, remove_workdir=not existed,
                         fileio_fs=storage_facts["fileio_fs"])
    facts["runs"] = policy.describe()
    results = [run_workload(execute, workload, dialect, timer, timeout, policy, **step_args)
               for workload in plan]
    facts["runs_done"] = ", ".join("%s: %d" % (r.workload.label, len(r.runs)) for r in results)
    return facts, dialect, results
