"""Google Benchmark JSON reports read for drawing: every field a row carries.

The comparison engine (:mod:`ireebench.comparison.inputs`) reads times only;
a report draws whatever else is there, so this reads each row whole, from
ireebench's JSON or any Google Benchmark's: a benchmark is a ``run_name``
with its repetitions and aggregates, rows a plugin appends under it
(``BM_<fn>/<row>``) belong to it (:data:`ireebench.names`), a point's axes
are its ``params`` (or Google Benchmark's ArgNames), and every other number
is a metric. Times are kept in seconds per iteration; a problem with a
report is one :class:`~ireebench.UsageError` line. The rows are read once by
``ireebench compare``'s reader in the same walk (:attr:`Report.rows`,
:func:`~ireebench.comparison.inputs.add_entry`), so the comparisons are that
engine's, and the parsed JSON is not kept.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from ireebench.comparison.inputs import BenchmarkFile, add_entry, benchmark_file, row_identity
from ireebench.comparison.machine import ROW_KEYS as IDENTITY_KEYS
from ireebench.comparison.machine import combined_provenance, row_context
from ireebench.errors import UsageError, one_line
from ireebench.names import TIMING_SUFFIX
from ireebench.results import TIME_UNIT_MULTIPLIER

# The keys of Google Benchmark's rows that are not metrics (json_reporter.cc),
# and the fields of other issues' contracts handled by name.
ROW_KEYS = frozenset({
    "name", "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
    "error_occurred", "error_message", "skipped", "skip_message", "iterations",
    "real_time", "cpu_time", "time_unit", "label", "params", "big_o", "rms",
    "complexity", "complexity_n",
})
TIME_METRICS = ("real_time", "cpu_time", "device_time")
# Google Benchmark's MemoryManager fields and ireebench's memory counters (issue "Metrics").
BYTE_METRICS = ("max_bytes_used", "total_allocated_bytes", "net_heap_growth",
                "device_bytes_peak", "host_bytes_peak")
COUNT_METRICS = ("allocs_per_iter",)
MEMORY_METRICS = BYTE_METRICS + COUNT_METRICS
# The counters of a dispatch statistics row (plugins/dispatch_statistics.py).
DISPATCH_COUNTERS = ("calls", "percent")
COLD_START_ROW = "cold_start"
# Aggregates that stand in for the repetitions of a report written with
# --benchmark_report_aggregates_only, in this order (as comparison.inputs).
FALLBACK_AGGREGATES = ("median", "mean")
_ARG = re.compile(r"^([A-Za-z_][\w.-]*):(.+)$")


def _fail(label: str, reason: str) -> UsageError:
    return UsageError(f"report: {label}: {reason}")


def _number(value) -> float | None:
    if type(value) is float:  # nearly every number of a report: the fast path
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return value if math.isfinite(value) else None


def _param_value(text: str):
    """A name's ``bs:4`` value as a number where it is one (params keep numbers)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def family_and_args(run_name: str) -> tuple[str, dict]:
    """``BM_forward/bs:4/seq:8/process_time/real_time`` -> ``("BM_forward", {"bs": 4,
    "seq": 8})``: the name without its timing suffix and its ArgNames parts."""
    parts = run_name.removesuffix(TIMING_SUFFIX).split("/")
    args, kept = {}, []
    for part in parts:
        match = _ARG.match(part)
        if match and kept:
            args[match.group(1)] = _param_value(match.group(2))
        else:
            kept.append(part)
    return "/".join(kept), args


def display_name(run_name: str) -> str:
    """The name as a chart shows it: without Google Benchmark's timing suffix."""
    return run_name.removesuffix(TIMING_SUFFIX)


@dataclass
class ExtraRow:
    """A row a plugin appended under a benchmark (a dispatch, the cold start)."""

    name: str  # the row's part of the name: the dispatch function, "cold_start"
    real: float  # seconds per iteration (a dispatch: its device time per iteration)
    cpu: float
    metrics: dict[str, float] = field(default_factory=dict)  # calls, percent ...

    @property
    def is_dispatch(self) -> bool:
        return all(name in self.metrics for name in DISPATCH_COUNTERS)


