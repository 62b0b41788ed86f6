"""A library for Google Benchmark's JSON: reading a report into runs and a context
(the native tools', ireebench's or any Google Benchmark's), and writing runs as
its reporter does (:class:`JSONReporter`, src/json_reporter.cc, byte for byte).

The reader: :func:`split_benchmark_json` (a native tool's stdout),
:func:`runs_from_benchmark_json`, :func:`context_from_benchmark_json`. The writer
(the ``json_reporter`` plugin's ``--benchmark_format=json``; a report drawn of a run):

Layout, key order, indentation and number formatting follow Google
Benchmark v1.9 as iree-benchmark-module prints it: doubles in
``std::scientific`` with 16 fractional digits, integers plain, the context
keys in Google Benchmark's order followed by the ``--benchmark_context``
entries (sorted by key, like its std::map) and then ireebench's provenance
(``context.extra``), which consumers such as compare.py ignore. A row of a
sweep's point ends with its ``"params"`` object (``{"bs": 4}``, numbers as
numbers), then the context entries of its point (``iree_devices``,
``iree_module``, ``iree_module_sha256``: ``Run.provenance``); plain runs have
neither. What plugins found out while measuring
(``context.findings``, e.g. multimodal repetitions) is known only after the
context block was written: it follows ``"benchmarks"`` as a top-level
``"findings"`` object, only when there is one (so a plain run's report stays
Google Benchmark's).

The report streams: the context and the opening of ``"benchmarks"`` are
written first, each benchmark's rows as they finish, and the closing
brackets by :meth:`JSONReporter.finalize`, which the hub calls on every exit
path, so an interrupted run still leaves valid JSON.
"""

from __future__ import annotations

import json
import re

from ireebench.errors import UsageError
from ireebench.names import function_of
from ireebench.reporting import Reporter
from ireebench.reporting.humanize import cpp_stream, json_double
from ireebench.results import (
    MEMORY_KEYS,
    RUN_KEYS,
    TIME_UNIT_MULTIPLIER,
    Counter,
    MemoryResult,
    Run,
)


def _memory_of(entry: dict) -> MemoryResult | None:
    """The memory members of a JSON run, or None without any."""
    present = {key: entry[key] for key in MEMORY_KEYS
               if isinstance(entry.get(key), (int, float)) and not isinstance(entry[key], bool)}
    if not present:
        return None
    return MemoryResult(**{key: (float(value) if key == "allocs_per_iter" else int(value))
                           for key, value in present.items()})


def split_benchmark_json(text: str) -> tuple[dict | None, str]:
    """Parses the JSON report a native tool printed first on stdout.

    :return: ``(report, rest)``; ``report`` is ``None`` when stdout does not
        start with a complete JSON object (the tool failed before or while
        reporting); ``rest`` is what the tool printed after the report
        (output processing), or all of stdout when there is no report.
    """
    stripped = text.lstrip()
    try:
        report, end = json.JSONDecoder().raw_decode(stripped)
    except ValueError:
        return None, text
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        return None, text
    return report, stripped[end:].lstrip("\n")


def run_from_benchmark_json(entry: dict, batch_size: int = 1) -> Run:
    """Turns one run of a Google Benchmark JSON report into a :class:`Run`.

    Google Benchmark reports per-iteration times in ``time_unit``; a Run
    keeps accumulated seconds, so the per-iteration value is scaled back
    (``cv`` rows, a fraction, are kept as they are).
    """
    run_name = str(entry.get("run_name") or entry.get("name", ""))
    unit = entry.get("time_unit", "ms")
    if unit not in TIME_UNIT_MULTIPLIER:
        raise UsageError(f"native report: unknown time_unit {unit!r} in {run_name}")
    run_type = entry.get("run_type", "iteration")
    iterations = int(entry.get("iterations", 0) or 0)
    aggregate_unit = entry.get("aggregate_unit", "time")
    if run_type == "aggregate" and aggregate_unit == "percentage":
        scale = 1.0
    else:
        scale = iterations / TIME_UNIT_MULTIPLIER[unit]
    counters = {}
    for key, value in entry.items():
        if key not in RUN_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            # Google Benchmark's JSON does not say which counters are rates;
            # its own rate counters are named *_per_second.
            counters[key] = Counter(float(value), is_rate=key.endswith("_per_second"))
    run = Run(
        name=run_name.split("/", 1)[0],
        run_name=run_name,
        function=function_of(run_name),
        iterations=iterations,
        real_accumulated_time=float(entry.get("real_time", 0.0)) * scale,
        cpu_accumulated_time=float(entry.get("cpu_time", 0.0)) * scale,
        time_unit=unit,
        run_type=run_type,
        family_index=int(entry.get("family_index", 0)),
        per_family_instance_index=int(entry.get("per_family_instance_index", 0)),
        repetitions=int(entry.get("repetitions", 1)),
        repetition_index=(None if run_type == "aggregate"
                          else int(entry.get("repetition_index", 0))),
        threads=int(entry.get("threads", 1)),
        aggregate_name=str(entry.get("aggregate_name", "")),
        aggregate_unit=aggregate_unit,
        counters=counters,
        label=str(entry.get("label", "")),
        error_occurred=bool(entry.get("error_occurred", False)),
        error_message=str(entry.get("error_message", "")),
        batch_size=batch_size,
    )
    device_time = entry.get("device_time")
    if isinstance(device_time, (int, float)) and not isinstance(device_time, bool):
        run.device_accumulated_time = float(device_time) * scale
    run.memory = _memory_of(entry)
    params = entry.get("params")
    if isinstance(params, dict):
        run.params = dict(params)
    # The context entries of the row's point (ireebench's rows of a sweep or
    # suite): the members that are neither Google Benchmark's nor numbers.
    run.provenance = {key: value for key, value in entry.items()
                      if key not in RUN_KEYS and isinstance(value, (str, list, dict))}
    if run_type == "iteration" and iterations and not run.error_occurred:
        run.samples = [run.real_seconds]  # one value per repetition, as in process
    return run


