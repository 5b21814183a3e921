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
"""Descriptive statistics and two-sample comparisons for benchmark samples, stdlib only.

Everything here answers ``None`` when a figure cannot be computed from the data
(no samples, a single sample, a zero mean or baseline), never a made-up zero, and
raises :class:`ValueError` naming the argument on bad input. Nothing here needs
scipy; the unit tests check every distribution function against scipy.stats.

Methods
-------
* **SD** is the sample standard deviation (divisor ``n - 1``); ``None`` for n < 2.
* **CV** is ``SD / |mean|``; ``None`` when SD is undefined or the mean is 0. A CV
  above :data:`HIGH_CV` (10 %) is flagged: run-to-run noise that large hides the
  differences of a few percent this project compares, and says the runs should be
  repeated or the machine quietened before the ratio is read.
* **Percentiles** use linear interpolation between closest ranks: position
  ``k = (n - 1) * q`` in the sorted sample, value
  ``x[floor(k)] + (x[ceil(k)] - x[floor(k)]) * (k - floor(k))``. This is numpy's
  default (``method="linear"``, Hyndman & Fan type 7) and exactly what Rally's
  own report uses (``rally.task.processing.utils.percentile``).
* **Confidence interval of the mean**: ``mean -/+ t(1 - alpha/2, n - 1) * SD / sqrt(n)``
  with the Student t quantile computed here (:func:`t_quantile`); its lower bound is
  raised to 0 when no value is negative (a duration's mean is never below 0).
* **Ratio of two means** ``R = mean_a / mean_b`` (a = candidate, b = baseline,
  independent samples, ``v_a = SD_a**2 / n_a`` and ``v_b = SD_b**2 / n_b`` the
  squared standard errors of the means): **Fieller's interval**, the set of ratios
  ``rho`` that a Welch t-test of ``mean_a - rho * mean_b = 0`` does not reject::

      (mean_a - rho * mean_b)**2 <= t**2 * (v_a + rho**2 * v_b)

  with ``t = t(1 - alpha/2, df)`` and ``df`` the Welch-Satterthwaite degrees of
  freedom of ``v_a + R**2 * v_b`` (the ratio estimate plugged in, as in Tamhane &
  Logan 2004 and R's ``mratios::ttestratio(var.equal=FALSE)``)::

      df = (v_a + R**2 v_b)**2 / (v_a**2 / (n_a - 1) + (R**2 v_b)**2 / (n_b - 1))

  Solving the quadratic ``A rho**2 - 2 B rho + C <= 0`` with
  ``A = mean_b**2 - t**2 v_b``, ``B = mean_a mean_b``, ``C = mean_a**2 - t**2 v_a``:
  when ``A > 0`` (the baseline mean is significantly different from 0) the interval
  is ``(B -/+ sqrt(B**2 - A C)) / A``, always around R and never empty. When
  ``A <= 0`` the set is the whole line or two half-lines: the data cannot bound the
  ratio, and :func:`ratio` says so (bounds None, ``unbounded`` True) instead of
  inventing finite bounds. When no value of either sample is negative the true
  means are >= 0, so the ratio is too: the interval is intersected
  with ``[0, inf)`` (still a valid confidence set) and its lower bound is never
  negative. Why Fieller rather than the delta method (``R -/+ t * SE(R)``, which
  gave ``x1.175 [-1.054, 3.404]`` for a ratio of positive means at N = 2) or a
  log-ratio interval (``exp(log R -/+ t * SE(log R))``, always finite and positive):
  Fieller is exact for normal means (up to the Welch df), it is not symmetric where
  the ratio is not, and at small N with a noisy baseline it reports that no finite
  interval exists, where the other two print a finite one that does not hold.
  :data:`Ratio` still carries the delta-method SE ``sqrt(v_a + R**2 v_b) / |mean_b|``
  as a plain-language spread figure; the interval does not use it.
* **Confidence interval of a quantile** (:func:`quantile_interval`): distribution-free,
  from order statistics (Conover 1999, *Practical Nonparametric Statistics*, 3rd ed.,
  section 3.2; Hahn & Meeker 1991, *Statistical Intervals*, section 5.2; the interval
  of scipy's ``quantile_test(x, p=q).confidence_interval()``). Of n samples, the
  number B below the true q-quantile xi is Binomial(n, q), so the sorted sample
  ``x(1) <= ... <= x(n)`` gives, for any distribution (equality for continuous ones)::

      P(x(r) <= xi <= x(s)) >= P(r <= B < s) = 1 - P(B <= r - 1) - P(B >= s)

  Equal tails: the lower bound is ``x(r)`` with r the largest rank such that
  ``P(B <= r - 1) <= alpha/2``, the upper ``x(s)`` with s the smallest rank such
  that ``P(B >= s) <= alpha/2``; each bound alone is a one-sided bound at
  ``1 - alpha/2``. A bound exists only for n large enough: the lower one needs
  ``(1 - q)**n <= alpha/2``, the upper one ``q**n <= alpha/2``
  (:func:`quantile_min_n`; at 95 %: p50 n >= 6 for each, p95 n >= 2 and n >= 72, p99
  n >= 1 and n >= 368). Below that the bound is None ("N too small"), never one made
  up. The ranks come from the exact binomial distribution: its CDF as the
  regularized incomplete beta function (about 1e-11 relative at n = 10**5) where
  the normal approximation guesses the rank, then one binomial probability at a
  time to the rank itself. The interval is for the quantile itself, whichever point
  estimate is printed with it (the type 7 figure above).
* **Tests of a difference** (two-sided, independent samples):

  - :func:`mann_whitney`: the Mann-Whitney U test, the one the exporter marks
    differences with (as Go's benchstat does): it needs no normality, and
    benchmark timings are skewed with outliers (a reboot that falls back to hard).
    U counts the (candidate, baseline) pairs where the candidate is larger, ties
    counting 1/2. Exact p-value (the U distribution counted over all
    ``C(n_a + n_b, n_a)`` orderings) when there are no ties and both N <=
    :data:`MWU_EXACT_LIMIT` (50, benchstat's limit); else the normal approximation
    with tie-corrected variance and continuity correction (scipy's ``asymptotic``).
    A rank test has a smallest possible p-value, ``2 / C(n_a + n_b, n_a)``: 1/3 at
    2 vs 2, 0.1 at 3 vs 3, 0.029 at 4 vs 4. ``min_p`` reports it, so a caller can
    say "N too small for a significance test" instead of "no difference".
  - :func:`welch_test`: Welch's t-test (unequal variances, Welch-Satterthwaite df),
    reported alongside for readers who assume normal means.
  - :func:`holm`: Holm-Bonferroni adjusted p-values over a family of tests (all the
    comparisons of one report): controls the chance of any false "significant" at
    alpha without Bonferroni's full loss of power.
"""

