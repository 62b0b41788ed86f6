"""A scenario run's verdict, LoadGen's way, and the Google Benchmark row that carries it.

From a :class:`~.driver.Timeline`: each query's latency (completion minus
scheduled time; the Server's issue lag apart), the early-stopping estimate of
every percentile LoadGen reports (or how many queries it needs,
:mod:`ireebench.lib.early_stopping`), the throughput, and VALID / INVALID by
LoadGen's rules (``PerformanceSummary``, ``results.cc``: min duration, min
queries, the latency bound and its early-stopping test), and for the Server
whether it kept up with its arrivals (:func:`_kept_up`). The row
(:func:`scenario_row`): the queries as ``iterations``, their mean latency as
the real time (Offline: the time per sample), counters in milliseconds as
vLLM names them, the verdict in the label. Rules, rows and counters:
docs/serving.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ireebench.backend import new_run
from ireebench.lib import early_stopping, slo
from ireebench.results import Counter

from .settings import MULTI_STREAM, OFFLINE, SERVER, Settings, format_seconds

# Server: whether the run kept up with its arrivals (docs/serving.md, "Kept up").
# Both rules compare shares of the run, not absolute times, so they read the same
# on any machine, and use the middle or the medians of the run, so a stall of a
# few queries (an issuing thread woken late on a loaded machine) moves neither.
KEPT_UP = 0.9  # the completed rate may fall this far below the scheduled one
GROWTH = 0.1  # latency may grow this many seconds per second of schedule
KEEP_UP_QUERIES = 30  # fewer queries cannot tell a backlog from noise


@dataclass
class Summary:
    """The numbers and the verdict of one scenario run."""

    settings: Settings
    queries: int
    samples: int
    latencies: list[float]  # seconds, sorted
    mean_latency: float
    duration: float  # first issue (Server: time 0) to last completion, seconds
    estimates: dict[float, float | None]  # percentile -> early-stopping estimate
    issue_lag: list[float] = field(default_factory=list)  # Server, seconds, sorted
    qps: float = 0.0  # completed queries per second (Server)
    scheduled_qps: float = 0.0  # (n - 1) / last scheduled time (Server)
    overlatency: int = 0
    reasons: list[str] = field(default_factory=list)  # why INVALID
    notes: list[str] = field(default_factory=list)  # what the missing percentiles need

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def throughput(self) -> float:
        """Samples completed per second."""
        return self.samples / self.duration if self.duration > 0 else 0.0

    def verdict(self) -> str:
        text = "VALID" if self.valid else "INVALID: " + "; ".join(self.reasons)
        return "; ".join([text, *self.notes])


def summarize(timeline, settings: Settings) -> Summary:
    """LoadGen's summary of a run (see the module docstring)."""
    start = timeline.start
    latencies = sorted(done - scheduled for done, scheduled in
                       zip(timeline.completed, timeline.scheduled))
    queries = timeline.queries
    samples = queries * timeline.samples_per_query
    first = start if settings.scenario in (SERVER, OFFLINE) else timeline.issued[0]
    duration = max(timeline.completed) - first
    summary = Summary(settings, queries, samples, latencies,
                      math.fsum(latencies) / queries, duration, {})
    if settings.scenario != OFFLINE:
        summary.estimates = early_stopping.estimates(latencies)
    if settings.scenario == SERVER:
        summary.issue_lag = sorted(issued - scheduled for issued, scheduled in
                                   zip(timeline.issued, timeline.scheduled))
        last_scheduled = timeline.scheduled[-1] - start
        last_completed = max(timeline.completed) - start
        if queries > 1:
            summary.qps = (queries - 1) / last_completed if last_completed > 0 else 0.0
            summary.scheduled_qps = (queries - 1) / last_scheduled if last_scheduled > 0 else 0.0
    _judge(summary, timeline)
    if timeline.issue_priority:  # its issue lag is the machine's scheduler's too
        summary.notes.append(timeline.issue_priority)
    _note_missing(summary)
    return summary


def _judge(summary: Summary, timeline) -> None:
    settings, reasons = summary.settings, summary.reasons
    start = timeline.start
    if settings.scenario == SERVER:
        span, what = timeline.scheduled[-1] - start, "the last query was scheduled"
    elif settings.scenario == OFFLINE:
        span, what = max(timeline.completed) - start, "the last sample completed"
    else:
        span, what = timeline.issued[-1] - timeline.issued[0], "the last query was issued"
    if span < settings.min_duration:
        reasons.append(f"{what} {format_seconds(span)} after the start, under "
                       f"--min_duration={format_seconds(settings.min_duration)}")
    count = summary.samples if settings.scenario == OFFLINE else summary.queries
    if count < settings.min_queries:
        reasons.append(f"{count} {'samples' if settings.scenario == OFFLINE else 'queries'}, "
                       f"under --min_query_count={settings.min_queries}")
    bound = settings.bound
    if bound is not None:
        latencies = summary.latencies
        summary.overlatency = len(latencies) - _count_within(latencies, bound.seconds)
        measured = early_stopping.sample_percentile(latencies, bound.percentile)
        if measured > bound.seconds:
            reasons.append(f"the sample {bound.name} {format_seconds(measured)} > "
                           f"{format_seconds(bound.seconds)}")
        else:
            needed = early_stopping.queries_for_bound(summary.overlatency, bound.percentile)
            if summary.queries < needed:
                reasons.append(f"{summary.overlatency} of {summary.queries} queries over "
                               f"{format_seconds(bound.seconds)}: {bound.name} <= "
                               f"{format_seconds(bound.seconds)} needs at least {needed} "
                               f"queries for early stopping")
    elif settings.scenario == SERVER:
        # LoadGen's bound is per model; none fits every function, so none is assumed.
        summary.notes.append("no --latency_bound: judged by the duration and keep-up "
                             "rules only")
    elif settings.target_percentile is not None:
        target = settings.target_percentile
        if summary.estimates.get(target) is None:
            needed = early_stopping.minimum_queries(target)
            reasons.append(f"{early_stopping.percentile_name(target)} needs at least {needed} "
                           f"queries for early stopping, ran {summary.queries}")
    if settings.scenario == SERVER:
        _kept_up(summary, timeline)


