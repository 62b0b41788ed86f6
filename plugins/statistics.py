"""More statistics and adaptive stopping: ``--benchmark_statistics``, ``--benchmark_min_rel_accuracy``.

Off by default: without these flags the report is Google Benchmark's, row
for row. ``--benchmark_statistics`` adds one aggregate row per statistic
(``pNN``, ``min``, ``max``, ``ci``, ``outliers``, ``precision``, and those
plugins add through ``ireebench_statistics``), computed by the core
(:mod:`ireebench.stats`); ``--benchmark_min_rel_accuracy`` measures
repetitions until the median's precision is reached or
``--benchmark_max_time`` is spent. Each statistic's definition and the
stopping rule are docs/statistics.md's; the hooks, docs/architecture.md's.
"""

from __future__ import annotations

import math
import numbers
import re
import time

from ireebench import hookimpl, hookspec
from ireebench.backend import ADAPTIVE_REPETITIONS, REPETITION_SAMPLES, require
from ireebench.errors import PluginError, UsageError, flag_error
from ireebench.hookcall import collect_named, described, passes_through
from ireebench.hookspecs import named_objects
from ireebench.lib.statistics import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_TIME,
    STATE,
    StatisticsState,
    continue_until_precise,
    outlier_fraction,
    percentile,
    relative_precision,
)
from ireebench.stats import (
    EXTRA_STATISTICS,
    STATISTICS,
    Statistic,
    median_ci,
    minimum_repetitions,
)

GROUP = "Statistics and adaptive stopping"
PLUGIN_NAME = "statistics"  # this plugin's registration name
PERCENTILE = re.compile(r"p(\d{1,2}(?:\.\d+)?|100)")


# --- the hook this plugin declares --------------------------------------------


class StatisticsHooks:
    """Declared through ``ireebench_addhooks``: only this plugin calls it."""

    @staticmethod
    @hookspec
    @named_objects("statistic")
    def ireebench_statistics(config):
        """Return the statistics this plugin provides, selectable by name.

        Called once per run by the built-in ``statistics`` plugin while it
        configures (its ``ireebench_configure`` runs last), when
        ``--benchmark_statistics`` or ``--benchmark_min_rel_accuracy`` is
        given. ``--benchmark_statistics=NAME,...`` selects statistics by these
        names; each selected one adds an aggregate row ``<run_name>_<name>``
        per benchmark after Google Benchmark's ``_mean``, ``_median``,
        ``_stddev`` and ``_cv`` (the shape of Google Benchmark's custom
        statistics, so compare.py and dashboards read them). The built-in
        names (``min``, ``max``, ``ci``, ``outliers``, ``precision``; ``pNN``
        percentiles) come through this hook too. A name defined twice is an
        error naming both plugins, and so is a name that shadows a built-in
        percentile (``p99.9``).

        :param config: the run's :class:`Config` (``config.getoption("confidence")``
            is the confidence level of the built-in interval).
        :return: a dict of name to an :class:`ireebench.Statistic` (``name``,
            ``compute(values) -> float | None``, ``unit`` ``"time"`` or
            ``"percentage"``), or to a list of them (one name selecting several
            rows, like ``ci``); or a list of ``Statistic`` (named by their
            ``name``); or ``None``.
        """


@hookimpl
def ireebench_addhooks(pluginmanager):
    """Declares ``ireebench_statistics``."""
    pluginmanager.add_hookspecs(StatisticsHooks)


# --- the statistics ---------------------------------------------------------


def percentile_statistic(name: str) -> Statistic:
    q = float(name[1:])
    return Statistic(name, lambda values: percentile(values, q))


def builtin_statistics(confidence: float) -> dict:
    """The built-in statistics by the name ``--benchmark_statistics`` selects them with."""

    def bound(index):
        def compute(values):
            interval = median_ci(values, confidence)
            return None if interval is None else interval[index]
        return compute

    return {
        "min": Statistic("min", min),
        "max": Statistic("max", max),
        "ci": [Statistic("ci_lower", bound(0)), Statistic("ci_upper", bound(1))],
        "outliers": Statistic("outliers", outlier_fraction, "percentage"),
        "precision": Statistic(
            "precision", lambda values: relative_precision(values, confidence), "percentage"),
    }


# --- the options --------------------------------------------------------------


