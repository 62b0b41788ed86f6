"""ireebench and the native iree-benchmark-module side by side (issue 10).

Each case runs both tools on the same module and flags and compares what a
user's script or lit test reads: the output-processing lines on stdout, the
exit status, and for errors the native phrase (ireebench says it in one line
that also names the flag and value, before anything is measured; the native
tool says it after measuring, with its source location).
"""

import io
import re

import ireebench as api
import numpy as np
import pytest
from conftest import one_error_line

NATIVE = "iree-benchmark-module"
LOCAL = "--device=local-sync"
ONCE = "--benchmark_min_time=1x"
_TABLE = re.compile(r"^(-{10,}|Benchmark\s|BM_)")


def processing_lines(stdout: str) -> list[str]:
    """stdout without Google Benchmark's console table: the output-processing lines."""
    return [line for line in stdout.splitlines() if not _TABLE.match(line)]


@pytest.fixture(scope="module")
def both(ireebench, native_tool):
    """both(*args) -> (ours, native), the same flags through each tool."""

    def run(*args):
        args = [LOCAL, ONCE, *map(str, args)]
        return ireebench(*args), native_tool(NATIVE, *args)

    return run


@pytest.fixture(scope="module")
def outputs(compile_mlir):
    return f"--module={compile_mlir('output_processing')}"


@pytest.fixture(scope="module")
def simple(compile_mlir):
    return f"--module={compile_mlir('simple')}"


def assert_same(ours, native) -> list[str]:
    """Same exit status and output-processing lines; returns the lines."""
    assert ours.returncode == native.returncode, (ours.stderr, native.stderr)
    assert processing_lines(ours.stdout) == processing_lines(native.stdout), ours.stderr
    return processing_lines(ours.stdout)


# --- comparison: flags and report lines --------------------------------------

ADD = ["--function=add", "--input=4xf32=1", "--input=4xf32=1", "--enable_output_processing"]

COMPARISONS = {
    "exact mode, value mismatch": (
        ["--expected_output=4xf32=2.00001", "--equality_mode=exact"], 1,
        ("[FAILED] result[0]: element at index 0 (2) does not match the expected (2.00001); "
        "expected that the view is equal to contents of a view of 4xf32")),
    "approximate within the default atol and rtol": (
        ["--expected_output=4xf32=2.00001"], 0,
        "[SUCCESS] all function outputs matched their expected values."),
    "beyond the default f32 threshold": (
        ["--expected_output=4xf32=2.001"], 1,
        ("[FAILED] result[0]: element at index 0 (2) does not match the expected (2.001); "
        "expected that the view is equal to contents of a view of 4xf32")),
    "a larger --expected_f32_threshold": (
        ["--expected_output=4xf32=2.001", "--expected_f32_threshold=0.01"], 0,
        "[SUCCESS] all function outputs matched their expected values."),
    "a larger --expected_rtol": (
        ["--expected_output=4xf32=2.001", "--expected_rtol=0.001"], 0,
        "[SUCCESS] all function outputs matched their expected values."),
    "quoted mode, as --help writes it": (
        ["--expected_output=4xf32=2.00001", '--equality_mode="exact"'], 1,
        ("[FAILED] result[0]: element at index 0 (2) does not match the expected (2.00001); "
        "expected that the view is equal to contents of a view of 4xf32")),
    "element type mismatch": (
        ["--expected_output=4xi32=2"], 1,
        ("[FAILED] result[0]: metadata is 4xf32; expected that the view matches 4xi32; "
        "expected that the view is equal to contents of a view of 4xi32")),
    "shape mismatch": (
        ["--expected_output=2x2xf32=2"], 1,
        ("[FAILED] result[0]: metadata is 4xf32; expected that the view matches 2x2xf32; "
        "expected that the view is equal to contents of a view of 2x2xf32")),
    "(ignored)": (["--expected_output=(ignored)"], 0,
                  "[SUCCESS] all function outputs matched their expected values."),
}


