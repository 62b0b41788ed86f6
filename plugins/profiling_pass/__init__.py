"""Profiling passes: an untimed rerun of each measured workload, fed to every sink.

This plugin declares the two hooks of profiling (``ireebench_addhooks``):
``ireebench_profiling_sinks`` (who wants the rows) and
``ireebench_profiling_pass`` (how a pass runs; its built-in implementation,
``trylast``, is the native iree-benchmark-module with a HAL profiling
bundle). It asks the run's :class:`~.engine.ProfilingEngine` to profile each
workload right after it is measured (``ireebench_workload_finish``), so
every sink (``--dispatch_statistics`` is one, third parties add theirs) is
fed; the engine runs a pass only when a sink is active and the backend can
rerun its workloads (the ``profiling_passes`` capability).

A pass runs the native tool with the modules, devices, function, inputs and
batch flags of the measurement, the measured iteration count (``Nx``, no
calibration, no warm-up) and repetitions, and
``--device_profiling_mode=MODE --device_profiling_output=BUNDLE``; the
bundle is read with ``iree-profile statistics --format=jsonl``.
"""

from __future__ import annotations

from pathlib import Path

from ireebench import hookimpl, hookspec, native
from ireebench.errors import UsageError
from ireebench.native import BENCHMARK_TOOL
from ireebench.profiling import ProfilePass, ProfileResult, read_statistics

from .engine import ProfilingEngine, engine


class ProfilingHooks:
    """Declared through ``ireebench_addhooks``: only this plugin calls them."""

    @staticmethod
    @hookspec
    def ireebench_profiling_sinks(config):
        """Return profiling sinks that receive the rows of profiling passes.

        Called once per run by this plugin, when discovery finishes (so that a workload a
        profiling pass could not rerun is refused before anything is measured).
        Several sinks can be active at once; a profiling pass runs for each
        measured workload only when at least one sink is returned.

        :param config: the run's :class:`Config`.
        :return: a list of :class:`ireebench.ProfilingSink` (``begin_pass``,
            ``receive_rows``, ``end_pass``, ``close``, ``modes``), or ``None``.
        """

    @staticmethod
    @hookspec(firstresult=True)
    def ireebench_profiling_pass(config, workload, runs, profile_pass):
        """Run the untimed profiling pass of one workload.

        Called once per measured workload when at least one profiling sink is
        active (for example ``--dispatch_statistics``), after its runs are
        measured and before they are reported. The first non-``None`` result
        wins; the built-in implementation (``trylast``) runs the native
        ``iree-benchmark-module`` with ``--device_profiling_mode`` and
        ``--device_profiling_output=profile_pass.bundle_path`` and reads the
        bundle with ``iree-profile statistics``.

        Plugins that only want to observe or instrument the pass implement it
        as a wrapper (``@hookimpl(wrapper=True)``: begin before ``yield``, end
        after it), for example to start and stop an external profiler; before
        yielding they may add variables to ``profile_pass.env`` or a command
        to ``profile_pass.command_prefix`` for the profiled native process.

        :param config: the run's :class:`Config`.
        :param workload: the measured :class:`Workload`.
        :param runs: its measured runs.
        :param profile_pass: the :class:`ireebench.profiling.ProfilePass` (mode,
            iterations, repetitions, bundle path, env, command prefix).
        :return: a :class:`ireebench.profiling.ProfileResult`, or ``None``.
        """


@hookimpl
def ireebench_addhooks(pluginmanager):
    """Declares ``ireebench_profiling_sinks`` and ``ireebench_profiling_pass``."""
    pluginmanager.add_hookspecs(ProfilingHooks)


@hookimpl
def ireebench_discovery_finish(config, workloads):
    """With a sink active, refuses before measuring what a native pass cannot rerun."""
    if workloads and engine(config).sinks and not config.getoption("benchmark_list_tests"):
        native.check_native(config, workloads, "the profiling pass")


@hookimpl
def ireebench_workload_finish(config, workload, runs):
    """Profiles the measured workload when a sink wants it."""
    engine(config).profile(workload, runs, config)


@hookimpl(trylast=True)
def ireebench_profiling_pass(config, workload, runs, profile_pass):
    """The default pass: the native iree-benchmark-module with a HAL profiling bundle."""
    return run_native_pass(config, profile_pass)


def _profiled_iterations(stdout: str) -> tuple[int, str]:
    """Logical iterations the native JSON report measured, and its first error."""
    report, _ = native.split_benchmark_json(stdout)
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
        *native.session_args(config, user_pass_flags=False),
        *native.selection_args(config, [profile_pass.workload]),
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
        proc = native.run_tool(BENCHMARK_TOOL, pass_args(config, profile_pass),
                               env=profile_pass.env, command_prefix=profile_pass.command_prefix)
    except UsageError as exc:  # the command prefix (a profiler) cannot start
        result.error = str(exc)
        return result
    if proc.returncode != 0:
        result.error = native.native_error_line(proc.stderr, proc.returncode)
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


__all__ = ["ProfilingEngine", "engine", "pass_args", "run_native_pass"]
