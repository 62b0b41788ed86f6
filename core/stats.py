"""Aggregates with Google Benchmark's definitions (src/statistics.cc).

A :class:`Statistic` is what Google Benchmark calls a custom statistic
(``ComputeStatistics(name, fn, unit)``): a name, a function of the
repetitions' values and a unit. Every statistic becomes one aggregate row
per benchmark, ``<run_name>_<name>``, built the way Google Benchmark builds
``_mean``: ``run_type`` aggregate, ``aggregate_name``, ``aggregate_unit``
(``time`` or ``percentage``), ``iterations`` = the number of repetitions, and
the statistic of each counter.

Google Benchmark's four (:data:`STATISTICS`: mean, median, stddev, cv) are
always computed when a benchmark has two or more successful repetitions.
Further statistics are computed after them, in order, when a plugin lists
them in ``config.stash[EXTRA_STATISTICS]`` (the built-in ``statistics``
plugin does, for ``--benchmark_statistics``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from .results import Counter, Run
from .stash import StashKey


@dataclass(frozen=True)
class Statistic:
    """One aggregate row per benchmark: ``<run_name>_<name>``.

    ``compute(values)`` receives one value per successful repetition (the
    accumulated times, or a counter's values) and returns a float, or
    ``None`` when the statistic is not defined for them (too few values):
    then no row is reported (for a counter: no counter). ``unit`` is
    ``"time"`` (the value is a time, reported per iteration in the
    benchmark's time unit, like ``_mean``) or ``"percentage"`` (a fraction,
    reported as is, like ``_cv``; a time statistic must scale with its
    values, a percentage must not change when they are scaled).
    """

    name: str
    compute: Callable[[list[float]], float | None]
    unit: str = "time"


def mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def median(values: list[float]) -> float:
    if len(values) < 3:
        return mean(values)
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def stddev(values: list[float]) -> float:
    """Sample standard deviation (n - 1), 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    avg = mean(values)
    return math.sqrt(math.fsum((v - avg) ** 2 for v in values) / (len(values) - 1))


def cv(values: list[float]) -> float:
    """Coefficient of variation as a fraction."""
    if len(values) < 2:
        return 0.0
    avg = mean(values)
    return stddev(values) / avg if avg else 0.0


# --- the median's distribution-free interval (order statistics) ---------------


def _log_binomial_half(n: int, i: int) -> float:
    """log P(B = i) for B ~ Binomial(n, 1/2)."""
    return math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2)


