"""A comparison of two benchmark files: a verdict per benchmark, a summary, an exit status.

Benchmarks are matched by ``run_name``, and compared on one metric
(``--metric``: a time, ``real_time`` by default, or any number of the rows:
``max_bytes_used``, a counter). For each one in both files:

* ``old``/``new``: the medians of the per-repetition values;
* ``change``: the Hodges-Lehmann ratio new/old minus 1, with its
  distribution-free interval at ``confidence``
  (:func:`~ireebench.comparison.utest.ratio_interval`);
* ``pvalue``: the two-sided Mann-Whitney U test of the repetitions (computed
  from 2 a side; a verdict needs :data:`MIN_REPETITIONS` a side);
* ``verdict``: ``faster``/``slower`` when the test rejects at ``alpha``,
  otherwise ``no significant change``; ``inconclusive`` when a side has
  fewer than ``min_repetitions`` values (the test cannot be trusted, so the
  verdict is never significant), ``not compared`` when a side has no time
  (it failed);
* ``regression``: ``slower`` by more than its threshold. Any regression makes
  the exit status 1 (:data:`EXIT_REGRESSION`).

A metric whose values do not vary between repetitions (the memory members:
the same bytes every repetition) has nothing to test: it is compared
exactly (:func:`compare_exactly`), a change beyond the threshold is the
verdict. "Slower" means worse: larger for times, bytes and most numbers,
smaller for a rate (``--higher_is_better``, automatic for a counter named
``*_per_second`` or listed in the report's ``rate_counters``).

The summary is the geometric mean of the ratios over the compared
benchmarks (each counts once, whatever its time).
"""

from __future__ import annotations

import math
import os
import re
import statistics
from dataclasses import dataclass, field

from ..errors import UsageError, flag_error
from ..stash import StashKey
from .inputs import TIME_METRICS, BenchmarkFile, BenchmarkRows
from .machine import row_context
from .utest import choose_method, geometric_mean, mann_whitney_u, ratio_interval

# Fewer repetitions a side than this and no verdict can be "significant"
# (Google Benchmark's compare.py recommends 9 for its U test too).
MIN_REPETITIONS = 9
DEFAULT_ALPHA = 0.05

FASTER = "faster"
SLOWER = "slower"
NO_CHANGE = "no significant change"
INCONCLUSIVE = "inconclusive"
NOT_COMPARED = "not compared"
VERDICTS = (FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE, NOT_COMPARED)

EXIT_NO_REGRESSION = 0
EXIT_REGRESSION = 1


@dataclass(frozen=True)
class Threshold:
    """``--threshold``: a fraction (0.05 for ``5%``) for every name, or for the names
    a regex finds (``re.search``) when ``pattern`` is set."""

    fraction: float
    pattern: str = ""
    text: str = ""

    def matches(self, name: str) -> bool:
        return not self.pattern or re.search(self.pattern, name) is not None

    @property
    def percent(self) -> float:
        return self.fraction * 100.0


def parse_threshold(text: str) -> Threshold:
    """``5%`` or ``PATTERN=5%`` (the last ``=`` separates them)."""
    value = str(text)
    pattern, separator, amount = value.rpartition("=")
    amount = amount.strip()
    if not amount.endswith("%"):
        raise flag_error("threshold", value, "expected a percentage such as 5% or "
                                             "PATTERN=5% (PATTERN a regex of benchmark names)")
    try:
        percent = float(amount[:-1])
    except ValueError:
        percent = math.nan
    if not math.isfinite(percent) or percent < 0:
        raise flag_error("threshold", value, "the percentage must be a number >= 0 (e.g. 5%)")
    if separator and not pattern:
        raise flag_error("threshold", value, "empty pattern before '='")
    try:
        re.compile(pattern)
    except (re.error, RecursionError) as exc:
        raise flag_error("threshold", value, f"invalid regex: {exc}") from None
    return Threshold(percent / 100.0, pattern, value)


