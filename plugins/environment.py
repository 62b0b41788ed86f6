"""Environment warnings: say when the machine makes the numbers suspect.

Checked once per run, when the report context is built (every backend): each
finding (``cpu_governor``, ``load_average``, ``busy_processes``, ``aslr``,
``debug_runtime``) is one line on stderr and an entry of
``context.extra["environment_warnings"]``; Google Benchmark's own warnings
for CPU scaling and ASLR get no second line of ours where the display prints
them. ``--environment_warnings=false`` (or ``-p no:environment``) turns the
checks off. What each check reads: docs/statistics.md, "Environment warnings".
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from ireebench import StashKey, hookimpl

GROUP = "Statistics and adaptive stopping"
BUSY_SHARE = 0.5  # of one CPU
MIN_INTERVAL = 0.05  # seconds between the two process snapshots
CPU_DIR = "/sys/devices/system/cpu"
ENVVAR = "IREEBENCH_ENVIRONMENT_WARNINGS"
# Checks Google Benchmark's context block (console, CSV) already warns about.
GBENCH_WARNED = ("cpu_governor", "aslr")


@dataclass
class ProcessSnapshot:
    """CPU ticks (user + system) of every process, at one moment."""

    taken: float
    ticks: dict[int, tuple[str, int, int]] = field(default_factory=dict)  # pid -> name, ppid, ticks


SNAPSHOT = StashKey[ProcessSnapshot]()


@hookimpl
def ireebench_addoption(parser):
    """Adds --environment_warnings."""
    parser.addoption(
        "--environment_warnings", "environment_warnings", type=bool, default=True,
        group=GROUP, envvar=ENVVAR, show_envvar=True,
        help="Warn (stderr, and environment_warnings in the context) when the CPU governor "
             "is not 'performance', the load average is above the CPU count, other "
             "processes are busy, ASLR is on, or the runtime is a debug or instrumented "
             "build. Default true.")


def read_processes() -> ProcessSnapshot:
    """Every process's name, parent and CPU ticks, from /proc (empty elsewhere)."""
    snapshot = ProcessSnapshot(time.perf_counter())
    try:
        entries = os.listdir("/proc")
    except OSError:
        return snapshot
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                text = handle.read().decode(errors="replace")
        except OSError:
            continue  # gone, or not ours to read
        head, _, tail = text.rpartition(")")
        fields = tail.split()
        if len(fields) < 13:
            continue
        name = head.partition("(")[2]
        # After the name: state, ppid, ... utime is field 14, stime 15 (1-based).
        snapshot.ticks[int(entry)] = (name, int(fields[1]), int(fields[11]) + int(fields[12]))
    return snapshot


def _own_processes(snapshot: ProcessSnapshot) -> set[int]:
    """This process and its descendants."""
    own = {os.getpid()}
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in snapshot.ticks.items():
        children.setdefault(ppid, []).append(pid)
    stack = [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in own:
                own.add(child)
                stack.append(child)
    return own


def busy_processes(before: ProcessSnapshot, after: ProcessSnapshot) -> list[tuple[str, int, float]]:
    """(name, pid, share of one CPU) of the other processes busy between the snapshots."""
    elapsed = after.taken - before.taken
    if elapsed <= 0:
        return []
    hertz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    own = _own_processes(after) | _own_processes(before)
    busy = []
    for pid, (name, _, ticks) in after.ticks.items():
        if pid in own or pid not in before.ticks:
            continue
        share = (ticks - before.ticks[pid][2]) / hertz / elapsed
        if share >= BUSY_SHARE:
            busy.append((name, pid, share))
    return sorted(busy, key=lambda item: -item[2])


def _governors(num_cpus: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for cpu in range(num_cpus):
        try:
            with open(f"{CPU_DIR}/cpu{cpu}/cpufreq/scaling_governor") as handle:
                governor = handle.read().strip()
        except OSError:
            continue
        found[governor] = found.get(governor, 0) + 1
    return found


def _debug_runtime() -> str | None:
    reasons = []
    libs = sys.modules.get("iree._runtime.libs")
    variant = getattr(libs, "name", None) or os.environ.get("IREE_PY_RUNTIME", "default")
    if variant == "tracy":
        reasons.append("the Tracy-instrumented IREE runtime (IREE_PY_RUNTIME=tracy)")
    if hasattr(sys, "gettotalrefcount"):  # only a debug build (Py_DEBUG) has it
        reasons.append("a debug build of Python")
    if sys.flags.dev_mode:
        reasons.append("Python's development mode (-X dev)")
    if sys.gettrace() is not None or sys.getprofile() is not None:
        reasons.append("a Python tracer or profiler (coverage, a debugger)")
    if not reasons:
        return None
    return "the runtime is " + ", ".join(reasons) + ": times are not those of a release build"


def environment_warnings(context, before: ProcessSnapshot | None,
                         after: ProcessSnapshot | None) -> dict[str, str]:
    """Check name -> one-line message, for each finding."""
    warnings: dict[str, str] = {}
    num_cpus = max(1, int(context.num_cpus or 1))
    governors = _governors(num_cpus)
    slow = {g: count for g, count in governors.items() if g != "performance"}
    if slow:
        listed = ", ".join(f"'{g}' on {count} of {num_cpus}" for g, count in sorted(slow.items()))
        warnings["cpu_governor"] = (f"CPU frequency governor {listed} CPUs, not 'performance': "
                                    "the clock changes under the benchmark")
    if context.load_avg and context.load_avg[0] > num_cpus:
        warnings["load_average"] = (f"load average {context.load_avg[0]:.2f} is above the "
                                    f"{num_cpus} CPUs: other work competes for them")
    if before is not None and after is not None:
        busy = busy_processes(before, after)
        if busy:
            shown = ", ".join(f"{name} (pid {pid}, {100 * share:.0f}% of a CPU)"
                              for name, pid, share in busy[:3])
            more = f" and {len(busy) - 3} more" if len(busy) > 3 else ""
            warnings["busy_processes"] = (f"other busy processes: {shown}{more}: they compete "
                                          "for the CPUs")
    if context.aslr_enabled:
        warnings["aslr"] = ("ASLR is enabled: code and data addresses change from run to run "
                            "(run under `setarch -R` to turn it off)")
    debug = _debug_runtime()
    if debug:
        warnings["debug_runtime"] = debug
    return warnings


@hookimpl
def ireebench_configure(config):
    """The first process snapshot, at the start of the run."""
    if config.getoption("environment_warnings"):
        config.stash[SNAPSHOT] = read_processes()


@hookimpl
def ireebench_report_context(config, context):
    """Checks the machine; one stderr line and a context entry per finding."""
    if not config.getoption("environment_warnings"):
        return
    before = config.stash.get(SNAPSHOT, None)
    after = None
    if before is not None and before.ticks:
        wait = MIN_INTERVAL - (time.perf_counter() - before.taken)
        if wait > 0:
            time.sleep(wait)
        after = read_processes()
    warnings = environment_warnings(context, before, after)
    context.extra["environment_warnings"] = warnings
    # Google Benchmark's console and CSV reporters already print a
    # ***WARNING*** line for these two on stderr: no second line for them.
    said = GBENCH_WARNED if _display_prints_context(config) else ()
    for check, message in warnings.items():
        if check not in said:
            config.stderr.write(f"ireebench: warning: {message}\n")
    config.stderr.flush()


def _display_prints_context(config) -> bool:
    display = config.getoption("reporter") or config.getoption("benchmark_format")
    return display in ("console", "csv")
