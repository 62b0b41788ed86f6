"""Measuring one candidate on one device: the unit a warm worker runs.

A :class:`WarmDevice` is what a worker sets up once for all candidates:
the VM instance, the device, the HAL (and parameters) modules, the
baseline's function and its inputs, uploaded to the device once. Then
:func:`measure_candidate` measures one module on it: the module loaded
from its file, a context made for it with the same support modules, the
function looked up and checked against the baseline's signature, then the
measurement of an ordinary run (the phases of :mod:`ireebench.protocol`:
:func:`~ireebench.protocol.start_workload`,
:func:`ireebench._measure.measure_workload` with the run's stopping rule,
:func:`~ireebench.protocol.finish_workload`), the outputs of its last
iteration compared with the baseline's (``--check_outputs``, with the
output comparison of ``--expected_output``), and the context released.
:func:`rerank` measures several candidates round by round, one
repetition each per round in a fresh random order.

Nothing here knows about processes: the warm worker (:mod:`.worker`) calls
these in a process forked from the ranking, or, on a Ray cluster's node, in
a process of its own that the device's actor started (:mod:`.serve`,
:mod:`.remote`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import mmap
import os
import random
import tempfile
import time
from dataclasses import dataclass, field

import iree.runtime as rt
import numpy as np
from ireebench import names
from ireebench.backend import (
    BenchmarkFailure,
    ModuleImage,
    Repetition,
    Session,
    classify,
    invocation_kinds,
    iteration_count,
    measure_workload,
    open_vm_module,
    time_repetition,
)
from ireebench.errors import UsageError, one_line
from ireebench.inputs import Null, Scalar, Tensor, parse_inputs
from ireebench.lib.channel import decode, encode
from ireebench.lib.outputs import COMPARISON_FLAGS, parse_tolerances
from ireebench.lib.outputs.compare import compare_lists
from ireebench.lib.outputs.values import snapshot
from ireebench.lib.profiling_pass import DEVICE_TIME_ERRORS
from ireebench.lib.statistics import DEFAULT_CONFIDENCE, STATE, relative_precision
from ireebench.protocol import finish_discovery, finish_workload, start_session, start_workload
from ireebench.stats import EXTRA_STATISTICS, STATISTICS, compute_aggregates, median
from ireebench.workload import FunctionInfo, Workload, split_cconv

from .results import Measurement, State
from .stash import RANKED_METRIC


@dataclass
class Job:
    """A module to measure: a candidate, or the baseline."""

    id: str
    path: str  # a .vmfb
    sha256: str = ""
    params: dict = field(default_factory=dict)  # what its rows are named after
    baseline: bool = False

    def to_data(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_data(cls, data: dict) -> Job:
        return cls(**data)


class LoadFailed(Exception):
    """The module cannot be measured with the baseline's function and inputs."""


def _other_inputs(specs: list[str], function: FunctionInfo, count: int, build) -> list:
    """``build(specs)`` of ``count - 1`` input sets besides ``specs`` (``--rotate_inputs``):
    each float tensor redrawn around its values (normal, seeded by the set's number,
    scaled by the values' spread or 1), written as ``.npy`` files the kind reads (and
    uploads) like any ``--input=@x.npy``; integers and scalars as given (sizes, indices,
    counts). None without a float tensor."""
    if count < 2 or not specs:
        return []
    values = parse_inputs(specs, split_cconv(function.arguments))
    if len(values) != len(specs):  # a spec of several values: left as it is
        return []
    floats = [isinstance(value, Tensor) and not value.storage_only
              and getattr(value.array, "dtype", None) is not None
              and value.array.dtype.kind == "f" for value in values]
    if not any(floats):
        return []
    built = []
    with tempfile.TemporaryDirectory(prefix="ireebench-rotate-") as folder:
        for number in range(1, count):
            generator = np.random.default_rng(number)
            other = list(specs)
            for index, value in enumerate(values):
                if floats[index]:
                    array = value.array
                    scale = float(np.std(array)) or 1.0
                    drawn = array + generator.standard_normal(array.shape) * scale
                    path = os.path.join(folder, f"set{number}-{index}.npy")
                    np.save(path, drawn.astype(array.dtype))
                    other[index] = f"@{path}"
            built.append(build(other))
    return built