@dataclass
class Benchmark:
    """One benchmark of a report. Times in seconds per iteration."""

    name: str  # run_name
    time_unit: str
    family: str = ""  # the name without timing suffix and sweep axes
    params: dict = field(default_factory=dict)
    # metric -> per-repetition values (times in seconds), in file order
    values: dict[str, list[float]] = field(default_factory=dict)
    # aggregate name -> metric -> value (times in seconds; "percentage" ones as fractions)
    aggregates: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    extra_rows: list[ExtraRow] = field(default_factory=list)
    family_index: int | None = None
    # What the analysis worked out of it once (its distribution), by key.
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def display(self) -> str:
        return display_name(self.name)

    @property
    def repetitions(self) -> list[float]:
        """The real times of the repetitions (seconds per iteration)."""
        return self.values.get("real_time", [])

    def metric(self, name: str) -> list[float]:
        """A metric's per-repetition values, else the median (then mean) aggregate's."""
        if self.values.get(name):
            return list(self.values[name])
        for aggregate in FALLBACK_AGGREGATES:
            value = self.aggregates.get(aggregate, {}).get(name)
            if value is not None:
                return [value]
        return []

    def metric_names(self) -> list[str]:
        """Every metric with a value: times first, then the others in file order."""
        names = [m for m in TIME_METRICS if self.metric(m)]
        seen = set(names)
        for source in (self.values, *self.aggregates.values()):
            for name in source:
                if name not in seen:
                    seen.add(name)
                    names.append(name)
        return names

    @property
    def dispatches(self) -> list[ExtraRow]:
        return [row for row in self.extra_rows if row.is_dispatch]

    @property
    def cold_start(self) -> ExtraRow | None:
        return next((row for row in self.extra_rows if row.name == COLD_START_ROW), None)

    @property
    def drawable(self) -> bool:
        return bool(self.metric("real_time"))


@dataclass
class Report:
    """A Google Benchmark JSON report, as drawn: its context and benchmarks in order."""

    label: str
    context: dict
    benchmarks: dict[str, Benchmark]
    # The same rows as the comparison engine reads them (ireebench compare's reader),
    # or why it cannot: what the comparisons compare.
    rows: BenchmarkFile | None = None
    rows_problem: str = ""
    # What its rows were measured on, each row's own (a sweep's or suite's points:
    # machine.row_context), every value once: devices, modules ({"path",
    # "sha256"}), host names.
    devices: list[str] = field(default_factory=list)
    modules: list[dict] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)

    @property
    def drawable(self) -> list[Benchmark]:
        return [b for b in self.benchmarks.values() if b.drawable]

    @property
    def findings(self) -> dict:
        """The JSON's ``"findings"`` (``rank``...: docs/plugins.md, "What a section reads")."""
        return self.rows.findings if self.rows is not None else {}

    @property
    def written_by_ireebench(self) -> bool:
        return "ireebench_version" in self.context

    @property
    def rate_counters(self) -> set[str]:
        """The counters this report says are rates (``rate_counters`` in its context, as
        ``--counter`` records them; Google Benchmark's JSON does not say)."""
        listed = self.context.get("rate_counters")
        if isinstance(listed, str):
            listed = listed.split(",")
        return {str(name) for name in listed} if isinstance(listed, list) else set()

    def nothing_to_draw(self) -> str:
        """Why this report has nothing to draw ("" when it has something)."""
        if self.drawable:
            return ""
        if not self.benchmarks:
            return "no benchmark rows"
        failed = [b for b in self.benchmarks.values() if b.errors]
        if failed:
            return (f"every benchmark failed ({len(failed)}; {failed[0].display}: "
                    f"{failed[0].errors[0]})")
        return "no benchmark has a time"


def _row_metrics(label: str, where: str, entry: dict, unit: str) -> dict[str, float]:
    """The metrics of one row; times converted to seconds (a percentage aggregate's
    fraction kept as it is)."""
    scale = 1.0 / TIME_UNIT_MULTIPLIER[unit]
    percentage = entry.get("aggregate_unit", "time") == "percentage"
    metrics = {}
    for key in ("real_time", "cpu_time"):
        value = _number(entry.get(key))
        if value is None:
            raise _fail(label, f"{where}: {key} is not a finite number ({entry.get(key)!r})")
        metrics[key] = value if percentage else value * scale
    for key, raw in entry.items():
        if key in ROW_KEYS or isinstance(raw, str):
            continue  # the row's identity; text is not a metric
        value = _number(raw)
        if value is None:
            continue  # lists, objects: not a metric
        metrics[key] = value if (percentage or key != "device_time") else value * scale
    return metrics


