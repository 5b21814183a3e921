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
"""What a server session's record shows in Rally's report.

* :func:`transitions_table`: every observed change of the server's status,
  task state, VM state and power state, and the probe attempts, by phase;
* :func:`actions_table`: Nova's own instance actions of the session's requests;
* :func:`console_text`: the guest's console when a probe gave up on it;
* :func:`lifecycle_chart`: the additive "<kind>: lifecycle [s]" chart.
"""

from rally_vmct.timing import instance_actions
from rally_vmct.timing import waiter
from rally_vmct.task import output


def transitions_table(session):
    record = session.record
    marks = list(record.marks)
    rows = []
    phase = ""
    transitions = session.waiter.transitions if session.waiter else []
    for index, tr in enumerate(transitions):
        while marks and marks[0][0] <= index:
            phase = marks.pop(0)[1]
        rows.append([phase, tr.field, str(tr.old), str(tr.new), tr.at, tr.since])
    rows.extend(list(row) for row in record.probe_rows)
    rows.sort(key=lambda row: row[4])
    for row in rows:
        row[4] = round(row[4] - record.t0, 3)
        row[5] = round(row[5] - record.t0, 3)
    polled = "polled every %.2g s" % session.pacer.min_gap
    cost = record.polling
    if cost is not None:
        polled += ", %.2g requests/s for this server" % cost.rate
    return {"title": "%s: server state transitions (%s)" % (session.label, polled),
            "description": "Each change of the server's status, task state, VM state "
                           "and power state, seen by the poll answered 'seen' seconds "
                           "after the create request; it happened after 'not before' "
                           "(the previous poll, or the phase's request). 'probe' rows: "
                           "when the instance answered, and the failed attempts before."
                           + polling_text(cost),
            "chart_plugin": "Table",
            "data": {"cols": ["phase", "field", "from", "to", "seen [s]",
                              "not before [s]"], "rows": rows}}


def polling_text(cost):
    """What the polls of the server cost Nova, for the transitions table."""
    if cost is None:
        return ""
    how = {waiter.PER_SERVER: "a GET of this server per poll",
           waiter.BATCHED: "one list of the servers changed since the previous poll for "
                           "every server waited for, its requests divided among them"}
    return (" Polling (%s, %s): %.3g Nova API requests for this server over %.1f s of "
            "polling." % (cost.mode, how[cost.mode], cost.requests, cost.seconds))


def actions_table(session):
    return {"title": "%s: instance actions (os-instance-actions)" % session.label,
            "description": "Nova's own record of each request of this iteration, with "
                           "compute events timed by the cloud's clock (UTC).",
            "chart_plugin": "Table",
            "data": {"cols": instance_actions.TABLE_COLUMNS,
                     "rows": instance_actions.table_rows(list(session.record.actions.values()))}}


def console_text(session):
    """The console's last lines, kept when the instance never answered a probe."""
    phase, lines = session.record.console
    return {"title": "%s: console when %s gave up" % (session.label, phase),
            "description": "The last lines of the instance's console log (Nova's "
                           "os-getConsoleOutput), read when the probe's wait timed out: "
                           "why the guest never answered, when it said so.",
            "chart_plugin": "TextArea",
            "data": lines}


def tables(session):
    """A session's complete outputs: transitions, instance actions, console (if kept)."""
    found = []
    if session.waiter is not None:
        found.append(transitions_table(session))
    if session.record.actions:
        found.append(actions_table(session))
    if session.record.console is not None:
        found.append(console_text(session))
    return found


def lifecycle_chart(session, end):
    """"<kind>: lifecycle [s]": mean per phase name, then the total up to ``end``."""
    # Mean over this iteration's repetitions (reboots, cycles), in the order the
    # phases first happened.
    groups = {}
    for name, seconds in session.record.rows:
        groups.setdefault(name, []).append(seconds)
    rows = [(name, round(sum(v) / len(v), 6)) for name, v in groups.items()]
    rows.append(("total", round(end - session.record.t0, 6)))
    return output.stats_chart(session.label, "lifecycle", "s", rows,
                              description="Phases of this iteration, timed from the "
                                          "observed transitions.")
