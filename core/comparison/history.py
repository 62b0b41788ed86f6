"""A run judged against a history of stored runs: the gate that learns the noise.

Each benchmark's baseline is its recent stored runs (the store's
``--window``), on the metric that measured the work, and a benchmark is
slower or faster when the U test of the new repetitions against the stored
runs' pooled repetitions rejects after the suite's correction, and the new
median is beyond the runs' own spread: from :data:`MIN_RUN_LEVEL` stored
runs a t test of the log medians (:class:`~.judgement.RunLevel`; the
verdict's p-value is the larger of the two), or beyond every stored run's
repetitions (the envelope). A significant change within the band of the
stored runs' median intervals is ``no significant change``. A disturbed
stored run is left out only when :data:`MIN_QUIET` quiet runs remain and
its median lies outside their band (``left_out``). The verdicts of the
suite are :func:`ireebench.comparison.judgement.judge`'s. Why, and what was
measured: docs/store.md, "The gate", and docs/compare.md.
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


# The fewest stored runs whose medians' spread says how far runs drift: below
# it the gate judges by the repetitions' U test alone (the run-level test of
# two runs has one degree of freedom: it could only see changes of hundreds
# of percent), and no disturbed run is left out.
MIN_RUN_LEVEL = 3
# The fewest quiet stored runs a baseline keeps to itself, leaving disturbed ones out.
MIN_QUIET = 2


@dataclass
class Baseline:
    """One benchmark's baseline: the pooled repetitions of the runs kept, their
    spreads, the disturbed runs left out (``label (why)``), what disturbed the
    kept runs when too few quiet ones were left to keep only those, the
    median of the kept runs' CPU shares, and the envelope: the lowest and the
    highest repetition of every kept run."""

    pooled: BenchmarkRows | None
    spreads: list[RunSpread]
    left_out: list[str]
    every_disturbed: str
    cpu_share: float | None = None
    envelope: tuple[float, float] | None = None
    quiet: int = 0  # how many of the runs were not disturbed


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
    # A disturbed run is left out only while two quiet runs or more remain (one run
    # says nothing of how far runs drift), and only when it measured otherwise
    # than they did: its median outside their band. One that measured like them
    # is kept (the disturbance did not show), so a busy week keeps its baseline.
    quiet_count = len(quiet)
    enough = quiet_count >= min(MIN_QUIET, len(measured))
    if enough and quiet_count < len(measured):
        spreads_of_quiet = [run_spread(report.path, values, confidence)
                            for report, values, *_ in quiet]
        low = min(spread.low for spread in spreads_of_quiet)
        high = max(spread.high for spread in spreads_of_quiet)
        quiet = [run for run in measured
                 if not run[2] or low <= median(run[1]) <= high]
    kept = quiet if enough else measured
    shares = [share for *_, share in kept if share is not None]
    share = median(shares) if shares else None
    pooled: BenchmarkRows | None = None
    spreads: list[RunSpread] = []
    for report, values, *_ in kept:
        if pooled is None:
            pooled = BenchmarkRows(name, runs[0][1].time_unit)
        pooled.repetitions[metric].extend(values)
        spreads.append(run_spread(report.path, values, confidence))
    envelope = None
    if kept:
        envelope = (min(min(values) for _, values, *_ in kept),
                    max(max(values) for _, values, *_ in kept))
    if enough:
        left_out = [f"{report.path} ({describe(found)})" for report, _, found, _ in measured
                    if found and all(report is not run[0] for run in kept)]
        return Baseline(pooled, spreads, left_out, "", share, envelope, quiet_count)
    return Baseline(pooled, spreads, [], kinds([d for *_, found, _ in measured for d in found]),
                    share, envelope, quiet_count)


def run_level(spreads: list[RunSpread], new_median: float | None) -> RunLevel | None:
    """The new median against the spread of the kept runs' medians (the module doc's
    run-level test); None with fewer than :data:`MIN_RUN_LEVEL` runs or no new median."""
    if new_median is None or new_median <= 0 or len(spreads) < MIN_RUN_LEVEL:
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
            result.notes.append(
                f"every stored run was disturbed ({baseline.every_disturbed}): the baseline "
                "is theirs" if not baseline.quiet else
                f"{baseline.quiet} quiet stored run(s), fewer than {MIN_QUIET}: the "
                f"disturbed ones are kept too ({baseline.every_disturbed}) rather than a "
                "baseline too small to learn the drift from")
        if len(baseline.spreads) < MIN_RUN_LEVEL:
            result.notes.append(
                f"{len(baseline.spreads)} stored run(s): judged by the repetitions' U test "
                f"against them (how far runs drift needs {MIN_RUN_LEVEL} runs or more)")
        new_values = new_rows.values(metric)[0]
        new_interval = None
        if result.new is not None:
            result.band_low = min(spread.low for spread in baseline.spreads)
            result.band_high = max(spread.high for spread in baseline.spreads)
            new_interval = median_ci(new_values, options.confidence) or None
        explained = 1.0
        if cpu_devices(devices_of(new, new_rows)):
            explained = explained_by_shares(baseline.cpu_share, cpu_share(new_rows))
        items.append(Judged(result, baseline.pooled.values(metric)[0], new_values,
                            new_run + benchmark_disturbances(new, new_rows), explained,
                            run_level(baseline.spreads, result.new), baseline.envelope,
                            new_interval, len(baseline.spreads)))
    comparison.notes += list(notes)
    if not history:
        if not notes:
            comparison.notes.append(f"{label}: no stored run to learn a baseline from")
        comparison.notes.append("nothing compared: no baseline yet")
    else:
        comparison.notes += context_notes(history[0], new)
    name_disturbed_runs(comparison, [new, *history])
    return judge(comparison, items, options, False)
