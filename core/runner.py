"""Orchestrates one run: backend selection, reporters, and the in-process backend."""

from __future__ import annotations

import sys

from . import context as context_module
from .errors import UsageError, exit_status
from .measure import measure
from .pluginmanager import call_hook, collect_named, guarded
from .reporting import AtomicFile, ReportHub
from .results import RunResult
from .session import Session
from .stats import compute_aggregates


def _reporter_factories(config) -> dict:
    return collect_named(config.pm, "ireebench_reporters", "reporter")


def build_hub(config, stdout=None, stderr=None) -> ReportHub:
    """Creates the display reporter (stdout) and the --benchmark_out reporter."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    factories = _reporter_factories(config)
    display_name = config.getoption("reporter") or config.getoption("benchmark_format")
    flag = "reporter" if config.getoption("reporter") else "benchmark_format"
    if display_name not in factories:
        raise UsageError(
            f"--{flag}={display_name}: unknown reporter (known: {', '.join(sorted(factories))})"
        )
    display = guarded(config.pm, f"reporter factory {display_name!r}",
                      factories[display_name], stdout, config, stderr)
    file_reporter = handle = None
    out_path = config.getoption("benchmark_out")
    if out_path:
        out_format = config.getoption("benchmark_out_format")
        if out_format not in factories:
            raise UsageError(
                f"--benchmark_out_format={out_format}: unknown reporter "
                f"(known: {', '.join(sorted(factories))})"
            )
        handle = AtomicFile(out_path)
        try:
            # The file's context lines go to the file too, as Google Benchmark's do.
            file_reporter = guarded(config.pm, f"reporter factory {out_format!r}",
                                    factories[out_format], handle.stream, config, handle.stream)
        except BaseException:
            handle.discard()
            raise
    return ReportHub(config, display, file_reporter, handle)


def run_config(config, stdout=None, stderr=None) -> RunResult:
    backends = collect_named(config.pm, "ireebench_backends", "backend")
    name = config.getoption("backend")
    if name not in backends:
        raise UsageError(f"--backend={name}: unknown backend (known: {', '.join(sorted(backends))})")
    if config.getoption("benchmark_list_tests"):
        return RunResult(backends[name](config, None), [])
    hub = build_hub(config, stdout, stderr)
    try:
        exit_code = backends[name](config, hub)
    except BaseException:
        hub.close(failed=True)  # finished runs stay in valid output
        raise
    hub.close()
    return RunResult(exit_code, hub.runs, hub.context)


def name_field_width(workloads, repetitions: int) -> int:
    """Google Benchmark's console name column: longest name (+ "_median")."""
    width = max([10] + [len(w.run_name) for w in workloads])
    if repetitions > 1:
        width += 1 + max(len("median"), len("stddev"))
    return width


def build_context(config, workloads, executable=None):
    context = context_module.gather(executable, config.benchmark_context)
    context.name_field_width = name_field_width(
        workloads, config.getoption("benchmark_repetitions")
    )
    return context


def parse_runtime_flags(config) -> None:
    """Hands flags ireebench does not own to the IREE runtime."""
    if not config.runtime_flags:
        return
    import iree.runtime as rt

    for flag in config.runtime_flags:
        try:
            rt.flags.parse_flags(flag)
        except ValueError as exc:
            detail = str(exc).rsplit(";", 1)[-1].strip()
            raise UsageError(f"{flag}: unknown flag ({detail})") from None


def with_sessionfinish(config, body, session=lambda: None) -> int:
    """Runs a backend's ``body()`` and always ends with ``ireebench_sessionfinish``.

    The hook hears the exit code, or 1, 130 (Ctrl-C) or 143 (SIGTERM) when
    an exception escapes; ``session()`` gives the open session or None.
    """
    exit_code = 1
    try:
        exit_code = body()
        return exit_code
    except BaseException as exc:
        exit_code = exit_status(exc)
        raise
    finally:
        call_hook(config.pm, "ireebench_sessionfinish", session=session(),
                  exitstatus=exit_code)


def run_in_process(config, hub) -> int:
    """The default backend: measures in this process with iree.runtime."""
    parse_runtime_flags(config)
    session = Session(config)
    opened = []

    def body() -> int:
        session.open()
        opened.append(session)
        call_hook(config.pm, "ireebench_sessionstart", session=session)
        # Runtime objects (batches, fences, buffers) live only inside this
        # call, so they are released before the session closes the devices.
        return _measure_and_report(config, session, hub)

    try:
        return with_sessionfinish(config, body, lambda: opened[0] if opened else None)
    finally:
        if config.getoption("print_statistics") and session.devices:
            for uri, text in session.allocator_statistics():
                sys.stderr.write(f"Device: {uri}\n{text}\n")
        session.close()


def _measure_and_report(config, session, hub) -> int:
    from .discovery import discover_workloads
    from .outputs import snapshot

    workloads = discover_workloads(config, session)
    if hub is None:  # --benchmark_list_tests
        for workload in workloads:
            print(workload.run_name)
        return 0
    if not workloads:
        # Google Benchmark's behaviour: no context, no rows, an empty
        # --benchmark_out file, exit 0.
        pattern = config.getoption("benchmark_filter") or "."
        sys.stderr.write(f"Failed to match any benchmarks against regex: {pattern}\n")
        return 0
    hub.report_context(build_context(config, workloads))
    exit_code = 0
    keep_outputs = bool(config.getoption("enable_output_processing"))
    for family_index, workload in enumerate(workloads):
        runs, last_batch = measure(workload, session, config, keep_last_batch=keep_outputs)
        for run in runs:  # Google Benchmark numbers the benchmarks that run
            run.family_index = family_index
        if last_batch is not None:
            # Copied to host right away: nothing can overwrite them later.
            workload.outputs = snapshot(last_batch.outputs(), session.device,
                                        workload.function.results)
            del last_batch
        runs += compute_aggregates(runs)
        if any(r.error_occurred for r in runs):
            exit_code = 1
        extra = []
        for rows in call_hook(config.pm, "ireebench_report_extra_rows",
                              workload=workload, runs=runs):
            extra.extend(rows or [])
        hub.report(runs, extra)
    call_hook(config.pm, "ireebench_replay_capture", config=config, workloads=workloads)
    for code in call_hook(config.pm, "ireebench_process_outputs", config=config,
                          session=session, workloads=workloads):
        exit_code = max(exit_code, code or 0)
    for workload in workloads:
        workload.inputs = None
    return exit_code
