"""What a report draws, worked out from the data (no plotting here).

* :class:`Distribution`: a benchmark's repetitions as a box plot reads
  them: the median and its distribution-free interval (the ``statistics``
  plugin's :func:`~ireebench.plugins.statistics.median_ci`, as ``--benchmark_statistics=ci``),
  the quartiles, Tukey's fences and the outliers beyond them (as
  ``_outliers``);
* :class:`Sweep`: the points of one benchmark family that differ only in
  their axes (``params``), and per axis the lines to draw (one per
  combination of the other axes); :func:`is_geometric` picks log axes;
* :func:`pairs`: which reports are compared, with the engine of ``ireebench
  compare`` (:func:`ireebench.comparison.compare`: the U test, the
  Hodges-Lehmann change and its interval, verdicts, geometric mean);
* :class:`Trend` and :func:`change_points`: a benchmark over a history of
  reports and where its level shifted;
* :class:`Quantity`: the unit of each metric, for axes that say what they show.
"""

from __future__ import annotations

import itertools
import math
import statistics as pystats
from dataclasses import dataclass, field

from ireebench.comparison import (
    FASTER,
    SLOWER,
    BenchmarkRows,
    CompareOptions,
    Comparison,
    benchmark_file,
    compare,
)
from ireebench.comparison.changes import RunValues
from ireebench.comparison.changes import change_points as series_change_points
from ireebench.comparison.model import compare_benchmark
from ireebench.errors import UsageError
from ireebench.plugins.statistics import median_ci, percentile

from .data import BYTE_METRICS, COUNT_METRICS, Benchmark, Report

CONFIDENCE = 0.95
# Up to this many reports, each later one is compared with the first (and
# drawn beside it); more reports read as a history: the latest is compared
# with the one before it, and the trend shows the rest.
MAX_PAIRWISE = 4
# A trend needs this many reports.
MIN_TREND = 3
# A level shift smaller than this is not drawn as a change point.
MIN_SHIFT = 0.02
# Context keys that may hold the commit a report was measured at
# (a results store, --benchmark_context=git_commit=...).
COMMIT_KEYS = ("git_commit", "commit", "git_sha", "git_revision", "revision", "vcs_revision")

_TIME_UNITS = (("s", 1.0), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9))
_BYTE_UNITS = (("GiB", 2.0 ** -30), ("MiB", 2.0 ** -20), ("KiB", 2.0 ** -10), ("B", 1.0))


def time_scale(seconds: list[float]) -> tuple[float, str]:
    """The factor and unit that show these seconds with a typical value in [1, 1000)."""
    positive = [abs(v) for v in seconds if v]
    typical = pystats.median(positive) if positive else 1.0
    for unit, factor in _TIME_UNITS:
        if typical * factor >= 1.0:
            return factor, unit
    return _TIME_UNITS[-1][1], _TIME_UNITS[-1][0]


def byte_scale(values: list[float]) -> tuple[float, str]:
    largest = max((abs(v) for v in values), default=0.0)
    for unit, factor in _BYTE_UNITS:
        if largest * factor >= 1.0:
            return factor, unit
    return 1.0, "B"


@dataclass(frozen=True)
class Quantity:
    """What a metric measures: its label and how its values scale to a unit."""

    metric: str
    kind: str  # "time", "bytes", "count", "rate", "percent", "value"
    what: str  # words for the axis

    def scale(self, values: list[float]) -> tuple[float, str]:
        if self.kind == "time":
            return time_scale(values)
        if self.kind == "bytes":
            return byte_scale(values)
        if self.kind == "rate":
            return rate_scale(values)
        return 1.0, {"count": "count", "percent": "%", "value": "as reported"}[self.kind]

    def label(self, unit: str) -> str:
        return f"{self.what} ({unit})"


_RATE_PREFIXES = (("T", 1e-12), ("G", 1e-9), ("M", 1e-6), ("k", 1e-3), ("", 1.0))


def rate_scale(values: list[float]) -> tuple[float, str]:
    largest = max((abs(v) for v in values), default=0.0)
    for prefix, factor in _RATE_PREFIXES:
        if largest * factor >= 1.0:
            return factor, f"{prefix}/s"
    return 1.0, "/s"


def quantity(metric: str, report: Report | None = None) -> Quantity:
    """The :class:`Quantity` of a metric, by its name (Google Benchmark's and ireebench's).

    A counter's unit is not in Google Benchmark's JSON: ``*_per_second``
    counters are rates, and so are the user counters of a report ireebench
    wrote (``--counter`` makes rate counters); others are shown as reported.
    """
    times = {"real_time": "wall time per iteration", "cpu_time": "CPU time per iteration",
             "device_time": "device time per iteration"}
    if metric in times:
        return Quantity(metric, "time", times[metric])
    if metric in BYTE_METRICS:
        return Quantity(metric, "bytes", metric)
    if metric in COUNT_METRICS:
        return Quantity(metric, "count", "allocations per iteration")
    if metric == "percent":
        return Quantity(metric, "percent", metric)
    if metric.endswith(("_per_second", "PerSecond")) or (
            report is not None and report.written_by_ireebench):
        return Quantity(metric, "rate", f"{metric} per second")
    return Quantity(metric, "value", metric)


