"""The run: one place that opens and closes it for every backend.

:func:`run_config` picks the backend (``config.backend``, from
``ireebench_backends``; a backend without the ``plugin_kinds`` capability
is refused a function of a plugin's kind first), builds the
reports (:func:`~ireebench.reporting.hub.build_hub`), calls the backend's
``run``,
and then, whatever happened (a result, a usage error, a plugin error, a
signal), in this order:

1. closes the reports (finished rows are written, files committed; a
   benchmark interrupted by SIGINT/SIGTERM while running is an error row);
2. calls ``ireebench_sessionfinish`` with the real exit status and the
   in-process session, if one was opened;
3. prints the lines of the plugins that failed the run (``Config.fail_run``),
   whose highest exit code the run ends with unless an exception ended it;
4. releases the run (``config.add_cleanup`` callbacks, last first: the
   runtime session, profiling engines; then the scratch directory).

With ``--isolation=worker`` (the command line's default for a backend with
the ``in_process`` capability) all of this runs in a forked worker process and this process
supervises it (:mod:`ireebench._worker`), so that a function that crashes or
never returns cannot take the finished results with it.

A backend only measures and reports; it never has to remember any of this.
"""

from __future__ import annotations

import contextlib
import traceback

from . import _worker as worker
from ._discovery import check_kinds
from .errors import EXIT_OK, Terminated, exit_status, printable
from .hookcall import call_hook, guarded
from .reporting.hub import build_hub
from .results import RunResult
from .stash import StashKey

# The open runtime session of the run, if its backend opened one (the in-process
# backend): what ``ireebench_sessionfinish`` receives.
SESSION = StashKey["ireebench._session.Session"]()


def run_config(config) -> RunResult:
    """Runs the configured backend; see the module docstring for what surrounds it."""
    try:
        backend = config.backend
        check_kinds(config, backend)
        isolated = worker.wanted(config, backend)
    except BaseException as exc:  # noqa: BLE001 - re-raised once the run is closed
        return run_here(config, None, failure=exc)
    if isolated:
        return worker.supervise(config, backend, run_here)
    return run_here(config, backend)


def run_here(config, backend, failure: BaseException | None = None) -> RunResult:
    """The run in this process: reports, the backend, then the closing steps.

    ``failure``: the run already failed (selecting the backend); only the
    closing steps run, then it is raised.
    """
    hub = None
    exit_code = EXIT_OK
    error = failure
    if error is None:
        try:
            if not config.getoption("benchmark_list_tests"):
                hub = build_hub(config)
            exit_code = guarded(config.pm, f"backend {backend.name!r}", backend.run, config,
                                hub)
        except BaseException as exc:  # noqa: BLE001 - re-raised once the run is closed
            error = exc
    if hub is not None:
        if isinstance(error, (KeyboardInterrupt, Terminated)):
            # The benchmark it interrupted is an error row; whatever stops
            # that, the run ends with the interrupt.
            with contextlib.suppress(BaseException):
                hub.abandon(error)
        try:
            hub.close(failed=error is not None)
        except BaseException as exc:  # noqa: BLE001
            error = error or exc
    status = exit_status(error) if error is not None else _outcome(config, exit_code)
    worker.reports_closed(config, status, error)
    try:
        call_hook(config.pm, "ireebench_sessionfinish", config=config,
                  session=config.stash.get(SESSION, None), exitstatus=status)
    except BaseException as exc:  # noqa: BLE001
        error = error or exc
    exit_code = _outcome(config, exit_code)  # ireebench_sessionfinish may fail it too
    for line, _ in config.failures:
        config.stderr.write(f"ireebench: run failed: {printable(line)}\n")
    if error is not None:
        release_frames(error)
    try:
        config.release()
    except BaseException as exc:  # noqa: BLE001
        error = error or exc
    if error is not None:
        raise error
    return RunResult(exit_code, hub.runs if hub else [], hub.context if hub else None)


def _outcome(config, exit_code: int) -> int:
    """The run's exit code once the plugins that failed it (``Config.fail_run``) say theirs."""
    return max([exit_code, *(code for _, code in config.failures)])


def release_frames(error: BaseException) -> None:
    """Drops the local variables of the frames ``error`` (and its causes) went through.

    An exception keeps every frame it passed through alive, and with them
    what the failed code held: after Ctrl-C in a measurement, the batch of
    the interrupted repetition (argument and result lists, buffers,
    fences). Released after the devices, at interpreter exit, those end
    ``local-task`` runs in a segmentation fault; dropped here, they are
    freed before the session closes. The traceback itself (file, line) is
    kept.
    """
    pending, seen = [error], set()
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        pending += [exc.__cause__, exc.__context__]
