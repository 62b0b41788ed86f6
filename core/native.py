"""Helpers for the native passes (profiling, device profiling, replay capture)
and the native backends (``--backend=native``, ``ireebench replay``).

The native IREE tools ship inside iree-base-runtime
(``iree/_runtime_libs/``). Every native process is started by
:func:`run_tool`: an argument list, never a shell string; paths are passed
as arguments; scratch files live in a private temporary directory that is
removed, also on failure. The flags of a native run are derived from the
configuration in one place (:func:`session_args`, :func:`selection_args`,
:func:`benchmark_flags`), so every pass runs the same benchmarks.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .errors import UsageError, one_line

BENCHMARK_TOOL = "iree-benchmark-module"

# Runtime flags that start the user's own profiling or capture session in a
# native run (see ireebench.plugins.device_profiling). A pass with a session
# of its own (profiling pass, replay capture) leaves them out, or it would
# write the user's outputs again or refuse to start two sessions.
USER_PASS_FLAGS = ("--device_profiling_", "--print_device_statistics", "--device_capture_")

# Characters with a meaning in the POSIX extended regex of --benchmark_filter.
_ERE_SPECIAL = set("\\.[]()*+?{}|^$")


def tools_dir() -> Path:
    """The directory of the native tools shipped in iree-base-runtime."""
    from iree.runtime.benchmark import benchmark_exe

    return Path(benchmark_exe()).resolve().parent


def tool_path(name: str) -> Path:
    """Path of a native tool binary (iree-benchmark-module, iree-profile ...)."""
    path = tools_dir() / name
    if not path.is_file():
        raise UsageError(f"native tool {name} not found in {path.parent}")
    return path


# --- flags derived from the configuration ---------------------------------------

def module_args(config) -> list[str]:
    """--module flags for the native tool (stdin modules as their saved copy)."""
    paths = getattr(config, "resolved_module_paths", None) or list(config.getoption("module"))
    return [f"--module={p}" for p in paths]


def session_args(config, user_pass_flags: bool = True) -> list[str]:
    """Flags that recreate the session: modules, devices, parameters, runtime flags.

    ``user_pass_flags=False`` leaves out :data:`USER_PASS_FLAGS`, for a pass
    that starts a profiling or capture session of its own.
    """
    from .session import device_uris

    args = module_args(config)
    args += [f"--device={d}" for d in device_uris(config)]
    args += [f"--parameters={p}" for p in config.getoption("parameters") or []]
    args += [flag for flag in config.runtime_flags
             if user_pass_flags or not flag.startswith(USER_PASS_FLAGS)]
    return args


def ere_escape(text: str) -> str:
    """``text`` as a literal in Google Benchmark's POSIX extended regex.

    Python's ``re.escape`` is not usable: it writes escapes such as ``\\-``
    that are undefined in a POSIX ERE.
    """
    return "".join("\\" + c if c in _ERE_SPECIAL else c for c in text)


def selection_args(config, workloads=None) -> list[str]:
    """Flags that make iree-benchmark-module run the benchmarks ireebench ran.

    With ``--function``: that function and its ``--input`` values. Without,
    the native tool discovers the functions itself (by the rules ireebench's
    discovery follows) and an anchored ``--benchmark_filter`` keeps exactly
    ``workloads``; ``workloads=None`` (the native backend) selects nothing
    here, the user's ``--benchmark_filter`` (:func:`benchmark_flags`)
    decides. Batch flags and ``--time_unit`` give the same accounting.
    """
    args = []
    if config.getoption("function"):
        args.append(f"--function={config.getoption('function')}")
        args += [f"--input={value}" for value in config.getoption("input") or []]
    elif workloads is not None:
        names = "|".join(ere_escape(w.run_name) for w in workloads)
        args.append(f"--benchmark_filter=^({names})$")
    args += [
        f"--batch_size={config.getoption('batch_size')}",
        f"--batch_concurrency={config.getoption('batch_concurrency')}",
    ]
    if config.getoption("time_unit"):
        args.append(f"--time_unit={config.getoption('time_unit')}")
    return args


def benchmark_flags(config, user_filter: bool = True) -> list[str]:
    """Google Benchmark flags that shape the measurement, for a native tool.

    Output flags (format, out, aggregates-only, context, color) are not
    passed: ireebench's own reporters produce the output.
    ``user_filter=False`` leaves out ``--benchmark_filter``, for a run whose
    benchmarks :func:`selection_args` names.
    """
    min_time = config.min_time
    args = [f"--benchmark_min_time={min_time.iterations}x" if min_time.iterations
            else f"--benchmark_min_time={min_time.seconds!r}s"]
    if config.min_warmup_time:
        args.append(f"--benchmark_min_warmup_time={config.min_warmup_time!r}")
    args.append(f"--benchmark_repetitions={config.getoption('benchmark_repetitions')}")
    if user_filter and config.getoption("benchmark_filter"):
        args.append(f"--benchmark_filter={config.getoption('benchmark_filter')}")
    for flag in ("benchmark_dry_run", "benchmark_enable_random_interleaving"):
        if config.getoption(flag):
            args.append(f"--{flag}=true")
    if config.getoption("benchmark_time_unit"):
        args.append(f"--benchmark_time_unit={config.getoption('benchmark_time_unit')}")
    return args


def named_workload(config, function: str, time_unit: str = ""):
    """A :class:`Workload` known by its function name only, for a native run's hooks.

    It carries the function name, ``selected`` and the batch flags; the
    native tool owns the VM function and the invocation kind
    (``function.vm_function`` and ``kind`` are None).
    """
    from .workload import FunctionInfo, Workload

    return Workload(
        name=f"BM_{function}",
        function=FunctionInfo(name=function, vm_function=None, reflection={}, cconv=""),
        kind=None,
        batch_size=config.getoption("batch_size"),
        concurrency=config.getoption("batch_concurrency"),
        time_unit=time_unit,
        selected=bool(config.getoption("function")),
    )


# --- running a native tool ---------------------------------------------------------

def benchmark_env() -> dict:
    """This process's environment without Google Benchmark's BENCHMARK_* variables.

    The native tools read them as flag defaults (BENCHMARK_OUT would make a
    native pass write the user's output file); ireebench passes every
    Google Benchmark flag a native pass needs explicitly instead.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("BENCHMARK_")}


