"""Profiling passes: an untimed rerun of each measured workload, fed to every sink.

This plugin declares the two hooks of profiling (``ireebench_addhooks``):
``ireebench_profiling_sinks`` (who wants the rows) and
``ireebench_profiling_pass`` (how a pass runs; its built-in implementation,
``trylast``, is the native iree-benchmark-module with a HAL profiling
bundle). It asks the run's profiling engine
(:class:`ireebench.lib.profiling_pass.ProfilingEngine`) to profile each
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

from ireebench import hookimpl, hookspec, native
from ireebench.lib.profiling_pass import engine, run_native_pass


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
