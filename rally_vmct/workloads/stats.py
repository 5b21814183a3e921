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
"""Descriptive statistics for benchmark samples, stdlib only.

Everything here answers ``None`` when a figure cannot be computed from the data
(no samples, a single sample, a zero mean or baseline), never a made-up zero, and
raises :class:`ValueError` naming the argument on bad input.

Methods
-------
* **SD** is the sample standard deviation (divisor ``n - 1``); ``None`` for n < 2.
* **CV** is ``SD / |mean|``; ``None`` when SD is undefined or the mean is 0.
* **Percentiles** use linear interpolation between closest ranks: position
  ``k = (n - 1) * q`` in the sorted sample, value
  ``x[floor(k)] + (x[ceil(k)] - x[floor(k)]) * (k - floor(k))``. This is numpy's
  default (``method="linear"``, Hyndman & Fan type 7) and exactly what Rally's
  own report uses (``rally.task.processing.utils.percentile``).
* **Confidence interval of the mean**: ``mean -/+ t(1 - alpha/2, n - 1) * SD / sqrt(n)``
  with the Student t quantile computed here (:func:`t_quantile`).
* **Ratio of two means** ``R = mean_a / mean_b`` (a = candidate, b = baseline,
  independent samples), uncertainty by the delta method::

      se_a = SD_a / sqrt(n_a)        se_b = SD_b / sqrt(n_b)
      SE(R) = sqrt(se_a**2 + R**2 * se_b**2) / |mean_b|
            (= |R| * sqrt((se_a/mean_a)**2 + (se_b/mean_b)**2) when mean_a != 0)

  and the interval ``R -/+ t(1 - alpha/2, df) * SE(R)`` where ``df`` is the
  Welch-Satterthwaite degrees of freedom of the two variance terms
  ``v_a = se_a**2 / mean_b**2`` and ``v_b = R**2 * se_b**2 / mean_b**2``::

      df = (v_a + v_b)**2 / (v_a**2 / (n_a - 1) + v_b**2 / (n_b - 1))

  The delta method is a first-order approximation: good while the baseline mean
  is well away from zero relative to its standard error (``se_b / |mean_b|``
  small, say < 0.1); the exporter shows that relative error so readers can judge.
"""

import collections
import functools
import math
import numbers
import statistics

PERCENTILES = (50, 90, 95, 99)
DEFAULT_CONFIDENCE = 0.95

Summary = collections.namedtuple(
    "Summary",
    ["n", "mean", "sd", "cv", "min", "max", "p50", "p90", "p95", "p99",
     "ci_low", "ci_high", "ci_half_width"])
Summary.__doc__ = """Descriptive statistics of one sample (see :func:`summary`).

``ci_low``/``ci_high`` bound the confidence interval of the mean and
``ci_half_width`` is their half distance; all three are None for n < 2.
"""

Ratio = collections.namedtuple(
    "Ratio", ["ratio", "se", "ci_low", "ci_high", "df", "note"])
Ratio.__doc__ = """Ratio of two sample means with its delta-method uncertainty.

``ratio`` = mean(candidate) / mean(baseline); ``se`` is its standard error (the
delta-method standard deviation of the ratio estimate); ``ci_low``/``ci_high`` the
confidence interval; ``df`` the Welch-Satterthwaite degrees of freedom (None when
both samples have zero spread, the interval then being the point itself).
``note`` says in words why a field is None (else None).
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


def _percentile_sorted(ordered, percent):
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
    return _percentile_sorted(sorted(_check_values(values)), percent)


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
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t, df):
    """Upper tail P(T > t) of Student's t with ``df`` degrees of freedom."""
    if t == 0:
        return 0.5
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t > 0 else 1.0 - tail


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
    if (isinstance(df, bool) or not isinstance(df, numbers.Real)
            or not df > 0 or math.isnan(df)):
        raise ValueError("df (degrees of freedom) must be a number > 0, got %r" % (df,))
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
    p50, p90, p95, p99 = (_percentile_sorted(ordered, p) for p in PERCENTILES)
    return Summary(n, avg, sd_value, _cv(sd_value, avg), ordered[0], ordered[-1],
                   p50, p90, p95, p99, ci_low, ci_high, half)


def _sample_moments(values, name):
    if isinstance(values, Summary):
        return values.n, values.mean, values.sd
    values = _check_values(values, name)
    n = len(values)
    if not n:
        return 0, None, None
    avg = math.fsum(values) / n
    return n, avg, _sd(values, avg)


def ratio(candidate, baseline, confidence=DEFAULT_CONFIDENCE):
    """mean(candidate) / mean(baseline) with delta-method SE and CI (a :data:`Ratio`).

    Each argument is a sequence of numbers or a :data:`Summary` of one. Returns
    ratio None when either sample is empty or the baseline mean is 0; SE and
    interval None when either sample has fewer than 2 values. ``note`` explains.
    """
    _check_confidence(confidence)
    n_a, mean_a, sd_a = _sample_moments(candidate, "candidate")
    n_b, mean_b, sd_b = _sample_moments(baseline, "baseline")
    if not n_a or not n_b:
        return Ratio(None, None, None, None, None,
                     "no %s samples" % ("candidate" if not n_a else "baseline"))
    if mean_b == 0:
        return Ratio(None, None, None, None, None,
                     "baseline mean is 0: ratio undefined")
    r = mean_a / mean_b
    if sd_a is None or sd_b is None:
        return Ratio(r, None, None, None, None,
                     "fewer than 2 %s samples: no uncertainty"
                     % ("candidate" if sd_a is None else "baseline"))
    v_a = (sd_a ** 2 / n_a) / mean_b ** 2
    v_b = r ** 2 * (sd_b ** 2 / n_b) / mean_b ** 2
    se = math.sqrt(v_a + v_b)
    if se == 0:
        return Ratio(r, 0.0, r, r, None, None)
    df = (v_a + v_b) ** 2 / (v_a ** 2 / (n_a - 1) + v_b ** 2 / (n_b - 1))
    half = t_quantile(0.5 + confidence / 2, df) * se
    return Ratio(r, se, r - half, r + half, df, None)
