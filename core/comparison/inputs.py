"""Google Benchmark JSON files read for a comparison, with one-line errors.

Reads what ireebench writes (``--benchmark_out``, ``--benchmark_format=json``)
and what the native ``iree-benchmark-module`` writes, aggregate rows of any
name included (``_mean``, ``_median``, a custom ``_p90``...). Per benchmark
(its ``run_name``), the per-repetition value of every metric a row has:
the times (:data:`TIME_METRICS`: ``real_time``, ``cpu_time`` and, with
``--device_time``, ``device_time``) in seconds per iteration, every other
number of the row as it is (Google Benchmark's memory members such as
``max_bytes_used``, counters such as ``items_per_second``: anything but
the row's identity, :data:`NOT_METRICS`); failed rows are kept as
messages; aggregates are kept by name, and only ``median`` then ``mean``
are ever used (as a single value, for a file written with
``--benchmark_report_aggregates_only``). Text a tool printed after the
report (``--benchmark_format=json`` with output printing) is ignored, as
the native backend ignores it.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field

from ..errors import UsageError, one_line
from ..hookcall import call_hook
from ..results import TIME_UNIT_MULTIPLIER
from .machine import ROW_KEYS

# The metrics that are times (per iteration in the row's time_unit).
TIME_METRICS = ("real_time", "cpu_time", "device_time")
# What every Google Benchmark report has.
METRICS = ("real_time", "cpu_time")
# Numbers of a row that say which row it is, never a measurement.
NOT_METRICS = frozenset({"family_index", "per_family_instance_index", "repetitions",
                         "repetition_index", "threads", "iterations"})
# Aggregates a file without repetition rows is compared on, in this order.
FALLBACK_AGGREGATES = ("median", "mean")
# A benchmark report larger than this is not a report.
MAX_FILE_BYTES = 1 << 30
# The times a benchmark can take, in seconds per iteration (a yoctosecond to
# 3e16 years): anything else is not a measurement, and would overflow the
# ratios compared (1e308 s against 1 s) or lose them below the smallest
# normal float (5e-324 s). Zero and negative times are read, and noted.
TIME_RANGE = (1e-24, 1e24)
_LOW, _HIGH = TIME_RANGE
_CHUNK = 16 << 20


@dataclass(slots=True)  # a report of 200,000 benchmarks holds 200,000 a side
class BenchmarkRows:
    """One benchmark of a file: its repetitions, aggregates and errors."""

    run_name: str
    time_unit: str
    # metric -> per-repetition values, file order (times in seconds per
    # iteration); a metric some rows lack has fewer values
    repetitions: dict[str, list[float]] = field(
        default_factory=lambda: {metric: [] for metric in METRICS})
    # aggregate name -> metric -> value (time aggregates only; cv is skipped)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # The context keys its rows carry for themselves (machine.ROW_KEYS: a sweep's
    # or suite's point's devices and module), read from its first row.
    provenance: dict = field(default_factory=dict)

    def values(self, metric: str) -> tuple[list[float], str]:
        """The values to compare and where they come from (``repetitions``,
        ``median aggregate``...; ``""`` when there is none)."""
        if self.repetitions.get(metric):
            return list(self.repetitions[metric]), "repetitions"
        for name in FALLBACK_AGGREGATES:
            if metric in self.aggregates.get(name, {}):
                return [self.aggregates[name][metric]], f"{name} aggregate"
        return [], ""

    @property
    def metrics(self) -> set[str]:
        """Every metric some row of this benchmark has."""
        found = {metric for metric, values in self.repetitions.items() if values}
        for values in self.aggregates.values():
            found.update(values)
        return found


@dataclass
class BenchmarkFile:
    """A Google Benchmark JSON report: its context and its benchmarks in file order."""

    path: str
    context: dict
    benchmarks: dict[str, BenchmarkRows]
    # What the run found after its context was written (the JSON's
    # "findings": multimodal repetitions...).
    findings: dict = field(default_factory=dict)
    # member -> (where, shown value): the first row whose member of that name
    # is not a finite number (a string, NaN, Infinity), which is bad input
    # only when it is the metric compared (check_metric).
    invalid: dict[str, tuple[str, str]] = field(default_factory=dict)


def _fail(path: str, reason: str, command: str = "compare") -> UsageError:
    return UsageError(f"{command}: {path}: {reason}")


def _read_text(path: str, command: str) -> str:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise _fail(path, "file not found", command) from None
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or one_line(exc)}", command) from None
    if stat.S_ISDIR(info.st_mode):
        raise _fail(path, "is a directory", command)
    too_large = f"larger than {MAX_FILE_BYTES} bytes; not a benchmark report"
    if info.st_size > MAX_FILE_BYTES:
        raise _fail(path, too_large, command)
    chunks, size = [], 0
    try:
        with open(path, "rb") as handle:
            # In chunks: read(MAX_FILE_BYTES + 1) would allocate 1 GiB for any
            # file; a FIFO has no size to check first.
            while size <= MAX_FILE_BYTES and (chunk := handle.read(_CHUNK)):
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or one_line(exc)}", command) from None
    if size > MAX_FILE_BYTES:
        raise _fail(path, too_large, command)
    data = b"".join(chunks)
    del chunks
    if not data.strip():
        raise _fail(path, "file is empty", command)
    return data.decode("utf-8", errors="replace")


def _parse(path: str, text: str, command: str) -> dict:
    try:
        report, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except ValueError as exc:
        raise _fail(path, f"not JSON ({one_line(exc)})", command) from None
    except RecursionError:
        raise _fail(path, "not JSON (nested too deeply)", command) from None
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise _fail(path, 'not a Google Benchmark JSON report (no "benchmarks" list)', command)
    return report


def _number(path: str, where: str, entry: dict, key: str) -> float:
    value = entry.get(key)
    if type(value) is float and math.isfinite(value):  # the rows' numbers: fast
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(path, f"{where}: {key} is not a finite number ({_shown(value)})")
    try:
        value = float(value)
    except OverflowError:  # an integer beyond any float
        raise _fail(path, f"{where}: {key} is not a finite number ({_shown(value)})") from None
    if not math.isfinite(value):
        raise _fail(path, f"{where}: {key} is not a finite number ({value!r})")
    return value


def _seconds(path: str, where: str, entry: dict, key: str, unit: str) -> float:
    """A time of the row in seconds per iteration, within :data:`TIME_RANGE`."""
    value = _number(path, where, entry, key)
    seconds = value / TIME_UNIT_MULTIPLIER[unit]
    if not _LOW <= abs(seconds) <= _HIGH and value != 0:  # a tiny time read as 0 too
        raise _fail(path, f"{where}: {key} {value:g} {unit} is not a time a benchmark "
                          f"takes (between {_LOW:g} s and {_HIGH:g} s per iteration)")
    return seconds


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def row_identity(label: str, index: int, entry, command: str = "compare") -> tuple[str, str, str]:
    """``(name, time_unit, where)`` of row ``index`` of a report: its ``run_name``
    (or ``name``), its time unit, and how messages name it (``benchmark #3
    (BM_f)``). A row that is not an object, has no name or an unknown unit is
    one UsageError line (``command: label: benchmark #3 (BM_f): ...``)."""
    where = f"benchmark #{index + 1}"
    if not isinstance(entry, dict):
        raise _fail(label, f"{where}: not a JSON object", command)
    name = entry.get("run_name") or entry.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(label, f"{where}: no name", command)
    where = f"{where} ({name})"
    unit = entry.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in TIME_UNIT_MULTIPLIER:
        raise _fail(label, f"{where}: unknown time_unit {_shown(unit)} (one of "
                           f"{', '.join(TIME_UNIT_MULTIPLIER)})", command)
    return name, unit, where


def add_entry(path: str, index: int, entry, benchmarks: dict[str, BenchmarkRows],
              invalid: dict[str, tuple[str, str]] | None = None, identity=None) -> None:
    """Reads row ``index`` into ``benchmarks`` (``identity``: its :func:`row_identity`,
    when the caller has it)."""
    name, unit, where = identity or row_identity(path, index, entry)
    rows = benchmarks.get(name)
    if rows is None:
        rows = benchmarks[name] = BenchmarkRows(name, unit)
        rows.provenance = {key: entry[key] for key in ROW_KEYS if key in entry}
    if entry.get("error_occurred") or entry.get("skipped"):
        message = entry.get("error_message") or entry.get("skip_message") or "failed"
        rows.errors.append(one_line(message))
        return
    run_type = entry.get("run_type", "iteration")
    if run_type == "aggregate":
        aggregate = str(entry.get("aggregate_name", ""))
        if entry.get("aggregate_unit", "time") != "time" or not aggregate:
            return  # cv (a fraction), or something that is not a time
        try:
            for metric in METRICS:
                _number(path, where, entry, metric)
            rows.aggregates[aggregate] = _metrics(path, where, entry, unit, invalid)
        except UsageError:
            return  # an aggregate of another shape (BigO, RMS): never compared
        return
    if run_type != "iteration":
        return  # a row kind this reader does not know (e.g. complexity fits)
    values = _metrics(path, where, entry, unit, invalid)
    for metric in METRICS:
        if metric not in values:
            _number(path, where, entry, metric)  # says what is wrong with it
    for metric, value in values.items():
        rows.repetitions.setdefault(metric, []).append(value)


# Members of a row that are text by nature, never a metric with a bad value.
TEXT_MEMBERS = frozenset({"name", "run_name", "run_type", "time_unit", "aggregate_name",
                          "aggregate_unit", "label", "error_message", "skip_message",
                          "error_occurred", "skipped", "big_o", "iree_module",
                          "iree_module_sha256", "iree_devices", "params"})


def _metrics(path: str, where: str, entry: dict, unit: str,
             invalid: dict[str, tuple[str, str]] | None = None) -> dict[str, float]:
    """Every metric of a row: its times in seconds per iteration, its other numbers as
    they are. A time that is not a finite number is an error; another member that is
    not a finite number is not a metric, and the first such value of each member is
    kept in ``invalid`` (bad input when that member is compared)."""
    found = {}
    for key, value in entry.items():
        if key in NOT_METRICS:
            continue
        if key in TIME_METRICS:
            found[key] = _seconds(path, where, entry, key, unit)
            continue
        number = math.nan
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an integer beyond any float: not a metric
                pass
        if math.isfinite(number):
            found[key] = number
        elif invalid is not None and key not in invalid and key not in TEXT_MEMBERS:
            invalid[key] = (where, _shown(value))
    return found


def read_report(path: str, command: str = "compare") -> dict:
    """A Google Benchmark JSON report file, parsed; any problem is one UsageError line
    (``command: path: reason``)."""
    return _parse(path, _read_text(path, command), command)


def benchmark_file(label: str, report: dict, benchmarks=None, invalid=None) -> BenchmarkFile:
    """The benchmarks of a parsed report (``label`` names it in messages);
    ``benchmarks`` and ``invalid``: its rows, already read with :func:`add_entry` by
    a reader that walks them for its own use too (the report: each row read once)."""
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise _fail(label, 'not a Google Benchmark JSON report (no "benchmarks" list)')
    if benchmarks is None:
        benchmarks, invalid = {}, {}
        for index, entry in enumerate(report["benchmarks"]):
            add_entry(label, index, entry, benchmarks, invalid)
    context = report.get("context")
    findings = report.get("findings")
    return BenchmarkFile(label, context if isinstance(context, dict) else {}, benchmarks,
                         findings if isinstance(findings, dict) else {}, invalid)


def read_benchmark_file(path: str) -> BenchmarkFile:
    """Reads a Google Benchmark JSON report; any problem is one UsageError line."""
    return benchmark_file(path, read_report(path))


class ReportHistory(list):
    """The ``(label, report)`` pairs of a reference that names a history: several runs
    of the same benchmarks, newest first (a results store's ``stored:history``).

    A plain list of one report is one run; a history is compared as a
    history (a baseline learned from its runs' spread) whatever its length,
    also with one run or none (nothing stored yet). ``notes``: what its
    loader says of it (why it is empty: no run of this machine...).
    """

    def __init__(self, reports=(), notes=()):
        super().__init__(reports)
        self.notes = list(notes)

    def oldest_first(self) -> list[tuple[str, dict]]:
        """The runs in the order they were measured (as a report draws a history)."""
        return list(reversed(self))


def load_reports(config, reference: str, like: dict | None = None,
                 command: str = "compare") -> list[tuple[str, dict]]:
    """The ``(label, report)`` pairs ``reference`` names: what a plugin resolves
    (``ireebench_load_reports``: a results store's ``stored:...``), else the
    report file at that path (``command`` names the command in its errors).

    ``like``: the report the result will be compared with (the other side
    of a comparison), so that a store picks runs of the same machine and
    benchmarks; ``None`` when there is none. A :class:`ReportHistory`
    answer stays one.
    """
    loaded = call_hook(config.pm, "ireebench_load_reports", config=config, reference=reference,
                       like=like)
    if loaded is None:
        return [(reference, read_report(reference, command))]
    return loaded if isinstance(loaded, ReportHistory) else list(loaded)


def load_benchmark_file(config, reference: str, like: dict | None = None) -> BenchmarkFile:
    """The one report ``reference`` names, read for a comparison."""
    loaded = load_reports(config, reference, like)
    if len(loaded) != 1 or isinstance(loaded, ReportHistory):
        raise _fail(reference, f"names {len(loaded)} reports; a comparison takes one a side")
    return benchmark_file(*loaded[0])