import bisect
import collections
import functools
import math
import numbers
import statistics

PERCENTILES = (50, 90, 95, 99)
# The percentiles reported with a confidence interval (quantile_interval).
INTERVAL_PERCENTILES = (50, 95, 99)
DEFAULT_CONFIDENCE = 0.95
# CV (SD / |mean|) above which a sample is flagged as noisy (see the module doc).
HIGH_CV = 0.10
# Largest sample size of either side for the exact Mann-Whitney distribution
# (samples without ties); benchstat's MannWhitneyExactLimit.
MWU_EXACT_LIMIT = 50
# Largest sample size of either side for the exact distribution when there are ties
# (the permutation distribution given the ties, counted by dynamic programming).
MWU_EXACT_TIES_LIMIT = 25
MWU_EXACT = "mann-whitney-u exact"
MWU_NORMAL = "mann-whitney-u normal"
WELCH = "welch-t"

Summary = collections.namedtuple(
    "Summary",
    ["n", "mean", "sd", "cv", "min", "max", "p50", "p90", "p95", "p99",
     "ci_low", "ci_high", "ci_half_width"])
Summary.__doc__ = """Descriptive statistics of one sample (see :func:`summary`).

``ci_low``/``ci_high`` bound the confidence interval of the mean and
``ci_half_width`` is their half distance; all three are None for n < 2.
"""

Ratio = collections.namedtuple(
    "Ratio", ["ratio", "se", "ci_low", "ci_high", "df", "unbounded", "note", "gap"],
    defaults=(None,))
Ratio.__doc__ = """Ratio of two sample means with Fieller's confidence interval.

``ratio`` = mean(candidate) / mean(baseline); ``se`` its delta-method standard
error (a spread figure only); ``ci_low``/``ci_high`` Fieller's interval, None when
it cannot be computed or is unbounded; ``df`` the Welch-Satterthwaite degrees of
freedom (None when both samples have zero spread, the interval then being the
point itself); ``unbounded`` True when the data cannot bound the ratio (the
baseline mean is not significantly different from 0). An unbounded set is either
every ratio or two half-lines ``(-inf, gap[0]] and [gap[1], inf)``: ``gap`` is then
the open interval the set excludes (a ratio there is rejected), else None. ``note``
says in words why a field is None, or that the lower bound was clipped at 0 (else
None).
"""

QuantileInterval = collections.namedtuple(
    "QuantileInterval", ["percent", "n", "low", "high", "low_rank", "high_rank",
                         "coverage"])
QuantileInterval.__doc__ = """Distribution-free confidence interval of a quantile.

``low``/``high`` are the order statistics of ranks ``low_rank``/``high_rank`` (1 =
the smallest), each None when n is too small for that bound; ``coverage`` is the
interval's probability of covering the quantile (exact for continuous data, a lower
bound for any), None when neither bound exists. See :func:`quantile_interval`.
"""

TestResult = collections.namedtuple(
    "TestResult", ["test", "statistic", "df", "p", "min_p", "note"])
TestResult.__doc__ = """Outcome of a two-sided two-sample test.

``test`` names the method (:data:`MWU_EXACT`, :data:`MWU_NORMAL`, :data:`WELCH`);
``statistic`` is U of the candidate or Welch's t; ``df`` the t-test's degrees of
freedom (None for U); ``p`` the two-sided p-value; ``min_p`` the smallest p-value
the test could give at these sample sizes (rank tests; None for the t-test);
``note`` says why ``p`` is None (else None).
"""


def _check_values(values, name="values"):
    """The sample as a list of floats; ValueError naming the bad element."""
    if values is None or isinstance(values, (str, bytes, dict)):
        raise ValueError("%s must be a sequence of numbers, got %r" % (name, values))
    out = []
    for i, value in enumerate(values):
        if type(value) is float and value - value == 0:
            # Fast path for the common case (finite float); x - x is NaN for inf/NaN.
            out.append(value)
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError("%s[%d] must be a number, got %r; drop missing values "
                             "before computing statistics" % (name, i, value))
        value = float(value)
        if not math.isfinite(value):
            raise ValueError("%s[%d] is %r; only finite numbers can be summarised"
                             % (name, i, value))
        out.append(value)
    return out


def _check_confidence(confidence):
    if not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise ValueError("confidence must be a number in (0, 1), e.g. 0.95; got %r"
                         % (confidence,))


def mean(values):
    """Arithmetic mean; None for an empty sample."""
    values = _check_values(values)
    if not values:
        return None
    return math.fsum(values) / len(values)


def _sd(values, avg):
    if len(values) < 2:
        return None
    return math.sqrt(math.fsum((v - avg) ** 2 for v in values) / (len(values) - 1))


