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
"""The one rule that turns two samples into a ratio, its interval and a verdict.

Every comparison rally-vmct prints (a cell of the comparison page, a seed check
direction, a metric of ``vmct-compare-runs``) comes from :func:`compare`, so the
verdict and the interval printed beside it cannot disagree:

* **the rule**: Welch's t on the natural logs of the values with Hsu's conservative
  degrees of freedom ``min(n_a, n_b) - 1``. The ratio is the ratio of geometric
  means, the interval ``exp(d -/+ t(1 - alpha/2, df) * se)`` at level
  ``1 - alpha``, and the difference is significant at ``alpha`` exactly when that
  interval excludes 1 (the test is the interval's inversion). Benchmark figures are
  positive and skewed, and differences between kinds are multiplicative, which the
  log scale makes additive and closer to normal.
* **values <= 0** (a host-cost delta, a zero count): no log scale; Fieller's
  interval of the ratio of arithmetic means at the same Hsu df, which is exactly
  the set of ratios a Welch t-test at that df does not reject, so again "1 is
  outside the set" is the verdict. When the baseline mean is not bounded away from
  0 the set is unbounded: every ratio, or two half-lines around an excluded gap
  (``ratio_ci_excludes_low``/``_high``), and then 1 in the gap is a difference.
* **a side written to a step** (whole seconds, two equal values) is not certain:
  its log SD is at least the rounding error that step allows
  (:func:`rally_vmct.stats.log_sd_floor`).
* **the level** is the caller's: ``alpha`` uncorrected for the page's exploratory
  cells, the Holm step's level in the seed check's confirmatory family.
* **what would tell**: with an interval, the smallest ratio (below and above 1) the
  test would detect with 80 % power at this N and these log SDs
  (:func:`rally_vmct.stats.detectable_log_ratio`).

Mann-Whitney U stays a robustness note beside the verdict (exact, ties included,
up to 25 per side), never the verdict. Pure Python, no Rally import.
"""

import math

from rally_vmct import stats

RULE_LOG = "welch-t-log-hsu"
RULE_FIELLER = "fieller-hsu"
RULE_RUNS = "welch-t-log-runs"
RULE_TEXT = {RULE_LOG: "Welch t on log values, Hsu df = min(N) − 1",
             RULE_FIELLER: "Fieller interval (Welch t, Hsu df = min(N) − 1; values ≤ 0 "
                           "rule out the log scale)",
             RULE_RUNS: "Welch t on the runs' mean logs, Welch–Satterthwaite df"}
# the unit of replication a ratio's interval was taken over: compare_runs' runs, or
# compare's values (the iterations of a task)
REPLICATE_RUN, REPLICATE_ITERATION = "run", "iteration"
FIELDS = ("rule", "level", "ratio", "ratio_se", "ratio_ci_low", "ratio_ci_high",
          "ratio_ci_unbounded", "ratio_ci_excludes_low", "ratio_ci_excludes_high",
          "ratio_df", "ratio_note", "p_value", "significant", "detectable_low",
          "detectable_high")


def sample(values):
    """``(Summary, LogMoments or None)`` of a sample: what :func:`compare` takes."""
    return stats.summary(values), stats.log_moments(values)


def _empty(level, note):
    out = dict.fromkeys(FIELDS)
    out.update(level=level, ratio_ci_unbounded=False, ratio_note=note, significant=False)
    return out


def compare_runs(candidate_runs, baseline_runs, alpha):
    """The rule over runs: ``*_runs`` the per-run mean logs (two or more a side).

    Each run is one value (the unit of replication where the run's moment, its load
    and caches, enters), so the interval covers the variation between runs; the
    df is Welch-Satterthwaite's (:func:`rally_vmct.stats.welch_log_df`).
    """
    level = round(1.0 - alpha, 12)
    log_a = stats.moments_of_logs(candidate_runs)
    log_b = stats.moments_of_logs(baseline_runs)
    out = _log_rule(log_a, log_b, alpha, level, stats.welch_log_df(log_a, log_b))
    out["rule"] = RULE_RUNS
    return out


