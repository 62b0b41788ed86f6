"""``ireebench compare A.vmfb B.vmfb [run flags]``: both builds measured here, paired.

When both positional arguments of ``compare`` are IREE modules, compare
measures them itself through :func:`ireebench.commands.execute`: a sweep over
the two modules whose repetitions are interleaved round by round in a fresh
random order, reported as JSON to a buffer; repetition k of A and of B were
measured in round k and are paired by ``repetition_index``, judged by
:mod:`ireebench.comparison.paired`. Every flag ``compare`` does not know is
the run's; the defaults are :data:`DEFAULT_RUN_FLAGS`, the flags that would
break the pairing are refused (:data:`REFUSED`), and the heap regime is
``--malloc_trim=on`` (:data:`PAIRED_MALLOC_TRIM`) unless the user says
otherwise: why, and the rates measured, are docs/compare.md's ("The heap
regime of a paired run"). Bad input is one line and exit 2.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os

from ireebench.commands import execute
from ireebench.comparison.disturbance import synchronous_cpu
from ireebench.comparison.model import AUTO_METRIC, Comparison
from ireebench.comparison.paired import (
    DEFAULT_ROUNDS,
    PAIRED_NOTE,
    compare_paired,
    judge_paired,
)
from ireebench.errors import UsageError, printable
from ireebench.lib.allocator import FLAG as MALLOC_TRIM
from ireebench.lib.allocator import user_variables
from ireebench.results import TIME_UNIT_MULTIPLIER

MODULE_SUFFIXES = (".vmfb", ".mlir")
# A short repetition: 30 rounds of two modules measure for about 3 s in all.
DEFAULT_MIN_TIME = "0.05s"
DEFAULT_RUN_FLAGS = {"benchmark_repetitions": str(DEFAULT_ROUNDS),
                     "benchmark_min_time": DEFAULT_MIN_TIME}
# The heap regime of the paired run: glibc's trimming on, so that both modules'
# calls allocate from the same trimmed heap top (see the module doc).
PAIRED_MALLOC_TRIM = "on"
TIME_METRICS = ("real_time", "cpu_time", "device_time")
# The sweep's axis: the module of each point (its value, the module's path).
AXIS = "module"
# Run flags a paired comparison cannot take, and why.
REFUSED = {
    "module": "the two modules are compare's arguments: ireebench compare A.vmfb B.vmfb",
    "sweep module": "the two modules are compare's arguments (other axes are swept on "
                    "both: --sweep function=a,b)",
    "benchmark_format": "the run reports to compare; --reporter and --out format the "
                        "comparison (--benchmark_out=FILE keeps the run's rows)",
    "benchmark_enable_random_interleaving": "a paired comparison always interleaves",
    "benchmark_min_rel_accuracy": "adaptive stopping would end the two modules after "
                                  "different rounds; --benchmark_repetitions=N sets the rounds",
    "benchmark_max_time": "adaptive stopping would end the two modules after different "
                          "rounds; --benchmark_repetitions=N sets the rounds",
    "shard_index": "both modules are measured in one process",
    "shard_count": "both modules are measured in one process",
}
USAGE = "ireebench compare A.vmfb B.vmfb [run flags] (or two reports: OLD.json NEW.json)"


def is_module(reference: str) -> bool:
    """Whether a positional argument of compare names an IREE module."""
    return str(reference).lower().endswith(MODULE_SUFFIXES)


def _flag_name(arg: str) -> str:
    return arg.split("=", 1)[0].lstrip("-") if arg.startswith("-") else ""


def split_arguments(args: list[str]) -> tuple[list[str], list[str]] | None:
    """``(modules, run flags)`` of compare's leftover arguments when they name a
    module, else None (two reports: the comparison of files).

    A word that names no module and does not follow a flag without ``=`` (the
    value of ``--device local-sync``) is a positional argument too: a module and
    a report mixed is refused, as are more or fewer than two modules.
    """
    modules = [index for index, arg in enumerate(args)
               if not arg.startswith("-") and is_module(arg)]
    if not modules:
        return None
    others = [arg for index, arg in enumerate(args)
              if not arg.startswith("-") and index not in modules
              and not (index > 0 and args[index - 1].startswith("--")
                       and "=" not in args[index - 1])]
    named = [args[index] for index in modules]
    if others:
        raise UsageError(f"compare: {printable(named[0])} is an IREE module and "
                         f"{printable(others[0])} is not: compare two modules or two "
                         f"reports: {USAGE}")
    if len(named) != 2:
        raise UsageError(f"compare: expected two modules, got {len(named)}: "
                         f"{printable(' '.join(named))}: {USAGE}")
    run_flags = [arg for index, arg in enumerate(args) if index not in modules]
    for index, arg in enumerate(run_flags):
        name = _flag_name(arg)
        if name == "sweep":  # an axis of both sides, but not the modules'
            value = arg.split("=", 1)[1] if "=" in arg else (
                run_flags[index + 1] if index + 1 < len(run_flags) else "")
            name = f"sweep {value.split('=', 1)[0].strip()}"
        if name in REFUSED:
            raise UsageError(f"compare: {printable(arg)}: not with two modules: {REFUSED[name]}")
    return named, run_flags


def check_modules(modules: list[str]) -> None:
    """Each module is a file (one line naming the first that is not)."""
    for module in modules:
        if not os.path.exists(module):
            raise UsageError(f"compare: {printable(module)}: no such module")
        if not os.path.isfile(module):
            raise UsageError(f"compare: {printable(module)}: not a file")


def _given(run_flags: list[str], name: str) -> bool:
    return any(_flag_name(arg) == name for arg in run_flags)


def _escaped(path: str) -> str:
    r"""A path as a value of a sweep's axis (``\,`` is a comma in it)."""
    return path.replace(",", "\\,")


