"""Faults during a run lose nothing that finished.

* A function that fails when invoked becomes an error row (JSON
  ``error_occurred``/``error_message``, console ``ERROR OCCURRED: '...'``);
  the other functions still run and are reported; exit code 1.
* A plugin hook that raises is reported in one line naming the plugin (a
  plugin error, exit code 3), and the runs finished before it, the one just
  measured included, are still written to --benchmark_out.
* SIGINT/SIGTERM in the middle of a run: --benchmark_out holds the runs
  finished so far as valid JSON/CSV, exit code 130/143, and no temporary
  file is left next to it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import slow_function

# ok, also_ok: fast. fails: a runtime assertion that always fails (cf.assert
# on a value the compiler cannot fold). slow: a host-side loop of ~0.3 s per
# call, long enough to be interrupted in the middle.
FAULTS_MLIR = """
func.func @ok() -> tensor<4xf32> {
  %c = util.unfoldable_constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @fails() -> i32 {
  %false = util.unfoldable_constant false
  cf.assert %false, "ireebench test: intentional failure"
  %c = arith.constant 1 : i32
  return %c : i32
}
func.func @also_ok() -> i32 {
  %c = util.unfoldable_constant 3 : i32
  %0 = arith.addi %c, %c : i32
  return %0 : i32
}
""" + slow_function("slow", 20000000)

NOT_SLOW = "--benchmark_filter=-BM_slow"


@pytest.fixture(scope="module")
def faults_module(compile_mlir) -> Path:
    return compile_mlir(FAULTS_MLIR)


def _args(module, *extra):
    return [f"--module={module}", "--device=local-sync", "--benchmark_min_time=3x", *extra]


def _names(rows) -> list[str]:
    return [row["name"] for row in rows]


def read_json_report(path: Path) -> list[dict]:
    """The benchmarks of a JSON report; fails if the file is not valid JSON."""
    return json.loads(path.read_text())["benchmarks"]


def read_csv_report(path: Path) -> list[dict]:
    """The rows of a CSV report (the machine context lines come first)."""
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("name,"))
    return list(csv.DictReader(io.StringIO("".join(lines[start:]))))


# --- a function failing at run time ------------------------------------------


def test_runtime_failure_is_an_error_row(ireebench, faults_module, tmp_path):
    out = tmp_path / "out.json"
    result = ireebench(*_args(faults_module, NOT_SLOW, "--benchmark_format=json",
                              f"--benchmark_out={out}"))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    for rows in (result.json()["benchmarks"], read_json_report(out)):
        by_name = {row["name"]: row for row in rows}
        assert list(by_name) == ["BM_ok/process_time/real_time",
                                 "BM_fails/process_time/real_time",
                                 "BM_also_ok/process_time/real_time"]
        failed = by_name["BM_fails/process_time/real_time"]
        assert failed["error_occurred"] is True
        assert "intentional failure" in failed["error_message"]
        for name in ("BM_ok/process_time/real_time", "BM_also_ok/process_time/real_time"):
            assert by_name[name]["iterations"] == 3
            assert "error_occurred" not in by_name[name]


def test_runtime_failure_on_the_console(ireebench, faults_module):
    result = ireebench(*_args(faults_module, NOT_SLOW, "--benchmark_repetitions=2"))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("BM_")}
    assert "ERROR OCCURRED: '" in lines["BM_fails/process_time/real_time"]
    assert "intentional failure" in lines["BM_fails/process_time/real_time"]
    # The functions after the failing one still ran, with their aggregates.
    assert "BM_also_ok/process_time/real_time_mean" in lines
    assert "ERROR" not in lines["BM_also_ok/process_time/real_time"]


# --- a plugin hook that raises ------------------------------------------------

RAISING_PLUGIN = '''
from ireebench import hookimpl


@hookimpl
def {hook}({params}):
    """Raises when it meets BM_also_ok (or at the end of the session)."""
    if {condition}:
        raise RuntimeError("exploded on purpose")
'''

HOOKS = {
    # hook: (parameters, condition, benchmarks in --benchmark_out)
    # A failure after the measurement still reports what was measured (a streaming
    # hook's too: the row it failed on was measured).
    "ireebench_benchmark_result": ("run", 'run.name == "BM_also_ok"',
                                   ["BM_ok", "BM_fails", "BM_also_ok"]),
    "ireebench_report_extra_rows": ("workload, runs", 'workload.name == "BM_also_ok"',
                                    ["BM_ok", "BM_fails", "BM_also_ok"]),
    "ireebench_sessionfinish": ("session, exitstatus", "True",
                                ["BM_ok", "BM_fails", "BM_also_ok"]),
}


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_raising_hook_is_named_and_results_are_kept(ireebench, faults_module, tmp_path, hook):
    params, condition, kept = HOOKS[hook]
    plugin = tmp_path / "exploding_plugin.py"
    plugin.write_text(RAISING_PLUGIN.format(hook=hook, params=params, condition=condition))
    out = tmp_path / "out.json"
    result = ireebench(*_args(faults_module, NOT_SLOW, f"--plugin={plugin}",
                              f"--benchmark_out={out}"))
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines()
              if line.startswith("ireebench: plugin error:")]
    assert len(errors) == 1, result.stderr
    assert "'exploding_plugin'" in errors[0] and hook in errors[0], errors[0]
    assert "exploded on purpose" in errors[0]
    assert [n.split("/")[0] for n in _names(read_json_report(out))] == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exploding_plugin.py", "out.json"]


# --- interrupts -----------------------------------------------------------------


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", "1")
    return env


def run_and_interrupt(args, signum, after_line: str, timeout: float = 120):
    """Starts the CLI, sends ``signum`` once stdout shows ``after_line``."""
    proc = subprocess.Popen([sys.executable, "-m", "ireebench", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env())
    deadline = time.monotonic() + timeout
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if line.startswith(after_line):
                proc.send_signal(signum)
                break
            assert time.monotonic() < deadline, "no progress"
        else:
            pytest.fail(f"the run ended before {after_line!r}: {''.join(seen)}")
        stdout, stderr = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(seen) + stdout, stderr


@pytest.mark.parametrize("signum, exit_code, out_format", [
    pytest.param(signal.SIGINT, 130, "json", id="SIGINT-json"),
    pytest.param(signal.SIGTERM, 143, "csv", id="SIGTERM-csv"),
])
def test_interrupt_keeps_finished_runs(faults_module, tmp_path, signum, exit_code, out_format):
    out = tmp_path / f"out.{out_format}"
    # 40 calls of @slow take ~12 s; the signal comes right after BM_also_ok.
    args = [f"--module={faults_module}", "--device=local-sync", "--benchmark_min_time=40x",
            "--benchmark_filter=BM_(ok|also_ok|slow)", f"--benchmark_out={out}",
            f"--benchmark_out_format={out_format}"]
    returncode, stdout, stderr = run_and_interrupt(args, signum, "BM_also_ok")
    assert returncode == exit_code, stderr
    assert "Traceback" not in stderr
    rows = read_json_report(out) if out_format == "json" else read_csv_report(out)
    # BM_slow, interrupted, is an error row if it had started (it usually
    # has); one call of it lasts about as long as the worker's grace, so the
    # worker may have been killed inside it (docs/reliability.md).
    interrupted = [row for row in rows if row["name"].startswith("BM_slow")]
    assert [n.split("/")[0] for n in _names(rows) if not n.startswith("BM_slow")] == [
        "BM_ok", "BM_also_ok"]
    assert len(interrupted) <= 1
    assert all(row["error_message"].startswith(
        f"interrupted by {signal.Signals(signum).name} while running") for row in interrupted)
    slow_lines = [line for line in stdout.splitlines() if line.startswith("BM_slow")]
    assert len(slow_lines) == len(interrupted)
    assert all("ERROR OCCURRED: 'interrupted by" in line for line in slow_lines)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left