def _kept_up(summary: Summary, timeline) -> None:
    """The Server's keep-up rules: the rate completed, and the backlog's growth."""
    scheduled, completed, reasons = timeline.scheduled, timeline.completed, summary.reasons
    count = len(completed)
    if count < KEEP_UP_QUERIES:
        summary.notes.append(f"{count} queries: too few to judge whether it kept up "
                             f"({KEEP_UP_QUERIES} needed)")
        return
    # Rates and growth between the medians of the thirds of the queries (their
    # scheduled times, completions, latencies): a constant latency cancels out, a
    # stall of fewer queries than half a third moves no median, and a rule fires only
    # when it holds from the first third to the second and from the second to the
    # last (an overloaded queue falls behind all run; one long stall does it once).
    third = count // 3
    thirds = [slice(None, third), slice(third, count - third), slice(count - third, None)]
    latency = [end - begin for end, begin in zip(completed, scheduled)]
    at = [(_median(scheduled[part]), _median(completed[part]), _median(latency[part]))
          for part in thirds]
    steps = [(at[0], at[1]), (at[1], at[2]), (at[0], at[2])]  # the last: the label's
    if any(later[0] <= earlier[0] or later[1] <= earlier[1] for earlier, later in steps):
        return  # a trace with simultaneous arrivals: no rate to judge
    served = [(later[0] - earlier[0]) / (later[1] - earlier[1]) for earlier, later in steps]
    if all(share < KEPT_UP for share in served):
        queries = count - third  # between the first and the last third's medians
        offered = queries / (at[2][0] - at[0][0])
        reasons.append(f"it did not keep up: completed {served[2] * offered:.4g} queries/s, "
                       f"under {KEPT_UP:.0%} of the {offered:.4g} scheduled")
    # An overloaded queue's latency grows in proportion to the time run (by 1 - 1/rho
    # a second); a queue that keeps up has the same latency at the end as at the start.
    growth = [(later[2] - earlier[2]) / (later[0] - earlier[0]) for earlier, later in steps]
    if all(rate > GROWTH for rate in growth) and at[2][2] > 2 * at[0][2]:
        reasons.append(f"the backlog grew: median latency {format_seconds(at[0][2])} in the "
                       f"first third of the queries, {format_seconds(at[2][2])} in the last "
                       f"({growth[2]:.2g} s a second of schedule, over {GROWTH:g})")


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _count_within(ordered: list[float], limit: float) -> int:
    """How many of the sorted values are at most ``limit`` (LoadGen: over is ``> limit``)."""
    low, high = 0, len(ordered)
    while low < high:
        middle = (low + high) // 2
        if ordered[middle] <= limit:
            low = middle + 1
        else:
            high = middle
    return low


def _note_missing(summary: Summary) -> None:
    note = early_stopping.missing_note(summary.estimates, summary.queries)
    if note:
        summary.notes.append(note)


def _ms(seconds: float) -> Counter:
    return Counter(seconds * 1e3)


def scenario_row(workload, repetition, summary: Summary, timeline, slos=None):
    """The repetition's Google Benchmark row (see the module docstring); with ``slos``
    (``--goodput``) a Server's row adds its goodput: the queries whose latency met the
    SLOs (a query's whole answer is its first token too: ``ttft`` and ``e2e`` are its
    latency; ``tpot`` does not apply) per second of the run."""
    run = new_run(workload, repetition.repetitions, repetition.index)
    settings = summary.settings
    if settings.scenario == OFFLINE:
        run.iterations = summary.samples
        run.real_accumulated_time = summary.duration
    else:
        run.iterations = summary.queries
        run.real_accumulated_time = math.fsum(summary.latencies)
    run.cpu_accumulated_time = timeline.cpu_seconds
    run.samples = [run.real_accumulated_time / run.iterations]
    counters = run.counters
    counters["items_per_second"] = Counter(summary.throughput, is_rate=True)
    counters["valid"] = Counter(1.0 if summary.valid else 0.0)
    if settings.scenario != OFFLINE:
        for p, value in summary.estimates.items():
            if value is not None:
                counters[f"{early_stopping.percentile_name(p)}_ms"] = _ms(value)
        counters["max_ms"] = _ms(summary.latencies[-1])
    if settings.scenario == SERVER:
        if settings.arrivals.trace is None:
            counters["target_qps"] = Counter(settings.arrivals.qps)
        counters["qps"] = Counter(summary.qps)
        counters["issue_lag_p99_ms"] = _ms(early_stopping.sample_percentile(summary.issue_lag,
                                                                            0.99))
        counters["issue_lag_max_ms"] = _ms(summary.issue_lag[-1])
    if settings.scenario == SERVER and slos:
        good = sum(slo.met({"ttft": latency, "e2e": latency}, slos)
                   for latency in summary.latencies)
        counters["goodput"] = Counter(good / summary.duration if summary.duration > 0 else 0.0,
                                      is_rate=True)
        counters["good_queries"] = Counter(float(good))
    if settings.scenario == MULTI_STREAM:
        counters["samples_per_query"] = Counter(float(settings.samples_per_query))
    if settings.bound is not None:
        counters["overlatency"] = Counter(float(summary.overlatency))
    run.label = summary.verdict() + (f"; {slo.describe(slos)}"
                                     if slos and settings.scenario == SERVER else "")
    return run
