"""The ranking: candidates spread over warm workers, baselines, drift, the re-rank.

:class:`Ranker` is the ``rank`` backend's ``run``. In order:

1. The baseline and the candidates are resolved (``.mlir`` compiled: a
   candidate that does not compile is ``compile_failed``) and hashed; the
   function is the baseline's (``--function``, or its one exported
   function). Each candidate already in the cache (:mod:`.cache`) is taken
   from it, rows and all: nothing of it is measured again. Candidates with
   the same bytes are measured once.
2. One warm worker per device (:mod:`.worker`, :mod:`.devices`). A worker's
   first job is always the baseline (its time on that device derives the
   candidates' timeouts; its outputs are the reference of
   ``--check_outputs``); then it takes the next candidate whenever it is
   free, and the baseline again after every ``--baseline_every``
   candidates, and once more at the end (so every candidate has a baseline
   before and after it on its device).
3. A candidate's timeout counts from the moment its worker starts it
   (its ``begin``), never from a queue: ``--candidate_timeout``, else
   ``F x`` the baseline's time on that device (with adaptive stopping at
   least ``--benchmark_max_time`` plus ``F x`` its load and one repetition)
   plus :data:`~.settings.TIMEOUT_SLACK`. At the deadline the worker is
   killed (its group: a native pass too), the candidate is ``timeout``
   and a new worker takes the device; a worker that dies makes its
   candidate ``crashed``. Either costs at most the timeout; the others go
   on.
4. Each candidate's ratio is its time over the baseline's on the same
   device, interpolated between the baseline measurements before and after
   it there (:func:`.ordering.interpolate`): drift on a device, and the
   difference between devices, cancel. The ranked time is ``--rank_by``'s:
   the device time with ``--device_time``, else the wall clock's (or the
   worker's CPU time).
5. The best ``--rerank_top`` and the baseline are re-ranked on the first
   device: ``--rerank_rounds`` rounds, one repetition of each per round in
   a fresh random order (:func:`.measure.rerank`); their order is by the
   median of the per-round ratios to the baseline, each neighbour pair
   judged by the Wilcoxon signed-rank test on the paired log differences,
   and Kendall's tau between the first pass and the re-rank says how
   stable the order is.
6. ``--rank_budget`` stops the ranking when it is spent (workers killed,
   what finished kept); Ctrl-C or SIGTERM too. Either way the ranking of
   what was measured is written (``--rank_out``), every finished
   measurement is in the cache, and a rerun resumes.

Every measurement's Google Benchmark rows go to the run's reports as it
finishes (``BM_fn/candidate:ID/process_time/real_time``; a baseline's
``BM_fn/candidate:baseline/device:LABEL/round:N/...``; the re-rank's
``.../pass:rerank/...``), every result to ``--rank_stream`` and the cache.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import time
from dataclasses import dataclass, field

import iree.runtime as rt
from ireebench import names
from ireebench.backend import machine_context
from ireebench.discovery import module_functions
from ireebench.errors import Terminated, UsageError
from ireebench.lib.channel import decode_error
from ireebench.results import Run
from ireebench.stats import median

from . import cache as rank_cache
from . import report
from .candidates import Candidate, resolve
from .devices import DeviceSpec, fingerprint, worker_devices
from .measure import Job, RerankResult
from .ordering import interpolate, kendall_tau, signed_rank_test
from .results import (
    FAILED_STATES,
    BaselineMeasurement,
    CandidateResult,
    Measurement,
    Ranking,
    Rerank,
    State,
    metric_of,
)
from .settings import TIMEOUT_SLACK, RankSettings
from .stash import RANKED_METRIC
from .worker import LocalWorkers, WorkerProcess

BASELINE_ID = "baseline"
# How long a worker may take to open its device and upload the inputs.
START_SECONDS = 300.0


@dataclass
class Task:
    """What a worker is doing."""

    kind: str  # "baseline", "candidate" or "rerank"
    job: Job | None = None
    candidate: CandidateResult | None = None
    jobs: list[Job] = field(default_factory=list)  # a re-rank's members
    timeout: float | None = None
    sequence: int = 0  # its place in its device's order of measurements


@dataclass
class DeviceState:
    """One device's history, across the workers that held it."""

    spec: DeviceSpec
    worker: WorkerProcess | None = None  # or a remote.RayWorker
    baselines: list[BaselineMeasurement] = field(default_factory=list)
    sequence: int = 0
    rounds: int = 0  # baseline measurements made
    candidates: int = 0  # candidates measured on it
    fresh: bool = True  # its worker has not measured the baseline yet
    first: Measurement | None = None  # its first baseline measurement (timeouts)
    worker_info: dict = field(default_factory=dict)  # what its last worker said when ready
    # On a cluster: its worker was lost with its node (the next may be elsewhere),
    # and how often.
    relocated: bool = False
    losses: int = 0

    def to_dict(self) -> dict:
        return {**self.spec.to_dict(), "worker": dict(self.worker_info),
                "baselines": len(self.baselines), "candidates": self.candidates}

    @property
    def reference(self) -> BaselineMeasurement | None:
        """The baseline measurement its timeouts derive from (the first)."""
        return self.baselines[0] if self.baselines else None