@dataclass(frozen=True)
class CompareOptions:
    """What ``ireebench compare`` was asked (checked when the command line is parsed)."""

    alpha: float = DEFAULT_ALPHA
    confidence: float = 1.0 - DEFAULT_ALPHA
    metric: str = "real_time"
    thresholds: tuple[Threshold, ...] = ()
    min_repetitions: int = MIN_REPETITIONS
    # None: decided per metric (a rate is better higher, everything else lower).
    higher_is_better: bool | None = None

    @property
    def is_time(self) -> bool:
        return self.metric in TIME_METRICS

    def threshold_for(self, name: str) -> Threshold | None:
        """The last matching pattern's threshold, else the last global one, else None (0%)."""
        for threshold in reversed(self.thresholds):
            if threshold.pattern and threshold.matches(name):
                return threshold
        for threshold in reversed(self.thresholds):
            if not threshold.pattern:
                return threshold
        return None


# The options of an `ireebench compare` run, in its config.stash.
COMPARE_OPTIONS = StashKey[CompareOptions]()


@dataclass(slots=True)
class BenchmarkComparison:
    """One benchmark in both files. Times in seconds per iteration; other metrics as
    the files have them."""

    name: str
    time_unit: str  # the old file's, for display ("" for a metric that is not a time)
    n_old: int
    n_new: int
    old: float | None = None  # median
    new: float | None = None
    change: float | None = None  # Hodges-Lehmann ratio - 1
    ratio: float | None = None  # the ratio itself (1 + change loses a tiny one)
    low: float | None = None  # interval of the change (None: unbounded)
    high: float | None = None
    pvalue: float | None = None
    method: str = ""  # the U test's "exact" or "asymptotic"; "equal values": no U test
    verdict: str = NOT_COMPARED
    threshold: float = 0.0  # the fraction that applies
    regression: bool = False
    notes: list[str] = field(default_factory=list)
    # Against a history (ireebench.comparison.history): the runs whose pooled
    # repetitions are "old", newest first, and the band their medians and
    # intervals span (seconds). None/empty in a comparison of two reports.
    baseline_runs: list[str] = field(default_factory=list)
    band_low: float | None = None
    band_high: float | None = None

    def to_dict(self) -> dict:
        is_time = bool(self.time_unit)
        data = {
            "name": self.name,
            "time_unit": self.time_unit,
            "old_median": self.old,
            "new_median": self.new,
            "old_median_seconds": self.old if is_time else None,
            "new_median_seconds": self.new if is_time else None,
            "old_repetitions": self.n_old,
            "new_repetitions": self.n_new,
            "change": self.change,
            "change_low": self.low,
            "change_high": self.high,
            "pvalue": self.pvalue,
            "utest_method": self.method or None,
            "verdict": self.verdict,
            "threshold": self.threshold,
            "regression": self.regression,
            "notes": list(self.notes),
        }
        if self.baseline_runs:
            data.update(baseline_runs=list(self.baseline_runs),
                        band_low_seconds=self.band_low, band_high_seconds=self.band_high)
        return data


@dataclass
class Comparison:
    """The whole comparison; what reporters receive."""

    old_path: str
    new_path: str
    options: CompareOptions
    benchmarks: list[BenchmarkComparison]
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    geomean_change: float | None = None  # over the benchmarks with a change
    geomean_count: int = 0
    notes: list[str] = field(default_factory=list)  # about the files as a whole
    higher_is_better: bool = False  # how the metric was judged
    # Against a history: the labels of its runs, newest first (None: two reports).
    history: list[str] | None = None

    @property
    def regressions(self) -> list[BenchmarkComparison]:
        return [b for b in self.benchmarks if b.regression]

    @property
    def exit_status(self) -> int:
        return EXIT_REGRESSION if self.regressions else EXIT_NO_REGRESSION

    def count(self, verdict: str) -> int:
        return sum(1 for b in self.benchmarks if b.verdict == verdict)

    def to_dict(self) -> dict:
        options = self.options
        data = {
            "old": self.old_path,
            "new": self.new_path,
            "metric": options.metric,
            "alpha": options.alpha,
            "confidence": options.confidence,
            "min_repetitions": options.min_repetitions,
            "higher_is_better": self.higher_is_better,
            "thresholds": [{"pattern": t.pattern, "percent": t.percent}
                           for t in options.thresholds],
            "benchmarks": [b.to_dict() for b in self.benchmarks],
            "geomean": {"change": self.geomean_change, "benchmarks": self.geomean_count},
            "counts": {verdict: self.count(verdict) for verdict in VERDICTS},
            "only_in_old": list(self.only_old),
            "only_in_new": list(self.only_new),
            "notes": list(self.notes),
            "regressions": [b.name for b in self.regressions],
            "exit_status": self.exit_status,
        }
        if self.history is not None:
            data["history"] = list(self.history)
        return data


