"""Multimodal repetitions: say when a benchmark's repetitions measured separate regimes.

Repetitions in separated groups (8 near 1.52 ms, 2 near 3.0 ms) did not
measure one thing (an allocator's regime, a CPU clock, another process), and
their mean and median describe the mixture. Every benchmark with at least
:data:`MIN_REPETITIONS` repetitions is checked from the rows of
``ireebench_benchmark_result`` (real times, then CPU times): one stderr
warning and ``multimodal_repetitions`` in the context's ``findings``;
``--multimodal_warnings=false`` turns it off. The rule
(:func:`repetition_groups`: cuts at the widest gaps of the log times, kept
while each gap is at least :data:`MIN_STEP` and :data:`SEPARATION` pooled
standard deviations, each group 2+ repetitions), its false positives and
power, and the ``modes`` statistic: docs/statistics.md, "Multimodal
repetitions".
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from ireebench import StashKey, Statistic, hookimpl
from ireebench.reporting.reported import reported
from ireebench.results import TIME_UNIT_MULTIPLIER
from ireebench.stats import median

GROUP = "Statistics and adaptive stopping"
ENVVAR = "IREEBENCH_MULTIMODAL_WARNINGS"
MIN_REPETITIONS = 5
MIN_GROUP = 2  # repetitions
MIN_GROUP_SHARE = 0.05  # of the repetitions being split
MIN_STEP = 0.10  # neighbours at least 10 % apart
SEPARATION = 6.0  # gap / pooled within-group standard deviation (of the logs)
MAX_SPLITS = 10  # the widest gaps considered: at most 11 groups
FINDING = "multimodal_repetitions"


# --- the rule ----------------------------------------------------------------


def _sum_of_squares(values: list[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values)


def _partition(logs: list[float], cuts: list[int]) -> list[list[float]]:
    bounds = [0, *(cut + 1 for cut in cuts), len(logs)]
    return [logs[start:end] for start, end in itertools.pairwise(bounds)]


def group_bounds(logs: list[float]) -> list[int]:
    """Where the sorted ``logs`` split: the index of the last value of each group
    but the highest (empty: one group). See the module docstring."""
    n = len(logs)
    smallest = max(MIN_GROUP, math.ceil(MIN_GROUP_SHARE * n))
    gaps = [logs[i + 1] - logs[i] for i in range(n - 1)]
    min_gap = math.log1p(MIN_STEP)
    candidates = sorted((i for i in range(n - 1) if gaps[i] >= min_gap),
                        key=lambda i: -gaps[i])[:MAX_SPLITS]
    best: list[int] = []
    for count in range(1, len(candidates) + 1):
        cuts = sorted(candidates[:count])
        groups = _partition(logs, cuts)
        if min(len(group) for group in groups) < smallest:
            continue
        within = math.fsum(_sum_of_squares(group) for group in groups)
        spread = math.sqrt(within / (n - len(groups)))
        narrowest = min(gaps[cut] for cut in cuts)
        if spread == 0.0 or narrowest / spread >= SEPARATION:
            best = cuts
    return best


def repetition_groups(values: list[float]) -> list[list[float]]:
    """The separated groups of ``values`` (see the module docstring), in ascending
    order; one group when they are not separated (or are too few, or not positive)."""
    ordered = sorted(values)
    if len(ordered) < MIN_REPETITIONS or ordered[0] <= 0 or not math.isfinite(ordered[-1]):
        return [ordered] if ordered else []
    cuts = group_bounds([math.log(v) for v in ordered])
    return _partition(ordered, cuts)


def outside_main_group(values: list[float]) -> float | None:
    """The ``modes`` statistic: the fraction of ``values`` outside the largest group."""
    if len(values) < MIN_REPETITIONS:
        return None
    groups = repetition_groups(values)
    return 1.0 - max(len(group) for group in groups) / len(values)


def _shown(seconds: float, unit: str) -> str:
    """Three significant digits, trailing zeros kept (``3.00 ms``, ``152 us``)."""
    value = seconds * TIME_UNIT_MULTIPLIER[unit]
    digits = max(0, 2 - math.floor(math.log10(value))) if value > 0 else 2
    return f"{value:.{digits}f} {unit}"


def describe(groups: list[list[float]], unit: str, where: str = "") -> str:
    """``2 groups: 8 near 1.52 ms, 2 near 3.00 ms`` (medians; ``groups`` in seconds;
    ``where`` follows ``groups``: `` in CPU time``)."""
    parts = ", ".join(f"{len(group)} near {_shown(median(group), unit)}" for group in groups)
    return f"{len(groups)} groups{where}: {parts}"


# --- the plugin ----------------------------------------------------------------


@dataclass
class ModalityState:
    """The run's check (``config.stash[STATE]``)."""

    context: object = None  # the reported Context, where findings go
    # run name -> (real, CPU) seconds per iteration of each repetition
    repetitions: dict[str, list] = field(default_factory=dict)
    checked: set[str] = field(default_factory=set)


