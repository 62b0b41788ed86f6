"""A module file rewritten or truncated while ireebench runs cannot touch the run.

The runtime maps the module into memory; a mapped file changed under it
would end the process with SIGBUS and lose every result. ireebench loads a
private copy (core/_modules.py), so the run finishes normally, as the native
tool's does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import slow_function

# ~0.1 s per call: a run of a few seconds, long enough to change the file under it.
SLOW = slow_function("slow", 8000000)


def _rewrite(path, other) -> None:
    """What `cp other path` does: the same inode, truncated, then written."""
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(other.read_bytes())


def _truncate(path, other) -> None:
    os.truncate(path, 0)


@pytest.mark.parametrize("change", [_rewrite, _truncate], ids=["rewritten", "truncated"])
def test_module_changed_during_the_run(compile_mlir, tmp_path, change):
    live = tmp_path / "live.vmfb"
    shutil.copyfile(compile_mlir(SLOW), live)
    out = tmp_path / "out.json"
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ireebench", f"--module={live}", "--device=local-sync",
         "--benchmark_min_time=6x", "--benchmark_repetitions=3", f"--benchmark_out={out}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # The context block is printed once the module is loaded and measuring
    # starts: the change then lands while the slow function runs.
    line = proc.stderr.readline()
    while line and not line.startswith("Running "):
        line = proc.stderr.readline()
    change(live, compile_mlir("simple"))
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr  # not 135 (SIGBUS)
    rows = json.loads(out.read_text())["benchmarks"]
    assert [row["name"] for row in rows if row["run_type"] == "iteration"] == [
        "BM_slow/process_time/real_time"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.vmfb", "out.json"]
