"""The arithmetic of a ranking that holds (plain Python, no scipy).

* :func:`kendall_tau`: Kendall's tau-b between two orders of the same
  items (scipy.stats.kendalltau's default variant; 1 = the same order,
  -1 = reversed), how stable a ranking is between two passes;
* :func:`signed_rank_test`: the two-sided Wilcoxon signed-rank test of
  paired differences (scipy.stats.wilcoxon's, as ``ireebench compare``
  judges paired rounds), the paired test of the re-rank;
* :func:`interpolate`: a device's baseline time at a point of its sequence
  of measurements, linear between the baseline measurements around it,
  which corrects each candidate's ratio for drift on its device;
* :func:`interval`: a ratio's confidence interval, from its samples.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from ireebench.comparison import paired
from ireebench.stats import median, median_ci


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


def signed_rank_test(differences: Sequence[float]) -> float | None:
    """The two-sided p-value of the Wilcoxon signed-rank test (the comparison engine's,
    :func:`ireebench.comparison.paired.signed_rank_test`); None without a nonzero one."""
    finite = [d for d in differences if math.isfinite(d)]
    return paired.signed_rank_test(finite).pvalue if any(finite) else None


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
