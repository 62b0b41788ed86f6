"""Progress of a run of several points (a sweep, a suite) on stderr.

Only a run of several points shows progress: a plain run's stderr stays as
quiet as the native tool's. Two forms, chosen by what stderr is:

* a terminal (:class:`ProgressLine`): one line, drawn again as the run
  goes and erased before each benchmark's rows are reported, so the console
  table on the same terminal is never cut by it:
  ``[ 3/16] BM_forward/bs:4  ETA 0:42``; interleaved,
  ``[round 2/5] BM_forward/bs:4  ETA 0:42``;
* anything else, a CI log or a file (:class:`ProgressLog`): one line per
  finished benchmark, never a carriage return:
  ``ireebench: [3/16] BM_forward/bs:4/process_time/real_time done, 0:12
  elapsed, eta 0:36`` (``failed`` for an error row); interleaved, one more line per finished round (the
  benchmarks finish together, after the last round):
  ``ireebench: round 2/5 done (16 benchmarks), 0:08 elapsed, eta 0:12``.

The ETA is the mean time of what finished so far (benchmarks measured, not
error rows; or rounds when interleaved) times what is left.
"""

from __future__ import annotations

import time

from ireebench.errors import printable

CLEAR = "\r\x1b[K"  # back to the line's start, erase it


def format_eta(seconds: float) -> str:
    """``0:42``, ``1:05:03``."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """What both forms count: benchmarks finished of ``total``, rounds of ``rounds``
    (interleaved: repetitions measured round by round; 0 otherwise)."""

    def __init__(self, stream, total: int, rounds: int = 0, clock=time.monotonic):
        self.stream = stream
        self.total = total
        self.rounds = rounds
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.failed = 0  # of those done, error rows (they take no time: not in the ETA)
        self.finished: set[str] = set()
        self.round = -1  # the round being measured (interleaved)
        self.rounds_started: float | None = None

    def elapsed(self) -> float:
        return self.clock() - self.started

    def eta(self) -> float | None:
        """Seconds left, from what finished so far (None before anything did, and when
        nothing is left to measure: the last benchmark, or interleaved benchmarks,
        which finish only once every round was measured)."""
        if self.done >= self.total or (self.rounds and self.done):
            return None
        if self.rounds and self.round >= 1 and self.done == 0:
            per_round = (self.clock() - self.rounds_started) / self.round
            return per_round * (self.rounds - self.round)
        if self.done > self.failed:
            return self.elapsed() / (self.done - self.failed) * (self.total - self.done)
        return None

    def start(self, name: str) -> None:
        """A benchmark starts (not interleaved: they start one after the other)."""

    def repetition(self, name: str, index: int) -> None:
        """Repetition ``index`` of ``name`` was measured; interleaved, the first of a
        higher index says the round before it is done."""
        if not self.rounds or index <= self.round:
            return
        if self.rounds_started is None:
            self.rounds_started = self.clock()
        self.round = index
        if index:
            self.round_done(index)

    def round_done(self, number: int) -> None:
        """Round ``number`` (1-based) of the interleaved repetitions finished."""

    def finish(self, name: str, failed: bool = False) -> bool:
        """A benchmark's rows are about to be reported (``failed``: an error row); True
        the first time for ``name``."""
        if name in self.finished:
            return False
        self.finished.add(name)
        self.done += 1
        self.failed += failed
        return True

    def clear(self) -> None:
        """The run ends."""

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


class ProgressLine(Progress):
    """``[done+1/total] name  ETA m:ss`` on a terminal, drawn again in place."""

    shown = False

    def _draw(self, where: str, name: str) -> None:
        eta = self.eta()
        self._write(f"{CLEAR}{where} {printable(name)}  "
                    f"ETA {'--:--' if eta is None else format_eta(eta)}")
        self.shown = True

    def start(self, name: str) -> None:
        if not self.rounds:
            width = len(str(self.total))
            self._draw(f"[{min(self.done + 1, self.total):>{width}}/{self.total}]", name)

    def repetition(self, name: str, index: int) -> None:
        super().repetition(name, index)
        if self.rounds:
            self._draw(f"[round {min(self.round + 1, self.rounds)}/{self.rounds}]", name)

    def finish(self, name: str, failed: bool = False) -> bool:
        first = super().finish(name, failed)
        self.clear()
        return first

    def clear(self) -> None:
        if self.shown:
            self._write(CLEAR)
            self.shown = False


class ProgressLog(Progress):
    """One ``ireebench: [k/N] NAME done, elapsed, eta`` line per finished benchmark."""

    def _times(self) -> str:
        eta = self.eta()
        return (f"{format_eta(self.elapsed())} elapsed"
                + ("" if eta is None else f", eta {format_eta(eta)}"))

    def round_done(self, number: int) -> None:
        self._write(f"ireebench: round {number}/{self.rounds} done ({self.total} benchmarks), "
                    f"{self._times()}\n")

    def finish(self, name: str, failed: bool = False) -> bool:
        first = super().finish(name, failed)
        if first:
            width = len(str(self.total))
            self._write(f"ireebench: [{self.done:>{width}}/{self.total}] {printable(name)} "
                        f"{'failed' if failed else 'done'}, {self._times()}\n")
        return first