@pytest.mark.parametrize("case", list(COMPARISONS))
def test_comparison_lines_match_the_native_tool(both, simple, case):
    flags, status, first_line = COMPARISONS[case]
    ours, native = both(simple, *ADD, *flags)
    lines = assert_same(ours, native)
    assert ours.returncode == status
    assert lines[0] == first_line
    if status:  # followed by the expected and actual views, as the native tool prints them
        assert lines[1] == "  expected:" and lines[3] == "  actual:"


def test_the_issue_example_a_0d_result_against_4xf32(both, outputs):
    ours, native = both(outputs, "--function=special", "--enable_output_processing",
                        "--expected_output=(ignored)", "--expected_output=4xf32=2.5")
    lines = assert_same(ours, native)
    assert lines == [
        ("[FAILED] result[1]: metadata is f32; expected that the view matches 4xf32; "
        "expected that the view is equal to contents of a view of 4xf32"),
        "  expected:", "4xf32=2.5 2.5 2.5 2.5", "  actual:", "f32=2.5"]


@pytest.mark.parametrize("expected, status", [
    ("4xf32=nan,inf,-inf,1", 0),  # NaN equals NaN, each infinity itself
    ("4xf32=nan,-inf,-inf,1", 1),
    ("4xf32=1,inf,-inf,1", 1),
    ("4xf32=nan,inf,-inf,inf", 1),
])
def test_special_values(both, outputs, expected, status):
    ours, native = both(outputs, "--function=special", "--enable_output_processing",
                        f"--expected_output={expected}", "--expected_output=(ignored)")
    assert_same(ours, native)
    assert ours.returncode == status


def test_f16_bf16_and_i1_print_and_compare_as_natively(both, outputs):
    ours, native = both(outputs, "--function=halfs", "--enable_output_processing")
    assert assert_same(ours, native) == [
        "result[0]: hal.buffer_view", "2xf16=1.5 2", "result[1]: hal.buffer_view",
        "2xbf16=1.5 2", "result[2]: hal.buffer_view", "2xi1=01 00", "result[3]: f32=1e+10"]
    flags = ["--function=halfs", "--enable_output_processing", "--expected_output=2xf16=1.5,2.01",
             "--expected_output=2xbf16=1.5,2.007", "--expected_output=2xi1=01,01"]
    ours, native = both(outputs, *flags, "--expected_output=(ignored)")
    assert ours.returncode == native.returncode == 1
    # result[3] is a primitive: see test_primitive_results_are_compared_by_value.
    tensor_lines = processing_lines(ours.stdout)
    assert tensor_lines == processing_lines(native.stdout)[: len(tensor_lines)]
    assert [line for line in tensor_lines if line.startswith("[FAILED]")] == [
        ("[FAILED] result[0]: element at index 1 (2) does not match the expected (2.00977); "
        "expected that the view is equal to contents of a view of 2xf16"),
        ("[FAILED] result[2]: element at index 1 (00) does not match the expected (01); "
        "expected that the view is equal to contents of a view of 2xi1")]


def test_expected_list_of_the_wrong_length(both, simple):
    ours, native = both(simple, "--function=mixed", "--input=2x3xf32=1", "--input=2",
                        "--enable_output_processing", "--expected_output=2x3xf32=2")
    assert assert_same(ours, native) == ["[FAILED] expected 1 list elements but 2 provided"]


def test_primitive_results_are_compared_by_value(both, simple):
    """A deliberate difference: the native tool reports every primitive result as
    `variant types mismatch; expected i32 but got i32` (an inverted condition in
    comparison.cc); ireebench compares the values, with the report lines of
    comparison.cc's iree_tooling_compare_values."""
    args = [simple, "--function=scalar", "--input=2", "--enable_output_processing"]
    ours, native = both(*args, "--expected_output=4")
    assert ours.returncode == 0 and "[SUCCESS]" in ours.stdout
    assert native.returncode == 1
    assert "[FAILED] result[0]: variant types mismatch; expected i32 but got i32" in native.stdout
    ours = both(*args, "--expected_output=5")[0]
    assert ours.returncode == 1
    assert processing_lines(ours.stdout) == [
        "[FAILED] result[0]: i32 values differ", "  expected: 5", "  actual: 4"]