def sd(values):
    """Sample standard deviation (divisor n - 1); None for fewer than 2 samples."""
    values = _check_values(values)
    if len(values) < 2:
        return None
    return _sd(values, math.fsum(values) / len(values))


def _cv(sd_value, avg):
    if sd_value is None or not avg:
        return None
    return sd_value / abs(avg)


def cv(values):
    """Coefficient of variation SD / |mean|; None if SD is undefined or mean is 0."""
    values = _check_values(values)
    if len(values) < 2:
        return None
    avg = math.fsum(values) / len(values)
    return _cv(_sd(values, avg), avg)


def percentile_sorted(ordered, percent):
    """:func:`percentile` of a sorted list, unchecked; it may end in ``inf``.

    ``inf`` stands for values known only to exceed every limit (a failed or
    unfinished action): a percentile whose interpolation reaches one is ``inf``.
    """
    # Same arithmetic as rally.task.processing.utils.percentile so that our
    # figures agree with Rally's report to the last bit.
    if not ordered:
        return None
    k = (len(ordered) - 1) * (percent / 100.0)
    f = math.floor(k)
    c = math.ceil(k)
    if f == c:
        return ordered[int(k)]
    return ordered[int(f)] * (c - k) + ordered[int(c)] * (k - f)


def percentile(values, percent):
    """Percentile ``percent`` (0..100) by linear interpolation; None if empty."""
    if (isinstance(percent, bool) or not isinstance(percent, numbers.Real)
            or not 0 <= percent <= 100):
        raise ValueError("percent must be a number in [0, 100], got %r" % (percent,))
    return percentile_sorted(sorted(_check_values(values)), percent)


# -- Student t quantile ------------------------------------------------------

_BETACF_MAX_ITERATIONS = 10000
_BETACF_EPS = 1e-16
_TINY = 1e-300
# Above this many degrees of freedom the Cornish-Fisher expansion is exact to
# double precision (error term O(df**-5)) and cheaper than the continued fraction.
_CORNISH_FISHER_DF = 1000.0


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _BETACF_MAX_ITERATIONS + 1):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + aa / c
            c = c if abs(c) > _TINY else _TINY
            delta = d * c
            h *= delta
        if abs(delta - 1.0) < _BETACF_EPS:
            return h
    raise ArithmeticError("incomplete beta continued fraction did not converge "
                          "(a=%r, b=%r, x=%r)" % (a, b, x))


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b) for a, b > 0, 0 <= x <= 1."""
    return _betainc(a, b, x, 1.0 - x)


def _betainc(a, b, x, y):
    """I_x(a, b) given both x and y = 1 - x, each to full relative precision.

    Callers that know 1 - x more precisely than ``1.0 - x`` (x close to 1) pass it:
    the complement branch and the prefactor use y, never 1 - x.
    """
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log(y))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_sf(t, df):
    """Upper tail P(T > t) of Student's t with ``df`` degrees of freedom."""
    if t == 0:
        return 0.5
    t2 = t * t
    # P(|T| > t) = I_x(df/2, 1/2) with x = df / (df + t**2); 1 - x = t**2 / (df + t**2)
    # is passed as such, since 1.0 - x would lose all digits for t**2 << df.
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))
    return tail if t > 0 else 1.0 - tail


def t_cdf(t, df):
    """P(T <= t) of Student's t with ``df`` (> 0, may be fractional or inf) degrees."""
    if isinstance(t, bool) or not isinstance(t, numbers.Real) or math.isnan(t):
        raise ValueError("t must be a number, got %r" % (t,))
    _check_df(df)
    if math.isinf(df):
        return statistics.NormalDist().cdf(t)
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    return t_sf(-float(t), float(df))


def _check_df(df):
    if (isinstance(df, bool) or not isinstance(df, numbers.Real)
            or not df > 0 or math.isnan(df)):
        raise ValueError("df (degrees of freedom) must be a number > 0, got %r" % (df,))


def _t_cornish_fisher(p, df):
    # Abramowitz & Stegun 26.7.5.
    x = statistics.NormalDist().inv_cdf(p)
    x2 = x * x
    g1 = (x2 + 1) * x / 4
    g2 = ((5 * x2 + 16) * x2 + 3) * x / 96
    g3 = (((3 * x2 + 19) * x2 + 17) * x2 - 15) * x / 384
    g4 = ((((79 * x2 + 776) * x2 + 1482) * x2 - 1920) * x2 - 945) * x / 92160
    return x + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


@functools.lru_cache(maxsize=4096)
def _t_upper(p, df):
    """t > 0 with P(T <= t) = p, for p in (0.5, 1)."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    if df > _CORNISH_FISHER_DF:
        return _t_cornish_fisher(p, df)
    tail = 1.0 - p
    lo, hi = 0.0, 2.0
    while t_sf(hi, df) > tail:
        lo, hi = hi, hi * 2
    # Bisection on t against the exact tail: monotone, and the tail keeps its
    # relative precision far out, where 1 - CDF would cancel.
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if t_sf(mid, df) > tail:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def t_quantile(p, df):
    """Quantile of Student's t: the t with P(T <= t) = p for ``df`` degrees of freedom.

    ``df`` may be fractional (Welch-Satterthwaite). df 1 and 2 use closed forms,
    df > 1000 the Cornish-Fisher expansion, other df invert the exact CDF
    (regularized incomplete beta) by bisection; accurate to ~1e-12 relative.
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 < p < 1:
        raise ValueError("p must be a probability in (0, 1), got %r" % (p,))
    _check_df(df)
    p, df = float(p), float(df)
    if math.isinf(df):
        return statistics.NormalDist().inv_cdf(p)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -_t_upper(1.0 - p, df)
    return _t_upper(p, df)


# -- summaries ---------------------------------------------------------------

