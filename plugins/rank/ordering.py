"""The arithmetic of a ranking that holds (plain Python, no scipy).

* :func:`kendall_tau`: Kendall's tau-b between two orders of the same
  items (scipy.stats.kendalltau's default variant; 1 = the same order,
  -1 = reversed), how stable a ranking is between two passes;
* :func:`signed_rank_test`: the two-sided Wilcoxon signed-rank test of
  paired differences (scipy.stats.wilcoxon: the exact null distribution
  for up to 50 pairs without ties or zeros, else the normal approximation
  with the tie correction), the paired test of the re-rank;
* :func:`interpolate`: a device's baseline time at a point of its sequence
  of measurements, linear between the baseline measurements around it,
  which corrects each candidate's ratio for drift on its device;
* :func:`interval`: a ratio's confidence interval, from its samples.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence

from ireebench.stats import median, median_ci

# Up to this many nonzero differences without ties the null distribution is
# counted exactly (scipy's default switch is also 50).
EXACT_LIMIT = 50


def kendall_tau(first: Sequence, second: Sequence) -> float | None:
    """Kendall's tau-b of the items both orders hold (None for fewer than two).

    ``first`` and ``second`` list item ids, best first; an item's position
    is its score. Without ties tau-b is (concordant - discordant) / pairs.
    """
    common = [item for item in first if item in set(second)]
    if len(common) < 2:
        return None
    position = {item: index for index, item in enumerate(second)}
    ranks = [position[item] for item in common]  # first's order is 0..n-1
    n = len(ranks)
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            if ranks[i] < ranks[j]:
                concordant += 1
            elif ranks[i] > ranks[j]:
                discordant += 1
    pairs = n * (n - 1) // 2
    return (concordant - discordant) / pairs


def _midranks(values: list[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@functools.lru_cache(maxsize=64)
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2**n sign patterns give each rank sum 0..n(n+1)/2."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total in range(len(counts)):
            grown[total + rank] += counts[total]
        counts = grown
    return tuple(counts)


def signed_rank_test(differences: Sequence[float]) -> float | None:
    """The two-sided p-value of the Wilcoxon signed-rank test (None for no data).

    Zero differences are dropped (scipy's default ``zero_method="wilcox"``).
    """
    nonzero = [d for d in differences if d != 0 and not math.isnan(d)]
    n = len(nonzero)
    if n == 0:
        return None
    ranks = _midranks([abs(d) for d in nonzero])
    plus = sum(rank for rank, d in zip(ranks, nonzero) if d > 0)
    total = n * (n + 1) / 2
    statistic = min(plus, total - plus)
    ties = len(set(ranks)) != n
    if n <= EXACT_LIMIT and not ties:
        counts = _signed_rank_counts(n)
        below = sum(counts[: int(statistic) + 1])
        return min(1.0, 2 * below / 2 ** n)
    mean = total / 2
    tie_terms = 0.0
    for rank in set(ranks):
        t = ranks.count(rank)
        tie_terms += t ** 3 - t
    variance = n * (n + 1) * (2 * n + 1) / 24 - tie_terms / 48
    if variance <= 0:
        return 1.0
    z = (statistic - mean) / math.sqrt(variance)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2)))


def interpolate(points: Sequence[tuple[float, float]], at: float) -> float | None:
    """The value at ``at`` of the line through ``points`` ((position, value),
    sorted by position): linear between the two around it, the nearest one
    outside them; None without points."""
    if not points:
        return None
    positions = [position for position, _ in points]
    index = bisect.bisect_left(positions, at)
    if index == 0:
        return points[0][1]
    if index == len(points):
        return points[-1][1]
    (x0, y0), (x1, y1) = points[index - 1], points[index]
    if x1 == x0:
        return y1
    return y0 + (y1 - y0) * (at - x0) / (x1 - x0)



def interval(ratio: float | None, values: Sequence[float],
             confidence: float | None) -> list[float] | None:
    """``ratio``'s ``confidence`` interval: the distribution-free interval of the
    median of ``values`` (its samples, or its per-round ratios), scaled as their
    median is to ``ratio``; None without one (too few values, no confidence)."""
    found = median_ci(list(values), confidence) if ratio and confidence and values else None
    middle = median(list(values)) if found else 0.0
    return [found[0] * ratio / middle, found[1] * ratio / middle] if middle else None
