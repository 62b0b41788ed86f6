"""Interrupted runs leave valid reports: Ctrl-C exits 130, SIGTERM 143.

A real ``python -m ireebench`` process is signalled once its first benchmark
row is out; the display and the --benchmark_out file must then hold the
finished benchmarks as complete JSON / CSV, and no temporary file is left.
"""

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

FUNCTIONS = 4
SEVERAL_FUNCTIONS = "\n".join(f"""
func.func @f{i}() -> tensor<4xf32> {{
  %c = arith.constant dense<[1.0, 2.0, 3.0, {i}.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}}""" for i in range(FUNCTIONS))


def _start(*args) -> subprocess.Popen:
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.Popen([sys.executable, "-m", "ireebench", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def _interrupt_after(proc: subprocess.Popen, marker: str, signum: int) -> tuple[str, str]:
    """Sends ``signum`` once a stdout line contains ``marker``; returns all output."""
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if marker in line:
            proc.send_signal(signum)
            break
    # Read through the same buffered file object: communicate() would skip
    # what the line iterator already buffered.
    rest, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=120)
    return "".join(seen) + rest, err


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir(SEVERAL_FUNCTIONS)


# Each benchmark lasts ~0.4 s, so three are still to run when the signal comes.
SLOW = ["--device=local-sync", "--benchmark_min_time=0.4s"]


def _leftovers(directory: Path, keep: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != keep)


def test_sigint_leaves_valid_json_file_and_exits_130(module, tmp_path):
    out = tmp_path / "out.json"
    proc = _start(f"--module={module}", *SLOW, f"--benchmark_out={out}")
    stdout, stderr = _interrupt_after(proc, "BM_", signal.SIGINT)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == "ireebench: interrupted"
    report = json.loads(out.read_text())
    names = [b["name"] for b in report["benchmarks"]]
    assert 1 <= len(names) < FUNCTIONS
    assert names == [f"BM_f{i}/process_time/real_time" for i in range(len(names))]
    shown = [line.split()[0] for line in stdout.splitlines() if line.startswith("BM_")]
    assert shown == names  # the display and the file hold the same finished runs
    assert _leftovers(tmp_path, "out.json") == []


def test_sigterm_leaves_valid_json_display_and_csv_file_and_exits_143(module, tmp_path):
    out = tmp_path / "out.csv"
    proc = _start(f"--module={module}", *SLOW, "--benchmark_format=json",
                  f"--benchmark_out={out}", "--benchmark_out_format=csv")
    stdout, stderr = _interrupt_after(proc, '"name":', signal.SIGTERM)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    display = json.loads(stdout)  # the closing brackets were written
    names = [b["name"] for b in display["benchmarks"]]
    assert 1 <= len(names) < FUNCTIONS
    text = out.read_text()
    table = list(csv.reader(io.StringIO(text[text.index("name,iterations,"):])))
    assert [row[0] for row in table[1:]] == names
    assert all(len(row) == len(table[0]) for row in table)
    assert _leftovers(tmp_path, "out.csv") == []