@functools.lru_cache(maxsize=4096)
def median_ci_rank(n: int, confidence: float) -> int | None:
    """The largest 1-based ``k`` with ``P(x(k) <= median <= x(n+1-k)) >= confidence``.

    That is the largest ``k <= (n+1)/2`` with ``P(B <= k-1) <= (1-confidence)/2``,
    ``B ~ Binomial(n, 1/2)``; ``None`` when even ``[x(1), x(n)]`` covers the
    median less often. Terms more than 10 standard deviations below ``n/2``
    (under 1e-22 together, below any confidence a float can tell from 1)
    are skipped, so a call costs O(sqrt(n)).
    """
    tail = (1.0 - confidence) / 2.0
    start = max(0, math.floor(n / 2 - 5 * math.sqrt(n)))
    best = start if start >= 1 else None  # P(B <= start - 1) is negligible
    cdf = 0.0
    for i in range(start, (n + 1) // 2):
        cdf += math.exp(_log_binomial_half(n, i))  # P(B <= i)
        if cdf > tail:
            break
        best = i + 1
    return best


def minimum_repetitions(confidence: float) -> int:
    """The fewest values with a ``confidence`` interval of the median."""
    n = 2
    while median_ci_rank(n, confidence) is None:
        n += 1
    return n


def median_ci(values: list[float], confidence: float) -> tuple[float, float] | None:
    """The distribution-free ``confidence`` interval of the median (order statistics)."""
    k = median_ci_rank(len(values), confidence)
    if k is None:
        return None
    ordered = sorted(values)
    return ordered[k - 1], ordered[len(ordered) - k]


# Google Benchmark's aggregates, in the order of its report rows.
STATISTICS = [
    Statistic("mean", mean, "time"),
    Statistic("median", median, "time"),
    Statistic("stddev", stddev, "time"),
    Statistic("cv", cv, "percentage"),
]

# Statistics computed after Google Benchmark's four, for every benchmark of
# the run (set by a plugin in ireebench_configure).
EXTRA_STATISTICS = StashKey[list]()


def compute_aggregates(reports: list[Run], statistics: list[Statistic] | None = None) -> list[Run]:
    """Aggregates of a benchmark's repetitions, empty if fewer than 2 succeeded.

    ``statistics``: the statistics to compute (default: Google Benchmark's four).
    """
    succeeded = [r for r in reports if not r.error_occurred]
    if len(succeeded) < 2:
        return []
    first = reports[0]
    run_iterations = first.iterations
    real = [r.real_accumulated_time for r in succeeded]
    cpu = [r.cpu_accumulated_time for r in succeeded]
    counter_values: dict[str, list[float]] = {}
    counter_proto: dict[str, Counter] = {}
    for run in succeeded:
        for key, counter in run.counters.items():
            counter_values.setdefault(key, []).append(counter.value)
            counter_proto.setdefault(key, counter)
    # Google Benchmark divides by the number of reports, failed ones included.
    rescale = len(reports) / run_iterations if run_iterations else 0.0
    samples = [r.real_accumulated_time / r.iterations for r in succeeded if r.iterations]
    aggregates = []
    for statistic in STATISTICS if statistics is None else statistics:
        real_value = statistic.compute(real)
        if real_value is None:
            continue
        cpu_value = statistic.compute(cpu)
        run = Run(
            name=first.name,
            run_name=first.run_name,
            function=first.function,
            params=dict(first.params),
            run_type="aggregate",
            family_index=first.family_index,
            per_family_instance_index=first.per_family_instance_index,
            repetitions=first.repetitions,
            repetition_index=None,
            threads=first.threads,
            aggregate_name=statistic.name,
            aggregate_unit=statistic.unit,
            iterations=len(reports),
            real_accumulated_time=real_value,
            cpu_accumulated_time=0.0 if cpu_value is None else cpu_value,
            time_unit=first.time_unit,
            batch_size=first.batch_size,
            samples=list(samples),
        )
        if statistic.unit == "time":
            run.real_accumulated_time *= rescale
            run.cpu_accumulated_time *= rescale
        for key, values in counter_values.items():
            value = statistic.compute(values)
            if value is not None:
                proto = counter_proto[key]
                run.counters[key] = Counter(value, proto.is_rate, proto.one_k)
        aggregates.append(run)
    aggregate_device_time(reports, aggregates, statistics)
    return aggregates


def _by_name(statistics: list[Statistic] | None) -> dict[str, Statistic]:
    return {statistic.name: statistic
            for statistic in (STATISTICS if statistics is None else statistics)}


def aggregate_counters(reports: list[Run], aggregates: list[Run], names,
                       statistics: list[Statistic] | None = None) -> None:
    """Sets the counters ``names`` on each aggregate: its statistic of the repetitions'
    values, as :func:`compute_aggregates` does for the counters a repetition had.

    For a plugin that adds a counter to the repetitions after the aggregates
    were computed (``--counter``, in ``ireebench_workload_finish``). A
    counter some successful repetition lacks is left out.
    """
    succeeded = [r for r in reports if r.run_type != "aggregate" and not r.error_occurred]
    if len(succeeded) < 2:
        return
    by_name = _by_name(statistics)
    for name in names:
        if any(name not in r.counters for r in succeeded):
            continue
        proto = succeeded[0].counters[name]
        values = [r.counters[name].value for r in succeeded]
        for run in aggregates:
            statistic = by_name.get(run.aggregate_name)
            value = None if statistic is None else statistic.compute(values)
            if value is not None:
                run.counters[name] = Counter(value, proto.is_rate, proto.one_k)


def aggregate_device_time(reports: list[Run], aggregates: list[Run],
                          statistics: list[Statistic] | None = None) -> None:
    """Sets each aggregate's ``device_accumulated_time``: its statistic of the
    repetitions' device times, scaled as the real time is.

    For a plugin that learns the device time after the aggregates were
    computed (``--device_time``, from a profiling pass). The aggregates keep
    ``None`` unless every successful repetition has a device time; an
    aggregate whose statistic is not in ``statistics`` (default: Google
    Benchmark's four) keeps its value.
    """
    repetitions = [r for r in reports if r.run_type != "aggregate"]
    succeeded = [r for r in repetitions if not r.error_occurred]
    values = [r.device_accumulated_time for r in succeeded]
    if len(succeeded) < 2 or any(value is None for value in values):
        return
    by_name = _by_name(statistics)
    # As compute_aggregates: Google Benchmark divides by the number of reports.
    iterations = repetitions[0].iterations
    rescale = len(repetitions) / iterations if iterations else 0.0
    for run in aggregates:
        statistic = by_name.get(run.aggregate_name)
        if statistic is None:
            continue
        value = statistic.compute(values)
        if value is not None and statistic.unit == "time":
            value *= rescale
        run.device_accumulated_time = value


__all__ = [
    "EXTRA_STATISTICS", "STATISTICS", "Statistic", "aggregate_counters",
    "aggregate_device_time", "compute_aggregates", "median", "median_ci",
    "minimum_repetitions"
]
