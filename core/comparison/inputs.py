"""Google Benchmark JSON files read for a comparison, with one-line errors.

Reads what ireebench writes (``--benchmark_out``, ``--benchmark_format=json``)
and what the native ``iree-benchmark-module`` writes, aggregate rows of any
name included (``_mean``, ``_median``, a custom ``_p90``...). Per benchmark
(its ``run_name``), the per-repetition times in seconds per iteration, real
and CPU; failed rows are kept as messages; aggregates are kept by name, and
only ``median`` then ``mean`` are ever used (as a single value, for a file
written with ``--benchmark_report_aggregates_only``). Text a tool printed
after the report (``--benchmark_format=json`` with output printing) is
ignored, as the native backend ignores it.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass

from ..errors import UsageError, one_line
from ..hookcall import call_hook
from ..results import TIME_UNIT_MULTIPLIER

METRICS = ("real_time", "cpu_time")
# The fields of a row this reader uses.
COMPARED_FIELDS = frozenset({
    "name", "run_name", "run_type", "time_unit", *METRICS, "error_occurred", "error_message",
    "skipped", "skip_message", "aggregate_name", "aggregate_unit"})
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


class BenchmarkRows:
    """One benchmark of a file: its repetitions, aggregates and errors.

    :ivar repetitions: metric -> per-repetition values in seconds per
        iteration, in file order.
    :ivar aggregates: aggregate name -> metric -> seconds (time aggregates
        only; cv is skipped).
    :ivar errors: the messages of its failed rows.

    Slots, and containers made only when a row needs them: a report of
    200,000 benchmarks holds 200,000 of these a side.
    """

    __slots__ = ("_aggregates", "_errors", "_values", "run_name", "time_unit")

    def __init__(self, run_name: str, time_unit: str):
        self.run_name = run_name
        self.time_unit = time_unit
        self._values = tuple([] for _ in METRICS)
        self._aggregates: dict[str, dict[str, float]] | None = None
        self._errors: list[str] | None = None

    @property
    def repetitions(self) -> dict[str, list[float]]:
        return dict(zip(METRICS, self._values))

    @property
    def aggregates(self) -> dict[str, dict[str, float]]:
        return self._aggregates if self._aggregates is not None else {}

    @property
    def errors(self) -> list[str]:
        return self._errors if self._errors is not None else []

    def add_repetition(self, times: tuple[float, ...]) -> None:
        """One repetition's values, in the order of :data:`METRICS`."""
        for values, value in zip(self._values, times):
            values.append(value)

    def add_aggregate(self, name: str, times: dict[str, float]) -> None:
        if self._aggregates is None:
            self._aggregates = {}
        self._aggregates[name] = times

    def add_error(self, message: str) -> None:
        if self._errors is None:
            self._errors = []
        self._errors.append(message)

    def values(self, metric: str) -> tuple[list[float], str]:
        """The values to compare and where they come from (``repetitions``,
        ``median aggregate``...; ``""`` when there is none)."""
        repeated = self._values[METRICS.index(metric)]
        if repeated:
            return list(repeated), "repetitions"
        for name in FALLBACK_AGGREGATES:
            if name in self.aggregates:
                return [self.aggregates[name][metric]], f"{name} aggregate"
        return [], ""


@dataclass
class BenchmarkFile:
    """A Google Benchmark JSON report: its context and its benchmarks in file order."""

    path: str
    context: dict
    benchmarks: dict[str, BenchmarkRows]


def _fail(path: str, reason: str) -> UsageError:
    return UsageError(f"compare: {path}: {reason}")


def _read_text(path: str) -> str:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise _fail(path, "file not found") from None
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or one_line(exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise _fail(path, "is a directory")
    if info.st_size > MAX_FILE_BYTES:
        raise _fail(path, f"larger than {MAX_FILE_BYTES} bytes; not a benchmark report")
    chunks, size = [], 0
    try:
        with open(path, "rb") as handle:
            # In chunks: read(MAX_FILE_BYTES + 1) would allocate 1 GiB for any
            # file; a FIFO has no size to check first.
            while size <= MAX_FILE_BYTES and (chunk := handle.read(_CHUNK)):
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or one_line(exc)}") from None
    if size > MAX_FILE_BYTES:
        raise _fail(path, f"larger than {MAX_FILE_BYTES} bytes; not a benchmark report")
    data = b"".join(chunks)
    del chunks
    if not data.strip():
        raise _fail(path, "file is empty")
    return data.decode("utf-8", errors="replace")


def _compared_fields(entry: dict) -> dict:
    """A row (it has a time or an error) with only the fields a comparison
    reads; any other object as it is (the context)."""
    if "real_time" in entry or "error_occurred" in entry or "skipped" in entry:
        return {key: value for key, value in entry.items() if key in COMPARED_FIELDS}
    return entry


def _parse(path: str, text: str, object_hook=None) -> dict:
    try:
        report, _ = json.JSONDecoder(object_hook=object_hook).raw_decode(text.lstrip())
    except ValueError as exc:
        raise _fail(path, f"not JSON ({one_line(exc)})") from None
    except RecursionError:
        raise _fail(path, "not JSON (nested too deeply)") from None
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise _fail(path, 'not a Google Benchmark JSON report (no "benchmarks" list)')
    return report