STATE = StashKey[ModalityState]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --multimodal_warnings."""
    parser.addoption(
        "--multimodal_warnings", "multimodal_warnings", type=bool, default=True,
        group=GROUP, envvar=ENVVAR, show_envvar=True,
        help=f"Warn (stderr, and multimodal_repetitions in the context's findings) when a "
             f"benchmark's repetitions ({MIN_REPETITIONS}+) form separated groups: separate "
             "regimes (allocator, CPU clock, another process). Default true.")


@hookimpl(optionalhook=True)  # the statistics plugin, which declares it, may be blocked
def ireebench_statistics(config):
    """``modes``: the fraction of repetitions outside the largest group."""
    return {"modes": Statistic("modes", outside_main_group, "percentage")}


def _checks(config) -> bool:
    """On, and not the process of one point (``--point_index``: a point measured in a
    process of its own or on a Ray node, whose rows the run that started it checks,
    once) or of ``--benchmark_processes`` (a share of the repetitions)."""
    return config.getoption("multimodal_warnings") and \
        config.getoption("process_index") is None and config.getoption("point_index") is None


@hookimpl
def ireebench_report_context(config, context):
    if _checks(config):
        config.stash[STATE] = ModalityState(context)


@hookimpl
def ireebench_benchmark_result(config, run):
    """Collects the repetitions; checks them at the benchmark's first aggregate row."""
    state = config.stash.get(STATE, None)
    if state is None and _checks(config):
        # A worker resumed after a crash replays the context without the hook:
        # the benchmarks after the crash are checked all the same.
        context = reported(config)[0]
        if context is not None:
            state = config.stash[STATE] = ModalityState(context)
    if state is None or run.extra_row or run.run_name in state.checked:
        return
    if run.run_type != "aggregate":
        if not run.error_occurred and run.iterations:
            state.repetitions.setdefault(run.run_name, []).append(
                (run.real_seconds, run.cpu_seconds))
        return
    state.checked.add(run.run_name)
    times = state.repetitions.pop(run.run_name, [])
    for metric, index, shown in (("real_time", 0, ""), ("cpu_time", 1, " in CPU time")):
        groups = repetition_groups([pair[index] for pair in times])
        if len(groups) > 1:
            _report(config, state, run, groups, metric, shown)
            return


def _report(config, state, run, groups, metric: str, shown: str) -> None:
    message = describe(groups, run.time_unit, shown)
    config.stderr.write(
        f"ireebench: warning: {run.run_name}: repetitions form {message} (separate "
        "regimes: the allocator, the CPU clock or another process; see 'Multimodal "
        "repetitions' in docs/statistics.md)\n")
    config.stderr.flush()
    findings = state.context.findings.setdefault(FINDING, {})
    findings[run.run_name] = {
        "metric": metric,
        "groups": [{"repetitions": len(group),
                    "median": median(group) * TIME_UNIT_MULTIPLIER[run.time_unit]}
                   for group in groups],
        "time_unit": run.time_unit,
    }
