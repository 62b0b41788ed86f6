"""Example plugin: a measurement backend that runs the benchmark in another process.

    ireebench --module=model.vmfb --backend=subprocess --benchmark_repetitions=10 \\
        --benchmark_statistics=p90

The native ``iree-benchmark-module`` measures in a child process with a
**clean environment** (only ``PATH``, ``HOME`` and the variables named with
``--subprocess_keep_env``): no ``LD_PRELOAD``, no stray ``IREE_*`` or
``OMP_*`` setting of the calling shell leaks into the numbers. Its Google
Benchmark JSON comes back as ireebench rows and goes through ireebench's
reporters, plugins and ``--benchmark_out`` like any run.

The backend declares what it can do: ``repetition_samples`` (each
repetition is a row of its own), so ``--benchmark_statistics`` works; it
lacks ``adaptive_repetitions`` (the child decides its repetitions), so
``--benchmark_min_rel_accuracy`` is refused in one line naming that
capability, and ``in_process`` (``--benchmark_cold_start``), and so on.

``--subprocess_prefix`` runs the tool under a command: ``--subprocess_prefix
"ssh bench-host"`` makes this an ssh backend (docs/plugins.md, "Writing a
backend", shows that variant: the module paths must then exist on the remote
host, and the tool must be on its PATH).

Everything it uses is public: :class:`ireebench.Backend` and the helpers of
:mod:`ireebench.backend` (the command line without ireebench's and plugins'
own flags, Google Benchmark JSON to rows, the statistics the run selected).
"""

from __future__ import annotations

import os
import shlex
import subprocess

from ireebench import Backend, UsageError, hookimpl
from ireebench.backend import (
    REPETITION_SAMPLES,
    aggregates,
    context_from_benchmark_json,
    forwarded_argv,
    machine_context,
    runs_from_benchmark_json,
)
from ireebench.modules import module_files
from ireebench.native.gbench_json import split_benchmark_json
from ireebench.native.tools import BENCHMARK_TOOL, native_error_line, tool_path

# Google Benchmark's output flags: ireebench's reporters write the outputs.
OUTPUT_FLAGS = ("--benchmark_format", "--benchmark_out", "--benchmark_out_format",
                "--benchmark_counters_tabular", "--benchmark_color",
                "--benchmark_report_aggregates_only", "--benchmark_display_aggregates_only")


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--subprocess_prefix", "subprocess_prefix", default="",
                     group="subprocess backend", metavar="COMMAND",
                     help="Run the native tool under this command (e.g. 'ssh bench-host').")
    parser.addoption("--subprocess_keep_env", "subprocess_keep_env", multiple=True,
                     group="subprocess backend", metavar="NAME",
                     help="An environment variable the child keeps; repeatable.")


def clean_environment(keep) -> dict:
    names = {"PATH", "HOME", *keep}
    return {name: os.environ[name] for name in names if name in os.environ}


def child_command(config) -> list[str]:
    """The native tool's command line: the run's modules (compiled, if .mlir) and
    every flag the native tool understands, without the output flags."""
    prefix = shlex.split(config.getoption("subprocess_prefix"))
    args = [arg for arg in forwarded_argv(config)
            if not arg.startswith("--module") and not arg.startswith(OUTPUT_FLAGS)]
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
    report, _ = split_benchmark_json(proc.stdout)
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
    return 1 if failed or proc.returncode else 0


@hookimpl
def ireebench_backends(config):
    return [Backend("subprocess", run_in_subprocess, {REPETITION_SAMPLES},
                    "the native tool in a child process with a clean environment")]
