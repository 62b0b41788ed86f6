"""``--device_time`` (plugins/device_time.py): the device's busy time, next to real and CPU time.

On the MLP of benchmarks/mlp.mlir, through the real profiling pass (the
native tool with a HAL profiling bundle) and ``iree-profile export``.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from conftest import MLIR_DIR, ROOT, one_error_line

MLP = (ROOT / "benchmarks" / "mlp.mlir").read_text()


@pytest.fixture(scope="module")
def mlp(compile_mlir):
    return compile_mlir(MLP)


def test_local_task_json_and_csv(mlp, ireebench, tmp_path):
    out = tmp_path / "run.csv"
    result = ireebench(f"--module={mlp}", "--device=local-task", "--benchmark_min_time=5x",
                       "--benchmark_repetitions=2", "--device_time", "--dispatch_statistics",
                       "--benchmark_format=json", f"--benchmark_out={out}",
                       "--benchmark_out_format=csv")
    assert result.returncode == 0, result.stderr
    rows = result.json()["benchmarks"]
    repetitions = [r for r in rows
                   if r["run_type"] == "iteration" and "/process_time/" in r["name"]]
    aggregates = {r["aggregate_name"]: r for r in rows if r["run_type"] == "aggregate"}
    dispatches = [r for r in rows if "/mlp_dispatch_" in r["name"]]
    assert len(repetitions) == 2 and len(dispatches) == 2
    for row in repetitions:
        assert row["device_time"] > 0
        keys = list(row)
        assert keys.index("device_time") == keys.index("cpu_time") + 1
    # Each repetition its own: the pass's events split into one group per repetition.
    assert repetitions[0]["device_time"] != repetitions[1]["device_time"]
    assert aggregates["mean"]["device_time"] == pytest.approx(
        sum(r["device_time"] for r in repetitions) / 2)
    assert {"median", "stddev", "cv"} <= {name for name, r in aggregates.items()
                                          if "device_time" in r}
    assert all("device_time" not in r for r in dispatches)
    # The dispatches are part of what the device executed (same pass, same events).
    dispatch_time = sum(r["real_time"] for r in dispatches)
    assert 0 < dispatch_time <= aggregates["mean"]["device_time"] * (1 + 1e-9)
    text = out.read_text()  # the file holds the context first, as Google Benchmark's
    table = list(csv.reader(io.StringIO(text[text.index("name,iterations"):])))
    header = table[0]
    assert header[:5] == ["name", "iterations", "real_time", "cpu_time", "device_time"]
    cells = {line[0]: line for line in table[1:]}
    assert float(cells["BM_mlp/process_time/real_time_mean"][4]) == pytest.approx(
        aggregates["mean"]["device_time"], rel=1e-5)
    assert all(cells[r["name"]][4] == "" for r in dispatches)


def test_local_sync_console(mlp, ireebench):
    result = ireebench(f"--module={mlp}", "--device=local-sync", "--benchmark_min_time=3x",
                       "--device_time")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("Benchmark"))
    assert header.split()[:5] == ["Benchmark", "Time", "CPU", "Device", "Iterations"]
    row = next(line for line in lines if line.startswith("BM_mlp/"))
    # name, real, unit, cpu, unit, device, unit, iterations ...
    fields = row.split()
    assert fields[2] == fields[4] == fields[6] == "ms" and float(fields[5]) > 0
    assert fields[7] == "3"
    # Each unit ends under the end of its header, the Device column like Time and CPU.
    units = [match.end() for match in re.finditer(r"\bms\b", row)]
    labels = [header.index(label) + len(label) for label in ("Time", "CPU", "Device")]
    assert units == labels


def test_a_device_that_cannot_profile_fails_before_measuring(mlp, ireebench):
    """The probe starts the pass's session once (here a sink wants dispatch-events,
    which local devices do not implement)."""
    result = ireebench(f"--module={mlp}", "--device=local-sync", "--device_time",
                       "--plugin=dispatch_events_sink", "--benchmark_min_time=1x")
    assert one_error_line(result) == (
        "ireebench: error: --device_time: the native profiling session cannot start "
        "(--device_profiling_mode=host-execution,dispatch-events): unsupported local "
        "profiling data families 0x8")
    assert "BM_mlp" not in result.stdout


def test_needs_profiling_passes(mlp, ireebench):
    line = one_error_line(ireebench(f"--module={mlp}", "--backend=native", "--device_time"))
    assert line == ("ireebench: error: --device_time=true: needs a backend that can rerun its "
                    "workloads in an untimed profiling pass (capability 'profiling_passes'); "
                    "--backend=native does not have it")
    line = one_error_line(ireebench(f"--module={mlp}", "--device_time", "-p",
                                    "no:profiling_pass", "-p", "no:dispatch_statistics"))
    assert line == ("ireebench: error: --device_time needs the profiling_pass plugin "
                    "(blocked with -p no:profiling_pass)")


def test_each_point_of_a_sweep_profiles_its_own_module(compile_mlir, ireebench, tmp_path):
    # The pass must run the module the point measured, not the run's first point's.
    text = (MLIR_DIR / "rank_sum.mlir").read_text().replace("INPUTS", str(1 << 20))
    for name, work in (("small", 1 << 12), ("big", 1 << 20)):
        module = compile_mlir(text.replace("WORK", str(work)).replace("EXTRA", "0"))
        (tmp_path / f"{name}.vmfb").write_bytes(module.read_bytes())
    out = tmp_path / "out.json"
    result = ireebench("--sweep", "m=small,big", f"--module={tmp_path}/{{m}}.vmfb",
                       "--function=main", f"--input={1 << 20}xi32=0", "--device=local-sync",
                       "--benchmark_min_time=10x", "--device_time", "--time_unit=us",
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    device = {row["name"]: row["device_time"] for row in json.loads(out.read_text())["benchmarks"]}
    small = device["BM_main/m:small/process_time/real_time"]
    big = device["BM_main/m:big/process_time/real_time"]
    assert big > 4 * small, device  # 256x the work; the first module profiled twice: ~1
