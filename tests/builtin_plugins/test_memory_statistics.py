"""``--memory_statistics`` (plugins/memory_statistics.py): the allocators' statistics per benchmark.

The MLP of benchmarks/mlp.mlir against one whose buffers are 8x smaller (batch
and hidden size divided by 8), on local-sync (whose allocator allocates every
buffer; local-task's queue allocations come from a pool the statistics do
not see).
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, one_error_line
from ireebench.plugins.allocator_statistics import HeapState, window_peak

MLP = (ROOT / "benchmarks" / "mlp.mlir").read_text()
SMALL_MLP = MLP.replace("24x", "3x").replace("1024", "128")  # every buffer 8x smaller
RUN = ["--device=local-sync", "--benchmark_min_time=3x", "--benchmark_repetitions=2",
       "--memory_statistics"]


@pytest.fixture(scope="module")
def runs(compile_mlir, ireebench, tmp_path_factory):
    """JSON reports: the small MLP, the MLP (with --print_statistics), the MLP again."""
    directory = tmp_path_factory.mktemp("memory")
    modules = {"small": compile_mlir(SMALL_MLP), "mlp": compile_mlir(MLP)}
    results = {}
    for name, module, extra in (("small", "small", []), ("mlp", "mlp", ["--print_statistics"]),
                                ("mlp_again", "mlp", [])):
        out = directory / f"{name}.json"
        result = ireebench(f"--module={modules[module]}", *RUN, *extra,
                           f"--benchmark_out={out}", "--benchmark_out_format=json")
        assert result.returncode == 0, result.stderr
        results[name] = (out, json.loads(out.read_text()), result)
    return results


def _repetitions(report):
    return [b for b in report["benchmarks"] if b["run_type"] == "iteration"]


def test_rows_carry_google_benchmarks_memory_fields(runs):
    _, report, result = runs["mlp"]
    rows = _repetitions(report)
    assert len(rows) == 2
    for row in rows:
        assert row["max_bytes_used"] > 0 and isinstance(row["max_bytes_used"], int)
        assert row["device_bytes_peak"] == row["max_bytes_used"]  # local-sync: device heap
        assert row["host_bytes_peak"] == 0
        assert row["total_allocated_bytes"] > 0 and "net_heap_growth" in row
        assert "allocs_per_iter" not in row  # the statistics count bytes, not allocations
        keys = list(row)  # after the counters, as Google Benchmark's JSONReporter writes
        assert keys.index("max_bytes_used") > keys.index("items_per_second")
    assert rows[0]["max_bytes_used"] == rows[1]["max_bytes_used"]
    for aggregate in (b for b in report["benchmarks"] if b["run_type"] == "aggregate"):
        assert "max_bytes_used" not in aggregate and "device_bytes_peak" in aggregate
    # The console shows the peak counters as bytes (1024-based).
    assert re.search(r" device_bytes_peak=[\d.]+Mi ", result.stdout), result.stdout


def test_consistent_with_print_statistics(runs):
    """The same run's allocator, printed at exit: its peak is the benchmark's; what it
    allocated is what the repetitions allocated (3x: no calibration, no warm-up)."""
    _, report, result = runs["mlp"]
    match = re.search(r"DEVICE_LOCAL:\s+(\d+)B peak /\s+(\d+)B allocated", result.stderr)
    assert match, result.stderr
    peak, allocated = map(int, match.groups())
    rows = _repetitions(report)
    assert rows[-1]["device_bytes_peak"] == peak
    assert sum(row["total_allocated_bytes"] for row in rows) == allocated


def test_peaks_grow_with_the_buffers(runs):
    small = _repetitions(runs["small"][1])[0]
    mlp = _repetitions(runs["mlp"][1])[0]
    assert mlp["max_bytes_used"] >= 8 * small["max_bytes_used"]
    assert mlp["total_allocated_bytes"] >= 8 * small["total_allocated_bytes"]


def test_compare_max_bytes_used(runs, ireebench):
    """The larger module is a regression of max_bytes_used; the same module twice is not
    (compared exactly: the bytes do not vary)."""
    small, mlp, again = (str(runs[name][0]) for name in ("small", "mlp", "mlp_again"))
    larger = ireebench("compare", small, mlp, "--metric=max_bytes_used")
    assert larger.returncode == 1, larger.stdout + larger.stderr
    assert "worse: REGRESSION" in larger.stdout and "compared exactly" in larger.stdout
    same = ireebench("compare", mlp, again, "--metric=max_bytes_used", "--reporter=json")
    assert same.returncode == 0, same.stdout + same.stderr
    (benchmark,) = same.json()["benchmarks"]
    assert benchmark["verdict"] == "no significant change" and benchmark["change"] == 0.0
    assert benchmark["utest_method"] == "equal values" and benchmark["time_unit"] == ""


def test_a_peak_an_earlier_benchmark_hid(compile_mlir, ireebench):
    """The allocator keeps one peak: a later, smaller benchmark has none, and says how."""
    module = compile_mlir("memory_two")
    result = ireebench(f"--module={module}", "--device=local-sync", "--benchmark_min_time=2x",
                       "--memory_statistics", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    big, small = _repetitions(result.json())
    assert big["max_bytes_used"] >= 256 * 256 * 4
    assert "max_bytes_used" not in small and "device_bytes_peak" not in small
    assert "total_allocated_bytes" in small
    assert ("ireebench: note: --memory_statistics: BM_small: its peak is not known: it stayed under the peak "
            "an earlier benchmark reached") in result.stderr
    alone = ireebench(f"--module={module}", "--device=local-sync", "--benchmark_min_time=2x",
                      "--memory_statistics", "--benchmark_format=json",
                      "--benchmark_filter=^BM_small/")
    (row,) = _repetitions(alone.json())
    assert 0 < row["max_bytes_used"] < big["max_bytes_used"]


def test_local_task_allocates_from_its_pools(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir(SMALL_MLP)}", "--device=local-task",
                       "--benchmark_min_time=1x", "--memory_statistics",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    (row,) = _repetitions(result.json())
    assert row["max_bytes_used"] == 0 and row["total_allocated_bytes"] == 0
    assert ("ireebench: note: --memory_statistics: the allocators of --device=local-task "
            "recorded no "
            "allocation") in result.stderr


def test_plain_runs_have_no_memory_fields(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir(SMALL_MLP)}", "--device=local-sync",
                       "--benchmark_min_time=1x", "--benchmark_format=json")
    (row,) = _repetitions(result.json())
    assert not {"max_bytes_used", "total_allocated_bytes", "device_bytes_peak",
                "device_time"} & set(row)


def test_needs_the_in_process_backend(compile_mlir, ireebench):
    line = one_error_line(ireebench(f"--module={compile_mlir(SMALL_MLP)}", "--backend=native",
                                    "--memory_statistics"))
    assert line.endswith("(capability 'in_process'); --backend=native does not have it")


def test_what_the_cumulative_statistics_tell():
    """An allocator's peak only rises: a window's peak is known when it rose, or when
    nothing was allocated in it."""


    start = HeapState(peak=1000, allocated=5000, freed=4800)  # holds 200
    assert window_peak(start, HeapState(1500, 9000, 8800)) == 1500  # rose: the new peak
    assert window_peak(start, HeapState(1000, 5000, 4900)) == 200  # only frees: the start
    assert window_peak(start, HeapState(1000, 5600, 5400)) is None  # under the old peak
