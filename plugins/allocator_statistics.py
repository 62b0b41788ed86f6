"""The HAL allocators' statistics: ``--print_statistics`` and ``--memory_statistics``.

``--print_statistics`` mirrors ``BenchmarkSession::Close`` of
iree-benchmark-module: per device, what ``iree_hal_allocator_statistics_fprint``
writes, on stderr at ``ireebench_sessionfinish`` (``trylast``: last, as the
native tool prints them); a backend with ``native_flags`` hands the flag on.

``--memory_statistics`` reads ``device.allocator.statistics`` when a benchmark
starts and around each repetition (a wrapper of
``ireebench_measure_repetition``, :class:`RepetitionSnapshots`, outside the
timed region): Google Benchmark's memory members and the counters
``device_bytes_peak``, ``host_bytes_peak``. An allocator keeps one peak that
cannot be reset, so a benchmark under an earlier one's peak has none (one note
says so). The members and that rule: docs/usage.md, "Metrics beyond wall time".
"""


from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ireebench import StashKey, hookimpl
from ireebench.backend import IN_PROCESS, NATIVE_FLAGS, refusal, require
from ireebench.devices import device_uris
from ireebench.errors import UsageError, flag_error
from ireebench.names import ere_escape
from ireebench.results import Counter, MemoryResult

GROUP = "Metrics: device time, memory, counters"
FLAG = "--memory_statistics"
HEAPS = ("device", "host")  # the allocator statistics' two heaps
PEAK_COUNTERS = tuple(f"{heap}_bytes_peak" for heap in HEAPS)
# The header iree_hal_allocator_statistics_fprint writes before the per-heap lines.
STATISTICS_HEADER = "[[ iree_hal_allocator_t memory statistics ]]"


@hookimpl
def ireebench_addoption(parser):
    """Adds --memory_statistics and --print_statistics (the native tool's flag)."""
    parser.addoption(
        FLAG, "memory_statistics", type=bool, group=GROUP, requires=IN_PROCESS,
        help="Report the allocators' statistics of each benchmark in its rows: Google "
             "Benchmark's max_bytes_used, total_allocated_bytes and net_heap_growth (JSON) "
             "and the counters device_bytes_peak and host_bytes_peak (the allocator "
             "statistics --print_statistics prints at exit, taken per benchmark).",
        module_run=True)
    parser.addoption(
        "--print_statistics", "print_statistics", type=bool, requires=(IN_PROCESS, NATIVE_FLAGS),
        group="Module, function and inputs (iree-benchmark-module)",
        help="Print allocator statistics per device to stderr at exit.",
        native_flag=True, whole_run=True)


@dataclass(frozen=True)
class HeapState:
    """One heap of one allocator at one moment (its cumulative statistics)."""

    peak: int
    allocated: int
    freed: int

    @property
    def held(self) -> int:
        return self.allocated - self.freed


Snapshot = list  # per device: {heap: HeapState}


def snapshot(session) -> Snapshot:
    """Every device's allocator statistics, now."""
    states = []
    for device in session.devices:
        stats = device.allocator.statistics
        states.append({heap: HeapState(int(stats.get(f"{heap}_bytes_peak", 0)),
                                       int(stats.get(f"{heap}_bytes_allocated", 0)),
                                       int(stats.get(f"{heap}_bytes_freed", 0)))
                       for heap in HEAPS})
    return states


def window_peak(start: HeapState, end: HeapState) -> int | None:
    """The most one heap held between two snapshots, where the statistics tell it.

    The allocator records its peak at each allocation: a peak that rose is
    the window's; no allocation at all means the window never held more
    than at its start; otherwise an earlier, higher peak hides it (None).
    """
    if end.peak > start.peak:
        return end.peak
    if end.allocated == start.allocated:
        return start.held
    return None


def heap_peak(start: Snapshot, end: Snapshot, heap: str) -> int | None:
    """A heap's peak over all devices (the sum of each device's), or None if one is hidden."""
    peaks = [window_peak(a[heap], b[heap]) for a, b in zip(start, end)]
    return None if any(peak is None for peak in peaks) else sum(peaks)


def _total(states: Snapshot, what: str) -> int:
    return sum(getattr(device[heap], what) for device in states for heap in HEAPS)


def memory_result(start: Snapshot, before: Snapshot, after: Snapshot) -> tuple[MemoryResult, dict]:
    """A repetition's :class:`MemoryResult` and its peak counters (those known)."""
    peaks = {f"{heap}_bytes_peak": heap_peak(start, after, heap) for heap in HEAPS}
    known = [value for value in peaks.values() if value is not None]
    result = MemoryResult(
        max_bytes_used=sum(known) if len(known) == len(peaks) else None,
        total_allocated_bytes=_total(after, "allocated") - _total(before, "allocated"),
        net_heap_growth=(_total(after, "held") - _total(before, "held")),
    )
    return result, {name: value for name, value in peaks.items() if value is not None}


