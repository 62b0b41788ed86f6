"""Typed rows of ``iree-profile statistics --format=jsonl``, and reading them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import native
from ..errors import UsageError
from ..native import PROFILE_TOOL

# iree-profile statistics row types that carry one executable function each.
DISPATCH_FUNCTION = "dispatch_function"  # device-timestamped dispatches (GPUs)
HOST_EXECUTION_FUNCTION = "host_execution_function"  # local CPU devices
FUNCTION_ROW_TYPES = (DISPATCH_FUNCTION, HOST_EXECUTION_FUNCTION)

_NO_ORDINAL = 0xFFFFFFFF  # "none" in the statistics rows' 32-bit ordinals


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
    proc = native.run_tool(PROFILE_TOOL, ["statistics", "--format=jsonl", str(bundle_path)])
    if proc.returncode != 0:
        raise UsageError(f"{PROFILE_TOOL} statistics {bundle_path}: "
                         f"{native.native_error_line(proc.stderr, proc.returncode)}")
    return parse_statistics(proc.stdout)
