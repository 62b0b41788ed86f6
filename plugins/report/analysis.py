"""What a report draws, worked out from the data (no plotting here).

* :class:`Distribution`: a benchmark's repetitions as a box plot reads
  them: the median and its distribution-free interval (the ``statistics``
  plugin's :func:`~ireebench.stats.median_ci`, as ``--benchmark_statistics=ci``),
  the quartiles, Tukey's fences and the outliers beyond them (as
  ``_outliers``);
* :class:`Sweep`: the points of one benchmark family that differ only in
  their axes (``params``), and per axis the lines to draw (one per
  combination of the other axes); :func:`is_geometric` picks log axes;
* :func:`comparisons`: the latest report judged against the reports before
  it, as ``ireebench compare`` judges it: two reports as ``compare OLD NEW``
  (:func:`ireebench.comparison.compare`), three or more (or a store's
  history) as the gate, ``compare stored:history NEW``
  (:func:`~ireebench.comparison.history.compare_history`): one verdict per
  benchmark, the page's everywhere;
* :class:`Trend` and :func:`change_points`: a benchmark over a history of
  reports and where its level shifted;
* :class:`Quantity`, :class:`Units`: what each metric measures and the one
  unit each quantity is shown in on a page.

Reports are always **oldest first** here (the order of the command line; a
history, which a store hands over newest first, is turned round once when
it is read: :func:`ireebench.plugins.report.command.read_inputs`), so the
last report is the latest.
"""

from __future__ import annotations

import itertools
import math
import statistics as pystats
from dataclasses import dataclass, field

from ireebench.comparison import (
    FASTER,
    SLOWER,
    CompareOptions,
    Comparison,
    compare,
)
from ireebench.comparison.changes import (  # noqa: F401 (MIN_SHIFT, COMMIT_KEYS: shared)
    COMMIT_KEYS,
    MIN_SHIFT,
    RunValues,
    judge_change,
)
from ireebench.comparison.changes import change_points as series_change_points
from ireebench.comparison.changes import commit_of as context_commit
from ireebench.comparison.history import compare_history
from ireebench.errors import UsageError
from ireebench.lib.statistics import percentile
from ireebench.stats import median_ci

from .data import BYTE_METRICS, COUNT_METRICS, Benchmark, Report

CONFIDENCE = 0.95
# Up to this many reports given one by one are drawn beside each other; more,
# or a history (stored:history), read as a history: the latest drawn, the
# trend the rest. Either way the latest is judged against all before it.
MAX_PAIRWISE = 4
# A trend needs this many reports.
MIN_TREND = 3

_TIME_UNITS = (("s", 1.0), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9))
_BYTE_UNITS = (("GiB", 2.0 ** -30), ("MiB", 2.0 ** -20), ("KiB", 2.0 ** -10), ("B", 1.0))
_RATE_PREFIXES = (("T", 1e-12), ("G", 1e-9), ("M", 1e-6), ("k", 1e-3), ("", 1.0))


def _typical(values) -> float:
    positive = [abs(v) for v in values if v]
    return pystats.median(positive) if positive else 0.0


def time_scale(seconds: list[float]) -> tuple[float, str]:
    """The factor and unit that show these seconds with a typical value in [1, 1000)."""
    typical = _typical(seconds) or 1.0
    for unit, factor in _TIME_UNITS:
        if typical * factor >= 1.0:
            return factor, unit
    return _TIME_UNITS[-1][1], _TIME_UNITS[-1][0]


def byte_scale(values: list[float]) -> tuple[float, str]:
    """Binary units with a typical value of at least 1."""
    typical = _typical(values)
    for unit, factor in _BYTE_UNITS:
        if typical * factor >= 1.0:
            return factor, unit
    return 1.0, "B"


def rate_scale(values: list[float]) -> tuple[float, str]:
    typical = _typical(values)
    for prefix, factor in _RATE_PREFIXES:
        if typical * factor >= 1.0:
            return factor, f"{prefix}/s"
    return 1.0, "/s"


def significant(value: float, digits: int = 4) -> str:
    """``value`` with ``digits`` significant digits, never in exponent form
    (``0.001234``, ``12.34``, ``123457``): a column of one unit reads down."""
    if not value or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = math.floor(math.log10(abs(value)))
    return f"{value:.{max(0, digits - 1 - magnitude)}f}"


@dataclass(frozen=True)
class Quantity:
    """What a metric measures: its kind (which unit) and the words for its axis."""

    metric: str
    kind: str  # "time", "bytes", "count", "rate", "percent", "value"
    what: str  # words for the axis

    def label(self, unit: str) -> str:
        return f"{self.what} ({unit})" if unit else self.what


TIME_WORDS = {"real_time": "wall time per iteration", "cpu_time": "CPU time per iteration",
              "device_time": "device time per iteration"}