def runs_by_benchmark(report: dict, batch_size: int = 1) -> list[list[Run]]:
    """The runs of a native JSON report, grouped per benchmark, in report order."""
    groups: dict[str, list] = {}
    for entry in report.get("benchmarks", []):
        run = run_from_benchmark_json(entry, batch_size)
        groups.setdefault(run.run_name, []).append(run)
    return list(groups.values())


def runs_from_benchmark_json(report: dict, batch_size: int = 1) -> list[list[Run]]:
    """A Google Benchmark JSON report (the native tool's, or ireebench's) as rows,
    grouped per benchmark in report order; each repetition row carries its
    time in ``samples``."""
    return runs_by_benchmark(report, batch_size)


def benchmark_function(runs: list[Run]) -> str:
    """The function a group of runs measured (``BM_add/...`` -> ``add``)."""
    return function_of(runs[0].name)


def context_from_benchmark_json(report: dict, global_context: dict | None = None):
    """The :class:`ireebench._context.Context` a native tool reported (its machine, its
    executable)."""
    from ireebench._context import CacheInfo, Context
    data = report.get("context", {}) or {}
    mhz = int(data.get("mhz_per_cpu", 0) or 0)
    return Context(
        date=str(data.get("date", "")),
        host_name=str(data.get("host_name", "")),
        executable=str(data.get("executable", "")),
        num_cpus=int(data.get("num_cpus", 1) or 1),
        mhz_per_cpu=mhz,
        cycles_per_second=mhz * 1e6,
        cpu_scaling_enabled=data.get("cpu_scaling_enabled"),  # None: not reported
        aslr_enabled=data.get("aslr_enabled"),
        caches=[CacheInfo(str(c.get("type", "")), int(c.get("level", 0)),
                          int(c.get("size", 0)), int(c.get("num_sharing", 0)))
                for c in data.get("caches", []) or []],
        load_avg=[float(v) for v in data.get("load_avg", []) or []],
        library_version=str(data.get("library_version", "")) or "v1.9.5",
        library_build_type=str(data.get("library_build_type", "release")),
        global_context=dict(global_context or {}),
    )


# Text without a character StrEscape escapes, a control character or a surrogate.
_PLAIN = re.compile(r'[^\x00-\x1f"\\\ud800-\udfff]*')
_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\\": "\\\\", '"': '\\"'}


def json_string(text) -> str:
    """A quoted JSON string, escaped like Google Benchmark's StrEscape.

    Control characters it leaves raw are written as ``\\u00XX``, and so are
    the surrogate escapes of bytes that were not UTF-8 (a flag value, a
    path), so the output is always valid UTF-8 JSON.
    """
    text = str(text)
    if _PLAIN.fullmatch(text):  # most names and values: nothing to escape
        return f'"{text}"'
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or 0xD800 <= ord(char) <= 0xDFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def json_value(value) -> str:
    """Any context value: strings, booleans, integers, doubles, lists, dicts."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json_double(value)
    if isinstance(value, str):
        return json_string(value)
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json_string(k)}: {json_value(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(json_value(v) for v in value) + "]"
    return json.dumps(str(value))


def kv(key: str, value) -> str:
    return f"{json_string(key)}: {json_value(value)}"


def context_lines(context) -> list[str]:
    """The ``"context"`` members, each a ``"key": value`` text, in order."""
    lines = [
        kv("date", context.date),
        kv("host_name", context.host_name),
        kv("executable", context.executable),
        kv("num_cpus", int(context.num_cpus)),
        kv("mhz_per_cpu", int(context.mhz_per_cpu)),
    ]
    if context.cpu_scaling_enabled is not None:
        lines.append(kv("cpu_scaling_enabled", bool(context.cpu_scaling_enabled)))
    if context.aslr_enabled is not None:
        lines.append(kv("aslr_enabled", bool(context.aslr_enabled)))
    caches = []
    for cache in context.caches:
        caches.append(
            "      {\n"
            f"        {kv('type', cache.type)},\n"
            f"        {kv('level', int(cache.level))},\n"
            f"        {kv('size', int(cache.size))},\n"
            f"        {kv('num_sharing', int(cache.num_sharing))}\n"
            "      }"
        )
    lines.append('"caches": [\n' + ",\n".join(caches) + ("\n" if caches else "") + "    ]")
    lines.append('"load_avg": [' + ",".join(cpp_stream(v) for v in context.load_avg) + "]")
    lines.append(kv("library_version", context.library_version))
    lines.append(kv("library_build_type", context.library_build_type))
    lines.append(kv("json_schema_version", 1))
    taken = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
             "cpu_scaling_enabled", "aslr_enabled", "caches", "load_avg",
             "library_version", "library_build_type", "json_schema_version"}
    for key, value in context.sorted_global_context():
        lines.append(kv(key, str(value)))
        taken.add(key)
    # Provenance last; a key the user already set with --benchmark_context wins.
    for key, value in context.extra.items():
        if key not in taken:
            lines.append(kv(key, value))
    return lines


def _counter_value(counter) -> float:
    return float(getattr(counter, "value", counter))


def memory_lines(memory) -> list[str]:
    """Google Benchmark's memory members (after the counters, as its JSONReporter
    writes a run's ``memory_result``); those not known are left out."""
    if memory is None:
        return []
    lines = []
    if memory.allocs_per_iter is not None:
        lines.append(f'"allocs_per_iter": {json_double(memory.allocs_per_iter)}')
    for key in ("max_bytes_used", "total_allocated_bytes", "net_heap_growth"):
        value = getattr(memory, key)
        if value is not None:
            lines.append(kv(key, int(value)))
    return lines


