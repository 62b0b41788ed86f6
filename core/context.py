"""The report context: Google Benchmark's machine description plus provenance."""

from __future__ import annotations

import datetime
import os
import socket
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
    cpu_scaling_enabled: bool
    aslr_enabled: bool
    caches: list[CacheInfo]
    load_avg: list[float]
    library_version: str = LIBRARY_VERSION
    library_build_type: str = "release"
    # --benchmark_context key=value entries (reported like Google Benchmark's).
    global_context: dict[str, str] = field(default_factory=dict)
    # Provenance added by plugins (ireebench version, devices, module...).
    extra: dict = field(default_factory=dict)
    # Width of the console's name column, computed from the workloads.
    name_field_width: int = 10


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_mhz() -> float:
    text = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if text and text.isdigit():
        return int(text) / 1000.0
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith("cpu mhz"):
                    return float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return 0.0


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
        num_sharing = sum(bin(int(part, 16)).count("1") for part in (shared or "0").split(","))
        caches.append(CacheInfo(kind, int(level), _parse_size(size), num_sharing))
    return caches


def _scaling_enabled() -> bool:
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    return governor is not None and governor != "performance"


def _aslr_enabled() -> bool:
    return _read("/proc/sys/kernel/randomize_va_space") not in (None, "0")


def gather(executable: str | None = None, global_context: dict | None = None) -> Context:
    mhz = _cpu_mhz()
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return Context(
        date=date,
        host_name=socket.gethostname(),
        executable=executable or os.path.abspath(sys.argv[0]),
        num_cpus=os.cpu_count() or 1,
        mhz_per_cpu=int(mhz),
        cycles_per_second=mhz * 1e6,
        cpu_scaling_enabled=_scaling_enabled(),
        aslr_enabled=_aslr_enabled(),
        caches=_caches(),
        load_avg=load,
        global_context=dict(global_context or {}),
    )
