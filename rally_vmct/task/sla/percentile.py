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
"""``vmct_percentile``: a percentile of an atomic action under a limit, with its interval.

Rally's own SLAs bound the maximum, the average and the outliers of an iteration;
a latency target is usually a percentile ("p95 of vmct.build within 30 s", as
kube-burner's thresholds). In a task::

    sla:
      vmct_percentile: {action: vmct.build, percentile: 95, max_seconds: 30}

The percentile of the action's durations (every occurrence, nested ones too, in
every iteration; linear interpolation between ranks, as Rally's report computes it)
must not exceed ``max_seconds``. An occurrence that failed (a time-out, an error) or
never finished took at least as long as it ran and never ended: it counts as longer
than any limit, so a kind cannot meet a latency target by failing its slow boots.
The details give the distribution-free interval of that percentile at
``confidence`` (default 0.95: the order statistics whose ranks bound it,
:func:`rally_vmct.stats.quantile_interval`), and say whether the limit lies above
the interval (met for sure at that confidence), inside it, or below it. With ``require_upper_bound:
true`` the SLA passes only when the interval's upper bound is within the limit,
which needs enough iterations for such a bound (72 for p95 at 95 %: the details say
how many). An action that never ran fails the SLA, naming it.
"""

from rally.task import sla

from rally_vmct import stats

NAME = "vmct_percentile"


# a failed or unfinished occurrence: longer than any limit
FAILED = float("inf")


def _durations(actions, name, out):
    for action in actions or ():
        if action.get("name") == name:
            started, finished = action.get("started_at"), action.get("finished_at")
            if action.get("failed") or started is None or finished is None:
                out.append(FAILED)
            else:
                out.append(finished - started)
        _durations(action.get("children"), name, out)
    return out


@sla.configure(name=NAME)
class PercentileOfAtomicAction(sla.SLA):
    """A percentile of an atomic action's durations within a limit, with its interval."""

    CONFIG_SCHEMA = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "minLength": 1,
                       "description": "Name of the atomic action, e.g. vmct.build."},
            "percentile": {"type": "number", "exclusiveMinimum": 0,
                           "exclusiveMaximum": 100,
                           "description": "Percentile in (0, 100), e.g. 95."},
            "max_seconds": {"type": "number", "exclusiveMinimum": 0,
                            "description": "Limit of the percentile in seconds."},
            "confidence": {"type": "number", "exclusiveMinimum": 0,
                           "exclusiveMaximum": 1,
                           "description": "Level of the percentile's interval "
                                          "(default 0.95)."},
            "require_upper_bound": {"type": "boolean",
                                    "description": "Pass only when the interval's "
                                                   "upper bound is within the limit."},
        },
        "required": ["action", "percentile", "max_seconds"],
        "additionalProperties": False,
    }

    def __init__(self, criterion_value):
        super(PercentileOfAtomicAction, self).__init__(criterion_value)
        self.action = criterion_value["action"]
        self.percent = criterion_value["percentile"]
        self.limit = criterion_value["max_seconds"]
        self.confidence = criterion_value.get("confidence", stats.DEFAULT_CONFIDENCE)
        self.strict = criterion_value.get("require_upper_bound", False)
        self.values = []
        self.success = False

    def _check(self):
        if not self.values:
            self.success = False
            return self.success
        # FAILED (inf) sorts last; the interpolation and the order statistics only
        # index and scale it, so a percentile that reaches a failure is inf
        ordered = sorted(self.values)
        if self.strict:
            interval = stats.quantile_interval(ordered, self.percent, self.confidence,
                                               presorted=True)
            self.success = interval.high is not None and interval.high <= self.limit
        else:
            self.success = stats.percentile_sorted(ordered, self.percent) <= self.limit
        return self.success

    def add_iteration(self, iteration):
        _durations(iteration.get("atomic_actions"), self.action, self.values)
        return self._check()

    def merge(self, other):
        self.values.extend(other.values)
        return self._check()

    def details(self):
        label = "p%g of %s" % (self.percent, self.action)
        if not self.values:
            return ("%s: no '%s' in these iterations, nothing to check "
                    "against %g s - Failed" % (label, self.action, self.limit))
        ordered = sorted(self.values)
        failed = ordered.count(FAILED)
        value = stats.percentile_sorted(ordered, self.percent)
        interval = stats.quantile_interval(ordered, self.percent, self.confidence,
                                           presorted=True)
        need_low, need_high = stats.quantile_min_n(self.percent, self.confidence)
        pct = "%g %%" % (100 * self.confidence)
        low = (_seconds(interval.low) if interval.low is not None
               else "none below N = %d" % need_low)
        high = (_seconds(interval.high) if interval.high is not None
                else "none below N = %d" % need_high)
        if interval.high is not None and interval.high <= self.limit:
            where = "the limit lies above the interval: met at %s" % pct
        elif interval.low is not None and interval.low > self.limit:
            where = "the limit lies below the interval: exceeded at %s" % pct
        else:
            where = "the limit lies within the interval: not settled at %s" % pct
        return ("%s = %s (N = %d%s), limit %g s; %s interval (order statistics) "
                "[%s, %s]: %s%s - %s"
                % (label, _seconds(value) + ("" if value == FAILED else " s"),
                   len(ordered),
                   ", %d failed or unfinished, counted as longer than any limit" % failed
                   if failed else "", self.limit, pct, low, high, where,
                   "; pass needs the upper bound within the limit"
                   if self.strict else "", self.status()))


def _seconds(value):
    return "failed" if value == FAILED else "%.3f" % value
