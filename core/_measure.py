"""The measurement loop, with Google Benchmark's semantics.

For each workload, in order:

1. **Warm-up** (``--benchmark_min_warmup_time``): iterations grown by the
   calibration rule until they last that long; discarded.
2. **Calibration** (a time ``--benchmark_min_time``, default ``0.5s``):
   Google Benchmark's BenchmarkRunner rule. Start at one batch; while a run
   is under the minimum time, grow ×10 when it took under 10 % of it, else
   predict ``1.4·min_time/t`` times its count. Google Benchmark reports the
   first run that reaches the minimum time as the first repetition; here the
   calibration ends one step earlier, at the count that run would have, and
   the first repetition measures that count afresh. So calibration never
   shares a timed region with a repetition (a profiler bracketing a
   repetition sees only measured iterations), the first invocation after
   loading (its cold start) is never part of a repetition, and the wall time
   is Google Benchmark's. Like Google Benchmark, a first repetition that
   still falls short of the minimum time (the machine ran faster than
   calibration saw) grows by the same rule and is measured again
   (``Repetition.retry`` counts these). With an iteration count (``20x``)
   there is no calibration, as in Google Benchmark.
3. **Repetitions**: each is one call of the ``ireebench_measure_repetition``
   hook with the calibrated count (its built-in implementation is
   :func:`time_repetition`); after each successful one,
   ``ireebench_continue_repetitions`` decides whether another follows (the
   built-in rule: ``--benchmark_repetitions`` of them; the ``statistics``
   plugin's adaptive stopping measures until the median is precise enough).
   When the count differs from ``--benchmark_repetitions``, every row's
   ``repetitions`` is set to the count measured, once it is known.
4. **Aggregates**: Google Benchmark's four, then the statistics a plugin
   listed in ``config.stash[stats.EXTRA_STATISTICS]``.

Timed: ``batch.execute()``. Untimed: ``kind.prepare()``. For kinds whose
batch is reusable the batch is prepared before the hook is called and the
loop times all batches at once, so no per-batch timer call or Python
bookkeeping sits inside the timed region. Kinds whose batches are prepared
anew are timed batch by batch anyway; their per-batch times are kept
(``Run.batch_samples``), appended after each batch's clock is read.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ._pluginmanager import plugin_file
from .errors import DEBUG_ENV, PluginError, one_line
from .hookcall import call_hook, plugin_of_exception, plugin_of_files
from .results import Counter, Run
from .stats import EXTRA_STATISTICS, STATISTICS, compute_aggregates

MAX_ITERATIONS = 1_000_000_000
# How often a first repetition short of the minimum time is measured again
# (each time with more iterations); a bound, so that a measure_repetition
# plugin that ignores the requested count cannot loop forever.
MAX_RETRIES = 10


@dataclass
class Sample:
    iterations: int  # logical iterations (a multiple of the batch size)
    real_seconds: float
    cpu_seconds: float
    batch: object  # the last executed batch (its outputs are the last outputs)
    # Real seconds of each batch, for kinds timed batch by batch (not reusable).
    batch_seconds: list[float] = field(default_factory=list)


@dataclass
class Repetition:
    """One repetition of a workload, as ``ireebench_measure_repetition`` gets it.

    ``batch`` is the prepared :class:`ireebench.Batch` object (of a kind with
    ``reusable_batch``; None otherwise), not a count: ``iterations`` is the
    count, in logical iterations (a multiple of the workload's batch size).
    """

    index: int  # 0-based
    # How many the workload runs: --benchmark_repetitions. A stopping rule
    # (ireebench_continue_repetitions) may measure more or fewer; the rows
    # are then given the final count once it is known.
    repetitions: int
    iterations: int  # logical iterations to measure (a multiple of the batch size)
    session: object  # the in-process Session
    # The prepared batch (kinds with ``reusable_batch``; None otherwise);
    # after measuring, the batch of the last measured iteration.
    batch: object = None
    # 0, or how many times this first repetition was measured again because
    # it fell short of --benchmark_min_time (see measure_workload).
    retry: int = 0


class BenchmarkFailure(Exception):
    """A benchmark failed while running; the message becomes its error row."""


def failure_message(exc: BaseException) -> str:
    """The runtime's status text on one line, as the native tool reports it."""
    text = one_line(exc) or type(exc).__name__
    # The bindings prefix the IREE status with their own words.
    return text.removeprefix("Error invoking function: ")


def kind_failure(session, workload, exc: BaseException) -> str:
    """The error row of an exception in a kind's ``prepare``/``execute``: the runtime's
    text; a third party's kind's also names its plugin (the innermost plugin frame,
    else the kind's class) and the exception's type. ``IREEBENCH_DEBUG=1``: its
    traceback on stderr too."""
    message, config = failure_message(exc), getattr(session, "config", None)
    if config is None:
        return message
    if os.environ.get(DEBUG_ENV):
        import traceback
        config.stderr.write("".join(traceback.format_exception(exc)))
    builtin = [name for name, info in config.pm.infos.items() if info.builtin]
    plugin = plugin_of_exception(config.pm, exc)
    if plugin is None or plugin in builtin:
        path = plugin_file(workload.kind)
        plugin = plugin_of_files(config.pm, [path]) if path else None
    if plugin is None or plugin in builtin:
        return message  # the runtime's failure, as the native tool reports it
    info = config.pm.infos.get(plugin)
    where = f" of {info.distribution}" if info is not None and info.distribution else ""
    return (f"plugin {plugin!r}{where} (kind {workload.kind.name!r}) raised "
            f"{type(exc).__name__}: {message}")


def run_iterations(workload, session, iterations: int, batch=None) -> Sample:
    """Runs at least ``iterations`` logical iterations in whole batches.

    ``batch``: an already prepared batch of a reusable kind (prepared here
    when None).
    """
    kind = workload.kind
    batches = max(1, -(-iterations // workload.batch_size))
    perf_counter, process_time = time.perf_counter, time.process_time
    batch_seconds: list[float] = []
    try:
        if kind.reusable_batch:
            if batch is None:
                batch = kind.prepare(workload, session)
            execute = batch.execute
            loop = range(batches)
            cpu_start = process_time()
            start = perf_counter()
            for _ in loop:
                execute()
            real = perf_counter() - start
            cpu = process_time() - cpu_start
        else:
            real = cpu = 0.0
            for _ in range(batches):
                batch = kind.prepare(workload, session)
                cpu_start = process_time()
                start = perf_counter()
                batch.execute()
                elapsed = perf_counter() - start
                cpu += process_time() - cpu_start
                real += elapsed
                batch_seconds.append(elapsed)
    except BenchmarkFailure:
        raise
    except Exception as exc:
        raise BenchmarkFailure(kind_failure(session, workload, exc)) from exc
    return Sample(batches * workload.batch_size, real, cpu, batch, batch_seconds)


def _reached(sample: Sample, min_time: float) -> bool:
    # Google Benchmark also stops at 5x min_time of real time, which matters
    # only for manual timers; ireebench always times real time.
    return sample.iterations >= MAX_ITERATIONS or sample.real_seconds >= min_time


def _significant(sample: Sample, min_time: float) -> bool:
    return sample.real_seconds / min_time > 0.1


def _predict_iterations(sample: Sample, min_time: float) -> int:
    multiplier = min_time * 1.4 / max(sample.real_seconds, 1e-9)
    multiplier = multiplier if _significant(sample, min_time) else 10.0
    next_count = round(max(multiplier * sample.iterations, sample.iterations + 1.0))
    return min(next_count, MAX_ITERATIONS)


def warm_up(workload, session, seconds: float) -> None:
    """Runs (and discards) iterations grown by the calibration rule for ``seconds``."""
    requested = 1
    while True:
        sample = run_iterations(workload, session, requested)
        if _reached(sample, seconds):
            return
        requested = _predict_iterations(sample, seconds)


def calibrate(workload, session, min_time: float) -> int:
    """The logical iterations of every repetition (see the module docstring)."""
    requested = 1
    while True:
        sample = run_iterations(workload, session, requested)
        if _reached(sample, min_time):
            return sample.iterations  # Google Benchmark would report this run
        following = _predict_iterations(sample, min_time)
        if _significant(sample, min_time):
            return following  # Google Benchmark would report the run of this count
        requested = following


def iteration_count(config, workload, session) -> int:
    """Warm-up, then the count every repetition measures (no calibration for ``Nx``)."""
    if config.getoption("benchmark_dry_run"):
        return workload.batch_size
    if config.min_warmup_time > 0:
        warm_up(workload, session, config.min_warmup_time)
    explicit = config.min_time.iterations
    if explicit is not None:
        return max(1, -(-explicit // workload.batch_size)) * workload.batch_size
    return calibrate(workload, session, config.min_time.seconds)


def new_run(workload, repetitions: int, index: int) -> Run:
    """An empty row of one repetition of ``workload``."""
    return Run(
        name=workload.name,
        run_name=workload.run_name,
        function=workload.function.name,
        params=dict(workload.params),
        time_unit=workload.time_unit,
        repetitions=repetitions,
        repetition_index=index,
        batch_size=workload.batch_size,
    )


def error_run(workload, repetitions: int, index: int, message: str) -> Run:
    run = new_run(workload, repetitions, index)
    run.error_occurred = True
    run.error_message = message
    return run


def time_repetition(workload, repetition: Repetition) -> Run:
    """Measures one repetition: the built-in ``ireebench_measure_repetition``."""
    run = new_run(workload, repetition.repetitions, repetition.index)
    try:
        sample = run_iterations(workload, repetition.session, repetition.iterations,
                                repetition.batch)
    except BenchmarkFailure as exc:
        run.error_occurred = True
        run.error_message = str(exc)
        return run
    repetition.batch = sample.batch
    run.iterations = sample.iterations
    run.real_accumulated_time = sample.real_seconds
    run.cpu_accumulated_time = sample.cpu_seconds
    run.samples = [sample.real_seconds / sample.iterations]
    run.batch_samples = [seconds / workload.batch_size for seconds in sample.batch_seconds]
    items_per_second = sample.iterations / sample.real_seconds if sample.real_seconds else 0.0
    run.counters["items_per_second"] = Counter(items_per_second, is_rate=True)
    return run


def measure_workload(config, session, workload) -> list[Run]:
    """Warm-up, calibration, then every repetition through the hook; plus aggregates.

    A failing repetition ends the workload (the remaining ones would fail
    the same way). After each successful repetition the stopping rule
    (``ireebench_continue_repetitions``) decides whether another follows.
    ``workload.last_batch`` is left holding the batch of the last measured
    iteration (for ``ireebench_workload_finish``).
    """
    measurement = WorkloadMeasurement(config, session, workload)
    measurement.start()
    while not measurement.done:
        measurement.step()
    return measurement.finish()


class WorkloadMeasurement:
    """One workload's measurement, a repetition at a time (see :func:`measure_workload`).

    ``start()`` warms up and calibrates; each ``step()`` measures one
    repetition (with its retries) and asks the stopping rule; ``done`` says
    when no repetition follows; ``finish()`` returns the rows with their
    aggregates. So the repetitions of several workloads can be interleaved
    (``--benchmark_enable_random_interleaving``), each keeping its own
    calibration and stopping rule.
    """

    def __init__(self, config, session, workload):
        self.config = config
        self.session = session
        self.workload = workload
        self.dry_run = config.getoption("benchmark_dry_run")
        self.planned = 1 if self.dry_run else config.getoption("benchmark_repetitions")
        self.iterations = 0
        self.runs: list[Run] = []
        self.done = False

    def start(self) -> None:
        """Warm-up and calibration (a failure is the workload's error row)."""
        try:
            self.iterations = iteration_count(self.config, self.workload, self.session)
        except BenchmarkFailure as exc:
            self.runs = [error_run(self.workload, self.planned, 0, str(exc))]
            self.done = True

    def step(self) -> None:
        """Measures the next repetition, then decides whether another follows."""
        config, session, workload = self.config, self.session, self.workload
        index, planned = len(self.runs), self.planned
        # The previous repetition's batch (and the results it holds) goes
        # before the next one is prepared: one set of results is alive at a
        # time, as in the native tool's loop (--memory_statistics sees it).
        workload.last_batch = None
        run, repetition = _repetition(config, session, workload, index, planned,
                                      self.iterations)
        while index == 0 and repetition.retry < MAX_RETRIES and _falls_short(config, run) \
                and run.iterations >= self.iterations:
            # Google Benchmark reports only a first repetition that reached
            # the minimum time; one that fell short (the machine got faster
            # than calibration saw) grows by its rule and is measured again.
            self.iterations = _predict_iterations(
                Sample(run.iterations, run.real_accumulated_time, 0.0, None),
                config.min_time.seconds)
            run, repetition = _repetition(config, session, workload, index, planned,
                                          self.iterations, repetition.retry + 1)
        self.runs.append(run)
        if run.error_occurred:
            self.done = True
            return
        workload.last_batch = repetition.batch
        if self.dry_run:
            self.done = True
            return
        more = call_hook(config.pm, "ireebench_continue_repetitions", config=config,
                         workload=workload, runs=list(self.runs))
        self.done = not (len(self.runs) < planned if more is None else more)

    def finish(self) -> list[Run]:
        """The repetitions (their count fixed up) and the aggregates."""
        runs, planned = self.runs, self.planned
        # The count is known only now. A failure within the planned count keeps
        # it, as Google Benchmark does.
        if len(runs) > planned or (not runs[-1].error_occurred and len(runs) != planned):
            for run in runs:
                run.repetitions = len(runs)
        statistics = STATISTICS + list(self.config.stash.get(EXTRA_STATISTICS, []))
        return runs + compute_aggregates(runs, statistics)


def _falls_short(config, run: Run) -> bool:
    seconds = config.min_time.seconds
    return (seconds is not None and not run.error_occurred
            and not config.getoption("benchmark_dry_run")
            and run.iterations < MAX_ITERATIONS and run.real_accumulated_time < seconds)


def _repetition(config, session, workload, index: int, repetitions: int, iterations: int,
                retry: int = 0) -> tuple[Run, Repetition]:
    """Prepares and measures one repetition through ``ireebench_measure_repetition``."""
    repetition = Repetition(index, repetitions, iterations, session, retry=retry)
    if workload.kind.reusable_batch:
        try:
            repetition.batch = workload.kind.prepare(workload, session)
        except Exception as exc:  # noqa: BLE001 - the runtime's failure is the row
            return error_run(workload, repetitions, index,
                             kind_failure(session, workload, exc)), repetition
    run = call_hook(config.pm, "ireebench_measure_repetition", config=config,
                    workload=workload, repetition=repetition)
    if run is None:
        _refuse_lost_result(config)
        run = error_run(workload, repetitions, index,
                        "no plugin implements ireebench_measure_repetition")
    return run, repetition


def _refuse_lost_result(config) -> None:
    """A wrapper that forgot ``return (yield)`` turned the built-in's row into None.

    Without wrappers, None means nobody measured (the built-in is blocked):
    that is the benchmark's error row. With wrappers, it is a plugin's bug,
    named as such rather than turning every row into that error.
    """
    wrappers = [impl.plugin_name for impl in
                config.pm.hook.ireebench_measure_repetition.get_hookimpls()
                if impl.wrapper or impl.hookwrapper]
    if wrappers:
        who = " or ".join(repr(name) for name in wrappers)
        raise PluginError("ireebench_measure_repetition", wrappers[0] if len(wrappers) == 1
                          else None,
                          ValueError(f"the wrapper of plugin {who} returned None instead of "
                                     "the row: end it with `return (yield)`"))
