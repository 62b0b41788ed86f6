"""The JSON reporter: Google Benchmark's JSON (src/json_reporter.cc), byte for byte.

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

from ireebench import hookimpl
from ireebench.reporting import Reporter
from ireebench.reporting.humanize import cpp_stream, json_double

_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\\": "\\\\", '"': '\\"'}


def json_string(text) -> str:
    """A quoted JSON string, escaped like Google Benchmark's StrEscape.

    Control characters it leaves raw are written as ``\\u00XX``, and so are
    the surrogate escapes of bytes that were not UTF-8 (a flag value, a
    path), so the output is always valid UTF-8 JSON.
    """
    out = []
    for char in str(text):
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


@hookimpl
def ireebench_reporters():
    """Registers the ``json`` reporter (--benchmark_format=json, --reporter=json)."""
    return {"json": JSONReporter}