# --- distributions ---------------------------------------------------------------


@dataclass
class Distribution:
    """A benchmark's repetitions (seconds per iteration) summarised for a box plot."""

    samples: list[float]
    median: float
    interval: tuple[float, float] | None  # the median's CONFIDENCE interval
    q1: float
    q3: float
    low_whisker: float  # the extreme values inside Tukey's fences
    high_whisker: float
    outliers: list[float]
    source: str  # "repetitions", or the aggregate the value comes from

    @property
    def cv(self) -> float | None:
        if len(self.samples) < 2 or not self.median:
            return None
        return pystats.stdev(self.samples) / pystats.fmean(self.samples)


def distribution(benchmark: Benchmark, metric: str = "real_time") -> Distribution | None:
    samples = benchmark.values.get(metric) or []
    if not samples:
        values = benchmark.metric(metric)
        if not values:
            return None
        # --benchmark_report_aggregates_only: the aggregates say what they can.
        ci = benchmark.aggregates
        interval = None
        if "ci_lower" in ci and "ci_upper" in ci:
            interval = (ci["ci_lower"][metric], ci["ci_upper"][metric])
        value = values[0]
        source = next((name for name in ("median", "mean") if name in ci), "aggregate")
        return Distribution([], value, interval, value, value, value, value, [],
                            f"{source} aggregate")
    median = pystats.median(samples)
    q1, q3 = percentile(samples, 25), percentile(samples, 75)
    fence = 1.5 * (q3 - q1)
    inside = [v for v in samples if q1 - fence <= v <= q3 + fence] or samples
    outliers = [v for v in samples if v < q1 - fence or v > q3 + fence]
    return Distribution(list(samples), median, median_ci(samples, CONFIDENCE), q1, q3,
                        min(inside), max(inside), outliers, "repetitions")


# --- sweeps ----------------------------------------------------------------------


@dataclass
class Line:
    """One line of a sweep chart: the points where the other axes have ``label``'s values."""

    label: str
    points: list[tuple[object, Benchmark]]  # (axis value, point), in axis order


@dataclass
class Sweep:
    """The points of one family that differ in their axes."""

    family: str
    axes: list[str]
    points: list[Benchmark]

    def values(self, axis: str) -> list:
        seen = []
        for point in self.points:
            value = point.params.get(axis)
            if value not in seen:
                seen.append(value)
        return _sorted_axis(seen)

    def lines(self, axis: str) -> list[Line]:
        """Per combination of the other axes, the points along ``axis``."""
        others = [name for name in self.axes if name != axis]
        lines: dict[tuple, Line] = {}
        for point in self.points:
            key = tuple(_hashable(point.params.get(name)) for name in others)
            label = ", ".join(f"{name}={point.params.get(name)}" for name in others) or "all"
            lines.setdefault(key, Line(label, [])).points.append((point.params.get(axis), point))
        order = self.values(axis)
        for line in lines.values():
            line.points.sort(key=lambda item: order.index(item[0]))
        return list(lines.values())


def _hashable(value):
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def is_numeric(values: list) -> bool:
    return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                and math.isfinite(v) for v in values)


def _sorted_axis(values: list) -> list:
    return sorted(values) if is_numeric(values) else values


def is_geometric(values: list) -> bool:
    """A numeric axis drawn on a log scale: positive values whose steps are a
    constant factor (1, 2, 4, 8) or that span more than a factor of 16."""
    if not is_numeric(values) or len(values) < 3 or min(values) <= 0:
        return False
    ordered = sorted(values)
    if ordered[-1] / ordered[0] > 16:
        return True
    ratios = [b / a for a, b in itertools.pairwise(ordered)]
    return min(ratios) > 1.4 and max(ratios) / min(ratios) < 1.1


def sweeps(report: Report) -> list[Sweep]:
    """The families with two or more points that have axes (``params``)."""
    families: dict[str, list[Benchmark]] = {}
    for benchmark in report.drawable:
        if benchmark.params:
            families.setdefault(benchmark.family, []).append(benchmark)
    found = []
    for family, points in families.items():
        if len(points) < 2:
            continue
        axes = []
        for point in points:
            axes += [name for name in point.params if name not in axes]
        varying = [axis for axis in axes
                   if len({_hashable(p.params.get(axis)) for p in points}) > 1]
        if varying:
            found.append(Sweep(family, axes, points))
    return found