@dataclass
class MemoryStatistics:
    """The state of one --memory_statistics run (``config.stash[STATE]``)."""

    starts: dict[str, Snapshot] = field(default_factory=dict)  # workload name -> at its start
    hidden: list[str] = field(default_factory=list)  # benchmarks whose peak was hidden
    allocated: bool = False  # some allocator recorded an allocation during a benchmark
    measured: int = 0  # repetitions that got memory statistics


STATE = StashKey[MemoryStatistics]()


@hookimpl
def ireebench_configure(config):
    """--memory_statistics needs the in-process runtime (its allocators are read);
    --print_statistics too, or a backend that hands it to the native tool."""
    if config.getoption("memory_statistics"):
        require(config, IN_PROCESS, "memory_statistics", "true")
        state = config.stash[STATE] = MemoryStatistics()
        config.pm.register(RepetitionSnapshots(state), name=WRAPPER_NAME)
        config.add_cleanup(functools.partial(config.pm.unregister, name=WRAPPER_NAME))
    backend = config.backend
    if config.getoption("print_statistics") and not (
            backend.has(IN_PROCESS) or backend.has(NATIVE_FLAGS)):
        raise flag_error("print_statistics", "true", refusal(config, IN_PROCESS))


@hookimpl
def ireebench_sessionstart(config, session):
    """A runtime built without allocator statistics (IREE_STATISTICS_ENABLE) has none."""
    if STATE not in config.stash:
        return
    for uri, device in zip(device_uris(config), session.devices):
        if not device.allocator.has_statistics:
            raise UsageError(f"{FLAG}: the allocator of --device={uri} keeps no statistics "
                             "(an IREE runtime built without IREE_STATISTICS_ENABLE)")


@hookimpl
def ireebench_workload_start(config, session, workload):
    """The allocators' statistics before the benchmark (cold start, warm-up, calibration)."""
    state = config.stash.get(STATE, None)
    if state is not None:
        state.starts[workload.name] = snapshot(session)


class RepetitionSnapshots:
    """The wrapper of ``ireebench_measure_repetition``: the statistics before and after
    each repetition, its row gets them.

    Registered (as the plugin :data:`WRAPPER_NAME`) only for a run with
    ``--memory_statistics``: a run without it has no wrapper of this plugin,
    so nothing of it sits around the repetitions, and a third party's
    wrapper that loses a row is blamed on it alone.
    """

    def __init__(self, state: MemoryStatistics):
        self.state = state

    @hookimpl(wrapper=True)
    def ireebench_measure_repetition(self, config, workload, repetition):
        state = self.state
        if workload.name not in state.starts:
            return (yield)
        before = snapshot(repetition.session)
        run = yield
        after = snapshot(repetition.session)
        if run is None or run.error_occurred:
            return run
        start = state.starts[workload.name]
        state.measured += 1
        run.memory, peaks = memory_result(start, before, after)
        for name, value in peaks.items():
            run.counters[name] = Counter(float(value), one_k=1024)
        if _total(after, "allocated") != _total(start, "allocated"):
            state.allocated = True
        return run


WRAPPER_NAME = "memory_statistics.repetitions"


@hookimpl(tryfirst=True)
def ireebench_workload_finish(config, workload, runs):
    """One line for a benchmark whose peak an earlier one hid."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    state.starts.pop(workload.name, None)
    measured = [r for r in runs if r.run_type == "iteration" and r.memory is not None]
    if any(r.memory.max_bytes_used is None for r in measured):
        state.hidden.append(workload.name)
        config.stderr.write(
            f"ireebench: note: {FLAG}: {workload.name}: its peak is not known: it stayed under the peak an "
            "earlier benchmark reached (an allocator keeps one peak for its lifetime); "
            f"measure it alone for its peak: --benchmark_filter='^{ere_escape(workload.name)}/'"
            "\n")
        config.stderr.flush()


@hookimpl
def ireebench_sessionfinish(config):
    """Says when no allocator recorded anything (local-task allocates from its own pools)."""
    state = config.stash.get(STATE, None)
    if state is None or state.allocated:
        return
    if not state.measured:
        return
    devices = ",".join(device_uris(config))
    config.stderr.write(
        f"ireebench: note: {FLAG}: the allocators of --device={devices} recorded no allocation during the "
        "benchmarks (allocations a device makes from its own pools, such as local-task's "
        "queue allocations, are not in the allocator statistics; --print_statistics shows "
        "the same)\n")
    config.stderr.flush()



@hookimpl(specname="ireebench_sessionfinish", trylast=True)
def print_statistics(config, session):
    """--print_statistics: the statistics of each device of the in-process session
    (``trylast``: after every other plugin's end-of-run lines, as the native tool)."""
    if not config.getoption("print_statistics") or session is None or not session.devices:
        return
    for device_id, text in session.allocator_statistics():
        config.stderr.write(f"Device: {device_id}\n{STATISTICS_HEADER}\n{text}\n")
    config.stderr.flush()


__all__ = ["PEAK_COUNTERS", "memory_result", "snapshot", "window_peak"]
