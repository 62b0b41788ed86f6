"""Profiling passes and profiling sinks.

The Python bindings of iree-base-runtime cannot run HAL profiling sessions
(``HalDevice.begin_profiling(mode)`` raises "Python HAL native profiling
requires a profile sink and is not exposed by the runtime bindings"), so a
profiling pass runs the native ``iree-benchmark-module`` shipped in
iree-base-runtime on the same modules, devices, function, inputs and batch
flags, with ``--device_profiling_mode=MODE --device_profiling_output=X.ireeprof``,
and reads the bundle with ``iree-profile statistics --format=jsonl``.

This module holds what plugins see of that pass:

* :class:`StatisticsRow` and :class:`StatisticsSummary`: the typed rows of
  ``iree-profile statistics --format=jsonl``;
* :class:`ProfilePass`: one pass of one workload (mode, iteration count,
  where the bundle is written, the environment and command prefix of the
  native process, for wrappers that attach an external profiler);
* :class:`ProfileResult`: what a pass produced;
* :class:`ProfilingSink`: the sink interface (told when a pass begins and
  ends, receives the rows, may read or keep the raw bundle);
* :class:`ProfilingEngine`: runs one pass per workload through the
  ``ireebench_profiling_pass`` hook and feeds every sink;
* :func:`run_native_pass`: the default pass implementation.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .native import (
    BENCHMARK_TOOL,
    native_error_line,
    private_tempdir,
    run_tool,
    selection_args,
    session_args,
    split_benchmark_json,
)
from .session import DEFAULT_DEVICE, device_uris

PROFILE_TOOL = "iree-profile"

# iree-profile statistics row types that carry one executable function each.
DISPATCH_FUNCTION = "dispatch_function"  # device-timestamped dispatches (GPUs)
HOST_EXECUTION_FUNCTION = "host_execution_function"  # local CPU devices
FUNCTION_ROW_TYPES = (DISPATCH_FUNCTION, HOST_EXECUTION_FUNCTION)

# Drivers whose HAL profiling reports per-function rows only as host
# execution events: dispatch-events is UNIMPLEMENTED on local devices.
HOST_EXECUTION_DRIVERS = ("local-sync", "local-task")

_NO_ORDINAL = 0xFFFFFFFF  # "none" in the statistics rows' 32-bit ordinals


def _driver(uri: str) -> str:
    return uri.split("://", 1)[0].split(":", 1)[0]


def profiling_mode(device_uris) -> str:
    """The HAL profiling data families that give per-function rows on these devices.

    Local devices (``local-sync``, ``local-task``) report executable
    functions as ``host-execution`` events (``dispatch-events`` is
    unimplemented there); GPU drivers (cuda, hip, vulkan ...) report
    device-timestamped ``dispatch-events``.
    """
    families = []
    for uri in device_uris or [DEFAULT_DEVICE]:
        family = "host-execution" if _driver(uri) in HOST_EXECUTION_DRIVERS else "dispatch-events"
        if family not in families:
            families.append(family)
    return ",".join(families)


def merge_modes(*modes: str) -> str:
    """Joins comma-separated data-family lists, keeping the first occurrence order."""
    families: list[str] = []
    for mode in modes:
        for family in (mode or "").split(","):
            family = family.strip()
            if family and family not in families:
                families.append(family)
    return ",".join(families)


def flag_value(config, name: str):
    """The value of ``--name``, an option of a plugin or a runtime flag; None if unset.

    Device profiling and capture flags are runtime flags (handed to the
    native passes as they are), so conflicts are found in either place.
    """
    if name in config.options:
        value = config.options[name]
        return None if value in (None, False, "", (), []) else value
    value = None
    for flag in config.runtime_flags:
        key, sep, text = flag.lstrip("-").partition("=")
        if key == name:
            value = text if sep else "true"
    if value is None or value.strip().lower() in ("", "false", "0"):
        return None
    return value


# --- typed rows --------------------------------------------------------------


@dataclass(frozen=True)
class StatisticsSummary:
    """The ``statistics_summary`` record of ``iree-profile statistics``."""

    row_count: int = 0
    dropped_record_count: int = 0  # records the producer dropped: rows are incomplete


def _int(value, default: int = 0) -> int:
    return default if value is None or isinstance(value, bool) else int(value)


def _ordinal(value) -> int | None:
    value = _int(value, _NO_ORDINAL)
    return None if value == _NO_ORDINAL else value


def _optional_int(value) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class StatisticsRow:
    """One ``statistics_row`` of ``iree-profile statistics --format=jsonl``.

    Durations are in nanoseconds; ``total_duration_ns`` is ``None`` when
    the row has no timing or its timestamps could not be scaled to
    nanoseconds (an "unscaled" row). ``raw`` is the whole JSON object, for
    fields this class does not name.
    """

    row_type: str  # dispatch_function, host_execution_function, host_execution_queue_operation ...
    function_name: str | None  # executable function (dispatch) name, when the bundle has it
    executable_id: int
    function_ordinal: int | None
    sample_count: int  # number of events aggregated in the row (calls of a function)
    total_duration_ns: int | None
    minimum_duration_ns: int | None
    maximum_duration_ns: int | None
    tile_count: int
    tile_duration_sum_ns: int | None  # worker time over all tiles; None without tile totals
    has_timing: bool
    has_tile_totals: bool
    invalid_sample_count: int = 0
    operation_count: int = 0
    payload_bytes: int = 0
    event_name: str | None = None  # queue operation rows: alloca, fill, dispatch, execute ...
    command_buffer_id: int = 0
    command_index: int | None = None
    physical_device_ordinal: int | None = None
    queue_ordinal: int | None = None
    time_domain: str = ""
    first_start_time: int = 0
    last_end_time: int = 0
    flags: int = 0
    raw: Mapping = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: Mapping) -> StatisticsRow:
        has_timing = bool(data.get("has_timing", False))
        has_tiles = bool(data.get("has_tile_totals", False))
        total = data.get("total_duration_ns") if has_timing else None
        return cls(
            row_type=str(data.get("row_type", "")),
            function_name=data.get("function_name") or None,
            executable_id=_int(data.get("executable_id")),
            function_ordinal=_ordinal(data.get("function_ordinal")),
            sample_count=_int(data.get("sample_count")),
            total_duration_ns=_optional_int(total),
            minimum_duration_ns=_optional_int(data.get("minimum_duration_ns")) if has_timing else None,
            maximum_duration_ns=_optional_int(data.get("maximum_duration_ns")) if has_timing else None,
            tile_count=_int(data.get("tile_count")),
            tile_duration_sum_ns=_int(data.get("tile_duration_sum_ns")) if has_tiles else None,
            has_timing=has_timing,
            has_tile_totals=has_tiles,
            invalid_sample_count=_int(data.get("invalid_sample_count")),
            operation_count=_int(data.get("operation_count")),
            payload_bytes=_int(data.get("payload_bytes")),
            event_name=data.get("event_name") or None,
            command_buffer_id=_int(data.get("command_buffer_id")),
            command_index=_ordinal(data.get("command_index")),
            physical_device_ordinal=_ordinal(data.get("physical_device_ordinal")),
            queue_ordinal=_ordinal(data.get("queue_ordinal")),
            time_domain=str(data.get("time_domain", "")),
            first_start_time=_int(data.get("first_start_time")),
            last_end_time=_int(data.get("last_end_time")),
            flags=_int(data.get("flags")),
            raw=dict(data),
        )

    @property
    def is_function_row(self) -> bool:
        """True for rows that time one executable function (a dispatch)."""
        return self.row_type in FUNCTION_ROW_TYPES

    @property
    def key(self) -> str:
        """The function name, or ``executable_<id>_function_<ordinal>`` without one.

        The same key iree-benchmark-module's ``--dispatch_statistics`` uses.
        """
        if self.function_name:
            return self.function_name
        ordinal = _NO_ORDINAL if self.function_ordinal is None else self.function_ordinal
        return f"executable_{self.executable_id}_function_{ordinal}"


def parse_statistics(text: str) -> tuple[StatisticsSummary, list[StatisticsRow]]:
    """Parses the output of ``iree-profile statistics --format=jsonl``."""
    summary = StatisticsSummary()
    rows: list[StatisticsRow] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise UsageError(
                f"{PROFILE_TOOL} statistics: line {number} is not JSON: {line[:80]!r}"
            ) from None
        kind = record.get("type")
        if kind == "statistics_summary":
            summary = StatisticsSummary(_int(record.get("row_count")),
                                        _int(record.get("dropped_record_count")))
        elif kind == "statistics_row":
            rows.append(StatisticsRow.from_json(record))
    return summary, rows


def read_statistics(bundle_path) -> tuple[StatisticsSummary, list[StatisticsRow]]:
    """Runs ``iree-profile statistics --format=jsonl BUNDLE`` and parses it."""
    proc = run_tool(PROFILE_TOOL, ["statistics", "--format=jsonl", str(bundle_path)])
    if proc.returncode != 0:
        raise UsageError(f"{PROFILE_TOOL} statistics {bundle_path}: "
                         f"{native_error_line(proc.stderr, proc.returncode)}")
    return parse_statistics(proc.stdout)


# --- one pass ------------------------------------------------------------------


@dataclass
class ProfilePass:
    """One untimed profiling pass of one workload.

    Plugins wrapping ``ireebench_profiling_pass`` may add to ``env`` (extra
    environment variables of the profiled native process) and
    ``command_prefix`` (a command the native process runs under, e.g.
    ``["nsys", "profile", "-o", "trace"]``) before the pass runs.
    """

    workload: object  # ireebench.workload.Workload
    mode: str  # --device_profiling_mode of the pass
    iterations: int  # logical iterations per repetition (the measured count)
    repetitions: int
    bundle_path: Path  # where the .ireeprof bundle is written; valid until the pass ends
    env: dict[str, str] = field(default_factory=dict)
    command_prefix: list[str] = field(default_factory=list)

    def keep_bundle(self, destination) -> Path:
        """Copies the raw bundle to ``destination`` (for iree-profile, iree-profile-render)."""
        destination = Path(destination)
        shutil.copyfile(self.bundle_path, destination)
        return destination


@dataclass
class ProfileResult:
    """What a profiling pass produced.

    ``iterations`` counts the logical iterations the bundle covers (all
    repetitions); per-iteration figures divide the row totals by it.
    ``error`` is set when the pass failed (then the rows are empty).
    """

    workload: object
    bundle_path: Path | None
    mode: str
    iterations: int = 0
    summary: StatisticsSummary = field(default_factory=StatisticsSummary)
    rows: list[StatisticsRow] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def function_rows(self) -> list[StatisticsRow]:
        return [row for row in self.rows if row.is_function_row]


class ProfilingSink:
    """Base class of profiling sinks (every method is optional).

    A plugin returns sinks from ``ireebench_profiling_sinks(config)``. For
    each profiled workload the engine calls, in order:
    ``begin_pass(profile_pass)`` before the native pass starts,
    ``receive_rows(profile_pass, rows)`` with the typed statistics rows
    (only when the pass succeeded), and ``end_pass(profile_pass, result)``
    (always). ``profile_pass.bundle_path`` is the raw ``.ireeprof`` bundle
    until ``end_pass`` returns; copy it with ``profile_pass.keep_bundle()``.
    ``close()`` is called once at the end of the run.

    ``modes`` lists extra HAL profiling data families the sink needs in the
    bundle (e.g. ``("memory-events",)``); they are added to the pass mode.
    """

    modes: tuple[str, ...] = ()

    def begin_pass(self, profile_pass: ProfilePass) -> None:
        """The pass of ``profile_pass.workload`` is about to run."""

    def receive_rows(self, profile_pass: ProfilePass, rows: list[StatisticsRow]) -> None:
        """The statistics rows of the pass."""

    def end_pass(self, profile_pass: ProfilePass, result: ProfileResult) -> None:
        """The pass ended (``result.error`` says whether it failed)."""

    def close(self) -> None:
        """The run is over."""


# --- the native pass -------------------------------------------------------------

def _profiled_iterations(stdout: str) -> tuple[int, str]:
    """Logical iterations the native JSON report measured, and its first error."""
    report, _ = split_benchmark_json(stdout)
    if report is None:
        return 0, "the native tool printed no JSON report"
    iterations = 0
    for entry in report["benchmarks"]:
        if entry.get("error_occurred"):
            return 0, str(entry.get("error_message", "benchmark failed"))
        if entry.get("run_type", "iteration") == "iteration":
            iterations += int(entry.get("iterations", 0))
    return iterations, ""


def pass_args(config, profile_pass: ProfilePass) -> list[str]:
    """iree-benchmark-module flags of a profiling pass of one workload.

    The user's own profiling and capture flags belong to their own native
    run (see ireebench.plugins.device_profiling), not to this pass.
    """
    return [
        *session_args(config, user_pass_flags=False),
        *selection_args(config, [profile_pass.workload]),
        f"--benchmark_min_time={profile_pass.iterations}x",
        f"--benchmark_repetitions={profile_pass.repetitions}",
        "--benchmark_format=json",
        f"--device_profiling_mode={profile_pass.mode}",
        f"--device_profiling_output={profile_pass.bundle_path}",
    ]


def run_native_pass(config, profile_pass: ProfilePass) -> ProfileResult:
    """Runs the pass with the native tool and reads its bundle.

    The native tool runs exactly ``iterations`` x ``repetitions`` logical
    iterations (no calibration, no warm-up), all inside the profiling
    session, so the bundle's totals divided by the reported iterations are
    per-iteration figures.
    """
    workload = profile_pass.workload
    result = ProfileResult(workload, profile_pass.bundle_path, profile_pass.mode)
    proc = run_tool(BENCHMARK_TOOL, pass_args(config, profile_pass), env=profile_pass.env,
                    command_prefix=profile_pass.command_prefix)
    if proc.returncode != 0:
        result.error = native_error_line(proc.stderr, proc.returncode)
        return result
    result.iterations, result.error = _profiled_iterations(proc.stdout)
    if result.error:
        return result
    if not Path(profile_pass.bundle_path).is_file():
        # The native tool profiles only the devices the program's context
        # uses; a module without HAL devices writes no bundle.
        result.error = "no profiling bundle was written (does the module use HAL devices?)"
        return result
    try:
        result.summary, result.rows = read_statistics(profile_pass.bundle_path)
    except UsageError as exc:
        result.error = str(exc)
    return result


# --- the engine ------------------------------------------------------------------


class ProfilingEngine:
    """Runs the profiling pass of each workload once and feeds every sink.

    One engine per run (:func:`engine`). Passes run only when at least one
    sink is active; ``profile(workload, runs)`` is idempotent, so whichever
    plugin asks first triggers the pass.
    """

    def __init__(self, config):
        self.config = config
        self._sinks: list | None = None
        self.results: dict[str, ProfileResult | None] = {}

    @property
    def sinks(self) -> list:
        if self._sinks is None:
            from .pluginmanager import call_hook

            self._sinks = []
            for provided in call_hook(self.config.pm, "ireebench_profiling_sinks",
                                      config=self.config):
                if provided is None:
                    continue
                self._sinks.extend(provided if isinstance(provided, (list, tuple)) else [provided])
        return self._sinks

    def mode(self) -> str:
        """The pass mode: the devices' per-function families plus every sink's ``modes``."""
        return merge_modes(profiling_mode(device_uris(self.config)),
                           *(",".join(getattr(s, "modes", ()) or ()) for s in self.sinks))

    def profile(self, workload, runs) -> ProfileResult | None:
        """The pass result of ``workload``, running the pass on first request.

        Returns ``None`` when no sink is active or the workload was not
        measured (a failed benchmark is not profiled, like the native tool's
        skipped profiling pass).
        """
        if workload.name in self.results:
            return self.results[workload.name]
        measured = [r for r in runs if r.run_type == "iteration" and not r.extra_row]
        if not self.sinks or not measured or any(r.error_occurred for r in runs):
            self.results[workload.name] = None
            return None
        with private_tempdir("ireebench-profile-") as scratch:
            profile_pass = ProfilePass(
                workload=workload,
                mode=self.mode(),
                iterations=max(r.iterations for r in measured),
                repetitions=len(measured),
                bundle_path=scratch / f"{workload.name}.ireeprof",
            )
            result = self._run(workload, runs, profile_pass)
        self.results[workload.name] = result
        return result

    def _run(self, workload, runs, profile_pass: ProfilePass) -> ProfileResult:
        try:
            _notify(self.sinks, "begin_pass", profile_pass)
            result = self._pass_and_rows(workload, runs, profile_pass)
        except BaseException as exc:
            # Sinks still learn that the pass ended (e.g. to stop a profiler).
            failed = ProfileResult(workload, None, profile_pass.mode,
                                   error=str(exc) or type(exc).__name__)
            with contextlib.suppress(Exception):
                _notify(self.sinks, "end_pass", profile_pass, failed)
            raise
        _notify(self.sinks, "end_pass", profile_pass, result)
        return result

    def _pass_and_rows(self, workload, runs, profile_pass: ProfilePass) -> ProfileResult:
        """Runs the pass hook, then hands the rows to the sinks and the rows hook."""
        from .pluginmanager import call_hook

        pm = self.config.pm
        result = call_hook(pm, "ireebench_profiling_pass", config=self.config,
                           workload=workload, runs=runs, profile_pass=profile_pass)
        if result is None:
            return ProfileResult(workload, None, profile_pass.mode,
                                 error="no plugin implements ireebench_profiling_pass")
        if result.ok:
            _notify(self.sinks, "receive_rows", profile_pass, result.rows)
            call_hook(pm, "ireebench_profile_rows", workload=workload, rows=result.rows,
                      bundle_path=profile_pass.bundle_path)
        return result

    def close(self) -> None:
        """Tells every sink the run is over."""
        sinks, self._sinks = self._sinks or [], []
        _notify(sinks, "close")


def _notify(sinks, method: str, *args) -> None:
    """Calls an optional method of every sink, even after one failed.

    The first failure is raised afterwards, as a one-line error naming the
    sink's class (a sink's bug is reported, not a traceback).
    """
    first_error = None
    for sink in sinks:
        function = getattr(sink, method, None)
        if function is None:
            continue
        try:
            function(*args)
        except UsageError as exc:
            first_error = first_error or exc
        except Exception as exc:  # noqa: BLE001 - any bug of a sink becomes one line
            first_error = first_error or UsageError(
                f"profiling sink {type(sink).__name__}.{method} failed: "
                f"{type(exc).__name__}: {' '.join(str(exc).split())}")
    if first_error is not None:
        raise first_error


def engine(config) -> ProfilingEngine:
    """The profiling engine of this run (created on first use)."""
    found = getattr(config, "_ireebench_profiling_engine", None)
    if found is None:
        found = ProfilingEngine(config)
        config._ireebench_profiling_engine = found
    return found