def test_expected_outputs_take_precedence_over_output(both, simple, tmp_path):
    """process_results.c: with --expected_output, --output is not used."""
    target = tmp_path / "never.npy"
    ours, native = both(simple, *ADD, "--expected_output=4xf32=2", f"--output=@{target}")
    assert assert_same(ours, native) == [
        "[SUCCESS] all function outputs matched their expected values."]
    assert not target.exists()


def test_comparison_flags_default_as_the_native_help_prints_them(ireebench, native_tool):
    native_help = native_tool(NATIVE, "--help").stdout
    ours_help = " ".join(ireebench("--help").stdout.split())
    for flag in ("expected_f16_threshold", "expected_f32_threshold", "expected_f64_threshold",
                 "expected_bf16_threshold", "expected_rtol", "equality_mode"):
        default = re.search(rf"^--{flag}=(\S+)$", native_help, re.MULTILINE).group(1).strip('"')
        assert re.search(rf"--{flag} \S+ .*?\[default: {re.escape(default)}\]", ours_help), flag


@pytest.mark.parametrize("flag", ["--expected_f32_threshold=abc", "--expected_bf16_threshold=-1",
                                  "--expected_rtol=nan", "--equality_mode=fuzzy"])
def test_bad_comparison_flag_values_are_one_line(ireebench, simple, flag):
    """A deliberate difference: the native tool reads `abc` as 0 and an unknown mode as exact."""
    result = ireebench(simple, LOCAL, *ADD, "--expected_output=4xf32=2", flag)
    line = one_error_line(result)
    assert line.startswith(f"ireebench: error: {flag}: expected")
    assert result.stdout == ""


def test_native_backend_forwards_the_comparison_flags(ireebench, simple):
    result = ireebench(simple, LOCAL, ONCE, *ADD, "--backend=native",
                       "--expected_output=4xf32=2.00001", "--equality_mode=exact")
    assert result.returncode == 1
    assert processing_lines(result.stdout)[0].startswith(
        "[FAILED] result[0]: element at index 0 (2) does not match the expected (2.00001)")
    result = ireebench(simple, LOCAL, ONCE, *ADD, "--backend=native",
                       "--expected_output=4xf32=2.001", "--expected_rtol=0.001")
    assert result.returncode == 0, result.stdout + result.stderr


# --- --output ----------------------------------------------------------------

MIXED = ["--function=mixed", "--input=2x3xf32=1", "--input=2", "--enable_output_processing"]


@pytest.mark.parametrize("specs", [["-"], [""], ["-", "-", "-"]], ids=["one", "empty", "three"])
def test_output_count_differs_from_the_results(both, simple, specs):
    ours, native = both(simple, *MIXED, *[f"--output={spec}" for spec in specs])
    phrase = (f"{len(specs)} outputs specified but the provided variant list only has "
              "2 elements")
    assert phrase in one_error_line(ours)
    assert ours.stdout == ""  # checked before measuring
    assert native.returncode == ours.returncode == 1
    assert phrase in native.stderr


def test_output_count_that_fits(both, simple):
    ours, native = both(simple, *MIXED, "--output=-", "--output=")
    assert assert_same(ours, native) == ["hal.buffer_view", "2x3xf32=[2 2 2][2 2 2]"]


# --- .npy typing and the round trip ------------------------------------------


