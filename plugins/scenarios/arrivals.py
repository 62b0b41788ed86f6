"""How the Server's arrivals are spaced: a rate (Poisson or gamma), or a replayed trace.

What ``--target_qps``, ``--burstiness`` and ``--arrival_trace`` say, read
and checked when the flags are (:mod:`.settings`); the schedule itself is
drawn from them when a run starts (:mod:`.schedule`, numpy's generator).

* ``--burstiness=B`` (vLLM ``bench serve``'s): inter-arrival times drawn
  from a gamma distribution of shape ``B`` and mean ``1 / target_qps``;
  ``B = 1`` is the Poisson process, ``B < 1`` burstier, ``B > 1`` more
  regular.
* ``--arrival_trace=FILE``: the arrival times of a recorded trace (seconds,
  one per line, ascending; ``#`` starts a comment), shifted to start at 0,
  replayed as they are: the trace is the schedule, the duration rules are
  then checked on it, not used to extend it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ireebench.commands import read_small_file
from ireebench.errors import UsageError

# A bound on the queries one schedule may hold (each is prepared before the run).
MAX_QUERIES = 1 << 20
# A trace line is a time (and perhaps a comment): 64 bytes each is far beyond one.
MAX_TRACE_BYTES = 64 * MAX_QUERIES


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


def read_trace(path: str) -> tuple[float, ...]:
    """A trace file's arrival times, shifted to start at 0 (one line naming a bad line)."""
    flag = f"--arrival_trace={path}"
    text = read_small_file(path, flag, MAX_TRACE_BYTES).decode("utf-8", errors="replace")
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
        if not math.isfinite(time) or time < 0:
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
