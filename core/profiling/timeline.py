"""Execution intervals of a HAL profiling bundle, and the device's busy time.

``iree-profile statistics`` (:mod:`.rows`) sums durations per function;
the device's *busy time* needs the individual events: every queue
operation and dispatch with its start and end. ``iree-profile export
--format=ireeperf-jsonl`` (the schema-versioned interchange stream of
IREE's profile tooling, ``runtime/src/iree/tooling/profile/export.c``)
writes one record per event:

* ``host_execution_event`` (local-sync, local-task: the ``host-execution``
  family): alloca, fill, copy, dispatch, execute, barrier, dealloca ...
  with ``start_host_time_ns``/``end_host_time_ns`` (``iree_host_time_ns``,
  the runtime's monotonic clock) and ``valid``;
* ``dispatch_event`` (GPUs: ``dispatch-events``) and ``queue_device_event``
  (``device-queue-events``): device ticks, mapped to
  ``start_driver_host_cpu_time_ns``/``end_driver_host_cpu_time_ns`` when
  the bundle's clock correlation allows it (``derived_time_available``);
  an event without that mapping is *unscaled* and counted, not guessed.

:func:`busy_ns` is the length of the union of the intervals: the time at
least one event was executing. Nested events (a dispatch inside its
command buffer's ``execute``) and overlapping ones (two queues, two
devices) count once. Intervals of different time domains are never
merged with each other (their clocks are not known to agree): each
domain's union is computed alone and the lengths are added.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

from .. import native
from ..errors import UsageError
from ..native import PROFILE_TOOL

EXPORT_FORMAT = "ireeperf-jsonl"
HOST_EXECUTION_EVENT = "host_execution_event"
DISPATCH_EVENT = "dispatch_event"
QUEUE_DEVICE_EVENT = "queue_device_event"
EXECUTION_RECORDS = (HOST_EXECUTION_EVENT, DISPATCH_EVENT, QUEUE_DEVICE_EVENT)
HOST_TIME_DOMAIN = "iree_host_time_ns"
DRIVER_TIME_DOMAIN = "driver_host_cpu_timestamp_ns"


@dataclass(frozen=True)
class ExecutionEvent:
    """One executed queue operation or dispatch, in nanoseconds of ``time_domain``."""

    record_type: str  # host_execution_event, dispatch_event or queue_device_event
    op: str  # alloca, fill, dispatch, execute ... ("dispatch" for a dispatch_event)
    key: str | None  # the dispatch function, where the event is one
    physical_device_ordinal: int
    queue_ordinal: int
    submission_id: int
    time_domain: str
    start_ns: int
    end_ns: int

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass
class Timeline:
    """The execution events of a bundle, in start order."""

    events: list[ExecutionEvent]
    unscaled: int = 0  # device-timestamped events the clock fit could not map to ns
    invalid: int = 0  # events whose timestamps were missing or out of order


def _int(value) -> int:
    return 0 if value is None or isinstance(value, bool) else int(value)


def event_from_record(record: dict) -> ExecutionEvent | str:
    """The event of one export record, or why it has none (``"invalid"``, ``"unscaled"``,
    ``""`` for a record that is not an execution event)."""
    kind = record.get("record_type")
    if kind not in EXECUTION_RECORDS:
        return ""
    if not record.get("valid", False):
        return "invalid"
    if kind == HOST_EXECUTION_EVENT:
        domain = str(record.get("host_time_domain") or HOST_TIME_DOMAIN)
        start, end = record.get("start_host_time_ns"), record.get("end_host_time_ns")
    else:
        if not record.get("derived_time_available", False):
            return "unscaled"
        domain = str(record.get("derived_time_domain") or DRIVER_TIME_DOMAIN)
        start = record.get("start_driver_host_cpu_time_ns")
        end = record.get("end_driver_host_cpu_time_ns")
    start, end = _int(start), _int(end)
    if end < start:
        return "invalid"
    return ExecutionEvent(
        record_type=kind,
        op=str(record.get("op") or ("dispatch" if kind == DISPATCH_EVENT else "")),
        key=record.get("key") or None,
        physical_device_ordinal=_int(record.get("physical_device_ordinal")),
        queue_ordinal=_int(record.get("queue_ordinal")),
        submission_id=_int(record.get("submission_id")),
        time_domain=domain,
        start_ns=start,
        end_ns=end,
    )


def parse_timeline(lines) -> Timeline:
    """The execution events of ``iree-profile export --format=ireeperf-jsonl`` lines."""
    timeline = Timeline([])
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise UsageError(f"{PROFILE_TOOL} export: line {number} is not JSON: "
                             f"{line[:80]!r}") from None
        event = event_from_record(record) if isinstance(record, dict) else ""
        if isinstance(event, ExecutionEvent):
            timeline.events.append(event)
        elif event == "unscaled":
            timeline.unscaled += 1
        elif event == "invalid":
            timeline.invalid += 1
    timeline.events.sort(key=lambda e: (e.start_ns, -e.end_ns))
    return timeline


def read_timeline(bundle_path, scratch_dir) -> Timeline:
    """Runs ``iree-profile export --format=ireeperf-jsonl`` on a bundle and reads its events.

    The export is written to a file in ``scratch_dir`` and read line by line
    (a long pass has many events; they are not held twice as text).
    """
    destination = Path(scratch_dir) / (Path(bundle_path).stem + ".ireeperf.jsonl")
    proc = native.run_tool(PROFILE_TOOL, ["export", f"--format={EXPORT_FORMAT}",
                                          f"--output={destination}", str(bundle_path)])
    if proc.returncode != 0:
        raise UsageError(f"{PROFILE_TOOL} export {bundle_path}: "
                         f"{native.native_error_line(proc.stderr, proc.returncode)}")
    try:
        with open(destination, encoding="utf-8", errors="replace") as handle:
            return parse_timeline(handle)
    except OSError as exc:
        raise UsageError(f"{PROFILE_TOOL} export {bundle_path}: cannot read "
                         f"{destination}: {exc.strerror or exc}") from None
    finally:
        destination.unlink(missing_ok=True)


def busy_ns(events) -> int:
    """The length of the union of the events' intervals, per time domain, summed."""
    by_domain: dict[str, list[tuple[int, int]]] = {}
    for event in events:
        by_domain.setdefault(event.time_domain, []).append((event.start_ns, event.end_ns))
    total = 0
    for intervals in by_domain.values():
        intervals.sort()
        current_start, current_end = intervals[0]
        for start, end in intervals[1:]:
            if start > current_end:
                total += current_end - current_start
                current_start, current_end = start, end
            elif end > current_end:
                current_end = end
        total += current_end - current_start
    return total


def split_repetitions(events: list[ExecutionEvent], repetitions: int) \
        -> list[list[ExecutionEvent]] | None:
    """The events of a pass of ``repetitions`` sequential repetitions, one list each.

    A repetition of Google Benchmark's loop ends before the next starts, and
    every repetition of a workload runs the same iterations, so it executes
    the same number of events: in start order, the events fall into equal
    consecutive groups, each ending before the next begins. ``None`` when
    the events do not split that way (a count that does not divide, groups
    that overlap in time, events of several clocks): the pass then gives one
    figure for all.
    """
    if repetitions < 1 or not events or len(events) % repetitions:
        return None
    if len({event.time_domain for event in events}) > 1:
        return None  # clocks not known to agree: no order across them
    size = len(events) // repetitions
    groups = [events[i * size:(i + 1) * size] for i in range(repetitions)]
    for earlier, later in itertools.pairwise(groups):
        if max(e.end_ns for e in earlier) > min(e.start_ns for e in later):
            return None
    return groups