def sides(modules: list[str]) -> tuple[str, str]:
    """The axis values of A and B: their absolute paths, B spelled with ``./`` when
    it is A itself (an axis takes a value once; both points then share a session)."""
    a, b = (os.path.abspath(module) for module in modules)
    if a == b:
        folder, name = os.path.split(b)
        b = os.path.join(folder, ".", name)
    return a, b


def run_argv(modules: list[str], run_flags: list[str], selection=None) -> list[str]:
    """The command line of the paired run (see the module doc)."""
    a, b = sides(modules)
    argv = []
    if selection is not None:  # the plugins this command line loaded, as rank passes them
        argv += [f"--plugin={spec}" for spec in selection.specs]
        argv += [f"-pno:{name}" for name in selection.blocked]
    argv += [f"--sweep={AXIS}={_escaped(a)},{_escaped(b)}", "--benchmark_format=json",
             "--benchmark_enable_random_interleaving=true", "--shard_index=0",
             "--shard_count=1"]
    argv += [f"--{name}={value}" for name, value in DEFAULT_RUN_FLAGS.items()
             if not _given(run_flags, name) and name.upper() not in os.environ]
    blocked = selection.blocked if selection is not None else ()
    if not (_given(run_flags, MALLOC_TRIM) or user_variables() or "allocator" in blocked):
        argv.append(f"--{MALLOC_TRIM}={PAIRED_MALLOC_TRIM}")
    return argv + list(run_flags)


def _strip_point(name: str, value: str) -> str:
    """A row's name without its point's ``/module:PATH`` (both sides then share it)."""
    return name.replace(f"/{AXIS}:{value}", "", 1)


class PairedRun:
    """The rows of the paired run: per side (0: A, 1: B), benchmark name ->
    repetition_index -> row; the benchmarks in the order of the report."""

    def __init__(self, report: dict, values: tuple[str, str]):
        self.context = report.get("context", {}) if isinstance(report, dict) else {}
        self.rows: tuple[dict, dict] = ({}, {})
        self.errors: tuple[list, list] = ([], [])
        self.names: list[str] = []
        self.sha256: list[str] = ["", ""]  # each side's module, as its rows say
        benchmarks = report.get("benchmarks", []) if isinstance(report, dict) else []
        for row in benchmarks:
            if not isinstance(row, dict):
                continue
            params = row.get("params") or {}
            value = str(params.get(AXIS, ""))
            if value not in values:
                continue
            side = values.index(value)
            self.sha256[side] = self.sha256[side] or str(row.get("iree_module_sha256") or "")
            name = _strip_point(str(row.get("run_name") or row.get("name", "")), value)
            if row.get("error_occurred"):
                self.errors[side].append(str(row.get("error_message", "failed")))
                continue
            if row.get("run_type") != "iteration" or "repetition_index" not in row:
                continue
            if name not in self.names:
                self.names.append(name)
            self.rows[side].setdefault(name, {})[int(row["repetition_index"])] = row


def measure(config, modules: list[str], run_flags: list[str]) -> PairedRun:
    """Runs both modules interleaved (see the module doc); bad input is one line."""
    check_modules(modules)
    values = sides(modules)
    argv = run_argv(modules, run_flags, config.getoption("paired_selection"))
    out = io.StringIO()
    result = execute(argv, out, config.stderr, tuple(config.getoption("paired_plugins") or ()))
    text = out.getvalue()
    try:
        report = json.loads(text) if text.strip() else {}
    except ValueError:
        report = {}
    run = PairedRun(report, values)
    for side, errors in enumerate(run.errors):
        if errors:
            raise UsageError(f"compare: {printable(modules[side])}: {printable(errors[0])}")
    if not any(run.rows):
        raise UsageError(f"compare: {printable(modules[0])} and {printable(modules[1])}: "
                         "nothing was measured (a function that takes arguments needs "
                         "--function and --input; see the run's messages above)")
    if result.exit_code != 0:
        raise UsageError(f"compare: the paired run of {printable(modules[0])} and "
                         f"{printable(modules[1])} exited {result.exit_code} (see its "
                         "messages above)")
    return run