def _extra_row_of(current: Benchmark | None, entry: dict, name: str) -> str | None:
    """The row's own part when it is a row appended under ``current``, else None."""
    if current is None or name == current.name or entry.get("run_type") == "aggregate":
        return None
    prefix = current.name.removesuffix(TIMING_SUFFIX) + "/"
    if not name.startswith(prefix) or name.endswith(TIMING_SUFFIX):
        return None
    index = entry.get("family_index")
    if current.family_index is not None and index is not None and index != current.family_index:
        return None
    return name[len(prefix):]


def read_report(label: str, report: dict) -> Report:
    """The :class:`Report` of a parsed Google Benchmark JSON report."""
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise _fail(label, 'not a Google Benchmark JSON report (no "benchmarks" list)')
    context = report.get("context")
    benchmarks: dict[str, Benchmark] = {}
    current: Benchmark | None = None
    compared, invalid, problem = {}, {}, ""  # the comparison engine's rows, read here too
    for index, entry in enumerate(report["benchmarks"]):
        identity = name, unit, where = row_identity(label, index, entry, "report")
        if not problem:
            try:
                add_entry(label, index, entry, compared, invalid, identity)
            except UsageError as exc:
                problem = str(exc)
        failed = entry.get("error_occurred") or entry.get("skipped")
        row = _extra_row_of(current, entry, name)
        if row is not None:
            if failed:
                continue  # a failed extra row has nothing to draw; its benchmark has
            metrics = _row_metrics(label, where, entry, unit)
            current.extra_rows.append(ExtraRow(row, metrics.pop("real_time"),
                                               metrics.pop("cpu_time"), metrics))
            continue
        benchmark = benchmarks.get(name)
        if benchmark is None:
            family, args = family_and_args(name)
            params = entry.get("params")
            benchmark = benchmarks[name] = Benchmark(
                name, unit, family, dict(params) if isinstance(params, dict) else args,
                family_index=entry.get("family_index")
                if isinstance(entry.get("family_index"), int) else None)
        current = benchmark
        if failed:
            message = entry.get("error_message") or entry.get("skip_message") or "failed"
            benchmark.errors.append(one_line(message))
            continue
        run_type = entry.get("run_type", "iteration")
        if run_type == "aggregate":
            aggregate = str(entry.get("aggregate_name", ""))
            if aggregate:
                benchmark.aggregates[aggregate] = _row_metrics(label, where, entry, unit)
            continue
        if run_type != "iteration":
            continue  # a kind of row this reader does not know (complexity fits)
        for key, value in _row_metrics(label, where, entry, unit).items():
            benchmark.values.setdefault(key, []).append(value)
    rows = None if problem else benchmark_file(label, report, compared, invalid)
    context = context if isinstance(context, dict) else {}
    found = Report(label, context, benchmarks, rows, problem)
    found.devices, found.modules, found.hosts = row_provenance(context, report["benchmarks"])
    return found


def row_provenance(context: dict, entries: list) -> tuple[list[str], list[dict], list[str]]:
    """``(devices, modules, hosts)`` of a report's rows: each row's identity
    (:func:`ireebench.comparison.machine.row_context`: the context overlaid by
    the row's own keys, which every row of a sweep or suite carries), every
    value once, in order."""
    contexts, seen, bare = [], set(), False
    for entry in entries:
        if not isinstance(entry, dict) or not any(key in entry for key in IDENTITY_KEYS):
            bare = True
            continue
        key = json.dumps([entry.get(name) for name in IDENTITY_KEYS], default=str)
        if key not in seen:
            seen.add(key)
            contexts.append(row_context(context, entry))
    if bare or not contexts:
        contexts.insert(0, context)
    devices, modules = combined_provenance(contexts)
    hosts = list(dict.fromkeys(str(c["host_name"]) for c in contexts if c.get("host_name")))
    return devices, modules, hosts
