"""Google Benchmark's JSON report, as the native tools print it, turned into runs."""

from __future__ import annotations

import json

from ..context import CacheInfo, Context
from ..errors import UsageError
from ..names import function_of
from ..results import MEMORY_KEYS, RUN_KEYS, TIME_UNIT_MULTIPLIER, Counter, MemoryResult, Run


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


def context_from_benchmark_json(report: dict, global_context: dict | None = None) -> Context:
    """The :class:`Context` a native tool reported (its machine, its executable)."""
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
