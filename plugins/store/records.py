"""A Google Benchmark JSON report turned into what the store keeps of it.

A stored run *is* its report: the text exactly as ``--benchmark_out``
wrote it (or as the imported file held it), which ``ireebench store export``
gives back byte for byte, and every row's full JSON object, so fields a
plugin adds (``params``, ``device_time``, memory fields, counters) are
kept without a schema change. Beside them, the columns the store queries
on, read from the report's context (ireebench's provenance, Google
Benchmark's machine fields, the ``--benchmark_context`` entries as tags)
and each row's name, type and times; and, for a saved run, each row's raw
samples (:attr:`ireebench.Run.samples`, ``batch_samples``), which the JSON
report does not hold. Each row also has its own machine fingerprint,
machine, devices, module and module sha256: the context overlaid by the
row's keys (:func:`ireebench.comparison.machine.row_context`), so the rows
of a sweep over devices or of a suite of modules each say where and what
they measured.
"""

from __future__ import annotations

import datetime
import json
import time
import uuid
from dataclasses import dataclass, field

from ireebench.comparison.machine import (
    ROW_KEYS,
    describe_machine,
    devices_of,
    machine_fingerprint,
    row_context,
)

# A saved run's status (``runs.status``).
COMPLETE = "complete"  # the run ended (exit 0; 1: a benchmark failed; 141: stdout closed)
INTERRUPTED = "interrupted"  # SIGINT or SIGTERM: the rows finished before it
FAILED = "failed"  # it stopped on an error (a plugin error, exit 3, or another)
STATUSES = (COMPLETE, INTERRUPTED, FAILED)

SAVED = "save"  # --benchmark_save
IMPORTED = "import"  # ireebench store import

# Google Benchmark's context keys (json_reporter.cc): machine, not tags.
GOOGLE_BENCHMARK_KEYS = frozenset({
    "date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled",
    "aslr_enabled", "caches", "load_avg", "library_version", "library_build_type",
    "json_schema_version"})
# The provenance keys ireebench's plugins write into the context.
GIT_COMMIT = "ireebench_git_commit"
GIT_BRANCH = "ireebench_git_branch"
COMPILE_FLAGS = "ireebench_compile_flags"


def status_of(exit_status: int) -> str:
    """The status of a run that ended with ``exit_status``."""
    if exit_status in (130, 143):
        return INTERRUPTED
    if exit_status in (0, 1, 141):
        return COMPLETE
    return FAILED


@dataclass
class RowRecord:
    """One row of a stored run."""

    position: int
    data: dict  # the row's JSON object, as reported
    samples: list = field(default_factory=list)
    batch_samples: list = field(default_factory=list)

    def columns(self, context: dict, memo: dict | None = None) -> dict:
        """The ``rows`` row; ``context``: the report's (what the row's own keys
        override); ``memo``: shared by the rows of one report (a point's rows have
        the same provenance: derived once)."""
        data = self.data
        index = data.get("repetition_index")
        return {
            "position": self.position,
            "name": str(data.get("name", "")),
            "run_name": str(data.get("run_name") or data.get("name") or ""),
            "run_type": str(data.get("run_type", "iteration")),
            "aggregate_name": str(data.get("aggregate_name", "")),
            "repetition_index": index if isinstance(index, int) else None,
            "error_occurred": bool(data.get("error_occurred") or data.get("skipped")),
            "real_time": _number(data.get("real_time")),
            "cpu_time": _number(data.get("cpu_time")),
            "time_unit": str(data.get("time_unit", "ns")),
            "data": json.dumps(data),
            "samples": json.dumps(self.samples),
            "batch_samples": json.dumps(self.batch_samples),
            **row_provenance(context, data, {} if memo is None else memo),
        }