@hookimpl
def ireebench_addoption(parser):
    """Adds --benchmark_statistics, --confidence, --benchmark_min_rel_accuracy, --benchmark_max_time."""
    parser.addoption(
        "--benchmark_statistics", "benchmark_statistics", default="", group=GROUP,
        requires=REPETITION_SAMPLES,
        metavar="NAME,...",
        help="More aggregate rows per benchmark (with 2+ repetitions), after _mean, _median, "
             "_stddev, _cv: pNN (percentile, e.g. p50,p90,p99), min, max, ci (confidence "
             "interval of the median: _ci_lower, _ci_upper), outliers (fraction outside "
             "1.5 IQR; reported, never removed), precision (the interval's half-width "
             "relative to the median), or a statistic a plugin provides.", module_run=True)
    parser.addoption(
        "--confidence", "confidence", default=str(DEFAULT_CONFIDENCE), group=GROUP,
        requires=REPETITION_SAMPLES,
        metavar="LEVEL",
        help="Confidence level of the interval of the median (ci, precision, adaptive "
             "stopping), between 0 and 1.", module_run=True)
    parser.addoption(
        "--benchmark_min_rel_accuracy", "benchmark_min_rel_accuracy", default="",
        requires=ADAPTIVE_REPETITIONS,
        group=GROUP, metavar="FRACTION",
        help="Adaptive stopping: repeat until the confidence interval of the median is "
             "within this fraction of it (0.01: +-1 %), or until --benchmark_max_time; at "
             "least --benchmark_repetitions. Adds the _precision row.", module_run=True)
    parser.addoption(
        "--benchmark_max_time", "benchmark_max_time", default="", group=GROUP,
        requires=ADAPTIVE_REPETITIONS,
        metavar="<float>s",
        help=f"Time budget of each benchmark under --benchmark_min_rel_accuracy, from its "
             f"start (warm-up and calibration included); default {DEFAULT_MAX_TIME:g}s.",
             module_run=True)