def quantity(metric: str, reports: list[Report] = ()) -> Quantity:
    """The :class:`Quantity` of a metric, by its name (Google Benchmark's and ireebench's).

    A counter's unit is not in Google Benchmark's JSON: a counter is a rate
    when it is named ``*_per_second`` or a report lists it in its context's
    ``rate_counters`` (``--counter`` records its rates there); any other
    counter (a count of page faults, a plugin's value) is drawn as reported,
    without a unit.
    """
    if metric in TIME_WORDS:
        return Quantity(metric, "time", TIME_WORDS[metric])
    if metric in BYTE_METRICS:
        return Quantity(metric, "bytes", metric)
    if metric in COUNT_METRICS:
        return Quantity(metric, "count", "allocations per iteration")
    if metric == "percent":
        return Quantity(metric, "percent", metric)
    if metric.endswith(("_per_second", "PerSecond")) or any(
            metric in report.rate_counters for report in reports):
        return Quantity(metric, "rate", f"{metric} per second")
    return Quantity(metric, "value", metric)


@dataclass(frozen=True)
class Scale:
    """How a quantity's values are shown: multiplied by ``factor``, in ``unit``."""

    factor: float
    unit: str

    def text(self, value: float | None) -> str:
        """``12.34 µs``: the value in this unit, 4 significant digits ("-" for None)."""
        if value is None:
            return "-"
        return f"{significant(value * self.factor)} {self.unit}".rstrip()


class Units:
    """One unit per quantity on a page: every time (wall, CPU, device; each
    table and chart) in the unit that suits the page's typical median, all
    bytes in one binary unit, each rate counter in one SI prefix."""

    def __init__(self, reports: list[Report]):
        self._reports = list(reports)
        medians = [pystats.median(b.metric("real_time")) for r in self._reports
                   for b in r.drawable]
        self.time = Scale(*time_scale(medians))
        byte_values = [v for r in self._reports for b in r.benchmarks.values()
                       for name in BYTE_METRICS for v in b.metric(name)]
        self.bytes = Scale(*byte_scale(byte_values))
        self._rates: dict[str, Scale] = {}

    def of(self, kind: Quantity) -> Scale:
        """The scale of a quantity on this page."""
        if kind.kind == "time":
            return self.time
        if kind.kind == "bytes":
            return self.bytes
        if kind.kind == "rate":
            if kind.metric not in self._rates:
                values = [v for r in self._reports for b in r.benchmarks.values()
                          for v in b.metric(kind.metric)]
                self._rates[kind.metric] = Scale(*rate_scale(values))
            return self._rates[kind.metric]
        return Scale(1.0, "%" if kind.kind == "percent" else "")

    def metric(self, metric: str) -> tuple[Quantity, Scale]:
        kind = quantity(metric, self._reports)
        return kind, self.of(kind)


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
        """The coefficient of variation (sample standard deviation over the mean), in
        floats (statistics.stdev's exact fractions cost a millisecond a benchmark)."""
        if len(self.samples) < 2 or not self.median:
            return None
        mean = math.fsum(self.samples) / len(self.samples)
        variance = math.fsum((v - mean) ** 2 for v in self.samples) / (len(self.samples) - 1)
        return math.sqrt(variance) / mean if mean else None


def distribution(benchmark: Benchmark, metric: str = "real_time") -> Distribution | None:
    """The distribution of a metric's repetitions (worked out once per benchmark)."""
    key = ("distribution", metric)
    if key not in benchmark.cache:
        benchmark.cache[key] = _distribution(benchmark, metric)
    return benchmark.cache[key]


def _distribution(benchmark: Benchmark, metric: str) -> Distribution | None:
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
    """The families' points that share their axes (``params``), two or more that differ
    in them: one sweep per set of axes. A family whose points have different axes (a
    ranking's candidates, its baseline's rounds per device, its re-rank; a suite's
    entries) is several sweeps, each charted against its own axes, never against an
    axis most of its points do not have."""
    groups: dict[tuple, list[Benchmark]] = {}
    for benchmark in report.drawable:
        if benchmark.params:
            key = (benchmark.family, frozenset(benchmark.params))
            groups.setdefault(key, []).append(benchmark)
    found = []
    for (family, _), points in groups.items():
        if len(points) < 2:
            continue
        axes = list(points[0].params)
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
    """The latest report judged against its baseline with ``ireebench compare``'s
    engine: one report (``compare OLD NEW``) or the reports before it as a
    history (``compare stored:history NEW``, the gate)."""

    new: int  # indexes into the reports (oldest first)
    baseline: list[int]  # one report, or the history's reports, oldest first
    comparison: Comparison | None
    problem: str = ""  # why there is no comparison
    title: str = ""
    command: str = ""  # the ireebench compare command line that says the same

    @property
    def is_history(self) -> bool:
        return self.comparison is not None and self.comparison.history is not None


def _tag(reports: list[Report], index: int) -> str:
    return f"#{index + 1} {reports[index].label}"


def _against_one(reports, old: int, new: int, options: CompareOptions) -> Pair:
    pair = Pair(new, [old], None, title=f"{_tag(reports, new)} against {_tag(reports, old)}",
                command=f"ireebench compare {reports[old].label} {reports[new].label}")
    problem = reports[old].rows_problem or reports[new].rows_problem
    try:
        if problem:
            raise UsageError(problem)
        pair.comparison = compare(reports[old].rows, reports[new].rows, options)
    except UsageError as exc:
        pair.problem = str(exc)
    return pair


