"""Existing consumers read ireebench's reports unchanged.

- Google Benchmark's ``tools/compare.py`` compares ireebench's JSON with the
  native tool's (3 repetitions). compare.py is not on PyPI (the
  ``google-benchmark`` wheel ships only the Python bindings); it comes with
  Debian's ``libbenchmark-tools`` (/usr/share/benchmark/compare.py) or a
  checkout of google/benchmark: set ``IREEBENCH_GBENCH_TOOLS`` to its
  ``tools`` folder. The test is skipped when neither is there, or when
  numpy/scipy (which compare.py imports) are missing.
- ``iree.runtime.benchmark_module`` runs ireebench in place of the native
  executable and parses its report.
- ``ireebench.run`` returns numbers, not text.
"""

import json
import re
import stat
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_compare_py, run_compare_py

ADD = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

NAMES = ["BM_first/process_time/real_time", "BM_second/process_time/real_time"]


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir("two_functions")


def test_compare_py_accepts_ireebench_and_native_json(module, ireebench, native_tool, tmp_path):
    require_compare_py()  # before any run: skipped early without it
    flags = [f"--module={module}", "--device=local-sync", "--benchmark_min_time=3x",
             "--benchmark_repetitions=3", "--benchmark_out_format=json"]
    native = native_tool("iree-benchmark-module", *flags,
                         f"--benchmark_out={tmp_path / 'native.json'}")
    ours = ireebench(*flags, f"--benchmark_out={tmp_path / 'ireebench.json'}")
    assert native.returncode == 0 and ours.returncode == 0, ours.stderr
    dump = tmp_path / "diff.json"
    # Both orders: each file must be readable as the baseline and as the contender.
    for first, second in (("native", "ireebench"), ("ireebench", "native")):
        proc = run_compare_py(tmp_path / f"{first}.json", tmp_path / f"{second}.json", dump)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert "Traceback" not in proc.stderr
        for name in NAMES:
            assert re.search(rf"^{re.escape(name)}_mean\s", proc.stdout, re.MULTILINE), proc.stdout
            assert f"{name}_pvalue" in proc.stdout  # the U test paired all 3 repetitions
        diff = json.loads(dump.read_text())
        compared = {entry["name"] for entry in diff}
        assert {f"{name}_{agg}" for name in NAMES for agg in ("mean", "median", "stddev")} \
            <= compared
        assert all(len(entry["measurements"]) >= 1 for entry in diff)


@pytest.fixture()
def ireebench_executable(tmp_path) -> Path:
    """An executable that runs ``python -m ireebench`` with its arguments."""
    wrapper = tmp_path / "ireebench-wrapper"
    wrapper.write_text("#!/bin/sh\n"
                       "IREEBENCH_DISABLE_PLUGIN_AUTOLOAD=1 "
                       f'exec "{sys.executable}" -m ireebench "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def test_iree_runtime_benchmark_module_reads_ireebench(module, ireebench_executable):
    from iree.runtime.benchmark import benchmark_module

    results = benchmark_module(module, device="local-sync", benchmark_min_time="3x",
                               benchmark_repetitions=2, executable=ireebench_executable)
    names = [r.benchmark_name for r in results]
    assert names == [f"{NAMES[0]}", NAMES[0]] + [f"{NAMES[0]}_{a}" for a in
                                                   ("mean", "median", "stddev", "cv")] + \
        [NAMES[1], NAMES[1]] + [f"{NAMES[1]}_{a}" for a in ("mean", "median", "stddev", "cv")]
    for result in results:
        value, unit = result.time.split()
        assert float(value) >= 0
        assert unit == ("%" if result.benchmark_name.endswith("_cv") else "ms")
        assert result.iterations == ("2" if result.report["run_type"] == "aggregate" else "3")
        assert result.report["items_per_second"] > 0


def test_iree_runtime_benchmark_module_stdin_function_and_inputs(
        compile_mlir, ireebench_executable):
    """A VmModule goes through --module=- (stdin) with --function and --input."""
    import iree.runtime as rt
    from iree.runtime.benchmark import benchmark_module

    data = Path(compile_mlir(ADD)).read_bytes()
    vm_module = rt.VmModule.copy_buffer(rt.VmInstance(), data)
    inputs = [np.arange(4, dtype=np.float32), "4xf32=1"]
    results = benchmark_module(vm_module, entry_function="add", inputs=inputs,
                               device="local-sync", benchmark_min_time="2x",
                               executable=ireebench_executable)
    assert [r.benchmark_name for r in results] == ["BM_add/process_time/real_time"]
    assert results[0].iterations == "2"


def test_iree_runtime_benchmark_module_reports_failures(ireebench_executable, tmp_path):
    from iree.runtime.benchmark import BenchmarkToolError, benchmark_module

    with pytest.raises(BenchmarkToolError, match="ireebench: error: NOT_FOUND; --module="):
        benchmark_module(tmp_path / "missing.vmfb", device="local-sync",
                         executable=ireebench_executable)


def test_python_api_returns_numbers(module, monkeypatch):
    import ireebench
    from ireebench.results import Run

    monkeypatch.setenv("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = ireebench.run([f"--module={module}", "--device=local-sync",
                            "--benchmark_min_time=3x", "--benchmark_repetitions=2"])
    assert result.exit_code == 0
    assert all(isinstance(run, Run) for run in result.runs)
    assert [r.benchmark_name for r in result.runs][:2] == [NAMES[0], NAMES[0]]
    first = result.by_name(f"{NAMES[0]}_mean")
    assert isinstance(first.real_time, float) and first.real_time > 0
    assert first.iterations == 2 and first.time_unit == "ms"
    cv = result.by_name(f"{NAMES[1]}_cv")
    assert cv.aggregate_unit == "percentage" and isinstance(cv.real_time, float)
    rows = [r.to_dict() for r in result.runs]
    assert rows[0]["iterations"] == 3 and isinstance(rows[0]["counters"]["items_per_second"],
                                                     float)
    assert result.context.extra["iree_devices"] == ["local-sync"]
    assert result.context.extra["iree_module"] == str(module)