def _side_notes(side: str, rows: BenchmarkRows, source: str) -> list[str]:
    notes = []
    if rows.errors:
        notes.append(f"{len(rows.errors)} failed row(s) in {side}: {rows.errors[0]}")
    if source and source != "repetitions":
        notes.append(f"{side}: only the {source} (no repetition rows)")
    return notes


def _constant(values: list[float]) -> bool:
    return all(value == values[0] for value in values)


def compare_exactly(result: BenchmarkComparison, old: float, new: float,
                    higher_is_better: bool) -> BenchmarkComparison:
    """A metric that does not vary between repetitions: the change is exact, no U test.

    ``faster``/``slower`` (better/worse) when the change is beyond the
    threshold, else ``no significant change``; a regression is worse beyond
    it. From 0 to anything else the change has no ratio (``None``) and is
    beyond every threshold.
    """
    result.old, result.new, result.method = old, new, "equal values"
    result.notes.append("the values do not vary between repetitions: compared exactly, "
                        "without a U test")
    if old == new:
        result.ratio, result.change, result.verdict = 1.0, 0.0, NO_CHANGE
        return result
    if old != 0:
        result.ratio = new / old
        result.change = result.ratio - 1.0
    beyond = result.change is None or abs(result.change) > result.threshold
    worse = (new < old) if higher_is_better else (new > old)
    if beyond:
        result.verdict = SLOWER if worse else FASTER
    else:
        result.verdict = NO_CHANGE
    result.regression = beyond and worse
    return result


def compare_benchmark(name: str, old_rows: BenchmarkRows, new_rows: BenchmarkRows,
                      options: CompareOptions,
                      higher_is_better: bool = False) -> BenchmarkComparison:
    """Compares one benchmark (see the module docstring)."""
    old, old_source = old_rows.values(options.metric)
    new, new_source = new_rows.values(options.metric)
    unit = old_rows.time_unit if options.is_time else ""
    result = BenchmarkComparison(name, unit, len(old), len(new))
    result.notes += _side_notes("old", old_rows, old_source)
    result.notes += _side_notes("new", new_rows, new_source)
    threshold = options.threshold_for(name)
    result.threshold = threshold.fraction if threshold is not None else 0.0
    what = "time" if options.is_time else options.metric
    if not old or not new:
        missing = " and ".join(side for side, values in (("old", old), ("new", new))
                               if not values)
        result.notes.append(f"no {what} in {missing}")
        return result
    repeated = min(len(old), len(new)) >= 2
    if _constant(old) and _constant(new) and (repeated or not options.is_time):
        return compare_exactly(result, old[0], new[0], higher_is_better)
    if min(old + new) <= 0:
        result.notes.append(f"a {'time' if options.is_time else 'value'} is not positive")
        return result
    result.old, result.new = statistics.median(old), statistics.median(new)
    result.method = choose_method(len(old), len(new), len(set(old + new)) < len(old) + len(new))
    interval = ratio_interval(old, new, options.confidence, result.method)
    result.ratio = interval.ratio
    result.change = interval.ratio - 1.0
    if interval.low is not None:
        result.low, result.high = interval.low - 1.0, interval.high - 1.0
    if len(old) >= 2 and len(new) >= 2:
        result.pvalue = mann_whitney_u(old, new, result.method).pvalue
    if min(len(old), len(new)) < options.min_repetitions:
        result.verdict = INCONCLUSIVE
        result.notes.append(f"fewer than {options.min_repetitions} repetitions a side "
                            f"({len(old)} vs {len(new)}): no verdict")
    elif result.pvalue < options.alpha and result.change != 0:
        worse = result.change < 0 if higher_is_better else result.change > 0
        result.verdict = SLOWER if worse else FASTER
    else:
        result.verdict = NO_CHANGE
    worsening = -result.change if higher_is_better else result.change
    result.regression = result.verdict == SLOWER and worsening > result.threshold
    return result


def _text(value) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _tool(context: dict) -> str:
    """What measured a file: ireebench (its provenance says so) or the executable."""
    if "ireebench_version" in context:
        return "ireebench"
    return os.path.basename(str(context.get("executable", "")))


