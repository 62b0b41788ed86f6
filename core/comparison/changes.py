"""Change points: where a benchmark's level shifted over its stored runs.

A series of runs (oldest first), each with its repetitions, is cut into
segments of constant level by PELT on the logarithms of the runs' medians,
with the L1 cost and a penalty of ``3 b ln n`` per change, ``b`` learned from
the runs (the larger of the robust spread of successive differences,
``1.4826 * MAD / sqrt 2``, and the runs' own intervals); a level needs
:data:`MIN_RUNS` runs. The exact optimum ruptures' ``Pelt(model="l1",
min_size=2, jump=1)`` finds, in plain Python (``ireebench history`` does not
import numpy). Why this cost and penalty, and their measured false-change
rates: docs/store.md, "``ireebench history``".

What ``ireebench history --changes`` and ``ireebench report`` say of a
change is one judgement, :func:`judge_change`: ``ireebench compare``'s
engine between the two levels' pooled repetitions, ``faster``/``slower``
when it rejects and the change is :data:`MIN_SHIFT` or more, else ``no
significant change`` (``inconclusive`` with fewer than ``min_repetitions``
a level). The commits around it are read by :func:`commit_of`, the user's
``git_commit`` tag first, for both.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

from ..stats import median, median_ci
from .inputs import BenchmarkRows
from .model import CompareOptions, compare_benchmark
from .utest import mann_whitney_u
from .verdicts import FASTER, NO_CHANGE, SLOWER

MIN_RUNS = 2  # runs a level needs (PELT's min_size)
# A shift smaller than this is no change, however significant (judge_change).
MIN_SHIFT = 0.02
# Context keys that may hold the commit a run measured: a tag the user gave
# (--benchmark_context=git_commit=...) first, then the checkout's commit
# ireebench records (the results store's "commit").
COMMIT_KEYS = ("git_commit", "commit", "git_sha", "git_revision", "revision", "vcs_revision",
               "ireebench_git_commit")
PENALTY = 3.0  # times b ln n per change (module docstring)
_Z95 = 1.959963984540054  # a 95 % interval's half-width in standard errors


def pelt(values, penalty: float, min_size: int = MIN_RUNS) -> list[int]:
    """The optimal change points of ``values`` (L1 cost, ``penalty`` per change).

    :return: the indices where a new segment starts, increasing (ruptures'
        breakpoints without the final ``len(values)``); every segment has at
        least ``min_size`` values.
    """
    x = [float(value) for value in values]
    n = len(x)
    if n < 2 * min_size:
        return []

    def cost(a: int, b: int) -> float:
        """The absolute deviations of ``x[a:b]`` from its median."""
        segment = x[a:b]
        center = median(segment)
        return math.fsum(abs(value - center) for value in segment)

    best = [-penalty] + [math.inf] * n  # best[t]: the optimum of values[:t]
    last = [0] * (n + 1)  # last[t]: where the last segment of that optimum starts
    candidates = [0]
    for t in range(min_size, n + 1):
        newest = t - min_size
        if newest >= min_size:
            candidates.append(newest)
        scored = [(best[s] + cost(s, t) + penalty, s) for s in candidates]
        best[t], last[t] = min(scored)
        # PELT's pruning: a start that cannot beat t now never will.
        candidates = [s for total, s in scored if total - penalty <= best[t]]
    changes = []
    t = n
    while t > 0:
        t = last[t]
        if t > 0:
            changes.append(t)
    return changes[::-1]


@dataclass(frozen=True)
class RunValues:
    """One run of a benchmark in a series: its label and repetitions (seconds)."""

    label: str
    values: list[float]


@dataclass(frozen=True)
class ChangePoint:
    """A shift of level between ``runs[index - 1]`` and ``runs[index]``."""

    index: int  # the first run of the new level
    before: float  # the median of the earlier level's run medians (seconds)
    after: float
    pvalue: float | None  # U test of the two levels' pooled repetitions
    runs_before: int
    runs_after: int

    @property
    def change(self) -> float:
        return self.after / self.before - 1.0


def noise_sigma(runs: list[RunValues]) -> float:
    """The noise of a run's log median, learned from the runs (module docstring)."""
    logs = [math.log(median(run.values)) for run in runs]
    sigma = 0.0
    if len(logs) >= 3:
        steps = [abs(after - before) for before, after in itertools.pairwise(logs)]
        sigma = 1.4826 * median(steps) / math.sqrt(2.0)
    half_widths = []
    for run in runs:
        interval = median_ci(run.values, 0.95) if len(run.values) > 1 else None
        if interval is not None and interval[0] > 0:
            half_widths.append(math.log(interval[1] / interval[0]) / 2.0)
    if half_widths:
        sigma = max(sigma, median(half_widths) / _Z95)
    return max(sigma, 1e-9)