def mean_ci(values, confidence=DEFAULT_CONFIDENCE):
    """``(low, high)`` confidence interval of the mean (Student t); None for n < 2."""
    _check_confidence(confidence)
    s = summary(values, confidence)
    if s.ci_low is None:
        return None
    return s.ci_low, s.ci_high


def summary(values, confidence=DEFAULT_CONFIDENCE):
    """All descriptive statistics of ``values`` as a :data:`Summary`.

    Empty sample: n = 0 and every other field None. One sample: mean, min, max
    and percentiles are that value; SD, CV and the interval are None.
    """
    _check_confidence(confidence)
    values = _check_values(values)
    n = len(values)
    if not n:
        return Summary(0, *([None] * (len(Summary._fields) - 1)))
    ordered = sorted(values)
    avg = math.fsum(ordered) / n
    sd_value = _sd(ordered, avg)
    ci_low = ci_high = half = None
    if sd_value is not None:
        half = t_quantile(0.5 + confidence / 2, n - 1) * sd_value / math.sqrt(n)
        ci_low, ci_high = avg - half, avg + half
        if ordered[0] >= 0:
            # the mean of a quantity that is never negative (a duration, a rate) is not
            # either: intersecting the interval with [0, inf) keeps its coverage
            ci_low = max(ci_low, 0.0)
    p50, p90, p95, p99 = (percentile_sorted(ordered, p) for p in PERCENTILES)
    return Summary(n, avg, sd_value, _cv(sd_value, avg), ordered[0], ordered[-1],
                   p50, p90, p95, p99, ci_low, ci_high, half)


# -- quantile intervals -------------------------------------------------------

def _check_percent(percent):
    if (isinstance(percent, bool) or not isinstance(percent, numbers.Real)
            or not 0 < percent < 100):
        raise ValueError("percent must be a number in (0, 100), e.g. 95; got %r"
                         % (percent,))


