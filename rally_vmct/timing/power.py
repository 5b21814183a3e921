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
"""Reboot, stop and start phases of a :class:`~rally_vmct.timing.session.ServerSession`.

A reboot is recorded as ``vmct.reboot_<type>`` with the children
``.left_active``, ``.active``, ``.reachable`` and ``.ssh_ready`` (in that
order); a soft reboot that the compute driver turned into a hard one is
renamed ``vmct.reboot_soft_fell_back_to_hard``, so it is never averaged with
real soft reboots. Start is ``vmct.start`` with ``.active``, ``.reachable`` and
``.ssh_ready``; stop is ``vmct.stop``. With probe ``"none"`` (instances the
harness cannot reach) there is no ``.reachable`` or ``.ssh_ready``: a reboot or
start ends when the server is ACTIVE again.
"""

from rally_vmct.timing import instance_actions
from rally_vmct.timing import waiter
from rally_vmct import opts

REBOOT_STATUSES = ("REBOOT", "HARD_REBOOT")


class RebootNotSeen(waiter.WaitError):
    """The instance answered after a reboot request but had not restarted."""


class RebootBegun:
    """Has the server begun the reboot, or even finished it between two polls?

    A predicate for :meth:`ServerWaiter.wait_for`: ``False`` (not yet),
    :attr:`LEFT` (a reboot status or task state was seen) or :attr:`DONE`
    (ACTIVE with no task, and Nova's instance action finished or the guest's
    boot id changed: the reboot was too fast to see).
    """

    LEFT, DONE = "left", "done"
    # Seconds between two SSH looks at the guest's boot id while ACTIVE.
    SSH_CHECK_GAP = 1.0

    def __init__(self, session, request_id, reboot_type, before):
        self.session = session
        self.request_id = request_id
        self.reboot_type = reboot_type
        self.before = before
        self.ssh_checked_at = None

    def __call__(self, state):
        if state.status == waiter.ERROR:
            return False            # the waiter raises with Nova's fault
        if state.status != waiter.ACTIVE or str(state.task_state or "").startswith("reboot"):
            return self.LEFT
        if not state.settled:
            return False
        # ACTIVE with no task: either done already (too fast to see) or not begun.
        if self._action_finished() or self._guest_restarted():
            return self.DONE
        return False

    def _action_finished(self):
        action = self.session.fetch_action(self.request_id)
        if action is None:
            return False
        bad = instance_actions.failed_events(action)
        if bad:
            raise waiter.ServerFault(
                "Nova reports that the %s reboot of server %s failed: event %s result %s"
                % (self.reboot_type, self.session.server.id, bad[0]["event"],
                   bad[0]["result"]))
        return instance_actions.finished(action)

    def _guest_restarted(self):
        if self.before is None:
            return False
        now = self.session.clock.monotonic()
        if self.ssh_checked_at is not None and now - self.ssh_checked_at < self.SSH_CHECK_GAP:
            return False
        self.ssh_checked_at = now
        try:
            after = self.session.incarnation()
        except Exception:
            after = None
        return after is not None and after != self.before


def reboot(session, reboot_type, threshold):
    """One reboot, as ``vmct.reboot_<type>`` with its children; returns its path.

    :param threshold: seconds from which a soft reboot counts as having fallen
        back to a hard one (the cloud's [libvirt] wait_soft_reboot_seconds)
    """
    name = "vmct.reboot_%s" % reboot_type
    before = session.incarnation()
    session.pacer.before_action()
    t_req = session.clock.monotonic()
    with session.timeline.phase(name, start=t_req) as parent:
        session.mark(name)
        request_id = session.request(
            session.nova().servers.reboot(session.server, reboot_type.upper()))
        begun = RebootBegun(session, request_id, reboot_type, before)
        active = _active_again(session, name, begun, t_req)
        parent.end(session.wait_ready(name, active.estimate))
    _check_restarted(session, reboot_type, before)
    action = session.fetch_action(request_id)
    path = instance_actions.reboot_path(
        reboot_type, threshold,
        event_seconds=instance_actions.event_duration(action) if action else None,
        active_seconds=active.estimate - t_req)
    if path == instance_actions.FALLBACK:
        parent.rename("vmct.reboot_" + path)
    session.record.paths[path] += 1
    session.add_row("reboot_" + path, parent.duration)
    return path


def _active_again(session, name, begun, t_req):
    """``<name>.left_active`` then ``<name>.active``; the ACTIVE observation."""
    timeout = opts.get("reboot_timeout")
    reboot_type = begun.reboot_type
    with session.timeline.phase(name + ".left_active", start=t_req) as left:
        seen = session.waiter.wait_for(
            begun, timeout,
            "server to leave ACTIVE after the %s reboot request (no %s status or reboot task "
            "state seen, and Nova's instance action did not finish)"
            % (reboot_type, "/".join(REBOOT_STATUSES)), started_at=t_req)
        if seen.verdict == RebootBegun.LEFT:
            left.end(seen.estimate)
        else:
            left.discard()
    was_left = seen.verdict == RebootBegun.LEFT
    back_from = seen.estimate if was_left else t_req
    with session.timeline.phase(name + ".active", start=back_from) as back:
        session.mark(name + ".active")
        active = seen
        if was_left:
            active = session.waiter.wait_for_status(
                waiter.ACTIVE, timeout,
                "server to become ACTIVE again after the %s reboot" % reboot_type,
                started_at=seen.estimate)
        back.end(active.estimate)
    return active


def _check_restarted(session, reboot_type, before):
    after = session.incarnation()
    if before is not None and after is not None and before == after:
        raise RebootNotSeen(
            "Server %s answered after the %s reboot request but did not restart (boot id "
            "and PID 1 start time unchanged: %s)" % (session.server.id, reboot_type, after))


def stop(session):
    """``vmct.stop``: stop request -> SHUTOFF."""
    session.pacer.before_action()
    with session.timeline.phase("vmct.stop") as phase:
        session.mark("vmct.stop")
        session.request(session.nova().servers.stop(session.server))
        off = session.waiter.wait_for_status(
            waiter.SHUTOFF, opts.get("reboot_timeout"), "server to become SHUTOFF (stop)",
            started_at=phase.start)
        phase.end(off.estimate)
    session.add_row("stop", phase.duration)


def start(session):
    """``vmct.start``: start request -> ACTIVE (``.active``) -> reachable (``.reachable``)."""
    session.pacer.before_action()
    with session.timeline.phase("vmct.start") as parent:
        session.mark("vmct.start")
        session.request(session.nova().servers.start(session.server))
        with session.timeline.phase("vmct.start.active", start=parent.start) as phase:
            active = session.waiter.wait_for_status(
                waiter.ACTIVE, opts.get("reboot_timeout"),
                "server to become ACTIVE (start)", started_at=parent.start)
            phase.end(active.estimate)
        parent.end(session.wait_ready("vmct.start", active.estimate))
    session.add_row("start", parent.duration)
