"""``--dispatch_statistics``: a row per dispatch function under each benchmark.

Like iree-benchmark-module's flag: after a benchmark's repetitions are
measured, an untimed profiling pass reruns it (the native tool with a HAL
profiling bundle, see :mod:`ireebench.profiling`) and the time spent in each
dispatch function per iteration becomes a row ``BM_<fn>/<dispatch function>``
right after the benchmark's rows, sorted by time: real_time = device time per
iteration, cpu_time = tile (worker) time per iteration, counters ``calls``
(per iteration) and ``percent`` (of all dispatch time), iterations = the
logical iterations of the profiling pass (all repetitions).

The rows come from this plugin's profiling sink, so they are built exactly
like a third party's sink would see the pass (the pass itself runs from
``ireebench_workload_finish`` of the ``profiling_pass`` plugin, which this
one needs). ``--profile_output`` keeps the pass's raw ``.ireeprof`` bundle.

Hooks, in the order they run: ``ireebench_configure`` (conflicting flags),
``ireebench_discovery_finish`` (the profiling session can start; the dispatch
names are learned with a one-iteration probe, so the console's name column
fits them, as natively), ``ireebench_report_row_names`` (those names),
``ireebench_profiling_sinks`` (the sink), ``ireebench_report_extra_rows``
(the rows), ``ireebench_measurements_finish`` (a failed pass fails the run),
``ireebench_sessionfinish`` (the native tool's warning for incomplete rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ireebench import StashKey, hookimpl, native
from ireebench.backend import PROFILING_PASSES, require
from ireebench.errors import UsageError
from ireebench.lib.profiling_pass import engine, run_native_pass
from ireebench.names import row_name
from ireebench.outfiles import register_output
from ireebench.points import is_sweep
from ireebench.profiling import ProfilePass, ProfileResult, ProfilingSink
from ireebench.results import Counter, Run

GROUP = "Dispatch statistics and profiling"

# Flags that start their own profiling or capture session (as in the native tool).
CONFLICTING_FLAGS = ("device_profiling_mode", "print_device_statistics",
                     "device_capture_tool", "device_replay_output")


@hookimpl
def ireebench_addoption(parser):
    """Adds --dispatch_statistics and --profile_output."""
    parser.addoption(
        "--dispatch_statistics", "dispatch_statistics", type=bool, group=GROUP,
        requires=PROFILING_PASSES,
        help="Add a row per dispatch function under each benchmark with the time spent in "
             "it per iteration, from a separate untimed profiling pass (the native "
             "iree-benchmark-module with a HAL profiling bundle). Cannot combine with "
             "--device_profiling_mode, --print_device_statistics, --device_capture_tool or "
             "--device_replay_output.", module_run=True)
    parser.addoption(
        "--profile_output", "profile_output", default="", group=GROUP, metavar="FILE.ireeprof",
        requires=PROFILING_PASSES,
        help="Keep the HAL profiling bundle of the --dispatch_statistics pass (for "
             "iree-profile); with several benchmarks, FILE.BM_<fn>.ireeprof each.", module_run=True)


def _flag_text(name: str, value) -> str:
    if value is True:
        return f"--{name}"
    if isinstance(value, (list, tuple)):
        value = value[0]
    return f"--{name}={value}"


@hookimpl
def ireebench_configure(config):
    """Rejects conflicting flags before anything runs; sets up the run's statistics."""
    output = config.getoption("profile_output")
    if not config.getoption("dispatch_statistics"):
        if output:
            raise UsageError(f"--profile_output={output}: requires --dispatch_statistics")
        return
    # The pass reruns each measured workload: the backend must have workloads to rerun.
    require(config, PROFILING_PASSES, "dispatch_statistics", "true")
    if config.pm.get_plugin("profiling_pass") is None:
        raise UsageError("--dispatch_statistics needs the profiling_pass plugin "
                         "(blocked with -p no:profiling_pass)")
    for name in CONFLICTING_FLAGS:
        value = native.flag_value(config, name)
        if value is not None:
            # The native tool's words (BenchmarkSession::Open), after the flag given.
            what = ("--device_replay_output" if name == "device_replay_output"
                    else "device profiling or capture flags")
            raise UsageError(f"{_flag_text(name, value)}: --dispatch_statistics cannot be "
                             f"combined with {what}")
    register_output(config, "profile_output", output)
    config.stash[STATE] = DispatchStatistics(config)


