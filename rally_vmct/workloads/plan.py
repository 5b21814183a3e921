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
"""Workload plans: the benchmarks a task asks for, validated and turned into commands.

A plan is the task argument ``workloads``, a list such as::

    - {sysbench: cpu, max_prime: 20000}
    - {sysbench: memory, block_size: 1K, oper: write}
    - {sysbench: fileio, test_mode: rndrd, block_size: 4K, extra_flags: direct}
    - {netperf: TCP_RR, duration: 10}

Each entry names one tool and its test; the other keys are that test's parameters
(``sysbench.accepted_parameters(test)``, or those of ``netperf.build_command``).
A few sysbench option spellings are accepted too (``cpu_max_prime``, ``mode``, ...).
"""

import collections
import shlex

from rally_vmct.workloads import netperf
from rally_vmct.workloads import storage
from rally_vmct.workloads import sysbench

TOOLS = ("sysbench", "netperf")

# sysbench's own option names (without the test prefix) -> our parameter names.
SYSBENCH_ALIASES = {"cpu_max_prime": "max_prime", "mode": "test_mode",
                    "file_test_mode": "test_mode", "file_total_size": "total_size",
                    "file_num": "num", "file_block_size": "block_size",
                    "file_extra_flags": "extra_flags", "memory_block_size": "block_size",
                    "memory_total_size": "total_size", "memory_oper": "oper",
                    "memory_scope": "scope", "memory_access_mode": "access_mode",
                    "num_threads": "threads", "max_time": "time", "max_requests": "events"}
NETPERF_PARAMETERS = ("duration", "request_size", "response_size", "message_size")

# The KEK study's workloads (HEPiX 2015), sized for small instances.
KEK_WORKLOADS = (
    {"sysbench": "cpu", "max_prime": 20000},
    {"sysbench": "memory", "block_size": "1K", "oper": "read", "total_size": "10G"},
    {"sysbench": "memory", "block_size": "1K", "oper": "write", "total_size": "10G"},
    {"sysbench": "fileio", "test_mode": "seqrd", "block_size": "4K",
     "extra_flags": "direct", "total_size": "256M"},
    {"sysbench": "fileio", "test_mode": "rndrd", "block_size": "4K",
     "extra_flags": "direct", "total_size": "256M"},
    {"sysbench": "fileio", "test_mode": "seqwr", "block_size": "4K",
     "extra_flags": "direct", "total_size": "256M"},
    {"sysbench": "fileio", "test_mode": "rndwr", "block_size": "4K",
     "extra_flags": "direct", "total_size": "256M"},
    {"netperf": "TCP_STREAM", "duration": 10},
    {"netperf": "TCP_RR", "duration": 10},
)


def default_workloads(with_network=True):
    """The KEK workloads, without netperf when there is no peer to measure against."""
    return [dict(item) for item in KEK_WORKLOADS
            if with_network or "netperf" not in item]


Step = collections.namedtuple("Step", ["command", "line", "parsed", "always"])
Step.__doc__ = """One shell command of a workload.

``command`` is sysbench's prepare/run/cleanup (``run`` for netperf), ``line`` the
quoted shell line, ``parsed`` whether its output carries the metrics, ``always``
whether it runs even after an earlier step failed (clean-up).
"""


class PlanError(ValueError):
    """A ``workloads`` entry is wrong; the message names the entry and the fix."""


class Workload(object):
    """One validated entry of a plan."""

    def __init__(self, tool, test, params):
        self.tool = tool
        self.test = test
        self.params = params

    @property
    def fileio(self):
        return self.tool == "sysbench" and self.test == "fileio"

    @property
    def direct(self):
        """Whether this is a sysbench fileio workload with O_DIRECT (extra_flags direct)."""
        return self.fileio and storage.is_direct(self.params)

    @property
    def label(self):
        """Human name, also the chart group: ``sysbench fileio rndrd direct``.

        O_DIRECT is part of the name, so direct and buffered results never share a
        chart or a comparison cell.
        """
        words = [self.tool, self.test]
        if self.fileio:
            words.append(self.params["test_mode"])
            if self.direct:
                words.append("direct")
        if self.tool == "sysbench" and self.test == "memory" and "oper" in self.params:
            words.append(self.params["oper"])
        return " ".join(words)

    @property
    def atomic_name(self):
        """Atomic action name: ``vmct.sysbench_fileio_rndrd_direct``."""
        return "vmct." + self.label.replace(" ", "_").lower()

    def __repr__(self):
        return "Workload(%s, %r)" % (self.label, self.params)


