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
   ``alpha`` after the correction over the suite (the new run has
   :data:`~ireebench.comparison.model.MIN_REPETITIONS` or more
   repetitions; otherwise the verdict is ``inconclusive``);
3. **beyond the threshold**: the Hodges-Lehmann change new/pooled exceeds
   the benchmark's ``--threshold``;
4. **beyond the runs' own spread** (two stored runs or more): the new
   median is an outlier among the stored runs' medians, as conbench's
   lookback z-score asks, but with the uncertainty of a few runs: on the
   logarithms, ``t = (log new - mean) / (s * sqrt(1 + 1/N))`` over the ``N``
   kept runs (``s`` their standard deviation, at least the runs' own noise
   of their medians), two-sided against Student's t with ``N - 1`` degrees
   of freedom at ``alpha``. Repetitions of one run share its conditions, so
   the U test alone (2.) takes every shift between runs for a change; this
   test asks whether the shift is larger than the runs have shifted. Both
   must reject: the verdict's p-value is the larger of the two (and is the
   one the correction adjusts).

**Disturbed stored runs are left out.** A stored run whose report says its
machine was busy (:mod:`.disturbance`: load above the CPUs, other busy
processes, this benchmark's repetitions in separate regimes, its CPU share
below one CPU on ``local-sync`` when real time is compared) is left out of
the benchmark's baseline, pooled repetitions and band alike, and named
(``left_out``), as long as one quiet run remains; when every run was
disturbed they are all kept, and a note says so. One bad night then
widens nothing.

The verdicts of the suite, the band's rule (a significant change whose
median stays in the band is ``no significant change``, said beside the
verdict), the detectable change (``cannot judge``) and the new run's
disturbances are :func:`ireebench.comparison.judgement.judge`'s; the
change, its interval and the p-value are those of
:func:`ireebench.comparison.model.compare_benchmark` against the pooled
repetitions, so the table reads like a comparison of two reports.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..errors import UsageError
from ..stats import median, median_ci
from .disturbance import (
    benchmark_disturbances,
    cpu_devices,
    cpu_share,
    describe,
    devices_of,
    kinds,
    relevant,
    run_disturbances,
)
from .inputs import METRICS, BenchmarkFile, BenchmarkRows
from .judgement import (
    Judged,
    RunLevel,
    check_rows,
    choose_metric,
    context_notes,
    explained_by_shares,
    judge,
    name_disturbed_runs,
    options_for,
)
from .model import AUTO_METRIC, CompareOptions, Comparison, compare_benchmark

_Z95 = 1.959963984540054  # a 95 % interval's half-width in standard errors


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


def _usable(rows: BenchmarkRows, metric: str) -> list[float]:
    values, _ = rows.values(metric)
    return values if values and min(values) > 0 else []


@dataclass
class Baseline:
    """One benchmark's baseline: the pooled repetitions of the runs kept, their
    spreads, the disturbed runs left out (``label (why)``), what disturbed them
    when every run was (all kept), and the median of the kept runs' CPU shares."""

    pooled: BenchmarkRows | None
    spreads: list[RunSpread]
    left_out: list[str]
    every_disturbed: str
    cpu_share: float | None = None


def _baseline(name: str, runs: list[tuple[BenchmarkFile, BenchmarkRows]], metric: str,
              confidence: float) -> Baseline:
    """The baseline of one benchmark (see the module doc)."""
    measured, quiet = [], []
    for report, rows in runs:
        values = _usable(rows, metric)
        if not values:
            continue
        found = relevant(run_disturbances(report) + benchmark_disturbances(report, rows),
                         metric)
        measured.append((report, values, found, cpu_share(rows)))
        if not found:
            quiet.append(measured[-1])
    kept = quiet or measured
    shares = [share for *_, share in kept if share is not None]
    share = median(shares) if shares else None
    pooled: BenchmarkRows | None = None
    spreads: list[RunSpread] = []
    for report, values, *_ in kept:
        if pooled is None:
            pooled = BenchmarkRows(name, runs[0][1].time_unit)
        pooled.repetitions[metric].extend(values)
        spreads.append(run_spread(report.path, values, confidence))
    if quiet:
        left_out = [f"{report.path} ({describe(found)})" for report, _, found, _ in measured
                    if found]
        return Baseline(pooled, spreads, left_out, "", share)
    return Baseline(pooled, spreads, [], kinds([d for *_, found, _ in measured for d in found]),
                    share)