@dataclass
class DispatchTotals:
    """Profiled time of one dispatch function, summed over all profiled iterations."""

    calls: int = 0
    duration_ns: int = 0
    tile_duration_ns: int = 0  # worker time over all tiles; 0 where not reported


@dataclass
class DispatchProfile:
    """Per-dispatch totals of one workload, over all its profiled repetitions."""

    rows: dict[str, DispatchTotals] = field(default_factory=dict)
    iterations: int = 0
    dropped_records: int = 0
    unscaled_rows: int = 0

    def add(self, result: ProfileResult) -> None:
        """Adds the function rows of a successful pass (the native tool's CollectRow)."""
        self.iterations += result.iterations
        self.dropped_records += result.summary.dropped_record_count
        for row in result.function_rows:
            if row.total_duration_ns is None:
                self.unscaled_rows += 1
                continue
            totals = self.rows.setdefault(row.key, DispatchTotals())
            totals.calls += row.sample_count
            totals.duration_ns += row.total_duration_ns
            totals.tile_duration_ns += row.tile_duration_sum_ns or 0

    @property
    def incomplete(self) -> bool:
        return bool(self.iterations) and (
            not self.rows or bool(self.dropped_records) or bool(self.unscaled_rows))

    def warning(self, benchmark: str) -> str:
        """The native tool's warning line for missing or incomplete rows."""
        return (f"--dispatch_statistics: {benchmark}: {len(self.rows)} functions, "
                f"{self.dropped_records} dropped records, {self.unscaled_rows} unscaled rows; "
                "timings may be incomplete")


def dispatch_rows(workload, base: Run, profile: DispatchProfile) -> list[Run]:
    """The rows ``BM_<fn>/<dispatch>`` of a profile, as the native DispatchReporter builds them."""
    if not profile.iterations:
        return []
    # Ties keep name order, like the native tool's stable sort of a name-keyed map.
    ordered = sorted(sorted(profile.rows.items()), key=lambda item: -item[1].duration_ns)
    total = sum(totals.duration_ns for _, totals in ordered)
    rows = []
    for dispatch, totals in ordered:
        name = row_name(workload.name, dispatch)
        rows.append(Run(
            name=name,
            run_name=name,
            function=base.function,
            iterations=profile.iterations,
            real_accumulated_time=totals.duration_ns * 1e-9,
            cpu_accumulated_time=totals.tile_duration_ns * 1e-9,
            time_unit=workload.time_unit,
            family_index=base.family_index,
            per_family_instance_index=base.per_family_instance_index,
            repetitions=1,
            repetition_index=0,
            counters={
                "calls": Counter(totals.calls / profile.iterations),
                "percent": Counter(100.0 * totals.duration_ns / total if total else 0.0),
            },
            extra_row=True,
        ))
    return rows


class DispatchStatisticsSink(ProfilingSink):
    """Collects each workload's dispatch totals; keeps the bundle for --profile_output."""

    def __init__(self, profile_output: str = ""):
        self.profile_output = profile_output
        self.several_benchmarks = False  # set once the benchmarks are known
        self.profiles: dict[str, DispatchProfile] = {}
        self.errors: dict[str, str] = {}

    def end_pass(self, profile_pass: ProfilePass, result: ProfileResult) -> None:
        name = profile_pass.workload.name
        if not result.ok:
            self.errors[name] = result.error
            return
        self.profiles.setdefault(name, DispatchProfile()).add(result)
        if self.profile_output:
            profile_pass.keep_bundle(self.bundle_destination(name))

    def bundle_destination(self, benchmark: str) -> Path:
        path = Path(self.profile_output)
        if not self.several_benchmarks:
            return path
        # A sweep point's name has slashes (BM_f/bs:4): one file name all the same.
        safe = benchmark.replace("/", "_")
        return path.with_name(f"{path.stem}.{safe}{path.suffix or '.ireeprof'}")


