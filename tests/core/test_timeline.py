"""Execution events of a profiling bundle and their union (core/profiling/timeline.py).

The records are ``iree-profile export --format=ireeperf-jsonl`` lines as the
tool writes them (the fields read here); the end-to-end reading of a real
bundle is tests/builtin_plugins/test_device_time.py.
"""

from __future__ import annotations

import json

import pytest
from ireebench import UsageError
from ireebench.profiling import busy_ns, parse_timeline, split_repetitions


def host(start, end, op="dispatch", valid=True, **extra):
    return json.dumps({"record_type": "host_execution_event", "op": op, "key": None,
                       "physical_device_ordinal": 0, "queue_ordinal": 0, "submission_id": 1,
                       "host_time_domain": "iree_host_time_ns", "start_host_time_ns": start,
                       "end_host_time_ns": end, "valid": valid, **extra})


def device(start, end, derived=True, record="dispatch_event"):
    return json.dumps({"record_type": record, "key": "f", "valid": True,
                       "derived_time_available": derived,
                       "derived_time_domain": "driver_host_cpu_timestamp_ns",
                       "start_driver_host_cpu_time_ns": start,
                       "end_driver_host_cpu_time_ns": end})


def test_nested_and_overlapping_intervals_count_once():
    # execute [0, 100] holds two dispatches; a fill [150, 160]; a copy overlapping it.
    timeline = parse_timeline([host(10, 50), host(0, 100, op="execute"), host(60, 90),
                               host(150, 160, op="fill"), host(155, 170, op="copy"),
                               json.dumps({"record_type": "queue", "queue_ordinal": 0})])
    assert [e.op for e in timeline.events] == ["execute", "dispatch", "dispatch", "fill",
                                               "copy"]
    assert busy_ns(timeline.events) == 100 + 20
    assert busy_ns([]) == 0


def test_invalid_and_unscaled_events_are_counted_not_guessed():
    timeline = parse_timeline([host(0, 10), host(5, 1, valid=True), host(0, 5, valid=False),
                               device(0, 10, derived=False), device(100, 130),
                               device(120, 140, record="queue_device_event"), ""])
    assert (timeline.invalid, timeline.unscaled) == (2, 1)
    # Two clocks: each domain's union, added (never merged across clocks).
    assert busy_ns(timeline.events) == 10 + 40


def test_not_json_is_one_line():
    with pytest.raises(UsageError, match="iree-profile export: line 2 is not JSON"):
        parse_timeline([host(0, 1), "{oops"])


def test_split_into_repetitions():
    events = parse_timeline([host(0, 10), host(12, 20), host(30, 35), host(36, 40)]).events
    groups = split_repetitions(events, 2)
    assert [busy_ns(g) for g in groups] == [18, 9]
    assert split_repetitions(events, 3) is None  # 4 events do not make 3 equal groups
    overlapping = parse_timeline([host(0, 50), host(10, 20), host(30, 60), host(70, 80)]).events
    assert split_repetitions(overlapping, 2) is None  # the first group ends after the second starts
    mixed = parse_timeline([host(0, 1), device(5, 6)]).events
    assert split_repetitions(mixed, 2) is None  # two clocks: no order between them