def binom_cdf(k, n, p):
    """P(B <= k) for B ~ Binomial(n, p): the regularized incomplete beta I_(1-p)(n-k, k+1)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError("n must be an integer >= 0, got %r" % (n,))
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError("k must be an integer, got %r" % (k,))
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise ValueError("p must be a probability in [0, 1], got %r" % (p,))
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return _betainc(n - k, k + 1, 1.0 - p, float(p))


def _binom_pmf(k, n, p):
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                    + k * math.log(p) + (n - k) * math.log1p(-p))


def _lowest_below(n, p, tail):
    """P(B <= 0) = (1 - p)**n: above ``tail``, no rank bounds the quantile from below."""
    return (1.0 - p) ** n > tail


@functools.lru_cache(maxsize=4096)
def _lower_rank(n, p, tail):
    """The largest rank r with P(B <= r - 1) <= tail, B ~ Binomial(n, p); None if none.

    Starts at the normal approximation's guess, takes the exact CDF there and
    steps one binomial probability at a time to the exact answer.
    """
    if _lowest_below(n, p, tail):
        return None
    guess = n * p + statistics.NormalDist().inv_cdf(tail) * math.sqrt(n * p * (1 - p))
    k = min(n - 1, max(0, int(math.floor(guess - 0.5))))
    cdf, pmf, odds = binom_cdf(k, n, p), _binom_pmf(k, n, p), p / (1.0 - p)
    if cdf <= tail:
        while k + 1 < n:
            pmf *= (n - k) / (k + 1) * odds            # P(B = k + 1)
            if cdf + pmf > tail:
                break
            cdf += pmf
            k += 1
    else:
        while k > 0 and cdf > tail:                     # P(B <= 0) <= tail: stops at 0
            cdf -= pmf
            pmf *= k / (n - k + 1) / odds               # P(B = k - 1)
            k -= 1
    return k + 1


@functools.lru_cache(maxsize=4096)
def _interval_ranks(n, percent, confidence):
    """``(low rank, high rank, coverage)`` of the equal-tailed interval (see the doc)."""
    q, tail = percent / 100.0, (1.0 - confidence) / 2
    low = _lower_rank(n, q, tail)
    # P(B >= s) = P(n - B <= n - s), n - B ~ Binomial(n, 1 - q): the mirror image.
    mirror = _lower_rank(n, 1.0 - q, tail)
    high = None if mirror is None else n + 1 - mirror
    if low is None and high is None:
        return None, None, None
    coverage = 1.0
    if low is not None:
        coverage -= binom_cdf(low - 1, n, q)
    if high is not None:
        coverage -= binom_cdf(n - high, n, 1.0 - q)
    return low, high, coverage


def quantile_interval(values, percent, confidence=DEFAULT_CONFIDENCE, presorted=False):
    """Distribution-free interval of the ``percent`` quantile (a :data:`QuantileInterval`).

    Equal-tailed, from order statistics (see the module doc); a bound is None when
    there are too few values for it (:func:`quantile_min_n`). ``presorted=True``
    promises a sorted list of finite floats (skips the checks and the sort).
    """
    _check_percent(percent)
    _check_confidence(confidence)
    ordered = values if presorted else sorted(_check_values(values))
    n = len(ordered)
    low, high, coverage = _interval_ranks(n, percent, confidence) if n else (None,) * 3
    return QuantileInterval(percent, n, None if low is None else ordered[low - 1],
                            None if high is None else ordered[high - 1], low, high,
                            coverage)


def _min_n(p, tail):
    n = max(1, math.ceil(math.log(tail) / math.log1p(-p)))
    while _lowest_below(n, p, tail):
        n += 1
    while n > 1 and not _lowest_below(n - 1, p, tail):
        n -= 1
    return n


def quantile_min_n(percent, confidence=DEFAULT_CONFIDENCE):
    """``(n for a lower bound, n for an upper bound)``: the fewest values that give one.

    A lower bound of the q-quantile exists from ``(1 - q)**n <= alpha/2`` on, an upper
    one from ``q**n <= alpha/2`` (alpha = 1 - confidence): at 95 %, (6, 6) for p50,
    (2, 72) for p95, (1, 368) for p99.
    """
    _check_percent(percent)
    _check_confidence(confidence)
    q, tail = percent / 100.0, (1.0 - confidence) / 2
    return _min_n(q, tail), _min_n(1.0 - q, tail)


def _sample_moments(values, name):
    """(n, mean, sd, min) of a sample or of its :data:`Summary`."""
    if isinstance(values, Summary):
        return values.n, values.mean, values.sd, values.min
    values = _check_values(values, name)
    n = len(values)
    if not n:
        return 0, None, None, None
    avg = math.fsum(values) / n
    return n, avg, _sd(values, avg), min(values)


def _welch_df(v_a, n_a, v_b, n_b):
    """Welch-Satterthwaite df of ``v_a + v_b`` (squared SEs of n_a, n_b samples)."""
    den = 0.0
    if v_a:
        den += v_a * v_a / (n_a - 1)
    if v_b:
        den += v_b * v_b / (n_b - 1)
    return (v_a + v_b) ** 2 / den


def _fieller_gap(a_coef, b_coef, c_coef):
    """The open interval an unbounded Fieller set excludes, or None.

    With ``A <= 0`` the set ``A rho**2 - 2 B rho + C <= 0`` is every ratio when the
    quadratic has no real root, else the two half-lines outside its roots: the
    ratios between them are rejected (1 among them: the difference is significant).
    """
    if a_coef == 0:
        # linear: -2 B rho + C <= 0, one half-line; no gap either side of it
        return None
    disc = b_coef * b_coef - a_coef * c_coef
    if disc <= 0:
        return None
    root = math.sqrt(disc)
    low, high = sorted(((b_coef - root) / a_coef, (b_coef + root) / a_coef))
    return (low, high)


def ratio(candidate, baseline, confidence=DEFAULT_CONFIDENCE, df=None):
    """mean(candidate) / mean(baseline) with Fieller's interval (a :data:`Ratio`).

    Each argument is a sequence of numbers or a :data:`Summary` of one. ``df``
    fixes the t quantile's degrees of freedom (e.g. :func:`hsu_df`); by default
    the Welch-Satterthwaite df with the ratio plugged in (see the module doc). With
    a fixed df the interval is exactly the set of ratios a Welch t-test at that df
    does not reject, so "1 is outside" is that test's verdict at ``1 - confidence``. Returns
    ratio None when either sample is empty or the baseline mean is 0; SE and
    interval None when either sample has fewer than 2 values; interval None and
    ``unbounded`` True when the baseline mean is not significantly different from 0
    at this confidence. The lower bound is never below 0 when no value is
    negative. ``note`` explains.
    """
    _check_confidence(confidence)
    n_a, mean_a, sd_a, min_a = _sample_moments(candidate, "candidate")
    n_b, mean_b, sd_b, min_b = _sample_moments(baseline, "baseline")
    if not n_a or not n_b:
        return Ratio(None, None, None, None, None, False,
                     "no %s samples" % ("candidate" if not n_a else "baseline"))
    if mean_b == 0:
        return Ratio(None, None, None, None, None, False,
                     "baseline mean is 0: ratio undefined")
    r = mean_a / mean_b
    if sd_a is None or sd_b is None:
        return Ratio(r, None, None, None, None, False,
                     "fewer than 2 %s samples: no uncertainty"
                     % ("candidate" if sd_a is None else "baseline"))
    v_a = sd_a ** 2 / n_a
    v_b = sd_b ** 2 / n_b
    se = math.sqrt(v_a + r * r * v_b) / abs(mean_b)
    if not v_a and not v_b:
        return Ratio(r, 0.0, r, r, None, False, None)
    if df is not None:
        _check_df(df)
    elif v_a or r:
        df = _welch_df(v_a, n_a, r * r * v_b, n_b)
    else:
        # Constant zero candidate: only the baseline's variance term is left.
        df = float(n_b - 1)
    t2 = t_quantile(0.5 + confidence / 2, df) ** 2
    a_coef = mean_b * mean_b - t2 * v_b
    b_coef = mean_a * mean_b
    c_coef = mean_a * mean_a - t2 * v_a
    if a_coef <= 0:
        return Ratio(r, se, None, None, df, True,
                     "interval unbounded: the baseline mean is not significantly "
                     "different from 0 (|mean| / SE = %.3g <= t = %.3g); more samples "
                     "or a steadier baseline are needed"
                     % (abs(mean_b) / math.sqrt(v_b), math.sqrt(t2)),
                     _fieller_gap(a_coef, b_coef, c_coef))
    # B**2 - A C rewritten as a sum of non-negative terms (no cancellation).
    root = math.sqrt(t2 * (v_a * a_coef + v_b * mean_a * mean_a))
    # Numerically stable roots: the one away from zero first, then C / (A * it).
    if b_coef >= 0:
        far = b_coef + root
        hi = far / a_coef
        lo = c_coef / far if far else 0.0
    else:
        far = b_coef - root
        lo = far / a_coef
        hi = c_coef / far
    lo, hi = min(lo, r), max(hi, r)
    note = None
    if lo < 0 <= min_a and min_b >= 0:
        note = ("Fieller lower bound %.4g clipped at 0: no sample value is negative"
                % lo)
        lo = 0.0
    return Ratio(r, se, lo, hi, df, False, note)


# -- two-sample tests ---------------------------------------------------------

def welch_test(candidate, baseline):
    """Welch's two-sided t-test of equal means (a :data:`TestResult`).

    Arguments are sequences or :data:`Summary` objects. ``p`` is None for fewer
    than 2 values on a side, or when both samples are constant and equal
    (t = 0/0); constant samples with different means give t = +/-inf and p = 0.
    """
    n_a, mean_a, sd_a, _ = _sample_moments(candidate, "candidate")
    n_b, mean_b, sd_b, _ = _sample_moments(baseline, "baseline")
    if sd_a is None or sd_b is None:
        return TestResult(WELCH, None, None, None, None,
                          "fewer than 2 %s samples"
                          % ("candidate" if sd_a is None else "baseline"))
    v_a, v_b = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    diff = mean_a - mean_b
    if not v_a and not v_b:
        if diff == 0:
            return TestResult(WELCH, None, None, None, None,
                              "both samples constant and equal: t undefined")
        return TestResult(WELCH, math.copysign(math.inf, diff), None, 0.0, None, None)
    t = diff / math.sqrt(v_a + v_b)
    df = _welch_df(v_a, n_a, v_b, n_b)
    return TestResult(WELCH, t, df, min(1.0, 2.0 * t_sf(abs(t), df)), None, None)


@functools.lru_cache(maxsize=128)
def _u_tail_counts(m, n):
    """Upper-tail counts of U for samples of m and n without ties.

    Entry u is the number of the C(m + n, m) orderings whose U is >= u. The counts
    of U are the coefficients of the Gaussian binomial coefficient
    ``[m + n choose m]_q = prod_{i=1..m} (1 - q**(n + i)) / (1 - q**i)``, computed
    in exact integers (series truncated above degree m n, which is exact).
    """
    if m > n:
        return _u_tail_counts(n, m)
    size = m * n + 1
    c = [0] * size
    c[0] = 1
    for i in range(1, m + 1):
        k = n + i
        for j in range(size - 1, k - 1, -1):
            c[j] -= c[j - k]
        for j in range(i, size):
            c[j] += c[j - i]
    tail = [0] * (size + 1)
    for u in range(size - 1, -1, -1):
        tail[u] = tail[u + 1] + c[u]
    return tuple(tail)


def _sorted_sample(values, name):
    values = _check_values(values, name)
    values.sort()
    return values


def _runs(merged):
    """Lengths of the runs of equal values of a sorted list, in order."""
    runs = []
    for i, value in enumerate(merged):
        if i and value == merged[i - 1]:
            runs[-1] += 1
        else:
            runs.append(1)
    return tuple(runs)


@functools.lru_cache(maxsize=256)
def _u_tie_counts(m, n, runs):
    """``{2U: orderings}`` of the candidate's U over all C(m + n, m) labellings.

    The values are fixed, with ties in runs of the given lengths (sorted order);
    each labelling of m values as candidate is equally likely under the null. A
    candidate value in a run counts the baseline values of the runs below it and
    1/2 per baseline value of its own run, so j candidates among a run of t values
    after k values of which i are candidates add ``2 j (k - i) + j (t - j)`` to 2U,
    in C(t, j) ways. Exact integers (dynamic programming over the runs).
    """
    layers = [dict() for _ in range(m + 1)]
    layers[0][0] = 1
    seen = 0
    for t in runs:
        nxt = [dict() for _ in range(m + 1)]
        for i, layer in enumerate(layers):
            if not layer:
                continue
            lowest = max(0, t - (n - (seen - i)))
            for j in range(lowest, min(t, m - i) + 1):
                add = 2 * j * (seen - i) + j * (t - j)
                ways = math.comb(t, j)
                target = nxt[i + j]
                for s2, count in layer.items():
                    target[s2 + add] = target.get(s2 + add, 0) + count * ways
        layers = nxt
        seen += t
    return layers[m]


def mann_whitney(candidate, baseline, presorted=False):
    """Two-sided Mann-Whitney U test (a :data:`TestResult`); see the module doc.

    ``statistic`` is U of the candidate (pairs where it is larger, ties 1/2).
    ``presorted=True`` promises both sequences are sorted lists of finite floats
    (skips the checks and the sort: the exporter sorts each group once).
    ``p`` is None only when a side has no values; all values equal gives p = 1.
    """
    if presorted:
        a, b = candidate, baseline
    else:
        a = _sorted_sample(candidate, "candidate")
        b = _sorted_sample(baseline, "baseline")
    n_a, n_b = len(a), len(b)
    if not n_a or not n_b:
        return TestResult(MWU_EXACT, None, None, None, None,
                          "no %s samples" % ("candidate" if not n_a else "baseline"))
    left, right = bisect.bisect_left, bisect.bisect_right
    below = equal = 0
    for x in a:
        lo = left(b, x)
        below += lo
        if lo < n_b and b[lo] == x:
            equal += right(b, x, lo) - lo
    u_a = below + equal / 2.0
    total = math.comb(n_a + n_b, n_a)
    min_p = min(1.0, 2 / total)     # int / int: correctly rounded
    merged = a + b
    merged.sort()
    ties = len(set(merged)) != len(merged)
    u = max(u_a, n_a * n_b - u_a)
    if not ties and n_a <= MWU_EXACT_LIMIT and n_b <= MWU_EXACT_LIMIT:
        tail = _u_tail_counts(n_a, n_b)
        p = min(1.0, 2 * tail[int(u)] / total)
        return TestResult(MWU_EXACT, u_a, None, p, min_p, None)
    if ties and n_a <= MWU_EXACT_TIES_LIMIT and n_b <= MWU_EXACT_TIES_LIMIT:
        counts = _u_tie_counts(n_a, n_b, _runs(merged))
        twice = int(round(2 * u_a))
        below = sum(c for s2, c in counts.items() if s2 <= twice)
        above = sum(c for s2, c in counts.items() if s2 >= twice)
        p = min(1.0, 2 * min(below, above) / total)
        min_p = min(1.0, 2 * min(counts[min(counts)], counts[max(counts)]) / total)
        return TestResult(MWU_EXACT, u_a, None, p, min_p,
                          "exact permutation distribution of U with these ties")
    n = n_a + n_b
    tie_term = 0
    if ties:
        run = 1     # length of the current run of equal values
        for i in range(1, n):
            if merged[i] == merged[i - 1]:
                run += 1
            else:
                tie_term += run ** 3 - run
                run = 1
        tie_term += run ** 3 - run
    var = n_a * n_b / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if var <= 0:
        return TestResult(MWU_NORMAL, u_a, None, 1.0, min_p, None)
    z = (u - n_a * n_b / 2.0 - 0.5) / math.sqrt(var)
    p = min(1.0, math.erfc(z / math.sqrt(2.0)))
    return TestResult(MWU_NORMAL, u_a, None, p, min_p, None)


def holm(pvalues):
    """Holm-Bonferroni adjusted p-values, in the order given; None stays None.

    With the m non-None p-values sorted ascending, the i-th (from 0) becomes
    ``max over j <= i of min(1, (m - j) * p_j)``; rejecting where the adjusted p
    is below alpha controls the family-wise error rate at alpha.
    """
    order = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(order)
    out = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def fisher_greater(failed_a, ok_a, failed_b, ok_b):
    """One-sided p of Fisher's exact test that side a fails more often than side b.

    The probability, with the margins fixed (hypergeometric), of side a having at
    least ``failed_a`` of the ``failed_a + failed_b`` failures.
    """
    n_a, failed = failed_a + ok_a, failed_a + failed_b
    total = n_a + failed_b + ok_b
    tail = sum(math.comb(n_a, x) * math.comb(total - n_a, failed - x)
               for x in range(failed_a, min(failed, n_a) + 1))
    return tail / math.comb(total, failed)


def holm_levels(pvalues, alpha):
    """Holm's step-down decisions at family-wise level ``alpha``, in the order given.

    Returns ``[(rejected, level)]`` (None for a None p): with the m p-values sorted
    ascending, step k (from 1) compares ``p_(k)`` with ``alpha / (m - k + 1)`` and
    stops at the first that is not below it. ``level`` is the per-test level that
    decided each test: its own step's for a rejected one, the stopping step's for
    every test from there on (each of those has a p at or above that level, so an
    interval at ``1 - level`` contains the null value exactly when it is not
    rejected). Same rejections as :func:`holm`'s adjusted p < alpha.
    """
    order = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(order)
    out = [None] * len(pvalues)
    stopped = None
    for step, (p, i) in enumerate(order):
        level = alpha / (m - step)
        if stopped is None and p < level:
            out[i] = (True, level)
            continue
        if stopped is None:
            stopped = level
        out[i] = (False, stopped)
    return out


# -- comparisons on the log scale ---------------------------------------------

LogMoments = collections.namedtuple("LogMoments", ["n", "mean", "sd", "resolution"],
                                    defaults=(None,))
LogMoments.__doc__ = """n, mean and SD (divisor n - 1; None for n < 2) of the natural logs
of a sample whose values are all > 0 (see :func:`log_moments`); ``resolution`` the
step its values were written to (:func:`resolution`), None when unknown."""

LogRatio = collections.namedtuple(
    "LogRatio", ["ratio", "ci_low", "ci_high", "confidence", "df", "se", "t", "p",
                 "note"])
LogRatio.__doc__ = """Ratio of geometric means with its Welch t interval on log values.