def run_tool(name: str, args: list[str], *, env: Mapping[str, str] | None = None,
             command_prefix: list[str] | None = None,
             timeout: float | None = None) -> subprocess.CompletedProcess:
    """Runs a native tool and captures its output (text).

    The command is an argument list (never a shell string):
    ``[*command_prefix, TOOL, *args]``; ``command_prefix`` is a command the
    tool runs under (an external profiler). The environment is
    :func:`benchmark_env` plus ``env``. Standard input is closed: a module
    read from stdin was saved to a file first (``resolve_module_paths``).
    A tool (or prefix) that cannot start, or runs past ``timeout``
    seconds, is a one-line UsageError.
    """
    command = [*(command_prefix or []), str(tool_path(name)), *map(str, args)]
    environment = benchmark_env()
    environment.update(env or {})
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL, env=environment, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(f"native {name} did not finish within {timeout} s") from None
    except OSError as exc:
        raise UsageError(f"native {name}: cannot run {command[0]}: "
                         f"{exc.strerror or exc}") from None


def list_benchmarks(args: list[str], tool: str = BENCHMARK_TOOL) -> tuple[list[str], str]:
    """Runs ``tool --benchmark_list_tests=true ARGS``: the session starts, nothing runs.

    Used to list the benchmarks and as a probe: the tool creates the
    devices, loads the modules and starts the profiling session of its
    flags, so flags it rejects fail here, before anything is measured.

    :return: ``(names, "")``, or ``([], error)`` with the tool's
        :func:`native_error_line` when it failed.
    """
    proc = run_tool(tool, ["--benchmark_list_tests=true", *args])
    if proc.returncode != 0:
        return [], native_error_line(proc.stderr, proc.returncode)
    return [line.strip() for line in proc.stdout.splitlines() if line.strip()], ""


