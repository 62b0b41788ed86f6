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

from ireebench import hookimpl
from ireebench.native import (
    BENCHMARK_TOOL,
    benchmark_flags,
    named_workload,
    private_tempdir,
    run_benchmark_backend,
    selection_args,
    session_args,
)
from ireebench.pluginmanager import call_hook
from ireebench.runner import with_sessionfinish
from ireebench.session import resolve_module_paths


def tool_args(config) -> list[str]:
    """iree-benchmark-module flags equivalent to this ireebench run."""
    args = [*session_args(config), *selection_args(config)]
    if config.getoption("print_statistics"):
        args.append("--print_statistics=true")
    if config.getoption("enable_output_processing"):
        args.append("--enable_output_processing=true")
        args += [f"--output={spec}" for spec in config.getoption("output") or []]
        args += [f"--expected_output={v}" for v in config.getoption("expected_output") or []]
        args.append(f"--output_max_element_count={config.getoption('output_max_element_count')}")
    return args + benchmark_flags(config)


def run_native(config, hub) -> int:
    """The native backend: run iree-benchmark-module, report its JSON through ``hub``."""
    from ireebench.runner import parse_runtime_flags

    # Same validation of runtime flags as in-process: a typo is one line.
    parse_runtime_flags(config)

    def body() -> int:
        with private_tempdir() as scratch:
            # The in-process checks and messages for --module; a stdin module
            # is saved so that this run and every later pass can load it.
            resolve_module_paths(config, scratch)
            exit_code, groups = run_benchmark_backend(
                config, hub, BENCHMARK_TOOL, tool_args(config), what="--backend=native",
                batch_size=config.getoption("batch_size"),
                context_extra={"ireebench_backend": "native"})
            if groups:
                # Workloads rebuilt from the reported names (function name,
                # selected, batch flags) for the capture hook.
                workloads = [named_workload(config, runs[0].name.removeprefix("BM_"),
                                            runs[0].time_unit) for runs in groups]
                call_hook(config.pm, "ireebench_replay_capture", config=config,
                          workloads=workloads)
            return exit_code

    return with_sessionfinish(config, body)


@hookimpl
def ireebench_backends():
    """Provides ``--backend=native``."""
    return {"native": run_native}
