"""The in-process backend (``--backend=runtime``, the default): measure with the IREE runtime.

An essential plugin. One run:

1. open the :class:`~ireebench.session.Session` (instance, devices, the
   private module copies, parameters, context), ``ireebench_sessionstart``;
2. discover the workloads (kinds, classify, select; inputs parsed, checked
   and uploaded once), ``ireebench_discovery_finish``; with
   ``--benchmark_list_tests`` print their names and stop;
3. report the context;
4. per workload: ``ireebench_workload_start``,
   ``ireebench_measure_cold_start`` (its rows come last), warm-up and calibration,
   each repetition through ``ireebench_measure_repetition`` (this plugin's
   implementation, :func:`ireebench.measure.time_repetition`, runs last)
   while ``ireebench_continue_repetitions`` says so (this plugin's rule,
   also last: ``--benchmark_repetitions``), aggregates, ``ireebench_workload_finish``, ``ireebench_report_extra_rows``,
   then the rows go to the reporters;
5. the reports are finalized, then ``ireebench_measurements_finish``.

Before each workload it tells the hub (``hub.begin``), so that a benchmark
that never finishes is an error row; a worker resumed after a crash
(:mod:`ireebench.worker`) skips the benchmarks its predecessor reported
(``hub.already_reported``), and ``ireebench_measurements_finish`` gets the
workloads this process measured.

The core (``ireebench.runner``) closes the reports, calls
``ireebench_sessionfinish`` and releases the run; this backend registers
the session's release as a cleanup, so the session is still open during
``ireebench_sessionfinish`` (where ``allocator_statistics`` prints
``--print_statistics``).

A run of several points (a sweep or suite, see :mod:`ireebench.points`;
capability ``sweeps``) first checks every point's drivers and learns its
names without a device (``--benchmark_list_tests`` prints them; two points
reporting one name is one line); a point whose module cannot be had (it
fails to compile, is missing, is not a module) is an error row per name,
reported first, and the others run. Points of identical modules (the same
sha256) and otherwise equal options are measured once and reported for
each (:func:`.run._measured_once`). Then it opens one session per group of
points that share their modules' bytes, parameters, devices and runtime
flags. Interleaved (:func:`ireebench.points.interleaves`: the default for
several points) every session is opened first and the repetitions of all
workloads are measured round by round in a random order
(:func:`.run._interleave`); with ``--benchmark_enable_random_interleaving=false``
the sessions open in the order of their first point, each point's
workloads are measured in it (its own function, inputs and batch flags;
the hooks get the point's config) and each closes before the next one
opens (the last one with the run). A point whose session or inputs fail is
an error row per benchmark it would have reported, and the others run.
When the points' runtime flags differ, each point is measured by a process
of its own; with an executor that measures elsewhere (``--executor=ray``),
every point is, on the node the executor picks, a plain run's one point
too (:func:`.run._run_point_jobs`, :mod:`ireebench.executor`).

With ``--benchmark_processes=N`` (capability ``process_repetitions``) the
run measures nothing in its own process: N processes of its own (this
command line with ``--process_index``, run by the executor one after the
other) each measure a share of every benchmark's repetitions, and each
benchmark is reported once with all of them (:func:`.run.run_processes`,
:mod:`ireebench.processes`).

This module holds the plugin's hooks and its backend, so loading the plugin
(``--help``, ``ireebench plugins``, every subcommand) imports no runtime;
the run itself is :mod:`.run` (session, discovery, inputs, measurement),
imported when the backend runs (:func:`run_in_process`).
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
)
from ireebench.measure import time_repetition


def run_in_process(config, hub) -> int:
    """The default backend: measures in this process with iree.runtime (:mod:`.run`)."""
    from . import run  # the runtime: see LAZY_IMPORTS in tests/core/test_imports.py

    return run.run_in_process(config, hub)


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
