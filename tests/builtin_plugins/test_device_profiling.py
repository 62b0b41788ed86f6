"""--device_profiling_* and --print_device_statistics behave as in the native tool.

The in-process runtime cannot profile, so these flags are honoured by a
native pass after the measurement; what is checked here is what the user
gets: the bundle, the printed statistics, and the native tool's errors as
one line before anything is measured.
"""

import json

import pytest
from conftest import one_error_line

LOCAL = "--device=local-sync"
MATMUL = "two_dispatches_dispatch_0_matmul_128x128x128_f32"


def test_profiling_output_writes_the_bundle(compile_mlir, ireebench, native_tool, tmp_path):
    bundle = tmp_path / "run.ireeprof"
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", LOCAL,
                       "--benchmark_min_time=6x", "--device_profiling_mode=host-execution",
                       f"--device_profiling_output={bundle}", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert [b["name"] for b in result.json()["benchmarks"]] == \
        ["BM_two_dispatches/process_time/real_time"]  # no dispatch rows without the flag
    statistics = native_tool("iree-profile", "statistics", "--format=jsonl", bundle)
    assert statistics.returncode == 0, statistics.stderr
    rows = [json.loads(line) for line in statistics.stdout.splitlines()]
    calls = {r["function_name"]: r["sample_count"] for r in rows
             if r.get("row_type") == "host_execution_function"}
    assert calls[MATMUL] == 6  # the native run of the same 6 iterations


def test_print_device_statistics(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", LOCAL,
                       "--benchmark_min_time=3x", "--print_device_statistics",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert "IREE HAL device statistics:" in result.stderr
    assert f"host_execute {MATMUL}  count=3" in result.stderr
    result.json()  # stdout stays a valid report


# A function name with characters that Google Benchmark's POSIX regex must
# see escaped as `\.` but never as `\-` (Python's re.escape writes both).
DASHED = """
func.func @"add-one.v2"() -> tensor<64xf32> {
  %a = util.unfoldable_constant dense<1.0> : tensor<64xf32>
  %b = util.unfoldable_constant dense<2.0> : tensor<64xf32>
  %0 = arith.addf %a, %b : tensor<64xf32>
  return %0 : tensor<64xf32>
}
"""


def test_native_run_selects_names_with_regex_characters(compile_mlir, ireebench):
    """Without --function the native run is selected by an anchored --benchmark_filter."""
    result = ireebench(f"--module={compile_mlir(DASHED)}", LOCAL, "--benchmark_min_time=3x",
                       "--print_device_statistics", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert [b["name"] for b in result.json()["benchmarks"]] == \
        ["BM_add-one.v2/process_time/real_time"]
    assert "Could not compile benchmark re" not in result.stderr
    assert "host_execute add-one.v2_dispatch_0_elementwise_64_f32  count=3" in result.stderr


@pytest.mark.parametrize("flags, message", [
    (("--device_profiling_output=x.ireeprof",),
     "--device_profiling_output=x.ireeprof: requires --device_profiling_mode"),
    (("--device_profiling_mode=host-execution",),
     "--device_profiling_mode=host-execution: requires --device_profiling_output"),
    (("--print_device_statistics", "--device_profiling_mode=host-execution",
      "--device_profiling_output=x.ireeprof"),
     "--print_device_statistics cannot be combined with --device_profiling_output=x.ireeprof"),
])
def test_flag_combinations_the_native_tool_rejects(compile_mlir, ireebench, native_tool,
                                                   tmp_path, flags, message):
    module = compile_mlir("two_dispatches")
    native = native_tool("iree-benchmark-module", f"--module={module}", LOCAL,
                         "--benchmark_min_time=1x", *flags)
    assert native.returncode != 0
    result = ireebench(f"--module={module}", LOCAL, *flags, cwd=tmp_path)
    assert message in one_error_line(result)
    assert result.stdout == ""


@pytest.mark.parametrize("flags, native_says", [
    # dispatch-events are not implemented by local devices.
    (("--device_profiling_mode=dispatch-events",), "unsupported local profiling data families"),
    (("--device_profiling_mode=host-execution", "--device_profiling_filter_function=*matmul*"),
     "local profiling capture filters require"),
])
def test_unsupported_profiling_fails_before_measuring(compile_mlir, ireebench, native_tool,
                                                     tmp_path, flags, native_says):
    module = compile_mlir("two_dispatches")
    output = f"--device_profiling_output={tmp_path / 'x.ireeprof'}"
    native = native_tool("iree-benchmark-module", f"--module={module}", LOCAL,
                         "--benchmark_min_time=1x", *flags, output)
    assert native.returncode != 0 and native_says in native.stderr
    result = ireebench(f"--module={module}", LOCAL, *flags, output, "--benchmark_format=json")
    line = one_error_line(result)
    assert native_says in line and flags[0] in line
    assert result.stdout == ""  # nothing was measured or reported