class Ranker:
    """The ``rank`` backend (see the module docstring)."""

    def __init__(self, config, settings: RankSettings, candidates: list[Candidate]):
        self.config = config
        self.settings = settings
        self.candidates = candidates
        self.ranking = Ranking(0, [])
        self.results: list[CandidateResult] = []
        self.by_id: dict[str, CandidateResult] = {}  # the same, by candidate id
        self.keys: dict[str, str] = {}  # candidate id -> cache key (without the device)
        self.devices: list[DeviceState] = []
        self.queue: list[CandidateResult] = []
        self.hub = None
        self.family = 0
        self.function = ""
        self.baseline: Candidate | None = None
        self.flags: dict = {}
        self.inputs: list[str] = []
        self.cache = rank_cache.RankCache(None)
        self.stream = rank_cache.Stream(None)
        self.started = time.monotonic()
        self.stopped = ""
        self.rerank: Rerank | None = None
        self.pending_rerank: Task | None = None  # for the first device, once it is free
        self._jobs: dict[str, Job] = {}
        # candidate id -> its place in its device's order of measurements (drift)
        self.sequence_of: dict[str, int] = {}
        self._context = None  # (context, run names) until it is reported
        # Where the workers run (LocalWorkers, remote.RayWorkers), and the command
        # line's plugin flags (a worker on a node loads the same plugins).
        self.pool = None
        self.selection: list[str] = []
        # candidate id -> the node its measurement was made on ("": this machine)
        self.node_of: dict[str, str] = {}
        self.attempts: dict[str, int] = {}  # candidate id -> times lost with a node
        self.where_of: dict[str, dict] = {}  # candidate id -> its worker's where (rows)

    # --- the whole ranking ------------------------------------------------

    def run(self, config, hub) -> int:
        self.hub = hub
        self.started = time.monotonic()
        settings = self.settings
        drivers = rt.query_available_drivers()
        on_ray = config.getoption("executor") == "ray"
        if on_ray:  # the ray extra: imported only for a ranking on a cluster
            from .remote import RayWorkers, ray_devices

            specs = ray_devices(settings.devices, settings.cpu_workers, settings.cpu_sets,
                                drivers, list(config.getoption("ray_resource") or []))
        else:
            specs = worker_devices(settings.devices, settings.cpu_workers, settings.cpu_sets,
                                   drivers)
        self.devices = [DeviceState(spec) for spec in specs]
        self.cache = rank_cache.RankCache(settings.cache, settings.remeasure).open()
        self.stream = rank_cache.Stream(settings.rank_stream)
        config.stash[RANKED_METRIC] = settings.metric  # the workers' stopping rule
        try:
            self.pool = RayWorkers(config, self.selection, specs).open() if on_ray \
                else LocalWorkers(config)
            self._prepare()
            self._first_pass()
            self._ratios()
            self._rerank()
            self._ensure_context()  # a ranking without rows (all failed early) has one too
        except (KeyboardInterrupt, Terminated):
            self.stopped = self.stopped or "interrupted"
            raise
        except BaseException:
            self.stopped = self.stopped or "error"  # the ranking's one line says which
            raise
        finally:
            self._stop_workers()
            if self.pool is not None:
                self.pool.close()
            self._finish()
            self.stream.close()
        report.print_ranking(config, self.ranking)
        return 0

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _budget_left(self) -> float | None:
        if self.settings.budget is None:
            return None
        return self.settings.budget - self._elapsed()

    # --- 1. what to measure -------------------------------------------------

    def _prepare(self) -> None:
        config, settings = self.config, self.settings
        first_device = self.devices[0].spec.uri
        compiling = config.for_point(dict(config.options, device=(first_device,)),
                                     list(config.runtime_flags), {})
        baseline = resolve(compiling, Candidate(BASELINE_ID, settings.baseline))
        if baseline.state is not None:
            raise UsageError(f"--baseline={settings.baseline}: {baseline.message}")
        self.baseline = baseline
        self.function = self._function(compiling, baseline)
        # Every point measures it by name, a native pass too (--device_time): without
        # --function the native tool discovers functions itself and runs none that takes
        # arguments. (Not in the cache's key: it is the function's own field.)
        config.options["function"] = self.function
        self.inputs = rank_cache.inputs_identity(list(config.getoption("input") or []))
        self.flags = rank_cache.measuring_flags(config)
        run_names = []
        for candidate in self.candidates:
            resolve(compiling, candidate)
            result = CandidateResult(candidate.id, candidate.path, candidate.sha256)
            if candidate.state is not None:
                result.state, result.message = candidate.state, candidate.message
            else:
                self.keys[candidate.id] = self._key(candidate.sha256)
            self.results.append(result)
            self.by_id[result.id] = result
            run_names.append(names.run_name(self.function, self._params(candidate.id)))
        context = machine_context(config)
        context.extra["rank"] = {"baseline": os.path.abspath(settings.baseline),
                                 "baseline_sha256": baseline.sha256,
                                 "function": self.function,
                                 "devices": [d.spec.to_dict() for d in self.devices]}
        # Reported before the first rows: a device or input the workers refuse
        # is then one line without a context block before it.
        self._context = (context, run_names)
        modules = {candidate.id: candidate for candidate in self.candidates}
        measuring: dict[str, CandidateResult] = {}  # sha256 -> the one measured
        for result in self.results:
            if result.state is not State.NOT_MEASURED:
                self._tell(result)
                continue
            record = self._cached(result.id)
            if record is not None:
                self._from_cache(result, record)
                continue
            if result.sha256 in measuring:
                result.same_as = measuring[result.sha256].id
                continue
            measuring[result.sha256] = result
            self.queue.append(result)
        self._jobs = {result.id: Job(result.id, modules[result.id].module, result.sha256,
                                     self._params(result.id))
                      for result in self.results if result.id in self.keys}

    def _function(self, config, baseline: Candidate) -> str:
        wanted = config.getoption("function")
        point = config.for_point(dict(config.options, module=(baseline.module,)),
                                 list(config.runtime_flags), {})
        exported = [function.name for function in module_functions(point)
                    if not names.is_internal(function.name)]
        if wanted:
            if wanted not in exported:
                raise UsageError(f"--function={wanted}: the baseline {self.settings.baseline} "
                                 f"exports no such function (exports: "
                                 f"{', '.join(exported) or 'none'})")
            return wanted
        if len(exported) != 1:
            raise UsageError(f"rank: --function: the baseline {self.settings.baseline} exports "
                             f"{len(exported)} functions ({', '.join(exported) or 'none'}); "
                             "name the one to rank")
        return exported[0]

    @staticmethod
    def _params(candidate_id: str) -> dict:
        return {"candidate": candidate_id}

    def _key(self, sha256: str, fingerprint_: str = "") -> str:
        return rank_cache.key(kind="candidate", module=sha256, function=self.function,
                              inputs=self.inputs, baseline=self.baseline.sha256,
                              flags=self.flags, device=fingerprint_)

    def _fingerprints(self) -> list[str]:
        return list(dict.fromkeys(fingerprint(device.spec) for device in self.devices))

    def _cached(self, candidate_id: str) -> dict | None:
        sha256 = self.by_id[candidate_id].sha256
        for device_fingerprint in self._fingerprints():
            record = self.cache.get(self._key(sha256, device_fingerprint))
            if record is not None:
                return record
        return None

    def _from_cache(self, result: CandidateResult, record: dict) -> None:
        measurement = Measurement.from_data(record["measurement"])
        self._apply(result, measurement, record.get("device", ""), record.get("timeout"))
        result.ratio = result.first_pass_ratio = record.get("ratio")
        result.cached = True
        self.ranking.from_cache += 1
        self._stamp(measurement.rows, result.id, None, {})  # its node: as measured then
        self._report_rows(measurement.rows)
        self._tell(result)

    # --- 2. the first pass ------------------------------------------------

    def _first_pass(self) -> None:
        if not self.queue:
            return
        for device in self.devices:
            self._start(device)
        self._loop()

    def _start(self, device: DeviceState) -> None:
        baseline_job = Job(BASELINE_ID, self.baseline.module, self.baseline.sha256,
                           {"candidate": BASELINE_ID}, baseline=True)
        device.worker = self.pool.start(device.spec, self.function, baseline_job,
                                        self.settings.check_outputs, self.settings.metric)
        device.worker.deadline = time.monotonic() + START_SECONDS
        device.fresh = True

    def _loop(self) -> None:
        """Gives free workers work until none has any (or the budget is spent)."""
        while True:
            for device in self.devices:
                worker = device.worker
                if worker is not None and worker.ready and worker.busy is None:
                    self._assign(device)
            if not self.queue and self.pending_rerank is None:
                self._abandon_relocated()
            active = [device for device in self.devices if device.worker is not None
                      and (device.worker.busy is not None or not device.worker.ready)]
            if not active:
                return
            left = self._budget_left()
            if left is not None and left <= 0:
                self._out_of_budget()
                return
            deadlines = [device.worker.deadline for device in active
                         if device.worker.deadline is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            if left is not None:
                timeout = left if timeout is None else min(timeout, left)
            ready, _, _ = select.select([device.worker.replies for device in active], [], [],
                                        timeout)
            # Deadlines are judged at the moment select answered: what one device's
            # handling costs (a worker lost with its node is closed and replaced, seconds
            # on a cluster) must not time out another whose reply came meanwhile, unread.
            answered = time.monotonic()
            for device in active:
                worker = device.worker
                if worker.replies in ready:
                    for kind, args in worker.receive():
                        self._message(device, kind, args)
                    if worker.ended and device.worker is worker:
                        self._died(device)
                if device.worker is worker and worker.deadline is not None \
                        and answered >= worker.deadline:
                    self._timed_out(device)

    def _assign(self, device: DeviceState) -> None:
        """The next task of a free worker, if any: its first baseline, the re-rank
        (the first device's), the baseline again every K candidates, the next
        candidate, the last baseline after its last candidate."""
        if device.fresh:
            self._send(device, Task("baseline", self._baseline_job(device)))
            return
        if self.pending_rerank is not None:
            if device is self._rerank_device():
                task, self.pending_rerank = self.pending_rerank, None
                self.rerank.device = device.spec.label
                self._send(device, task)
            return
        if self.queue and device.worker.since_baseline >= self.settings.baseline_every:
            self._send(device, Task("baseline", self._baseline_job(device)))
        elif self.queue:
            result = self.queue.pop(0)
            self._send(device, Task("candidate", self._jobs[result.id], result,
                                    timeout=self._timeout(device)))
        elif self._baseline_due(device):
            self._send(device, Task("baseline", self._baseline_job(device)))

    def _rerank_device(self) -> DeviceState | None:
        """The first device, unless its worker was lost with its node and its next one
        has not started: then the first device whose worker is free, else the first
        that may start one (None: no device may)."""
        first = self.devices[0]
        if first.worker is not None and (first.worker.ready or not first.relocated):
            return first
        free = [device for device in self.devices if device.worker is not None
                and device.worker.ready and device.worker.busy is None]
        startable = [device for device in self.devices if not self._retired(device)]
        return (free or startable or [None])[0]

    def _retired(self, device: DeviceState) -> bool:
        """It lost more workers with their nodes than --ray_retries: none is started."""
        return device.losses > self.pool.retries

    def _abandon_relocated(self) -> None:
        """Nothing is left to measure: a worker still starting in place of one lost with
        its node (Ray may have no node to put it on) is not waited for."""
        for device in self.devices:
            worker = device.worker
            if worker is not None and device.relocated and not worker.ready:
                worker.close(stop=False)
                device.worker = None

    @staticmethod
    def _baseline_due(device: DeviceState) -> bool:
        """Candidates ran on ``device`` since its last baseline measurement."""
        return bool(device.candidates and device.baselines
                    and device.baselines[-1].sequence < device.sequence)

    def _baseline_job(self, device: DeviceState) -> Job:
        device.rounds += 1
        return Job(BASELINE_ID, self.baseline.module, self.baseline.sha256,
                   {"candidate": BASELINE_ID, "device": device.spec.label,
                    "round": device.rounds}, baseline=True)

    def _timeout(self, device: DeviceState) -> float | None:
        """A candidate's seconds on ``device`` (see the module docstring)."""
        settings = self.settings
        if settings.candidate_timeout is not None:
            return settings.candidate_timeout
        first = device.first
        if first is None:
            return None
        factor = settings.timeout_factor
        planned = factor * first.elapsed
        if settings.adaptive and settings.max_time is not None and first.samples:
            repetition = max(first.samples) * _iterations(first)
            planned = max(planned, settings.max_time + factor * (first.load_seconds
                                                                 + repetition))
        return planned + TIMEOUT_SLACK

    def _send(self, device: DeviceState, task: Task) -> None:
        worker = device.worker
        device.sequence += 1
        task.sequence = device.sequence
        worker.busy = task
        worker.started_at = worker.deadline = None
        if task.kind == "rerank":
            sent = worker.send("rerank", [job.to_data() for job in task.jobs],
                               self.settings.rerank_rounds, self.settings.seed)
        else:
            sent = worker.send("measure", task.job.to_data())
            if task.kind == "candidate":
                worker.since_baseline += 1
        if not sent:
            worker.ended = True  # its death is read next

    def _message(self, device: DeviceState, kind: str, args: list) -> None:
        worker = device.worker
        if kind == "ready":
            worker.ready, worker.deadline = True, None
            device.worker_info = {**dict(args[0]), **worker.where}
        elif kind == "failed":
            error = decode_error(args[0])
            raise self._device_error(device, error)
        elif kind == "begin":
            worker.started_at = time.monotonic()
            timeout = worker.busy.timeout if worker.busy is not None else None
            worker.deadline = None if timeout is None else worker.started_at + timeout
        elif kind == "result":
            self._measured(device, Measurement.from_data(args[0]))
        elif kind == "rerank":
            self._reranked(device, RerankResult.from_data(args[0]))
        elif kind == "write":
            stream = self.config.stdout if args[0] == "stdout" else self.config.stderr
            with contextlib.suppress(Exception):
                stream.write(args[1])
                stream.flush()
        elif kind == "error":
            raise decode_error(args[0])

    def _device_error(self, device: DeviceState, error: BaseException) -> BaseException:
        """A worker that could not start: its device named as --devices names it."""
        prefix = f"--device={device.spec.uri}: "
        if not isinstance(error, UsageError) or not str(error).startswith(prefix):
            return error  # it names its flag (an input the baseline refuses ...)
        return UsageError(f"--devices={device.spec.uri}: worker {device.spec.label}: "
                          f"{str(error).removeprefix(prefix)}", status=error.status)

    def _held(self, device: DeviceState) -> float:
        worker = device.worker
        return time.monotonic() - worker.started_at if worker.started_at else 0.0

    def _measured(self, device: DeviceState, measurement: Measurement) -> None:
        worker = device.worker
        task, worker.busy = worker.busy, None
        self.ranking.device_seconds += self._held(device)
        worker.started_at = worker.deadline = None
        self.ranking.measured += 1
        self._stamp(measurement.rows, task.job.id, device, worker.where)
        self._report_rows(measurement.rows)
        if task.kind == "baseline":
            self._baseline_measured(device, task, measurement)
            return
        device.candidates += 1
        result = task.candidate
        self._apply(result, measurement, device.spec.label, task.timeout)
        self.sequence_of[result.id] = task.sequence
        self.node_of[result.id] = worker.where.get("ray_node_id", "")
        self.where_of[result.id] = worker.where
        self._record(result, device)

    def _provenance(self, job_id: str, device: DeviceState | None, where: dict) -> dict:
        """What a measurement's rows say of themselves: its module (as given) and that
        module's sha256, its device (the run's context names the baseline's module and
        every device), and on a cluster the node (``host_name``, ``ray_node_id``)."""
        if job_id == BASELINE_ID:
            path, sha256 = self.settings.baseline, self.baseline.sha256
        else:
            result = self.by_id[job_id]
            path, sha256 = result.path, result.sha256
        entries = {"iree_module": path}
        if sha256:  # not for a candidate that did not compile
            entries["iree_module_sha256"] = sha256
        if device is not None:
            entries["iree_devices"] = [device.spec.uri]
        return {**entries, **where}

    def _stamp(self, rows: list, job_id: str, device: DeviceState | None,
               where: dict) -> None:
        entries = self._provenance(job_id, device, where)
        for row in rows:
            row.provenance = {**row.provenance, **entries}

    def _baseline_measured(self, device: DeviceState, task: Task,
                           measurement: Measurement) -> None:
        if measurement.state is not State.OK:
            raise UsageError(f"--baseline={self.settings.baseline}: {measurement.state} on "
                             f"{device.spec.label}: {measurement.message}")
        if device.first is None:
            device.first = measurement
        device.worker.since_baseline = 0
        device.fresh = False
        entry = BaselineMeasurement(device.spec.label, measurement.seconds,
                                    measurement.device_seconds, task.sequence,
                                    measurement.elapsed, measurement.cpu_seconds,
                                    device.worker.where.get("ray_node_id", ""))
        device.baselines.append(entry)
        self.stream.write("baseline", entry.to_dict())

    def _apply(self, result: CandidateResult, measurement: Measurement, device: str,
               timeout: float | None) -> None:
        result.state, result.message = measurement.state, measurement.message
        result.device, result.timeout = device, timeout
        result.seconds, result.device_seconds = measurement.seconds, measurement.device_seconds
        result.measurement = measurement

    def _record(self, result: CandidateResult, device: DeviceState) -> None:
        """A finished candidate into the cache and the stream, with its ratio to the
        baselines known so far (:meth:`_ratios` corrects it with the next one)."""
        measurement = result.measurement
        ratio = self._ratio(result, device)
        result.first_pass_ratio = result.ratio = ratio
        if result.state is not State.NOT_MEASURED:
            self.cache.put(self._key(result.sha256, fingerprint(device.spec)), {
                "id": result.id, "device": device.spec.label, "timeout": result.timeout,
                "ratio": ratio, "measurement": measurement.to_data()})
        self._tell(result)

    def _ratio(self, result: CandidateResult, device: DeviceState) -> float | None:
        """The ranked time over the baseline's on the same device, at its moment
        (the baselines known so far: the final one corrects it in :meth:`_ratios`)."""
        if result.state is not State.OK or result.measurement is None:
            return None
        metric = self.settings.metric
        value = result.measurement.metric(metric)
        node = self.node_of.get(result.id, "")  # a lost node's baselines are its own
        points = [(entry.sequence, metric_of(entry, metric)) for entry in device.baselines
                  if entry.node == node]
        points = [(position, seconds) for position, seconds in points if seconds]
        base = interpolate(points, self.sequence_of.get(result.id, 0))
        if value is None or not base:
            return None
        return value / base

    def _tell(self, result: CandidateResult) -> None:
        """A candidate's result is known: to the stream, and a failure without rows
        of its own to the reports as its error row (as a failed benchmark is)."""
        self.stream.write("candidate", result.to_dict())
        measured = result.measurement is not None and result.measurement.rows
        if not measured and (result.state in FAILED_STATES
                             or result.state is State.NOT_MEASURED):
            self._report_rows([self._error_row(result)])

    def _error_row(self, result: CandidateResult) -> Run:
        params = self._params(result.id)
        by_label = {device.spec.label: device for device in self.devices}
        return Run(provenance=self._provenance(result.id, by_label.get(result.device),
                                               self.where_of.get(result.id, {})),
                   name=names.family_name(self.function, params),
                   run_name=names.run_name(self.function, params), function=self.function,
                   params=params, error_occurred=True,
                   error_message=f"{result.state}: {result.message}".rstrip(": "),
                   time_unit=self.config.getoption("time_unit") or "ms",
                   repetitions=self.config.getoption("benchmark_repetitions"),
                   batch_size=self.config.getoption("batch_size"))

    def _died(self, device: DeviceState) -> None:
        worker = device.worker
        if worker.lost:
            self._relocate(device)
            return
        how = worker.death()
        task = worker.busy
        held = self._held(device)
        worker.close(stop=False)
        device.worker = None
        if not worker.ready:
            raise UsageError(f"--devices={device.spec.uri}: the worker of {device.spec.label} "
                             f"{how} while opening the device")
        if task is None:
            raise UsageError(f"rank: the worker of {device.spec.label} {how} between "
                             "candidates")
        self.ranking.device_seconds += held
        self._lost(device, task, State.CRASHED, f"the worker process {how} while running it",
                   held, worker.where)

    def _relocate(self, device: DeviceState) -> None:
        """A worker lost with its node (a cluster's): not its candidate's fault. The
        candidate (or the re-rank) is measured again, first, within --ray_retries; the
        device gets a new worker, wherever Ray finds it room."""
        worker = device.worker
        task = worker.busy
        held = self._held(device)
        how = worker.death()
        worker.close(stop=False)
        device.worker = None
        device.relocated = True
        device.losses += 1
        self.ranking.device_seconds += held
        retries = self.pool.retries
        said = f"ireebench: ray: rank: the worker of {device.spec.label} {how}"
        if task is not None and task.kind == "candidate":
            result = task.candidate
            lost = self.attempts[result.id] = self.attempts.get(result.id, 0) + 1
            if lost > retries:
                result.message = (f"lost with its node {lost} time{'s' if lost > 1 else ''} "
                                  f"(--ray_retries={retries}): {how}")
                said += f"; candidate {result.id} is not measured (--ray_retries={retries})"
            else:
                self.queue.insert(0, result)
                said += f"; candidate {result.id} is measured again ({lost} of {retries})"
        elif task is not None and task.kind == "rerank":
            lost = self.attempts[BASELINE_ID] = self.attempts.get(BASELINE_ID, 0) + 1
            if lost > retries:
                self.rerank.message = f"the re-rank's worker {how}"
            else:
                self.pending_rerank = task
                said += f"; the re-rank starts again ({lost} of {retries})"
        self.config.stderr.write(said + "\n")
        if self._retired(device):
            self.config.stderr.write(f"ireebench: ray: rank: {device.spec.label} lost "
                                     f"{device.losses} workers: no more are started for it\n")
        elif self.queue or self.pending_rerank is not None:
            self._start(device)

    def _timed_out(self, device: DeviceState) -> None:
        worker = device.worker
        task = worker.busy
        if task is None and device.relocated:  # no node took the lost worker's place
            worker.close(stop=False)
            device.worker = None
            self.config.stderr.write(f"ireebench: ray: rank: no node took the place of "
                                     f"{device.spec.label}'s lost worker within "
                                     f"{START_SECONDS:g} s; the other devices go on\n")
            return
        if task is None:  # opening the device took too long
            worker.close(stop=False)
            device.worker = None
            raise UsageError(f"--devices={device.spec.uri}: the worker of {device.spec.label} "
                             f"did not open the device within {START_SECONDS:g} s")
        held = self._held(device)
        worker.close(stop=False)
        if worker.lost:  # killing it found its node gone: it was not the candidate that hung
            self._relocate(device)
            return
        device.worker = None
        self.ranking.device_seconds += held
        self._lost(device, task, State.TIMEOUT,
                   f"still running after {held:.2f} s (its timeout: {task.timeout:.2f} s); "
                   "the worker was killed", held, worker.where)

    def _lost(self, device: DeviceState, task: Task, state: State, message: str,
              held: float, where: dict) -> None:
        """A candidate that took its worker with it; a new worker takes the device."""
        if task.kind == "baseline":
            raise UsageError(f"--baseline={self.settings.baseline}: {state} on "
                             f"{device.spec.label}: {message}")
        if task.kind == "rerank":
            self.rerank.message = f"the re-rank's worker: {message}"
            return
        device.candidates += 1
        result = task.candidate
        self.where_of[result.id] = where
        result.state, result.message = state, message
        result.device, result.timeout = device.spec.label, task.timeout
        result.measurement = Measurement(state, message, elapsed=held)
        self.sequence_of[result.id] = task.sequence
        self._record(result, device)
        if self.queue or self._baseline_due(device):
            self._start(device)

    def _out_of_budget(self) -> None:
        self.stopped = "budget"
        for device in self.devices:
            worker = device.worker
            if worker is not None and worker.busy is not None:
                task = worker.busy
                if task.candidate is not None:
                    task.candidate.message = ("the --rank_budget ran out while it was being "
                                              "measured")
                    self.queue.insert(0, task.candidate)
        left = len(self.queue)
        self.config.stderr.write(
            f"ireebench: warning: rank: --rank_budget={self.settings.budget:g}s spent: "
            f"{left} candidate(s) not measured; rerun the same command to resume\n")
        self._stop_workers()

    def _stop_workers(self) -> None:
        for device in self.devices:
            if device.worker is not None:
                device.worker.close(stop=device.worker.busy is None and device.worker.ready)
                device.worker = None

    # --- 4. ratios ----------------------------------------------------------

    def _ratios(self) -> None:
        """Every candidate measured in this run, against its device's baselines
        before and after it."""
        by_label = {device.spec.label: device for device in self.devices}
        for result in self.results:
            if result.cached or result.same_as or result.state is not State.OK:
                continue
            device = by_label.get(result.device)
            if device is not None:
                result.ratio = result.first_pass_ratio = self._ratio(result, device)
                self.cache.put(self._key(result.sha256, fingerprint(device.spec)), {
                    "id": result.id, "device": device.spec.label, "timeout": result.timeout,
                    "ratio": result.ratio, "measurement": result.measurement.to_data()})

    # --- 5. the re-rank -----------------------------------------------------

    def _rerank(self) -> None:
        settings = self.settings
        if self.stopped or settings.rerank_top < 2:
            return
        ranked = self._first_pass_order()
        members = ranked[:settings.rerank_top]
        if len(members) < 2:
            return
        device = self._rerank_device()
        if device is None:
            self.rerank = Rerank("", settings.rerank_rounds, settings.seed,
                                 [member.id for member in members])
            self.rerank.message = "no device is left for the re-rank (their nodes were lost)"
            return
        self.rerank = Rerank(device.spec.label, settings.rerank_rounds, settings.seed,
                             [member.id for member in members])
        rerank_key = rank_cache.key(kind="rerank", members=[self.keys[m.id] for m in members],
                                    rounds=settings.rerank_rounds,
                                    device=fingerprint(device.spec))
        record = self.cache.get(rerank_key)
        if record is not None:
            cached = Rerank(**record["rerank"])
            cached.cached = True
            self.rerank = cached
            return
        jobs = [Job(member.id, self._jobs[member.id].path, member.sha256,
                    {"candidate": member.id, "pass": "rerank"}) for member in members]
        jobs.append(Job(BASELINE_ID, self.baseline.module, self.baseline.sha256,
                        {"candidate": BASELINE_ID, "pass": "rerank"}))
        if device.worker is None:
            self._start(device)
        self.pending_rerank = Task("rerank", jobs=jobs,
                                   timeout=self._rerank_timeout(members, device))
        self._loop()
        if self.rerank.order:
            self.cache.put(rerank_key, {"rerank": self.rerank.to_dict()})
        self.stream.write("rerank", self.rerank.to_dict())

    def _rerank_timeout(self, members: list[CandidateResult], device: DeviceState) -> float:
        settings = self.settings
        if settings.candidate_timeout is not None:
            return settings.candidate_timeout * (len(members) + 1)
        total = 0.0
        for member in [*members, None]:
            measurement = member.measurement if member is not None else device.first
            if measurement is None or not measurement.samples:
                continue
            share = measurement.elapsed * (1 + settings.rerank_rounds / len(measurement.samples))
            total += share
        return settings.timeout_factor * total + TIMEOUT_SLACK * (len(members) + 1)

    def _reranked(self, device: DeviceState, result: RerankResult) -> None:
        worker = device.worker
        worker.busy = None
        self.ranking.device_seconds += self._held(device)
        self.ranking.measured += 1
        worker.started_at = worker.deadline = None
        rerank = self.rerank
        rerank.failed = dict(result.failed)
        for member, rows in result.rows.items():
            self._stamp(rows, member, device, worker.where)
            self._report_rows(rows)
        by_round = result.cpu_seconds if self.settings.metric == "cpu_time" else result.seconds
        base = by_round.get(BASELINE_ID)
        if base is None or BASELINE_ID in result.failed:
            rerank.message = f"the baseline failed in the re-rank: " \
                             f"{result.failed.get(BASELINE_ID, 'not measured')}"
            return
        ratios: dict[str, list[float]] = {}
        for member in rerank.members:
            seconds = by_round.get(member)
            if seconds is None or member in result.failed:
                continue
            rerank.round_seconds[member] = seconds
            ratios[member] = [s / b for s, b in zip(seconds, base) if s and b]
        rerank.round_seconds[BASELINE_ID] = base
        rerank.ratios = {member: median(values) for member, values in ratios.items() if values}
        rerank.order = sorted(rerank.ratios, key=rerank.ratios.__getitem__)
        rerank.p_values = [
            signed_rank_test([math.log(a / b) for a, b in zip(rerank.round_seconds[first],
                                                               rerank.round_seconds[second])
                              if a and b])
            for first, second in zip(rerank.order, rerank.order[1:])]
        rerank.kendall_tau = kendall_tau([m for m in rerank.members if m in rerank.ratios],
                                         rerank.order)

    # --- 6. the answer --------------------------------------------------------

    def _first_pass_order(self) -> list[CandidateResult]:
        ranked = [result for result in self.results
                  if result.state is State.OK and result.first_pass_ratio is not None
                  and not result.same_as]
        return sorted(ranked, key=lambda result: result.first_pass_ratio)

    def _finish(self) -> None:
        """The ranking of what was measured (also when stopped early)."""
        ranking = self.ranking
        by_id = {result.id: result for result in self.results}
        for result in self.results:  # the same module: the same result
            if result.same_as and by_id[result.same_as].measurement is not None:
                original = by_id[result.same_as]
                for name in ("state", "message", "device", "seconds", "device_seconds",
                             "ratio", "first_pass_ratio", "timeout", "measurement", "cached"):
                    setattr(result, name, getattr(original, name))
        first = [result for result in self.results
                 if result.state is State.OK and result.first_pass_ratio is not None]
        first.sort(key=lambda result: result.first_pass_ratio)
        for position, result in enumerate(first, 1):
            result.first_pass_rank = position
        order = list(first)
        rerank = self.rerank
        if rerank is not None and rerank.order:
            reranked = [by_id[member] for member in rerank.order]
            for position, result in enumerate(reranked, 1):
                result.rerank_position = position
                result.ratio = rerank.ratios.get(result.id, result.ratio)
            others = [result for result in first if result.id not in set(rerank.order)]
            order = reranked + others
        for position, result in enumerate(order, 1):
            result.rank = position
        unranked = [result for result in self.results if result.rank is None]
        for result in unranked:
            if result.state is State.NOT_MEASURED and not result.same_as:
                self._tell(result)  # its error row: the reports hold every candidate
        ranking.candidates = order + unranked
        ranking.baseline = self.settings.baseline
        ranking.baseline_sha256 = self.baseline.sha256 if self.baseline else ""
        ranking.baselines = [entry for device in self.devices for entry in device.baselines]
        ranking.rerank = rerank
        ranking.kendall_tau = rerank.kendall_tau if rerank is not None else None
        ranking.metric = self.settings.metric
        ranking.function = self.function
        ranking.devices = [device.to_dict() for device in self.devices]
        ranking.stopped = self.stopped
        ranking.complete = not self.stopped and not any(
            result.state is State.NOT_MEASURED for result in self.results)
        ranking.wall_seconds = self._elapsed()
        summary = report.summary(ranking)
        self.stream.write("ranking", summary)

        if self.hub is not None and self.hub.context is not None:
            self.hub.context.findings["rank"] = summary
        if self.settings.rank_out:
            report.write_ranking(self.settings.rank_out, ranking)

    # --- rows -----------------------------------------------------------------

    def _ensure_context(self) -> None:
        if self._context is not None and self.hub is not None:
            context, run_names = self._context
            self._context = None
            self.hub.report_context(context, run_names)

    def _report_rows(self, rows: list) -> None:
        if not rows or self.hub is None:
            return
        self._ensure_context()
        for row in rows:
            row.family_index, row.per_family_instance_index = self.family, 0
        self.family += 1
        runs = [row for row in rows if not row.extra_row]
        extra = [row for row in rows if row.extra_row]
        self.hub.report(runs, extra)


def _iterations(measurement: Measurement) -> int:
    rows = [row for row in measurement.rows
            if row.run_type == "iteration" and not row.extra_row and row.iterations]
    return rows[0].iterations if rows else 1
