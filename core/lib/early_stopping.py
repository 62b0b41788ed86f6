"""A library for MLPerf LoadGen's early-stopping rule: which latency percentiles a run
can vouch for (the ``scenarios`` plugin's reports, the ``llm`` plugin's distributions).

LoadGen (``loadgen/early_stopping.cc``, ``results.cc``) treats every query
as a Bernoulli trial, "slower than the true p-th percentile" having
probability ``1 - p``, and asks how often ``t`` or fewer such queries among
``n`` would be seen if the true percentile were lower than claimed::

    odds(h, t, p) = P[Binomial(h + t, 1 - p) <= t] = BetaRegularized(p, h, 1 + t)

and accepts at 99 % confidence when that is below 1 %. Three answers
follow, each exact here (LoadGen finds them by a cached binary search whose
bounds are heuristics; the condition it searches for is monotone in ``n``
and in ``t``, so the closed forms below are the same numbers):

* :func:`minimum_queries`: the fewest queries that can estimate the p-th
  percentile at all (``t = 1``): 64 for p90, 662 for p99, 6636 for p99.9
  (LoadGen's "Need to process at least 662 queries for early stopping").
* :func:`percentile_estimate`: the early-stopping estimate of the p-th
  percentile (SingleStream, MultiStream): with the latencies sorted, the
  ``t``-th largest, where ``t`` is the largest count with
  ``P[Binomial(n, 1 - p) <= t] < 1 %`` (LoadGen "would discard t - 1
  highest latency queries"). It is a bound the true percentile stays under
  with 99 % confidence, so it is at least the sample percentile.
* :func:`queries_for_bound`: for a latency bound (Server), with ``t``
  queries over it, the queries a run needs for the bound to hold at the
  p-th percentile (``h + t``; LoadGen's "Would need to run at least N more
  queries").

The binomial tail is summed in log space from ``math.lgamma`` (no scipy):
``t`` terms, so a call costs O(t).
"""

from __future__ import annotations

import math

CONFIDENCE = 0.99  # LoadGen's: the estimate holds with 99 % confidence
TOLERANCE = 0.0  # LoadGen's `d`: the percentile itself, no slack

# The latency percentiles LoadGen's summary reports (results.cc).
PERCENTILES = (0.50, 0.90, 0.95, 0.97, 0.99, 0.999)


def binomial_cdf(t: int, n: int, q: float) -> float:
    """``P[Binomial(n, q) <= t]``."""
    if t >= n:
        return 1.0
    if t < 0:
        return 0.0
    log_q, log_not_q = math.log(q), math.log1p(-q)
    log_n = math.lgamma(n + 1)
    total = 0.0
    for x in range(t + 1):
        log_term = (log_n - math.lgamma(x + 1) - math.lgamma(n - x + 1)
                    + x * log_q + (n - x) * log_not_q)
        total += math.exp(log_term)
    return min(total, 1.0)


def _passes(t: int, n: int, p: float) -> bool:
    """LoadGen's test: ``t`` slow queries among ``n`` still vouch for the p-th percentile."""
    return binomial_cdf(t, n, 1.0 - (p - TOLERANCE)) < 1.0 - CONFIDENCE


def _boundary(low: int, high: int, holds) -> int:
    """The least value in ``(low, high]`` for which ``holds`` (false at ``low``, true at
    ``high``, monotone between): a bisection."""
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def queries_for_bound(t: int, p: float) -> int:
    """The fewest queries with which ``t`` over the bound still meet it at the p-th percentile.

    LoadGen's ``h + t`` of the Server scenario (``find_min_passing(t, p)``
    plus the ``t`` queries over the bound): the passing condition only gets
    easier with more queries, so a doubling then a bisection finds it.
    """
    low = t  # fails: t of t queries are slow
    high = max(2 * t, 1)
    while not _passes(t, high, p):
        low, high = high, high * 2
    return _boundary(low, high, lambda n: _passes(t, n, p))


def minimum_queries(p: float) -> int:
    """The fewest queries that can estimate the p-th percentile (662 for p99)."""
    return queries_for_bound(1, p)


def discarded(n: int, p: float) -> int | None:
    """LoadGen's ``t`` for ``n`` queries: the estimate is the ``t``-th largest latency.

    ``None`` when ``n`` is under :func:`minimum_queries`. The condition gets
    harder as ``t`` grows, and fails at ``t = n`` (``P[B <= n] = 1``).
    """
    if not _passes(1, n, p):
        return None
    return _boundary(1, n, lambda t: not _passes(t, n, p)) - 1


def percentile_estimate(ordered: list[float], p: float) -> float | None:
    """The early-stopping estimate of the p-th percentile of sorted ``ordered``, or None."""
    t = discarded(len(ordered), p)
    return None if t is None else ordered[len(ordered) - t]


def estimates(ordered: list[float]) -> dict[float, float | None]:
    """The early-stopping estimate of each of LoadGen's percentiles (None: too few values)."""
    return {p: percentile_estimate(ordered, p) for p in PERCENTILES}


def missing_note(found: dict[float, float | None], count: int, what: str = "queries") -> str:
    """What the percentile counters are, and which are missing: ``pNN_ms: bounds at 99 %
    confidence (early stopping); p99 needs 662 queries, p99.9 6636 (ran 300)``, or ``""``.
    Each ``pNN_ms`` is LoadGen's estimate, an upper bound the true percentile stays
    under, so it is at least the sample percentile: the label says so."""
    parts = []
    if any(value is not None for value in found.values()):
        parts.append(f"pNN_ms: bounds at {CONFIDENCE:.0%} confidence (early stopping)")
    needs = [f"{percentile_name(p)} {minimum_queries(p)}" for p, value in found.items()
             if value is None]
    if needs:
        needs[0] = needs[0].replace(" ", " needs ", 1) + f" {what}"
        parts.append(f"{', '.join(needs)} (ran {count})")
    return "; ".join(parts)


def sample_percentile(ordered: list[float], p: float) -> float:
    """LoadGen's sample percentile: ``ordered[int(n * p)]`` (sorted, n > 0)."""
    return ordered[min(int(len(ordered) * p), len(ordered) - 1)]


def percentile_name(p: float) -> str:
    """``p99``, ``p99.9``: the percentile as flags and counters spell it."""
    text = f"{p * 100:.6f}".rstrip("0").rstrip(".")
    return f"p{text}"


__all__ = ["CONFIDENCE", "PERCENTILES", "estimates", "minimum_queries", "missing_note",
           "percentile_estimate", "percentile_name", "queries_for_bound", "sample_percentile"]
