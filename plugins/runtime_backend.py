"""The in-process backend (``--backend=runtime``, the default): measure with the IREE runtime.

An essential plugin. One run:

1. open the :class:`~ireebench.session.Session` (instance, devices, the
   private module copies, parameters, context), ``ireebench_sessionstart``;
2. discover the workloads (kinds, classify, select; inputs parsed, checked
   and uploaded once), ``ireebench_discovery_finish``; with
   ``--benchmark_list_tests`` print their names and stop;
3. report the context;
4. per workload: ``ireebench_workload_start``, warm-up and calibration,
   each repetition through ``ireebench_measure_repetition`` (this plugin's
   implementation, :func:`ireebench.measure.time_repetition`, runs last)
   while ``ireebench_continue_repetitions`` says so (this plugin's rule,
   also last: ``--benchmark_repetitions``), aggregates, ``ireebench_workload_finish``, ``ireebench_report_extra_rows``,
   then the rows go to the reporters;
5. the reports are finalized, then ``ireebench_measurements_finish``.

Before each workload it tells the hub (``hub.begin``), so that a benchmark
that never finishes is an error row; a worker resumed after a crash
(:mod:`ireebench.worker`) skips the benchmarks its predecessor reported
(``hub.already_reported``), and ``ireebench_measurements_finish`` gets the
workloads this process measured.

The core (``ireebench.runner``) closes the reports, calls
``ireebench_sessionfinish`` and releases the run; this backend registers
the session's release (and ``--print_statistics``) as a cleanup, so the
session is still open during ``ireebench_sessionfinish``.
"""

from __future__ import annotations

import functools

from ireebench import hookimpl, names
from ireebench.context import gather, name_field_width
from ireebench.discovery import SKIPPED, discover_workloads
from ireebench.hookcall import call_hook
from ireebench.measure import error_run, measure_workload, time_repetition
from ireebench.session import SESSION, Session
from ireebench.signature import example_inputs


@hookimpl
def ireebench_backends(config):
    """Provides ``--backend=runtime``."""
    return {"runtime": run_in_process}


@hookimpl(trylast=True)
def ireebench_measure_repetition(config, workload, repetition):
    """Times ``repetition.iterations`` logical iterations of the workload's kind."""
    return time_repetition(workload, repetition)


# The header iree_hal_allocator_statistics_fprint writes before the per-heap lines.
STATISTICS_HEADER = "[[ iree_hal_allocator_t memory statistics ]]"


@hookimpl(trylast=True)
def ireebench_continue_repetitions(config, workload, runs):
    """The fixed count: ``--benchmark_repetitions`` repetitions."""
    return len(runs) < config.getoption("benchmark_repetitions")


def _close_session(config, session: Session) -> None:
    """Prints --print_statistics, then closes.

    Mirrors ``BenchmarkSession::Close`` of iree-benchmark-module: per device,
    ``Device: <id>``, then ``iree_hal_allocator_statistics_fprint`` (the
    header line and one line per heap), then an empty line, on stderr.
    """
    try:
        if config.getoption("print_statistics") and session.devices:
            for device_id, text in session.allocator_statistics():
                config.stderr.write(f"Device: {device_id}\n{STATISTICS_HEADER}\n{text}\n")
            config.stderr.flush()
    finally:
        if SESSION in config.stash:
            del config.stash[SESSION]
        session.close()


def _release_inputs(workloads) -> None:
    """Input buffers live until the run ends; they go before the devices do."""
    for workload in workloads:
        workload.inputs = None
        workload.last_batch = None


def build_context(config, workloads):
    """The machine context, with the console's name column sized for ``workloads``."""
    context = gather(None, config.benchmark_context)
    context.name_field_width = name_field_width(
        [w.run_name for w in workloads], config.getoption("benchmark_repetitions"))
    return context