def _compared_values(old: BenchmarkFile, new: BenchmarkFile, key: str) -> tuple:
    """``(old, new)`` values of a context key where the files differ in it: for the
    benchmarks both have, each one's rows' own value over the context's (a sweep's
    rows each say their devices, :func:`.machine.row_context`); the contexts' when
    they share none; ``(None, None)`` where they agree."""
    shared = [name for name in new.benchmarks if name in old.benchmarks]
    if not shared:
        return old.context.get(key), new.context.get(key)
    for name in shared:
        a = row_context(old.context, old.benchmarks[name].provenance).get(key)
        b = row_context(new.context, new.benchmarks[name].provenance).get(key)
        if a != b:
            return a, b
    return None, None


def context_notes(old: BenchmarkFile, new: BenchmarkFile) -> list[str]:
    """Differences between the machines or tools of the two files worth knowing
    (for the benchmarks compared: each row's own devices in a sweep or suite)."""
    notes = []
    for key, what in (("host_name", "hosts"), ("num_cpus", "CPU counts"),
                      ("iree_devices", "devices"), ("library_build_type", "build types")):
        a, b = _compared_values(old, new, key)
        if a is not None and b is not None and a != b:
            notes.append(f"old and new ran on different {what} ({_text(a)} and {_text(b)})")
    tools = [_tool(f.context) for f in (old, new)]
    if all(tools) and tools[0] != tools[1]:
        notes.append(f"old was measured by {tools[0]}, new by {tools[1]}")
    return notes


def _metrics_of(benchmark_file: BenchmarkFile) -> set[str]:
    found: set[str] = set()
    for rows in benchmark_file.benchmarks.values():
        found |= rows.metrics
    return found


def check_metric(metric: str, old: BenchmarkFile, new: BenchmarkFile) -> None:
    """A metric neither file has is a usage error listing what they have."""
    if not metric:
        raise flag_error("metric", metric, "name a number of the rows: real_time, cpu_time, "
                                           "device_time, max_bytes_used, a counter")
    for side in (old, new):
        if metric in _metrics_of(side):
            return
    known = sorted(_metrics_of(old) | _metrics_of(new))
    raise flag_error("metric", metric, f"no row of {old.path} or {new.path} has it "
                                       f"(their metrics: {', '.join(known) or 'none'})")


def _rate_counters(benchmark_file: BenchmarkFile) -> set[str]:
    listed = benchmark_file.context.get("rate_counters")
    if isinstance(listed, str):
        listed = listed.split(",")
    return {str(name) for name in listed} if isinstance(listed, list) else set()


def higher_is_better(options: CompareOptions, old: BenchmarkFile, new: BenchmarkFile) -> bool:
    """Whether a larger value of the metric is better: ``--higher_is_better``, else true
    for a rate (``*_per_second``, or listed in a file's ``rate_counters``)."""
    if options.higher_is_better is not None:
        return options.higher_is_better
    if options.is_time:
        return False
    return (options.metric.endswith("_per_second")
            or options.metric in _rate_counters(old) | _rate_counters(new))


def compare(old: BenchmarkFile, new: BenchmarkFile, options: CompareOptions) -> Comparison:
    """Compares every benchmark found in both files (old's order).

    :raises UsageError: no benchmark in common, a metric neither file has.
    """
    common = [name for name in old.benchmarks if name in new.benchmarks]
    if not common:
        raise UsageError(f"compare: {old.path} and {new.path} have no benchmark in common "
                         f"({len(old.benchmarks)} and {len(new.benchmarks)} benchmarks)")
    check_metric(options.metric, old, new)
    higher = higher_is_better(options, old, new)
    comparison = Comparison(
        old.path, new.path, options,
        [compare_benchmark(name, old.benchmarks[name], new.benchmarks[name], options, higher)
         for name in common],
        only_old=[name for name in old.benchmarks if name not in new.benchmarks],
        only_new=[name for name in new.benchmarks if name not in old.benchmarks],
        notes=context_notes(old, new),
        higher_is_better=higher,
    )
    ratios = [b.ratio for b in comparison.benchmarks if b.ratio is not None]
    if ratios:
        comparison.geomean_change = geometric_mean(ratios) - 1.0
        comparison.geomean_count = len(ratios)
    return comparison
