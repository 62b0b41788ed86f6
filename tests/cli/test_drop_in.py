"""Drop-in for the real clients of iree-benchmark-module (issue 18).

IREE's Python wrapper ``iree.runtime.benchmark_module`` (run here for real,
pointed at ireebench), wave and sharktank read the tool's stderr, pass 0-d
numpy arrays, unknown flags and stray arguments: ireebench answers them as
the native tool does. Also the loader flags (``--module_mode``,
``--parameter_mode``) honoured in process, and the reliability cases that
come with them: an archive truncated during the run, a TMPDIR without room,
flag files that never end.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import uuid

import numpy as np
import pytest
from conftest import _env, ireebench_lines, one_error_line, slow_function

FAST = ["--device=local-sync", "--benchmark_min_time=2x"]
STATUS_LINE = re.compile(r"^ireebench: error: ([A-Z_]+); ")


def run_cli(*args, env=None, input=None, timeout=300):
    """``python -m ireebench`` with extra environment variables."""
    proc = subprocess.run([sys.executable, "-m", "ireebench", *map(str, args)],
                          env={**_env(), **(env or {})}, input=input, capture_output=True,
                          timeout=timeout, check=False)
    from conftest import CliResult
    return CliResult(proc.returncode, proc.stdout.decode(errors="replace"),
                     proc.stderr.decode(errors="replace"))


# --- 0-d inputs ---------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["xf32=1.5", "f32=1.5"])
def test_zero_d_input(compile_mlir, ireebench, native_tool, spelling):
    """``xf32=1.5`` (IREE's wrapper's spelling of a 0-d array) is a 0-d tensor, as natively."""
    module = compile_mlir("zero_d")
    args = [f"--module={module}", *FAST, "--function=scale0", f"--input={spelling}",
            "--input=4xf32=1 2 3 4"]
    ours = ireebench(*args, "--enable_output_processing")
    assert ours.returncode == 0, ours.stderr
    assert "4xf32=1.5 3 4.5 6" in ours.stdout
    native = native_tool("iree-benchmark-module", *args)
    assert native.returncode == 0, native.stderr


# --- IREE's Python wrapper, for real ----------------------------------------------


@pytest.fixture
def wrapper_tool(tmp_path, monkeypatch):
    """An executable that is ireebench, for ``benchmark_module(executable=...)``."""
    shim = tmp_path / "iree-benchmark-module"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ireebench "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    for key, value in _env().items():
        monkeypatch.setenv(key, value)
    return shim


def test_python_wrapper_zero_d_and_module_object(compile_mlir, wrapper_tool):
    """The real ``iree.runtime.benchmark_module``: a 0-d numpy input, a module from stdin."""
    import iree.runtime as rt
    from iree.runtime.benchmark import benchmark_module

    path = compile_mlir("zero_d")
    inputs = [np.array(1.5, dtype=np.float32), np.arange(1, 5, dtype=np.float32)]
    rows = benchmark_module(path, "scale0", inputs, executable=wrapper_tool,
                            device="local-sync", benchmark_min_time="2x", timeout=120)
    assert [row.benchmark_name for row in rows] == ["BM_scale0/process_time/real_time"]
    assert rows[0].iterations == "2"
    # A VmModule goes to the tool as --module=- on stdin.
    module = rt.VmModule.copy_buffer(rt.VmInstance(), path.read_bytes())
    rows = benchmark_module(module, "scale0", inputs, executable=wrapper_tool,
                            device="local-sync", benchmark_min_time="2x", timeout=120)
    assert [row.benchmark_name for row in rows] == ["BM_scale0/process_time/real_time"]


def test_python_wrapper_error_carries_the_status(compile_mlir, wrapper_tool):
    """The wrapper raises with ireebench's one line, whose INVALID_ARGUMENT the 2024
    wrapper and wave look for."""
    from iree.runtime.benchmark import BenchmarkToolError, benchmark_module

    with pytest.raises(BenchmarkToolError) as raised:
        benchmark_module(compile_mlir("zero_d"), "scale0",
                         [np.zeros(3, dtype=np.float32), np.zeros(4, dtype=np.float32)],
                         executable=wrapper_tool, device="local-sync",
                         benchmark_min_time="2x", timeout=120)
    message = raised.value.message
    assert "ireebench: error: INVALID_ARGUMENT; --input=3xf32=0.0: " in message, message
    assert "Traceback" not in message


# --- status codes in error lines ---------------------------------------------------


def _native_status(stderr: str) -> str:
    match = re.search(r"\b([A-Z_]+);", stderr)
    return match.group(1) if match else ""


@pytest.mark.parametrize("case, args", [
    ("bad-shape", ["--module={m}", "--function=forward", "--input=axf32=1",
                   "--input=4xf32=1"]),
    ("wrong-shape", ["--module={m}", "--function=forward", "--input=2xf32=1",
                     "--input=4xf32=1"]),
    ("missing-input", ["--module={m}", "--function=forward", "--input=4xf32=1"]),
    ("unparsable-value", ["--module={m}", "--function=forward", "--input=4xf32=abc",
                          "--input=4xf32=1"]),
    ("batch-size-none", ["--module={m}", "--function=forward", "--input=4xf32=1",
                         "--input=4xf32=1", "--batch_size=None"]),
    ("no-function", ["--module={m}", "--function=nope"]),
    ("no-module", ["--module={dir}/missing.vmfb"]),
    ("parameters-directory", ["--module={p}", "--parameters=."]),
    ("parameters-device", ["--module={p}", "--parameters=/dev/zero"]),
    ("module-mode", ["--module={m}", "--module_mode=bogus"]),
], ids=lambda value: value if isinstance(value, str) else None)
def test_error_lines_carry_the_native_status(compile_mlir, ireebench, native_tool, tmp_path,
                                             case, args):
    files = {"m": compile_mlir("inputs_only"), "p": compile_mlir("params"), "dir": tmp_path}
    args = [arg.format(**files) for arg in args] + ["--device=local-sync",
                                                    "--benchmark_min_time=1x"]
    native = native_tool("iree-benchmark-module", *args)
    assert native.returncode == 1, native.stderr
    ours = ireebench(*args)
    assert ours.returncode == 1
    line = one_error_line(ours)
    assert STATUS_LINE.match(line), line
    assert STATUS_LINE.match(line).group(1) == _native_status(native.stderr), \
        (line, native.stderr)


def test_parameters_lines_say_what_the_path_is(compile_mlir, ireebench):
    module = f"--module={compile_mlir('params')}"
    assert "is a directory" in one_error_line(ireebench(module, *FAST, "--parameters=."))
    assert "not a regular file" in one_error_line(
        ireebench(module, *FAST, "--parameters=model=/dev/zero"))


def test_ireebench_only_errors_have_no_status(compile_mlir, ireebench):
    """A refusal the native tool has no counterpart for prints no status code."""
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", *FAST,
                                    "--reporter=nope"))
    assert not STATUS_LINE.match(line), line


# --- unknown flags and stray arguments ------------------------------------------


def test_unknown_flags_and_stray_arguments_are_warned(compile_mlir):
    """sharktuner's flag files and sharktank's trailing argument: the run goes on,
    one warning line each, a close flag named."""
    out = run_cli(f"--module={compile_mlir('simple')}", *FAST, "--benchmark_min_tme=2x",
                  "--no_such_flag=1", "None", "--benchmark_format=json")
    assert out.returncode == 0, out.stderr
    names = [row["name"] for row in json.loads(out.stdout)["benchmarks"]]
    assert "BM_noargs/process_time/real_time" in names
    warnings = ireebench_lines(out)
    assert len(warnings) == 3, out.stderr
    assert "--benchmark_min_tme=2x" in warnings[1] and "did you mean --benchmark_min_time?" \
        in warnings[1]
    assert "--no_such_flag=1" in warnings[2] and "did you mean" not in warnings[2]
    assert "'None'" in warnings[0]
    assert all(line.startswith("ireebench: warning: ") and "--strict_flags" in line
               for line in warnings)


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_strict_flags_refuse(compile_mlir, how):
    args = [f"--module={compile_mlir('simple')}", *FAST, "--benchmark_min_tme=2x"]
    if how == "flag":
        out = run_cli(*args, "--strict_flags=true")
    else:
        out = run_cli(*args, env={"IREEBENCH_STRICT_FLAGS": "1"})
    line = one_error_line(out)
    assert out.returncode == 1
    assert "--benchmark_min_tme=2x: unknown flag (did you mean --benchmark_min_time?" in line
    stray = run_cli(f"--module={compile_mlir('simple')}", *FAST, "None",
                    env={"IREEBENCH_STRICT_FLAGS": "1"})
    assert "unexpected argument 'None'" in one_error_line(stray) and stray.returncode == 1


def test_a_misspelt_subcommand_is_named(tmp_path):
    out = run_cli("compre", "a.json", "b.json")
    assert out.returncode == 1
    lines = ireebench_lines(out)
    assert "did you mean the subcommand 'compare'?" in lines[0], out.stderr
    assert lines[-1].startswith("ireebench: error: ")  # then the run finds no module
    strict = run_cli("compre", "a.json", env={"IREEBENCH_STRICT_FLAGS": "1"})
    assert "did you mean the subcommand 'compare'?" in one_error_line(strict)


# --- --module_mode / --parameter_mode ----------------------------------------------


@pytest.mark.parametrize("mode", ["preload", "mmap"])
def test_module_modes_measure_the_same_module(compile_mlir, ireebench, mode):
    out = ireebench(f"--module={compile_mlir('simple')}", *FAST, f"--module_mode={mode}",
                    "--print_statistics", "--benchmark_format=json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert len(report["context"]["iree_module_sha256"]) == 64
    assert "DEVICE_LOCAL:" in out.stderr


@pytest.mark.parametrize("mode", ["file", "preload"])
def test_parameter_modes(compile_mlir, ireebench, tmp_path, mode):
    from iree.runtime import save_archive_file

    archive = tmp_path / "weights.irpa"
    save_archive_file({"weight": np.array([1, 2, 3, 4], dtype=np.float32)}, str(archive))
    out = ireebench(f"--module={compile_mlir('params')}", *FAST,
                    f"--parameters=model={archive}", f"--parameter_mode={mode}",
                    "--enable_output_processing")
    assert out.returncode == 0, out.stderr
    assert "4xf32=2 4 6 8" in out.stdout


def test_parameter_archive_truncated_during_the_run(compile_mlir, tmp_path):
    """The archive is read, never mapped (native default --parameter_mode=file): a
    truncation under the run cannot end it with SIGBUS; every row is there."""
    from iree.runtime import save_archive_file

    archive = tmp_path / "weights.irpa"
    save_archive_file({"weight": np.array([2, 0, 0, 0], dtype=np.float32)}, str(archive))
    out = tmp_path / "out.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={compile_mlir('slow_params')}",
         "--device=local-task", f"--parameters=model={archive}", "--benchmark_min_time=4x",
         "--benchmark_repetitions=3", f"--benchmark_out={out}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    # The context block comes once the parameters are loaded and measuring starts.
    line = proc.stderr.readline()
    while line and not line.startswith("Running "):
        line = proc.stderr.readline()
    os.truncate(archive, 0)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr  # not 135 (SIGBUS)
    rows = json.loads(out.read_text())["benchmarks"]
    assert [row["name"] for row in rows if row["run_type"] == "iteration"] == [
        "BM_slow/process_time/real_time"] * 3


# --- TMPDIR without room, files that cannot change ----------------------------------


@contextlib.contextmanager
def _tmpfs(path, size: str, read_only: bool = False):
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"mount tmpfs: {mounted.stderr.decode(errors='replace')}")
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_full_tmpdir_is_named_and_preload_needs_no_copy(compile_mlir, tmp_path):
    module = tmp_path / "model.vmfb"
    shutil.copyfile(compile_mlir("simple"), module)
    with _tmpfs(tmp_path / "tiny", "4k") as tiny:
        env = {"TMPDIR": str(tiny)}
        preload = run_cli(f"--module={module}", *FAST, env=env)
        assert preload.returncode == 0, preload.stderr  # read into memory: no copy
        mapped = run_cli(f"--module={module}", *FAST, "--module_mode=mmap", env=env)
        line = one_error_line(mapped)
        assert mapped.returncode == 1
        assert f"--module={module}: cannot write the run's private copy to" in line
        assert "(in TMPDIR)" in line and "No space left on device" in line


def test_a_module_that_cannot_change_is_mapped_without_a_copy(compile_mlir, tmp_path):
    """On a read-only mount the module is mapped as it is: no copy, none needed."""
    with _tmpfs(tmp_path / "models", "1m") as models, _tmpfs(tmp_path / "tiny", "4k") as tiny:
        shutil.copyfile(compile_mlir("simple"), models / "model.vmfb")
        subprocess.run(["mount", "-o", "remount,ro", str(models)], check=True)
        out = run_cli(f"--module={models / 'model.vmfb'}", *FAST, "--module_mode=mmap",
                      env={"TMPDIR": str(tiny)})
        assert out.returncode == 0, out.stderr


def test_module_truncated_during_an_mmap_run(compile_mlir, tmp_path):
    """--module_mode=mmap maps a private copy: truncating the original cannot end the run."""
    live = tmp_path / "live.vmfb"
    shutil.copyfile(compile_mlir(slow_function("slow", 4000000)), live)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={live}", "--device=local-sync",
         "--module_mode=mmap", "--benchmark_min_time=4x", "--benchmark_repetitions=2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    line = proc.stderr.readline()
    while line and not line.startswith("Running "):
        line = proc.stderr.readline()
    os.truncate(live, 0)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    rows = [line.split()[0] for line in stdout.splitlines() if line.startswith("BM_")]
    assert rows.count("BM_slow/process_time/real_time") == 2, stdout


# --- flag files ------------------------------------------------------------------------


def test_deeply_nested_flag_files(tmp_path):
    for index in range(1200):
        (tmp_path / f"f{index}").write_text(f"--flagfile={tmp_path / f'f{index + 1}'}\n")
    (tmp_path / "f1200").write_text("--benchmark_min_time=2x\n")
    out = run_cli(f"--flagfile={tmp_path / 'f0'}", timeout=300)
    line = one_error_line(out)
    assert out.returncode == 1 and "nested more than" in line and "--flagfile=" in line


def test_flag_file_fan_out_bomb(tmp_path):
    """26 levels, each including the next twice: 2**26 reads if nothing bounds it."""
    for level in range(26):
        nested = tmp_path / f"b{level + 1}"
        (tmp_path / f"b{level}").write_text(f"--flagfile={nested}\n--flagfile={nested}\n")
    (tmp_path / "b26").write_text(f"--benchmark_context=run={uuid.uuid4()}\n")
    out = run_cli(f"--flagfile={tmp_path / 'b0'}", timeout=300)
    line = one_error_line(out)
    assert out.returncode == 1 and "flag files read" in line