@contextlib.contextmanager
def private_tempdir(prefix: str = "ireebench-"):
    """A private (0700) scratch directory, removed on exit, also on failure."""
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield Path(path)


@contextlib.contextmanager
def replaced_on_success(target):
    """A temporary path next to ``target`` for a native tool to write.

    Renamed onto ``target`` when the block completes, removed when it
    raises (also on an interrupt), so ``target`` is either complete or
    untouched. Like :class:`ireebench.reporting.AtomicFile`, for a file the
    tool writes itself rather than a stream.
    """
    from .reporting import _umask

    target = Path(target)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                     dir=target.parent)
    os.close(fd)
    try:
        # The tool keeps the file's mode (mkstemp's 0600): give it the
        # permissions a plain open() would.
        os.chmod(temporary, 0o666 & ~_umask())
        yield Path(temporary)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


_STATUS_LINE = re.compile(r"^\S+\.(?:c|cc|cpp|h):\d+: [A-Z_]+; ")


def native_error_line(stderr: str, returncode: int) -> str:
    """One line describing why a native tool failed.

    IREE tools print their failure status as ``file.c:LINE: CODE; message``
    (sometimes followed by a VM stack trace); that line is preferred.
    """
    lines = [one_line(line) for line in (stderr or "").splitlines()]
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
    from .runner import name_field_width

    runs = [run for group in groups for run in group]
    return name_field_width(runs, max([1] + [run.repetitions for run in runs]))


# --- a native tool as the measurement backend (--backend=native, ireebench replay) ---

def run_benchmark_backend(config, hub, tool: str, args: list[str], *, what: str,
                          batch_size: int = 1,
                          context_extra: Mapping | None = None) -> tuple[int, list[list]]:
    """Runs a Google Benchmark based native tool and reports its JSON through ``hub``.

    ``hub=None`` is ``--benchmark_list_tests``: the tool's names are
    printed. Otherwise the tool runs with ``--benchmark_format=json`` (its
    console is never parsed); its context (plus ``context_extra``) and each
    benchmark's runs go to the hub, in report order, so every reporter, the
    streaming hook and the Python API see them. A tool that fails before
    reporting is a one-line UsageError ``WHAT: TOOL failed: reason``; a
    failed benchmark is an error row (exit 1). What the tool printed after
    its report (output processing) goes to stdout, its stderr (statistics,
    warnings) to stderr.

    :return: ``(exit code, runs grouped per benchmark)``.
    """
    if hub is None:
        names, error = list_benchmarks(args, tool)
        if error:
            raise UsageError(f"{what}: {tool} failed: {error}")
        sys.stdout.write("".join(f"{name}\n" for name in names))
        return 0, []
    proc = run_tool(tool, ["--benchmark_format=json", *args])
    report, rest = split_benchmark_json(proc.stdout)
    if report is None and proc.returncode == 0 and not proc.stdout.strip():
        # No benchmark matched --benchmark_filter: Google Benchmark's
        # message, no report, exit 0 (as the in-process backend).
        sys.stderr.write(proc.stderr)
        return 0, []
    if report is None:
        raise UsageError(f"{what}: {tool} failed: "
                         f"{native_error_line(proc.stderr, proc.returncode)}")
    groups = runs_by_benchmark(report, batch_size)
    unit = config.getoption("time_unit")
    if unit:  # Runs keep seconds: the unit only changes how they are shown.
        for run in (run for group in groups for run in group):
            run.time_unit = unit
    context = context_from_benchmark_json(report, config.benchmark_context)
    context.name_field_width = name_field_width_of(groups)
    context.extra.update(context_extra or {})
    hub.report_context(context)  # the hub calls ireebench_report_context first
    exit_code = 1 if proc.returncode else 0
    for runs in groups:
        if any(run.error_occurred for run in runs):
            exit_code = 1
        hub.report(runs)
    if rest:
        sys.stdout.write(rest)
        sys.stdout.flush()
    if proc.returncode == 0 and proc.stderr:
        sys.stderr.write(proc.stderr)
    return exit_code, groups
