"""The profiling pass: the native iree-benchmark-module with a HAL profiling bundle.

This plugin provides the built-in implementation of
``ireebench_profiling_pass`` (``trylast``, so a plugin can supply another)
and asks the run's :class:`~ireebench.profiling.ProfilingEngine` to profile
each workload right after it is measured (``ireebench_workload_finish``), so
every sink (``--dispatch_statistics`` is one, third parties add theirs) is
fed. The engine runs a pass only when a sink is active.

A pass runs the native tool with the modules, devices, function, inputs and
batch flags of the measurement, the measured iteration count (``Nx``, no
calibration, no warm-up) and repetitions, and
``--device_profiling_mode=MODE --device_profiling_output=BUNDLE``; the
bundle is read with ``iree-profile statistics --format=jsonl``.
"""

from __future__ import annotations

from pathlib import Path

from ireebench import hookimpl
from ireebench.errors import UsageError
from ireebench.native.flags import check_native, selection_args, session_args
from ireebench.native.gbench_json import split_benchmark_json
from ireebench.native.tools import BENCHMARK_TOOL, native_error_line, run_tool
from ireebench.profiling import ProfilePass, ProfileResult, engine, read_statistics


@hookimpl
def ireebench_discovery_finish(config, workloads):
    """With a sink active, refuses before measuring what a native pass cannot rerun."""
    if workloads and engine(config).sinks and not config.getoption("benchmark_list_tests"):
        check_native(config, workloads, "the profiling pass")


@hookimpl
def ireebench_workload_finish(config, workload, runs):
    """Profiles the measured workload when a sink wants it."""
    engine(config).profile(workload, runs)


@hookimpl(trylast=True)
def ireebench_profiling_pass(config, workload, runs, profile_pass):
    """The default pass: the native iree-benchmark-module with a HAL profiling bundle."""
    return run_native_pass(config, profile_pass)


def _profiled_iterations(stdout: str) -> tuple[int, str]:
    """Logical iterations the native JSON report measured, and its first error."""
    report, _ = split_benchmark_json(stdout)
    if report is None:
        return 0, "the native tool printed no JSON report"
    iterations = 0
    for entry in report["benchmarks"]:
        if entry.get("error_occurred"):
            return 0, str(entry.get("error_message", "benchmark failed"))
        if entry.get("run_type", "iteration") == "iteration":
            iterations += int(entry.get("iterations", 0))
    return iterations, ""


def pass_args(config, profile_pass: ProfilePass) -> list[str]:
    """iree-benchmark-module flags of a profiling pass of one workload.

    The user's own profiling and capture flags belong to their own native
    run (see ireebench.plugins.device_profiling), not to this pass.
    """
    return [
        *session_args(config, user_pass_flags=False),
        *selection_args(config, [profile_pass.workload]),
        f"--benchmark_min_time={profile_pass.iterations}x",
        f"--benchmark_repetitions={profile_pass.repetitions}",
        "--benchmark_format=json",
        f"--device_profiling_mode={profile_pass.mode}",
        f"--device_profiling_output={profile_pass.bundle_path}",
    ]


def run_native_pass(config, profile_pass: ProfilePass) -> ProfileResult:
    """Runs the pass with the native tool and reads its bundle.

    The native tool runs exactly ``iterations`` x ``repetitions`` logical
    iterations (no calibration, no warm-up), all inside the profiling
    session, so the bundle's totals divided by the reported iterations are
    per-iteration figures.
    """
    workload = profile_pass.workload
    result = ProfileResult(workload, profile_pass.bundle_path, profile_pass.mode)
    try:
        proc = run_tool(BENCHMARK_TOOL, pass_args(config, profile_pass), env=profile_pass.env,
                        command_prefix=profile_pass.command_prefix)
    except UsageError as exc:  # the command prefix (a profiler) cannot start
        result.error = str(exc)
        return result
    if proc.returncode != 0:
        result.error = native_error_line(proc.stderr, proc.returncode)
        return result
    result.iterations, result.error = _profiled_iterations(proc.stdout)
    if result.error:
        return result
    if not Path(profile_pass.bundle_path).is_file():
        # The native tool profiles only the devices the program's context
        # uses; a module without HAL devices writes no bundle.
        result.error = "no profiling bundle was written (does the module use HAL devices?)"
        return result
    try:
        result.summary, result.rows = read_statistics(profile_pass.bundle_path)
    except UsageError as exc:
        result.error = str(exc)
    return result
