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
classifies the functions itself (a function of a plugin's invocation kind
is refused in one line: this backend lacks ``plugin_kinds``), the options
plugins mark as the native tool's own (``native_flag``: output
processing's, ``--print_statistics``) and the device profiling flags are
handled by the native tool (``native_flags``), and the session, discovery
and measurement hooks are not called. ``--benchmark_statistics`` works
(``repetition_samples``: the extra rows are computed from the native
repetitions); adaptive stopping and cold start do not. ``ireebench_measurements_finish`` is called as usual (so a
``--device_replay_output`` capture is written), with workloads rebuilt from
the reported names.
"""

from __future__ import annotations

from ireebench import hookimpl, native
from ireebench.backend import (
    MEASURED_WORKLOADS,
    NATIVE_ENVIRONMENT,
    NATIVE_FLAGS,
    REPETITION_SAMPLES,
    Backend,
)
from ireebench.commands import CORE
from ireebench.hookcall import call_hook
from ireebench.lib.gbench_json import benchmark_function
from ireebench.native import BENCHMARK_TOOL, USER_PASS_FLAGS


def native_options(config) -> list[str]:
    """The plugin options marked ``native_flag`` that were given, as the native flags.

    Output processing's flags and ``--print_statistics`` are the native
    tool's own: they go to it as they are, and it acts on them itself.
    """
    args = []
    for spec in config.option_specs.values():
        if spec.owner == CORE or not spec.native:
            continue
        value = config.getoption(spec.name)
        if value is None or value == spec.default or value in ((), [], ""):
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            args.append(f"--{spec.name}={str(item).lower() if isinstance(item, bool) else item}")
    return args


def tool_args(config) -> list[str]:
    """iree-benchmark-module flags equivalent to this ireebench run (no filter)."""
    return [*native.session_args(config), *native.selection_args(config),
            *native_options(config), *native.benchmark_flags(config, user_filter=False)]


def whole_run_flags(config) -> bool:
    """Does the run ask the native tool for something of the whole run?

    A device profiling bundle or device statistics, the allocator statistics
    printed at exit, output processing (options marked ``whole_run``): one
    native process per benchmark would split them (each process overwriting
    the bundle) or repeat them.
    """
    whole = any(spec.whole_run and config.getoption(spec.name) not in (None, spec.default)
                for spec in config.option_specs.values())
    return whole or any(flag.startswith(USER_PASS_FLAGS) for flag in config.runtime_flags)


def run_native(config, hub) -> int:
    """The native backend: run iree-benchmark-module, report its JSON through ``hub``."""
    tool_run = native.NativeRun(config, BENCHMARK_TOOL, tool_args(config),
                                what="--backend=native",
                                user_filter=config.getoption("benchmark_filter"),
                                batch_size=config.getoption("batch_size"),
                                context_extra={"ireebench_backend": "native"},
                                one_process=whole_run_flags(config))
    exit_code = tool_run.run(hub)
    if hub is not None and tool_run.groups:
        workloads = [native.named_workload(config, benchmark_function(runs),
                                           runs[0].time_unit)
                     for runs in tool_run.groups]
        for code in call_hook(config.pm, "ireebench_measurements_finish", config=config,
                              workloads=workloads):
            exit_code = max(exit_code, code or 0)
    return exit_code


@hookimpl
def ireebench_backends(config):
    """Provides ``--backend=native``."""
    return [Backend("native", run_native, {REPETITION_SAMPLES, NATIVE_FLAGS, NATIVE_ENVIRONMENT,
                                           MEASURED_WORKLOADS},
                    "the native iree-benchmark-module measures; its JSON is reported")]
