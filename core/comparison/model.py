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
  the exit status 1 (:data:`EXIT_REGRESSION`); otherwise a benchmark the
  gate could not see (``cannot judge``, ``inconclusive``) makes it 4
  (:data:`EXIT_CANNOT_JUDGE`) unless accepted.

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
import re
import statistics
from dataclasses import dataclass, field

from ..errors import flag_error
from ..stash import StashKey
from .inputs import TIME_METRICS, BenchmarkRows
from .utest import (
    CORRECTIONS,
    choose_method,
    mann_whitney_u,
    ratio_interval,
    shift_interval,
)
from .verdicts import (
    AUTO_METRIC,
    CANNOT_JUDGE,
    EXIT_CANNOT_JUDGE,
    EXIT_NO_REGRESSION,
    EXIT_REGRESSION,
    FASTER,
    INCONCLUSIVE,
    NO_CHANGE,
    NOT_COMPARED,
    SLOWER,
    VERDICTS,
)

# Fewer repetitions a side than this and no verdict can be "significant"
# (Google Benchmark's compare.py recommends 9 for its U test too).
MIN_REPETITIONS = 9
DEFAULT_ALPHA = 0.05

DEFAULT_DETECTABLE = 0.10
DEFAULT_CORRECTION = "bh"


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
    metric: str = AUTO_METRIC
    thresholds: tuple[Threshold, ...] = ()
    min_repetitions: int = MIN_REPETITIONS
    # None: decided per metric (a rate is better higher, everything else lower).
    higher_is_better: bool | None = None
    # The widest detectable change a benchmark may have and still be judged
    # (a fraction; --detectable); None: never "cannot judge" (the engine's
    # default for other callers; the compare command's is DEFAULT_DETECTABLE).
    detectable: float | None = None
    # The multiple-comparison correction over the benchmarks tested
    # (utest.adjusted_pvalues: bh, holm, none; the command's default is bh).
    correction: str = "none"
    # --accept_cannot_judge: a benchmark that cannot be judged does not set
    # the exit status.
    accept_cannot_judge: bool = False

    @property
    def is_time(self) -> bool:
        return self.metric in TIME_METRICS or self.metric == AUTO_METRIC

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
    # What the gate could see (comparison.judgement): the metric compared
    # (--metric=auto picks one per benchmark), the p-value adjusted over the
    # suite, the smallest worsening it could have detected (a fraction; None:
    # none), the medians' own change, why the verdict is what it is (shown
    # beside it), the new run's disturbances, the disturbed stored runs left
    # out of the baseline, and the advice ("re-run advised").
    metric: str = ""
    adjusted_pvalue: float | None = None
    run_pvalue: float | None = None  # against a history: the run-level test
    detectable: float | None = None
    median_change: float | None = None
    reason: str = ""
    disturbances: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    advice: str = ""
    additive: bool = False  # compared as a difference (values of 0 or below)
    shift: float | None = None  # that difference (Hodges-Lehmann new - old)

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
            "metric": self.metric or None,
            "adjusted_pvalue": self.adjusted_pvalue,
            "run_pvalue": self.run_pvalue,
            "detectable": self.detectable,
            "median_change": self.median_change,
            "reason": self.reason,
            "disturbances": list(self.disturbances),
            "advice": self.advice,
        }
        if self.baseline_runs:
            data.update(baseline_runs=list(self.baseline_runs),
                        band_low_seconds=self.band_low, band_high_seconds=self.band_high,
                        left_out=list(self.left_out))
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
    # label -> what disturbed that whole run (its context says so), new and old.
    disturbed_runs: dict[str, str] = field(default_factory=dict)
    # How many benchmarks the correction counted (their p-values adjusted together).
    tested: int = 0
    # A paired comparison (ireebench compare A.vmfb B.vmfb, comparison.paired): its
    # rounds, each measuring both sides in random order; 0: two reports or a history.
    paired: int = 0

    @property
    def regressions(self) -> list[BenchmarkComparison]:
        return [b for b in self.benchmarks if b.regression]

    @property
    def cannot_judge(self) -> list[BenchmarkComparison]:
        """The benchmarks the gate could not see: ``cannot judge``, and
        ``inconclusive`` (too few repetitions for a verdict: a +300 % change
        with 5 repetitions a side would pass unseen otherwise)."""
        return [b for b in self.benchmarks if b.verdict in (CANNOT_JUDGE, INCONCLUSIVE)]

    @property
    def exit_status(self) -> int:
        """1 on a regression; else 4 when a benchmark cannot be judged (unless
        accepted); else 0."""
        if self.regressions:
            return EXIT_REGRESSION
        if self.cannot_judge and not self.options.accept_cannot_judge:
            return EXIT_CANNOT_JUDGE
        return EXIT_NO_REGRESSION

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
            "detectable": options.detectable,
            "correction": options.correction,
            "tested": self.tested,
            "accept_cannot_judge": options.accept_cannot_judge,
            "thresholds": [{"pattern": t.pattern, "percent": t.percent}
                           for t in options.thresholds],
            "benchmarks": [b.to_dict() for b in self.benchmarks],
            "geomean": {"change": self.geomean_change, "benchmarks": self.geomean_count},
            "counts": {verdict: self.count(verdict) for verdict in VERDICTS},
            "only_in_old": list(self.only_old),
            "only_in_new": list(self.only_new),
            "notes": list(self.notes),
            "regressions": [b.name for b in self.regressions],
            "cannot_judge": [b.name for b in self.cannot_judge],
            "disturbed_runs": dict(self.disturbed_runs),
            "exit_status": self.exit_status,
        }
        if self.history is not None:
            data["history"] = list(self.history)
        if self.paired:
            data["paired_rounds"] = self.paired
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