def _sysbench(index, test, params):
    if test not in sysbench.TESTS:
        raise PlanError("workloads[%d]: sysbench test %r is unknown; use one of: %s"
                        % (index, test, ", ".join(sysbench.TESTS)))
    params = {SYSBENCH_ALIASES.get(key, key): value for key, value in params.items()}
    try:
        # Dialect 1.0 accepts every parameter; the instance's own dialect is
        # only known at run time and is checked again then.
        sysbench.build(test, "1.0", **params)
    except sysbench.SysbenchError as e:
        raise PlanError("workloads[%d] (sysbench %s): %s" % (index, test, e))
    return Workload("sysbench", test, params)


def _netperf(index, test, params):
    unknown = sorted(set(params) - set(NETPERF_PARAMETERS))
    if unknown:
        raise PlanError("workloads[%d] (netperf %s): unknown parameter(s) %s; accepted: %s"
                        % (index, test, ", ".join(unknown), ", ".join(NETPERF_PARAMETERS)))
    params = dict(params)
    params.setdefault("duration", 10)
    try:
        netperf.build_command(test, "peer", **params)
    except ValueError as e:
        raise PlanError("workloads[%d]: %s" % (index, e))
    return Workload("netperf", test, params)


def parse_plan(items):
    """Validated :class:`Workload` list from the ``workloads`` task argument."""
    if not isinstance(items, (list, tuple)) or not items:
        raise PlanError("workloads must be a non-empty list such as "
                        "[{sysbench: cpu, max_prime: 20000}, {netperf: TCP_RR}]")
    plan = []
    for index, item in enumerate(items):
        tools = [tool for tool in TOOLS if tool in (item or {})] if isinstance(
            item, dict) else []
        if len(tools) != 1:
            raise PlanError("workloads[%d] must name exactly one tool (%s) with its test, "
                            "e.g. {sysbench: cpu} or {netperf: TCP_RR}; got %r"
                            % (index, " or ".join(TOOLS), item))
        tool = tools[0]
        params = {key: value for key, value in item.items() if key != tool}
        build = _sysbench if tool == "sysbench" else _netperf
        plan.append(build(index, item[tool], params))
    return plan


def needed_tools(plan):
    """Tools the instance must have for ``plan``, in a stable order."""
    return [tool for tool in TOOLS if any(w.tool == tool for w in plan)]


def primary_metric(workload, dialect=None):
    """The metric whose CV decides how often ``workload`` repeats (see repeat.py).

    sysbench: what its mode is judged by (sysbench.primary_metric): events_per_second
    for a fixed-time run (1.0 by default), total_time for a fixed-work one (0.4/0.5 by
    default). netperf: transaction_rate for the RR tests, throughput for TCP_STREAM.
    """
    if workload.tool == "netperf":
        return "transaction_rate" if netperf.is_rr(workload.test) else "throughput"
    mode = sysbench.run_mode(workload.test, dialect or "1.0", workload.params.get("time"),
                             workload.params.get("events"))
    return sysbench.primary_metric(mode)


def steps(workload, dialect=None, netperf_host=None, control_port=None,
          data_port=None, workdir=storage.DEFAULT_FILEIO_DIR, remove_workdir=True):
    """The :class:`Step` list that runs ``workload`` in an instance.

    :param dialect: the instance's sysbench dialect (sysbench workloads)
    :param netperf_host: netserver address (netperf workloads)
    :param workdir: where sysbench fileio writes its files (made if missing)
    :param remove_workdir: remove ``workdir`` after the clean-up (when it was made here)
    """
    if workload.tool == "netperf":
        if not netperf_host:
            raise PlanError("%s needs a netperf peer: set netperf_host or let the task "
                            "start netserver on a peer" % workload.label)
        argv = netperf.build_command(workload.test, netperf_host,
                                     control_port=control_port, data_port=data_port,
                                     **workload.params)
        return [Step("run", netperf.shell_command(argv), True, False)]
    if workload.test != "fileio":
        argv = sysbench.build(workload.test, dialect, **workload.params)
        return [Step("run", sysbench.render(argv), True, False)]
    made = "mkdir -p %s && " % shlex.quote(workdir)
    prepare = sysbench.render(sysbench.build("fileio", dialect, "prepare", **workload.params),
                              cwd=workdir)
    run = sysbench.render(sysbench.build("fileio", dialect, "run", **workload.params),
                          cwd=workdir)
    cleanup = sysbench.render(sysbench.build("fileio", dialect, "cleanup", **workload.params),
                              cwd=workdir)
    if remove_workdir:
        cleanup += " && rmdir %s" % shlex.quote(workdir)
    return [Step("prepare", made + prepare, False, False),
            Step("run", run, True, False),
            Step("cleanup", cleanup, False, True)]


def parse_output(workload, output, dialect=None):
    """``{name: Metric}`` of a workload's ``run`` step output."""
    if workload.tool == "netperf":
        return netperf.parse(workload.test, output)
    return sysbench.parse(workload.test, dialect, output)