def _seconds(path: str, where, entry: dict, key: str, scale: float) -> float:
    """A time of the row in seconds per iteration, within :data:`TIME_RANGE`
    (``where()`` names the row, only for the error)."""
    value = entry.get(key)
    if type(value) is not float:  # the rows' times are floats: checked once, fast
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(path, f"{where()}: {key} is not a finite number ({_shown(value)})")
        try:
            value = float(value)
        except OverflowError:  # an integer beyond any float
            raise _fail(path, f"{where()}: {key} is not a finite number "
                              f"({_shown(value)})") from None
    seconds = value / scale
    if not _LOW <= abs(seconds) <= _HIGH and seconds != 0:
        if not math.isfinite(value):
            raise _fail(path, f"{where()}: {key} is not a finite number ({value!r})")
        unit = next(name for name, multiplier in TIME_UNIT_MULTIPLIER.items()
                    if multiplier == scale)
        raise _fail(path, f"{where()}: {key} {value:g} {unit} is not a time a benchmark "
                          f"takes (between {_LOW:g} s and {_HIGH:g} s per iteration)")
    return seconds


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _add_entry(path: str, index: int, entry, benchmarks: dict[str, BenchmarkRows]) -> None:
    if not isinstance(entry, dict):
        raise _fail(path, f"benchmark #{index + 1}: not a JSON object")
    name = entry.get("run_name") or entry.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(path, f"benchmark #{index + 1}: no name")

    def where() -> str:  # built only for an error: a report may have 10^6 rows
        return f"benchmark #{index + 1} ({name})"

    unit = entry.get("time_unit", "ns")
    scale = TIME_UNIT_MULTIPLIER.get(unit) if isinstance(unit, str) else None
    if scale is None:
        raise _fail(path, f"{where()}: unknown time_unit {_shown(unit)} (one of "
                          f"{', '.join(TIME_UNIT_MULTIPLIER)})")
    rows = benchmarks.get(name)
    if rows is None:
        rows = benchmarks[name] = BenchmarkRows(name, unit)
    if entry.get("error_occurred") or entry.get("skipped"):
        message = entry.get("error_message") or entry.get("skip_message") or "failed"
        rows.add_error(one_line(message))
        return
    run_type = entry.get("run_type", "iteration")
    if run_type == "aggregate":
        aggregate = str(entry.get("aggregate_name", ""))
        if entry.get("aggregate_unit", "time") != "time" or not aggregate:
            return  # cv (a fraction), or something that is not a time
        try:
            rows.add_aggregate(aggregate, {metric: _seconds(path, where, entry, metric, scale)
                                           for metric in METRICS})
        except UsageError:
            pass  # an aggregate of another shape (BigO, RMS): never compared
        return
    if run_type != "iteration":
        return  # a row kind this reader does not know (e.g. complexity fits)
    rows.add_repetition(tuple(_seconds(path, where, entry, metric, scale)
                              for metric in METRICS))


def read_report(path: str) -> dict:
    """A Google Benchmark JSON report file, parsed; any problem is one UsageError line."""
    return _parse(path, _read_text(path))


def benchmark_file(label: str, report: dict) -> BenchmarkFile:
    """The benchmarks of a parsed report (``label`` names it in messages)."""
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise _fail(label, 'not a Google Benchmark JSON report (no "benchmarks" list)')
    benchmarks: dict[str, BenchmarkRows] = {}
    for index, entry in enumerate(report["benchmarks"]):
        _add_entry(label, index, entry, benchmarks)
    context = report.get("context")
    return BenchmarkFile(label, context if isinstance(context, dict) else {}, benchmarks)


def read_benchmark_file(path: str) -> BenchmarkFile:
    """Reads a Google Benchmark JSON report; any problem is one UsageError line.

    Each row is kept, while the file is parsed, with only the fields a
    comparison reads (:data:`COMPARED_FIELDS`): a report of 200,000 rows then
    needs a third of the memory of its whole objects.
    """
    return benchmark_file(path, _parse(path, _read_text(path), _compared_fields))


def _resolved(config, reference: str):
    """What a plugin resolves ``reference`` to (``ireebench_load_reports``), or None."""
    return call_hook(config.pm, "ireebench_load_reports", config=config, reference=reference)


def load_reports(config, reference: str) -> list[tuple[str, dict]]:
    """The ``(label, report)`` pairs ``reference`` names: what a plugin resolves
    (``ireebench_load_reports``: a results store's ``stored:...``), else the
    report file at that path."""
    loaded = _resolved(config, reference)
    if loaded is None:
        return [(reference, read_report(reference))]
    return list(loaded)


def load_benchmark_file(config, reference: str) -> BenchmarkFile:
    """The one report ``reference`` names, read for a comparison (a file with
    :func:`read_benchmark_file`)."""
    loaded = _resolved(config, reference)
    if loaded is None:
        return read_benchmark_file(reference)
    loaded = list(loaded)
    if len(loaded) != 1:
        raise _fail(reference, f"names {len(loaded)} reports; a comparison takes one a side")
    return benchmark_file(*loaded[0])
