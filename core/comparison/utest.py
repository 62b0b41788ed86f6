"""The statistics of ``ireebench compare``: the standard library (numpy for large samples).

* :func:`mann_whitney_u`: the two-sided Mann-Whitney U test, as
  ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided")`` computes it:
  exact (the permutation distribution of U, no ties) when a sample has at
  most 8 values and there are no ties, otherwise the normal approximation
  with the tie correction and the continuity correction.
* :func:`ratio_interval`: the Hodges-Lehmann estimate of the ratio new/old
  (the median of the ``m * n`` ratios ``new_j / old_i``) and its
  distribution-free confidence interval (Moses): order statistics of those
  ratios whose ranks come from the null distribution of U, so the interval
  at ``confidence = 1 - alpha`` excludes 1 exactly when the U test rejects
  at ``alpha`` (no ties). The model is a change by a factor (a shift of the
  logarithms), the natural one for run times.
* :func:`shift_interval`: the same for the difference new - old (values
  that can be 0 or negative, where a ratio means nothing);
* :func:`detectable_ratio`: the smallest change the test could have found;
* :func:`adjusted_pvalues`: Benjamini-Hochberg or Holm over a suite;
* :func:`student_t_sf`, :func:`student_t_isf`: Student's t distribution
  (the regularized incomplete beta function's continued fraction), for a
  run judged against the spread of a history's runs;
* :func:`geometric_mean`.

Everything is computed in plain Python over sorted lists (U from bisection:
the count of pairs x > y, ties a half, which is the rank sum's value; tie
groups with a Counter), except the ratios of samples with more than
:data:`SMALL_PAIRS` pairs (numpy, in :mod:`.pairs`, imported only for
them): numpy's cost per call, not the arithmetic, is what a report of
200,000 benchmarks of a few repetitions spent its time on, and importing
it is what ``ireebench compare`` of a few files would spend its time on.
The null distribution of U and the interval's ranks are computed once per
``(m, n)``.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections import Counter
from dataclasses import dataclass
from statistics import NormalDist

# A sample of at most this many values and no ties: the exact distribution
# of U (scipy's rule for method="auto").
EXACT_MAX_SIZE = 8
EXACT = "exact"
ASYMPTOTIC = "asymptotic"
METHODS = ("auto", EXACT, ASYMPTOTIC)
# At most this many pairs (m * n): plain Python, else numpy (see the module docstring).
SMALL_PAIRS = 4096


@dataclass(frozen=True)
class UTestResult:
    """The U test of two samples (``statistic`` is U of the first, as scipy's)."""

    statistic: float
    pvalue: float
    method: str  # "exact" or "asymptotic"


@dataclass(frozen=True)
class RatioInterval:
    """The estimated ratio new/old and its interval (``None``: too few values for it)."""

    ratio: float
    low: float | None
    high: float | None
    confidence: float


def _values(values, what: str) -> list[float]:
    """A sample (any iterable of numbers, a numpy array of any shape) as a list of
    floats; an empty one, or one with a value that is not finite, is refused."""
    if hasattr(values, "ravel"):  # a numpy array: its values, flattened
        values = values.ravel().tolist()
    sample = list(map(float, values))
    if not sample:
        raise ValueError(f"{what}: empty sample")
    if not all(map(math.isfinite, sample)):
        raise ValueError(f"{what}: values must be finite")
    return sample


def tie_groups(values) -> tuple[bool, float]:
    """Whether ``values`` has ties, and the tie term sum(t^3 - t) over its tie groups."""
    if len(set(values)) == len(values):
        return False, 0.0
    counts = [count for count in Counter(values).values() if count > 1]
    return True, float(sum(count ** 3 - count for count in counts))


@functools.lru_cache(maxsize=256)
def u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the ``C(m+n, m)`` orderings give U = 0 .. m*n (exact integers).

    The coefficients of the Gaussian binomial ``[m+n choose m]_q =
    prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)``, multiplied and divided as
    power series truncated at degree ``m*n`` (exact: the result has that
    degree, and each coefficient depends only on lower ones).
    """
    m, n = min(m, n), max(m, n)
    size = m * n + 1
    coefficients = [0] * size
    coefficients[0] = 1
    for i in range(1, m + 1):
        step = n + i
        for u in range(size - 1, step - 1, -1):  # times (1 - q^(n+i))
            coefficients[u] -= coefficients[u - step]
        for u in range(i, size):  # divided by (1 - q^i)
            coefficients[u] += coefficients[u - i]
    return tuple(coefficients)


def _exact_sf(u: int, m: int, n: int) -> float:
    """P(U >= u) under the null hypothesis (no ties)."""
    counts = u_counts(m, n)
    u = max(0, u)
    if u >= len(counts):
        return 0.0
    return sum(counts[u:]) / math.comb(m + n, m)


def _null_sigma(m: int, n: int, tie_term: float = 0.0) -> float:
    """The standard deviation of U under the null hypothesis, ties corrected."""
    total = m + n
    correction = tie_term / (total * (total - 1)) if total > 1 else 0.0
    return math.sqrt(max(m * n / 12.0 * ((total + 1) - correction), 0.0))


def choose_method(m: int, n: int, has_ties: bool) -> str:
    """scipy's ``method="auto"``: exact for a small sample without ties."""
    if (m <= EXACT_MAX_SIZE or n <= EXACT_MAX_SIZE) and not has_ties:
        return EXACT
    return ASYMPTOTIC