def _against_history(reports, earlier: list[int], new: int, options: CompareOptions) -> Pair:
    span = f"#{earlier[0] + 1}" if len(earlier) == 1 else f"#{earlier[0] + 1}–#{earlier[-1] + 1}"
    pair = Pair(new, list(earlier), None,
                title=f"{_tag(reports, new)} (the latest) against the {len(earlier)} "
                      f"report(s) before it ({span}), as the gate judges it",
                command=f"ireebench compare stored:history {reports[new].label}")
    history = [reports[i].rows for i in reversed(earlier)]  # newest first, as the gate's
    problem = next((reports[i].rows_problem for i in [*earlier, new]
                    if reports[i].rows_problem), "")
    try:
        if problem:
            raise UsageError(problem)
        pair.comparison = compare_history(history, reports[new].rows, options, label=span)
    except UsageError as exc:
        pair.problem = str(exc)
    return pair


def comparisons(reports: list[Report], options: CompareOptions,
                as_history: bool) -> list[Pair]:
    """The latest report judged against the reports before it (``reports`` oldest
    first): one :class:`Pair`, or none with fewer than two reports to draw.

    The verdicts are ``ireebench compare``'s for the same inputs, so the page
    says what a gate says: two reports given one by one as ``compare OLD NEW``
    (:func:`ireebench.comparison.compare`); three or more, or a store's
    history (``stored:history``, even of two), as ``compare stored:history
    NEW`` (:func:`ireebench.comparison.history.compare_history`): the latest
    against every report before it, pooled, with the band of their medians
    and the run-level test. The trend's change points say where in the
    history a level shifted.
    """
    usable = [i for i, report in enumerate(reports) if report.drawable]
    if len(usable) < 2:
        return []
    if as_history or len(usable) > 2:
        return [_against_history(reports, usable[:-1], usable[-1], options)]
    return [_against_one(reports, usable[0], usable[1], options)]


# --- trends ------------------------------------------------------------------------


def commit_of(report: Report) -> str:
    """The commit a report measured (:data:`COMMIT_KEYS`, the user's tag first), as
    ``ireebench history --changes`` reads a stored run's."""
    return context_commit(report.context)


@dataclass
class ChangePoint:
    """The level of a benchmark shifted at report ``index`` (the first of the new level)."""

    index: int
    change: float  # Hodges-Lehmann ratio of after / before, minus 1
    low: float | None
    high: float | None
    verdict: str
    pvalue: float | None = None  # its own U test: the two levels' pooled repetitions


@dataclass
class Trend:
    """A benchmark over the reports that have it, in report order."""

    name: str
    indexes: list[int]  # into the reports
    distributions: list[Distribution]
    changes: list[ChangePoint] = field(default_factory=list)

    @property
    def shift(self) -> float:
        """How far it moved: its largest change point, else latest / first median - 1."""
        if self.changes:
            return max((c.change for c in self.changes), key=lambda c: abs(math.log1p(c)))
        first, last = self.distributions[0].median, self.distributions[-1].median
        return last / first - 1.0 if first > 0 and last > 0 else 0.0


def change_points(name: str, samples: list[list[float]],
                  options: CompareOptions) -> list[ChangePoint]:
    """Where a benchmark's level shifted over its runs (oldest first; each run's
    repetitions in seconds).

    The shifts are those the results store finds, judged as it judges them
    (:func:`ireebench.comparison.changes.change_points`: PELT on the runs' log
    medians, a level of two runs or more, its noise learned from the runs;
    :func:`~ireebench.comparison.changes.judge_change`: ``ireebench
    compare``'s engine between the pooled repetitions of the two levels), so
    that ``ireebench report`` and ``ireebench history --changes`` agree; a
    shift is drawn when that judgement finds it faster or slower (by at least
    :data:`MIN_SHIFT`; the change and its interval are its Hodges-Lehmann
    estimate, the p-value its own U test between the two levels).
    """
    if any(not run or min(run) <= 0 for run in samples):
        return []
    runs = [RunValues(str(index), run) for index, run in enumerate(samples)]
    found = []
    for point in series_change_points(runs):
        result = judge_change(name, runs, point, options)
        if result.verdict in (FASTER, SLOWER):
            found.append(ChangePoint(point.index, result.change, result.low, result.high,
                                     result.verdict, result.pvalue))
    return found


def trends(reports: list[Report], options: CompareOptions) -> list[Trend]:
    """Per benchmark of the latest report, its distribution in every report that has it
    (when :data:`MIN_TREND` or more do), and its change points."""
    if len([r for r in reports if r.drawable]) < MIN_TREND:
        return []
    names: dict[str, None] = {}  # the latest report's first, then the others'
    for report in reversed(reports):
        names.update(dict.fromkeys(b.name for b in report.drawable))
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
        trend.changes = [ChangePoint(indexes[p.index], p.change, p.low, p.high, p.verdict,
                                     p.pvalue) for p in points]
        found.append(trend)
    return found