def _expected(values) -> list:
    """The baseline's outputs as the comparison's expected values (what it
    cannot compare, lists and references, matches anything)."""
    expected = []
    for value in values:
        if value.kind == "buffer_view":
            expected.append(Tensor(value.array, value.element_type))
        elif value.kind == "primitive" and value.type_name[:1] in ("i", "f"):
            cconv = {"i32": "i", "i64": "I", "f32": "f", "f64": "F"}.get(value.type_name, "i")
            expected.append(Scalar(cconv, value.value))
        else:
            expected.append(Null(""))
    return expected


class WarmDevice:
    """One device with everything the candidates share, set up once.

    :param config: the run's configuration (its function, inputs, flags).
    :param uri: the device.
    :param function: the function every candidate exports.
    :param baseline: the baseline's job: its module is opened with the
        device, its function's signature and kind are the candidates'.
    """

    def __init__(self, config, uri: str, function: str, baseline: Job,
                 check_outputs: bool = False):
        self.config = config
        self.uri = uri
        self.function_name = function
        self.baseline = baseline
        self.check_outputs = check_outputs
        self.tolerances = parse_tolerances({name: config.getoption(name, default)
                                            for name, default in COMPARISON_FLAGS.items()})
        self.session: Session | None = None
        self.function: FunctionInfo | None = None
        self.kind = None
        self.inputs = None
        self.expected: list | None = None  # the baseline's outputs on this device
        self.other_inputs: list = []  # --rotate_inputs: the sets checked after timing
        self.other_expected: list[list] = []  # the baseline's outputs on each of them
        self.batch_size = 1
        self.concurrency = 1

    def point(self, job: Job):
        """The configuration a job is measured with: the run's, its module and device."""
        options = dict(self.config.options, module=(job.path,), device=(self.uri,))
        return self.config.for_point(options, list(self.config.runtime_flags), job.params,
                                     label=job.id)

    def open(self) -> WarmDevice:
        """Creates the device and uploads the inputs; a one-line UsageError if it cannot."""
        point = self.point(self.baseline)
        session = self.session = Session(point)
        session.open()
        start_session(point, session)
        try:
            vm_function = session.module.lookup_function(self.function_name)
        except Exception:  # noqa: BLE001 - the bindings' plain errors
            vm_function = None
        if vm_function is None:
            raise UsageError(f"--baseline={self.baseline.path}: exports no function "
                             f"{self.function_name!r}")
        self.function = FunctionInfo.from_vm_function(vm_function)
        self.kind = classify(point, self.function, invocation_kinds(point))
        self.batch_size, self.concurrency = self.kind.batching(
            point.getoption("batch_size"), point.getoption("batch_concurrency"))
        workload = self._workload(point, self.function, self.baseline)
        specs = list(point.getoption("input") or [])
        workload.inputs = self.inputs = self.kind.build_inputs(workload, session, specs)
        if self.check_outputs:
            count = int(point.getoption("rotate_inputs", 1) or 1)
            self.other_inputs = _other_inputs(
                specs, self.function, count,
                lambda other: self.kind.build_inputs(workload, session, other))
        finish_discovery(point, session, [workload])
        return self

    def _workload(self, point, function: FunctionInfo, job: Job) -> Workload:
        return Workload(
            name=names.family_name(self.function_name, job.params),
            function=function, kind=self.kind, batch_size=self.batch_size,
            concurrency=self.concurrency,
            time_unit=point.getoption("time_unit") or self.kind.default_time_unit,
            selected=True, inputs=self.inputs, params=dict(job.params))

    def describe(self) -> str:
        return repr(self.session.device)

    def measure(self, job: Job) -> Measurement:
        return measure_candidate(self, job)

    def rerank(self, jobs: list[Job], rounds: int, seed: int) -> RerankResult:
        return rerank(self, jobs, rounds, seed)

    def close(self) -> None:
        self.inputs = None
        if self.session is not None:
            self.session.close()
            self.session = None

    # --- one candidate ------------------------------------------------------

    def load(self, job: Job) -> tuple[Session, Workload]:
        """The candidate's own session (this device, a context of its module) and
        workload (the baseline's inputs); :class:`LoadFailed` says why not."""
        point = self.point(job)
        try:
            with open(job.path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise LoadFailed(f"cannot read {job.path}: {exc.strerror or one_line(exc)}") from None
        if not data:
            raise LoadFailed(f"{job.path} is empty")
        memory = mmap.mmap(-1, len(data))
        memory[:] = data
        digest = hashlib.sha256(data).hexdigest()
        image = ModuleImage(job.path, os.path.basename(job.path), memory, None, digest)
        warm = self.session
        try:
            module, renamed = open_vm_module(warm.instance, image)
        except UsageError as exc:
            raise LoadFailed(str(exc).removeprefix(f"--module={job.path}: ")) from None
        session = Session(point)
        session.instance, session.devices = warm.instance, list(warm.devices)
        session.device_uris = list(warm.device_uris)
        session.modules, session.module_paths = [module], [job.path]
        session.renamed_functions = [renamed]
        session.support_modules = list(warm.support_modules)
        vm_function = module.lookup_function(self.function_name)
        if vm_function is None:
            exported = [name for name in module.function_names if not names.is_internal(name)]
            raise LoadFailed(f"no function {self.function_name!r} (exports: "
                             f"{', '.join(exported) or 'none'})")
        function = FunctionInfo.from_vm_function(vm_function)
        self._check_signature(function)
        try:
            session.context = rt.VmContext(warm.instance,
                                           modules=[*warm.support_modules, module])
        except Exception as exc:  # noqa: BLE001 - the runtime's plain errors
            raise LoadFailed(f"cannot create a context (missing import, or compiled for "
                             f"another device than {self.uri}?): {one_line(exc)}") from None
        return session, self._workload(point, function, job)

    def _check_signature(self, function: FunctionInfo) -> None:
        base = self.function
        declared = function.attr("iree.abi.declaration"), base.attr("iree.abi.declaration")
        if function.cconv != base.cconv or (all(declared) and declared[0] != declared[1]):
            raise LoadFailed(f"{self.function_name} takes other arguments or results than the "
                             f"baseline's ({declared[0] or function.cconv}; baseline: "
                             f"{declared[1] or base.cconv})")

    def compare_outputs(self, batch, session, job: Job, workload: Workload) -> str:
        """"" when the outputs of ``batch`` (the last timed call), then of one untimed
        call on each other input set, are the baseline's (which the baseline's own
        measurement sets), else the first mismatch's report. The other sets follow
        the timed calls, so each checked call's previous call had other inputs."""
        if batch is None:
            return ""
        results = split_cconv(self.function.results)
        values = [snapshot(batch.outputs(), session.device, results)]
        saved = workload.inputs
        try:
            for inputs in self.other_inputs:
                workload.inputs = inputs
                call = workload.kind.prepare(workload, session)
                call.execute()
                values.append(snapshot(call.outputs(), session.device, results))
        finally:
            workload.inputs = saved
        if job.baseline:
            self.expected, *self.other_expected = [_expected(each) for each in values]
            return ""
        if not self.check_outputs or self.expected is None:
            return ""
        for index, (expected, actual) in enumerate(zip([self.expected, *self.other_expected],
                                                       values)):
            failures = compare_lists(expected, actual, self.tolerances)
            if failures:  # the report's first line (the expected and actual views follow)
                where = f"input set {index + 1} of {len(values)}: " if index else ""
                return where + failures[0].splitlines()[0]
        return ""


def release(session: Session | None, workload: Workload | None) -> None:
    """Drops a candidate's context and module (the device stays)."""
    if workload is not None:
        workload.last_batch = None
        workload.inputs = None
    if session is not None:
        session.context = None
        session.modules.clear()
        session.devices.clear()


def _repetitions(runs) -> list:
    return [run for run in runs if run.run_type == "iteration" and not run.extra_row]


def measure_candidate(warm: WarmDevice, job: Job) -> Measurement:
    """Measures ``job``'s module on ``warm``'s device (see the module docstring).

    A failure is the measurement's state; an exception is a bug (or a
    plugin's error), for the caller to end the run with.
    """
    start = time.perf_counter()
    session = workload = None
    try:
        try:
            session, workload = warm.load(job)
        except LoadFailed as exc:
            return Measurement(State.LOAD_FAILED, str(exc),
                               elapsed=time.perf_counter() - start)
        loaded = time.perf_counter()
        point = session.config
        # The precision not reached comes back with the measurement (the ranking
        # says it once for all), not as a warning per measurement from the worker.
        rule = point.stash.get(STATE, None)
        unreached = 0
        if rule is not None:
            rule.quiet, unreached = True, rule.unreached
        extra = start_workload(point, session, workload)
        runs = measure_workload(point, session, workload)
        mismatch = warm.compare_outputs(workload.last_batch, session, job, workload)
        extra.extend(finish_workload(point, session, workload, runs))
        confidence = float(point.getoption("confidence") or DEFAULT_CONFIDENCE)
        measurement = _summary(runs, extra, mismatch, start, loaded, confidence)
        measurement.imprecise = rule is not None and rule.unreached > unreached
        if measurement.state is State.OK and measurement.device_seconds is None \
                and point.stash.get(RANKED_METRIC, None) == "device_time":
            # Ranked by a time it does not have: a failure to say, not an unranked "ok".
            error = point.stash.get(DEVICE_TIME_ERRORS, {}).get(workload.name)
            measurement.state = State.RUNTIME_ERROR
            measurement.message = (f"--device_time: no device time measured"
                                   f"{f': the profiling pass failed: {error}' if error else ''}")
        return measurement
    finally:
        release(session, workload)


def _summary(runs, extra, mismatch: str, start: float, loaded: float,
             confidence: float) -> Measurement:
    repetitions = _repetitions(runs)
    elapsed = time.perf_counter() - start
    measurement = Measurement(State.OK, rows=list(runs) + list(extra), elapsed=elapsed,
                              load_seconds=loaded - start)
    failed = [run for run in repetitions if run.error_occurred]
    if failed:
        measurement.state, measurement.message = State.RUNTIME_ERROR, failed[0].error_message
        return measurement
    measurement.samples = [run.real_seconds for run in repetitions]
    measurement.seconds = median(measurement.samples) if measurement.samples else None
    measurement.cpu_samples = [run.cpu_seconds for run in repetitions]
    measurement.cpu_seconds = median(measurement.cpu_samples) if repetitions else None
    device = [run.device_seconds for run in repetitions]
    if device and all(value is not None for value in device):
        measurement.device_samples = device
        measurement.device_seconds = median(device)
    measurement.precision = relative_precision(measurement.samples, confidence)
    measurement.cpu_precision = relative_precision(measurement.cpu_samples, confidence)
    if mismatch:
        measurement.state, measurement.message = State.WRONG_OUTPUT, mismatch
    return measurement


# --- the re-rank -------------------------------------------------------------


@dataclass
class RerankResult:
    """Per member: its rows, its real and CPU seconds per iteration per round
    (None where it did not run), and why it left (when it failed)."""

    rows: dict[str, list] = field(default_factory=dict)
    seconds: dict[str, list] = field(default_factory=dict)
    cpu_seconds: dict[str, list] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    elapsed: float = 0.0

    def to_data(self) -> dict:
        return {"rows": {key: encode(rows) for key, rows in self.rows.items()},
                "seconds": self.seconds, "cpu_seconds": self.cpu_seconds,
                "failed": self.failed, "elapsed": self.elapsed}

    @classmethod
    def from_data(cls, data: dict) -> RerankResult:
        return cls({key: decode(rows) for key, rows in data["rows"].items()},
                   data["seconds"], data["cpu_seconds"], data["failed"], data["elapsed"])


def rerank(warm: WarmDevice, jobs: list[Job], rounds: int, seed: int) -> RerankResult:
    """``rounds`` repetitions of each job, interleaved: every round runs one
    repetition of each, in an order drawn from ``seed``. Each is warmed up and
    calibrated first (its own iteration count); one that fails leaves."""
    start = time.perf_counter()
    result = RerankResult()
    members = []
    try:
        for job in jobs:
            try:
                session, workload = warm.load(job)
            except LoadFailed as exc:
                result.failed[job.id] = str(exc)
                continue
            members.append((job, session, workload))
            try:
                iterations = iteration_count(session.config, workload, session)
            except BenchmarkFailure as exc:
                result.failed[job.id] = str(exc)
                continue
            result.rows[job.id] = []
            result.seconds[job.id] = [None] * rounds
            result.cpu_seconds[job.id] = [None] * rounds
            members[-1] = (job, session, workload, iterations)
        running = [member for member in members if len(member) == 4]
        shuffle = random.Random(seed).shuffle
        for index in range(rounds):
            order = [member for member in running if member[0].id not in result.failed]
            shuffle(order)
            for job, session, workload, iterations in order:
                row = time_repetition(workload, Repetition(index, rounds, iterations, session))
                workload.last_batch = None
                if row.error_occurred:
                    result.failed[job.id] = row.error_message
                    continue
                result.rows[job.id].append(row)
                result.seconds[job.id][index] = row.real_seconds
                result.cpu_seconds[job.id][index] = row.cpu_seconds
        statistics = STATISTICS + list(warm.config.stash.get(EXTRA_STATISTICS, []))
        for job_id, rows in result.rows.items():
            result.rows[job_id] = rows + compute_aggregates(rows, statistics)
    finally:
        for member in members:
            release(member[1], member[2])
    result.elapsed = time.perf_counter() - start
    return result
