"""The ranking's schedule: candidates spread over warm workers, one per device.

:class:`Ranker` is the ``rank`` backend's ``run``. The baseline and the
candidates are resolved (``.mlir`` compiled: a candidate that does not
compile is ``compile_failed``) and hashed; the function is the baseline's
(``--function``, or its one exported function). Each candidate already in
the cache (:mod:`.cache`) is taken from it, rows and all; candidates with
the same bytes are measured once. One warm worker per device
(:mod:`.worker`, :mod:`.devices`) takes the baseline (:mod:`.drift`) or the
next candidate whenever it is free; :mod:`.losses` handles what stops one,
:mod:`.rerank` the re-rank of the best. The workers measure with the run's
configuration derived for the ranking (``--function`` the baseline's).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import select
import time
from dataclasses import dataclass, field

import iree.runtime as rt
from ireebench import module_functions, names
from ireebench.backend import file_sha256, machine_context
from ireebench.errors import Terminated, UsageError
from ireebench.lib.channel import decode_error

from . import cache as rank_cache
from . import race, replay, report, rerank
from .candidates import Candidate, resolve, resolve_all
from .devices import DeviceSpec, fingerprint, worker_devices
from .drift import BASELINE_ID, Baselines
from .losses import START_SECONDS, Losses
from .measure import Job, RerankResult
from .report import Rows
from .results import (
    BaselineMeasurement,
    CandidateResult,
    Measurement,
    Ranking,
    Rerank,
    State,
    metric_of,
)
from .settings import RankSettings
from .stash import RANKED_METRIC
from .worker import LocalWorkers, WorkerProcess

SNAPSHOT_SECONDS = 1.0  # --rank_out rewritten at most this often while ranking

@dataclass
class Task:
    """What a worker is doing."""

    kind: str  # "baseline", "candidate" or "rerank"
    job: Job | None = None
    candidate: CandidateResult | None = None
    jobs: list[Job] = field(default_factory=list)  # a re-rank's members
    timeout: float | None = None
    sequence: int = 0  # its place in its device's order of measurements
    rounds: int = 0  # a re-rank's, and the seed of its order
    seed: int = 0


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
    seconds: float = 0.0  # how long its workers held it
    # On a cluster: its worker was lost with its node (the next may be elsewhere),
    # and how often.
    relocated: bool = False
    losses: int = 0

    def to_dict(self) -> dict:
        return {**self.spec.to_dict(), "worker": dict(self.worker_info),
                "baselines": len(self.baselines), "candidates": self.candidates}

    def held(self) -> float:
        """How long its worker has held it for its task."""
        started = self.worker.started_at
        return time.monotonic() - started if started else 0.0

    def done(self) -> Task:
        """Its worker's task, finished: the worker is free."""
        worker, self.seconds = self.worker, self.seconds + self.held()
        task, worker.busy = worker.busy, None
        worker.started_at = worker.deadline = None
        return task

    def release(self) -> float:
        """Its worker closed, not asked to stop (it died, or is killed): the time held."""
        self.seconds += (held := self.held())
        self.worker.close(stop=False)
        self.worker = None
        return held


