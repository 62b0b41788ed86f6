"""What a report says of its machine while it ran: which runs were disturbed.

A run measured while other work took the CPUs measured that work too; the
report says so itself and the gate listens (:mod:`.judgement`,
:mod:`.history`). Of the run (:func:`run_disturbances`): its context's
``environment_warnings`` (load, busy processes), or for another tool's
report Google Benchmark's ``load_avg`` against ``num_cpus``; an ireebench
report without ``environment_warnings`` had the checks off and nothing is
assumed; a machine's constant traits (governor, ASLR) are no disturbance.
Of a benchmark (:func:`benchmark_disturbances`): the ``findings``'
``multimodal_repetitions``, and on ``local-sync`` a CPU share below
:data:`MIN_CPU_SHARE` (:func:`preempted`). A benchmark's devices are its
rows' ``iree_devices``, else the context's. The table of disturbances:
docs/compare.md, "Disturbed runs".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import machine
from .inputs import BenchmarkFile, BenchmarkRows

# Below this CPU time / real time on a synchronous CPU device, the thread was preempted.
MIN_CPU_SHARE = 0.9
# The environment checks that say the run shared the CPUs.
DISTURBING_CHECKS = ("load_average", "busy_processes")
MULTIMODAL = "multimodal_repetitions"
SYNCHRONOUS_DEVICES = ("local-sync",)


@dataclass(frozen=True)
class Disturbance:
    """One reason to doubt a run's times: ``what`` (``load_average``,
    ``busy_processes``, ``multimodal``, ``cpu_share``) and a short message."""

    what: str
    message: str
    # The time it was seen in, when it concerns one (a multimodal finding's).
    metric: str = ""

    def __str__(self) -> str:
        return self.message


def _short(message: str) -> str:
    """The finding of an environment warning without its explanation
    (``load average 3.03 is above the 2 CPUs: other work competes for them``)."""
    head, separator, _ = str(message).rpartition(": ")
    return head if separator and head else str(message)


def run_disturbances(report: BenchmarkFile) -> list[Disturbance]:
    """What the report's context says disturbed the whole run (see the module doc)."""
    context = report.context
    found = []
    warnings = context.get("environment_warnings")
    if isinstance(warnings, dict):
        for check in DISTURBING_CHECKS:
            if warnings.get(check):
                found.append(Disturbance(check, _short(warnings[check])))
    elif "ireebench_version" not in context:
        load, cpus = context.get("load_avg"), context.get("num_cpus")
        if (isinstance(load, list) and load and isinstance(load[0], (int, float))
                and isinstance(cpus, int) and cpus > 0 and load[0] > cpus):
            found.append(Disturbance("load_average",
                                     f"load average {load[0]:.2f} is above the {cpus} CPUs"))
    return found


def devices_of(report: BenchmarkFile, rows: BenchmarkRows) -> list[str]:
    """The HAL devices a benchmark ran on: its rows', else the context's
    (:func:`.machine.row_context`)."""
    return machine.devices_of(machine.row_context(report.context, rows.provenance))


def synchronous_cpu(devices: list[str]) -> bool:
    """Whether every device runs on the calling thread (``local-sync``)."""
    return bool(devices) and all(device.split("://")[0] in SYNCHRONOUS_DEVICES
                                 for device in devices)


def cpu_devices(devices: list[str]) -> bool:
    """Whether every device is a CPU driver (``local-sync``, ``local-task``): the
    benchmark's CPU time is the work, its CPU share how much CPU it got."""
    return bool(devices) and all(device.split("://")[0].startswith("local-")
                                 for device in devices)


def cpu_share(rows: BenchmarkRows) -> float | None:
    """The repetitions' CPU time over their real time, totals (None without both
    times): the share of the wall time the benchmark had a CPU, so that a few
    repetitions that waited long count as long as they waited."""
    real = rows.repetitions.get("real_time") or []
    cpu = rows.repetitions.get("cpu_time") or []
    total = math.fsum(real)
    if not real or len(real) != len(cpu) or total <= 0:
        return None
    return math.fsum(cpu) / total


def preempted(report: BenchmarkFile, rows: BenchmarkRows) -> float | None:
    """The CPU share of a benchmark on a synchronous CPU device when it is below
    :data:`MIN_CPU_SHARE` (real time and CPU time disagree), else None."""
    if not synchronous_cpu(devices_of(report, rows)):
        return None
    share = cpu_share(rows)
    return share if share is not None and share < MIN_CPU_SHARE else None


def benchmark_disturbances(report: BenchmarkFile, rows: BenchmarkRows) -> list[Disturbance]:
    """What disturbed one benchmark of the report: its findings and its CPU share."""
    found = []
    findings = report.findings.get(MULTIMODAL) if isinstance(report.findings, dict) else None
    finding = findings.get(rows.run_name) if isinstance(findings, dict) else None
    if isinstance(finding, dict):
        groups = finding.get("groups")
        counts = [str(group.get("repetitions")) for group in groups
                  if isinstance(group, dict)] if isinstance(groups, list) else []
        shown = f" ({' + '.join(counts)} repetitions)" if counts else ""
        where = " in CPU time" if finding.get("metric") == "cpu_time" else ""
        found.append(Disturbance("multimodal", f"repetitions form {len(counts) or 'several'} "
                                               f"separate groups{where}{shown}",
                                 str(finding.get("metric") or "real_time")))
    share = preempted(report, rows)
    if share is not None:
        found.append(Disturbance("cpu_share", f"CPU share {share:.2f} on a synchronous CPU "
                                              f"device: preempted, real time > CPU time"))
    return found


def disturbances(report: BenchmarkFile, rows: BenchmarkRows) -> list[Disturbance]:
    """Every reason to doubt this benchmark's times in this report."""
    return run_disturbances(report) + benchmark_disturbances(report, rows)


# What disturbs only a time that counts the waits: the machine's load and a CPU
# share below one. CPU time counts what the thread ran, not how long it waited.
WAITS = ("load_average", "busy_processes", "cpu_share")


def relevant(found: list[Disturbance], metric: str) -> list[Disturbance]:
    """The disturbances of ``metric``: all of them for the real time; on ``cpu_time``
    neither the load nor the CPU share (a run on a busy machine keeps its CPU
    times), nor repetitions in separate regimes of the real time only; on any
    other metric all but the CPU share."""
    if metric == "real_time":
        return list(found)
    if metric != "cpu_time":  # device time, a counter: only the CPU share is the host's
        return [d for d in found if d.what != "cpu_share"]
    return [d for d in found
            if d.what not in WAITS and not (d.what == "multimodal" and d.metric == "real_time")]


# How each kind of disturbance is named in a summary.
KINDS = {"load_average": "load above the CPUs", "busy_processes": "other busy processes",
         "multimodal": "repetitions in separate regimes", "cpu_share": "a CPU share below one"}


def describe(found: list[Disturbance]) -> str:
    return "; ".join(str(item) for item in found)


def kinds(found: list[Disturbance]) -> str:
    """The kinds of ``found``, once each (``load above the CPUs, other busy processes``)."""
    return ", ".join(dict.fromkeys(KINDS.get(d.what, d.what) for d in found))
