"""The run: one place that opens and closes it for every backend.

:func:`run_config` picks the backend (``config.backend``, from
``ireebench_backends``; a backend without the ``plugin_kinds`` capability
is refused a function of a plugin's kind first), builds the
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

from .backend import check_kinds
from .errors import EXIT_OK, exit_status
from .hookcall import call_hook, guarded
from .reporting.hub import build_hub
from .results import RunResult
from .session import SESSION


def run_config(config) -> RunResult:
    """Runs the configured backend; see the module docstring for what surrounds it."""
    hub = None
    exit_code = EXIT_OK
    error: BaseException | None = None
    try:
        backend = config.backend
        check_kinds(config, backend)
        if not config.getoption("benchmark_list_tests"):
            hub = build_hub(config)
        exit_code = guarded(config.pm, f"backend {backend.name!r}", backend.run, config, hub)
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
