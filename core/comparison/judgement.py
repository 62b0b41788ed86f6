"""A whole comparison judged: what the gate can see, and what it cannot.

:func:`~ireebench.comparison.model.compare_benchmark` tests one benchmark
on its own. A suite is judged together, here, for two reports
(:func:`compare`) and for a run against its stored history
(:func:`ireebench.comparison.history.compare_history`), in this order: the
metric of each benchmark (:func:`choose_metric`: with ``--metric=auto`` the
CPU time on ``local-sync`` in every run compared, the real time elsewhere);
the correction of the p-values over the suite (Benjamini-Hochberg or Holm);
against a history, the band; the detectable change (the larger of the
test's, the band's and the run-level test's: wider than the threshold is
``cannot judge``); the new run's disturbances (:mod:`.disturbance`: a CPU
regression its lost CPU share explains is ``cannot judge``). Why each step,
and what was measured: docs/compare.md, "The metric that measured the work",
"What the gate can see", "Many benchmarks: the correction", "Disturbed runs".

``cannot judge`` makes the exit status 4
(:data:`~ireebench.comparison.model.EXIT_CANNOT_JUDGE`) unless
``accept_cannot_judge``; a regression (1) wins over it. With
``detectable=None`` (:class:`CompareOptions`' default, for other callers of
the engine) nothing is ``cannot judge``.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field

from ..errors import UsageError, flag_error
from .disturbance import (
    Disturbance,
    benchmark_disturbances,
    cpu_devices,
    cpu_share,
    describe,
    devices_of,
    preempted,
    relevant,
    run_disturbances,
    synchronous_cpu,
)
from .inputs import TIME_METRICS, BenchmarkFile, BenchmarkRows
from .machine import row_context
from .model import (
    AUTO_METRIC,
    CANNOT_JUDGE,
    FASTER,
    NO_CHANGE,
    SLOWER,
    BenchmarkComparison,
    CompareOptions,
    Comparison,
    compare_benchmark,
    is_regression,
    significance,
)
from .utest import (
    adjusted_pvalues,
    detectable_ratio,
    geometric_mean,
    shift_interval,
    student_t_isf,
    student_t_sf,
)

RERUN = "re-run advised"
# Why --metric=auto compares a benchmark on its CPU time.
AUTO_CPU_NOTE = ("compared on cpu_time (--metric=auto: on local-sync the calling thread does "
                 "all the work, so its CPU time is the work; real time adds its waits for a "
                 "CPU on a busy machine)")


@dataclass(frozen=True)
class RunLevel:
    """The new run's median against the spread of a history's run medians (on the
    logarithms): ``t = (log new - mean) / scale``, ``scale = s * sqrt(1 + 1/N)``,
    Student's t with ``df = N - 1`` (see :mod:`.history`)."""

    t: float
    scale: float
    df: int

    def pvalue(self) -> float:
        return min(1.0, 2.0 * student_t_sf(abs(self.t), self.df))

    def detectable(self, level: float) -> float:
        """The change of a run's median this test finds at ``level`` (two-sided)."""
        return math.exp(student_t_isf(level / 2.0, self.df) * self.scale) - 1.0


@dataclass
class Judged:
    """One benchmark on its way through :func:`judge`: its comparison, the values
    compared (old: the pooled baseline against a history), what disturbed its
    new run, how much of a slowdown the drop of its CPU share explains, and,
    against a history, the run-level test."""

    result: BenchmarkComparison
    old: list[float]
    new: list[float]
    disturbed: list[Disturbance] = field(default_factory=list)
    # The baseline's CPU share over the new run's, on a CPU device (1: no drop,
    # or not a CPU device).
    explained: float = 1.0
    run_level: RunLevel | None = None
    # Against a history: the lowest and highest repetition of the stored runs kept,
    # the new run's interval of its median, and how many stored runs were kept.
    envelope: tuple[float, float] | None = None
    new_interval: tuple[float, float] | None = None
    runs: int = 0


# --- the metric of each benchmark ------------------------------------------------


