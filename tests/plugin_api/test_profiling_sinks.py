"""Profiling sinks: third-party sinks and wrappers of the profiling pass, and the typed rows.

The test plugin ``tests/fixtures/plugins/profiling_probe.py`` (given to
``ireebench_tester``) provides two sinks and a wrapper of ``ireebench_profiling_pass``
that log every event to a JSON-lines file.
"""

import json

import pytest
from conftest import fixture_plugin, plugin_error_line
from ireebench.profiling import (
    HOST_EXECUTION_FUNCTION,
    StatisticsRow,
    parse_statistics,
    profiling_mode,
    read_statistics,
)

MATMUL = "two_dispatches_dispatch_0_matmul_128x128x128_f32"
ADD = "two_dispatches_dispatch_1_elementwise_transpose_128x128_f32"


def _events(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _probe(ireebench_tester, module, log, *args):
    return ireebench_tester.run(f"--module={module}", f"--probe_log={log}",
                                "--benchmark_format=json", *args,
                                plugins=[fixture_plugin("profiling_probe")])


def test_sink_plugin_receives_rows(compile_mlir, ireebench_tester, tmp_path):
    """Without --dispatch_statistics, a third-party sink alone gets a profiling pass."""
    log = tmp_path / "events.jsonl"
    result = _probe(ireebench_tester, compile_mlir("two_dispatches"), log,
                    "--benchmark_min_time=5x", "--benchmark_repetitions=2")
    assert result.exit_code == 0, result.stderr
    # A sink adds no rows to the report.
    assert [b["name"] for b in result.json()["benchmarks"]][-1].endswith("real_time_cv")
    events = _events(log)
    order = [(e["event"], e.get("sink", "")) for e in events]
    assert order == [
        ("begin", "first"), ("begin", "second"),
        ("wrap_begin", ""), ("native", ""), ("wrap_end", ""),
        ("rows", "first"), ("rows", "second"),
        ("end", "first"), ("end", "second"),
        ("close", "first"), ("close", "second"),
    ]
    begin = events[0]
    assert begin["workload"] == "BM_two_dispatches"
    assert (begin["mode"], begin["iterations"], begin["repetitions"]) == ("host-execution", 5, 2)
    rows = [e for e in events if e["event"] == "rows"]
    for event in rows:
        assert event["functions"] == [MATMUL, ADD]
        assert event["calls"] == {MATMUL: 10, ADD: 10}  # 5 iterations x 2 repetitions
        assert HOST_EXECUTION_FUNCTION in event["row_types"]
        assert event["bundle_exists"]  # the sink may read the raw bundle
    ends = [e for e in events if e["event"] == "end"]
    assert all(e["ok"] and e["iterations"] == 10 and e["bundle_exists"] for e in ends)


def test_wrapper_sees_begin_and_end_around_the_pass(compile_mlir, ireebench_tester, tmp_path):
    log = tmp_path / "events.jsonl"
    result = _probe(ireebench_tester, compile_mlir("two_dispatches"), log, "--benchmark_min_time=3x")
    assert result.exit_code == 0, result.stderr
    events = _events(log)
    names = [e["event"] for e in events]
    begin, native, end = (names.index(n) for n in ("wrap_begin", "native", "wrap_end"))
    assert begin < native < end
    assert not events[begin]["bundle_exists"]  # before the pass: nothing written yet
    assert events[end]["bundle_exists"] and events[end]["ok"]
    # The wrapper's environment and command prefix reached the native process.
    assert events[native]["env"] == "set-by-wrapper"


def test_sinks_and_dispatch_statistics_share_one_pass(compile_mlir, ireebench_tester, tmp_path):
    log = tmp_path / "events.jsonl"
    result = _probe(ireebench_tester, compile_mlir("two_dispatches"), log, "--benchmark_min_time=3x",
                    "--dispatch_statistics")
    assert result.exit_code == 0, result.stderr
    names = [b["name"] for b in result.json()["benchmarks"]]
    assert names[1:] == [f"BM_two_dispatches/{MATMUL}", f"BM_two_dispatches/{ADD}"]
    events = _events(log)
    assert [e["event"] for e in events].count("native") == 1
    assert [e["sink"] for e in events if e["event"] == "rows"] == ["first", "second"]


@pytest.mark.parametrize("method", ["begin_pass", "receive_rows", "end_pass"])
def test_failing_sink_is_one_plugin_error_line(compile_mlir, ireebench_tester, tmp_path, method):
    log = tmp_path / "events.jsonl"
    result = _probe(ireebench_tester, compile_mlir("two_dispatches"), log, "--benchmark_min_time=2x",
                    f"--probe_fail_in={method}")
    line = plugin_error_line(result)
    assert (f"plugin 'profiling_probe' failed in profiling sink LoggingSink.{method}: "
            "RuntimeError") in line
    events = _events(log)
    # The other sink still learns the pass ended, and every sink is closed.
    assert [e["sink"] for e in events if e["event"] == "close"] == ["first", "second"]
    assert any(e["event"] == "end" and e["sink"] == "second" for e in events)


def test_typed_rows_from_a_real_bundle(compile_mlir, ireebench_tester, tmp_path):
    bundle = tmp_path / "pass.ireeprof"
    result = ireebench_tester.run(f"--module={compile_mlir('two_dispatches')}",
                                  "--benchmark_min_time=4x", "--dispatch_statistics",
                                  f"--profile_output={bundle}")
    assert result.exit_code == 0, result.stderr
    summary, rows = read_statistics(bundle)
    assert summary.dropped_record_count == 0 and summary.row_count == len(rows)
    functions = {row.key: row for row in rows if row.is_function_row}
    assert set(functions) == {MATMUL, ADD}
    for row in functions.values():
        assert row.row_type == HOST_EXECUTION_FUNCTION
        assert row.sample_count == 4 and row.has_timing and row.has_tile_totals
        assert 0 < row.minimum_duration_ns <= row.maximum_duration_ns <= row.total_duration_ns
        assert row.tile_duration_sum_ns > 0 and row.tile_count >= 4
    assert functions[MATMUL].total_duration_ns > functions[ADD].total_duration_ns
    queue = [row for row in rows if row.event_name == "dispatch"]
    assert queue and not any(row.is_function_row for row in queue)


def test_rows_without_timing_or_name():
    """Rows the producer could not time or name keep that information (None / executable key)."""
    line = json.dumps({"type": "statistics_row", "row_type": "dispatch_function",
                       "has_timing": False, "has_tile_totals": False, "executable_id": 3,
                       "function_ordinal": 1, "function_name": None, "sample_count": 7,
                       "total_duration_ns": 0, "physical_device_ordinal": 4294967295})
    summary, rows = parse_statistics(
        '{"type":"statistics_summary","row_count":1,"dropped_record_count":2}\n' + line)
    assert summary.dropped_record_count == 2
    (row,) = rows
    assert isinstance(row, StatisticsRow) and row.is_function_row
    assert row.total_duration_ns is None and row.tile_duration_sum_ns is None
    assert row.key == "executable_3_function_1"
    assert row.physical_device_ordinal is None and row.sample_count == 7


def test_profiling_mode_per_device():
    assert profiling_mode(["local-sync"]) == "host-execution"
    assert profiling_mode(["local-task://"]) == "host-execution"
    assert profiling_mode(["cuda://0"]) == "dispatch-events"
    assert profiling_mode(["local-sync", "hip"]) == "host-execution,dispatch-events"


def test_user_profiling_flags_stay_out_of_the_sinks_pass(compile_mlir, ireebench_tester, tmp_path):
    """--print_device_statistics gets its own native run; the sinks' pass still succeeds."""
    log = tmp_path / "events.jsonl"
    result = _probe(ireebench_tester, compile_mlir("two_dispatches"), log, "--benchmark_min_time=2x",
                    "--print_device_statistics")
    assert result.exit_code == 0, result.stderr
    assert "IREE HAL device statistics:" in result.stderr
    ends = [e for e in _events(log) if e["event"] == "end"]
    assert ends and all(e["ok"] for e in ends), ends