def test_round_trip_through_npy_files(both, ireebench, native_tool, outputs, tmp_path):
    """--output=@x.npy --output=+x.npy ... then --input=*x.npy, as the native tool."""
    files = {"ours": tmp_path / "ours.npy", "native": tmp_path / "native.npy"}
    for tool, path in files.items():
        args = [outputs, LOCAL, ONCE, "--function=three", "--enable_output_processing",
                f"--output=@{path}", f"--output=+{path}", f"--output=+{path}"]
        result = ireebench(*args) if tool == "ours" else native_tool(NATIVE, *args)
        assert result.returncode == 0, result.stderr
        assert processing_lines(result.stdout) == []
    ours_file, native_file = files["ours"], files["native"]
    assert ours_file.read_bytes() == native_file.read_bytes()
    for path in (ours_file, native_file):
        ours, native = both(outputs, "--function=echo", "--enable_output_processing",
                            f"--input=*{path}")
        assert assert_same(ours, native) == [
            "result[0]: hal.buffer_view", "2xsi32=11 12", "result[1]: hal.buffer_view",
            "f32=2.5", "result[2]: hal.buffer_view", "si32=7"]


def test_npy_integers_carry_signedness(both, simple, tmp_path):
    path = tmp_path / "ints.npy"
    with open(path, "wb") as handle:
        np.save(handle, np.array([[11, 12], [13, 14]], dtype=np.int32))
        np.save(handle, np.array([1, 2, 250], dtype=np.uint8))
    ours, native = both(simple, "--function=ints", "--enable_output_processing",
                        f"--input=*{path}")
    assert assert_same(ours, native) == [
        "result[0]: hal.buffer_view", "2x2xsi32=[11 12][13 14]",
        "result[1]: hal.buffer_view", "3xui8=1 2 250"]
    # ... and an si32 result against an i32 expectation is a metadata mismatch
    ours, native = both(simple, "--function=ints", "--enable_output_processing",
                        f"--input=*{path}", "--expected_output=2x2xi32=11 12 13 14",
                        "--expected_output=(ignored)")
    assert assert_same(ours, native)[0] == (
        "[FAILED] result[0]: metadata is 2x2xsi32; expected that the view matches 2x2xi32; "
        "expected that the view is equal to contents of a view of 2x2xi32")


@pytest.mark.parametrize("form", ["npy", "text"])
def test_0d_tensors(both, ireebench, outputs, tmp_path, form):
    source = tmp_path / "scalar.npy"
    np.save(source, np.float32(2.5))
    value = f"@{source}" if form == "npy" else "f32=2.5"
    written = {}
    for tool, result in zip(("ours", "native"), both(
            outputs, "--function=zero_d", "--enable_output_processing", f"--input={value}")):
        written[tool] = processing_lines(result.stdout)
        assert result.returncode == 0, result.stderr
    assert written["ours"] == written["native"] == ["result[0]: hal.buffer_view", "f32=5"]
    ours, native = both(outputs, "--function=zero_d", "--enable_output_processing",
                        f"--input={value}", "--expected_output=f32=5")
    assert assert_same(ours, native) == [
        "[SUCCESS] all function outputs matched their expected values."]
    target = tmp_path / "out.npy"
    result = ireebench(outputs, LOCAL, ONCE, "--function=zero_d", "--enable_output_processing",
                       f"--input={value}", f"--output=@{target}")
    assert result.returncode == 0, result.stderr
    saved = np.load(target)
    assert saved.shape == () and saved.dtype == np.float32 and float(saved) == 5.0


# --- (null) references -------------------------------------------------------

PASS_REF = ["--function=pass_ref", "--input=4xf32=1", "--input=(null)",
            "--enable_output_processing"]


def test_null_reference_round_trip(both, outputs):
    ours, native = both(outputs, *PASS_REF)
    assert assert_same(ours, native) == [
        "result[0]: hal.buffer_view", "4xf32=2 2 2 2", "result[1]: (null)"]
    assert "Traceback" not in ours.stderr and "leaked" not in ours.stderr


