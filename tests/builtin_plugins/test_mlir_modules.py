"""--module=x.mlir: compiled for the selected device, cached by content, compiler and flags."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import MLIR_DIR, one_error_line

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]


@pytest.fixture
def cached(ireebench, tmp_path, monkeypatch):
    """Runs ireebench with a private XDG_CACHE_HOME; returns (run, cache directory)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return ireebench, tmp_path / "cache" / "ireebench"


def _compiled(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("ireebench: compiled")]


def test_second_run_uses_the_cache_and_changes_recompile(cached, tmp_path):
    run, cache = cached
    source = tmp_path / "two.mlir"
    source.write_text((MLIR_DIR / "two_functions.mlir").read_text())
    first = run(f"--module={source}", *LOCAL)
    assert first.returncode == 0, first.stderr
    assert len(_compiled(first)) == 1
    assert "BM_first/process_time/real_time" in first.stdout
    [vmfb] = list(cache.iterdir())
    stamp = vmfb.stat().st_mtime_ns
    second = run(f"--module={source}", *LOCAL)
    assert second.returncode == 0 and _compiled(second) == []  # a cache hit
    assert [p.stat().st_mtime_ns for p in cache.iterdir()] == [stamp]
    # A changed flag recompiles.
    flagged = run(f"--module={source}", *LOCAL, "--compile_flag=--iree-opt-level=O1")
    assert len(_compiled(flagged)) == 1 and "--iree-opt-level=O1" in _compiled(flagged)[0]
    # A changed file recompiles.
    source.write_text(source.read_text().replace("@second", "@third"))
    changed = run(f"--module={source}", *LOCAL)
    assert len(_compiled(changed)) == 1
    assert "BM_third/process_time/real_time" in changed.stdout
    assert len(list(cache.iterdir())) == 3


def test_native_passes_use_the_compiled_module(cached, tmp_path):
    run, _ = cached
    source = tmp_path / "dispatches.mlir"
    source.write_text((MLIR_DIR / "two_dispatches.mlir").read_text())
    result = run(f"--module={source}", *LOCAL, "--dispatch_statistics", "--reporter=json")
    assert result.returncode == 0, result.stderr
    names = [row["name"] for row in result.json()["benchmarks"]]
    assert len(names) == 3 and names[0] == "BM_two_dispatches/process_time/real_time"
    native = run("--backend=native", f"--module={source}", *LOCAL)
    assert native.returncode == 0 and _compiled(native) == []


def test_a_compile_error_is_one_line(cached, tmp_path):
    run, _ = cached
    source = tmp_path / "broken.mlir"
    source.write_text("func.func @f() -> i32 { return %nope : i32 }\n")
    line = one_error_line(run(f"--module={source}", *LOCAL))
    assert f"--module={source}: iree-compile failed:" in line and "error" in line


def test_without_the_compiler_one_line_says_how_to_install_it(compile_mlir, tmp_path):
    source = tmp_path / "two.mlir"
    source.write_text((MLIR_DIR / "two_functions.mlir").read_text())
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    hide_compiler = ("import sys; sys.modules['iree.compiler'] = None; "
                     "sys.modules['iree.compiler.tools'] = None; "
                     "from ireebench.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", hide_compiler, f"--module={source}", *LOCAL],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1
    assert proc.stderr == (f"ireebench: error: --module={source}: compiling MLIR needs "
                           'iree-base-compiler: pip install "ireebench[compiler]"\n')
