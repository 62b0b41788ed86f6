"""A run judged against a history of stored runs: the gate that learns the noise.

IREE's benchmark CI gates on a hand-set golden time per machine times a
tolerance, which is flaky because two runs of the same code on the same
machine differ by more than one run's repetitions say. Here the baseline of
each benchmark is its recent stored runs (their number is the store's
``--window``), and a benchmark **regresses** when all three hold:

1. **outside the runs' own spread**: the new median is above the *band*,
   from the lowest lower bound to the highest upper bound of the stored
   runs' median intervals (each run's distribution-free ``confidence``
   interval of its median, :func:`ireebench.stats.median_ci`; ``[min, max]``
   of a run with too few repetitions for one, the value itself for a run
   with one). The band is what run-to-run drift has done so far;
2. **significant**: the two-sided Mann-Whitney U test of the new
   repetitions against the stored runs' pooled repetitions rejects at
   ``alpha`` (the new run has :data:`~ireebench.comparison.model.MIN_REPETITIONS`
   or more repetitions; otherwise the verdict is ``inconclusive``);
3. **beyond the threshold**: the Hodges-Lehmann change new/pooled exceeds
   the benchmark's ``--threshold``.

A benchmark the test finds slower (or faster) but whose median stays in the
band is ``no significant change``, with a note: the stored runs have drifted
as much before. The change, its interval and the p-value are those of
:func:`ireebench.comparison.model.compare_benchmark` against the pooled
repetitions, so the table reads like a comparison of two reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from ..stats import median, median_ci
from .inputs import METRICS, BenchmarkFile, BenchmarkRows
from .model import (
    FASTER,
    NO_CHANGE,
    SLOWER,
    CompareOptions,
    Comparison,
    compare_benchmark,
    context_notes,
)
from .utest import geometric_mean


@dataclass(frozen=True)
class RunSpread:
    """One stored run of one benchmark: its median and the interval of it (seconds)."""

    label: str
    median: float
    low: float
    high: float
    count: int


def run_spread(label: str, values: list[float], confidence: float) -> RunSpread:
    """The run's median and its ``confidence`` interval (``[min, max]`` without one)."""
    interval = median_ci(values, confidence) or (min(values), max(values))
    return RunSpread(label, median(values), interval[0], interval[1], len(values))


def _baseline(name: str, history: list[BenchmarkFile], metric: str, confidence: float):
    """The pooled rows and the spreads of every stored run that measured ``name``."""
    pooled: BenchmarkRows | None = None
    spreads: list[RunSpread] = []
    for report in history:
        rows = report.benchmarks.get(name)
        if rows is None:
            continue
        values, _ = rows.values(metric)
        if not values or min(values) <= 0:
            continue
        if pooled is None:
            pooled = BenchmarkRows(name, rows.time_unit)
        pooled.repetitions[metric].extend(values)
        spreads.append(run_spread(report.path, values, confidence))
    return pooled, spreads


def _within_band(result, spreads: list[RunSpread]) -> None:
    """Demotes a significant change whose median stays in the stored runs' band."""
    result.band_low = min(spread.low for spread in spreads)
    result.band_high = max(spread.high for spread in spreads)
    moved = {SLOWER: result.new is not None and result.new > result.band_high,
             FASTER: result.new is not None and result.new < result.band_low}
    if result.verdict in moved and not moved[result.verdict]:
        result.notes.append(
            f"{result.verdict} than the pooled runs (p={result.pvalue:.3g}) but within the "
            f"band of their medians' intervals: the stored runs drifted as much")
        result.verdict = NO_CHANGE
    result.regression = result.verdict == SLOWER and result.change > result.threshold


def compare_history(history: list[BenchmarkFile], new: BenchmarkFile, options: CompareOptions,
                    label: str = "history", notes=()) -> Comparison:
    """Judges every benchmark of ``new`` against its stored runs (see the module doc).

    ``history``: the stored runs, newest first (each a :class:`BenchmarkFile`
    whose ``path`` is its label). A benchmark no stored run measured is
    listed as only in new; an empty history compares nothing and passes
    (the first run of a new gate), with a note (``notes``, what the
    history's loader said of it, when it said something).
    """
    if options.metric not in METRICS:
        raise UsageError(f"--metric={options.metric}: one of {', '.join(METRICS)}")
    comparison = Comparison(label, new.path, options, [],
                            history=[report.path for report in history])
    for name, new_rows in new.benchmarks.items():
        pooled, spreads = _baseline(name, history, options.metric, options.confidence)
        if pooled is None:
            comparison.only_new.append(name)
            continue
        result = compare_benchmark(name, pooled, new_rows, options)
        result.baseline_runs = [spread.label for spread in spreads]
        if result.new is not None:
            _within_band(result, spreads)
        comparison.benchmarks.append(result)
    comparison.notes += list(notes)
    if not history:
        if not notes:
            comparison.notes.append(f"{label}: no stored run to learn a baseline from")
        comparison.notes.append("nothing compared: no baseline yet")
    else:
        comparison.notes += context_notes(history[0], new)
    ratios = [b.ratio for b in comparison.benchmarks if b.ratio is not None]
    if ratios:
        comparison.geomean_change = geometric_mean(ratios) - 1.0
        comparison.geomean_count = len(ratios)
    return comparison
