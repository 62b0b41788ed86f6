"""The Server scenario's arrival schedule: precomputed, seeded, open loop.

LoadGen generates every query's scheduled time before the run
(``GenerateQueries``): the first at 0, each next one an exponential
inter-arrival time later (a Poisson process at ``target_qps``), until both
the last scheduled time reaches the minimum duration and the count reaches
the minimum query count. The same seed gives the same schedule.

Here the same, gamma-distributed with ``--burstiness``, or a replayed
trace as it is (:mod:`.arrivals`, which reads the flags). This module is
imported when a run is measured (numpy), not when the plugin is loaded.

The generator is numpy's PCG64 seeded with ``--scenario_seed``, so a
schedule is the same on every machine and numpy version that keeps
PCG64's stream (numpy's policy for its bit generators).
"""

from __future__ import annotations

import numpy as np
from ireebench.errors import PluginError, UsageError
from ireebench.hookcall import implementations

from .arrivals import MAX_QUERIES, Arrivals
from .settings import MAX_SCHEDULE_S

# Inter-arrival times are drawn in chunks of this many until the rules are met.
CHUNK = 4096


def schedule(arrivals: Arrivals, seed: int, min_duration: float, min_queries: int) -> np.ndarray:
    """Every query's scheduled offset in seconds from the start (float64, ascending, from 0)."""
    if arrivals.trace is not None:
        return np.asarray(arrivals.trace, dtype=np.float64)
    generator = np.random.Generator(np.random.PCG64(seed))
    mean_gap = 1.0 / arrivals.qps
    times = np.zeros(1)  # the first query at 0
    # LoadGen's loop appends queries while the last one is scheduled before
    # the minimum duration or there are fewer than the minimum count: the
    # schedule ends with the first query at or past the duration.
    while times[-1] < min_duration or len(times) < min_queries:
        if len(times) > MAX_QUERIES:
            raise UsageError(f"the schedule ({arrivals.describe()} for at least "
                             f"{min_duration:g} s) has more than {MAX_QUERIES} queries, more "
                             "than ireebench prepares for one run; lower --target_qps or "
                             "--min_duration")
        if arrivals.burstiness == 1.0:
            gaps = generator.exponential(mean_gap, CHUNK)
        else:
            gaps = generator.gamma(arrivals.burstiness, mean_gap / arrivals.burstiness, CHUNK)
        times = np.concatenate([times, times[-1] + np.cumsum(gaps)])
    past = int(np.searchsorted(times, min_duration, side="left")) + 1
    return times[:max(min_queries, past)]


HOOK = "ireebench_server_arrivals"


def plugin_schedule(workload, config, settings) -> np.ndarray | None:
    """The offsets the first plugin implementing :data:`HOOK` returns (checked: one
    line naming the plugin when they are not a schedule), or None."""
    if settings.arrivals.trace is not None or not hasattr(config.pm.hook, HOOK):
        return None
    for plugin, call in implementations(config.pm, HOOK):
        found = call(config=config, workload=workload, target_qps=settings.arrivals.qps,
                     min_duration=settings.min_duration, min_queries=settings.min_queries,
                     seed=settings.seed)
        if found is None:
            continue
        problem, offsets = _not_a_schedule(found, settings.min_duration)
        if problem:
            raise PluginError(HOOK, plugin, ValueError(f"the arrivals it returned {problem}"))
        return offsets
    return None


def _not_a_schedule(found, min_duration: float) -> tuple[str, np.ndarray | None]:
    try:
        offsets = np.asarray(found, dtype=np.float64)
    except (TypeError, ValueError):
        return "are not numbers", None
    longest = max(MAX_SCHEDULE_S, min_duration)
    if offsets.ndim != 1 or not len(offsets):
        return "are not a non-empty sequence of times", None
    if len(offsets) > MAX_QUERIES:
        return f"are {len(offsets)} queries, more than {MAX_QUERIES}", None
    if not np.all(np.isfinite(offsets)) or offsets[0] < 0 or np.any(np.diff(offsets) < 0):
        return "are not finite times, ascending from 0 or later", None
    if offsets[-1] > longest:
        return (f"span {offsets[-1]:.3g} s, longer than the longest schedule ireebench "
                f"runs ({longest:g} s)"), None
    return "", offsets