def run_lines(run) -> list[str]:
    """One run's members in Google Benchmark's order (PrintRunData)."""
    aggregate = run.run_type == "aggregate"
    lines = [
        kv("name", run.benchmark_name),
        kv("family_index", int(run.family_index)),
        kv("per_family_instance_index", int(run.per_family_instance_index)),
        kv("run_name", run.run_name),
        kv("run_type", run.run_type),
        kv("repetitions", int(run.repetitions)),
    ]
    if not aggregate:
        index = run.repetition_index
        lines.append(kv("repetition_index", -1 if index is None else int(index)))
    lines.append(kv("threads", int(run.threads)))
    if aggregate:
        lines.append(kv("aggregate_name", run.aggregate_name))
        lines.append(kv("aggregate_unit", run.aggregate_unit))
    if run.error_occurred:
        lines.append(kv("error_occurred", True))
        lines.append(kv("error_message", run.error_message))
    lines.append(kv("iterations", int(run.iterations)))
    # Run.real_time/cpu_time are per iteration in time_unit, or the raw
    # fraction for percentage aggregates (cv), as Google Benchmark reports.
    lines.append(f'"real_time": {json_double(run.real_time)}')
    lines.append(f'"cpu_time": {json_double(run.cpu_time)}')
    device_time = getattr(run, "device_time", None)
    if device_time is not None:  # --device_time: only when measured
        lines.append(f'"device_time": {json_double(device_time)}')
    lines.append(kv("time_unit", run.time_unit))
    for name in sorted(run.counters):
        lines.append(f"{json_string(name)}: {json_double(_counter_value(run.counters[name]))}")
    lines += memory_lines(getattr(run, "memory", None))
    if run.label:
        lines.append(kv("label", run.label))
    if run.params:  # a point of a sweep (never in a plain run: Google Benchmark's rows)
        lines.append(kv("params", dict(run.params)))
    # A row of a run of several points: its point's devices and module (the
    # context's keys of the same names describe the whole run).
    for key, value in getattr(run, "provenance", {}).items():
        lines.append(kv(key, value))
    return lines


class JSONReporter(Reporter):
    """Google Benchmark's JSONReporter; streams one benchmark at a time."""

    def __init__(self, stream, config, err_stream=None):
        super().__init__(stream, config, err_stream)
        self._first_report = True
        self._opened = False
        self._context = None

    def report_context(self, context) -> bool:
        self._context = context
        members = ",\n".join("    " + line for line in context_lines(context))
        self._write('{\n  "context": {\n' + members + '\n  },\n  "benchmarks": [\n')
        self._opened = True
        self._first_report = True
        return True

    def report_runs(self, runs) -> None:
        if not runs:
            return
        blocks = []
        for run in runs:
            body = ",\n".join("      " + line for line in run_lines(run))
            blocks.append("    {\n" + body + "\n    }")
        prefix = "" if self._first_report else ",\n"
        self._first_report = False
        # One write per benchmark: the hub holds signals back around it.
        self._write(prefix + ",\n".join(blocks))

    def finalize(self) -> None:
        if self._opened:
            self._opened = False
            findings = getattr(self._context, "findings", None)
            tail = f",\n  {kv('findings', findings)}" if findings else ""
            self._write(f"\n  ]{tail}\n}}\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


__all__ = ["JSONReporter", "context_from_benchmark_json", "run_lines", "runs_from_benchmark_json",
           "split_benchmark_json"]
