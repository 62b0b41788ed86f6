"""Helpers for the native passes (profiling, replay capture, native backend).

The native IREE tools ship inside iree-base-runtime
(``iree/_runtime_libs/``). Commands are always argument lists, never shell
strings; paths are passed as arguments; scratch files live in a private
temporary directory that is removed, also on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from .errors import UsageError


def tools_dir() -> Path:
    from iree.runtime.benchmark import benchmark_exe

    return Path(benchmark_exe()).resolve().parent


def tool_path(name: str) -> Path:
    """Path of a native tool binary (iree-benchmark-module, iree-profile ...)."""
    path = tools_dir() / name
    if not path.is_file():
        raise UsageError(f"native tool {name} not found in {path.parent}")
    return path


def module_args(config) -> list[str]:
    """--module flags for the native tool (stdin modules as their saved copy)."""
    paths = getattr(config, "resolved_module_paths", None) or list(config.getoption("module"))
    return [f"--module={p}" for p in paths]


def session_args(config) -> list[str]:
    """Flags that recreate the session: modules, devices, parameters, runtime flags."""
    args = module_args(config)
    args += [f"--device={d}" for d in (config.getoption("device") or ["local-task"])]
    args += [f"--parameters={p}" for p in config.getoption("parameters") or []]
    args += list(config.runtime_flags)
    return args


def workload_args(config, workload) -> list[str]:
    """Flags that select one workload with the same inputs and batch accounting."""
    args = [f"--function={workload.function.name}"]
    if workload.selected:
        args += [f"--input={value}" for value in config.getoption("input") or []]
    args += [
        f"--batch_size={config.getoption('batch_size')}",
        f"--batch_concurrency={config.getoption('batch_concurrency')}",
    ]
    if config.getoption("time_unit"):
        args.append(f"--time_unit={config.getoption('time_unit')}")
    return args


def run_tool(name: str, args: list[str], timeout: float | None = None,
             cwd: str | None = None) -> subprocess.CompletedProcess:
    """Runs a native tool with an argument list (no shell) and captures output."""
    command = [str(tool_path(name)), *map(str, args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=cwd, check=False)
    except subprocess.TimeoutExpired:
        raise UsageError(f"native {name} did not finish within {timeout} s") from None


@contextlib.contextmanager
def private_tempdir(prefix: str = "ireebench-"):
    """A private (0700) scratch directory, removed on exit, also on failure."""
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield Path(path)


# --- Google Benchmark tools run as a backend (native backend, `ireebench replay`) ---

def benchmark_env() -> dict:
    """This process's environment without Google Benchmark's BENCHMARK_* variables.

    The native tools read them as flag defaults (BENCHMARK_OUT would make a
    native pass write the user's output file); ireebench passes every
    Google Benchmark flag a native pass needs explicitly instead.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("BENCHMARK_")}


def run_benchmark_tool(name: str, args: list[str],
                       timeout: float | None = None) -> subprocess.CompletedProcess:
    """Runs a Google Benchmark based native tool with explicit flags only.

    Like :func:`run_tool`, with BENCHMARK_* variables removed from the
    environment. Standard input is inherited (``--module=-``).
    """
    command = [str(tool_path(name)), *map(str, args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=benchmark_env(), check=False)
    except subprocess.TimeoutExpired:
        raise UsageError(f"native {name} did not finish within {timeout} s") from None


def benchmark_flags(config) -> list[str]:
    """Google Benchmark flags that shape the measurement, for a native tool.

    Output flags (format, out, aggregates-only, context, color) are not
    passed: ireebench's own reporters produce the output.
    """
    min_time = config.min_time
    args = [f"--benchmark_min_time={min_time.iterations}x" if min_time.iterations
            else f"--benchmark_min_time={min_time.seconds!r}s"]
    if config.min_warmup_time:
        args.append(f"--benchmark_min_warmup_time={config.min_warmup_time!r}")
    args.append(f"--benchmark_repetitions={config.getoption('benchmark_repetitions')}")
    if config.getoption("benchmark_filter"):
        args.append(f"--benchmark_filter={config.getoption('benchmark_filter')}")
    for flag in ("benchmark_dry_run", "benchmark_enable_random_interleaving"):
        if config.getoption(flag):
            args.append(f"--{flag}=true")
    if config.getoption("benchmark_time_unit"):
        args.append(f"--benchmark_time_unit={config.getoption('benchmark_time_unit')}")
    return args


_STATUS_LINE = re.compile(r"^\S+\.(?:c|cc|cpp|h):\d+: [A-Z_]+; ")


def native_error_line(stderr: str, returncode: int) -> str:
    """One line describing why a native tool failed.

    IREE tools print their failure status as ``file.c:LINE: CODE; message``
    (sometimes followed by a VM stack trace); that line is preferred.
    """
    lines = [" ".join(line.split()) for line in (stderr or "").splitlines()]
    lines = [line for line in lines if line]
    for line in lines:
        if _STATUS_LINE.match(line):
            return line
    if lines:
        return lines[-1]
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


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


# Keys of a Google Benchmark JSON run that are not user counters.
_RUN_KEYS = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
    "time_unit", "aggregate_name", "aggregate_unit", "error_occurred", "error_message",
    "label", "skipped", "big_o", "rms", "complexity_n",
}


def run_from_benchmark_json(entry: dict, batch_size: int = 1):
    """Turns one run of a Google Benchmark JSON report into a :class:`Run`.

    Google Benchmark reports per-iteration times in ``time_unit``; a Run
    keeps accumulated seconds, so the per-iteration value is scaled back
    (``cv`` rows, a fraction, are kept as they are).
    """
    from .results import TIME_UNIT_MULTIPLIER, Counter, Run

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
        if key not in _RUN_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            # Google Benchmark's JSON does not say which counters are rates;
            # its own rate counters are named *_per_second.
            counters[key] = Counter(float(value), is_rate=key.endswith("_per_second"))
    return Run(
        name=run_name.split("/", 1)[0],
        run_name=run_name,
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


def runs_by_benchmark(report: dict, batch_size: int = 1) -> list[list]:
    """The runs of a native JSON report, grouped per benchmark, in report order."""
    groups: dict[str, list] = {}
    for entry in report.get("benchmarks", []):
        run = run_from_benchmark_json(entry, batch_size)
        groups.setdefault(run.run_name, []).append(run)
    return list(groups.values())


def context_from_benchmark_json(report: dict, global_context: dict | None = None):
    """The :class:`Context` a native tool reported (its machine, its executable)."""
    from .context import CacheInfo, Context

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


def name_field_width_of(groups: list[list]) -> int:
    """Google Benchmark's console name column for already-measured runs."""
    runs = [run for group in groups for run in group]
    width = max([10] + [len(run.run_name) for run in runs])
    if any(run.repetitions > 1 for run in runs):
        width += 1 + len("median")
    return width
