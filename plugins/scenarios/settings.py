"""A point's scenario flags, read and checked into one :class:`Settings`.

Each check is one line naming the flag (``--latency_bound=p99: expected
pNN:TIME ...``). The settings are read again from each point's config
(:func:`settings_of`), so a sweep may vary them (``--sweep
target_qps=50,100,200``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from ireebench.errors import UsageError, flag_error
from ireebench.lib import early_stopping

from .arrivals import MAX_QUERIES, Arrivals, read_trace

SINGLE_STREAM, MULTI_STREAM, SERVER, OFFLINE = (
    "single_stream", "multi_stream", "server", "offline")
SCENARIOS = (SINGLE_STREAM, MULTI_STREAM, SERVER, OFFLINE)

# LoadGen's target percentile of the closed-loop scenarios (test_settings.h):
# what their early-stopping verdict is about when no --latency_bound names one.
TARGET_PERCENTILE = {SINGLE_STREAM: 0.90, MULTI_STREAM: 0.99}
# LoadGen's defaults (TestSettings): 100 queries; MultiStream 8 samples a query.
DEFAULT_MIN_QUERIES = 100
DEFAULT_SAMPLES_PER_QUERY = 8
# Bounds checked before a run (docs/scenarios.md): past them a query's
# variant list reaches the runtime's allocator, lanes never all start, or a
# schedule never ends.
MAX_SAMPLES_PER_QUERY = 1 << 16
MAX_LANES = 1024
MAX_SCHEDULE_S = 3600.0  # or --min_duration, if longer
DEFAULT_MIN_DURATION = "1s"  # LoadGen's TestSettings default is 10 s, MLPerf's rules 600 s
# Offline keeps this many invocations in flight per lane: enough that the
# device never waits for the next issue.
OFFLINE_DEPTH = 4

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|ms|s)?\s*$")
_BOUND = re.compile(r"^\s*p(\d{1,3}(?:\.\d+)?)\s*:\s*(.+)$")


def parse_duration(text: str, flag: str, default_unit: str = "s") -> float:
    """``20ms``, ``1.5s``, ``250us``: seconds (a bare number is in ``default_unit``)."""
    match = _DURATION.match(str(text))
    if not match:
        raise flag_error(flag, text, "expected a time such as 10s, 20ms or 500us")
    seconds = float(match.group(1)) * _UNITS[match.group(2) or default_unit]
    if not math.isfinite(seconds):
        raise flag_error(flag, text, "expected a finite time")
    return seconds


@dataclass(frozen=True)
class LatencyBound:
    """``--latency_bound=p99:20ms``: the p-th percentile of the latency must stay under it."""

    percentile: float  # 0.99
    seconds: float
    text: str  # as given, for names and messages

    @property
    def name(self) -> str:
        return early_stopping.percentile_name(self.percentile)

    def describe(self) -> str:
        return f"{self.name} <= {format_seconds(self.seconds)}"


def parse_bound(text: str) -> LatencyBound:
    match = _BOUND.match(str(text))
    if not match:
        raise flag_error("latency_bound", text, "expected pNN:TIME, such as p99:20ms or p90:5ms")
    percentile = float(match.group(1)) / 100.0
    if not 0.0 < percentile < 1.0:
        raise flag_error("latency_bound", text, "the percentile must be above p0 and below p100")
    seconds = parse_duration(match.group(2), "latency_bound", "ms")
    if seconds <= 0:
        raise flag_error("latency_bound", text, "the bound must be a positive time")
    return LatencyBound(percentile, seconds, f"p{match.group(1)}:{match.group(2).strip()}")


def format_seconds(seconds: float) -> str:
    """A time as people write it: ``20 ms``, ``1.5 s``, ``250 us``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.4g} ns"


@dataclass(frozen=True)
class Settings:
    """One point's scenario, its load and its rules."""

    scenario: str
    arrivals: Arrivals  # Server only
    seed: int
    min_duration: float
    min_queries: int
    samples_per_query: int  # MultiStream (1 elsewhere)
    lanes: int  # --batch_concurrency: fence chains, queries round robin
    bound: LatencyBound | None
    search: bool
    log_path: str | None

    @property
    def target_percentile(self) -> float | None:
        """The percentile the verdict is about: the bound's, else LoadGen's for the scenario."""
        if self.bound is not None:
            return self.bound.percentile
        return TARGET_PERCENTILE.get(self.scenario)

    def with_value(self, value) -> Settings:
        """The same settings at another load: a rate (Server) or samples per query."""
        if self.scenario == SERVER:
            arrivals = Arrivals(qps=value, burstiness=self.arrivals.burstiness)
            return dataclasses.replace(self, arrivals=arrivals)
        return dataclasses.replace(self, samples_per_query=int(value))


