"""The measurement loop, with Google Benchmark's semantics.

Iterations are calibrated like Google Benchmark's BenchmarkRunner: start at 1
(or the explicit ``Nx`` count), and while the real time is under the minimum
time, grow ×10 when under 10% of it, else to 1.4·min_time/t of the last
count. Each measurement runs whole batches (iterations are a multiple of the
batch size). The count is calibrated on the first repetition only; later
repetitions reuse it. A warm-up of ``--benchmark_min_warmup_time`` runs
first with the same growth rule and is discarded.

Timed: ``batch.execute()``. Untimed: ``kind.prepare()``. For kinds whose
batch is reusable the loop times all batches at once, so no per-batch timer
call or Python bookkeeping sits inside the timed region.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .errors import one_line
from .results import Counter, Run

MAX_ITERATIONS = 1_000_000_000


@dataclass
class Sample:
    iterations: int  # logical iterations (a multiple of the batch size)
    real_seconds: float
    cpu_seconds: float
    batch: object  # the last executed batch (its outputs are the last outputs)


class BenchmarkFailure(Exception):
    """A benchmark failed while running; the message becomes its error row."""


def failure_message(exc: BaseException) -> str:
    """The runtime's status text on one line, as the native tool reports it."""
    text = one_line(exc) or type(exc).__name__
    # The bindings prefix the IREE status with their own words.
    return text.removeprefix("Error invoking function: ")


def run_iterations(workload, session, iterations: int) -> Sample:
    """Runs at least ``iterations`` logical iterations in whole batches."""
    kind = workload.kind
    batches = max(1, -(-iterations // workload.batch_size))
    perf_counter, process_time = time.perf_counter, time.process_time
    try:
        if kind.reusable_batch:
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
            batch = None
            for _ in range(batches):
                batch = kind.prepare(workload, session)
                cpu_start = process_time()
                start = perf_counter()
                batch.execute()
                real += perf_counter() - start
                cpu += process_time() - cpu_start
    except BenchmarkFailure:
        raise
    except Exception as exc:
        raise BenchmarkFailure(failure_message(exc)) from exc
    return Sample(batches * workload.batch_size, real, cpu, batch)


def _should_report(sample: Sample, min_time: float) -> bool:
    # Google Benchmark also stops at 5x min_time of real time, which matters
    # only for manual timers; ireebench always times real time.
    return sample.iterations >= MAX_ITERATIONS or sample.real_seconds >= min_time


def _predict_iterations(sample: Sample, min_time: float) -> int:
    multiplier = min_time * 1.4 / max(sample.real_seconds, 1e-9)
    significant = sample.real_seconds / min_time > 0.1
    multiplier = multiplier if significant else 10.0
    next_count = round(max(multiplier * sample.iterations, sample.iterations + 1.0))
    return min(next_count, MAX_ITERATIONS)


def calibrate(workload, session, min_time: float) -> tuple[int, Sample]:
    """Grows the iteration count until a run lasts ``min_time``."""
    requested = 1
    while True:
        sample = run_iterations(workload, session, requested)
        if _should_report(sample, min_time):
            return requested, sample
        requested = _predict_iterations(sample, min_time)


def measure(workload, session, config, keep_last_batch: bool = False):
    """Measures all repetitions of one workload.

    :param keep_last_batch: return the batch of the last measured iteration
        (its outputs are the last outputs), for output processing.
    :return: (the repetition runs, errors included, without aggregates;
        the last batch or None).
    """
    repetitions = config.getoption("benchmark_repetitions")
    min_time = config.min_time
    explicit = min_time.iterations
    warmup = config.min_warmup_time
    if config.getoption("benchmark_dry_run"):
        repetitions, explicit, warmup = 1, 1, 0.0
    runs: list[Run] = []
    last_batch = None
    requested = explicit
    for index in range(repetitions):
        run = Run(
            name=workload.name,
            run_name=workload.run_name,
            time_unit=workload.time_unit,
            repetitions=repetitions,
            repetition_index=index,
            batch_size=workload.batch_size,
        )
        try:
            if index == 0 and warmup > 0:
                calibrate(workload, session, warmup)
            if requested is None:
                requested, sample = calibrate(workload, session, min_time.seconds)
            else:
                sample = run_iterations(workload, session, requested)
        except BenchmarkFailure as exc:
            run.error_occurred = True
            run.error_message = str(exc)
            runs.append(run)
            break  # the remaining repetitions would fail the same way
        run.iterations = sample.iterations
        run.real_accumulated_time = sample.real_seconds
        run.cpu_accumulated_time = sample.cpu_seconds
        run.samples = [sample.real_seconds / sample.iterations]
        items_per_second = sample.iterations / sample.real_seconds if sample.real_seconds else 0.0
        run.counters["items_per_second"] = Counter(items_per_second, is_rate=True)
        runs.append(run)
        last_batch = sample.batch if keep_last_batch else None
    return runs, last_batch