class DispatchStatistics:
    """The state of one --dispatch_statistics run (``config.stash[STATE]``)."""

    def __init__(self, config):
        self.sink = DispatchStatisticsSink(config.getoption("profile_output"))
        self.row_names: list[str] = []  # BM_<fn>/<dispatch>, probed before measuring


STATE = StashKey[DispatchStatistics]()


def _probe_session(config, session) -> None:
    """Rejects what the native tool rejects (no HAL devices, no profiling), before measuring."""
    _, error = native.list_benchmarks([*native.session_args(config), "--dispatch_statistics=true"])
    if not error:
        return
    detail = error.split("; ", 1)[-1]
    if "requires a module that uses HAL devices" in detail:
        raise UsageError(f"--dispatch_statistics: --module={session.module_path} uses no "
                         "HAL devices (nothing to profile); --dispatch_statistics requires a "
                         "module that uses HAL devices")
    raise UsageError(f"--dispatch_statistics: the native profiling session cannot "
                     f"start: {detail}")


def _probe_dispatch_names(config, workload) -> list[str]:
    """The dispatch functions of ``workload``, from a one-iteration profiling pass."""
    mode = engine(config).mode()
    with native.private_tempdir("ireebench-probe-") as scratch:
        probe = ProfilePass(workload, mode, iterations=workload.batch_size, repetitions=1,
                            bundle_path=scratch / "probe.ireeprof")
        result = run_native_pass(config, probe)
    if not result.ok:
        raise UsageError(f"--dispatch_statistics: the profiling pass of {workload.name} "
                         f"failed (--device_profiling_mode={mode}): {result.error}")
    return sorted({row.key for row in result.function_rows})


@hookimpl
def ireebench_discovery_finish(config, session, workloads):
    """Probes the profiling session and learns each workload's dispatch names."""
    state = config.stash.get(STATE, None)
    if state is None or not workloads or config.getoption("benchmark_list_tests"):
        return
    native.check_native(config, workloads, "--dispatch_statistics")
    _probe_session(config, session)
    # A sweep's points each discover their own: several benchmarks too.
    state.sink.several_benchmarks = len(workloads) > 1 or is_sweep(config)
    state.row_names = [row_name(workload.name, key) for workload in workloads
                       for key in _probe_dispatch_names(config, workload)]


@hookimpl
def ireebench_report_row_names(config, run_names):
    """The dispatch rows' names, so the console's column fits them, like the native tool."""
    state = config.stash.get(STATE, None)
    return state.row_names if state is not None else None


# Optional: the hook is the profiling_pass plugin's, which -p no:profiling_pass
# blocks (the run then refuses --dispatch_statistics at configure).
@hookimpl(optionalhook=True)
def ireebench_profiling_sinks(config):
    """The sink that collects the dispatch totals."""
    state = config.stash.get(STATE, None)
    return [state.sink] if state is not None else None


@hookimpl
def ireebench_report_extra_rows(config, workload, runs):
    """The dispatch rows of a measured workload, from its profiling pass."""
    state = config.stash.get(STATE, None)
    if state is None:
        return None
    profile = state.sink.profiles.get(workload.name)
    measured = [r for r in runs if not r.extra_row]
    if profile is None or not measured:
        return None  # not profiled: failed benchmark, or nothing measured
    return dispatch_rows(workload, measured[-1], profile)


@hookimpl
def ireebench_measurements_finish(config, workloads):
    """A failed profiling pass fails the run, like the native tool's status."""
    state = config.stash.get(STATE, None)
    if state is None:
        return None
    for benchmark, error in state.sink.errors.items():
        config.stderr.write(f"--dispatch_statistics: {benchmark}: profiling pass failed: "
                            f"{error}\n")
    return 1 if state.sink.errors else None


@hookimpl
def ireebench_sessionfinish(config, session, exitstatus):
    """The native tool's warning for missing or incomplete rows."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    for benchmark, profile in state.sink.profiles.items():
        if profile.incomplete:
            config.stderr.write(profile.warning(benchmark) + "\n")