def settings_of(config) -> Settings | None:
    """The point's scenario settings, or None without ``--scenario`` (errors name the flag)."""
    scenario = config.getoption("scenario")
    if not scenario:
        return None
    option = config.getoption
    bound = parse_bound(option("latency_bound")) if option("latency_bound") else None
    search = bool(option("search"))
    min_duration = parse_duration(option("min_duration") or DEFAULT_MIN_DURATION,
                                  "min_duration")
    if min_duration < 0:
        raise flag_error("min_duration", option("min_duration"), "must be >= 0")
    min_queries = option("min_query_count")
    if min_queries is None:
        # LoadGen's 100, or what the verdict's percentile needs (662 for p99).
        target = bound.percentile if bound is not None else TARGET_PERCENTILE.get(scenario)
        min_queries = DEFAULT_MIN_QUERIES
        if target is not None:
            min_queries = max(min_queries, early_stopping.minimum_queries(target))
        if min_queries > MAX_QUERIES:
            raise flag_error("latency_bound", bound.text, f"judging p{bound.text[1:].split(':')[0]}"
                             f" needs {min_queries} queries, more than ireebench prepares for "
                             f"one run ({MAX_QUERIES}); bound a lower percentile")
    elif not 1 <= min_queries <= MAX_QUERIES:
        raise flag_error("min_query_count", min_queries,
                         f"must be at least 1 and at most {MAX_QUERIES}")
    seed = option("scenario_seed")
    if seed < 0:
        raise flag_error("scenario_seed", seed, "must be >= 0")
    samples = option("samples_per_query")
    if samples is not None and scenario != MULTI_STREAM:
        raise flag_error("samples_per_query", samples, "applies to --scenario=multi_stream")
    samples = DEFAULT_SAMPLES_PER_QUERY if samples is None else samples
    if not 1 <= samples <= MAX_SAMPLES_PER_QUERY:
        raise flag_error("samples_per_query", samples,
                         f"must be at least 1 and at most {MAX_SAMPLES_PER_QUERY}")
    if scenario != MULTI_STREAM:
        samples = 1
    arrivals = _arrivals(config, scenario, search)
    if search:
        if bound is None:
            raise UsageError("--search: needs --latency_bound=pNN:TIME, the bound the highest "
                             "load must meet")
        if scenario not in (SERVER, MULTI_STREAM):
            raise UsageError(f"--search: searches --target_qps (server) or --samples_per_query "
                             f"(multi_stream), not --scenario={scenario}")
        if arrivals.trace is not None:
            raise UsageError("--search: a replayed --arrival_trace has no rate to search")
        if option("benchmark_repetitions") != 1:
            raise flag_error("benchmark_repetitions", option("benchmark_repetitions"),
                             "--search measures one search per benchmark (each tried load is "
                             "a row); use --benchmark_repetitions=1")
    if bound is not None and scenario == OFFLINE:
        raise UsageError(f"--latency_bound={bound.text}: Offline measures throughput, not "
                         "latency; use --scenario=server or single_stream")
    lanes = option("batch_concurrency") or 1
    if lanes > MAX_LANES:
        raise flag_error("batch_concurrency", lanes, f"must be at most {MAX_LANES} lanes")
    longest = max(MAX_SCHEDULE_S, min_duration)
    span = arrivals.trace[-1] if arrivals.trace is not None else \
        min_queries / arrivals.qps if arrivals.qps else 0.0
    if span > longest:
        flag = ("arrival_trace", option("arrival_trace")) if arrivals.trace is not None else \
            ("target_qps", option("target_qps"))
        what = "spans" if arrivals.trace is not None else \
            f"{min_queries} queries at this rate take about"
        raise flag_error(*flag, f"{what} {span:.3g} s, longer than the longest schedule "
                                f"ireebench runs ({longest:g} s: the larger of 1 h and "
                                "--min_duration)")
    if option("batch_size") != 1:
        raise flag_error("batch_size", option("batch_size"),
                         f"--scenario={scenario} issues one invocation per sample; use "
                         "--samples_per_query (multi_stream) for more")
    return Settings(scenario, arrivals, seed, min_duration, min_queries, samples, lanes, bound,
                    search, option("scenario_log") or None)


def _arrivals(config, scenario: str, search: bool) -> Arrivals:
    option = config.getoption
    qps, burstiness, trace = option("target_qps"), option("burstiness"), option("arrival_trace")
    if scenario != SERVER:
        for name, value in (("target_qps", qps), ("arrival_trace", trace)):
            if value is not None:
                raise flag_error(name, value, "applies to --scenario=server (the other "
                                 "scenarios issue a query when the last one completes)")
        if burstiness is not None:
            raise flag_error("burstiness", burstiness, "applies to --scenario=server")
        return Arrivals()
    if trace is not None:
        if qps is not None or burstiness is not None:
            raise UsageError(f"--arrival_trace={trace}: the trace sets the arrivals; drop "
                             "--target_qps and --burstiness")
        return Arrivals(trace=read_trace(trace))
    burstiness = 1.0 if burstiness is None else burstiness
    if not (burstiness > 0 and math.isfinite(burstiness)):
        raise flag_error("burstiness", burstiness, "must be a positive number (1 = Poisson)")
    if qps is None:
        if search:
            return Arrivals(qps=0.0, burstiness=burstiness)  # the search finds a start
        raise UsageError("--scenario=server: needs --target_qps=QPS (Poisson arrivals at that "
                         "rate) or --arrival_trace=FILE")
    if not (qps > 0 and math.isfinite(qps)):
        raise flag_error("target_qps", qps, "must be a positive number of queries per second")
    return Arrivals(qps=qps, burstiness=burstiness)
