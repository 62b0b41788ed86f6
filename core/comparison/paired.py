"""A paired comparison: two builds measured round by round, judged on the ratios of each round.

``ireebench compare A.vmfb B.vmfb`` measures both modules in one process,
every round one repetition of each in a fresh random order: what the machine
does between rounds falls on both sides of a round alike, and the random
order makes the sides exchangeable, so on identical builds the log ratios
``l_k = log(B_k / A_k)`` are symmetric about 0. On them,
:func:`signed_rank_test` (scipy's ``wilcoxon``: exact up to
:data:`EXACT_LIMIT` rounds without ties or zeros, else the normal
approximation) and :func:`pseudomedian_interval` (Hodges-Lehmann and Tukey's
interval, which excludes 0 exactly when the test rejects).
:func:`compare_paired` compares one benchmark; :func:`judge_paired` judges
them together into the :class:`~ireebench.comparison.model.Comparison` every
compare reporter prints (``faster``/``slower``, ``no significant change``
within ``±max(detectable, threshold)``, else ``cannot judge`` with the rounds
that would decide it). The method and its measured rates: docs/compare.md,
"Paired A/B". Plain Python: no scipy (a development dependency only), no numpy.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field

from .model import (
    BenchmarkComparison,
    CompareOptions,
    Comparison,
    compare_exactly,
    is_regression,
    significance,
)
from .utest import ASYMPTOTIC, EXACT, adjusted_pvalues, geometric_mean
from .verdicts import CANNOT_JUDGE, NO_CHANGE

# Up to this many nonzero differences without ties the null distribution is
# counted exactly (scipy.stats.wilcoxon's switch is also 50).
EXACT_LIMIT = 50
# The rounds of a paired comparison by default: 30 pairs give the signed-rank
# test an interval of about ±0.4 standard deviations of the log ratios.
DEFAULT_ROUNDS = 30
PAIRED_NOTE = "paired: {rounds} rounds, interleaved in random order in one process"


@dataclass(frozen=True)
class SignedRankResult:
    """The signed-rank test of paired differences (``statistic``: T+, the rank sum of
    the positive ones, as scipy's ``wilcoxon(..., alternative="greater")``)."""

    statistic: float
    pvalue: float
    method: str  # "exact" or "asymptotic"
    n: int  # the nonzero differences tested


@dataclass(frozen=True)
class PseudomedianInterval:
    """The Hodges-Lehmann estimate of the differences' center and its interval
    (``None``: too few differences for that confidence)."""

    estimate: float
    low: float | None
    high: float | None
    confidence: float


def _finite(values, what: str) -> list[float]:
    sample = [float(value) for value in values]
    if not sample:
        raise ValueError(f"{what}: empty sample")
    if not all(map(math.isfinite, sample)):
        raise ValueError(f"{what}: values must be finite")
    return sample


@functools.lru_cache(maxsize=128)
def signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the ``2**n`` sign patterns give each rank sum T+ = 0 .. n(n+1)/2."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total, count in enumerate(counts):
            grown[total + rank] += count
        counts = grown
    return tuple(counts)


def _midranks(values: list[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for index in range(start, end + 1):
            ranks[order[index]] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks


def _tie_term(values: list[float]) -> float:
    """sum(t^3 - t) over the tie groups of ``values``."""
    counts: dict[float, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return float(sum(t ** 3 - t for t in counts.values() if t > 1))


def _sigma(n: int, tie_term: float = 0.0) -> float:
    """The standard deviation of T+ under the null hypothesis, ties corrected."""
    return math.sqrt(max(n * (n + 1) * (2 * n + 1) / 24.0 - tie_term / 48.0, 0.0))


def choose_method(n: int, has_ties: bool) -> str:
    """scipy's ``method="auto"``: exact up to :data:`EXACT_LIMIT` differences without
    ties or zeros."""
    return EXACT if n <= EXACT_LIMIT and not has_ties else ASYMPTOTIC


def signed_rank_test(differences, method: str = "auto") -> SignedRankResult:
    """The two-sided Wilcoxon signed-rank test of paired differences (see the module doc).

    :raises ValueError: an empty sample, a value that is not finite, an unknown method.
    """
    if method not in ("auto", EXACT, ASYMPTOTIC):
        raise ValueError(f"unknown method {method!r} (auto, {EXACT}, {ASYMPTOTIC})")
    sample = _finite(differences, "differences")
    zeros = sum(1 for d in sample if d == 0)
    nonzero = [d for d in sample if d != 0]
    n = len(nonzero)
    if n == 0:  # every pair equal: nothing tells the sides apart
        return SignedRankResult(0.0, 1.0, ASYMPTOTIC if method == "auto" else method, 0)
    magnitudes = [abs(d) for d in nonzero]
    ranks = _midranks(magnitudes)
    plus = math.fsum(rank for rank, d in zip(ranks, nonzero) if d > 0)
    total = n * (n + 1) / 2.0
    tie_term = _tie_term(magnitudes)
    if method == "auto":
        method = choose_method(n, tie_term > 0 or zeros > 0)
    if method == EXACT:
        counts = signed_rank_counts(n)
        low = min(plus, total - plus)
        below = sum(counts[: int(low) + 1])
        pvalue = 2.0 * below / 2 ** n
    else:
        sigma = _sigma(n, tie_term)
        if sigma == 0.0:
            pvalue = 1.0
        else:
            z = (plus - total / 2.0) / sigma
            pvalue = math.erfc(abs(z) / math.sqrt(2.0))
    return SignedRankResult(plus, min(max(pvalue, 0.0), 1.0), method, n)


def walsh_averages(values: list[float]) -> list[float]:
    """The ``n(n+1)/2`` averages ``(v_i + v_j) / 2``, ``i <= j``, sorted."""
    return sorted((a + values[j]) / 2.0 for i, a in enumerate(values) for j in range(i, len(values)))


@functools.lru_cache(maxsize=1024)
def interval_rank(n: int, confidence: float, method: str, tie_term: float = 0.0) -> int:
    """The rank k of the lower bound among the ``M = n(n+1)/2`` sorted Walsh averages.

    The largest k with ``P(T+ <= k - 1) <= (1 - confidence) / 2`` under the null
    hypothesis (exact, or the normal approximation with the continuity
    correction); the interval is ``[w_(k), w_(M + 1 - k)]``. 0: too few
    differences for that confidence (the interval is unbounded).
    """
    tail = (1.0 - confidence) / 2.0
    total = n * (n + 1) // 2
    if method == EXACT:
        counts = signed_rank_counts(n)
        cumulative, k, whole = 0, 0, 2 ** n
        for t, count in enumerate(counts[: total // 2 + 1]):
            cumulative += count
            if cumulative / whole > tail:
                break
            k = t + 1
        return k
    z = statistics.NormalDist().inv_cdf(1.0 - tail)
    k = math.floor(total / 2.0 - z * _sigma(n, tie_term) + 0.5)
    return max(0, min(k, total // 2))


def _middle(ordered: list[float]) -> float:
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def pseudomedian_interval(differences, confidence: float = 0.95,
                          method: str = "auto") -> PseudomedianInterval:
    """The Hodges-Lehmann estimate of paired differences and Tukey's interval.

    ``method`` picks the null distribution behind the interval's ranks, as in
    :func:`signed_rank_test` (``auto``: exact up to :data:`EXACT_LIMIT` values
    without ties or zeros).

    :raises ValueError: an empty sample, a value that is not finite, a confidence
        outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence} is not between 0 and 1")
    sample = _finite(differences, "differences")
    n = len(sample)
    magnitudes = [abs(d) for d in sample]
    tie_term = _tie_term(magnitudes)
    if method == "auto":
        method = choose_method(n, tie_term > 0 or 0.0 in magnitudes)
    averages = walsh_averages(sample)
    k = interval_rank(n, confidence, method, tie_term)
    if k < 1:
        return PseudomedianInterval(_middle(averages), None, None, confidence)
    return PseudomedianInterval(_middle(averages), averages[k - 1], averages[len(averages) - k],
                                confidence)


def log_ratios(old: list[float], new: list[float]) -> list[float]:
    """``log(new_k / old_k)`` of each round (positive values only)."""
    if len(old) != len(new):
        raise ValueError(f"paired samples differ in size ({len(old)} and {len(new)})")
    if min(old + new) <= 0:
        raise ValueError("paired values must be positive")
    return [math.log(b) - math.log(a) for a, b in zip(old, new)]


@dataclass
class PairedItem:
    """One benchmark on its way through :func:`judge_paired`: its comparison and the
    log ratios of its rounds (empty when it was not compared)."""

    result: BenchmarkComparison
    ratios: list[float] = field(default_factory=list)


def rounds_needed(rounds: int, low: float | None, high: float | None, limit: float) -> int:
    """About the rounds that would narrow the interval of a change to within
    ``±limit`` around where it is: its half-width shrinks as one over the square
    root of the rounds (at least twice as many as now)."""
    rounds = max(rounds, 1)
    if low is None or high is None or limit <= 0:
        return 2 * rounds
    half = (math.log1p(high) - math.log1p(low)) / 2.0
    center = (math.log1p(high) + math.log1p(low)) / 2.0
    room = min(math.log1p(limit), -math.log1p(-min(limit, 0.99))) - abs(center)
    if room <= 0 or half <= 0:
        return 4 * rounds
    return max(2 * rounds, math.ceil(rounds * (half / room) ** 2))


def compare_paired(name: str, old: list[float], new: list[float], options: CompareOptions,
                   time_unit: str = "", metric: str = "",
                   higher_is_better: bool = False) -> PairedItem:
    """One benchmark's paired rounds (``old[k]`` and ``new[k]`` measured in round k;
    times in seconds, other metrics as they are) compared by its own signed-rank
    test; :func:`judge_paired` weighs the suite."""
    result = BenchmarkComparison(name, time_unit, len(old), len(new), metric=metric)
    threshold = options.threshold_for(name)
    result.threshold = threshold.fraction if threshold is not None else 0.0
    if not old or not new:
        result.notes.append("no paired round measured")
        return PairedItem(result)
    result.old, result.new = statistics.median(old), statistics.median(new)
    if result.old > 0 and result.new > 0:
        result.median_change = result.new / result.old - 1.0
    if min(old + new) <= 0:
        result.notes.append(f"a value of {metric or 'the metric'} is not positive: no ratio")
        return PairedItem(result)
    ratios = log_ratios(old, new)
    if len(ratios) >= 2 and all(ratio == ratios[0] for ratio in ratios):
        # A metric that does not vary between rounds (memory): the change is exact.
        compare_exactly(result, result.old, result.new, higher_is_better)
        return PairedItem(result, ratios)
    test = signed_rank_test(ratios)
    interval = pseudomedian_interval(ratios, options.confidence)
    result.method = test.method
    result.pvalue = test.pvalue
    result.ratio = math.exp(interval.estimate)
    result.change = result.ratio - 1.0
    if interval.low is not None:
        result.low, result.high = math.expm1(interval.low), math.expm1(interval.high)
    result.verdict = significance(result.change, test.pvalue, options.alpha, higher_is_better)
    result.regression = is_regression(result, higher_is_better)
    return PairedItem(result, ratios)


def _percent(fraction: float) -> str:
    percent = fraction * 100
    return f"{percent:.0f}%" if percent >= 100 else f"{percent:.3g}%"


def judge_paired(comparison: Comparison, items: list[PairedItem], options: CompareOptions,
                 higher_is_better: bool = False) -> Comparison:
    """The suite's verdicts (see the module doc): the p-values adjusted over the
    benchmarks tested (``options.correction``), the detectable change, ``cannot
    judge`` and what would decide it, the regressions and the geometric mean;
    ``comparison.benchmarks`` becomes the items' results."""
    tested = [item for item in items if item.result.pvalue is not None]
    adjusted = adjusted_pvalues([item.result.pvalue for item in tested], options.correction)
    comparison.tested = len(tested)
    level = options.alpha
    if options.correction != "none" and len(tested) > 1:
        level = options.alpha / len(tested)
    for item, pvalue in zip(tested, adjusted):
        r = item.result
        r.adjusted_pvalue = pvalue
        r.verdict = significance(r.change, pvalue, options.alpha, higher_is_better)
        at_level = pseudomedian_interval(item.ratios, 1.0 - level)
        if at_level.low is not None:
            r.detectable = math.exp((at_level.high - at_level.low) / 2.0) - 1.0
    for item in items:
        r = item.result
        if r.method == "equal values":
            r.detectable = 0.0
        if options.detectable is not None and r.verdict == NO_CHANGE and r.pvalue is not None:
            limit = max(options.detectable, r.threshold)
            rounds = len(item.ratios)
            if r.low is None:
                r.verdict = CANNOT_JUDGE
                _add_reason(r, f"no change could have been significant with {rounds} rounds")
            elif r.low < -limit or r.high > limit:
                r.verdict = CANNOT_JUDGE
                _add_reason(r, f"its interval [{r.low * 100:+.1f}%, {r.high * 100:+.1f}%] "
                               f"reaches beyond ±{_percent(limit)}")
            if r.verdict == CANNOT_JUDGE:
                more = rounds_needed(rounds, r.low, r.high, limit)
                r.advice = (f"more rounds would decide it: --benchmark_repetitions={more} "
                            f"(now {rounds})")
        r.regression = is_regression(r, higher_is_better)
    comparison.benchmarks = [item.result for item in items]
    ratios = [b.ratio for b in comparison.benchmarks if b.ratio is not None]
    if ratios:
        comparison.geomean_change = geometric_mean(ratios) - 1.0
        comparison.geomean_count = len(ratios)
    comparison.higher_is_better = higher_is_better
    return comparison


def _add_reason(result: BenchmarkComparison, reason: str) -> None:
    result.reason = f"{result.reason}; {reason}" if result.reason else reason

