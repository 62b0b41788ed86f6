"""Bytes that are not UTF-8 — in a function name, a reflection attribute, a
path — are run and reported as the native tool does, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import plugin_error_line

# MLIR spells a raw byte in a symbol or string as \FF.
NAMES = r"""
func.func @"caf\FF"() -> i32 {
  %c = arith.constant 7 : i32
  return %c : i32
}
func.func @noted() -> i32 attributes {iree.reflection = {note = "caf\FF"}} {
  %c = arith.constant 3 : i32
  return %c : i32
}
"""
LOCAL = [b"--device=local-sync", b"--benchmark_min_time=2x"]


def _run(*args: bytes) -> subprocess.CompletedProcess:
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([os.fsencode(sys.executable), b"-m", b"ireebench", *args],
                          capture_output=True, env=env, timeout=120, check=False)


@pytest.fixture(scope="module")
def names_module(compile_mlir):
    return os.fsencode(compile_mlir(NAMES))


def _row_names(console: bytes) -> list[bytes]:
    return [line.split()[0] for line in console.splitlines() if line.startswith(b"BM_")]


def test_names_that_are_not_utf8_run_like_the_native_tool(names_module, native_tool):
    ours = _run(b"--module=" + names_module, *LOCAL)
    assert ours.returncode == 0, ours.stderr
    assert b"Traceback" not in ours.stderr
    native = native_tool("iree-benchmark-module", "--module=" + os.fsdecode(names_module),
                         "--device=local-sync", "--benchmark_min_time=2x")
    assert native.returncode == 0
    # The console writes the name's bytes as they are, as the native tool does.
    assert _row_names(ours.stdout) == [b"BM_caf\xff/process_time/real_time",
                                       b"BM_noted/process_time/real_time"]
    assert len(_row_names(native.stdout.encode(errors="surrogateescape"))) == 2


def test_json_escapes_them_and_function_selects_them(names_module):
    result = _run(b"--module=" + names_module, *LOCAL, b"--function=caf\xff",
                  b"--enable_output_processing", b"--reporter=json")
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode("utf-8")  # valid UTF-8 throughout
    report, _ = json.JSONDecoder().raw_decode(text)
    assert [row["name"] for row in report["benchmarks"]] == ["BM_caf\udcff/process_time/real_time"]
    assert "result[0]: i32=7" in text


def test_a_module_path_that_is_not_utf8(compile_mlir, tmp_path):
    odd = os.path.join(os.fsencode(tmp_path), b"m\xff.vmfb")
    shutil.copyfile(compile_mlir("simple"), odd)
    out = os.path.join(os.fsencode(tmp_path), b"out.json")
    result = _run(b"--module=" + odd, *LOCAL, b"--benchmark_out=" + out)
    assert result.returncode == 0, result.stderr
    with open(out, "rb") as handle:
        report = json.loads(handle.read().decode("utf-8"))
    assert report["context"]["iree_module"].endswith("m\udcff.vmfb")


CUSTOM_BASE_EXCEPTION = """
from ireebench import hookimpl


class Escape(BaseException):
    pass


@hookimpl
def ireebench_benchmark_result(run):
    raise Escape("not an Exception at all")
"""


def test_a_plugin_raising_a_custom_base_exception(ireebench, compile_mlir, tmp_path):
    plugin = tmp_path / "escaping.py"
    plugin.write_text(CUSTOM_BASE_EXCEPTION)
    result = ireebench(f"--module={compile_mlir('simple')}", "--device=local-sync",
                       "--benchmark_min_time=1x", f"--plugin={plugin}", "--reporter=json")
    line = plugin_error_line(result)
    assert line == ("ireebench: plugin error: plugin 'escaping' failed in "
                    "ireebench_benchmark_result: Escape: not an Exception at all")
