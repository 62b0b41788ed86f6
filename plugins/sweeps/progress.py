"""The progress line of a sweep on a terminal: ``[ 3/16] BM_forward/bs:4  ETA 0:42``.

Drawn on stderr only when it is a terminal (nothing at all otherwise), when
a benchmark starts, and erased before its rows are reported, so the
console table on the same terminal is never cut by it. The ETA is the
mean time of the benchmarks finished so far times those left.
"""

from __future__ import annotations

import time

CLEAR = "\r\x1b[K"  # back to the line's start, erase it


def format_eta(seconds: float) -> str:
    """``0:42``, ``1:05:03``."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressLine:
    """``[done+1/total] name  ETA m:ss`` on a terminal stream."""

    def __init__(self, stream, total: int, clock=time.monotonic):
        self.stream = stream
        self.total = total
        self.clock = clock
        self.done = 0
        self.started: float | None = None
        self.finished: set[str] = set()
        self.shown = False

    def start(self, name: str) -> None:
        """A benchmark starts: draw its line."""
        now = self.clock()
        if self.started is None:
            self.started = now
        width = len(str(self.total))
        eta = "ETA --:--"
        if self.done:
            eta = f"ETA {format_eta((now - self.started) / self.done * (self.total - self.done))}"
        position = min(self.done + 1, self.total)
        self._write(f"{CLEAR}[{position:>{width}}/{self.total}] {name}  {eta}")
        self.shown = True

    def finish(self, name: str) -> None:
        """A benchmark's rows are about to be reported: count it, erase the line."""
        if name not in self.finished:
            self.finished.add(name)
            self.done += 1
        self.clear()

    def clear(self) -> None:
        if self.shown:
            self._write(CLEAR)
            self.shown = False

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
