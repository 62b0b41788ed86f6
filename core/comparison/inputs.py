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
from dataclasses import dataclass, field

from ..errors import UsageError, one_line
from ..hookcall import call_hook
from ..results import TIME_UNIT_MULTIPLIER

METRICS = ("real_time", "cpu_time")
# Aggregates a file without repetition rows is compared on, in this order.
FALLBACK_AGGREGATES = ("median", "mean")
# A benchmark report larger than this is not a report.
MAX_FILE_BYTES = 1 << 30


@dataclass
class BenchmarkRows:
    """One benchmark of a file: its repetitions, aggregates and errors."""

    run_name: str
    time_unit: str
    # metric -> per-repetition values in seconds per iteration, file order
    repetitions: dict[str, list[float]] = field(
        default_factory=lambda: {metric: [] for metric in METRICS})
    # aggregate name -> metric -> seconds (time aggregates only; cv is skipped)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def values(self, metric: str) -> tuple[list[float], str]:
        """The values to compare and where they come from (``repetitions``,
        ``median aggregate``...; ``""`` when there is none)."""
        if self.repetitions[metric]:
            return list(self.repetitions[metric]), "repetitions"
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
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or one_line(exc)}", command) from None
    if len(data) > MAX_FILE_BYTES:
        raise _fail(path, f"larger than {MAX_FILE_BYTES} bytes; not a benchmark report",
                    command)
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
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(float(value)):
        raise _fail(path, f"{where}: {key} is not a finite number ({value!r})")
    return float(value)


def _add_entry(path: str, index: int, entry, benchmarks: dict[str, BenchmarkRows]) -> None:
    where = f"benchmark #{index + 1}"
    if not isinstance(entry, dict):
        raise _fail(path, f"{where}: not a JSON object")
    name = entry.get("run_name") or entry.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(path, f"{where}: no name")
    where = f"{where} ({name})"
    unit = entry.get("time_unit", "ns")
    if unit not in TIME_UNIT_MULTIPLIER:
        raise _fail(path, f"{where}: unknown time_unit {unit!r}")
    rows = benchmarks.setdefault(name, BenchmarkRows(name, unit))
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
            rows.aggregates[aggregate] = {
                metric: _number(path, where, entry, metric) / TIME_UNIT_MULTIPLIER[unit]
                for metric in METRICS}
        except UsageError:
            pass  # an aggregate of another shape (BigO, RMS): never compared
        return
    if run_type != "iteration":
        return  # a row kind this reader does not know (e.g. complexity fits)
    for metric in METRICS:
        rows.repetitions[metric].append(
            _number(path, where, entry, metric) / TIME_UNIT_MULTIPLIER[unit])


def read_report(path: str, command: str = "compare") -> dict:
    """A Google Benchmark JSON report file, parsed; any problem is one UsageError line
    (``command: path: reason``)."""
    return _parse(path, _read_text(path, command), command)


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
    """Reads a Google Benchmark JSON report; any problem is one UsageError line."""
    return benchmark_file(path, read_report(path))


def load_reports(config, reference: str, command: str = "compare") -> list[tuple[str, dict]]:
    """The ``(label, report)`` pairs ``reference`` names: what a plugin resolves
    (``ireebench_load_reports``: a results store's ``stored:...``), else the
    report file at that path (``command`` names the command in its errors)."""
    loaded = call_hook(config.pm, "ireebench_load_reports", config=config, reference=reference)
    if loaded is None:
        return [(reference, read_report(reference, command))]
    return list(loaded)


def load_benchmark_file(config, reference: str) -> BenchmarkFile:
    """The one report ``reference`` names, read for a comparison."""
    loaded = load_reports(config, reference)
    if len(loaded) != 1:
        raise _fail(reference, f"names {len(loaded)} reports; a comparison takes one a side")
    return benchmark_file(*loaded[0])
