"""The Server scenario's arrival schedule: precomputed, seeded, open loop.

LoadGen generates every query's scheduled time before the run
(``GenerateQueries``): the first at 0, each next one an exponential
inter-arrival time later (a Poisson process at ``target_qps``), until both
the last scheduled time reaches the minimum duration and the count reaches
the minimum query count. The same seed gives the same schedule.

Here the same, with two more ways to space the arrivals:

* ``--burstiness=B`` (vLLM ``bench serve``'s): inter-arrival times drawn
  from a gamma distribution of shape ``B`` and mean ``1 / target_qps``;
  ``B = 1`` is the Poisson process, ``B < 1`` burstier, ``B > 1`` more
  regular.
* ``--arrival_trace=FILE``: the arrival times of a recorded trace (seconds,
  one per line, ascending; ``#`` starts a comment), shifted to start at 0,
  replayed as they are: the trace is the schedule, the duration rules are
  then checked on it, not used to extend it.

The generator is numpy's PCG64 seeded with ``--scenario_seed``, so a
schedule is the same on every machine and numpy version that keeps
PCG64's stream (numpy's policy for its bit generators).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ireebench.errors import UsageError

# Inter-arrival times are drawn in chunks of this many until the rules are met.
CHUNK = 4096
# A bound on the queries one schedule may hold (each is prepared before the run).
MAX_QUERIES = 1 << 20


@dataclass(frozen=True)
class Arrivals:
    """How the arrivals are spaced: Poisson/gamma at a rate, or a replayed trace."""

    qps: float = 0.0
    burstiness: float = 1.0
    trace: tuple[float, ...] | None = None  # arrival offsets in seconds, from 0

    def describe(self) -> str:
        if self.trace is not None:
            return f"the trace's {len(self.trace)} arrivals"
        if self.burstiness == 1.0:
            return f"Poisson arrivals at {self.qps:g} qps"
        return f"gamma arrivals (burstiness {self.burstiness:g}) at {self.qps:g} qps"


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


def read_trace(path: str) -> tuple[float, ...]:
    """A trace file's arrival times, shifted to start at 0 (one line naming a bad line)."""
    flag = f"--arrival_trace={path}"
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"{flag}: cannot read it: {exc.strerror or exc}") from None
    times = []
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split("#", 1)[0].strip()
        if not value:
            continue
        try:
            time = float(value)
        except ValueError:
            raise UsageError(f"{flag}: line {number}: {value!r} is not a time in "
                             "seconds") from None
        if not np.isfinite(time) or time < 0:
            raise UsageError(f"{flag}: line {number}: {value!r} is not a time >= 0")
        if times and time < times[-1]:
            raise UsageError(f"{flag}: line {number}: {value} comes before the previous "
                             f"arrival ({times[-1]:g}); arrivals must be in order")
        times.append(time)
    if len(times) < 2:
        raise UsageError(f"{flag}: needs at least two arrival times (found {len(times)})")
    if len(times) > MAX_QUERIES:
        raise UsageError(f"{flag}: {len(times)} arrivals, more than ireebench prepares for "
                         f"one run ({MAX_QUERIES})")
    first = times[0]
    return tuple(time - first for time in times)