def _fraction(flag: str, text: str, low: float, high: float, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise flag_error(flag, text, f"expected {what}") from None
    if not low < value < high:
        raise flag_error(flag, text, f"expected {what}")
    return value


def _seconds(flag: str, text: str) -> float:
    try:
        value = float(text.strip().removesuffix("s"))
    except ValueError:
        raise flag_error(flag, text, "expected a positive `<float>s` (seconds)") from None
    if not 0 < value < math.inf:
        raise flag_error(flag, text, "expected a positive `<float>s` (seconds)")
    return value


def _blamed(statistic: Statistic, owner: str, state: StatisticsState) -> Statistic:
    """``statistic`` whose failures are its plugin's, never the backend's.

    An exception, or a value that is not a number or None (a string, a
    list), is kept in ``state.failure`` naming ``owner`` (the row is left
    out); the core computes the benchmark's other aggregates, the benchmark
    is reported, and the run ends with that one line
    (``ireebench_workload_finish``, or ``ireebench_sessionfinish`` for a
    backend without it).
    """
    where = f"statistic {statistic.name!r}"

    def compute(values):
        try:
            value = statistic.compute(values)
        except BaseException as exc:
            if passes_through(exc):
                raise
            state.failure = state.failure or PluginError(where, owner, exc)
            return None
        if value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
            return value
        state.failure = state.failure or PluginError(where, owner, TypeError(
            f"returned {described(value)}, not a number or None"))
        return None

    return Statistic(statistic.name, compute, statistic.unit)


def _raise_failure(state: StatisticsState | None) -> None:
    if state is not None and state.failure is not None:
        failure, state.failure = state.failure, None
        raise failure


def _select(config, tokens: list[str], confidence: float) -> list[tuple[Statistic, str]]:
    """The statistics named by --benchmark_statistics, in order, each once, with
    the plugin providing each."""
    text = config.getoption("benchmark_statistics")
    owners: dict[str, str] = {}
    available = collect_named(config.pm, "ireebench_statistics", "statistic", owners=owners,
                              config=config)
    for name, owner in owners.items():
        if PERCENTILE.fullmatch(name) and owner != PLUGIN_NAME:
            raise UsageError(f"statistic {name!r} of plugin {owner!r} shadows the built-in "
                             f"percentile pNN of plugin {PLUGIN_NAME!r}; rename it")
    google = {s.name for s in STATISTICS}
    taken = set(google)
    chosen: list[tuple[Statistic, str]] = []
    for token in tokens:
        if token in google:
            raise flag_error("benchmark_statistics", text,
                             f"'{token}' is always reported (with 2+ repetitions)")
        owner = owners.get(token, PLUGIN_NAME)
        if token in available:
            found = available[token]
            group = list(found) if isinstance(found, (list, tuple)) else [found]
        elif PERCENTILE.fullmatch(token) and float(token[1:]) <= 100:
            group = [percentile_statistic(token)]
        else:
            known = ", ".join(sorted([*available, "pNN"]))
            raise flag_error("benchmark_statistics", text,
                             f"unknown statistic '{token}' (known: {known})")
        for statistic in group:
            if not isinstance(statistic, Statistic):
                raise UsageError(f"--benchmark_statistics={text}: '{token}' is not an "
                                 "ireebench.Statistic")
            if statistic.unit not in ("time", "percentage"):
                raise UsageError(f"--benchmark_statistics={text}: '{token}' has unit "
                                 f"'{statistic.unit}' (time or percentage)")
            if statistic.name not in taken:
                taken.add(statistic.name)
                chosen.append((statistic, owner))
    return chosen


@hookimpl(trylast=True)
def ireebench_configure(config):
    """Checks the flags, then lists the selected statistics for the core."""
    text = config.getoption("benchmark_statistics")
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    accuracy_text = config.getoption("benchmark_min_rel_accuracy").strip()
    max_time_text = config.getoption("benchmark_max_time").strip()
    confidence = _fraction("confidence", config.getoption("confidence"), 0.0, 1.0,
                           "a confidence level between 0 and 1")
    target = None
    if accuracy_text:
        target = _fraction("benchmark_min_rel_accuracy", accuracy_text, 0.0, math.inf,
                           "a positive fraction (0.01: the median within +-1 %)")
    if max_time_text and target is None:
        raise flag_error("benchmark_max_time", max_time_text,
                         "requires --benchmark_min_rel_accuracy")
    max_time = _seconds("benchmark_max_time", max_time_text) if max_time_text \
        else DEFAULT_MAX_TIME
    if not tokens and target is None:
        return
    if tokens:  # computed from each repetition's own time
        require(config, REPETITION_SAMPLES, "benchmark_statistics", text)
    if target is not None:  # decided after each repetition
        require(config, ADAPTIVE_REPETITIONS, "benchmark_min_rel_accuracy", accuracy_text)
        processes = config.getoption("benchmark_processes", 1)
        if processes > 1:
            raise flag_error("benchmark_min_rel_accuracy", accuracy_text,
                             f"cannot be used with --benchmark_processes={processes} (adaptive "
                             "stopping decides the repetitions one at a time, in one process)")
    if target is not None and "precision" not in tokens:
        tokens.append("precision")
    state = StatisticsState(confidence, [], target, max_time)
    state.statistics = [_blamed(statistic, owner, state)
                        for statistic, owner in _select(config, tokens, confidence)]
    state.minimum = max(2, minimum_repetitions(confidence))
    config.stash[STATE] = state
    config.stash[EXTRA_STATISTICS] = list(state.statistics)


@hookimpl
def ireebench_statistics(config):
    """The built-in statistics: min, max, ci, outliers, precision (pNN are parsed).

    ``config`` is None when they are only listed (``ireebench plugins``).
    """
    confidence = DEFAULT_CONFIDENCE if config is None else float(config.getoption("confidence"))
    return builtin_statistics(confidence)


# --- reporting and adaptive stopping -------------------------------------------


def _aggregates_expected(config, state) -> bool:
    return state.target is not None or config.getoption("benchmark_repetitions") > 1


@hookimpl
def ireebench_report_row_names(config, run_names):
    """The aggregate rows this plugin adds (``BM_f/process_time/real_time_p99`` ...)."""
    state = config.stash.get(STATE, None)
    if state is None or not _aggregates_expected(config, state):
        return None
    # Adaptive stopping measures several repetitions even with
    # --benchmark_repetitions=1: Google Benchmark's _median rows come then too.
    suffixes = ["median", *(statistic.name for statistic in state.statistics)]
    return [f"{name}_{suffix}" for name in run_names for suffix in suffixes]


@hookimpl
def ireebench_report_context(config, context):
    """Records the settings in the context."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    context.extra["statistics"] = [s.name for s in state.statistics]
    context.extra["statistics_confidence"] = state.confidence
    if state.target is not None:
        context.extra["min_rel_accuracy"] = state.target
        context.extra["max_time"] = state.max_time


@hookimpl
def ireebench_workload_start(config, workload):
    state = config.stash.get(STATE, None)
    if state is not None:
        state.started[workload.run_name] = time.perf_counter()


@hookimpl
def ireebench_continue_repetitions(config, workload, runs):
    """Adaptive stopping: go on until the median is precise enough or the budget is spent."""
    return continue_until_precise(config, workload, [r.real_seconds for r in runs])


@hookimpl
def ireebench_workload_finish(config, workload, runs):
    """A statistic's failure ends the run (the benchmark is reported first);
    one note per run when the interval rows are missing for too few repetitions."""
    state = config.stash.get(STATE, None)
    _raise_failure(state)
    if state is None or state.noted or not state.needs_interval:
        return
    if config.getoption("process_index") is not None:
        return  # one of --benchmark_processes: its share, not the benchmark's repetitions
    measured = [r for r in runs if r.run_type == "iteration" and not r.error_occurred]
    if 2 <= len(measured) < state.minimum:
        state.noted = True
        config.stderr.write(
            f"ireebench: note: the {state.confidence:g} confidence interval of the median "
            f"needs {state.minimum}+ repetitions; {workload.run_name} has {len(measured)}: "
            "no _ci_lower/_ci_upper/_precision rows\n")


@hookimpl
def ireebench_sessionfinish(config):
    """A statistic's failure on a backend without ``workload_finish`` (the
    native tool's rows): every benchmark was reported; the run ends with it."""
    _raise_failure(config.stash.get(STATE, None))