def mann_whitney_u(x, y, method: str = "auto", continuity: bool = True) -> UTestResult:
    """The two-sided Mann-Whitney U test of ``x`` against ``y``.

    :param method: ``auto`` (see :func:`choose_method`), ``exact`` or
        ``asymptotic``.
    :param continuity: the continuity correction of the normal approximation.
    :raises ValueError: an empty sample, a value that is not finite, an
        unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (one of {', '.join(METHODS)})")
    x, y = _values(x, "x"), _values(y, "y")
    m, n = len(x), len(y)
    # U of x is the count of pairs with x > y, ties counted a half (the rank
    # sum's value): for each x, the y below it and half the y equal to it.
    ordered = sorted(y)
    u1 = sum(bisect.bisect_left(ordered, a) + bisect.bisect_right(ordered, a) for a in x) / 2.0
    has_ties, tie_term = tie_groups(x + y)
    u = max(u1, m * n - u1)
    if method == "auto":
        method = choose_method(m, n, has_ties)
    if method == EXACT:
        # As scipy: with ties (only when asked for) U is truncated to an integer.
        p = 2.0 * _exact_sf(int(u), m, n)
    else:
        sigma = _null_sigma(m, n, tie_term)
        if sigma == 0.0:  # every value equal: nothing tells the samples apart
            p = 1.0
        else:
            z = (u - m * n / 2.0 - (0.5 if continuity else 0.0)) / sigma
            p = math.erfc(z / math.sqrt(2.0))  # 2 * P(Z > z)
    return UTestResult(u1, min(max(p, 0.0), 1.0), method)


@functools.lru_cache(maxsize=1024)
def interval_rank(m: int, n: int, confidence: float, method: str,
                  tie_term: float = 0.0) -> int:
    """The rank k of the lower bound among the sorted ``m*n`` differences.

    The largest k with ``P(U <= k - 1) <= (1 - confidence) / 2`` under the
    null hypothesis (exact, or the normal approximation with the continuity
    correction); the interval is ``[d_(k), d_(m*n + 1 - k)]``. 0 means the
    samples are too small for that confidence: the interval is unbounded.
    """
    tail = (1.0 - confidence) / 2.0
    if method == EXACT:
        counts = u_counts(m, n)
        total = math.comb(m + n, m)
        cumulative, k = 0, 0
        for u, count in enumerate(counts[: len(counts) // 2 + 1]):
            cumulative += count
            if cumulative / total > tail:
                break
            k = u + 1
        return k
    sigma = _null_sigma(m, n, tie_term)
    z = NormalDist().inv_cdf(1.0 - tail)
    k = math.floor(m * n / 2.0 - z * sigma + 0.5)
    return max(0, min(k, (m * n) // 2))


def _sorted_differences(old: list[float], new: list[float]) -> list[float]:
    """The ``m * n`` differences ``new_j - old_i``, sorted."""
    if len(old) * len(new) <= SMALL_PAIRS:
        return sorted([b - a for b in new for a in old])
    from . import pairs  # numpy: see LAZY_IMPORTS in tests/core/test_imports.py

    return pairs.sorted_differences(old, new)


def _middle(differences: list[float]) -> float:
    middle = len(differences) // 2
    return differences[middle] if len(differences) % 2 else \
        (differences[middle - 1] + differences[middle]) / 2.0


def _bounds(differences: list[float], m: int, n: int, confidence: float, method: str,
            tie_term: float) -> tuple[float, float] | None:
    """Moses' interval of the shift: order statistics of the sorted differences."""
    k = interval_rank(m, n, confidence, method, tie_term)
    if k < 1:
        return None
    return differences[k - 1], differences[m * n - k]


def _method(method: str, m: int, n: int, values: list[float]) -> tuple[str, float]:
    has_ties, tie_term = tie_groups(values)
    return (choose_method(m, n, has_ties) if method == "auto" else method), tie_term


