"""The profiling pass: runs it for every measured workload that a sink wants profiled.

The pass itself is the native ``iree-benchmark-module`` writing a HAL
profiling bundle (see :mod:`ireebench.profiling`); this plugin provides it
as the last-resort implementation of ``ireebench_profiling_pass`` and
triggers it, through the run's :class:`~ireebench.profiling.ProfilingEngine`,
right after each workload is measured, so third-party sinks are fed even
when no built-in feature asked for profiling.
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.profiling import engine, run_native_pass


class ProfilingPassHooks:
    """Per-run hooks (registered at configure time, so they know the config)."""

    def __init__(self, config):
        self.config = config

    @hookimpl(tryfirst=True)
    def ireebench_report_extra_rows(self, workload, runs):
        """Profiles the workload before other plugins build rows from the pass."""
        engine(self.config).profile(workload, runs)

    @hookimpl
    def ireebench_sessionfinish(self, session, exitstatus):
        """Tells the sinks the run is over."""
        engine(self.config).close()


@hookimpl
def ireebench_configure(config):
    """Registers the per-run hooks of the profiling pass."""
    config.pm.register(ProfilingPassHooks(config), name="profiling_pass.run")


@hookimpl(trylast=True)
def ireebench_profiling_pass(config, workload, runs, profile_pass):
    """The default pass: the native iree-benchmark-module with a HAL profiling bundle."""
    return run_native_pass(config, profile_pass)