def significance(change: float, pvalue: float, alpha: float, higher_is_better: bool) -> str:
    """``faster``/``slower`` when ``pvalue < alpha`` and there is a change, else no change."""
    if pvalue < alpha and change != 0:
        worse = change < 0 if higher_is_better else change > 0
        return SLOWER if worse else FASTER
    return NO_CHANGE


def worsening(result: BenchmarkComparison, higher_is_better: bool) -> float | None:
    """How much worse the estimate says the benchmark got (negative: better)."""
    if result.change is None:
        return None
    return -result.change if higher_is_better else result.change


def _median_change(old: float, new: float) -> float | None:
    return new / old - 1.0 if old > 0 and new > 0 else None


def compare_shift(result: BenchmarkComparison, old: list[float], new: list[float],
                  options: CompareOptions, higher_is_better: bool) -> BenchmarkComparison:
    """A metric that is not a time with values of 0 or below (a count of page faults,
    a heap's growth): the Hodges-Lehmann shift new - old and its interval, relative
    to the old median (no ratio without it), and the U test of the values."""
    result.additive = True
    result.old, result.new = statistics.median(old), statistics.median(new)
    result.method = choose_method(len(old), len(new), len(set(old + new)) < len(old) + len(new))
    interval = shift_interval(old, new, options.confidence, result.method)
    result.shift = interval.ratio
    scale = abs(result.old)
    if scale > 0:
        result.change = interval.ratio / scale
        if interval.low is not None:
            result.low, result.high = interval.low / scale, interval.high / scale
    elif interval.ratio == 0:
        result.change = 0.0
    result.notes.append("values of 0 or below: compared as a difference (Hodges-Lehmann "
                        f"shift {interval.ratio:+.4g}"
                        + (", relative to the old median)" if scale > 0 else
                           "; the old median is 0: no relative change)"))
    if len(old) >= 2 and len(new) >= 2:
        result.pvalue = mann_whitney_u(old, new, result.method).pvalue
    _verdict(result, interval.ratio, old, new, options, higher_is_better)
    return result


def _verdict(result: BenchmarkComparison, estimate: float, old: list[float],
             new: list[float], options: CompareOptions, higher_is_better: bool) -> None:
    """The verdict of this benchmark's own test (``estimate``: the change or shift,
    whose sign says which way), and whether it is a regression."""
    if min(len(old), len(new)) < options.min_repetitions:
        result.verdict = INCONCLUSIVE
        result.notes.append(f"fewer than {options.min_repetitions} repetitions a side "
                            f"({len(old)} vs {len(new)}): no verdict")
    else:
        result.verdict = significance(estimate, result.pvalue, options.alpha, higher_is_better)
    result.regression = is_regression(result, higher_is_better)


def is_regression(result: BenchmarkComparison, higher_is_better: bool) -> bool:
    """``slower`` and worse by more than its threshold (a change from 0, which has no
    ratio, is beyond every threshold)."""
    if result.verdict != SLOWER:
        return False
    worse = worsening(result, higher_is_better)
    return worse is None or worse > result.threshold