def choose_metric(options: CompareOptions, olds: list[tuple[BenchmarkFile, BenchmarkRows]],
                  new: tuple[BenchmarkFile, BenchmarkRows]) -> tuple[str, str]:
    """``(metric, note)`` of one benchmark (step 1 of the module doc); the note says
    why ``auto`` chose the CPU time, or where real time and CPU time disagree."""
    if options.metric not in (AUTO_METRIC, "real_time"):
        return options.metric, ""
    sides = [new, *olds]
    if options.metric == AUTO_METRIC and all(
            synchronous_cpu(devices_of(report, rows)) and rows.repetitions.get("cpu_time")
            for report, rows in sides):
        return "cpu_time", AUTO_CPU_NOTE
    shares = [(report.path, share) for report, rows in sides
              if (share := preempted(report, rows)) is not None]
    if not shares:
        return TIME_METRICS[0], ""
    shown = ", ".join(f"{share:.2f} in {label}" for label, share in shares[:3])
    more = f" and {len(shares) - 3} more" if len(shares) > 3 else ""
    disagree = (f"real time and CPU time disagree on a synchronous CPU device (CPU share "
                f"{shown}{more}: preempted)")
    return TIME_METRICS[0], (f"{disagree}: the real times measured the wait; --metric=auto "
                             "(the default) compares the CPU time")


def options_for(options: CompareOptions, metric: str) -> CompareOptions:
    return options if options.metric == metric else dataclasses.replace(options, metric=metric)


# --- the suite's verdicts --------------------------------------------------------


def _percent(fraction: float) -> str:
    percent = fraction * 100
    return f"{percent:.0f}%" if percent >= 100 else f"{percent:.3g}%"


def _add_reason(result: BenchmarkComparison, reason: str) -> None:
    result.reason = f"{result.reason}; {reason}" if result.reason else reason


def _tested(item: Judged) -> bool:
    r = item.result
    return r.pvalue is not None and r.verdict in (FASTER, SLOWER, NO_CHANGE)


def _test_detectable(item: Judged, level: float, options: CompareOptions) -> float | None:
    """The test's detectable change at ``level`` (step 4 of the module doc)."""
    r = item.result
    if r.additive:
        if not r.old:
            return None
        interval = shift_interval(item.old, item.new, 1.0 - level, r.method)
        if interval.low is None:
            return None
        return (interval.high - interval.low) / 2.0 / abs(r.old)
    factor = detectable_ratio(item.old, item.new, level, r.method)
    return None if factor is None else factor - 1.0


def _band(result: BenchmarkComparison, higher: bool) -> float | None:
    """A history's band: its verdict rule (step 3) and its detectable change."""
    if result.band_high is None or result.new is None or not result.old:
        return None
    above, below = result.new > result.band_high, result.new < result.band_low
    worse_side, better_side = (below, above) if higher else (above, below)
    shown = f"p={result.adjusted_pvalue if result.adjusted_pvalue is not None else result.pvalue:.3g}"
    moved = {SLOWER: worse_side, FASTER: better_side}
    if result.verdict in moved and not moved[result.verdict]:
        _add_reason(result, f"{result.verdict} than the pooled runs ({shown}) but within the "
                            "band: the stored runs drifted as much")
        result.verdict = NO_CHANGE
    elif result.verdict == NO_CHANGE and worse_side and result.pvalue is not None:
        side = "below" if higher else "above"
        _add_reason(result, f"{side} the band, but not significant ({shown})")
    if higher:
        return 1.0 - result.band_low / result.old
    return result.band_high / result.old - 1.0


def explained_by_shares(old_share: float | None, new_share: float | None) -> float:
    """The factor by which a drop of the CPU share stretches the real time."""
    if not old_share or not new_share:
        return 1.0
    return max(1.0, old_share / new_share)


def _disturbed(item: Judged, options: CompareOptions, higher: bool) -> None:
    """Step 5: the new run's disturbances named and a re-run advised; a regression in
    real time no larger than the drop of its CPU share explains is ``cannot judge``."""
    r = item.result
    found = relevant(item.disturbed, r.metric)
    if found:
        r.disturbances = [str(d) for d in found]
        r.advice = RERUN
    if (options.detectable is None or item.explained <= 1.0 or r.metric != "real_time"
            or not is_regression(r, higher)):
        return
    bound = r.low if r.low is not None else r.change
    if bound is not None and 1.0 + bound <= item.explained:
        r.verdict = CANNOT_JUDGE
        r.advice = RERUN
        _add_reason(r, f"slower in real time, but its CPU share fell {item.explained:.2f}x: "
                       "it waited for the CPU")


def _beyond_envelope(item: Judged, higher: bool) -> str:
    """Against a history: ``worse``/``better`` when the new run's median interval lies
    entirely beyond every repetition of every stored run kept (the envelope), by
    more than the benchmark's threshold, else ""."""
    r = item.result
    if item.envelope is None or item.new_interval is None or r.additive:
        return ""
    low, high = item.new_interval
    margin = 1.0 + r.threshold
    above = low > item.envelope[1] * margin
    below = high * margin < item.envelope[0]
    if not (above or below):
        return ""
    return "worse" if above != higher else "better"


