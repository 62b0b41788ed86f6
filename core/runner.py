"""The run: one place that opens and closes it for every backend.

:func:`run_config` picks the backend (``ireebench_backends``), builds the
reports (:func:`~ireebench.reporting.hub.build_hub`), calls the backend,
and then, whatever happened (a result, a usage error, a plugin error, a
signal), in this order:

1. closes the reports (finished rows are written, files committed);
2. calls ``ireebench_sessionfinish`` with the real exit status and the
   in-process session, if one was opened;
3. releases the run (``config.add_cleanup`` callbacks, last first: the
   runtime session, profiling engines; then the scratch directory).

A backend only measures and reports; it never has to remember any of this.
"""

from __future__ import annotations

import functools

from .errors import EXIT_OK, UsageError, exit_status
from .hookcall import call_hook, collect_named, guarded
from .reporting.hub import build_hub
from .results import RunResult
from .session import SESSION


def select_backend(config):
    """The backend ``--backend`` names (``runtime`` by default), as a callable that
    reports a failure of its code as a plugin error naming its plugin."""
    backends = collect_named(config.pm, "ireebench_backends", "backend", config=config)
    name = config.getoption("backend")
    if name not in backends:
        raise UsageError(f"--backend={name}: unknown backend (known: {', '.join(sorted(backends))})")
    return functools.partial(guarded, config.pm, f"backend {name!r}", backends[name])


def run_config(config) -> RunResult:
    """Runs the configured backend; see the module docstring for what surrounds it."""
    hub = None
    exit_code = EXIT_OK
    error: BaseException | None = None
    try:
        backend = select_backend(config)
        if not config.getoption("benchmark_list_tests"):
            hub = build_hub(config)
        exit_code = backend(config, hub)
    except BaseException as exc:  # noqa: BLE001 - re-raised once the run is closed
        error = exc
    if hub is not None:
        try:
            hub.close(failed=error is not None)
        except BaseException as exc:  # noqa: BLE001
            error = error or exc
    status = exit_status(error) if error is not None else exit_code
    try:
        call_hook(config.pm, "ireebench_sessionfinish", config=config,
                  session=config.stash.get(SESSION, None), exitstatus=status)
    except BaseException as exc:  # noqa: BLE001
        error = error or exc
    try:
        config.release()
    except BaseException as exc:  # noqa: BLE001
        error = error or exc
    if error is not None:
        raise error
    return RunResult(exit_code, hub.runs if hub else [], hub.context if hub else None)
