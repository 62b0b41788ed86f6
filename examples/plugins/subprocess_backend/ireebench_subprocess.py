"""Example plugin: a measurement backend that runs the benchmark in another process.

    ireebench --module=model.vmfb --backend=subprocess --benchmark_repetitions=10 \\
        --benchmark_statistics=p90

The native ``iree-benchmark-module`` measures in a child process with a
**clean environment** (only ``PATH``, ``HOME``, glibc's allocator settings
— ``MALLOC_*`` and ``GLIBC_TUNABLES``, which ``--malloc_trim`` sets and
the report context records — and the variables named with
``--subprocess_keep_env``): no ``LD_PRELOAD``, no stray ``IREE_*`` or
``OMP_*`` setting of the calling shell leaks into the numbers. Its Google
Benchmark JSON comes back as ireebench rows and goes through ireebench's
reporters, plugins and ``--benchmark_out`` like any run.

The backend declares what it can do: ``repetition_samples`` (each
repetition is a row of its own), so ``--benchmark_statistics`` works, and
``native_flags`` (the runtime flags and the native tool's own flags go to
the child, and what the child prints besides its report — output
processing, ``--print_statistics`` — comes back), so those work too, and
``native_environment`` (the child keeps the allocator's variables, so
``--malloc_trim`` holds there). It
lacks ``adaptive_repetitions`` (the child decides its repetitions), so
``--benchmark_min_rel_accuracy`` is refused in one line naming that
capability, and ``in_process`` (``--benchmark_cold_start``), and so on.

``--subprocess_prefix`` runs the tool under a command: ``--subprocess_prefix
"ssh bench-host"`` makes this an ssh backend (docs/plugins.md, "Writing a
backend", shows that variant: the module paths must then exist on the remote
host, and the tool must be on its PATH).

Everything it uses is public: :class:`ireebench.Backend` and the helpers of
:mod:`ireebench.backend` (the command line for a tool that measures
elsewhere, the run's modules as files, the native tool, Google Benchmark
JSON to rows, the statistics the run selected).
"""

from __future__ import annotations

import os
import shlex
import subprocess

from ireebench import Backend, UsageError, hookimpl
from ireebench.backend import (
    BENCHMARK_TOOL,
    NATIVE_ENVIRONMENT,
    NATIVE_FLAGS,
    REPETITION_SAMPLES,
    aggregates,
    context_from_benchmark_json,
    forwarded_argv,
    machine_context,
    module_files,
    native_error_line,
    runs_from_benchmark_json,
    split_benchmark_json,
    tool_path,
)

# What the child keeps of the environment besides --subprocess_keep_env.
KEPT_ENVIRONMENT = ("PATH", "HOME", "GLIBC_TUNABLES")
KEPT_PREFIXES = ("MALLOC_",)


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--subprocess_prefix", "subprocess_prefix", default="",
                     group="subprocess backend", metavar="COMMAND",
                     help="Run the native tool under this command (e.g. 'ssh bench-host').")
    parser.addoption("--subprocess_keep_env", "subprocess_keep_env", multiple=True,
                     group="subprocess backend", metavar="NAME",
                     help="An environment variable the child keeps; repeatable.")


def clean_environment(keep) -> dict:
    return {name: value for name, value in os.environ.items()
            if name in (*KEPT_ENVIRONMENT, *keep) or name.startswith(KEPT_PREFIXES)}


def child_command(config) -> list[str]:
    """The native tool's command line: the run's modules (compiled, if .mlir) and
    every flag the native tool should act on (forwarded_argv leaves out the
    report's flags: ireebench writes the report here)."""
    prefix = shlex.split(config.getoption("subprocess_prefix"))
    args = [arg for arg in forwarded_argv(config) if not arg.startswith("--module")]
    modules = [f"--module={path}" for path in module_files(config)]
    tool = BENCHMARK_TOOL if prefix else str(tool_path(BENCHMARK_TOOL))
    return [*prefix, tool, *modules, *args, "--benchmark_format=json"]


def run_in_subprocess(config, hub) -> int:
    command = child_command(config)
    if hub is None:  # --benchmark_list_tests: the child lists them
        command.append("--benchmark_list_tests=true")
    proc = subprocess.run(command, capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL, check=False,
                          env=clean_environment(config.getoption("subprocess_keep_env")))
    if hub is None:
        config.stdout.write(proc.stdout)
        return proc.returncode
    report, printed_after = split_benchmark_json(proc.stdout)
    if report is None:
        raise UsageError(f"--backend=subprocess: {command[0]} failed: "
                         f"{native_error_line(proc.stderr, proc.returncode)}")
    groups = runs_from_benchmark_json(report, config.getoption("batch_size"))
    context = context_from_benchmark_json(report, config.benchmark_context) if report.get(
        "context") else machine_context(config)
    context.extra["ireebench_backend"] = "subprocess"
    hub.report_context(context, [runs[0].run_name for runs in groups])
    failed = False
    for runs in groups:
        repetitions = [run for run in runs if run.run_type == "iteration"]
        # The statistics the run selected, after the tool's own aggregates.
        hub.report(runs + aggregates(config, repetitions, gbench=False))
        failed = failed or any(run.error_occurred for run in runs)
    # What the native flags made the child print (outputs, allocator statistics).
    config.stdout.write(printed_after)
    config.stderr.write(proc.stderr)
    return 1 if failed or proc.returncode else 0


@hookimpl
def ireebench_backends(config):
    return [Backend("subprocess", run_in_subprocess,
                    {REPETITION_SAMPLES, NATIVE_FLAGS, NATIVE_ENVIRONMENT},
                    "the native tool in a child process with a clean environment")]