def _envelope_verdict(item: Judged, u_pvalue: float, options: CompareOptions,
                      higher: bool) -> None:
    """A change beyond every stored run is judged whatever the number of runs (the
    run-level test of a few runs could only see changes of hundreds of percent):
    a significant U test against the pooled runs makes it slower or faster."""
    r = item.result
    side = _beyond_envelope(item, higher)
    if r.verdict != NO_CHANGE or not side or u_pvalue >= options.alpha:
        return
    r.verdict = SLOWER if side == "worse" else FASTER
    r.adjusted_pvalue = u_pvalue
    low, high = item.new_interval
    edge = item.envelope[1] if low > item.envelope[1] else item.envelope[0]
    where = "above the highest" if low > item.envelope[1] else "below the lowest"
    if r.threshold:
        where = f"more than {_percent(r.threshold)} {where}"
    unit = "s" if r.time_unit else ""
    _add_reason(r, f"beyond every stored run: its median's interval [{low:.4g}{unit}, "
                   f"{high:.4g}{unit}] lies {where} repetition of the {item.runs} stored "
                   f"run(s) ({edge:.4g}{unit})")


def _decider(item: Judged) -> str:
    """What would decide a benchmark that cannot be judged, in a few words."""
    paired = "the paired A/B (ireebench compare BASE.vmfb HEAD.vmfb)"
    if item.envelope is not None:
        return (f"more stored runs ({item.runs} now), runs with --benchmark_processes, "
                f"or {paired} would decide it")
    return f"more repetitions, --benchmark_processes, or {paired} would decide it"


def _unjudged(item: Judged, options: CompareOptions, level: float, tested: int) -> None:
    """Step 4: ``cannot judge`` for a benchmark that could not have shown the change
    it is asked about, except, against a history, a new run within the stored
    runs' band: it passes, with the smallest change this history could show."""
    r = item.result
    relative = not (r.additive and not r.old)  # a difference from 0 has no size to detect
    if options.detectable is None or r.verdict != NO_CHANGE or not relative:
        return
    limit = max(options.detectable, r.threshold)
    if r.detectable is not None and r.detectable <= limit:
        return
    if (item.envelope is not None and r.band_low is not None and r.new is not None
            and r.band_low <= r.new <= r.band_high):
        could = "no change" if r.detectable is None else f"a change of {_percent(r.detectable)}"
        r.notes.append(f"within the {item.runs} stored run(s)' band: passes; only {could} or "
                       f"more could have shown against this history ({_decider(item)})")
        return
    r.verdict = CANNOT_JUDGE
    if r.detectable is None:
        _add_reason(r, f"no change could have been significant with {r.n_old} vs "
                       f"{r.n_new} repetitions" + (f" among {tested} benchmarks"
                                                  if level < options.alpha else ""))
    else:
        _add_reason(r, f"detectable {_percent(r.detectable)} > {_percent(limit)}")
    r.notes.append(f"cannot judge: {_decider(item)}")


def judge(comparison: Comparison, items: list[Judged], options: CompareOptions,
          higher: bool) -> Comparison:
    """The suite's verdicts (the module doc's steps 2 to 5), the regressions and the
    geometric mean; ``comparison.benchmarks`` becomes the items' results."""
    tested = [item for item in items if _tested(item)]
    for item in tested:
        if item.run_level is not None:
            item.result.run_pvalue = item.run_level.pvalue()
    # Against a history both tests must reject (intersection-union): the larger p.
    combined = [max(item.result.pvalue, item.result.run_pvalue or 0.0) for item in tested]
    adjusted = adjusted_pvalues(combined, options.correction)
    # The U tests alone, adjusted alike: what a change beyond every stored run needs.
    u_adjusted = adjusted_pvalues([item.result.pvalue for item in tested], options.correction)
    comparison.tested = len(tested)
    level = options.alpha
    if options.correction != "none" and len(tested) > 1:
        level = options.alpha / len(tested)
    for item, pvalue, u_pvalue in zip(tested, adjusted, u_adjusted):
        r = item.result
        r.adjusted_pvalue = pvalue
        estimate = r.shift if r.additive else r.change
        r.verdict = significance(estimate, pvalue, options.alpha, higher)
        r.detectable = _test_detectable(item, level, options)
        if item.run_level is not None:
            if r.detectable is not None:
                r.detectable = max(r.detectable, item.run_level.detectable(level))
            if r.verdict == NO_CHANGE and r.pvalue < options.alpha <= r.run_pvalue:
                side = "slower" if (r.change or 0) > 0 else "faster"
                _add_reason(r, f"{side} than the pooled repetitions (p={r.pvalue:.3g}) but "
                               f"within the runs' own spread (p={r.run_pvalue:.3g})")
        _envelope_verdict(item, u_pvalue, options, higher)
    for item in items:
        r = item.result
        if r.method == "equal values":
            r.detectable = 0.0
        band = _band(r, higher)
        if band is not None and _tested(item):
            r.detectable = None if r.detectable is None else max(r.detectable, band)
        _unjudged(item, options, level, len(tested))
        _disturbed(item, options, higher)
        r.regression = is_regression(r, higher)
    comparison.benchmarks = [item.result for item in items]
    ratios = [b.ratio for b in comparison.benchmarks if b.ratio is not None]
    if ratios:
        comparison.geomean_change = geometric_mean(ratios) - 1.0
        comparison.geomean_count = len(ratios)
    return comparison


