"""What a ranking produces: typed results, each candidate with its state.

* :class:`State`: what became of a candidate (``ok`` or one of the failure
  states; a failure is a state, never a hole in the ranking);
* :class:`Measurement`: one module measured on one device, what
  :func:`ireebench.plugins.rank.measure.measure_candidate` returns (and the
  cache keeps);
* :class:`CandidateResult`: a candidate in the ranking (its measurement, its
  ratio to the baseline corrected for drift, its place);
* :class:`Rerank`: the paired, interleaved re-rank of the top candidates;
* :class:`Ranking`: the whole answer, a :class:`ireebench.RunResult` (its
  ``runs`` are the Google Benchmark rows of every measurement), so
  ``ireebench.run(["rank", ...])`` and ``ireebench.rank(...)`` return it.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field

from ireebench import Run, RunResult
from ireebench.lib.channel import decode, encode


class State(str, enum.Enum):
    """What became of a candidate."""

    OK = "ok"
    COMPILE_FAILED = "compile_failed"  # a .mlir candidate that iree-compile refused
    LOAD_FAILED = "load_failed"  # not a module, no such function, another signature
    RUNTIME_ERROR = "runtime_error"  # the function returned an error
    WRONG_OUTPUT = "wrong_output"  # --check_outputs: not the baseline's outputs
    TIMEOUT = "timeout"  # still running when its timeout ran out (its worker was killed)
    CRASHED = "crashed"  # its worker process died (a signal)
    NOT_MEASURED = "not_measured"  # the budget ran out, or the run was interrupted, first

    def __str__(self) -> str:
        return self.value


FAILED_STATES = frozenset(State) - {State.OK, State.NOT_MEASURED}
# What a ranking can rank by (--rank_by), and how the table names it.
METRICS = {"real_time": "real time", "cpu_time": "CPU time", "device_time": "device time"}


def metric_of(measured, name: str) -> float | None:
    """``measured``'s median time per iteration of the metric ``name``."""
    if name == "device_time":
        return measured.device_seconds
    if name == "cpu_time":
        return measured.cpu_seconds
    return measured.seconds


