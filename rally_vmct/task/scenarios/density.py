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
"""Density: how many instances of a kind a cloud runs, and what each one costs as they pile up.

Each server is driven by its :class:`rally_vmct.timing.session.ServerSession`
(boot to ACTIVE, wait until reachable) as in :mod:`.lifecycle`; its phases nest
under the step's ``vmct.density.step_N`` atomic action, so they never mix with
the lifecycle scenarios' ``vmct.build`` figures in the comparison. What is
recorded and reported is :mod:`rally_vmct.hostcost.density`.
"""

import typing as t

from rally.common import logging
from rally.common import objects
from rally import consts
from rally.task import scenario

from rally_vmct.timing import timeline
from rally_vmct.hostcost import density
from rally_vmct.task import kinds
from rally_vmct.task import output
from rally_vmct.task.scenarios import instance
from rally_vmct.task.scenarios import lifecycle
from rally_vmct.task import validators

LOG = logging.getLogger(__name__)

# Seconds of samples before the first create that make the hosts' memory baseline.
BASELINE_SECONDS = 3.0
# `rally task abort` (soft or not) asked for
ABORT_STATUSES = (consts.TaskStatus.ABORTING, consts.TaskStatus.SOFT_ABORTING,
                  consts.TaskStatus.ABORTED)


@validators.instance_scenario
@scenario.configure(name="VMCT.density", platform="openstack",
                    context={"cleanup@openstack": ["nova", "neutron"]})
class Density(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg, max_servers: lifecycle.Count = 10,
            step: lifecycle.Count = 1,
            settle_seconds: t.Annotated[float, scenario.Field(ge=0)] = 3.0,
            probe: lifecycle.Probe = "tcp", wait_for_ssh: bool = False,
            proxy_command: str | None = None, boot_args: dict[str, t.Any] | None = None):
        """Boot servers of a kind until max_servers run or one fails; time each, cost per step.

        Servers boot one after another, each timed from its create request to
        reachable (to ACTIVE with probe "none") while the earlier ones keep
        running; after every `step` servers and `settle_seconds`, the
        vmct_host_monitor context's samples (when the workload has it) give the
        hosts' memory and each instance's. The first failure (an ERROR server,
        a timeout, a quota or capacity refusal) ends the filling and is reported
        as the limit; only a failure of the very first server fails the
        iteration. Every server is deleted at the end, also after a failure.

        Atomic actions: vmct.density.step_N (the step's first create request ->
        its last server reachable; the servers' vmct.build and
        vmct.wait_for_network nested) and vmct.density.delete_all. Output:
        additive "<kind>: density [instances]" (instances_reached); Lines
        "<kind>: density: provision time vs instances already running [s]" and,
        with the monitor, "... memory per instance vs instances [MiB]" (PSS,
        container memory cgroup, host memory increase per instance); Tables
        "<kind>: density" (a row per server) and "<kind>: density limit"
        (reached, target, target reached, first failure or task aborted, and
        why). `rally task abort` stops the filling before the next boot.

        :param kind: instance kind (see VMCT.boot_and_delete_server)
        :param max_servers: the target count of servers running at once (>= 1);
            the project's quotas must allow it (the sample's quotas context)
        :param step: servers booted between two memory readings (>= 1)
        :param settle_seconds: after each step, seconds of samples the memory
            figures are the mean of (with the vmct_host_monitor context; 0
            for none: the memory columns are then not measured)
        :param probe: what "reachable" means: "tcp", "ping", "ssh" or "none"
            (not reachable, e.g. Nova's fake driver: boot ends at ACTIVE)
        :param wait_for_ssh: also wait until an SSH command succeeds; needs the
            keypair context or kind.ssh_key_file
        :param proxy_command: how to reach instances, as in
            VMCT.boot_and_delete_server
        :param boot_args: extra arguments for Nova's server create, as in
            VMCT.boot_and_delete_server
        """
        access = (probe, wait_for_ssh, proxy_command)
        fill = density.Fill(max_servers)
        monitor = density.Monitor.of(self.context) if settle_seconds else None
        sessions = []
        try:
            self._fill(fill, kind, access, boot_args, step, settle_seconds, monitor, sessions)
        finally:
            self._delete_all(sessions)
        self._report(kinds.label(kind), fill, monitor is not None)

    def _fill(self, fill, kind, access, boot_args, step, settle, monitor, sessions):
        """Boot step after step until the target or the first failure (recorded in ``fill``)."""
        steps = timeline.Timeline(self._atomic_actions, self.clock)
        baseline = self._baseline(monitor) if monitor else None
        for number, size in enumerate(density.steps(fill.max_servers, step), 1):
            try:
                with steps.phase(density.STEP_ACTION % number):
                    for _ in range(size):
                        if self._task_aborting():
                            fill.abort()
                            return
                        self._boot_one(fill, number, kind, access, boot_args, sessions)
            except Exception as e:
                if not fill.reached:
                    raise       # not even one: the workload is wrong, not the cloud full
                fill.failed(e)
                return
            if monitor:
                self._measure(fill, steps, settle, monitor, baseline, sessions)

    def _task_aborting(self):
        """Whether `rally task abort` was asked for since the iteration started.

        Rally's runner only stops starting iterations, and one density iteration
        may boot servers for an hour: it asks the task's status before each boot.
        """
        task = self.context.get("task")
        if not task:
            return False
        try:
            status = objects.Task.get_status(task["uuid"])
        except Exception as e:      # no database to ask: keep filling
            LOG.debug("VMCT.density: task status unknown: %s" % e)
            return False
        return status in ABORT_STATUSES

    def _baseline(self, monitor):
        """The hosts' memory before the first create (``Baseline``); None when unreadable."""
        now = self.clock.wall()
        try:
            return monitor.baseline(now - BASELINE_SECONDS, now)
        except Exception as e:
            LOG.warning("VMCT.density: no host memory baseline: %s: %s"
                        % (type(e).__name__, e))
            return None

    def _boot_one(self, fill, number, kind, access, boot_args, sessions):
        session = self._open_session(kind, *access)
        sessions.append(session)
        ready = session.wait_for_network(self._boot(session, boot_args))
        fill.rows.append(density.ServerRow(
            instances=fill.reached + 1, step=number, boot_s=ready - session.record.t0,
            build_s=session.row_total("build")))

    def _measure(self, fill, steps, settle, monitor, baseline, sessions):
        start = steps.wall(steps.now())
        self.clock.sleep(settle)
        ids = [session.server.id for session in sessions]
        try:
            fill.costs[fill.reached] = monitor.cost(ids, (start, start + settle), baseline)
        except Exception as e:
            # as the other scenarios' host charts: unreadable samples never fail the iteration
            LOG.warning("VMCT.density: no host memory after %d servers: %s: %s"
                        % (fill.reached, type(e).__name__, e))

    def _delete_all(self, sessions):
        """Delete every server booted (each waited for until gone); never raises for one."""
        if not sessions:
            return
        with timeline.Timeline(self._atomic_actions, self.clock).phase(
                density.DELETE_ACTION):
            for session in sessions:
                session.finish()

    def _report(self, label, fill, monitored):
        self.add_output(additive=output.stats_chart(
            label, density.GROUP, density.UNIT,
            [(density.REACHED, fill.reached)],
            description="Servers of the kind running at once when the scenario stopped "
                        "(target %d)." % fill.max_servers))
        for chart in density.curves(label, fill):
            self.add_output(complete=chart)
        self.add_output(complete=density.table(label, fill, monitored))
        self.add_output(complete=density.limit_table(label, fill))
