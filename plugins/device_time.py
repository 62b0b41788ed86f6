"""``--device_time``: how long the device was busy per iteration, next to real and CPU time.

The device's busy time is the union of the execution intervals of everything
it ran for the benchmark (``real_time - device_time`` is the host's
overhead), from the untimed profiling pass of ``--dispatch_statistics``
(:mod:`ireebench.plugins.profiling_pass`), read by this plugin's profiling
sink (:mod:`ireebench.profiling.timeline`). Each repetition row gets its
pass repetition's device time (or the pass's average), the aggregates the
same statistics as of the real time; reporters show the column only when
measured. A probe at ``ireebench_discovery_finish`` fails a device that
cannot profile before anything is measured. The events and columns:
docs/profiling.md, "``--device_time``".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ireebench import StashKey, hookimpl, native
from ireebench.backend import PROFILING_PASSES, require
from ireebench.errors import UsageError
from ireebench.lib.profiling_pass import DEVICE_TIME_ERRORS, engine
from ireebench.profiling import (
    ProfilePass,
    ProfileResult,
    ProfilingSink,
    busy_ns,
    read_timeline,
    split_repetitions,
)
from ireebench.stats import EXTRA_STATISTICS, STATISTICS, aggregate_device_time

GROUP = "Metrics: device time, memory, counters"
FLAG = "--device_time"


@hookimpl
def ireebench_addoption(parser):
    """Adds --device_time."""
    parser.addoption(
        FLAG, "device_time", type=bool, group=GROUP, requires=PROFILING_PASSES,
        help="Report the device's busy time per iteration (the union of the execution "
             "intervals of its queue operations and dispatches) as device_time next to "
             "real_time and cpu_time, from a separate untimed profiling pass (the native "
             "iree-benchmark-module with a HAL profiling bundle). real_time - device_time "
             "is the host's overhead.", module_run=True)


@dataclass
class DeviceTime:
    """The busy time of one workload's profiling pass."""

    iterations: int  # logical iterations the pass ran, all repetitions
    busy_ns: int  # over all of them
    # Busy nanoseconds of each repetition of the pass; empty when its events
    # did not split into one group per repetition.
    repetition_busy_ns: list[int] = field(default_factory=list)
    events: int = 0
    unscaled: int = 0  # device events without a time in nanoseconds (left out)

    def seconds_per_iteration(self, repetitions: int) -> list[float]:
        """One value per repetition: its own when known, else the pass's average."""
        if not self.iterations:
            return [0.0] * repetitions
        if len(self.repetition_busy_ns) == repetitions:
            per_repetition = self.iterations / repetitions
            return [busy * 1e-9 / per_repetition for busy in self.repetition_busy_ns]
        return [self.busy_ns * 1e-9 / self.iterations] * repetitions


class DeviceTimeSink(ProfilingSink):
    """Reads each pass's execution events and keeps its busy time."""

    def __init__(self):
        self.results: dict[str, DeviceTime] = {}
        self.errors: dict[str, str] = {}

    def end_pass(self, profile_pass: ProfilePass, result: ProfileResult) -> None:
        name = profile_pass.workload.name
        if not result.ok:
            self.errors[name] = result.error
            return
        try:
            # The bundle lives in the pass's private directory until end_pass returns.
            timeline = read_timeline(profile_pass.bundle_path, profile_pass.bundle_path.parent)
        except UsageError as exc:
            self.errors[name] = str(exc)
            return
        groups = split_repetitions(timeline.events, profile_pass.repetitions) or []
        self.results[name] = DeviceTime(
            iterations=result.iterations,
            busy_ns=busy_ns(timeline.events),
            repetition_busy_ns=[busy_ns(group) for group in groups],
            events=len(timeline.events),
            unscaled=timeline.unscaled,
        )


STATE = StashKey[DeviceTimeSink]()


@hookimpl
def ireebench_configure(config):
    """Needs a backend whose workloads a profiling pass can rerun."""
    if not config.getoption("device_time"):
        return
    require(config, PROFILING_PASSES, "device_time", "true")
    if config.pm.get_plugin("profiling_pass") is None:
        raise UsageError(f"{FLAG} needs the profiling_pass plugin "
                         "(blocked with -p no:profiling_pass)")
    config.stash[STATE] = sink = DeviceTimeSink()
    config.stash[DEVICE_TIME_ERRORS] = sink.errors


@hookimpl(optionalhook=True)  # declared by profiling_pass, which may be blocked
def ireebench_profiling_sinks(config):
    """The sink that measures the busy time."""
    sink = config.stash.get(STATE, None)
    return [sink] if sink is not None else None


@hookimpl
def ireebench_discovery_finish(config, workloads):
    """Starts the pass's profiling session once: a device that cannot profile fails now."""
    if STATE not in config.stash or not workloads or config.getoption("benchmark_list_tests"):
        return
    native.check_native(config, workloads, FLAG)
    mode = engine(config).mode()
    with native.private_tempdir("ireebench-probe-") as scratch:
        bundle = scratch / "probe.ireeprof"
        _, error = native.list_benchmarks([*native.session_args(config, user_pass_flags=False),
                                           f"--device_profiling_mode={mode}",
                                           f"--device_profiling_output={bundle}"])
    if error:
        raise UsageError(f"{FLAG}: the native profiling session cannot start "
                         f"(--device_profiling_mode={mode}): {error.split('; ', 1)[-1]}")


def measured_repetitions(runs) -> list:
    """The repetition rows of a benchmark (not its aggregates, not extra rows)."""
    return [run for run in runs if run.run_type == "iteration" and not run.extra_row]


@hookimpl
def ireebench_workload_finish(config, workload, runs):
    """Profiles the workload (once, shared with every sink) and sets the rows' device time."""
    sink = config.stash.get(STATE, None)
    if sink is None:
        return
    engine(config).profile(workload, runs, config)  # a no-op when the pass already ran
    measured = sink.results.get(workload.name)
    repetitions = measured_repetitions(runs)
    if measured is None or not repetitions or any(r.error_occurred for r in repetitions):
        return
    for run, seconds in zip(repetitions, measured.seconds_per_iteration(len(repetitions))):
        run.device_accumulated_time = seconds * run.iterations
    statistics = STATISTICS + list(config.stash.get(EXTRA_STATISTICS, []))
    aggregate_device_time(runs, [r for r in runs if r.run_type == "aggregate"], statistics)


@hookimpl
def ireebench_measurements_finish(config, workloads):
    """A failed pass fails the run (its benchmark's rows have no device time)."""
    sink = config.stash.get(STATE, None)
    if sink is None:
        return None
    for benchmark, error in sink.errors.items():
        config.stderr.write(f"{FLAG}: {benchmark}: profiling pass failed: {error}\n")
    return 1 if sink.errors else None


@hookimpl
def ireebench_sessionfinish(config):
    """Says when device events had no time in nanoseconds (their intervals are missing)."""
    sink = config.stash.get(STATE, None)
    if sink is None:
        return
    for benchmark, measured in sink.results.items():
        if measured.unscaled:
            config.stderr.write(
                f"{FLAG}: {benchmark}: {measured.unscaled} of "
                f"{measured.unscaled + measured.events} device events have no time in "
                "nanoseconds (no clock correlation); the device time leaves them out\n")
