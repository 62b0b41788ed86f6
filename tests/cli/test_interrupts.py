"""Interrupted runs leave valid reports: Ctrl-C exits 130, SIGTERM 143.

A real ``python -m ireebench`` process is signalled while its second
benchmark runs (the ``worker_probe`` test plugin holds it until a signal
comes, so no load decides which one); the display and the --benchmark_out
file must then hold the finished benchmark as complete JSON / CSV, and no
temporary file is left.
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
from conftest import FIXTURE_PLUGINS

FUNCTIONS = 4
SEVERAL_FUNCTIONS = "\n".join(f"""
func.func @f{i}() -> tensor<4xf32> {{
  %c = arith.constant dense<[1.0, 2.0, 3.0, {i}.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}}""" for i in range(FUNCTIONS))


def _start(*args) -> subprocess.Popen:
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=os.pathsep.join([str(FIXTURE_PLUGINS),
                                           os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "ireebench", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def _interrupt_second(proc: subprocess.Popen, signum: int) -> tuple[str, str]:
    """Sends ``signum`` once the second benchmark holds (``HOLD BM_f1`` on stderr, see
    HOLD_SECOND); returns all output (without worker_probe's lines)."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line == "HOLD BM_f1\n":
            proc.send_signal(signum)
            break
    # Read through the same buffered file objects: communicate() would skip
    # what the line iterator already buffered.
    out, rest = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=300)
    probe = ("START ", "REPETITION ", "HOLD ", "PROBE ")
    return out, "".join(line for line in (seen + rest.splitlines(keepends=True))
                        if not line.startswith(probe))


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir(SEVERAL_FUNCTIONS)


# Each benchmark lasts ~0.4 s, so three are still to run when a reader's line comes.
SLOW = ["--device=local-sync", "--benchmark_min_time=0.4s"]
# The second benchmark waits for a signal: it comes while BM_f1 runs.
HOLD_SECOND = ["--device=local-sync", "--benchmark_min_time=2x", "--plugin=worker_probe",
               "--probe_hold=BM_f1"]


def _leftovers(directory: Path, keep: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != keep)


def test_sigint_leaves_valid_json_file_and_exits_130(module, tmp_path):
    out = tmp_path / "out.json"
    proc = _start(f"--module={module}", *HOLD_SECOND, f"--benchmark_out={out}")
    stdout, stderr = _interrupt_second(proc, signal.SIGINT)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == "ireebench: interrupted"
    report = json.loads(out.read_text())
    names = [b["name"] for b in report["benchmarks"]]
    assert names == ["BM_f0/process_time/real_time", "BM_f1/process_time/real_time"]
    assert not report["benchmarks"][0].get("error_occurred")
    assert report["benchmarks"][1]["error_message"] == "interrupted by SIGINT while running"
    shown = [line.split()[0] for line in stdout.splitlines() if line.startswith("BM_")]
    assert shown == names  # the display and the file hold the same finished runs
    assert _leftovers(tmp_path, "out.json") == []


def test_sigterm_leaves_valid_json_display_and_csv_file_and_exits_143(module, tmp_path):
    out = tmp_path / "out.csv"
    proc = _start(f"--module={module}", *HOLD_SECOND, "--benchmark_format=json",
                  f"--benchmark_out={out}", "--benchmark_out_format=csv")
    stdout, stderr = _interrupt_second(proc, signal.SIGTERM)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr
    display = json.loads(stdout)  # the closing brackets were written
    names = [b["name"] for b in display["benchmarks"]]
    assert names == ["BM_f0/process_time/real_time", "BM_f1/process_time/real_time"]
    text = out.read_text()
    table = list(csv.reader(io.StringIO(text[text.index("name,iterations,"):])))
    assert [row[0] for row in table[1:]] == names
    assert all(len(row) == len(table[0]) for row in table)
    assert _leftovers(tmp_path, "out.csv") == []


HANGING_REPORTER = """
import time
from ireebench import Reporter, hookimpl
from ireebench.signals import held_signal


class Hanging(Reporter):
    def report_runs(self, runs):
        self.stream.write("{partial")
        self.stream.flush()
        print("HANGING", flush=True)
        # A signal ends each sleep early: its handler holds it (a record is being
        # written), which this then says.
        while held_signal() is None:
            time.sleep(0.05)
        print("HELD", flush=True)
        time.sleep(600)


@hookimpl
def ireebench_reporters():
    return {"hanging": Hanging}
"""


def test_a_second_signal_gets_through_a_hanging_reporter(module, tmp_path):
    """Signals are held while a reporter writes a record, but not forever."""
    plugin = tmp_path / "hanging_reporter.py"
    plugin.write_text(HANGING_REPORTER)
    out = tmp_path / "out.json"
    out.write_text("previous results")
    proc = _start(f"--module={module}", "--device=local-sync", "--benchmark_min_time=2x",
                  f"--plugin={plugin}", f"--benchmark_out={out}",
                  "--benchmark_out_format=hanging")
    for line in proc.stderr:  # a plugin's print() goes to stderr during a run
        if "HANGING" in line:
            break
    proc.send_signal(signal.SIGINT)
    # Held: a record is being written (the reporter sees it held). A second signal
    # sent before the first was handled would have merged with it.
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "HELD" in line:
            break
    assert seen[-1:] == ["HELD\n"] and proc.poll() is None, "".join(seen)
    proc.send_signal(signal.SIGINT)  # the user insists
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert out.read_text() == "previous results"  # the half-written report was discarded
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hanging_reporter.py", "out.json"]


MUTATING_PLUGIN = """
from ireebench import hookimpl


@hookimpl
def ireebench_benchmark_result(run):
    run.real_accumulated_time = "not a number"  # changes its own copy only
    run.counters.clear()
"""


def test_a_plugin_that_mutates_a_run_does_not_break_the_reporters(module, tmp_path):
    plugin = tmp_path / "mutating_plugin.py"
    plugin.write_text(MUTATING_PLUGIN)
    proc = _start(f"--module={module}", "--device=local-sync", "--benchmark_min_time=2x",
                  f"--plugin={plugin}", "--benchmark_format=json")
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    rows = json.loads(stdout)["benchmarks"]
    assert all(isinstance(row["real_time"], float) and "items_per_second" in row for row in rows)


def test_a_closed_stdout_ends_the_run_quietly_and_keeps_the_file(module, tmp_path):
    """`ireebench ... | head -1`: exit 141, nothing on stderr, a complete results file."""
    out = tmp_path / "out.json"
    proc = _start(f"--module={module}", *SLOW, "--reporter=json", f"--benchmark_out={out}")
    proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does once it has its line
    stderr = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 141, stderr
    assert stderr == ""
    names = [b["name"] for b in json.loads(out.read_text())["benchmarks"]]
    assert 1 <= len(names) <= FUNCTIONS  # what finished, as valid JSON
    assert _leftovers(tmp_path, "out.json") == []
