"""Output processing: printing, --output files and --expected_output, as the native tool."""

import numpy as np

MIXED = ["--function=mixed", "--input=2x3xf32=1 2.5 3 4 1e10 0.1", "--input=2"]


def _args(compile_mlir):
    return [f"--module={compile_mlir('simple')}", "--device=local-sync", *MIXED,
            "--benchmark_min_time=2x", "--enable_output_processing"]


def _results(stdout):
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("result[0]"))
    return lines[start:]


def test_printed_like_the_native_tool(compile_mlir, ireebench, native_tool):
    ours = ireebench(*_args(compile_mlir))
    native = native_tool("iree-benchmark-module", *_args(compile_mlir))
    assert ours.returncode == native.returncode == 0, ours.stderr
    assert _results(ours.stdout) == _results(native.stdout)
    assert _results(ours.stdout) == ["result[0]: hal.buffer_view",
                                     "2x3xf32=[2 5 6][8 2E+10 0.2]", "result[1]: i32=7"]


def test_elision(compile_mlir, ireebench, native_tool):
    args = [*_args(compile_mlir), "--output_max_element_count=4"]
    ours, native = ireebench(*args), native_tool("iree-benchmark-module", *args)
    assert _results(ours.stdout)[1] == "2x3xf32=[2 5 6][8...]" == _results(native.stdout)[1]


def test_output_files(compile_mlir, ireebench, tmp_path):
    npy, raw = tmp_path / "out.npy", tmp_path / "out.bin"
    result = ireebench(*_args(compile_mlir), f"--output=@{npy}", f"--output=+{npy}")
    assert result.returncode == 0, result.stderr
    with open(npy, "rb") as handle:
        first, second = np.load(handle), np.load(handle)
    assert first.tolist() == [[2, 5, 6], [8, 2e10, np.float32(0.2)]]
    assert second.dtype == np.int32 and second.shape == () and int(second) == 7
    result = ireebench(*_args(compile_mlir), f"--output=@{raw}", "--output=-")
    assert result.returncode == 0, result.stderr
    assert np.fromfile(raw, dtype=np.float32).tolist()[:2] == [2, 5]
    assert "i32=7" in result.stdout


def test_expected_output_match(compile_mlir, ireebench):
    result = ireebench(*_args(compile_mlir), "--expected_output=2x3xf32=2 5 6 8 2e10 0.2",
                       "--expected_output=7")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[SUCCESS]" in result.stdout


def test_expected_output_mismatch(compile_mlir, ireebench):
    result = ireebench(*_args(compile_mlir), "--expected_output=2x3xf32=2 5 6 8 2e10 0.3",
                       "--expected_output=(ignored)")
    assert result.returncode == 1
    failed = [line for line in result.stdout.splitlines() if line.startswith("[FAILED]")]
    assert failed[0].startswith("[FAILED] result[0]: element at index 5 (0.2) does not match "
                                "the expected (0.3)")
    assert "Traceback" not in result.stderr



def test_expected_output_ignored_skips_a_tensor_result(compile_mlir, ireebench):
    result = ireebench(*_args(compile_mlir), "--expected_output=(ignored)", "--expected_output=7")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[SUCCESS]" in result.stdout


def test_output_processing_needs_one_function(compile_mlir, ireebench):
    from conftest import one_error_line

    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync",
                                    "--enable_output_processing"))
    assert "--enable_output_processing" in line and "--function" in line


def test_output_files_match_the_native_tool_byte_for_byte(compile_mlir, ireebench, native_tool,
                                                          tmp_path):
    """bf16 raw bytes, an i1 and a primitive in .npy files, an empty value (a null
    reference) as a zero-length i8 array: the files the native tool writes."""
    module = f"--module={compile_mlir('output_processing')}"
    cases = [
        (["--function=halfs"], ["", "@{}/bf16.bin", "@{}/i1.npy", "@{}/f32.npy"]),
        (["--function=pass_ref", "--input=4xf32=1", "--input=(null)"],
         ["@{}/pair.npy", "+{}/pair.npy"]),
    ]
    for flags, specs in cases:
        written = {}
        for tool in ("ours", "native"):
            folder = tmp_path / tool
            folder.mkdir(exist_ok=True)
            args = [module, "--device=local-sync", "--benchmark_min_time=1x", *flags,
                    "--enable_output_processing",
                    *[f"--output={spec.format(folder)}" for spec in specs]]
            result = (ireebench(*args) if tool == "ours"
                      else native_tool("iree-benchmark-module", *args))
            assert result.returncode == 0, result.stderr
            written[tool] = {path.name: path.read_bytes() for path in folder.iterdir()}
        assert written["ours"] == written["native"]
        assert written["ours"]
    with open(tmp_path / "ours" / "pair.npy", "rb") as handle:
        assert np.load(handle).tolist() == [2, 2, 2, 2]
        null = np.load(handle)
    assert null.dtype == np.int8 and null.shape == (0,)


def test_bf16_cannot_go_to_a_npy_file(compile_mlir, ireebench, native_tool, tmp_path):
    """numpy has no bfloat16: the native tool fails with `unsupported data encoding`."""
    args = [f"--module={compile_mlir('output_processing')}", "--device=local-sync",
            "--benchmark_min_time=1x", "--function=halfs", "--enable_output_processing",
            "--output=", f"--output=@{tmp_path}/bf16.npy", "--output=", "--output="]
    ours, native = ireebench(*args), native_tool("iree-benchmark-module", *args)
    assert ours.returncode == native.returncode == 1
    assert "unsupported data encoding" in native.stderr
    last = ours.stderr.splitlines()[-1]
    assert last.startswith(f"ireebench: error: --output=@{tmp_path}/bf16.npy: bf16 cannot be "
                           "written to a .npy file (unsupported data encoding)")
    assert "Traceback" not in ours.stderr
