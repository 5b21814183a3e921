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
"""Conformance: server actions a compute driver does or refuses, checked explicitly.

``VMCT.boot_and_check_actions`` boots one server of a kind and requests each
action of ``checks`` in turn. An action ends in one of two outcomes:

``done``
    it took effect (rescue -> RESCUE, suspend -> SUSPENDED, pause -> PAUSED, a
    new interface listed, a console URL returned) and was undone (unrescue,
    resume, unpause, detach);
``refused``
    Nova's API answered with an error, or the compute refused it and Nova put
    the instance back as it was (task state cleared, status ACTIVE).

Whatever the outcome, the server must then be ACTIVE with no task state and
power state RUNNING: an action a driver cannot do must never break an
instance, and a client must get an answer instead of waiting for a state that
never comes. A check fails when that does not hold, when the outcome is not the
one expected (``expect``: ``done``, ``refused`` or ``either``), or when the
server does not settle within ``[vmct] reboot_timeout``. A failed check does
not stop the next ones unless the server is no longer ACTIVE; the iteration
fails at the end, naming every failed check.

Output: the complete Table ``"<kind>: action checks"`` (one row per check:
action, expected, outcome, ok, detail, state after, seconds), plus the state
transitions and instance actions tables of every VMCT scenario. Atomic actions:
``vmct.build``, ``vmct.check_<action>`` (request -> settled -> undone), ``vmct.delete``.
"""

import typing as t

from rally.task import scenario
from rally.task import validation
from rally_openstack.common import consts
import typing_extensions as te

from rally_vmct.timing import instance_actions
from rally_vmct.timing import waiter
from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.task.scenarios import instance

Action = t.Literal["rescue", "suspend", "pause", "attach_interface", "console_url"]
Expect = t.Literal["done", "refused", "either"]
DONE, REFUSED = "done", "refused"
RUNNING = 1
CHECKS_TITLE = "action checks"
CHECKS_COLUMNS = ["action", "expected", "outcome", "ok", "detail", "state after", "seconds"]

# action -> (status it reaches, novaclient method that requests it, method that undoes it)
STATE_ACTIONS = {
    "rescue": ("RESCUE", "rescue", "unrescue"),
    "suspend": ("SUSPENDED", "suspend", "resume"),
    "pause": ("PAUSED", "pause", "unpause"),
}


class Check(te.TypedDict, closed=True):
    """One action and the outcome the cloud is expected to give."""

    action: Action
    expect: te.NotRequired[Expect]
    console_type: te.NotRequired[t.Literal["novnc", "xvpvnc", "spice-html5", "rdp-html5",
                                           "serial", "webmks"]]


class CheckFailed(waiter.WaitError):
    """One or more checks did not hold."""


def api_error(exc):
    """``"HTTP <code>: <message>"`` for an API error answer, None for anything else."""
    code = waiter.http_code(exc)
    if code is None or code < 400:
        return None
    message = getattr(exc, "message", None) or str(exc)
    return "HTTP %s: %s" % (code, str(message).strip()[:300])


def verdict(expect, outcome):
    """Does the outcome meet the expectation?"""
    return outcome in (DONE, REFUSED) and expect in ("either", outcome)