``ratio`` = exp(mean log candidate - mean log baseline); ``ci_low``/``ci_high`` the
interval at ``confidence``; ``df`` the t quantile's degrees of freedom (Hsu's
``min(n_a, n_b) - 1`` unless given); ``se`` the standard error of the log ratio;
``t`` the statistic of log ratio = 0 and ``p`` its two-sided p-value (``p <
1 - confidence`` exactly when the interval excludes 1). Interval, t and p are None
with fewer than 2 values on a side, ``note`` says why.
"""


# finer than this a value's written step does not matter next to any real spread
_FINEST_STEP = 1e-6


def resolution(values):
    """The step the values were written to: 1 for whole numbers, 0.1, 0.01, ...

    A power of ten, the coarsest of which every value is a whole multiple (at
    most 1: ``10`` and ``20`` are read as whole numbers, not tens); None when the
    values carry more than six decimals, as measured timings do.
    """
    step = 1.0
    for v in values:
        while step >= _FINEST_STEP and not _whole(v / step):
            step /= 10.0
        if step < _FINEST_STEP:
            return None
    return step


def _whole(q):
    # relative: 10.5 / 0.1 is 105.00000000000001 in binary floating point
    return abs(q - round(q)) <= 1e-10 * max(1.0, abs(q))


def log_moments(values):
    """:data:`LogMoments` of a sample, None when a value is <= 0 (no log scale)."""
    if isinstance(values, LogMoments):
        return values
    values = _check_values(values)
    if any(v <= 0 for v in values):
        return None
    moments = moments_of_logs([math.log(v) for v in values])
    return moments._replace(resolution=resolution(values)) if values else moments


def moments_of_logs(logs):
    """:data:`LogMoments` of values already on the log scale (no step known)."""
    if not logs:
        return LogMoments(0, None, None)
    avg = math.fsum(logs) / len(logs)
    return LogMoments(len(logs), avg, _sd(logs, avg))


def log_sd_floor(moments):
    """The least log SD a side's written step allows (0 when no step is known).

    A value written to a step ``q`` is known only to within ``+/- q/2``: a rounding
    error of SD ``q / sqrt(12)``, on the log scale about that over the value. Two
    equal whole-second values are then not a sample with no spread (which would make
    any difference to the other side certain) but one whose spread is below what
    its writing shows.
    """
    if moments.resolution is None or moments.mean is None:
        return 0.0
    return moments.resolution / (math.sqrt(12.0) * math.exp(moments.mean))


def welch_log_df(a, b):
    """Welch-Satterthwaite df of two :data:`LogMoments` (None without spread).

    The run-level rule's df: with 2 to 5 run means a side it keeps the level under
    run-level effects and gives the power Hsu's df would not (the calibration in
    doc/source/design/statistics.rst).
    """
    if not a.sd and not b.sd:
        return None
    return _welch_df(a.sd ** 2 / a.n, a.n, b.sd ** 2 / b.n, b.n)


def hsu_df(n_a, n_b):
    """Hsu's conservative degrees of freedom of Welch's t: ``min(n_a, n_b) - 1``.

    The t quantile at this df is never smaller than the one the exact distribution
    of Welch's statistic needs, whatever the ratio of the variances (Hsu 1938;
    Scheffe 1970), so the test keeps its level at N = 2 or 3 where the
    Welch-Satterthwaite df can be too generous.
    """
    return float(min(n_a, n_b) - 1)


def log_ratio(candidate, baseline, confidence=DEFAULT_CONFIDENCE, df=None):
    """Ratio of geometric means with Welch's t interval on log values (a :data:`LogRatio`).

    Each argument is a sample of values > 0 or its :data:`LogMoments`. The interval
    is ``exp(d -/+ t(1 - alpha/2, df) * se)`` with ``d`` the difference of the mean
    logs and ``se = sqrt(s_a**2 / n_a + s_b**2 / n_b)`` of the log SDs; ``df`` is
    :func:`hsu_df` unless given. Raises ValueError when a sample has a value <= 0.
    """
    _check_confidence(confidence)
    a, b = log_moments(candidate), log_moments(baseline)
    if a is None or b is None:
        raise ValueError("%s has a value <= 0: no log-scale comparison"
                         % ("candidate" if a is None else "baseline"))
    if not a.n or not b.n:
        return LogRatio(None, None, None, confidence, None, None, None, None,
                        "no %s samples" % ("candidate" if not a.n else "baseline"))
    d = a.mean - b.mean
    r = math.exp(d)
    if a.sd is None or b.sd is None:
        return LogRatio(r, None, None, confidence, None, None, None, None,
                        "fewer than 2 %s samples: no interval"
                        % ("candidate" if a.sd is None else "baseline"))
    if df is None:
        df = hsu_df(a.n, b.n)
    _check_df(df)
    sd_a, sd_b = max(a.sd, log_sd_floor(a)), max(b.sd, log_sd_floor(b))
    se = math.sqrt(sd_a ** 2 / a.n + sd_b ** 2 / b.n)
    if se == 0:
        p = 1.0 if d == 0 else 0.0
        return LogRatio(r, r, r, confidence, df, 0.0, None, p,
                        "both samples constant: the interval is the point")
    half = t_quantile(0.5 + confidence / 2, df) * se
    t = d / se
    p = min(1.0, 2.0 * t_sf(abs(t), df))
    return LogRatio(r, math.exp(d - half), math.exp(d + half), confidence, df, se, t,
                    p, None)


def tost_p(d, se, df, low, high):
    """Two one-sided tests of equivalence: the p of ``low < log ratio < high``.

    ``d``/``se``: the log ratio and its SE; ``low``/``high`` the band's edges on the
    log scale. ``max`` of the one-sided p of "above low" and of "below high";
    ``p <= alpha`` exactly when the ``1 - 2 alpha`` interval lies inside the band
    (Schuirmann 1987).
    """
    if se == 0:
        return 0.0 if low < d < high else 1.0
    return max(t_sf((d - low) / se, df), t_sf((high - d) / se, df))


def outside_p(d, se, df, low, high):
    """Two-sided p of "the log ratio is outside [low, high]".

    ``2 * min`` of the one-sided p of "above high" and of "below low" (capped at 1):
    ``p <= alpha`` exactly when the ``1 - alpha`` interval lies wholly outside.
    """
    if se == 0:
        return 0.0 if not low <= d <= high else 1.0
    return min(1.0, 2.0 * min(t_sf((d - high) / se, df), t_sf((low - d) / se, df)))


DEFAULT_POWER = 0.8


def detectable_log_ratio(se, df, alpha, power=DEFAULT_POWER):
    """The smallest |log ratio| a two-sided test at ``alpha`` detects with ``power``.

    ``(t(1 - alpha/2, df) + t(power, df)) * se``: the usual approximation (the
    noncentral t replaced by a shifted central one), slightly optimistic at df 1-2.
    """
    return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * se


def n_per_side(log_effect, sd_a, sd_b, alpha, power=DEFAULT_POWER, band=None,
               limit=100000):
    """Fewest values per side for ``power`` at ``alpha`` with these log SDs; None past limit.

    Two-sided test of no difference when ``band`` is None (the true log ratio
    ``log_effect``); else TOST of equivalence within the log-scale band ``(low,
    high)`` when the true log ratio is ``log_effect``. Df = n - 1 (Hsu), the same
    shifted-t approximation as :func:`detectable_log_ratio`.
    """
    var = sd_a ** 2 + sd_b ** 2
    if band is not None:
        margin = min(log_effect - band[0], band[1] - log_effect)
        if margin <= 0:
            return None
    n = 2
    while n <= limit:
        se = math.sqrt(var / n)
        df = n - 1.0
        if band is None:
            if se == 0 or detectable_log_ratio(se, df, alpha, power) <= abs(log_effect):
                return n
        elif se == 0 or (t_quantile(1 - alpha, df) + t_quantile(power, df)) * se <= margin:
            return n
        n = n + 1 if n < 64 else int(n * 1.05) + 1
    return None