def compare_benchmark(name: str, old_rows: BenchmarkRows, new_rows: BenchmarkRows,
                      options: CompareOptions,
                      higher_is_better: bool = False) -> BenchmarkComparison:
    """Compares one benchmark (see the module docstring) on ``options.metric``
    (never ``auto`` here: :func:`ireebench.comparison.judgement.choose_metric`
    picks the metric of each benchmark first). The verdict is that of this
    benchmark's own test; :func:`ireebench.comparison.judgement.judge` then
    weighs the suite (the correction, the detectable change, disturbances)."""
    metric = TIME_METRICS[0] if options.metric == AUTO_METRIC else options.metric
    old, old_source = old_rows.values(metric)
    new, new_source = new_rows.values(metric)
    unit = old_rows.time_unit if options.is_time else ""
    result = BenchmarkComparison(name, unit, len(old), len(new), metric=metric)
    result.notes += _side_notes("old", old_rows, old_source)
    result.notes += _side_notes("new", new_rows, new_source)
    threshold = options.threshold_for(name)
    result.threshold = threshold.fraction if threshold is not None else 0.0
    what = "time" if options.is_time else metric
    if not old or not new:
        missing = " and ".join(side for side, values in (("old", old), ("new", new))
                               if not values)
        result.notes.append(f"no {what} in {missing}")
        return result
    repeated = min(len(old), len(new)) >= 2
    if _constant(old) and _constant(new) and (repeated or not options.is_time):
        compare_exactly(result, old[0], new[0], higher_is_better)
        result.median_change = _median_change(old[0], new[0])
        return result
    if min(old + new) <= 0:
        if not options.is_time:
            compare_shift(result, old, new, options, higher_is_better)
            return result
        result.notes.append("a time is not positive")
        return result
    result.old, result.new = statistics.median(old), statistics.median(new)
    result.median_change = _median_change(result.old, result.new)
    result.method = choose_method(len(old), len(new), len(set(old + new)) < len(old) + len(new))
    interval = ratio_interval(old, new, options.confidence, result.method)
    result.ratio = interval.ratio
    result.change = interval.ratio - 1.0
    if interval.low is not None:
        result.low, result.high = interval.low - 1.0, interval.high - 1.0
    if len(old) >= 2 and len(new) >= 2:
        result.pvalue = mann_whitney_u(old, new, result.method).pvalue
    _verdict(result, result.change, old, new, options, higher_is_better)
    return result


def _level(flag: str, value: float) -> float:
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise flag_error(flag, value, "must be between 0 and 1 (exclusive)")
    return value


def compare_options(params: dict) -> CompareOptions:
    """The checked :class:`CompareOptions` of the comparison flags as parsed (``--alpha``,
    ``--metric``, ``--threshold`` ...: ``ireebench compare``'s, and the report's)."""
    alpha = _level("alpha", params["alpha"])
    confidence = params.get("confidence")
    confidence = 1.0 - alpha if confidence is None else _level("confidence", confidence)
    metric = str(params["metric"] or "").strip()
    if not metric:
        raise flag_error("metric", params["metric"], "name a number of the rows: real_time, "
                                                     "cpu_time, device_time, max_bytes_used, "
                                                     "a counter")
    thresholds = tuple(parse_threshold(text) for text in params.get("threshold") or ())
    # A command that reuses these options without the gate's own flags (the
    # report's) judges as compare does by default.
    correction = str(params.get("correction") or DEFAULT_CORRECTION).strip().lower()
    if correction not in CORRECTIONS:
        raise flag_error("correction", params.get("correction"),
                         f"one of {', '.join(CORRECTIONS)}")
    if metric == AUTO_METRIC and params.get("higher_is_better"):
        raise flag_error("metric", metric, "auto compares times: --higher_is_better "
                                           "does not apply")
    return CompareOptions(alpha=alpha, confidence=confidence, metric=metric,
                          thresholds=thresholds,
                          higher_is_better=params.get("higher_is_better"),
                          detectable=_detectable(params.get("detectable")),
                          correction=correction,
                          accept_cannot_judge=bool(params.get("accept_cannot_judge")))


def _detectable(text) -> float:
    """``--detectable=PERCENT``: a percentage >= 0 (None: the default)."""
    value = f"{DEFAULT_DETECTABLE * 100:g}%" if text is None else str(text).strip()
    try:
        percent = float(value[:-1]) if value.endswith("%") else math.nan
    except ValueError:
        percent = math.nan
    if not math.isfinite(percent) or percent < 0:
        raise flag_error("detectable", text, "expected a percentage >= 0 such as 10%")
    return percent / 100.0
