"""``--backend=native``: the whole benchmark run by the native iree-benchmark-module.

The native tool shipped in iree-base-runtime runs with the same modules,
devices, function, inputs, batch and Google Benchmark flags; its JSON report
becomes ireebench :class:`~ireebench.results.Run` objects that go through
the same :class:`~ireebench.reporting.hub.ReportHub` as the in-process
backend (see :mod:`ireebench.native.backend`: one native process per
benchmark, each reported as it finishes). So the display and
``--benchmark_out`` reporters, the streaming hook and the Python API see
the same kind of results, and the in-process numbers can be cross-checked
against the native implementation.

What differs from the in-process backend: the native tool discovers and
classifies the functions itself (plugin invocation kinds and discovery rules
do not apply), output processing (``--enable_output_processing``,
``--output``, ``--expected_output``) and device profiling flags are handled
by the native tool, and the session, discovery and measurement hooks are
not called. ``ireebench_measurements_finish`` is called as usual (so a
``--device_replay_output`` capture is written), with workloads rebuilt from
the reported names.
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.hookcall import call_hook
from ireebench.native.backend import NativeRun, named_workload
from ireebench.native.flags import USER_PASS_FLAGS, benchmark_flags, selection_args, session_args
from ireebench.native.gbench_json import benchmark_function
from ireebench.native.tools import BENCHMARK_TOOL

# Flags of the output_processing plugin the native tool takes as they are.
OUTPUT_FLAGS = ("output", "expected_output", "expected_f16_threshold", "expected_f32_threshold",
                "expected_f64_threshold", "expected_bf16_threshold", "expected_rtol",
                "equality_mode")


def tool_args(config) -> list[str]:
    """iree-benchmark-module flags equivalent to this ireebench run (no filter)."""
    args = [*session_args(config), *selection_args(config)]
    if config.getoption("print_statistics"):
        args.append("--print_statistics=true")
    if config.getoption("enable_output_processing"):
        args.append("--enable_output_processing=true")
        for name in OUTPUT_FLAGS:
            values = config.getoption(name)
            if values is None or values == () or values == "":
                continue
            for value in values if isinstance(values, (list, tuple)) else [values]:
                args.append(f"--{name}={value}")
        args.append(f"--output_max_element_count={config.getoption('output_max_element_count')}")
    return args + benchmark_flags(config, user_filter=False)


def whole_run_flags(config) -> bool:
    """Does the run ask the native tool for something of the whole run?

    A device profiling bundle or device statistics, the allocator statistics
    printed at exit, output processing: one native process per benchmark
    would split them (each process overwriting the bundle) or repeat them.
    """
    return bool(config.getoption("print_statistics")
                or config.getoption("enable_output_processing")
                or any(flag.startswith(USER_PASS_FLAGS) for flag in config.runtime_flags))


def run_native(config, hub) -> int:
    """The native backend: run iree-benchmark-module, report its JSON through ``hub``."""
    native = NativeRun(config, BENCHMARK_TOOL, tool_args(config), what="--backend=native",
                       user_filter=config.getoption("benchmark_filter"),
                       batch_size=config.getoption("batch_size"),
                       context_extra={"ireebench_backend": "native"},
                       one_process=whole_run_flags(config))
    exit_code = native.run(hub)
    if hub is not None and native.groups:
        workloads = [named_workload(config, benchmark_function(runs), runs[0].time_unit)
                     for runs in native.groups]
        for code in call_hook(config.pm, "ireebench_measurements_finish", config=config,
                              workloads=workloads):
            exit_code = max(exit_code, code or 0)
    return exit_code


@hookimpl
def ireebench_backends(config):
    """Provides ``--backend=native``."""
    return {"native": run_native}