def on_their_level(logs: list[float], starts: list[int]) -> list[int]:
    """PELT's change points with each level's first run on its level.

    A level is two runs or more, so a shift in the latest run alone comes out of
    PELT as a level of the run before it and the latest, and a report would
    send its reader to the wrong commit. A level whose first run is nearer the
    level before it than the rest of its own starts one run later; when that
    leaves it one run, it is no level yet (the latest's own change is the
    gate's to judge, and the next run will say whether it stays)."""
    settled = []
    bounds = [*starts, len(logs)]
    for position, start in enumerate(starts):
        before = logs[settled[-1] if settled else 0:start]
        rest = logs[start + 1:bounds[position + 1]]
        if rest and abs(logs[start] - median(before)) < abs(logs[start] - median(rest)):
            if len(rest) < MIN_RUNS:
                continue
            start += 1
        settled.append(start)
    return settled


def change_points(runs: list[RunValues]) -> list[ChangePoint]:
    """The shifts of level in ``runs`` (oldest first; every run has a positive value)."""
    if len(runs) < 2 * MIN_RUNS:
        return []
    logs = [math.log(median(run.values)) for run in runs]
    penalty = PENALTY * noise_sigma(runs) * math.sqrt(2.0 / math.pi) * math.log(len(runs))
    starts = on_their_level(logs, pelt(logs, penalty))
    bounds = [0, *starts, len(runs)]
    found = []
    for position, start in enumerate(starts, start=1):
        earlier = runs[bounds[position - 1]:start]
        later = runs[start:bounds[position + 1]]
        pooled_before = [v for run in earlier for v in run.values]
        pooled_after = [v for run in later for v in run.values]
        pvalue = None
        if len(pooled_before) >= 2 and len(pooled_after) >= 2:
            pvalue = mann_whitney_u(pooled_before, pooled_after).pvalue
        found.append(ChangePoint(start, median([median(r.values) for r in earlier]),
                                 median([median(r.values) for r in later]), pvalue,
                                 len(earlier), len(later)))
    return found


def commit_of(context) -> str:
    """The commit a run measured, from its context (or a stored run's tags and
    commit): the first of :data:`COMMIT_KEYS` set ("" when none is)."""
    for key in COMMIT_KEYS:
        value = context.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def judge_change(name: str, runs: list[RunValues], point: ChangePoint,
                 options: CompareOptions | None = None):
    """A change point judged by ``ireebench compare``'s engine (the module doc):
    the :class:`~.model.BenchmarkComparison` of the earlier level's pooled
    repetitions (old) and the later one's (new), its ``verdict`` ``faster`` or
    ``slower`` only for a change of :data:`MIN_SHIFT` or more. ``options``:
    alpha, confidence, thresholds, min_repetitions (the values are times:
    compared as wall times)."""
    options = dataclasses.replace(options or CompareOptions(), metric="real_time")
    sides = []
    for level in (runs[point.index - point.runs_before:point.index],
                  runs[point.index:point.index + point.runs_after]):
        rows = BenchmarkRows(name, "s")
        rows.repetitions["real_time"] = [value for run in level for value in run.values]
        sides.append(rows)
    result = compare_benchmark(name, sides[0], sides[1], options)
    if result.verdict in (FASTER, SLOWER) and (result.change is None
                                               or abs(result.change) < MIN_SHIFT):
        result.verdict, result.regression = NO_CHANGE, False
    return result
