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
"""How many times a workload runs inside one iteration (a dynamic run count).

A workload repeats until it has ``min_runs`` runs and either the coefficient of
variation of its primary metric is at most ``cv_target`` percent or it has run
``max_runs`` times (what the Phoronix Test Suite's dynamic run count does).
Without ``cv_target`` it runs ``max_runs`` times (``min_runs`` by default); a
``cv_target`` needs ``max_runs > min_runs`` to have any effect, so it is refused
otherwise.
Pure: the runner asks :meth:`RunPolicy.done` after each run.
"""

from rally_vmct import stats


class RunPolicyError(ValueError):
    """min_runs / max_runs / cv_target do not fit; the message names the argument."""


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RunPolicyError("Argument '%s' must be an integer >= 1, got %r" % (name, value))
    return value


class RunPolicy(object):
    """``min_runs`` (>= 1), ``max_runs`` (>= min_runs, default min_runs), ``cv_target`` (%)."""

    def __init__(self, min_runs=1, max_runs=None, cv_target=None):
        self.min_runs = _count("min_runs", min_runs)
        self.max_runs = self.min_runs if max_runs is None else _count("max_runs", max_runs)
        if self.max_runs < self.min_runs:
            raise RunPolicyError("Argument 'max_runs' (%d) must be >= min_runs (%d)"
                                 % (self.max_runs, self.min_runs))
        if cv_target is not None and (isinstance(cv_target, bool) or not isinstance(
                cv_target, (int, float)) or not cv_target > 0):
            raise RunPolicyError("Argument 'cv_target' must be a number of percent > 0 "
                                 "(e.g. 2 for 2 %%), got %r" % (cv_target,))
        if cv_target is not None and self.max_runs == self.min_runs:
            raise RunPolicyError(
                "Argument 'cv_target' needs max_runs > min_runs: with max_runs = min_runs "
                "(%d, the default) every workload runs exactly that often whatever its CV; "
                "set max_runs, e.g. %d" % (self.min_runs, self.min_runs + 4))
        self.cv_target = cv_target

    def cv_percent(self, values):
        """CV of ``values`` in percent, None below two values or at a zero mean."""
        cv = stats.cv(values) if len(values) >= 2 else None
        return None if cv is None else 100.0 * cv

    def done(self, values):
        """Whether the primary metric's ``values`` so far are enough runs."""
        if len(values) < self.min_runs:
            return False
        if len(values) >= self.max_runs:
            return True
        cv = self.cv_percent(values)
        return self.cv_target is not None and cv is not None and cv <= self.cv_target

    def stop_reason(self, values):
        """Why the runs stopped after ``values``, e.g. ``"CV 1.2 % <= cv_target 2 %"``."""
        cv = self.cv_percent(values)
        cv_text = "no CV" if cv is None else "CV %.2g %%" % cv
        if self.cv_target is None:
            return "%d run(s) as asked (%s)" % (len(values), cv_text)
        if cv is not None and cv <= self.cv_target and len(values) >= self.min_runs:
            return "%s <= cv_target %g %%" % (cv_text, self.cv_target)
        return "max_runs %d reached (%s; cv_target %g %%)" % (
            self.max_runs, cv_text, self.cv_target)

    def describe(self):
        """The ``runs`` fact: ``"1"``, ``"5"`` or ``"3-5 (cv_target 2 %)"``.

        Without cv_target the CV condition never holds: max_runs runs.
        """
        if self.cv_target is None:
            return "%d" % self.max_runs
        return "%d-%d (cv_target %g %%)" % (self.min_runs, self.max_runs, self.cv_target)