def _devices(row: dict, context: dict) -> list[str]:
    devices = row.get("iree_devices", context.get("iree_devices", []))
    return [str(device) for device in devices] if isinstance(devices, list) else []


def choose_metric(options, chosen: bool, row: dict, context: dict) -> str:
    """``--metric`` when it was given (``auto`` aside), else ``cpu_time`` on a
    synchronous CPU device (``local-sync``: its real time also counts the waits for
    a CPU of a busy machine) and ``real_time`` elsewhere."""
    if chosen and options.metric != AUTO_METRIC:
        return options.metric
    return "cpu_time" if synchronous_cpu(_devices(row, context)) else "real_time"


def _value(row: dict, metric: str) -> float | None:
    value = row.get(metric)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    if metric in TIME_METRICS:
        return value / TIME_UNIT_MULTIPLIER.get(str(row.get("time_unit", "ns")), 1e9)
    return value


def compare_run(run: PairedRun, modules: list[str], options, metric_chosen: bool) -> Comparison:
    """The :class:`Comparison` of the paired run's rows (see
    :func:`ireebench.comparison.paired.judge_paired`)."""
    old, new = run.rows
    common = [name for name in run.names if name in old and name in new]
    if not common:
        raise UsageError(f"compare: {printable(modules[0])} and {printable(modules[1])} "
                         "have no benchmark in common (each side's functions are matched "
                         "by name)")
    first = next(iter(old[common[0]].values()))
    # Each benchmark on the metric that measured its work (a swept device may differ).
    metrics = {name: choose_metric(options, metric_chosen, next(iter(old[name].values())),
                                   run.context) for name in common}
    used = set(metrics.values())
    metric = used.pop() if len(used) == 1 else AUTO_METRIC
    is_time = all(value in TIME_METRICS for value in metrics.values())
    higher = options.higher_is_better
    if higher is None:
        higher = not is_time and metric.endswith("_per_second")
    items, rounds = [], 0
    for name in common:
        indices = sorted(set(old[name]) & set(new[name]))
        chosen = metrics[name]
        a = [_value(old[name][index], chosen) for index in indices]
        b = [_value(new[name][index], chosen) for index in indices]
        if any(value is None for value in a + b):
            known = sorted(key for key, value in first.items()
                           if isinstance(value, (int, float)) and not isinstance(value, bool))
            raise UsageError(f"compare: --metric={printable(chosen)}: not a number of every "
                             f"row of the paired run (its numbers: {', '.join(known)})")
        unit = str(old[name][indices[0]].get("time_unit", "ns")) \
            if chosen in TIME_METRICS and indices else ""
        item = compare_paired(name, a, b, options, unit, chosen, higher)
        rounds = max(rounds, len(indices))
        items.append(item)
    comparison = Comparison(modules[0], modules[1], dataclasses.replace(options, metric=metric),
                            [],
                            only_old=[name for name in run.names if name not in new],
                            only_new=[name for name in run.names if name not in old],
                            higher_is_better=higher, paired=rounds)
    comparison.notes.append(PAIRED_NOTE.format(rounds=rounds))
    regime = run.context.get("malloc_trim")
    if regime:
        comparison.notes.append(f"heap regime: --malloc_trim={regime}" + (
            " (both modules allocate from a heap trimmed after every call; "
            "--malloc_trim=off measures the steady state, see docs/compare.md)"
            if regime == PAIRED_MALLOC_TRIM else ""))
    if "cpu_time" in metrics.values() and not metric_chosen:
        comparison.notes.append("compared on cpu_time: local-sync runs the benchmark on the "
                                "calling thread, and its real time also counts the waits for "
                                "a CPU of a busy machine (--metric=real_time compares that)")
    judge_paired(comparison, items, comparison.options, higher)
    if run.sha256[0] and run.sha256[0] == run.sha256[1]:
        # The run measures identical modules once and reports its rows for both.
        for benchmark in comparison.benchmarks:
            benchmark.notes = [note for note in benchmark.notes
                               if not note.startswith("the values do not vary")]
        comparison.notes.append(f"{modules[0]} and {modules[1]} are the same module (sha256 "
                                f"{run.sha256[0][:12]}): measured once, so no change")
    return comparison


def judge(config, options) -> Comparison:
    """Measures the two modules of ``config`` and compares them."""
    modules = [config.getoption("old"), config.getoption("new")]
    run = measure(config, modules, list(config.getoption("run_flags") or ()))
    return compare_run(run, modules, options, bool(config.getoption("metric_chosen")))

