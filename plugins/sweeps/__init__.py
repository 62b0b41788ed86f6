"""Sweeps and suites: one run measures many configurations.

``--sweep NAME=V1,V2,...`` (the cartesian product of the axes, :mod:`.axes`,
made into each point's command line at ``ireebench_expand_command_line``),
``ireebench run SUITE.toml`` (:mod:`.suite`), the shard of a run
(``--shard_index``/``--shard_count`` or GoogleTest's and Bazel's variables,
kept at ``ireebench_generate_points``, ``trylast``: after every plugin added
its points), ``ireebench merge`` (:mod:`.merge`) and the progress of a run
of several points (:mod:`.progress`; a plain run prints none, as the native
tool). See docs/usage.md ("Sweeps and suites") and, for the hooks,
docs/architecture.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ireebench import StashKey, hookimpl
from ireebench.commands import DeferredCommand
from ireebench.errors import UsageError
from ireebench.points import interleaves, points_of

from .axes import SWEEP_FLAG, parse_axes, point_specs
from .progress import Progress, ProgressLine, ProgressLog

GROUP = "Sweeps and shards"
SHARD_INDEX_ENV = "GTEST_SHARD_INDEX"
TOTAL_SHARDS_ENV = "GTEST_TOTAL_SHARDS"
# GoogleTest's protocol: a runner that sets it learns that sharding is supported.
SHARD_STATUS_ENV = "GTEST_SHARD_STATUS_FILE"
# Bazel's names of the same three (its test encyclopedia).
BAZEL_ENV = {SHARD_INDEX_ENV: "TEST_SHARD_INDEX", TOTAL_SHARDS_ENV: "TEST_TOTAL_SHARDS",
             SHARD_STATUS_ENV: "TEST_SHARD_STATUS_FILE"}
HELP_FLAGS = {"--help", "-h", "--version", "-V"}


@dataclass
class SweepState:
    """The run's shard and progress line (``config.stash[STATE]``)."""

    shard: tuple[int, int] | None = None  # (index, count)
    progress: ProgressLine | None = None


