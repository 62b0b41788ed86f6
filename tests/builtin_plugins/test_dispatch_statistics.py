"""--dispatch_statistics: rows per dispatch function, compared with the native tool.

The native ``iree-benchmark-module --dispatch_statistics`` is the reference
for names, calls, iterations, order, the console layout and the warning
line. Times are checked against the profile they come from (the kept
bundle, read by ``iree-profile``): a wrong divisor or unit shows exactly,
whatever the load. How close the times come to the native tool's, measured
in other processes on a shared machine, is a timing question:
``benchmarks/dispatch_vs_native.py`` measures it.
"""

import csv
import io
import json
import subprocess

import pytest
from conftest import one_error_line

ASYNC = "--iree-execution-model=async-external"
LOCAL = "--device=local-sync"


def _dispatch_rows(report: dict, benchmark: str) -> list[dict]:
    prefix = f"{benchmark}/"
    return [b for b in report["benchmarks"]
            if b["name"].startswith(prefix) and "/process_time/" not in b["name"]]


def _native_json(native_tool, *args) -> dict:
    result = native_tool("iree-benchmark-module", *args, "--dispatch_statistics",
                         "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _ours_json(ireebench, *args) -> dict:
    result = ireebench(*args, "--dispatch_statistics", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    return result.json()


def test_rows_match_native_sync(compile_mlir, ireebench, native_tool, tmp_path):
    """Names, calls, order and iterations equal the native tool's; each time is
    the profile's total for the dispatch over the profiled iterations, in the
    row's unit (read back from the bundle the pass kept)."""
    module = compile_mlir("two_dispatches")
    args = [f"--module={module}", LOCAL, "--benchmark_min_time=200x"]
    native = _dispatch_rows(_native_json(native_tool, *args), "BM_two_dispatches")
    assert len(native) == 2  # the module really has two dispatches
    bundle = tmp_path / "pass.ireeprof"
    ours = _dispatch_rows(_ours_json(ireebench, *args, f"--profile_output={bundle}"),
                          "BM_two_dispatches")
    assert [r["name"] for r in ours] == [r["name"] for r in native]
    assert [r["run_name"] for r in ours] == [r["run_name"] for r in native]
    for mine, theirs in zip(ours, native):
        assert mine["calls"] == theirs["calls"] == 1.0
        assert mine["iterations"] == theirs["iterations"] == 200
        for key in ("run_type", "repetitions", "repetition_index", "time_unit",
                    "family_index", "per_family_instance_index"):
            assert mine[key] == theirs[key], key
        assert "items_per_second" not in mine
    assert sum(r["percent"] for r in ours) == pytest.approx(100.0)
    statistics = native_tool("iree-profile", "statistics", "--format=jsonl", bundle)
    assert statistics.returncode == 0, statistics.stderr
    totals = {}
    for line in statistics.stdout.splitlines():
        record = json.loads(line)
        if record.get("row_type") == "host_execution_function":
            totals[record["function_name"]] = record["total_duration_ns"]
    per_unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    for row in ours:
        dispatch = row["name"].split("/", 1)[1]
        expected = totals[dispatch] / 200 / per_unit[row["time_unit"]]
        assert row["real_time"] == pytest.approx(expected, rel=1e-9), (row, totals)


def test_async_batch_repetitions_csv(compile_mlir, ireebench, native_tool):
    """Async function, batch 4 over 2 timelines, 2 repetitions, CSV: rows average all repetitions."""
    module = compile_mlir("two_dispatches", ASYNC)
    args = [f"--module={module}", LOCAL, "--batch_size=4", "--batch_concurrency=2",
            "--benchmark_min_time=20x", "--benchmark_repetitions=2"]
    native = _dispatch_rows(_native_json(native_tool, *args), "BM_two_dispatches")
    result = ireebench(*args, "--dispatch_statistics", "--benchmark_format=csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    names = [row["name"] for row in rows]
    # Right after the benchmark's repetitions and aggregates.
    assert names[:6] == ["BM_two_dispatches/process_time/real_time"] * 2 + [
        f"BM_two_dispatches/process_time/real_time_{a}" for a in ("mean", "median", "stddev", "cv")]
    dispatch = rows[6:]
    assert [row["name"] for row in dispatch] == [row["name"] for row in native]
    for mine, theirs in zip(dispatch, native):
        assert int(mine["iterations"]) == theirs["iterations"] == 40
        assert float(mine["calls"]) == theirs["calls"] == 1.0
        assert mine["time_unit"] == "ms"
    assert sum(float(row["percent"]) for row in dispatch) == pytest.approx(100.0, abs=1e-3)


def test_console_layout_matches_native(compile_mlir, ireebench, native_tool):
    """The name column is widened for the dispatch rows, exactly like the native tool's."""
    module = compile_mlir("two_dispatches")
    args = [f"--module={module}", LOCAL, "--benchmark_min_time=5x", "--dispatch_statistics"]
    native = native_tool("iree-benchmark-module", *args)
    ours = ireebench(*args)
    assert ours.returncode == 0 and native.returncode == 0, ours.stderr + native.stderr
    native_lines, our_lines = native.stdout.splitlines(), ours.stdout.splitlines()
    assert our_lines[:3] == native_lines[:3]  # rule, header, rule: same widths
    names = [line.split()[0] for line in our_lines[3:]]
    assert names == [line.split()[0] for line in native_lines[3:]]
    # Columns line up: every row puts its time where the benchmark row does.
    time_column = {line.index(" ms ") for line in our_lines[3:]}
    assert len(time_column) == 1
    assert all("calls=1 percent=" in line for line in our_lines[4:])


def test_json_file_and_console_display(compile_mlir, ireebench, tmp_path):
    """--benchmark_out JSON gets the same rows as the console display."""
    module = compile_mlir("two_dispatches")
    out = tmp_path / "out.json"
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=5x",
                       "--dispatch_statistics", f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    rows = _dispatch_rows(json.loads(out.read_text()), "BM_two_dispatches")
    assert len(rows) == 2
    for row in rows:
        assert row["name"] in result.stdout
        assert row["cpu_time"] > 0  # tile time on CPU devices


def test_dispatch_wrapper_warns_like_native(dispatch_module, ireebench, native_tool):
    """Dispatch benchmark wrappers: no attributable rows, and the native tool's warning line."""
    args = [f"--module={dispatch_module}", LOCAL, "--benchmark_min_time=5x", "--batch_size=4",
            "--dispatch_statistics"]
    native = native_tool("iree-benchmark-module", *args, "--benchmark_format=json")
    ours = ireebench(*args, "--benchmark_format=json")
    assert ours.returncode == native.returncode == 0, ours.stderr
    assert [b["name"] for b in ours.json()["benchmarks"]] == \
        [b["name"] for b in json.loads(native.stdout)["benchmarks"]]

    def warnings(text):
        return [line for line in text.splitlines() if line.startswith("--dispatch_statistics:")]

    assert warnings(ours.stderr) == warnings(native.stderr)
    assert len(warnings(ours.stderr)) == 1


def test_profile_output_keeps_the_bundle(compile_mlir, ireebench, native_tool, tmp_path):
    module = compile_mlir("two_dispatches")
    bundle = tmp_path / "pass.ireeprof"
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=10x",
                       "--dispatch_statistics", f"--profile_output={bundle}")
    assert result.returncode == 0, result.stderr
    statistics = native_tool("iree-profile", "statistics", "--format=jsonl", bundle)
    assert statistics.returncode == 0, statistics.stderr
    functions = [json.loads(line) for line in statistics.stdout.splitlines()]
    calls = {r["function_name"]: r["sample_count"] for r in functions
             if r.get("row_type") == "host_execution_function"}
    assert len(calls) == 2 and set(calls.values()) == {10}
    assert all(name in result.stdout for name in calls)


CONFLICTS = [
    ("--device_profiling_mode=host-execution", "--device_profiling_output=p.ireeprof"),
    ("--print_device_statistics",),
    ("--device_capture_tool=renderdoc",),
    ("--device_replay_output=capture.ireereplay",),
]


@pytest.mark.parametrize("flags", CONFLICTS, ids=lambda flags: flags[0].split("=")[0])
def test_conflicts_are_rejected_before_anything_runs(compile_mlir, ireebench, tmp_path, flags):
    module = compile_mlir("two_dispatches")
    result = ireebench(f"--module={module}", LOCAL, "--dispatch_statistics", *flags,
                       cwd=tmp_path)
    line = one_error_line(result)
    assert result.returncode == 1
    assert "--dispatch_statistics cannot be combined with" in line
    assert flags[0].split("=")[0] in line
    assert result.stdout == ""  # nothing measured, nothing reported
    assert list(tmp_path.iterdir()) == []  # no capture written


def test_module_without_hal_devices_is_rejected(compile_mlir, ireebench):
    module = compile_mlir("stateful")  # pure VM code: no HAL device
    result = ireebench(f"--module={module}", LOCAL, "--dispatch_statistics")
    line = one_error_line(result)
    assert result.returncode == 1 and "uses no HAL devices" in line
    assert result.stdout == ""


def test_profile_output_requires_dispatch_statistics(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", LOCAL,
                       "--profile_output=x.ireeprof")
    assert "--profile_output=x.ireeprof: requires --dispatch_statistics" in one_error_line(result)


def test_benchmark_out_env_is_not_inherited_by_the_pass(compile_mlir, tmp_path):
    """The native pass must not write the user's BENCHMARK_OUT file (Google Benchmark env flags)."""
    import os
    import sys

    target = tmp_path / "user.json"
    env = dict(os.environ, BENCHMARK_OUT=str(target), BENCHMARK_OUT_FORMAT="csv",
               IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run(
        [sys.executable, "-m", "ireebench", f"--module={compile_mlir('two_dispatches')}", LOCAL,
         "--benchmark_min_time=3x", "--dispatch_statistics"],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    text = target.read_text()  # ireebench's own CSV, with the dispatch rows, not a native one
    assert text.count("BM_two_dispatches/two_dispatches_dispatch_") == 2


def test_native_backend_is_rejected(compile_mlir, ireebench):
    """--backend=native measures nothing in-process that a profiling pass could follow."""
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", LOCAL, "--backend=native",
                       "--dispatch_statistics")
    assert one_error_line(result) == (
        "ireebench: error: --dispatch_statistics=true: needs a backend that can rerun its "
        "workloads in an untimed profiling pass (capability 'profiling_passes'); "
        "--backend=native does not have it")
