"""The report context: Google Benchmark's machine description plus provenance."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

LIBRARY_VERSION = "v1.9.5"  # the Google Benchmark version whose formats we follow


@dataclass
class CacheInfo:
    type: str
    level: int
    size: int
    num_sharing: int


@dataclass
class Context:
    date: str
    host_name: str
    executable: str
    num_cpus: int
    mhz_per_cpu: int
    cycles_per_second: float
    cpu_scaling_enabled: bool | None  # None: unknown (not reported)
    aslr_enabled: bool | None  # None: unknown (not reported)
    caches: list[CacheInfo]
    load_avg: list[float]
    library_version: str = LIBRARY_VERSION
    library_build_type: str = "release"
    # --benchmark_context key=value entries (reported like Google Benchmark's).
    global_context: dict[str, str] = field(default_factory=dict)
    # Provenance added by plugins (ireebench version, devices, module...).
    extra: dict = field(default_factory=dict)
    # What plugins found out while measuring, after the context was reported
    # (the modality plugin's multimodal_repetitions); reporters that wrote the
    # context first write these at the end (the JSON reporter: "findings").
    findings: dict = field(default_factory=dict)
    # Width of the console's name column, computed from the workloads.
    name_field_width: int = 10

    def sorted_global_context(self) -> list[tuple[str, str]]:
        """--benchmark_context entries in Google Benchmark's (std::map) order."""
        return sorted(self.global_context.items())


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _read_int(path: str) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _cycles_per_second(scaling_enabled: bool | None) -> float:
    """The CPU clock the way Google Benchmark's sysinfo finds it on Linux.

    The exported TSC frequency first, then the current frequency when scaling
    is off, then the maximum frequency, then ``cpu MHz`` (or ``bogomips``)
    from /proc/cpuinfo. 0 when none is readable.
    """
    cpu0 = "/sys/devices/system/cpu/cpu0"
    candidates = [f"{cpu0}/tsc_freq_khz"]
    if scaling_enabled is False:
        candidates.append(f"{cpu0}/cpufreq/scaling_cur_freq")
    candidates.append(f"{cpu0}/cpufreq/cpuinfo_max_freq")
    for path in candidates:
        khz = _read_int(path)
        if khz:
            return khz * 1000.0
    bogo = None
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                try:
                    number = float(value) * 1e6
                except ValueError:
                    continue
                if key == "cpu mhz" and number > 0:
                    return number
                if key == "bogomips" and number >= 0 and bogo is None:
                    bogo = number
    except OSError:
        pass
    return bogo or 0.0


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    for suffix, scale in (("K", 1024), ("M", 1024 * 1024), ("G", 1024**3)):
        if text.endswith(suffix):
            return int(text[:-1]) * scale
    return int(text) if text.isdigit() else 0


def _caches() -> list[CacheInfo]:
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    caches = []
    for index in sorted(base.glob("index*")):
        kind = _read(str(index / "type"))
        level = _read(str(index / "level"))
        size = _read(str(index / "size"))
        shared = _read(str(index / "shared_cpu_map"))
        if not (kind and level and size):
            continue
        num_sharing = sum(int(part, 16).bit_count() for part in (shared or "0").split(","))
        caches.append(CacheInfo(kind, int(level), _parse_size(size), num_sharing))
    return caches


def _num_cpus() -> int:
    """Online CPUs (Google Benchmark asks sysconf(_SC_NPROCESSORS_ONLN))."""
    try:
        return max(1, os.sysconf("SC_NPROCESSORS_ONLN"))
    except (AttributeError, ValueError, OSError):
        return os.cpu_count() or 1


def _scaling_enabled(num_cpus: int) -> bool | None:
    """True when any CPU's governor is not ``performance``; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    for cpu in range(num_cpus):
        governor = _read(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor")
        if governor is not None and governor != "performance":
            return True
    return False


_ADDR_NO_RANDOMIZE = 0x0040000


def _aslr_enabled() -> bool | None:
    """This process's ASLR, read like Google Benchmark: personality(2)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        persona = libc.personality(ctypes.c_ulong(0xFFFFFFFF))
    except (OSError, AttributeError):
        return _read("/proc/sys/kernel/randomize_va_space") not in (None, "0")
    if persona == -1:
        return None
    return not (persona & _ADDR_NO_RANDOMIZE)


def name_field_width(names, repetitions: int) -> int:
    """Google Benchmark's console name column: the longest name (+ "_median")."""
    width = max([10] + [len(name) for name in names])
    if repetitions > 1:
        width += 1 + max(len("median"), len("stddev"))
    return width


def gather(executable: str | None = None, global_context: dict | None = None) -> Context:
    """Describes this machine as Google Benchmark's context does."""
    num_cpus = _num_cpus()
    scaling = _scaling_enabled(num_cpus)
    cycles = _cycles_per_second(scaling)
    try:
        load = list(os.getloadavg())
    except (AttributeError, OSError):
        load = []
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return Context(
        date=date,
        host_name=platform.node(),  # gethostname(2): the uname node name
        executable=executable or os.path.abspath(sys.argv[0]),
        num_cpus=num_cpus,
        mhz_per_cpu=int(cycles / 1e6 + 0.5),
        cycles_per_second=cycles,
        cpu_scaling_enabled=scaling,
        aslr_enabled=_aslr_enabled(),
        caches=_caches(),
        load_avg=load,
        global_context=dict(global_context or {}),
    )


def machine_context(config, executable: str | None = None) -> Context:
    """The report context of this machine (Google Benchmark's fields, plus
    ``--benchmark_context`` entries); ``executable`` defaults to this program."""
    return gather(executable, config.benchmark_context)
