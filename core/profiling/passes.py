"""What plugins see of a profiling pass: the pass, its result, the sink interface.

A profiling pass is an untimed rerun of one measured workload with a HAL
profiling session that writes a ``.ireeprof`` bundle. The Python bindings
of iree-base-runtime cannot run HAL profiling sessions
(``HalDevice.begin_profiling(mode)`` raises "Python HAL native profiling
requires a profile sink and is not exposed by the runtime bindings"), so
the built-in pass (``ireebench.plugins.profiling_pass``) runs the native
``iree-benchmark-module`` and reads the bundle with ``iree-profile
statistics --format=jsonl``.

* :class:`ProfilePass`: one pass of one workload (mode, iteration count,
  where the bundle is written, the environment and command prefix of the
  native process, for wrappers that attach an external profiler);
* :class:`ProfileResult`: what a pass produced;
* :class:`ProfilingSink`: the sink interface (told when a pass begins and
  ends, receives the rows, may read or keep the raw bundle);
* :func:`profiling_mode`: the HAL data families that give per-function rows
  on the run's devices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..devices import DEFAULT_DEVICE, driver_of
from ..outfiles import copy_to
from .rows import StatisticsRow, StatisticsSummary

# Drivers whose HAL profiling reports per-function rows only as host
# execution events: dispatch-events is UNIMPLEMENTED on local devices.
HOST_EXECUTION_DRIVERS = ("local-sync", "local-task")


def profiling_mode(device_uris) -> str:
    """The HAL profiling data families that give per-function rows on these devices.

    Local devices (``local-sync``, ``local-task``) report executable
    functions as ``host-execution`` events (``dispatch-events`` is
    unimplemented there); GPU drivers (cuda, hip, vulkan ...) report
    device-timestamped ``dispatch-events``.
    """
    families = []
    for uri in device_uris or [DEFAULT_DEVICE]:
        family = "host-execution" if driver_of(uri) in HOST_EXECUTION_DRIVERS else "dispatch-events"
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

    def keep_bundle(self, destination, flag: str = "profile_output") -> Path:
        """Copies the raw bundle to ``destination`` (for iree-profile, iree-profile-render).

        Like every output file: complete or untouched, written through a
        special file; a failure is one UsageError naming ``--flag``.
        """
        destination = Path(destination)
        copy_to(self.bundle_path, destination, flag)
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