def ratio_interval(old, new, confidence: float = 0.95, method: str = "auto") -> RatioInterval:
    """The Hodges-Lehmann ratio new/old and Moses' interval at ``confidence``.

    ``method`` picks the distribution of U behind the interval's ranks, as
    in :func:`mann_whitney_u` (``auto``: the same choice as the test).

    :raises ValueError: an empty sample, a value that is not positive and
        finite, a confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence} is not between 0 and 1")
    old, new = _values(old, "old"), _values(new, "new")
    if min(old) <= 0 or min(new) <= 0:
        raise ValueError("times must be positive")
    m, n = len(old), len(new)
    method, tie_term = _method(method, m, n, old + new)
    differences = _sorted_differences([math.log(v) for v in old], [math.log(v) for v in new])
    ratio = math.exp(_middle(differences))
    bounds = _bounds(differences, m, n, confidence, method, tie_term)
    if bounds is None:
        return RatioInterval(ratio, None, None, confidence)
    return RatioInterval(ratio, math.exp(bounds[0]), math.exp(bounds[1]), confidence)


def shift_interval(old, new, confidence: float = 0.95, method: str = "auto") -> RatioInterval:
    """The Hodges-Lehmann shift new - old and Moses' interval at ``confidence``.

    The additive model, for values that can be 0 or negative (a count of
    page faults, a heap's growth), where a ratio has no meaning: the
    median of the ``m * n`` differences and the same order statistics as
    :func:`ratio_interval`'s (returned in a :class:`RatioInterval` whose
    ``ratio`` is the shift).

    :raises ValueError: an empty sample, a value that is not finite, a
        confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence} is not between 0 and 1")
    old, new = _values(old, "old"), _values(new, "new")
    m, n = len(old), len(new)
    method, tie_term = _method(method, m, n, old + new)
    differences = _sorted_differences(old, new)
    bounds = _bounds(differences, m, n, confidence, method, tie_term)
    if bounds is None:
        return RatioInterval(_middle(differences), None, None, confidence)
    return RatioInterval(_middle(differences), bounds[0], bounds[1], confidence)


def detectable_ratio(old, new, alpha: float, method: str = "auto") -> float | None:
    """The smallest change by a factor the U test could have found in samples like these.

    Half the width of Moses' interval of the ratio at ``1 - alpha``, as a
    factor (``sqrt(high / low)``): the interval excludes 1, so the test
    rejects at ``alpha``, only once the new times move by more than that
    from where they are. ``None``: too few values for an interval at that
    level (no change is detectable). Positive values only.
    """
    interval = ratio_interval(old, new, 1.0 - alpha, method)
    if interval.low is None:
        return None
    return math.sqrt(interval.high / interval.low)


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                          -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (``scipy.stats.t.sf``)."""
    if df <= 0:
        raise ValueError(f"degrees of freedom {df} must be positive")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def student_t_isf(p: float, df: float) -> float:
    """The ``t`` with ``P(T > t) = p`` (``scipy.stats.t.isf``), for 0 < p < 0.5."""
    if not 0.0 < p < 0.5:
        raise ValueError(f"tail probability {p} is not between 0 and 0.5")
    low, high = 0.0, 1.0
    while student_t_sf(high, df) > p:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if student_t_sf(middle, df) > p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return (low + high) / 2.0


CORRECTIONS = ("bh", "holm", "none")


def adjusted_pvalues(pvalues: list[float], correction: str = "bh") -> list[float]:
    """The p-values adjusted for testing them all at once, in their order.

    * ``bh``: Benjamini-Hochberg (``p_(i) * m / i``, made monotone from the
      largest down): the expected share of false discoveries among the
      significant ones is at most alpha; when no benchmark changed (identical
      builds) that is the chance of any false alarm, so the family-wise
      rate is alpha too;
    * ``holm``: Holm-Bonferroni (``p_(i) * (m - i + 1)``, made monotone from
      the smallest up): the chance of any false alarm is at most alpha
      whatever changed, at a cost in power for large suites;
    * ``none``: as they are.

    As ``statsmodels.stats.multitest.multipletests`` computes ``fdr_bh`` and
    ``holm``, capped at 1.

    :raises ValueError: an unknown correction.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r} (one of {', '.join(CORRECTIONS)})")
    m = len(pvalues)
    if correction == "none" or m < 2:
        return list(pvalues)
    order = sorted(range(m), key=lambda index: pvalues[index])
    adjusted = [0.0] * m
    if correction == "bh":
        running = 1.0
        for rank in range(m, 0, -1):  # from the largest p-value down
            index = order[rank - 1]
            running = min(running, pvalues[index] * m / rank)
            adjusted[index] = running
    else:
        running = 0.0
        for rank, index in enumerate(order):  # from the smallest up
            running = max(running, min(1.0, pvalues[index] * (m - rank)))
            adjusted[index] = running
    return adjusted


def geometric_mean(values) -> float:
    """exp(mean(log(values))) of positive values."""
    sample = _values(values, "values")
    if min(sample) <= 0:
        raise ValueError("values must be positive")
    return math.exp(math.fsum(map(math.log, sample)) / len(sample))
