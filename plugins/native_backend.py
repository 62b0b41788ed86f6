"""``--backend=native``: the whole benchmark run by the native iree-benchmark-module.

The native tool shipped in iree-base-runtime runs with the same modules,
devices, function, inputs, batch and Google Benchmark flags; its JSON report
(``--benchmark_format=json`` on stdout, never its console table) becomes
ireebench :class:`~ireebench.results.Run` objects that go through the same
:class:`~ireebench.reporting.ReportHub` as the in-process backend. So the
display and ``--benchmark_out`` reporters, the streaming hook and the Python
API see the same kind of results, and the in-process numbers can be
cross-checked against the native implementation.

What differs from the in-process backend: the native tool discovers and
classifies the functions itself (plugin invocation kinds and discovery rules
do not apply), output processing (``--enable_output_processing``,
``--output``, ``--expected_output``) is done by the native tool, rows arrive
when the native run ends, and hooks that need the in-process session
(``ireebench_sessionstart``, ``ireebench_report_extra_rows``,
``ireebench_process_outputs``) are not called. ``ireebench_replay_capture``
is called as usual, with workloads rebuilt from the reported names.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ireebench import hookimpl
from ireebench.errors import UsageError
from ireebench.native import (
    benchmark_flags,
    context_from_benchmark_json,
    name_field_width_of,
    native_error_line,
    private_tempdir,
    run_benchmark_tool,
    runs_by_benchmark,
    session_args,
    split_benchmark_json,
)
from ireebench.pluginmanager import call_hook
from ireebench.workload import FunctionInfo, Workload

TOOL = "iree-benchmark-module"


def _check_modules(config) -> None:
    """The in-process backend's messages for a missing module, before the tool runs."""
    specs = list(config.getoption("module") or [])
    if not specs:
        raise UsageError("no user module specified; use --module=file.vmfb")
    for spec in specs:
        if spec != "-" and not Path(spec).is_file():
            raise UsageError(f"--module={spec}: file not found")


def _resolve_stdin_module(config, scratch: Path) -> None:
    """Saves a ``--module=-`` to a private file so that every native pass can load it."""
    specs = list(config.getoption("module") or [])
    if "-" not in specs:
        return
    data = sys.stdin.buffer.read()
    if not data:
        raise UsageError("--module=-: standard input is empty")
    copy = scratch / "stdin.vmfb"
    copy.write_bytes(data)
    config.resolved_module_paths = [str(copy) if s == "-" else str(Path(s).resolve())
                                    for s in specs]


def tool_args(config) -> list[str]:
    """iree-benchmark-module flags equivalent to this ireebench run."""
    args = session_args(config)
    if config.getoption("function"):
        args.append(f"--function={config.getoption('function')}")
        args += [f"--input={value}" for value in config.getoption("input") or []]
    args += [f"--batch_size={config.getoption('batch_size')}",
             f"--batch_concurrency={config.getoption('batch_concurrency')}"]
    if config.getoption("time_unit"):
        args.append(f"--time_unit={config.getoption('time_unit')}")
    if config.getoption("print_statistics"):
        args.append("--print_statistics=true")
    if config.getoption("enable_output_processing"):
        args.append("--enable_output_processing=true")
        args += [f"--output={spec}" for spec in config.getoption("output") or []]
        args += [f"--expected_output={v}" for v in config.getoption("expected_output") or []]
        args.append(f"--output_max_element_count={config.getoption('output_max_element_count')}")
    return args + benchmark_flags(config)


def _failure(proc) -> UsageError:
    return UsageError(f"--backend=native: {TOOL} failed: "
                      f"{native_error_line(proc.stderr, proc.returncode)}")


def _workloads_of(config, groups) -> list[Workload]:
    """Workloads rebuilt from the reported names, for hooks that take workloads.

    They carry the function name, ``selected`` and the batch flags; the
    native tool owned the VM function and the kind (``vm_function`` and
    ``kind`` are None).
    """
    workloads = []
    for runs in groups:
        first = runs[0]
        function_name = first.name.removeprefix("BM_")
        workloads.append(Workload(
            name=first.name,
            function=FunctionInfo(name=function_name, vm_function=None, reflection={},
                                  cconv=""),
            kind=None,
            batch_size=config.getoption("batch_size"),
            concurrency=config.getoption("batch_concurrency"),
            time_unit=first.time_unit,
            selected=bool(config.getoption("function")),
        ))
    return workloads


def run_native(config, hub) -> int:
    """The native backend: run iree-benchmark-module, report its JSON through ``hub``."""
    from ireebench.runner import parse_runtime_flags

    # Same validation of runtime flags as in-process: a typo is one line.
    parse_runtime_flags(config)
    _check_modules(config)
    exit_code = 0
    try:
        with private_tempdir() as scratch:
            _resolve_stdin_module(config, scratch)
            if hub is None:  # --benchmark_list_tests
                proc = run_benchmark_tool(
                    TOOL, tool_args(config) + ["--benchmark_list_tests=true"])
                if proc.returncode != 0:
                    raise _failure(proc)
                sys.stdout.write(proc.stdout)
                return 0
            proc = run_benchmark_tool(TOOL, tool_args(config) + ["--benchmark_format=json"])
            report, rest = split_benchmark_json(proc.stdout)
            if report is None and proc.returncode == 0 and not proc.stdout.strip():
                # No benchmark matched --benchmark_filter: Google Benchmark's
                # message, no report, exit 0 (as the in-process backend).
                sys.stderr.write(proc.stderr)
                return 0
            if report is None:
                raise _failure(proc)
            groups = runs_by_benchmark(report, batch_size=config.getoption("batch_size"))
            exit_code = _report(config, hub, report, groups)
            if rest:
                sys.stdout.write(rest)  # the native tool's output processing
                sys.stdout.flush()
            if proc.returncode == 0:
                sys.stderr.write(proc.stderr)  # --print_statistics and warnings
            exit_code = max(exit_code, 1 if proc.returncode else 0)
            call_hook(config.pm, "ireebench_replay_capture", config=config,
                      workloads=_workloads_of(config, groups))
            return exit_code
    finally:
        call_hook(config.pm, "ireebench_sessionfinish", session=None, exitstatus=exit_code)


def _report(config, hub, report, groups) -> int:
    """Reports the native context and each benchmark's runs through the hub."""
    context = context_from_benchmark_json(report, config.benchmark_context)
    context.name_field_width = name_field_width_of(groups)
    context.extra["ireebench_backend"] = "native"
    call_hook(config.pm, "ireebench_report_context", config=config, context=context)
    hub.report_context(context)
    exit_code = 0
    for runs in groups:
        if any(run.error_occurred for run in runs):
            exit_code = 1
        hub.report(runs)
    return exit_code


@hookimpl
def ireebench_backends():
    """Provides ``--backend=native``."""
    return {"native": run_native}
