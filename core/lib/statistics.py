"""A library for the statistics of repeated measurements and adaptive stopping.

The percentiles, the median's relative precision and the outlier fraction the
``statistics`` plugin reports, and its stopping rule
(:func:`continue_until_precise`, ``--benchmark_min_rel_accuracy``), which reads
the run's settings the plugin keeps under the stash key :data:`STATE`; a plugin
that ranks by another time (``ireebench rank``) applies the rule to its times.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ireebench.errors import PluginError
from ireebench.stash import StashKey
from ireebench.stats import Statistic, median, median_ci

DEFAULT_CONFIDENCE = 0.95
DEFAULT_MAX_TIME = 10.0


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear between order statistics (type 7)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def relative_precision(values: list[float], confidence: float) -> float | None:
    """Half the interval's width relative to the median (``None``: no interval)."""
    interval = median_ci(values, confidence)
    middle = median(values)
    if interval is None or not middle:
        return None
    return (interval[1] - interval[0]) / (2.0 * abs(middle))


def outlier_fraction(values: list[float]) -> float:
    """The fraction of values outside [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (Tukey's fences)."""
    q1, q3 = percentile(values, 25), percentile(values, 75)
    fence = 1.5 * (q3 - q1)
    return sum(1 for v in values if v < q1 - fence or v > q3 + fence) / len(values)


@dataclass
class StatisticsState:
    """The run's statistics settings (``config.stash[STATE]``)."""

    confidence: float
    statistics: list[Statistic]
    target: float | None = None  # --benchmark_min_rel_accuracy
    max_time: float = DEFAULT_MAX_TIME
    minimum: int = 2  # repetitions before the rule may stop
    # perf_counter at each workload's start, by run name (with interleaved
    # repetitions several workloads are under way at once)
    started: dict = field(default_factory=dict)
    noted: bool = False  # the note about too few repetitions was printed
    # Workloads that spent --benchmark_max_time short of the target; ``quiet``:
    # counted, not warned of (a ranking says it once, for all its measurements).
    unreached: int = 0
    quiet: bool = False
    # A statistic that raised or returned something else than a number: the
    # run ends with it once the benchmark's rows are reported.
    failure: PluginError | None = None

    @property
    def needs_interval(self) -> bool:
        return any(s.name in ("ci_lower", "precision") for s in self.statistics)


STATE = StashKey[StatisticsState]()


def continue_until_precise(config, workload, values: list[float], what: str = "") -> bool | None:
    """The adaptive rule on ``values``, one per repetition so far (the real times;
    a plugin that ranks by another time gives those, ``what`` naming them in the
    warning): another repetition until the median is precise enough or the budget
    is spent. None without ``--benchmark_min_rel_accuracy``."""
    state = config.stash.get(STATE, None)
    if state is None or state.target is None:
        return None
    n = len(values)
    minimum = max(state.minimum, config.getoption("benchmark_repetitions"))
    precision = relative_precision(values, state.confidence)
    reached = n >= minimum and precision is not None and precision <= state.target
    if reached:
        return False
    started = state.started.get(workload.run_name, time.perf_counter())
    if time.perf_counter() - started < state.max_time:
        return True
    state.unreached += 1
    if state.quiet:
        return False
    shown = "no interval yet" if precision is None else f"{what}+-{100 * precision:.2f} %"
    config.stderr.write(
        f"ireebench: warning: {workload.run_name}: --benchmark_max_time={state.max_time:g}s "
        f"spent after {n} repetitions ({shown}); --benchmark_min_rel_accuracy="
        f"{state.target:g} not reached\n")
    return False


__all__ = ["DEFAULT_CONFIDENCE", "STATE", "continue_until_precise", "outlier_fraction",
           "percentile", "relative_precision"]