def run_level(spreads: list[RunSpread], new_median: float | None) -> RunLevel | None:
    """The new median against the spread of the kept runs' medians (the module doc's
    run-level test); None with fewer than two runs or no new median."""
    if new_median is None or new_median <= 0 or len(spreads) < 2:
        return None
    logs = [math.log(spread.median) for spread in spreads]
    center = math.fsum(logs) / len(logs)
    between = statistics.stdev(logs)
    # A floor: the runs' own noise of their medians (half their intervals, as
    # standard errors), so that runs that happened to agree do not make every
    # new run an outlier.
    halves = [math.log(spread.high / spread.low) / 2.0 / _Z95 for spread in spreads
              if spread.low > 0 and spread.count > 1]
    within = statistics.median(halves) if halves else 0.0
    scale = max(between, within, 1e-9) * math.sqrt(1.0 + 1.0 / len(logs))
    return RunLevel((math.log(new_median) - center) / scale, scale, len(logs) - 1)


def compare_history(history: list[BenchmarkFile], new: BenchmarkFile, options: CompareOptions,
                    label: str = "history", notes=()) -> Comparison:
    """Judges every benchmark of ``new`` against its stored runs (see the module doc).

    ``history``: the stored runs, newest first (each a :class:`BenchmarkFile`
    whose ``path`` is its label). A benchmark no stored run measured is
    listed as only in new; an empty history compares nothing and passes
    (the first run of a new gate), with a note (``notes``, what the
    history's loader said of it, when it said something).
    """
    if options.metric not in (*METRICS, AUTO_METRIC):
        raise UsageError(f"--metric={options.metric}: one of {', '.join(METRICS)}, "
                         f"{AUTO_METRIC}")
    check_rows(new)
    comparison = Comparison(label, new.path, options, [],
                            history=[report.path for report in history])
    items = []
    new_run = run_disturbances(new)
    for name, new_rows in new.benchmarks.items():
        runs = [(report, report.benchmarks[name]) for report in history
                if name in report.benchmarks]
        metric, metric_note = choose_metric(options, runs, (new, new_rows))
        baseline = _baseline(name, runs, metric, options.confidence)
        if baseline.pooled is None:
            comparison.only_new.append(name)
            continue
        result = compare_benchmark(name, baseline.pooled, new_rows,
                                   options_for(options, metric))
        result.baseline_runs = [spread.label for spread in baseline.spreads]
        result.left_out = baseline.left_out
        if metric_note:
            result.notes.append(metric_note)
        if baseline.every_disturbed:
            result.notes.append(f"every stored run was disturbed ({baseline.every_disturbed}): "
                                "the baseline is theirs")
        if result.new is not None:
            result.band_low = min(spread.low for spread in baseline.spreads)
            result.band_high = max(spread.high for spread in baseline.spreads)
        explained = 1.0
        if cpu_devices(devices_of(new, new_rows)):
            explained = explained_by_shares(baseline.cpu_share, cpu_share(new_rows))
        items.append(Judged(result, baseline.pooled.values(metric)[0],
                            new_rows.values(metric)[0],
                            new_run + benchmark_disturbances(new, new_rows), explained,
                            run_level(baseline.spreads, result.new)))
    comparison.notes += list(notes)
    if not history:
        if not notes:
            comparison.notes.append(f"{label}: no stored run to learn a baseline from")
        comparison.notes.append("nothing compared: no baseline yet")
    else:
        comparison.notes += context_notes(history[0], new)
    name_disturbed_runs(comparison, [new, *history])
    return judge(comparison, items, options, False)