class ActionChecks:
    """Requests each check's action on a session's server and records the outcome."""

    def __init__(self, session):
        self.session = session
        self.rows = []

    def run(self, checks):
        """Every check in order, until the server is no longer ACTIVE; the failed actions."""
        failed = []
        for check in checks:
            if not self.check(check):
                failed.append(check["action"])
            if self.session.waiter.state.status != waiter.ACTIVE:
                break
        return failed

    def check(self, check):
        """Request one action, record its row; True when the check holds."""
        action = check["action"]
        expect = check.get("expect", "either")
        session = self.session
        session.pacer.before_action()
        with session.timeline.phase("vmct.check_" + action) as phase:
            session.mark("vmct.check_" + action)
            outcome, detail, problem, after = self._request(action, check)
            phase.end(session.clock.monotonic())
        if problem is None and not self._usable(after):
            problem = "the server is %s after %s" % (after.describe(), action)
        if problem is None and not verdict(expect, outcome):
            problem = "expected %s, got %s" % (expect, outcome)
        ok = problem is None
        if not ok and problem != detail:
            detail = "%s; %s" % (problem, detail)
        self.rows.append([action, expect, outcome, "yes" if ok else "no", detail,
                          after.describe(), round(phase.duration, 3)])
        return ok

    def _request(self, action, check):
        """``(outcome, detail, problem or None, state after)`` of one action."""
        try:
            if action in STATE_ACTIONS:
                outcome, detail = self._state_action(action)
            elif action == "attach_interface":
                outcome, detail = self._attach_interface()
            else:
                outcome, detail = self._console_url(check.get("console_type", "novnc"))
            after = self._settle("server %s to settle" % self.session.server.id)
            return outcome, detail, None, after
        except Exception as e:
            problem = str(e) if isinstance(e, waiter.WaitError) else "%s: %s" % (
                type(e).__name__, e)
            after = self.session.waiter.poll(self.session.clock.monotonic() + 60)[0]
            return "error", problem, problem, after

    @staticmethod
    def _usable(state):
        return (state.status == waiter.ACTIVE and state.settled
                and state.power_state in (None, RUNNING))

    def _settle(self, what):
        """Wait until the server has no task state (or is in ERROR); its state then."""
        return self.session.waiter.wait_for(
            lambda s: s.settled or s.status == waiter.ERROR, opts.get("reboot_timeout"),
            what, error_ok=True).state

    def _servers(self):
        return self.session.nova().servers

    def _state_action(self, action):
        target, request, undo = STATE_ACTIONS[action]
        server = self.session.server
        try:
            response = getattr(self._servers(), request)(server)
        except Exception as e:
            refused = api_error(e)
            if refused is None:
                raise
            return REFUSED, "the API refused %s: %s" % (action, refused)
        request_id = self.session.request(response)
        state = self._settle("server %s to settle after %s" % (server.id, action))
        if state.status == waiter.ERROR:
            raise waiter.ServerFault("%s put server %s in ERROR: %s"
                                     % (action, server.id, waiter.fault_text(state.fault)))
        if state.status == target:
            self.session.request(getattr(self._servers(), undo)(server))
            self.session.waiter.wait_for_status(
                waiter.ACTIVE, opts.get("reboot_timeout"),
                "server %s to become ACTIVE (%s)" % (server.id, undo))
            return DONE, "%s, then %s: ACTIVE" % (target, undo)
        if state.status == waiter.ACTIVE:
            return REFUSED, "the compute refused %s, the server stayed ACTIVE (%s)" % (
                action, self._action_result(request_id))
        raise waiter.WaitError("%s left server %s %s" % (action, server.id, state.describe()))

    def _action_result(self, request_id):
        action = self.session.fetch_action(request_id)
        if action is None:
            return "no instance action recorded"
        bad = instance_actions.failed_events(action)
        if bad:
            return "event %s: %s" % (bad[0]["event"], bad[0]["result"])
        return "instance action %s: %s" % (action["action"], action["message"] or "no error")

    def _port_ids(self):
        return {i.port_id for i in self._servers().interface_list(self.session.server)}

    def _attach_interface(self):
        server = self.session.server
        before = self._servers().interface_list(server)
        if not before:
            raise waiter.WaitError("server %s has no interface to take the network from"
                                   % server.id)
        net_id = before[0].net_id
        try:
            attached = self._servers().interface_attach(server, None, net_id, None)
        except Exception as e:
            refused = api_error(e)
            if refused is None:
                raise
            return REFUSED, "the API refused to attach a port on network %s: %s" % (
                net_id, refused)
        port_id = attached.port_id
        self._settle("server %s to settle after attaching port %s" % (server.id, port_id))
        if port_id not in self._port_ids():
            raise waiter.WaitError("port %s was attached but server %s does not list it"
                                   % (port_id, server.id))
        self._servers().interface_detach(server, port_id)
        self._wait_detached(port_id)
        return DONE, "port %s attached on network %s, listed, detached" % (port_id, net_id)

    def _wait_detached(self, port_id):
        clock, timeout = self.session.clock, opts.get("reboot_timeout")
        deadline = clock.monotonic() + timeout
        while port_id in self._port_ids():
            if clock.monotonic() >= deadline:
                raise waiter.WaitTimeout("port %s still attached to server %s %.0f s after "
                                         "the detach request"
                                         % (port_id, self.session.server.id, timeout))
            clock.sleep(max(self.session.poll_interval, 1.0))

    def _console_url(self, console_type):
        try:
            console = self._servers().get_console_url(self.session.server, console_type)
        except Exception as e:
            refused = api_error(e)
            if refused is None:
                raise
            return REFUSED, "the API refused a %s console: %s" % (console_type, refused)
        console = console or {}
        url = (console.get("remote_console") or console.get("console") or {}).get("url")
        return DONE, "%s console at %s" % (console_type, url)

    def table(self):
        return {"title": "%s: %s" % (self.session.label, CHECKS_TITLE),
                "description": "Each requested action: what was expected (done, refused or "
                               "either), what happened, and the server's state afterwards "
                               "(must be ACTIVE, no task, running).",
                "chart_plugin": "Table",
                "data": {"cols": CHECKS_COLUMNS, "rows": self.rows}}


@validation.add("vmct_non_empty_list", param_name="checks")
@validation.add("vmct_access")
@validation.add("vmct_kind_resources")
@validation.add("required_services", services=[consts.Service.NOVA])
@validation.add("required_platform", platform="openstack", users=True)
@validation.add("vmct_kind")
@scenario.configure(name="VMCT.boot_and_check_actions", platform="openstack",
                    context={"cleanup@openstack": ["nova", "neutron"]})
class BootAndCheckActions(instance.InstanceScenario):

    def run(self, kind: kinds.KindArg,
            checks: t.Annotated[list[Check], scenario.Field(min_length=1)],
            boot_args: dict[str, t.Any] | None = None):
        """Boot a server of a kind, request each action, check the outcome and the server.

        :param kind: instance kind (see VMCT.boot_and_delete_server)
        :param checks: [{action: rescue|suspend|pause|attach_interface|console_url,
            expect: done|refused|either (default either),
            console_type: novnc (console_url only)}], requested in this order
            on the same server
        :param boot_args: extra arguments for Nova's server create; without
            nics the network context's network is used
        """
        session = self._open_session(kind)
        try:
            self._boot(session, boot_args)
            self._check_all(session, checks)
            session.fetch_actions()
            session.delete()
        finally:
            self._finish(session)

    def _check_all(self, session, checks):
        """Every check; its table is output whatever happens; raises if any failed."""
        checker = ActionChecks(session)
        try:
            failed = checker.run(checks)
        finally:
            self.add_output(complete=checker.table())
        if failed:
            raise CheckFailed("%s: check(s) failed: %s (see the table '%s: %s')"
                              % (session.label, ", ".join(failed), session.label,
                                 CHECKS_TITLE))