class Ranker:
    """The ``rank`` backend (see the module docstring)."""

    def __init__(self, config, settings: RankSettings, candidates: list[Candidate]):
        self.config = config
        self.settings = settings
        self.candidates = candidates
        self.ranking = Ranking(0, [])
        self.results: list[CandidateResult] = []
        self.told = 0  # candidates done (a progress line each)
        self.devices: list[DeviceState] = []
        self.queue: list[CandidateResult] = []
        self.jobs: dict[str, Job] = {}  # candidate id -> its job (a module it compiled to)
        self.key = None  # a candidate's cache key (:func:`.cache.key`), once its fields are known
        self.cache = rank_cache.RankCache(None)
        self.stream = rank_cache.Stream(None)
        self.baselines: Baselines | None = None
        self.losses = Losses(self)
        self.rows = Rows(config, self.devices)
        self.rerank: Rerank | None = None
        self.pending_rerank: Task | None = None  # for the first device, once it is free
        # Where the workers run (LocalWorkers, remote.RayWorkers); the plugin flags of a node's.
        self.pool = None
        self.selection: list[str] = []
        self.next_snapshot = 0.0  # when --rank_out may be rewritten next (_snapshot)

    # --- the whole ranking ------------------------------------------------

    def run(self, config, hub) -> int:
        self.rows.hub = hub
        report.quiet_console(config, hub, self.settings.rank_rows)
        self.losses = Losses(self)
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
        self.devices[:] = [DeviceState(spec) for spec in specs]
        self.cache = rank_cache.RankCache(settings.cache, settings.remeasure).open()
        self.stream = rank_cache.Stream(settings.rank_stream)
        config.stash[RANKED_METRIC] = settings.metric  # the workers' stopping rule
        try:
            if on_ray:
                self.pool = RayWorkers(config, self.selection, specs).open()
            measuring = self._prepare()
            if self.pool is None:  # forked from here, measuring with the derived configuration
                self.pool = LocalWorkers(measuring)
            if self.queue:  # the first pass
                for device in self.devices:
                    self.start(device)
                self._loop()
            self._ratios()
            self._rerank()
            self.rows.ensure_context()  # a ranking without rows (all failed early) has one too
        except BaseException as exc:  # the ranking's one line says which
            interrupted = isinstance(exc, (KeyboardInterrupt, Terminated))
            self.losses.stopped = self.losses.stopped or ("interrupted" if interrupted
                                                          else "error")
            raise
        finally:
            self.losses.stop_workers()
            if self.pool is not None:
                self.pool.close()
            self._finish(hub)
            self.stream.close()
            if self.losses.stopped != "error":  # interrupted (Ctrl-C): what was measured
                report.print_ranking(config, self.ranking)
        return 0

    def _drift(self, result: CandidateResult) -> float:
        """How far apart the baseline's measurements on ``result``'s device are
        (largest over smallest, minus 1)."""
        device = next((d for d in self.devices if d.spec.label == result.device), None)
        values = [metric_of(entry, self.settings.metric) for entry in
                  (device.baselines if device else [])]
        values = [value for value in values if value]
        return max(values) / min(values) - 1 if len(values) > 1 else 0.0

    def device_seconds(self) -> float:
        """The time workers held their devices so far (a race's budget is spent on it)."""
        return sum(device.seconds for device in self.devices)

    # --- 1. what to measure -------------------------------------------------

    def _prepare(self):
        """The candidates resolved, taken from the cache or queued; the configuration
        the workers measure with (the run's, with the baseline's function)."""
        config, settings = self.config, self.settings
        compiling = config.for_point(dict(config.options, device=(self.devices[0].spec.uri,)),
                                     list(config.runtime_flags), {})
        if settings.replay:  # the capture is the baseline (replayed unchanged)
            replay.check_executable(settings.replay, settings.executable)
            baseline = Candidate(BASELINE_ID, settings.replay, settings.replay,
                                 file_sha256(settings.replay))
            function = replay.FUNCTION
        else:
            baseline = resolve(compiling, Candidate(BASELINE_ID, settings.baseline))
            if baseline.state is not None:
                raise UsageError(f"--baseline={settings.baseline}: {baseline.message}")
            function = _function(compiling, baseline, settings.baseline)
        self.rows.function = function
        self.baselines = Baselines(settings, baseline, self.stream)
        # A candidate's cache key, but its module and its device's fingerprint.
        self.key = functools.partial(
            rank_cache.key, kind="candidate", function=function, baseline=baseline.sha256,
            inputs=rank_cache.inputs_identity(list(config.getoption("input") or [])),
            flags=rank_cache.measuring_flags(config), device="")
        resolve_all(compiling, self.candidates)
        for candidate in self.candidates:
            result = CandidateResult(candidate.id, candidate.path, candidate.sha256)
            if candidate.state is not None:
                result.state, result.message = candidate.state, candidate.message
            else:
                self.jobs[candidate.id] = Job(candidate.id, candidate.module, candidate.sha256,
                                              {"candidate": candidate.id})
            self.results.append(result)
            self.rows.modules[result.id] = (result.path, result.sha256)
        self.rows.modules[BASELINE_ID] = (settings.baseline, baseline.sha256)
        context = machine_context(config)
        context.extra["rank"] = {"baseline": os.path.abspath(settings.baseline),
                                 "baseline_sha256": baseline.sha256, "function": function,
                                 "devices": [d.spec.to_dict() for d in self.devices],
                                 **({"replay_executable": settings.executable}
                                    if settings.replay else {})}
        # Reported before the first rows: a device or input the workers refuse
        # is then one line without a context block before it.
        self.rows.context = (context, [names.run_name(function, {"candidate": result.id})
                                       for result in self.results])
        measuring: dict[str, CandidateResult] = {}  # sha256 -> the one measured
        for result in self.results:
            if result.state is not State.NOT_MEASURED:
                self._tell(result)
            elif (record := self._cached(result.sha256)) is not None:
                self._from_cache(result, record)
            elif result.sha256 in measuring:
                result.same_as = measuring[result.sha256].id
            else:
                measuring[result.sha256] = result
                self.queue.append(result)
        # Every point measures it by name, a native pass too (--device_time): without
        # --function the native tool discovers functions itself and runs none that takes
        # arguments. (Not in the cache's key: it is the function's own field.)
        return config.for_point(dict(config.options, function=function),
                                list(config.runtime_flags), {})

    def _cached(self, sha256: str) -> dict | None:
        records = (self.cache.get(self.key(module=sha256, device=device_fingerprint))
                   for device_fingerprint in dict.fromkeys(fingerprint(d.spec)
                                                           for d in self.devices))
        return next((record for record in records if record is not None), None)

    def _from_cache(self, result: CandidateResult, record: dict) -> None:
        measurement = Measurement.from_data(record["measurement"])
        self.apply(result, measurement, record.get("device", ""), record.get("timeout"))
        result.ratio = result.first_pass_ratio = record.get("ratio")
        result.cached = True
        self.ranking.from_cache += 1
        self.rows.report(measurement.rows, result.id, None, {})  # its node: as measured then
        self._tell(result)

    # --- 2. the first pass ------------------------------------------------

    def start(self, device: DeviceState) -> None:
        """A new worker for ``device`` (it opens the device with the baseline)."""
        device.worker = self.pool.start(device.spec, self.rows.function, self.baselines.job(),
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
                self.losses.abandon_relocated()
            active = [device for device in self.devices if device.worker is not None
                      and (device.worker.busy is not None or not device.worker.ready)]
            if not active:
                return
            left = self.losses.budget_left()
            if left is not None and left <= 0:
                self.losses.out_of_budget()
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
                        self.losses.died(device)
                if device.worker is worker and worker.deadline is not None \
                        and answered >= worker.deadline:
                    self.losses.timed_out(device)

    def _assign(self, device: DeviceState) -> None:
        """The next task of a free worker, if any: its first baseline, the re-rank
        (the first device's), the baseline again every K candidates, the next
        candidate, the last baseline after its last candidate."""
        if self.pending_rerank is not None and not device.fresh:
            if device is rerank.device(self.devices, self.losses.retired):
                task, self.pending_rerank = self.pending_rerank, None
                self.rerank.device = device.spec.label
                self._send(device, task)
        elif device.fresh or (self.queue and device.worker.since_baseline
                              >= self.settings.baseline_every) \
                or (not self.queue and self.baselines.due(device)):
            # Only an explicit --candidate_timeout: a derived one needs this very time.
            self._send(device, Task("baseline", self.baselines.job(device),
                                    timeout=self.settings.candidate_timeout))
        elif self.queue:
            result = self.queue.pop(0)
            self._send(device, Task("candidate", self.jobs[result.id], result,
                                    timeout=self.baselines.timeout(device)))

    def _send(self, device: DeviceState, task: Task) -> None:
        worker = device.worker
        device.sequence += 1
        task.sequence = device.sequence
        worker.busy = task
        worker.started_at = worker.deadline = None
        if task.kind == "rerank":
            sent = worker.send("rerank", [job.to_data() for job in task.jobs],
                               task.rounds, task.seed)
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
            raise _device_error(device, decode_error(args[0]))
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

    def _measured(self, device: DeviceState, measurement: Measurement) -> None:
        worker, task = device.worker, device.done()
        self.ranking.measured += 1
        self.ranking.imprecise += measurement.imprecise
        self.rows.report(measurement.rows, task.job.id, device, worker.where)
        node = worker.where.get("ray_node_id", "")
        if task.kind == "baseline":
            worker.since_baseline = 0
            self.baselines.measured(device, task.sequence, measurement, node)
            return
        device.candidates += 1
        result = task.candidate
        self.apply(result, measurement, device.spec.label, task.timeout)
        self.baselines.placed[result.id] = (task.sequence, node)
        self.rows.where_of[result.id] = worker.where
        self.record(result, device)

    def apply(self, result: CandidateResult, measurement: Measurement, device: str,
              timeout: float | None) -> None:
        result.state, result.message = measurement.state, measurement.message
        result.device, result.timeout = device, timeout
        # The metric it is ranked by (--rank_by), as the table shows it: a winner's
        # seconds are what made it the winner, not its wall time under cpu_time.
        result.seconds = metric_of(measurement, self.settings.metric)
        result.device_seconds = measurement.device_seconds
        result.measurement = measurement

    def record(self, result: CandidateResult, device: DeviceState, tell: bool = True) -> None:
        """A finished candidate into the cache and the stream, with its ratio to the
        baselines known so far (:meth:`_ratios` corrects it with the next one)."""
        result.first_pass_ratio = result.ratio = self.baselines.ratio(result, device)
        if result.state is not State.NOT_MEASURED:
            self.cache.put(self.key(module=result.sha256, device=fingerprint(device.spec)), {
                "id": result.id, "device": device.spec.label, "timeout": result.timeout,
                "ratio": result.ratio, "measurement": result.measurement.to_data()})
        if tell:
            self._snapshot()
            self._tell(result)

    def _snapshot(self) -> None:
        """``--rank_out`` while the ranking runs, rewritten (atomically) at most every
        :data:`SNAPSHOT_SECONDS`: the candidates known so far by their first-pass
        ratio, ``complete`` false and ``stopped`` "running" (the end writes the answer)."""
        settings = self.settings
        if not settings.rank_out or time.monotonic() < self.next_snapshot:
            return
        self.next_snapshot = time.monotonic() + SNAPSHOT_SECONDS
        confidence = self.config.getoption("confidence")
        ranked = rerank.final_order(self.results, None, settings.metric,
                                    float(confidence) if confidence else None)
        report.write_ranking(settings.rank_out, dataclasses.replace(
            self.ranking, candidates=ranked + [r for r in self.results if r.rank is None],
            baseline=settings.baseline, metric=settings.metric, function=self.rows.function,
            complete=False, stopped="running", device_seconds=self.device_seconds(),
            wall_seconds=self.losses.elapsed()))

    def _tell(self, result: CandidateResult) -> None:
        """A candidate's result is known: to the stream, and a failure without rows
        of its own to the reports as its error row (as a failed benchmark is)."""
        self.stream.write("candidate", result.to_dict())
        if result.state is not State.NOT_MEASURED:
            self.told += 1
            report.progress(self.config, result, self.told, len(self.results))
        if result.state is not State.OK and not (result.measurement and result.measurement.rows):
            self.rows.report([self.rows.error_row(result)])

    # --- 3. ratios ----------------------------------------------------------

    def _ratios(self) -> None:
        """Every candidate measured in this run, against its device's baselines
        before and after it."""
        by_label = {device.spec.label: device for device in self.devices}
        for result in self.results:
            if result.state is State.OK and not (result.cached or result.same_as) \
                    and result.device in by_label:
                self.record(result, by_label[result.device], tell=False)

    # --- 4. the re-rank -----------------------------------------------------

    def _rerank(self) -> None:
        settings = self.settings
        if self.losses.stopped or settings.rerank_top < 2:
            return
        if settings.race_budget is None:
            members = sorted((result for result in self.results
                              if result.state is State.OK and result.first_pass_ratio is not None
                              and not result.same_as),
                             key=lambda result: result.first_pass_ratio)[:settings.rerank_top]
            plan, repetition = [(len(members), settings.rerank_rounds)], 0.0
        else:  # the finalists, halved stage by stage for what is left of the budget
            members = race.finalists(self.results, settings.metric,
                                     race.most_finalists(len(self.results), settings.rerank_top),
                                     self._drift)
            repetition = race.repetition_seconds(self.config.getoption("benchmark_min_time"))
            if settings.replay:  # each of its samples is a native process: its start too
                repetition += max((device.first.load_seconds for device in self.devices
                                   if device.first), default=0.0)
            plan = race.stages(settings.race_budget, self.device_seconds(), len(members),
                               repetition)
        if len(members) < 2:
            return
        device = rerank.device(self.devices, self.losses.retired)
        self.rerank = Rerank(device.spec.label if device else "",
                             sum(rounds for _, rounds in plan), settings.seed,
                             [member.id for member in members])
        if device is None:
            self.rerank.message = "no device is left for the re-rank (their nodes were lost)"
            return
        rerank_key = rank_cache.key(kind="rerank", rounds=self.rerank.rounds,
                                    members=[self.key(module=m.sha256) for m in members],
                                    device=fingerprint(device.spec),
                                    **({"stages": plan} if len(plan) > 1 else {}))
        record = self.cache.get(rerank_key)
        if record is not None:
            self.rerank = Rerank(**record["rerank"])
            self.rerank.cached = True
            return
        by_id = {member.id: member for member in members}
        ran = []
        for stage, (count, rounds) in enumerate(plan):
            alive = [by_id[member] for member in (self.rerank.order[:count] if stage
                                                  else by_id)]
            if len(alive) < 2 or (stage and self.losses.stopped):
                break
            if stage:  # planned again from what is left: a loaded machine's rounds cost more
                rounds = race.stages(settings.race_budget, self.device_seconds(), count,
                                     repetition)[0][1]
            ran.append(rounds)
            if len(plan) > 1:
                self.rerank.stages.append([member.id for member in alive])
            jobs = [Job(member.id, self.jobs[member.id].path, member.sha256,
                        {"candidate": member.id, "pass": "rerank"}) for member in alive]
            jobs.append(self.baselines.job(**{"pass": "rerank"}))
            if device.worker is None:
                self.start(device)
            self.pending_rerank = Task("rerank", jobs=jobs, rounds=rounds,
                                       seed=settings.seed + stage,
                                       timeout=rerank.timeout(settings, alive, device.first,
                                                              rounds))
            self._loop()
            if not self.rerank.order or self.rerank.message:
                break
        self.rerank.rounds = sum(ran)
        if self.rerank.order:
            self.cache.put(rerank_key, {"rerank": self.rerank.to_dict()})
        self.stream.write("rerank", self.rerank.to_dict())

    def _reranked(self, device: DeviceState, result: RerankResult) -> None:
        worker, _ = device.worker, device.done()
        self.ranking.measured += 1
        for member, rows in result.rows.items():
            self.rows.report(rows, member, device, worker.where)
        rerank.judge(self.rerank, result, self.settings.metric)

    # --- 5. the answer --------------------------------------------------------

    def _finish(self, hub) -> None:
        """The ranking of what was measured (also when stopped early)."""
        ranking, settings = self.ranking, self.settings
        confidence = self.config.getoption("confidence")
        ranked = rerank.final_order(self.results, self.rerank, settings.metric,
                                    float(confidence) if confidence else None)
        for result in self.results:
            if result.rank is None and result.state is State.NOT_MEASURED \
                    and not result.same_as:
                self._tell(result)  # its error row: the reports hold every candidate
        ranking.candidates = ranked + [result for result in self.results
                                       if result.rank is None]
        ranking.baseline = settings.baseline
        ranking.baseline_sha256 = self.baselines.baseline.sha256 if self.baselines else ""
        ranking.baselines = [entry for device in self.devices for entry in device.baselines]
        ranking.rerank = self.rerank
        ranking.kendall_tau = self.rerank.kendall_tau if self.rerank is not None else None
        ranking.metric = settings.metric
        ranking.function = self.rows.function
        ranking.devices = [device.to_dict() for device in self.devices]
        ranking.device_seconds = self.device_seconds()
        ranking.stopped = self.losses.stopped
        ranking.complete = not ranking.stopped and not any(
            result.state is State.NOT_MEASURED for result in self.results)
        ranking.wall_seconds = self.losses.elapsed()
        summary = report.summary(ranking)
        self.stream.write("ranking", summary)
        if hub is not None and hub.context is not None:
            hub.context.findings["rank"] = summary
        if settings.rank_out:
            report.write_ranking(settings.rank_out, ranking)


def _function(config, baseline: Candidate, given: str) -> str:
    """The function to rank: ``--function``, else the baseline's one exported function."""
    wanted = config.getoption("function")
    point = config.for_point(dict(config.options, module=(baseline.module,)),
                             list(config.runtime_flags), {})
    exported = [function.name for function in module_functions(point)
                if not names.is_internal(function.name)]
    if wanted:
        if wanted not in exported:
            raise UsageError(f"--function={wanted}: the baseline {given} exports no such "
                             f"function (exports: {', '.join(exported) or 'none'})")
        return wanted
    if len(exported) != 1:
        raise UsageError(f"rank: --function: the baseline {given} exports {len(exported)} "
                         f"functions ({', '.join(exported) or 'none'}); name the one to rank")
    return exported[0]


def _device_error(device: DeviceState, error: BaseException) -> BaseException:
    """A worker that could not start: its device named as --devices names it."""
    prefix = f"--device={device.spec.uri}: "
    if not isinstance(error, UsageError) or not str(error).startswith(prefix):
        return error  # it names its flag (an input the baseline refuses ...)
    return UsageError(f"--devices={device.spec.uri}: worker {device.spec.label}: "
                      f"{str(error).removeprefix(prefix)}", status=error.status)
