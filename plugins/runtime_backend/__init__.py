"""The in-process backend (``--backend=runtime``, the default): measure with the IREE runtime.

An essential plugin: the backend, whose run is the core's protocol
(:func:`ireebench.protocol.run_in_process`, imported when the backend runs:
loading the plugin imports no runtime), and the last implementations of
``ireebench_measure_repetition`` (:func:`ireebench._measure.time_repetition`)
and ``ireebench_continue_repetitions`` (``--benchmark_repetitions``).
"""

from __future__ import annotations

from ireebench import hookimpl
from ireebench.backend import (
    ADAPTIVE_REPETITIONS,
    EXECUTORS,
    IN_PROCESS,
    MEASURED_WORKLOADS,
    PLUGIN_KINDS,
    PROCESS_REPETITIONS,
    PROFILING_PASSES,
    REPETITION_SAMPLES,
    SWEEPS,
    Backend,
    time_repetition,
)


def run_in_process(config, hub) -> int:
    """The default backend: measures in this process with iree.runtime."""
    from ireebench import protocol  # the runtime: see LAZY_IMPORTS in tests/core/test_imports.py

    return protocol.run_in_process(config, hub)


@hookimpl
def ireebench_backends(config):
    """Provides ``--backend=runtime``."""
    return [Backend("runtime", run_in_process,
                    {IN_PROCESS, REPETITION_SAMPLES, ADAPTIVE_REPETITIONS, PLUGIN_KINDS,
                     PROFILING_PASSES, SWEEPS, MEASURED_WORKLOADS, EXECUTORS,
                     PROCESS_REPETITIONS},
                    "measures in this process with the IREE runtime (the default)")]


@hookimpl(trylast=True)
def ireebench_measure_repetition(config, workload, repetition):
    """Times ``repetition.iterations`` logical iterations of the workload's kind."""
    return time_repetition(workload, repetition)


@hookimpl(trylast=True)
def ireebench_continue_repetitions(config, workload, runs):
    """The fixed count: ``--benchmark_repetitions`` repetitions."""
    return len(runs) < config.getoption("benchmark_repetitions")
