"""``--benchmark_cold_start``: the first invocation of each benchmark, reported apart.

The first invocation after loading pays for what later ones find ready
(first-touch page faults, lazy resources, cold caches); steady-state numbers
should not hold it. With the flag each benchmark runs one extra batch first,
in ``ireebench_measure_cold_start`` (timed alone, before warm-up, calibration
and every repetition), reported as the row ``BM_<fn>/cold_start``; with a
time ``--benchmark_min_time`` it is the batch the first calibration run
would have been, with ``Nx`` it leaves the repetitions warm batches only.
Without the flag nothing changes. See docs/statistics.md.
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.backend import (
    IN_PROCESS,
    BenchmarkFailure,
    error_run,
    new_run,
    require,
    run_iterations,
)
from ireebench.names import family_of, row_name
from ireebench.results import Run

GROUP = "Statistics and adaptive stopping"
ROW = "cold_start"


@hookimpl
def ireebench_addoption(parser):
    """Adds --benchmark_cold_start."""
    parser.addoption(
        "--benchmark_cold_start", "benchmark_cold_start", type=bool, group=GROUP,
        requires=IN_PROCESS,
        help="Time each benchmark's first invocation (one batch, before warm-up, calibration "
             "and repetitions) and report it as a row BM_<fn>/cold_start, apart from the "
             "steady-state rows.", module_run=True)


@hookimpl
def ireebench_configure(config):
    if config.getoption("benchmark_cold_start"):
        require(config, IN_PROCESS, "benchmark_cold_start", "true")


def cold_run(workload, session) -> Run:
    """Times the first batch of ``workload`` (its ``execute`` only)."""
    name = row_name(workload.name, ROW)
    try:
        sample = run_iterations(workload, session, workload.batch_size)
    except BenchmarkFailure as exc:
        run = error_run(workload, 1, 0, str(exc))
    else:
        run = new_run(workload, 1, 0)
        run.iterations = sample.iterations
        run.real_accumulated_time = sample.real_seconds
        run.cpu_accumulated_time = sample.cpu_seconds
        run.samples = [sample.real_seconds / sample.iterations]
    run.name = run.run_name = name
    run.extra_row = True
    return run


@hookimpl
def ireebench_report_row_names(config, run_names):
    """``BM_<fn>/cold_start`` for each benchmark, so the console's column fits it."""
    if not config.getoption("benchmark_cold_start"):
        return None
    return [row_name(family_of(name), ROW) for name in run_names]


@hookimpl
def ireebench_measure_cold_start(config, session, workload):
    """Runs and times the cold batch before anything else touches the function."""
    if config.getoption("benchmark_cold_start"):
        return cold_run(workload, session)
    return None
