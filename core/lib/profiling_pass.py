"""A library for profiling passes: the per-run engine that runs one untimed pass per
measured workload and feeds every sink, and the default pass (the native tool).

One engine per run, kept in ``config.stash`` (:func:`engine`) and closed
when the run ends (its sinks' ``close``). The ``profiling_pass`` plugin
asks it to profile each workload from ``ireebench_workload_finish``
(``device_time`` too, first); passes run only when at least one sink is active,
and at most once per workload. Sinks are the one way to receive a pass's rows.
:data:`DEVICE_TIME_ERRORS` is the stash key through which the ``device_time``
plugin says which benchmarks it could not time (``ireebench rank`` reads it).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ireebench import native
from ireebench.devices import device_uris
from ireebench.errors import PluginError, UsageError
from ireebench.hookcall import call_hook, guarded
from ireebench.lib.gbench_json import split_benchmark_json
from ireebench.native import BENCHMARK_TOOL
from ireebench.profiling import (
    ProfilePass,
    ProfileResult,
    merge_modes,
    profiling_mode,
    read_statistics,
)
from ireebench.stash import StashKey

ENGINE = StashKey["ProfilingEngine"]()
# Filled by the device_time plugin when its flag is on: benchmark name -> why its
# device time was not measured (the pass failed, or its bundle could not be read).
DEVICE_TIME_ERRORS = StashKey[dict]()


class ProfilingEngine:
    """Runs the profiling pass of each workload once and feeds every sink."""

    def __init__(self, config):
        self.config = config
        self._sinks: list | None = None
        self.results: dict[str, ProfileResult | None] = {}

    @property
    def sinks(self) -> list:
        """The sinks of every plugin (``ireebench_profiling_sinks``), asked once."""
        if self._sinks is None:
            self._sinks = []
            for provided in call_hook(self.config.pm, "ireebench_profiling_sinks",
                                      config=self.config):
                if provided is None:
                    continue
                self._sinks.extend(provided if isinstance(provided, (list, tuple)) else [provided])
        return self._sinks

    def mode(self, config=None) -> str:
        """The pass mode: the devices' per-function families plus every sink's ``modes``."""
        return merge_modes(profiling_mode(device_uris(config or self.config)),
                           *(",".join(getattr(s, "modes", ()) or ()) for s in self.sinks))

    def profile(self, workload, runs, config=None) -> ProfileResult | None:
        """The pass result of ``workload``, running the pass on first request.

        ``config``: the configuration that measured it (a sweep's point; the
        run's by default). Returns ``None`` when no sink is active or the
        workload was not measured (a failed benchmark is not profiled, like
        the native tool's skipped profiling pass).
        """
        config = config or self.config
        if workload.name in self.results:
            return self.results[workload.name]
        measured = [r for r in runs if r.run_type == "iteration" and not r.extra_row]
        if not self.sinks or not measured or any(r.error_occurred for r in runs):
            self.results[workload.name] = None
            return None
        with native.private_tempdir("ireebench-profile-") as scratch:
            profile_pass = ProfilePass(
                workload=workload,
                mode=self.mode(config),
                iterations=max(r.iterations for r in measured),
                repetitions=len(measured),
                bundle_path=scratch / f"{workload.name.replace('/', '_')}.ireeprof",
            )
            result = self._run(config, workload, runs, profile_pass)
        self.results[workload.name] = result
        return result

    def _run(self, config, workload, runs, profile_pass: ProfilePass) -> ProfileResult:
        try:
            self._notify("begin_pass", profile_pass)
            result = self._pass_and_rows(config, workload, runs, profile_pass)
        except BaseException as exc:
            # Sinks still learn that the pass ended (e.g. to stop a profiler).
            failed = ProfileResult(workload, None, profile_pass.mode,
                                   error=str(exc) or type(exc).__name__)
            with contextlib.suppress(Exception):
                self._notify("end_pass", profile_pass, failed)
            raise
        self._notify("end_pass", profile_pass, result)
        return result

    def _pass_and_rows(self, config, workload, runs, profile_pass: ProfilePass) -> ProfileResult:
        """Runs the pass hook, then hands the rows to the sinks."""
        result = call_hook(config.pm, "ireebench_profiling_pass", config=config,
                           workload=workload, runs=runs, profile_pass=profile_pass)
        if result is None:
            return ProfileResult(workload, None, profile_pass.mode,
                                 error="no plugin implements ireebench_profiling_pass")
        if result.ok:
            self._notify("receive_rows", profile_pass, result.rows)
        return result

    def close(self) -> None:
        """Tells every sink the run is over."""
        sinks, self._sinks = self._sinks or [], []
        self._notify("close", sinks=sinks)

    def _notify(self, method: str, *args, sinks=None) -> None:
        """Calls an optional method of every sink, even after one failed.

        The first failure is raised afterwards: a sink's bug is a
        PluginError naming the sink's plugin and class, not a traceback.
        """
        first_error = None
        for sink in self.sinks if sinks is None else sinks:
            function = getattr(sink, method, None)
            if function is None:
                continue
            try:
                guarded(self.config.pm, f"profiling sink {type(sink).__name__}.{method}",
                        function, *args)
            except (UsageError, PluginError) as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error


def engine(config) -> ProfilingEngine:
    """The profiling engine of this run (created on first use, closed when the run ends)."""
    found = config.stash.get(ENGINE, None)
    if found is None:
        found = config.stash[ENGINE] = ProfilingEngine(config)
        config.add_cleanup(found.close)
    return found


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
    run (the device_profiling plugin), not to this pass.
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


__all__ = ["DEVICE_TIME_ERRORS", "ProfilingEngine", "engine", "pass_args", "run_native_pass"]
