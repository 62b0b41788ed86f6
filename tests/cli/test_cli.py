"""CLI flags: native spellings, booleans, env vars, flag files, runtime flags, help."""

import re

from conftest import one_error_line


def test_help_groups_options(ireebench):
    result = ireebench("--help")
    assert result.returncode == 0
    for section in ("Module, function and inputs (iree-benchmark-module)",
                    "Measurement and output (Google Benchmark)", "ireebench", "Runtime flags"):
        assert section in result.stdout
    for flag in ("--batch_size", "--benchmark_min_time", "--benchmark_out_format",
                 "--reporter", "--plugin", "--enable_output_processing"):
        assert flag in result.stdout


def test_boolean_spellings(compile_mlir, ireebench):
    path = compile_mlir("simple")
    for spelling in ("--benchmark_list_tests", "--benchmark_list_tests=true",
                     "--benchmark_list_tests=1"):
        result = ireebench(f"--module={path}", "--device=local-sync", spelling)
        assert result.stdout.split() == ["BM_noargs/process_time/real_time",
                                         "BM_entry_wrapper/process_time/real_time"], spelling
    result = ireebench(f"--module={path}", "--device=local-sync",
                       "--benchmark_list_tests=false", "--benchmark_min_time=1x")
    assert "Iterations" in result.stdout


def test_benchmark_env_vars(compile_mlir, ireebench, monkeypatch):
    monkeypatch.setenv("BENCHMARK_MIN_TIME", "7x")
    monkeypatch.setenv("BENCHMARK_FILTER", "noargs")
    result = ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("BM_")]
    assert len(rows) == 1 and re.search(r"\s7 items_per_second", rows[0])


def test_flagfile(compile_mlir, ireebench, tmp_path):
    flags = tmp_path / "flags.txt"
    flags.write_text(f"# a comment\n--module={compile_mlir('simple')}\n--device=local-sync\n"
                     "--benchmark_min_time=2x\n")
    result = ireebench(f"--flagfile={flags}", "--benchmark_filter=noargs")
    assert result.returncode == 0, result.stderr
    assert "BM_noargs/process_time/real_time" in result.stdout


def test_runtime_flags_pass_through(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('simple')}", "--device=local-task",
                       "--task_topology_group_count=1", "--benchmark_min_time=2x")
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr  # a flag the runtime knows: no warning
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", "--strict_flags=true",
                                    "--no_such_flag=1"))
    assert "--no_such_flag=1" in line


def test_print_statistics(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync",
                       "--benchmark_min_time=2x", "--print_statistics")
    assert result.returncode == 0, result.stderr
    assert "Device: local-sync" in result.stderr
    assert "DEVICE_LOCAL:" in result.stderr


def test_module_from_stdin(compile_mlir, ireebench):
    data = compile_mlir("stateful").read_bytes()
    result = ireebench("--module=-", "--device=local-sync", "--benchmark_min_time=3x",
                       "--enable_output_processing", input=data)
    assert result.returncode == 0, result.stderr
    assert "result[0]: i32=3" in result.stdout


def test_parameters(compile_mlir, ireebench, tmp_path):
    import numpy as np
    from iree.runtime import save_archive_file

    archive = tmp_path / "weights.irpa"
    save_archive_file({"weight": np.array([1, 2, 3, 4], dtype=np.float32)}, str(archive))
    result = ireebench(f"--module={compile_mlir('params')}", "--device=local-sync",
                       f"--parameters=model={archive}", "--benchmark_min_time=2x",
                       "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    assert "4xf32=2 4 6 8" in result.stdout


def test_no_module(ireebench):
    assert "--module" in one_error_line(ireebench("--device=local-sync"))


def test_console_script():
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    script = shutil.which("ireebench") or str(Path(sys.executable).parent / "ireebench")
    result = subprocess.run([script, "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "--batch_size" in result.stdout