def run_in_process(config, hub) -> int:
    """The default backend: measures in this process with iree.runtime."""
    session = Session(config)
    config.add_cleanup(functools.partial(_close_session, config, session))
    session.open()
    config.stash[SESSION] = session
    pm = config.pm
    call_hook(pm, "ireebench_sessionstart", config=config, session=session)
    workloads = discover_workloads(config, session)
    config.add_cleanup(functools.partial(_release_inputs, workloads))
    call_hook(pm, "ireebench_discovery_finish", config=config, session=session,
              workloads=workloads)
    if hub is None:  # --benchmark_list_tests
        config.stdout.write("".join(f"{w.run_name}\n" for w in workloads))
        return 0
    if not workloads:
        # Google Benchmark's behaviour: no context, no rows, an empty
        # --benchmark_out file, exit 0.
        pattern = config.getoption("benchmark_filter") or "."
        config.stderr.write(f"Failed to match any benchmarks against regex: {pattern}\n")
        hint = needs_inputs_hint(config)
        if hint:
            config.stderr.write(hint + "\n")
        return 0
    hub.report_context(build_context(config, workloads))
    exit_code = 0
    measured = []
    for family_index, workload in enumerate(workloads):
        if hub.already_reported(workload.run_name):
            continue  # a worker resumed after a crash: the one before reported it
        measured.append(workload)
        code = _measure_and_report(config, session, hub, workload, family_index)
        exit_code = max(exit_code, code)
    # The reports are complete before the follow-up work prints anything
    # (outputs come after the report, as the native tool prints them).
    hub.finalize()
    for code in call_hook(pm, "ireebench_measurements_finish", config=config,
                          workloads=measured):
        exit_code = max(exit_code, code or 0)
    _release_inputs(workloads)  # now, not at the end of the run: nothing needs them
    return exit_code


def needs_inputs_hint(config) -> str | None:
    """One line naming the functions skipped for needing inputs, and how to run one.

    The native tool only says ``Failed to match any benchmarks against regex``
    when every function takes arguments; this line says why, with each
    function's ``iree.abi.declaration`` and a ``--function=... --input=...``
    that fits the first one. None when no skipped function takes inputs (or
    none matches --benchmark_filter).
    """
    waiting = [function for function, kind in config.stash.get(SKIPPED, [])
               if not names.is_internal(function.name) and not kind.auto_discover(function)
               and config.selects(names.run_name(function.name))]
    if not waiting:
        return None
    signatures = "; ".join(function.attr("iree.abi.declaration")
                           or f"{function.name} (cconv {function.cconv})"
                           for function in waiting)
    example = " ".join([f"--function={waiting[0].name}", *example_inputs(waiting[0])])
    return (f"ireebench: hint: no function runs without inputs; these take arguments: "
            f"{signatures}; run one with {example}")


def _measure_and_report(config, session, hub, workload, family_index: int) -> int:
    pm = config.pm
    # The row this benchmark is reported as if it never finishes (a crash, a
    # hang, an interrupt): the hub and a worker's supervisor keep it.
    planned = 1 if config.getoption("benchmark_dry_run") else config.getoption(
        "benchmark_repetitions")
    lost = error_run(workload, planned, 0, "")
    lost.family_index = family_index
    hub.begin(lost)
    call_hook(pm, "ireebench_workload_start", config=config, session=session, workload=workload)
    runs = measure_workload(config, session, workload)
    for run in runs:  # Google Benchmark numbers the benchmarks that run
        run.family_index = family_index
    extra = []
    try:
        call_hook(pm, "ireebench_workload_finish", config=config, session=session,
                  workload=workload, runs=runs)
        for rows in call_hook(pm, "ireebench_report_extra_rows", config=config,
                              workload=workload, runs=runs):
            extra.extend(rows or [])
    except BaseException:
        hub.report(runs)  # what was measured is reported, whatever failed after
        raise
    finally:
        workload.last_batch = None  # results released before the next workload
    hub.report(runs, extra)
    return 1 if any(run.error_occurred for run in runs) else 0
