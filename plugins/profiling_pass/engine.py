"""The profiling engine: one pass per measured workload, fed to every sink.

One engine per run, kept in ``config.stash`` (:func:`engine`) and closed
when the run ends (its sinks' ``close``). The ``profiling_pass`` plugin
asks it to profile each workload from ``ireebench_workload_finish``; passes
run only when at least one sink is active, and at most once per workload.
Sinks are the one way to receive a pass's rows.
"""

from __future__ import annotations

import contextlib

from ireebench import native
from ireebench.devices import device_uris
from ireebench.errors import PluginError, UsageError
from ireebench.hookcall import call_hook, guarded
from ireebench.profiling import ProfilePass, ProfileResult, merge_modes, profiling_mode
from ireebench.stash import StashKey

ENGINE = StashKey["ProfilingEngine"]()


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

