"""SIGINT and SIGTERM: how a run is interrupted, and where it may not be.

* :func:`sigterm_raises` makes SIGTERM raise :class:`Terminated` in the main
  thread, as SIGINT raises KeyboardInterrupt, so every ``finally`` (reports
  closed, temporary files removed) runs for both.
* :func:`signals_deferred` holds both signals back while a report record is
  written, so a record is never cut in half. A second signal while one is
  held gets through at once: a reporter that hangs can always be
  interrupted (its unfinished file is discarded, the previous one kept).
* :func:`observe_signals` lets a forked worker (:mod:`ireebench._worker`)
  tell its supervisor that a signal reached Python code, also while it is
  held back here, and :func:`observe_deferring` that signals are being held
  back (so it is not taken for stuck in native code);
* :func:`held_signal`: the signal held back now, for a long protected step
  that says it will stop once done.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from .errors import Terminated

_DEFERRED_SIGNALS = tuple(
    sig for sig in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None)) if sig
)


# Called with the signal number whenever signals_deferred's handler runs.
_observer = None
# The signals held by the signals_deferred blocks now running (innermost last).
_held: list[list] = []
# Called with True when the outermost signals_deferred block starts, False when it ends.
_deferring = None


def held_signal() -> int | None:
    """The signal a :func:`signals_deferred` block holds back now, if any (a long
    protected step, such as a save waiting for a lock, says it will stop after it)."""
    for pending in reversed(_held):
        if pending:
            return pending[0][0]
    return None


def observe_signals(callback) -> None:
    """Calls ``callback(signum)`` whenever :func:`signals_deferred` holds or
    passes on a signal (None: nothing is called).

    A forked worker uses it to acknowledge a forwarded signal to its
    supervisor: a handler that runs proves the worker is in Python code and
    will close its reports, so the supervisor does not kill it.
    """
    global _observer
    _observer = callback


def observe_deferring(callback) -> None:
    """Calls ``callback(True)`` when signals start being held back (the outermost
    :func:`signals_deferred` block begins) and ``callback(False)`` when that block
    ends (None: nothing is called).

    A forked worker tells its supervisor, which then gives a signal it
    forwards longer to be acknowledged: the worker will act on it when the
    protected step (a record, a file committed, a save) is done, and must not
    be killed in its middle.
    """
    global _deferring
    _deferring = callback


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def sigterm_raises():
    """Within the block, SIGTERM raises :class:`Terminated` (main thread only)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread (embedded use)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _deliver(handler, signum, frame) -> None:
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)  # the default action, now unblocked


@contextlib.contextmanager
def signals_deferred():
    """Holds SIGINT/SIGTERM back for the duration of the block.

    A signal received inside the block is delivered to the previous handler
    when the block ends (so Ctrl-C still raises KeyboardInterrupt, just not
    in the middle of a report record); a second one is delivered at once.
    Outside the main thread, where handlers cannot be changed, the block
    runs unprotected.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[tuple[int, object]] = []
    previous: dict[int, object] = {}

    def restore():
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    def hold(signum, frame):
        if _observer is not None:
            _observer(signum)
        if pending:  # the second signal: the user insists
            pending.clear()
            restore()
            _deliver(previous.get(signum), signum, frame)
            return
        pending.append((signum, frame))

    try:
        for sig in _DEFERRED_SIGNALS:
            previous[sig] = signal.signal(sig, hold)
    except (ValueError, OSError):  # embedded interpreters may refuse
        restore()
        yield
        return
    if not _held and _deferring is not None:
        _deferring(True)
    _held.append(pending)
    try:
        yield
    finally:
        del _held[next(i for i, held in enumerate(_held) if held is pending)]
        if not _held and _deferring is not None:
            _deferring(False)
        restore()
        if len(pending) == 1:
            signum, frame = pending[0]
            _deliver(previous.get(signum), signum, frame)


__all__ = [
    "held_signal", "signals_deferred"
]