def name_disturbed_runs(comparison: Comparison, reports: list[BenchmarkFile]) -> None:
    """``comparison.disturbed_runs``: what disturbed each whole run, by label."""
    for report in reports:
        found = run_disturbances(report)
        if found:
            comparison.disturbed_runs[report.path] = describe(found)


# --- checks of the two files -----------------------------------------------------


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


def check_rows(report: BenchmarkFile) -> None:
    """A report whose every row failed has nothing to compare: one line that says so
    and names the first error (a usage error: exit 2)."""
    benchmarks = report.benchmarks.values()
    if not benchmarks or any(rows.metrics for rows in benchmarks):
        return
    failed = [(rows.run_name, rows.errors) for rows in benchmarks if rows.errors]
    if not failed:
        return
    count = sum(len(errors) for _, errors in failed)
    name, errors = failed[0]
    raise UsageError(f"compare: {report.path}: every row failed ({count} error row(s) in "
                     f"{len(failed)} benchmark(s); the first: {name}: {errors[0]})")


def check_values(metric: str, reports: list[BenchmarkFile]) -> None:
    """A compared metric whose value in some row is not a finite number (a string,
    NaN, Infinity) is bad input: one line naming the file, the row and the metric."""
    for report in reports:
        if metric in report.invalid:
            where, shown = report.invalid[metric]
            raise UsageError(f"compare: {report.path}: {where}: {metric} is not a finite "
                             f"number ({shown})")


def check_metric(metric: str, old: BenchmarkFile, new: BenchmarkFile) -> None:
    """A metric neither file has is a usage error listing what they have; so is a
    value of it that is not a number."""
    if not metric:
        raise flag_error("metric", metric, "name a number of the rows: real_time, cpu_time, "
                                           "device_time, max_bytes_used, a counter, auto")
    check_values(metric, [old, new])
    metric = TIME_METRICS[0] if metric == AUTO_METRIC else metric
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


# --- two reports ---------------------------------------------------------------------


def compare(old: BenchmarkFile, new: BenchmarkFile, options: CompareOptions) -> Comparison:
    """Compares every benchmark found in both files (old's order).

    :raises UsageError: no benchmark in common, a file whose every row failed, a
        metric neither file has or a value of it that is not a number.
    """
    common = [name for name in old.benchmarks if name in new.benchmarks]
    if not common:
        raise UsageError(f"compare: {old.path} and {new.path} have no benchmark in common "
                         f"({len(old.benchmarks)} and {len(new.benchmarks)} benchmarks)")
    check_rows(old)
    check_rows(new)
    check_metric(options.metric, old, new)
    higher = higher_is_better(options, old, new)
    comparison = Comparison(
        old.path, new.path, options, [],
        only_old=[name for name in old.benchmarks if name not in new.benchmarks],
        only_new=[name for name in new.benchmarks if name not in old.benchmarks],
        notes=context_notes(old, new),
        higher_is_better=higher,
    )
    items = []
    new_run = run_disturbances(new)
    for name in common:
        old_rows, new_rows = old.benchmarks[name], new.benchmarks[name]
        metric, note = choose_metric(options, [(old, old_rows)], (new, new_rows))
        result = compare_benchmark(name, old_rows, new_rows, options_for(options, metric),
                                   higher)
        if note:
            result.notes.append(note)
        explained = 1.0
        if cpu_devices(devices_of(new, new_rows)):
            explained = explained_by_shares(cpu_share(old_rows), cpu_share(new_rows))
        items.append(Judged(result, old_rows.values(metric)[0], new_rows.values(metric)[0],
                            new_run + benchmark_disturbances(new, new_rows), explained))
    name_disturbed_runs(comparison, [new, old])
    return judge(comparison, items, options, higher)

