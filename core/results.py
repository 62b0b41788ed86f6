"""The result model: Google Benchmark's ``Run`` with numbers, not strings.

Times are kept as accumulated seconds over ``iterations`` like Google
Benchmark does; ``real_time``/``cpu_time`` give the per-iteration value in
``time_unit``. The raw per-repetition values stay on the runs (``samples``),
so later statistics (percentiles, confidence intervals) are computed from data.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

TIME_UNIT_MULTIPLIER = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}

# Google Benchmark's memory members of a JSON run (MemoryManager::Result).
MEMORY_KEYS = ("allocs_per_iter", "max_bytes_used", "total_allocated_bytes", "net_heap_growth")
# Keys of a Google Benchmark JSON run that are not user counters (with
# ireebench's device_time and params).
RUN_KEYS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
    "time_unit", "aggregate_name", "aggregate_unit", "error_occurred", "error_message",
    "label", "skipped", "skip_message", "big_o", "rms", "complexity_n",
    "device_time", "params", *MEMORY_KEYS,
})


# The fields Run.copy copies itself (the others that are containers: deep copies).
_COPIED = frozenset({"counters", "samples", "batch_samples"})


@dataclass
class Counter:
    """A user counter of a row (Google Benchmark's ``Counter``).

    :ivar value: the number; for a rate (``is_rate``), already per second.
    :ivar is_rate: printed with a ``/s`` suffix on the console
        (``items_per_second=1.2k/s``).
    :ivar one_k: 1000 or 1024: the base of the console's k/M/G prefixes.
    """

    value: float
    is_rate: bool = False
    one_k: int = 1000


@dataclass
class MemoryResult:
    """What the run's allocators saw during one repetition (Google Benchmark's
    ``MemoryManager::Result``, as its JSON writes it).

    A field is ``None`` where it is not known; the JSON leaves it out
    (Google Benchmark's ``TombstoneValue``).

    :ivar max_bytes_used: the peak of the bytes the devices' allocators held
        (device + host heaps) from the start of the benchmark to the end of
        this repetition; ``None`` when an earlier benchmark's peak hid it.
    :ivar total_allocated_bytes: bytes allocated during the repetition's
        iterations.
    :ivar net_heap_growth: bytes held after the repetition minus bytes held
        before it.
    :ivar allocs_per_iter: allocations per iteration (the allocator
        statistics do not count allocations: ``None``).
    """

    max_bytes_used: int | None = None
    total_allocated_bytes: int | None = None
    net_heap_growth: int | None = None
    allocs_per_iter: float | None = None


@dataclass
class Run:
    """One row of a report: a repetition, an aggregate or an extra row.

    Google Benchmark's ``BenchmarkReporter::Run``, with numbers, not strings.
    Times are **accumulated seconds** over ``iterations``; the per-iteration
    values are the properties ``real_time``/``cpu_time`` (in ``time_unit``)
    and ``real_seconds``/``cpu_seconds`` (in seconds). An aggregate whose
    ``aggregate_unit`` is ``"percentage"`` (``_cv``, ``_outliers``,
    ``_precision``) holds a fraction, not a time, in
    ``real_accumulated_time`` (and those four properties return it as is:
    0.05 is 5 %).
    """

    # "BM_<fn>", the family name (extra rows: "BM_<fn>/<row>", e.g. a dispatch).
    name: str
    # "BM_<fn>/process_time/real_time": the reported, filtered, listed name
    # (an aggregate adds "_<aggregate_name>" in benchmark_name).
    run_name: str
    # Logical iterations measured (batches x batch size); an aggregate: the
    # number of repetitions it summarises (Google Benchmark's convention).
    iterations: int = 0
    real_accumulated_time: float = 0.0  # seconds of wall-clock time over all iterations
    cpu_accumulated_time: float = 0.0  # seconds of this process's CPU time over them
    time_unit: str = "ms"  # the unit real_time/cpu_time are shown in: ns, us, ms or s
    run_type: str = "iteration"  # "iteration" (a repetition or extra row) or "aggregate"
    family_index: int = 0  # 0-based index of the benchmark among those that ran
    per_family_instance_index: int = 0  # always 0 (no argument instances)
    repetitions: int = 1  # how many repetitions the benchmark measured
    repetition_index: int | None = 0  # 0-based; None for an aggregate
    threads: int = 1  # always 1
    # mean, median, stddev, cv, or a further statistic (p90, ci_lower ...).
    aggregate_name: str = ""
    aggregate_unit: str = "time"  # "time" or "percentage" (a fraction)
    counters: dict[str, Counter] = field(default_factory=dict)  # items_per_second ...
    label: str = ""
    error_occurred: bool = False  # the benchmark failed; error_message says why
    error_message: str = ""
    extra_row: bool = False  # appended by a plugin (dispatch statistics, cold start)
    batch_size: int = 1  # logical iterations per measured batch (--batch_size)
    # Raw measurements behind the row, in real seconds per logical iteration:
    # one value for a repetition, the repetitions' values for an aggregate.
    samples: list[float] = field(default_factory=list)
    # A repetition of a kind timed batch by batch (reusable_batch = False, e.g.
    # async): each batch's real seconds per logical iteration; empty otherwise
    # (timing batches one by one would put work into the timed loop).
    batch_samples: list[float] = field(default_factory=list)
    # The exported function the row measured ("" when a tool reported a row
    # whose function it did not say).
    function: str = ""
    # The configuration point measured (axis name -> value, {"bs": 4}); empty
    # outside a sweep.
    params: dict = field(default_factory=dict)
    # In a run of several points (a sweep, a suite): the context entries of the
    # point this row was measured in (``iree_devices``, ``iree_module``,
    # ``iree_module_sha256``: ``ireebench_point_context``), which the JSON
    # reporter writes into the row after ``params`` and readers take over the
    # report context's (ireebench.comparison.machine.row_context); empty
    # outside one, where the context says it for every row.
    provenance: dict = field(default_factory=dict)
    # Seconds the device was busy (the union of its queue operations' and
    # dispatches' execution intervals, from a profiling pass) over
    # ``iterations``, like real_accumulated_time; None when not measured
    # (--device_time). An aggregate: the statistic of the repetitions' values.
    device_accumulated_time: float | None = None
    # The allocators' statistics of a repetition (--memory_statistics);
    # None when not measured, and on aggregates (as Google Benchmark's).
    memory: MemoryResult | None = None

    @property
    def benchmark_name(self) -> str:
        """The reported name; aggregates carry their suffix (``_mean``...)."""
        if self.run_type == "aggregate" and self.aggregate_name:
            return f"{self.run_name}_{self.aggregate_name}"
        return self.run_name

    def _adjusted(self, accumulated: float) -> float:
        if self.is_percentage:
            return accumulated
        if not self.iterations:
            return 0.0
        return accumulated / self.iterations * TIME_UNIT_MULTIPLIER[self.time_unit]

    @property
    def real_time(self) -> float:
        """Per-iteration real time in ``time_unit`` (a fraction for cv)."""
        return self._adjusted(self.real_accumulated_time)

    @property
    def cpu_time(self) -> float:
        return self._adjusted(self.cpu_accumulated_time)

    @property
    def device_time(self) -> float | None:
        """Per-iteration device busy time in ``time_unit`` (a fraction for cv); None
        when not measured."""
        if self.device_accumulated_time is None:
            return None
        return self._adjusted(self.device_accumulated_time)

    @property
    def device_seconds(self) -> float | None:
        """Per-iteration device busy time in seconds (a fraction for cv); None when
        not measured."""
        if self.device_accumulated_time is None:
            return None
        if self.is_percentage:
            return self.device_accumulated_time
        return self.device_accumulated_time / self.iterations if self.iterations else 0.0

    @property
    def is_percentage(self) -> bool:
        """An aggregate that is a fraction (``cv``), not a time."""
        return self.run_type == "aggregate" and self.aggregate_unit == "percentage"

    @property
    def real_seconds(self) -> float:
        """Per-iteration real time in seconds, whatever ``time_unit`` (a fraction for cv)."""
        if self.is_percentage:
            return self.real_accumulated_time
        return self.real_accumulated_time / self.iterations if self.iterations else 0.0

    @property
    def cpu_seconds(self) -> float:
        """Per-iteration CPU time in seconds (a fraction for cv)."""
        if self.is_percentage:
            return self.cpu_accumulated_time
        return self.cpu_accumulated_time / self.iterations if self.iterations else 0.0

    def copy(self) -> Run:
        """A copy sharing nothing mutable with this row, as ``copy.deepcopy`` makes, at a
        fraction of its cost (the hub gives one to each streaming hook of each row)."""
        new = copy.copy(self)
        new.counters = {name: copy.copy(counter) for name, counter in self.counters.items()}
        new.samples, new.batch_samples = list(self.samples), list(self.batch_samples)
        new.memory = copy.copy(self.memory)
        for name, value in vars(new).items():  # params, provenance, a plugin's own
            if isinstance(value, (dict, list, set)) and name not in _COPIED:
                setattr(new, name, copy.deepcopy(value))
        return new

    def to_dict(self) -> dict:
        """Plain data, for the Python API and notebooks: every field of the row.

        Times are given twice: per iteration in ``time_unit`` (``real_time``,
        as reports show them) and in seconds (``real_seconds``); the device
        time and the memory statistics are ``None`` when not measured.
        """
        return {
            "name": self.benchmark_name,
            "family_name": self.name,
            "function": self.function,
            "params": dict(self.params),
            "provenance": dict(self.provenance),
            "run_name": self.run_name,
            "run_type": self.run_type,
            "family_index": self.family_index,
            "per_family_instance_index": self.per_family_instance_index,
            "repetitions": self.repetitions,
            "repetition_index": self.repetition_index,
            "threads": self.threads,
            "aggregate_name": self.aggregate_name,
            "aggregate_unit": self.aggregate_unit,
            "iterations": self.iterations,
            "batch_size": self.batch_size,
            "real_time": self.real_time,
            "cpu_time": self.cpu_time,
            "time_unit": self.time_unit,
            "real_seconds": self.real_seconds,
            "cpu_seconds": self.cpu_seconds,
            "real_accumulated_time": self.real_accumulated_time,
            "cpu_accumulated_time": self.cpu_accumulated_time,
            "device_time": self.device_time,
            "device_seconds": self.device_seconds,
            "device_accumulated_time": self.device_accumulated_time,
            "memory": None if self.memory is None else dataclasses.asdict(self.memory),
            "counters": {k: c.value for k, c in self.counters.items()},
            "rate_counters": sorted(k for k, c in self.counters.items() if c.is_rate),
            "label": self.label,
            "error_occurred": self.error_occurred,
            "error_message": self.error_message,
            "extra_row": self.extra_row,
            "samples": list(self.samples),
            "batch_samples": list(self.batch_samples),
        }


@dataclass
class RunResult:
    """What one ``ireebench`` invocation produced (the Python API's return)."""

    exit_code: int
    runs: list[Run]
    context: object = None
    comparison: object = None  # `ireebench compare`: the ireebench.comparison.Comparison

    def __iter__(self):
        return iter(self.runs)

    def by_name(self, name: str, repetition: int | None = None) -> Run:
        """The row reported as ``name`` (e.g. ``BM_f/process_time/real_time_mean``).

        A repetition's rows share one name: give ``repetition`` (0-based) to
        pick one. A name that matches several rows without it, or none, is
        an error (KeyError) rather than a silent pick.
        """
        rows = [run for run in self.runs if run.benchmark_name == name]
        if repetition is not None:
            rows = [run for run in rows if run.repetition_index == repetition]
        if len(rows) == 1:
            return rows[0]
        if not rows:
            known = sorted({run.benchmark_name for run in self.runs})
            raise KeyError(f"no row {name!r}"
                           + (f" with repetition {repetition}" if repetition is not None else "")
                           + f" (rows: {', '.join(known) or 'none'})")
        raise KeyError(f"{len(rows)} rows are named {name!r} (one per repetition): "
                       f"pass repetition=0..{len(rows) - 1}")

    def to_dicts(self) -> list[dict]:
        """Every row as plain data (:meth:`Run.to_dict`)."""
        return [run.to_dict() for run in self.runs]


__all__ = [
    "RUN_KEYS",
    "TIME_UNIT_MULTIPLIER",
    "Counter",
    "MemoryResult",
    "Run",
    "RunResult"
]