@dataclass
class Measurement:
    """One module measured on one device (a warm worker's answer).

    Times are seconds per iteration. ``elapsed`` is how long it held its
    device, from loading the module to its last repetition.
    """

    state: State
    message: str = ""
    seconds: float | None = None  # the median real time per iteration
    cpu_seconds: float | None = None  # the median CPU time of the worker process
    device_seconds: float | None = None  # the median device time (--device_time)
    samples: list[float] = field(default_factory=list)  # real times, per repetition
    cpu_samples: list[float] = field(default_factory=list)
    device_samples: list[float] = field(default_factory=list)
    # The median's interval half-width over the median (--confidence): the
    # real time's, and the CPU time's.
    precision: float | None = None
    cpu_precision: float | None = None
    elapsed: float = 0.0
    load_seconds: float = 0.0  # loading the module, making its context
    first_call_seconds: float = 0.0  # the untimed first call (outputs checked there)
    rows: list[Run] = field(default_factory=list)  # its Google Benchmark rows
    imprecise: bool = False  # --benchmark_max_time spent before --benchmark_min_rel_accuracy

    def metric(self, name: str) -> float | None:
        """The ranked time (``real_time``, ``cpu_time`` or ``device_time``)."""
        return metric_of(self, name)

    def samples_of(self, name: str) -> list[float]:
        """The per-repetition values of the metric ``name``."""
        return {"cpu_time": self.cpu_samples, "device_time": self.device_samples}.get(name,
                                                                                   self.samples)

    def precision_of(self, name: str) -> float | None:
        """The precision of the metric ``name`` (the device time's: not known)."""
        return {"real_time": self.precision, "cpu_time": self.cpu_precision}.get(name)

    def to_data(self) -> dict:
        """Plain data (the rows as the worker channel encodes them)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "rows"}
        data["state"] = self.state.value
        data["rows"] = encode(self.rows)
        return data

    @classmethod
    def from_data(cls, data: dict) -> Measurement:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["state"] = State(values["state"])
        values["rows"] = decode(data.get("rows") or [])
        return cls(**values)


@dataclass
class CandidateResult:
    """A candidate of the ranking."""

    id: str
    path: str  # as given (a .vmfb, or the .mlir it was compiled from)
    sha256: str = ""  # of the measured .vmfb ("" when it did not compile)
    state: State = State.NOT_MEASURED
    message: str = ""
    device: str = ""  # the worker that measured it (``local-sync#0``)
    seconds: float | None = None  # median time per iteration of the ranked metric
    device_seconds: float | None = None
    # The ranked time over the baseline's on the same device, the baseline
    # interpolated between its measurements before and after (drift), or the
    # re-rank's median paired ratio for the candidates it re-measured.
    ratio: float | None = None
    # The ratio's interval at the run's --confidence (the statistics plugin's):
    # of its per-round ratios when re-ranked, else of its samples (None: unknown).
    interval: list[float] | None = None
    first_pass_ratio: float | None = None
    rank: int | None = None  # 1 = the fastest; None for a failed candidate
    first_pass_rank: int | None = None
    rerank_position: int | None = None
    timeout: float | None = None  # seconds it was allowed on its device
    cached: bool = False  # from the cache: nothing measured in this run
    same_as: str = ""  # the candidate with the same module bytes it was measured as
    measurement: Measurement | None = None

    @property
    def ok(self) -> bool:
        return self.state is State.OK

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "measurement"}
        data["state"] = self.state.value
        measurement = self.measurement
        data["samples"] = list(measurement.samples) if measurement else []
        data["precision"] = measurement.precision if measurement else None
        # The worker's CPU time per call, what --rank_by=cpu_time ranks.
        data["cpu_samples"] = list(measurement.cpu_samples) if measurement else []
        data["cpu_precision"] = measurement.cpu_precision if measurement else None
        data["elapsed"] = measurement.elapsed if measurement else None
        return data


@dataclass
class Rerank:
    """The paired, interleaved re-rank of the top candidates on one device.

    Every round measures one repetition of each member (the baseline
    included) in a fresh random order; a member's per-round ratio to the
    baseline of the same round cancels drift. ``order`` is by the median
    of those ratios; ``p_values[i]`` is the two-sided Wilcoxon signed-rank
    test of the paired log differences between ``order[i]`` and
    ``order[i + 1]`` (``p_values[0]``: is the winner really faster than the
    runner-up?). A race's re-rank is successive halving: ``stages`` are the
    members of each stage, each stage's better half going on; a member's
    rounds are all those it ran, and those that went further rank first.
    """

    device: str
    rounds: int  # all the stages'
    seed: int
    members: list[str]  # candidate ids in first-pass order
    stages: list[list[str]] = field(default_factory=list)  # one stage: empty
    order: list[str] = field(default_factory=list)
    ratios: dict[str, float] = field(default_factory=dict)  # median paired ratio
    round_seconds: dict[str, list[float]] = field(default_factory=dict)  # id -> per round
    p_values: list[float | None] = field(default_factory=list)
    kendall_tau: float | None = None  # first-pass order of the members vs ``order``
    failed: dict[str, str] = field(default_factory=dict)  # id -> why it left the re-rank
    message: str = ""  # why there is no re-rank order
    cached: bool = False

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class BaselineMeasurement:
    device: str
    seconds: float | None
    device_seconds: float | None
    sequence: int  # when, in the device's order of measurements
    elapsed: float = 0.0
    cpu_seconds: float | None = None
    node: str = ""  # the Ray node that measured it (--executor=ray); "": this machine

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class Ranking(RunResult):
    """The answer of ``ireebench rank``: the candidates, best first.

    ``candidates`` holds every candidate: the ranked ones (``ok``) by
    ``rank``, then the others in the order given. ``runs`` (of
    :class:`ireebench.RunResult`) are the Google Benchmark rows of every
    measurement.
    """

    candidates: list[CandidateResult] = field(default_factory=list)
    baseline: str = ""
    baseline_sha256: str = ""
    baselines: list[BaselineMeasurement] = field(default_factory=list)
    rerank: Rerank | None = None
    kendall_tau: float | None = None  # first pass vs re-rank (the rerank's)
    metric: str = "real_time"  # or cpu_time, device_time (--rank_by)
    function: str = ""
    devices: list[dict] = field(default_factory=list)
    complete: bool = True
    stopped: str = ""  # "", "budget", "interrupted" or "error"
    wall_seconds: float = 0.0
    device_seconds: float = 0.0  # summed time the workers held their devices
    measured: int = 0  # measurements made in this run
    imprecise: int = 0  # of those, the ones short of --benchmark_min_rel_accuracy
    from_cache: int = 0

    @property
    def ranked(self) -> list[CandidateResult]:
        return [candidate for candidate in self.candidates if candidate.rank is not None]

    @property
    def winner(self) -> CandidateResult | None:
        ranked = self.ranked
        return ranked[0] if ranked else None

    def by_id(self, candidate_id: str) -> CandidateResult:
        for candidate in self.candidates:
            if candidate.id == candidate_id:
                return candidate
        raise KeyError(f"no candidate {candidate_id!r} "
                       f"(candidates: {', '.join(c.id for c in self.candidates)})")

    def to_dict(self) -> dict:
        """The ranking as JSON data (``--rank_out``)."""
        return {
            "function": self.function,
            "metric": self.metric,
            "baseline": {"path": self.baseline, "sha256": self.baseline_sha256,
                         "measurements": [b.to_dict() for b in self.baselines]},
            "candidates": [candidate.to_dict() for candidate in self.candidates],
            "rerank": self.rerank.to_dict() if self.rerank else None,
            "kendall_tau": self.kendall_tau,
            "devices": list(self.devices),
            "complete": self.complete,
            "stopped": self.stopped,
            "wall_seconds": self.wall_seconds,
            "device_seconds": self.device_seconds,
            "measured": self.measured,
            "imprecise": self.imprecise,
            "from_cache": self.from_cache,
            "exit_code": self.exit_code,
        }