def row_provenance(context: dict, data: dict, memo: dict) -> dict:
    """A row's own provenance columns (``rows``: fingerprint, machine, devices, module
    and its sha256): the context overlaid by the row's keys, once per distinct keys."""
    key = json.dumps([data.get(name) for name in ROW_KEYS], default=str)
    if key not in memo:
        own = row_context(context, data)
        memo[key] = {"fingerprint": machine_fingerprint(own), "machine": describe_machine(own),
                     "devices": json.dumps(devices_of(own)),
                     "module": str(own.get("iree_module", "")),
                     "module_sha256": str(own.get("iree_module_sha256", ""))}
    return memo[key]


@dataclass
class RunRecord:
    """One stored run: its report, provenance and rows."""

    run_id: str
    report: str  # the report's text, as written
    context: dict
    rows: list[RowRecord]
    status: str = COMPLETE
    exit_status: int | None = None
    source: str = SAVED
    source_path: str = ""
    tags: dict = field(default_factory=dict)
    saved_at: float = field(default_factory=time.time)

    @property
    def report_sha256(self) -> str:
        import hashlib
        return hashlib.sha256(self.report.encode("utf-8", "surrogateescape")).hexdigest()

    def columns(self) -> dict:
        """The ``runs`` row (see :mod:`.schema`)."""
        context = self.context
        return {
            "run_id": self.run_id,
            "report_sha256": self.report_sha256,
            "run_time": run_time(context.get("date"), self.saved_at),
            "date": str(context.get("date", "")),
            "saved_at": self.saved_at,
            "status": self.status,
            "exit_status": self.exit_status,
            "source": self.source,
            "source_path": self.source_path,
            "host_name": str(context.get("host_name", "")),
            "fingerprint": machine_fingerprint(context),
            "machine": describe_machine(context),
            "devices": json.dumps(devices_of(context)),
            "ireebench_version": str(context.get("ireebench_version", "")),
            "iree_version": str(context.get("iree_runtime_version", "")),
            "module": str(context.get("iree_module", "")),
            "module_sha256": str(context.get("iree_module_sha256", "")),
            "compile_flags": json.dumps(_list(context.get(COMPILE_FLAGS))),
            "plugins": json.dumps(_list(context.get("ireebench_plugins"))),
            "git_commit": str(context.get(GIT_COMMIT, "")),
            "git_branch": str(context.get(GIT_BRANCH, "")),
            "tags": json.dumps(self.tags),
            "context": json.dumps(context),
            "report": self.report,
        }


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _list(value) -> list:
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def run_time(date, fallback: float) -> float:
    """The run's date (the context's, when it started) in seconds since the epoch."""
    try:
        moment = datetime.datetime.fromisoformat(str(date))
    except ValueError:
        return fallback
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.timestamp()


def context_tags(context: dict) -> dict:
    """The ``--benchmark_context`` entries of a report written elsewhere: its string
    entries that are neither Google Benchmark's nor provenance (``iree_``/``ireebench_``)."""
    return {key: value for key, value in context.items()
            if isinstance(value, str) and key not in GOOGLE_BENCHMARK_KEYS
            and not key.startswith(("iree_", "ireebench_"))}


def record_of_report(text: str, report: dict, *, run_id: str = "", source: str = SAVED,
                     source_path: str = "", status: str = COMPLETE,
                     exit_status: int | None = None, tags: dict | None = None,
                     samples: list | None = None) -> RunRecord:
    """The :class:`RunRecord` of a parsed report and its text.

    ``samples``: per row (the report's order), ``(samples, batch_samples)``;
    ``tags``: the ``--benchmark_context`` entries (read from the context
    when not given).
    """
    context = report.get("context") if isinstance(report.get("context"), dict) else {}
    rows = []
    for position, data in enumerate(report.get("benchmarks") or []):
        if not isinstance(data, dict):
            continue
        raw, batches = samples[position] if samples and position < len(samples) else ([], [])
        rows.append(RowRecord(position, data, list(raw), list(batches)))
    run_id = run_id or str(context.get("ireebench_run_id") or "") or uuid.uuid4().hex
    return RunRecord(run_id, text, context, rows, status=status, exit_status=exit_status,
                     source=source, source_path=source_path,
                     tags=dict(context_tags(context) if tags is None else tags))