STATE = StashKey[SweepState]()
# The suite file of a run of ``ireebench run SUITE.toml`` (for the report context).
SUITE_FILE = StashKey[str]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --sweep, --shard_index, --shard_count."""
    parser.addoption(
        SWEEP_FLAG, "sweep", multiple=True, group=GROUP, metavar="NAME=V1,V2,...",
        help="Measure every point of the cartesian product of the axes (repeatable; the last "
             "varies fastest). Values or ranges: bs=1,4,16, bs=1..64:*2, seq=128..1024:+128. "
             "{NAME} in any flag value is replaced per point (--input={bs}x512xf32=0.5); an "
             "axis that names a flag sets it (device, batch_size, function, module, a runtime "
             "flag). Rows are named BM_f/bs:4/process_time/real_time.", module_run=True)
    parser.addoption(
        "--shard_index", "shard_index", type=int, default=None, group=GROUP,
        envvar=[SHARD_INDEX_ENV, BAZEL_ENV[SHARD_INDEX_ENV]], show_envvar=True, metavar="I",
        help="Measure only shard I (0-based) of --shard_count: the points i with "
             "i % N == I, in the order of their parameters.", module_run=True)
    parser.addoption(
        "--shard_count", "shard_count", type=int, default=None, group=GROUP,
        envvar=[TOTAL_SHARDS_ENV, BAZEL_ENV[TOTAL_SHARDS_ENV]], show_envvar=True, metavar="N",
        help="The number of shards the points are split into (join their JSON files with "
             "ireebench merge).", module_run=True)


@hookimpl
def ireebench_register_commands(cli):
    """Registers ``ireebench run SUITE.toml`` and ``ireebench merge``."""
    cli.add_command(DeferredCommand("run", "ireebench.plugins.sweeps.suite:COMMAND",
                                    short_help="Measure the benchmarks of a suite file "
                                               "(TOML)."))
    cli.add_command(DeferredCommand("merge", "ireebench.plugins.sweeps.merge:command",
                                    short_help="Join shard reports (JSON) into one."))


@hookimpl
def ireebench_expand_command_line(argv, option_specs):
    """``--sweep``: the command line of every point."""
    if HELP_FLAGS & set(argv):
        return None
    return point_specs(list(argv), option_specs)


@hookimpl
def ireebench_configure(config):
    """Checks the shard flags (GoogleTest's environment variables too)."""
    index, count = config.getoption("shard_index"), config.getoption("shard_count")
    state = config.stash[STATE] = SweepState()
    if index is None and count is None:
        return
    if index is None or count is None:
        given = "--shard_index" if index is not None else "--shard_count"
        missing = "--shard_count" if index is not None else "--shard_index"
        raise UsageError(f"{given}: needs {missing} too (or {SHARD_INDEX_ENV} and "
                         f"{TOTAL_SHARDS_ENV})")
    if count < 1:
        raise UsageError(f"--shard_count={count}: must be at least 1")
    if not 0 <= index < count:
        raise UsageError(f"--shard_index={index}: must be between 0 and "
                         f"--shard_count - 1 = {count - 1}")
    state.shard = (index, count)
    status = os.environ.get(SHARD_STATUS_ENV) or os.environ.get(BAZEL_ENV[SHARD_STATUS_ENV])
    if status:  # tell the runner (Bazel, GoogleTest's) that sharding is honoured
        try:
            with open(status, "a"):
                pass
        except OSError as exc:
            raise UsageError(f"{SHARD_STATUS_ENV}={status}: cannot write: {exc.strerror}") \
                from None


def shard_order(point) -> tuple:
    """A point's place in the shard order: by prefix, then parameters (numbers by value)."""
    return (point.name_prefix, tuple((name, (0, value, "") if _is_number(value)
                                      else (1, 0, str(value)))
                                     for name, value in point.params.items()))


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@hookimpl(trylast=True)
def ireebench_generate_points(config, points):
    """Keeps this shard's points: the ``i``-th of the points sorted by name, ``i % N == I``.

    Every shard of a run sees the same points (the same command line), so
    the shards partition them exactly; the order by name balances them
    (their sizes differ by one at most) whatever order the axes list them in.
    """
    state = config.stash.get(STATE, None)
    if state is None or state.shard is None:
        return
    index, count = state.shard
    ordered = sorted(range(len(points)), key=lambda i: (shard_order(points[i]), i))
    kept = {position for rank, position in enumerate(ordered) if rank % count == index}
    points[:] = [point for position, point in enumerate(points) if position in kept]


@hookimpl
def ireebench_report_context(config, context):
    """The axes of ``--sweep``, the number of points and the shard, in the context."""
    state = config.stash.get(STATE, None)
    axes, _ = parse_axes(list(config.command_line), config.option_specs)
    if axes:
        context.extra["sweep"] = {axis.name: list(axis.values) for axis in axes}
    suite_file = config.stash.get(SUITE_FILE, None)
    if suite_file:
        context.extra["suite"] = suite_file
    if state is not None and state.shard is not None:
        context.extra["shard_index"], context.extra["shard_count"] = state.shard


@hookimpl
def ireebench_report_row_names(config, run_names):
    """Starts the progress of a run of several points (:mod:`.progress`): a line on a
    terminal, one line per finished benchmark otherwise. Never in a point's own
    process, nor in one of the processes of ``--benchmark_processes`` (the run that
    started it shows the progress)."""
    state = config.stash.get(STATE, None)
    points = points_of(config)
    if state is None or len(points) < 2 or config.getoption("point_index") is not None \
            or config.getoption("process_index") is not None:
        return
    stream = config.stderr
    rounds = 0
    if interleaves(config):
        rounds = max(1 if point.config.getoption("benchmark_dry_run") else
                     point.config.getoption("benchmark_repetitions") for point in points)
    kind = ProgressLine if _is_terminal(stream) else ProgressLog
    state.progress = kind(stream, len(run_names), rounds)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _progress(config) -> Progress | None:
    state = config.run.stash.get(STATE, None)
    return None if state is None else state.progress


@hookimpl
def ireebench_workload_start(config, workload):
    progress = _progress(config)
    if progress is not None:
        progress.start(workload.run_name)


@hookimpl(tryfirst=True)
def ireebench_continue_repetitions(config, workload, runs):
    """Counts the rounds of interleaved repetitions (after each repetition, outside
    its timed region); never decides (None: the stopping rules do)."""
    progress = _progress(config)
    if progress is not None:
        progress.repetition(workload.run_name, len(runs) - 1)


@hookimpl
def ireebench_benchmark_result(config, run):
    """A benchmark finished: its progress line (erased on a terminal before its rows
    are printed)."""
    progress = _progress(config)
    if progress is not None and not run.extra_row:
        progress.finish(run.run_name, failed=run.error_occurred)


@hookimpl
def ireebench_sessionfinish(config):
    progress = _progress(config)
    if progress is not None:
        progress.clear()