@pytest.mark.parametrize("expected, line", [
    ("(null)", "[SUCCESS] all function outputs matched their expected values."),
    ("4xf32=1", ("[FAILED] result[1]: variant types mismatch; expected hal.buffer_view but "
                "got empty")),
])
def test_null_results_compare_as_natively(both, outputs, expected, line):
    ours, native = both(outputs, *PASS_REF, "--expected_output=4xf32=2",
                        f"--expected_output={expected}")
    assert assert_same(ours, native) == [line]


def test_null_reference_in_repeated_invocations(ireebench, outputs):
    result = ireebench(outputs, LOCAL, "--benchmark_min_time=20x",
                       "--benchmark_repetitions=2", *PASS_REF)
    assert result.returncode == 0, result.stderr
    assert "result[1]: (null)" in result.stdout


def test_null_reference_through_the_python_api(compile_mlir):
    out, err = io.StringIO(), io.StringIO()
    result = api.run([f"--module={compile_mlir('output_processing')}", LOCAL, ONCE,
                            *PASS_REF], stdout=out, stderr=err)
    assert result.exit_code == 0, err.getvalue()
    assert "result[1]: (null)" in out.getvalue()


# --- --print_statistics ------------------------------------------------------


def _statistics_block(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Device: "))
    return [re.sub(r" +\d+B", " NB", line) for line in lines[start:]]


def test_print_statistics_block_matches_the_native_tool(both, simple):
    ours, native = both(simple, "--print_statistics", "--device=local-task://")
    assert ours.returncode == native.returncode == 0, ours.stderr
    block = _statistics_block(ours.stderr)
    assert block == _statistics_block(native.stderr)
    assert block[:4] == [
        "Device: local-sync", "[[ iree_hal_allocator_t memory statistics ]]",
        "  HOST_LOCAL: NB peak / NB allocated / NB freed / NB live",
        "DEVICE_LOCAL: NB peak / NB allocated / NB freed / NB live"]
    assert block[4:7] == ["", "Device: local-task", "[[ iree_hal_allocator_t memory statistics ]]"]


# --- error wording -----------------------------------------------------------


@pytest.mark.parametrize("flags, phrase", [
    (["--batch_size=0"], "batch size and concurrency must be positive"),
    (["--batch_concurrency=-1"], "batch size and concurrency must be positive"),
    (["--dispatch_statistics", "--print_device_statistics"],
     "--dispatch_statistics cannot be combined with device profiling or capture flags"),
    (["--dispatch_statistics", "--device_profiling_mode=host-execution",
      "--device_profiling_output=p.ireeprof"],
     "--dispatch_statistics cannot be combined with device profiling or capture flags"),
    (["--dispatch_statistics", "--device_replay_output=r.ireereplay"],
     "--dispatch_statistics cannot be combined with --device_replay_output"),
])
def test_errors_carry_the_native_phrase(both, simple, tmp_path, flags, phrase):
    flags = [flag.replace("=p.", f"={tmp_path}/p.").replace("=r.", f"={tmp_path}/r.")
             for flag in flags]
    ours, native = both(simple, *flags)
    assert phrase in one_error_line(ours)
    assert native.returncode == ours.returncode == 1
    assert phrase in native.stderr
    assert list(tmp_path.iterdir()) == []


def test_dispatch_statistics_needs_hal_devices(both, compile_mlir):
    phrase = "--dispatch_statistics requires a module that uses HAL devices"
    ours, native = both(f"--module={compile_mlir('stateful')}", "--dispatch_statistics")
    assert phrase in one_error_line(ours)
    assert native.returncode == 1 and phrase in native.stderr


# --- nothing to benchmark without inputs -------------------------------------


def test_every_function_needs_inputs(both, ireebench, compile_mlir):
    module = f"--module={compile_mlir('inputs_only')}"
    ours, native = both(module)
    assert ours.returncode == native.returncode == 0
    failed = "Failed to match any benchmarks against regex: ."
    assert failed in native.stderr.splitlines()
    lines = ours.stderr.splitlines()
    assert lines[0] == failed and len(lines) == 2
    assert lines[1].startswith("ireebench: hint: ")
    assert ("sync func @forward(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> "
            "(%output0: tensor<4xf32>)") in lines[1]
    assert "sync func @scale(%input0: tensor<2x3xf32>, %input1: f32)" in lines[1]
    suggestion = lines[1].split("run one with ", 1)[1]
    assert suggestion == "--function=forward --input=4xf32=0 --input=4xf32=0"
    result = ireebench(module, LOCAL, ONCE, *suggestion.split())
    assert result.returncode == 0 and "BM_forward/process_time/real_time" in result.stdout


def test_no_hint_when_a_filter_matches_nothing(ireebench, compile_mlir):
    result = ireebench(f"--module={compile_mlir('inputs_only')}", LOCAL,
                       "--benchmark_filter=nothing")
    assert result.returncode == 0
    assert result.stderr.splitlines() == ["Failed to match any benchmarks against regex: nothing"]


# --- results that are not tensors --------------------------------------------


def test_list_and_buffer_results(both, ireebench, native_tool, outputs, tmp_path):
    ours, native = both(outputs, "--function=list", "--enable_output_processing")
    assert assert_same(ours, native) == [
        "result[0]: vm.list", "child_list[0]: i32=7", "child_list[1]: hal.buffer_view",
        "2xf32=1 2", ""]
    ours, native = both(outputs, "--function=buffer", "--enable_output_processing")
    assert assert_same(ours, native) == ["result[0]: hal.buffer", "(no printer)"]
    ours, native = both(outputs, "--function=list", "--enable_output_processing",
                        "--expected_output=2xf32=1")
    assert assert_same(ours, native) == [
        "[FAILED] result[0]: variant types mismatch; expected hal.buffer_view but got vm.list"]
    # a raw buffer is written as an i8 array of its bytes
    args = [outputs, LOCAL, ONCE, "--function=buffer", "--enable_output_processing"]
    assert ireebench(*args, f"--output=@{tmp_path}/ours.npy").returncode == 0
    assert native_tool(NATIVE, *args, f"--output=@{tmp_path}/native.npy").returncode == 0
    assert (tmp_path / "ours.npy").read_bytes() == (tmp_path / "native.npy").read_bytes()
    assert np.load(tmp_path / "ours.npy").view(np.float32).tolist() == [1.0, 2.0]


# --- deliberate differences (docs/usage.md) ----------------------------------


def test_an_unknown_flag_is_ignored_with_a_warning_as_the_native_tool_ignores_it(both, simple):
    ours, native = both(simple, "--no_such_flag=1")
    assert native.returncode == 0 and ours.returncode == 0, ours.stderr
    warnings = [line for line in ours.stderr.splitlines() if line.startswith("ireebench:")]
    assert len(warnings) == 1 and warnings[0].startswith("ireebench: warning: --no_such_flag=1")
    ours, _ = both(simple, "--strict_flags=true", "--no_such_flag=1")
    assert "--no_such_flag=1" in one_error_line(ours)


def test_a_run_refused_for_its_inputs_writes_no_capture(ireebench, native_tool, simple,
                                                        tmp_path):
    """The native tool measures (an error row) and writes a capture of the failing run."""
    ours_capture, native_capture = tmp_path / "ours.ireereplay", tmp_path / "native.ireereplay"
    args = [simple, LOCAL, ONCE, "--function=add", "--input=5xf32=1", "--input=4xf32=1"]
    ours = ireebench(*args, f"--device_replay_output={ours_capture}")
    native = native_tool(NATIVE, *args, f"--device_replay_output={native_capture}")
    assert "--input=5xf32=1: argument 0 of @add is tensor<4xf32>, got 5xf32" in \
        one_error_line(ours)
    assert not ours_capture.exists()
    assert native.returncode == 1 and "shape dimension 0 mismatch" in native.stderr
    assert native_capture.exists()