def sweep_metrics(sweep: Sweep) -> list[str]:
    """The metrics every point of a sweep has, times first; ``items_per_second``
    (Google Benchmark's iterations per second: one over the time) is left out."""
    names = None
    for point in sweep.points:
        have = point.metric_names()
        names = have if names is None else [n for n in names if n in have]
    return [n for n in names or [] if n not in ("cpu_time", "items_per_second")]


# --- comparisons -----------------------------------------------------------------


@dataclass
class Pair:
    """Two reports compared with ``ireebench compare``'s engine."""

    old: int  # indexes into the reports
    new: int
    comparison: Comparison | None
    problem: str = ""  # why there is no comparison


def pairs(reports: list[Report], options: CompareOptions) -> list[Pair]:
    """Each later report against the first (up to :data:`MAX_PAIRWISE` reports),
    else the latest against the one before it."""
    usable = [i for i, report in enumerate(reports) if report.drawable]
    if len(usable) < 2:
        return []
    if len(usable) <= MAX_PAIRWISE:
        chosen = [(usable[0], index) for index in usable[1:]]
    else:
        chosen = [(usable[-2], usable[-1])]
    found = []
    for old, new in chosen:
        try:
            comparison = compare(benchmark_file(reports[old].label, reports[old].raw),
                                 benchmark_file(reports[new].label, reports[new].raw), options)
        except UsageError as exc:
            found.append(Pair(old, new, None, str(exc)))
            continue
        found.append(Pair(old, new, comparison))
    return found


# --- trends ------------------------------------------------------------------------


def commit_of(report: Report) -> str:
    for key in COMMIT_KEYS:
        value = report.context.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


@dataclass
class ChangePoint:
    """The level of a benchmark shifted at report ``index`` (the first of the new level)."""

    index: int
    change: float  # Hodges-Lehmann ratio of after / before, minus 1
    low: float | None
    high: float | None
    verdict: str


@dataclass
class Trend:
    """A benchmark over the reports that have it, in report order."""

    name: str
    indexes: list[int]  # into the reports
    distributions: list[Distribution]
    changes: list[ChangePoint] = field(default_factory=list)


def _rows(name: str, samples: list[list[float]]) -> BenchmarkRows:
    rows = BenchmarkRows(name, "s")
    pooled = [value for run in samples for value in run]
    rows.repetitions["real_time"] = pooled
    rows.repetitions["cpu_time"] = pooled
    return rows


def change_points(name: str, samples: list[list[float]],
                  options: CompareOptions) -> list[ChangePoint]:
    """Where a benchmark's level shifted over its runs (oldest first; each run's
    repetitions in seconds).

    The shifts are those the results store finds
    (:func:`ireebench.comparison.changes.change_points`: PELT on the runs' log
    medians, a level of two runs or more, its noise learned from the runs),
    so that ``ireebench report`` and ``ireebench history --changes`` agree;
    each is then judged by ``ireebench compare``'s engine between the pooled
    repetitions of the two levels, and drawn when it finds them faster or
    slower by at least :data:`MIN_SHIFT` (the change and its interval are its
    Hodges-Lehmann estimate).
    """
    if any(not run or min(run) <= 0 for run in samples):
        return []
    runs = [RunValues(str(index), run) for index, run in enumerate(samples)]
    found = []
    for point in series_change_points(runs):
        start = point.index
        before = samples[start - point.runs_before:start]
        after = samples[start:start + point.runs_after]
        result = compare_benchmark(name, _rows(name, before), _rows(name, after), options)
        if result.verdict in (FASTER, SLOWER) and abs(result.change) >= MIN_SHIFT:
            found.append(ChangePoint(start, result.change, result.low, result.high,
                                     result.verdict))
    return found


def trends(reports: list[Report], options: CompareOptions) -> list[Trend]:
    """Per benchmark of the latest report, its distribution in every report that has it
    (when :data:`MIN_TREND` or more do), and its change points."""
    if len([r for r in reports if r.drawable]) < MIN_TREND:
        return []
    names = []
    for report in reversed(reports):
        names += [b.name for b in report.drawable if b.name not in names]
    found = []
    for name in names:
        indexes, shapes = [], []
        for index, report in enumerate(reports):
            benchmark = report.benchmarks.get(name)
            shape = distribution(benchmark) if benchmark is not None else None
            if shape is not None:
                indexes.append(index)
                shapes.append(shape)
        if len(indexes) < MIN_TREND:
            continue
        trend = Trend(name, indexes, shapes)
        points = change_points(name, [s.samples for s in shapes], options)
        trend.changes = [ChangePoint(indexes[p.index], p.change, p.low, p.high, p.verdict)
                         for p in points]
        found.append(trend)
    return found
