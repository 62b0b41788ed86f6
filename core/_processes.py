"""Repetitions in several processes: ``--benchmark_processes=N``.

Part of a benchmark's variance lives between processes (pyperf's lesson), so
with ``--benchmark_processes=N`` the run measures nothing itself: it runs its
own command line N times through the run's executor, each with
``--process_index=I`` and its JSON report on stdout (:func:`process_command`),
process ``I`` measuring its share of the R repetitions
(:func:`repetition_share`). The run then reports each benchmark once
(:func:`merge_repetitions`: the rows renumbered with their
``process_index``, the aggregates over all of them; a failed process one
error row per benchmark). A child runs the options of a point's own process
with its share as ``--benchmark_repetitions`` (:func:`process_options`).
Why, and what it costs: docs/statistics.md.
"""

from __future__ import annotations

import dataclasses

from .errors import UsageError
from .results import Run
from .stats import compute_aggregates

# The row member saying which process measured a repetition (text, as every
# row's context entry: a number would read as a counter).
PROCESS_KEY = "process_index"
# The context entry of a run measured in several processes.
CONTEXT_KEY = "benchmark_processes"

# What makes a process of the run report to it: JSON on stdout, every row
# (the run applies the aggregates-only flags). The run's outputs are reset
# in the child (options marked ``run_output``), and its interleaving is the
# run's own (a sweep's points interleave in each process).
PROCESS_REPORT_FLAGS = (
    "--benchmark_format=json", "--reporter=json",
    "--benchmark_report_aggregates_only=false", "--benchmark_display_aggregates_only=false",
    "--benchmark_list_tests=false",
)


def repetition_share(repetitions: int, processes: int, index: int) -> int:
    """How many of ``repetitions`` process ``index`` (0-based) of ``processes``
    measures: as even as possible, the first ``repetitions % processes`` one more
    (10 over 3: 4, 3, 3)."""
    base, extra = divmod(repetitions, processes)
    return base + (1 if index < extra else 0)


def processes_of(config) -> int:
    """``--benchmark_processes`` of the run (1 where the option is not known)."""
    return config.run.options.get("benchmark_processes") or 1


def spreads_repetitions(config) -> bool:
    """Does this process run the run's processes (``--benchmark_processes`` above 1,
    not itself one of them, not a dry run, which measures one repetition)?"""
    options = config.run.options
    return (processes_of(config) > 1 and options.get("process_index") is None
            and not options.get("benchmark_dry_run"))


def process_command(config, index: int) -> list[str]:
    """The ireebench command line of process ``index``: the run's, reporting JSON
    on stdout (:data:`PROCESS_REPORT_FLAGS`)."""
    return [*config.run.command_line, *PROCESS_REPORT_FLAGS, f"--process_index={index}"]


def process_options(options: dict) -> dict:
    """A child's parsed options (``--process_index`` given): its share of the
    repetitions as ``benchmark_repetitions``; any other run's options as they are."""
    index = options.get("process_index")
    if index is None:
        return options
    processes = options.get("benchmark_processes") or 1
    repetitions = options.get("benchmark_repetitions") or 0
    if not 0 <= index < processes <= repetitions:
        raise UsageError(f"--process_index={index}: not a process of --benchmark_processes="
                         f"{processes} with --benchmark_repetitions={repetitions}")
    return {**options, "benchmark_repetitions": repetition_share(repetitions, processes, index)}


def check_processes(config) -> None:
    """Refuses, in one line, a ``--benchmark_processes`` the run cannot honour.

    Below 1, or above ``--benchmark_repetitions`` (each process measures at
    least one); with an output a plugin writes besides the run's own
    (``--profile_output``, a capture, a scenario log: each process would
    write it). Called for the run and each of its points once they are
    configured.
    """
    processes = config.getoption("benchmark_processes")
    if processes is None or processes == 1 or config.getoption("process_index") is not None:
        return
    flag = f"--benchmark_processes={processes}"
    if processes < 1:
        raise UsageError(f"{flag}: must be positive")
    repetitions = config.getoption("benchmark_repetitions")
    if processes > repetitions:
        raise UsageError(f"{flag}: more processes than --benchmark_repetitions={repetitions} "
                         "(each process measures at least one repetition)")


def check_process_outputs(config, outputs: list[str]) -> None:
    """Refuses the outputs of ``outputs`` (``--flag=path``, as the run's files name
    them) that are not the run's own (``run_output``) when it spreads its
    repetitions: each process would write them."""
    if not spreads_repetitions(config):
        return
    specs = config.option_specs
    for name in outputs:
        option = name.partition("=")[0].removeprefix("--")
        spec = specs.get(option)
        if spec is not None and spec.run_output:
            continue
        raise UsageError(f"{name}: each of the --benchmark_processes={processes_of(config)} "
                         "processes would write it; measure in one process to write it")


def _normalized(run: Run, iterations: int) -> Run:
    """``run`` as if it measured ``iterations``: its times scaled (per-iteration times
    kept), for aggregates over repetitions of processes that calibrated apart."""
    if run.iterations == iterations or not run.iterations:
        return run
    scale = iterations / run.iterations
    device = run.device_accumulated_time
    return dataclasses.replace(
        run, iterations=iterations, real_accumulated_time=run.real_accumulated_time * scale,
        cpu_accumulated_time=run.cpu_accumulated_time * scale,
        device_accumulated_time=None if device is None else device * scale)


def merge_repetitions(shares: list[tuple[int, list[Run]]], repetitions: int,
                      statistics=None) -> list[Run]:
    """One benchmark's rows from its processes' rows, as one process would report them.

    ``shares``: ``(process index, its rows of the benchmark)`` in process
    order; their aggregates are dropped. Every repetition and error row is
    kept, in process order, numbered again (``repetition_index``), with
    ``repetitions`` (the run's count) and its process (:data:`PROCESS_KEY`);
    then the aggregates of all of them (``statistics``, default Google
    Benchmark's four). Each process calibrated its own iteration count, so
    the aggregates are of the per-iteration times (each repetition scaled to
    the first one's count).
    """
    rows = []
    for index, runs in shares:
        for run in runs:
            if run.run_type == "aggregate":
                continue
            run.provenance = {**run.provenance, PROCESS_KEY: str(index)}
            rows.append(run)
    for number, run in enumerate(rows):
        run.repetition_index = number
        run.repetitions = repetitions
    succeeded = [run for run in rows if not run.error_occurred]
    failed = [run for run in rows if run.error_occurred]
    iterations = succeeded[0].iterations if succeeded else 0
    measured = [_normalized(run, iterations) for run in succeeded] + failed
    return rows + compute_aggregates(measured, statistics)


__all__ = ["CONTEXT_KEY", "PROCESS_KEY", "check_processes", "merge_repetitions",
           "process_command", "repetition_share", "spreads_repetitions"]