def compare(candidate, baseline, alpha):
    """The rule's outcome for candidate / baseline at ``alpha`` (a dict of FIELDS).

    ``candidate``/``baseline``: ``(Summary, LogMoments or None)`` as :func:`sample`
    returns. ``significant`` is True exactly when the interval at ``1 - alpha``
    excludes 1; ``p_value`` is the two-sided p of the same test.
    """
    level = round(1.0 - alpha, 12)
    (sum_a, log_a), (sum_b, log_b) = candidate, baseline
    if not sum_a.n or not sum_b.n:
        return _empty(level, "no %s samples" % ("candidate" if not sum_a.n else "baseline"))
    if log_a is not None and log_b is not None:
        return _log_rule(log_a, log_b, alpha, level)
    return _fieller_rule(sum_a, sum_b, alpha, level)


def _log_rule(log_a, log_b, alpha, level, df=None):
    r = stats.log_ratio(log_a, log_b, level, df=df)
    out = _empty(level, r.note)
    out.update(rule=RULE_LOG, ratio=r.ratio, ratio_se=r.se, ratio_df=r.df,
               ratio_ci_low=r.ci_low, ratio_ci_high=r.ci_high, p_value=r.p)
    if r.ci_low is None:
        return out
    out["significant"] = not r.ci_low <= 1.0 <= r.ci_high
    if r.se:
        d = stats.detectable_log_ratio(r.se, r.df, alpha)
        out["detectable_low"], out["detectable_high"] = math.exp(-d), math.exp(d)
    return out


def _fieller_rule(sum_a, sum_b, alpha, level):
    if sum_a.sd is None or sum_b.sd is None:
        r = stats.ratio(sum_a, sum_b, level)
        df = None
    else:
        df = stats.hsu_df(sum_a.n, sum_b.n)
        r = stats.ratio(sum_a, sum_b, level, df=df)
    out = _empty(level, r.note)
    out.update(rule=RULE_FIELLER, ratio=r.ratio, ratio_se=r.se, ratio_df=r.df,
               ratio_ci_low=r.ci_low, ratio_ci_high=r.ci_high,
               ratio_ci_unbounded=r.unbounded)
    if r.gap is not None:
        out["ratio_ci_excludes_low"], out["ratio_ci_excludes_high"] = r.gap
    if r.ratio is None or df is None:
        return out
    var = sum_a.sd ** 2 / sum_a.n + sum_b.sd ** 2 / sum_b.n
    diff = sum_a.mean - sum_b.mean
    if var:
        out["p_value"] = min(1.0, 2.0 * stats.t_sf(abs(diff) / math.sqrt(var), df))
    else:
        out["p_value"] = 1.0 if diff == 0 else 0.0
    if r.ci_low is not None:
        out["significant"] = not r.ci_low <= 1.0 <= r.ci_high
    elif r.gap is not None:
        # two half-lines: 1 is rejected when it lies in the gap between them
        out["significant"] = r.gap[0] < 1.0 < r.gap[1]
    return out


def band_decision(result, band, alpha):
    """Equivalence within ``1 -/+ band`` at ``alpha`` of a log-rule result.

    ``(decision, p_equal, p_outside, interval)``: decision "equivalent" when the
    ``1 - 2 alpha`` interval lies inside the band (TOST: ``p_equal < alpha``),
    "outside" when the ``1 - alpha`` interval lies wholly outside it
    (``p_outside < alpha``), else None; ``interval`` the TOST interval (``1 - 2
    alpha``). Only one of the two decisions can be an error whatever the truth, so
    ``min(p_equal, p_outside)`` is a valid p for "this verdict is wrong". All None
    for other rules or without an interval.
    """
    if result.get("rule") != RULE_LOG or result.get("ratio_ci_low") is None:
        return None, None, None, None
    d, se, df = math.log(result["ratio"]), result["ratio_se"], result["ratio_df"]
    low, high = math.log(1.0 - band), math.log(1.0 + band)
    p_equal = stats.tost_p(d, se, df, low, high)
    p_out = stats.outside_p(d, se, df, low, high)
    half = stats.t_quantile(1 - alpha, df) * se
    interval = (math.exp(d - half), math.exp(d + half))
    decision = None
    if p_equal < alpha:
        decision = "equivalent"
    elif p_out < alpha:
        decision = "outside"
    return decision, p_equal, p_out, interval


def difference(result):
    """``"higher"``/``"lower"`` of a significant result's ratio, else None."""
    if not result.get("significant") or result.get("ratio") is None:
        return None
    return "higher" if result["ratio"] > 1 else "lower"
