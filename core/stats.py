"""Aggregates with Google Benchmark's definitions (src/statistics.cc)."""

from __future__ import annotations

import math

from .results import Counter, Run


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


# Name, function, unit. Order is the order of the report rows.
STATISTICS = [
    ("mean", mean, "time"),
    ("median", median, "time"),
    ("stddev", stddev, "time"),
    ("cv", cv, "percentage"),
]


def compute_aggregates(reports: list[Run]) -> list[Run]:
    """Aggregates of a benchmark's repetitions, empty if fewer than 2 succeeded."""
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
    aggregates = []
    for stat_name, compute, unit in STATISTICS:
        run = Run(
            name=first.name,
            run_name=first.run_name,
            run_type="aggregate",
            family_index=first.family_index,
            per_family_instance_index=first.per_family_instance_index,
            repetitions=first.repetitions,
            repetition_index=None,
            threads=first.threads,
            aggregate_name=stat_name,
            aggregate_unit=unit,
            iterations=len(reports),
            real_accumulated_time=compute(real),
            cpu_accumulated_time=compute(cpu),
            time_unit=first.time_unit,
            batch_size=first.batch_size,
            samples=[r.real_accumulated_time / r.iterations for r in succeeded if r.iterations],
        )
        if unit == "time":
            run.real_accumulated_time *= rescale
            run.cpu_accumulated_time *= rescale
        for key, values in counter_values.items():
            proto = counter_proto[key]
            run.counters[key] = Counter(compute(values), proto.is_rate, proto.one_k)
        aggregates.append(run)
    return aggregates
