"""The statistics of ``ireebench compare``: numpy and the standard library only.

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
* :func:`geometric_mean`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

# A sample of at most this many values and no ties: the exact distribution
# of U (scipy's rule for method="auto").
EXACT_MAX_SIZE = 8
EXACT = "exact"
ASYMPTOTIC = "asymptotic"
METHODS = ("auto", EXACT, ASYMPTOTIC)


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


def _sample(values, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        raise ValueError(f"{what}: empty sample")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what}: values must be finite")
    return array


def rank_average(values) -> tuple[np.ndarray, np.ndarray]:
    """1-based ranks with ties given their average rank, and the size of each tie group."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(starts, values.size))
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return ranks, counts


def u_counts(m: int, n: int) -> list[int]:
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
    return coefficients


def _exact_sf(u: int, m: int, n: int) -> float:
    """P(U >= u) under the null hypothesis (no ties)."""
    counts = u_counts(m, n)
    u = max(0, u)
    if u >= len(counts):
        return 0.0
    return sum(counts[u:]) / math.comb(m + n, m)


def _tie_term(ties: np.ndarray) -> float:
    return float(np.sum(ties.astype(float) ** 3 - ties))


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
    x, y = _sample(x, "x"), _sample(y, "y")
    m, n = x.size, y.size
    ranks, ties = rank_average(np.concatenate((x, y)))
    u1 = float(np.sum(ranks[:m]) - m * (m + 1) / 2.0)
    u = max(u1, m * n - u1)
    if method == "auto":
        method = choose_method(m, n, bool(np.any(ties > 1)))
    if method == EXACT:
        # As scipy: with ties (only when asked for) U is truncated to an integer.
        p = 2.0 * _exact_sf(int(u), m, n)
    else:
        sigma = _null_sigma(m, n, _tie_term(ties))
        if sigma == 0.0:  # every value equal: nothing tells the samples apart
            p = 1.0
        else:
            z = (u - m * n / 2.0 - (0.5 if continuity else 0.0)) / sigma
            p = math.erfc(z / math.sqrt(2.0))  # 2 * P(Z > z)
    return UTestResult(u1, min(max(p, 0.0), 1.0), method)


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


def ratio_interval(old, new, confidence: float = 0.95, method: str = "auto") -> RatioInterval:
    """The Hodges-Lehmann ratio new/old and Moses' interval at ``confidence``.

    ``method`` picks the distribution of U behind the interval's ranks, as
    in :func:`mann_whitney_u` (``auto``: the same choice as the test).

    :raises ValueError: an empty sample, a value that is not positive and
        finite, a confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence} is not between 0 and 1")
    old, new = _sample(old, "old"), _sample(new, "new")
    if np.any(old <= 0) or np.any(new <= 0):
        raise ValueError("times must be positive")
    m, n = old.size, new.size
    ties = rank_average(np.concatenate((old, new)))[1]
    if method == "auto":
        method = choose_method(m, n, bool(np.any(ties > 1)))
    differences = np.sort(np.subtract.outer(np.log(new), np.log(old)).ravel())
    ratio = float(np.exp(np.median(differences)))
    k = interval_rank(m, n, confidence, method, _tie_term(ties))
    if k < 1:
        return RatioInterval(ratio, None, None, confidence)
    low = float(np.exp(differences[k - 1]))
    high = float(np.exp(differences[m * n - k]))
    return RatioInterval(ratio, low, high, confidence)


def geometric_mean(values) -> float:
    """exp(mean(log(values))) of positive values."""
    array = _sample(values, "values")
    if np.any(array <= 0):
        raise ValueError("values must be positive")
    return float(np.exp(np.mean(np.log(array))))
