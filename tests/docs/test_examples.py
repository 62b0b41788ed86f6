"""The example plugins in examples/plugins, each on a real compiled module.

Each example is an installable package (its own pyproject.toml and an
``ireebench`` entry point) that also loads with ``--plugin FILE.py``. One
test installs one with pip (into a private directory put on PYTHONPATH,
entry point metadata included) and shows ``ireebench plugins --json`` lists
it, a run uses it, and ``-p no:NAME`` and ``IREEBENCH_DISABLE_PLUGIN_AUTOLOAD``
turn it off.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from conftest import ROOT

EXAMPLES = ROOT / "examples" / "plugins"
MARKDOWN = EXAMPLES / "markdown_reporter" / "ireebench_markdown.py"
SQLITE = EXAMPLES / "sqlite_sink" / "ireebench_sqlite.py"
BRACKET = EXAMPLES / "profiler_bracket" / "ireebench_bracket.py"
SEEDED = EXAMPLES / "seeded_kind" / "ireebench_seeded.py"
SLOW_ALERT = EXAMPLES / "slow_alert" / "ireebench_slow_alert.py"
SUBPROCESS = EXAMPLES / "subprocess_backend" / "ireebench_subprocess.py"
LOCAL = ["--device=local-sync", "--benchmark_min_time=2x"]

SEEDED_MODULE = """
func.func @bench_mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
func.func @bench_scale(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %s : f32
      linalg.yield %m : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @needs_inputs(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
"""


def test_every_example_is_a_package_with_an_entry_point():
    for directory in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        text = (directory / "pyproject.toml").read_text()
        assert "[project.entry-points.ireebench]" in text, directory
        module = text.split("py-modules = [\"", 1)[1].split("\"", 1)[0]
        assert (directory / f"{module}.py").is_file(), directory


def test_markdown_reporter(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, f"--plugin={MARKDOWN}",
                       "--reporter=markdown")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("| benchmark")
    assert any(line.startswith("| BM_noargs/process_time/real_time") for line in lines)


def test_slow_alert(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, f"--plugin={SLOW_ALERT}",
                       "--slow_alert_ms=0.0000001")
    assert result.returncode == 0, result.stderr
    assert "slow_alert: BM_noargs/process_time/real_time took" in result.stderr


def test_subprocess_backend_measures_in_a_clean_child(compile_mlir, ireebench, tmp_path,
                                                     monkeypatch):
    """The child sees none of the caller's environment but PATH and HOME."""
    monkeypatch.setenv("IREEBENCH_CANARY", "leaked")
    seen = tmp_path / "child.env"
    prefix = f"sh -c 'env > {seen}; exec \"$0\" \"$@\"'"
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, f"--plugin={SUBPROCESS}",
                       "--backend=subprocess", "--benchmark_filter=noargs",
                       f"--subprocess_prefix={prefix}", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert [row["name"] for row in result.json()["benchmarks"]] == [
        "BM_noargs/process_time/real_time"]
    names = {line.split("=", 1)[0] for line in seen.read_text().splitlines()}
    assert "PATH" in names and "IREEBENCH_CANARY" not in names
    listed = ireebench(f"--module={compile_mlir('simple')}", f"--plugin={SUBPROCESS}",
                       "--backend=subprocess", "--benchmark_list_tests")
    assert listed.returncode == 0, listed.stderr
    assert "BM_noargs/process_time/real_time" in listed.stdout.splitlines()


def test_sqlite_sink_rows_read_back(compile_mlir, ireebench, tmp_path):
    database = tmp_path / "results.db"
    module = compile_mlir("two_dispatches")
    result = ireebench(f"--module={module}", *LOCAL, "--benchmark_repetitions=2",
                       f"--plugin={SQLITE}", f"--sqlite_db={database}", "--sqlite_dispatches",
                       "--dispatch_statistics", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    report = result.json()
    with sqlite3.connect(database) as connection:
        runs = connection.execute("SELECT run_id, module_sha256, exit_status FROM runs").fetchall()
        results = connection.execute(
            "SELECT name, run_type, iterations, real_seconds, extra_row FROM results").fetchall()
        dispatches = connection.execute(
            "SELECT benchmark, function, calls FROM dispatches").fetchall()
    assert len(runs) == 1
    run_id, sha256, status = runs[0]
    assert status == 0 and sha256 == report["context"]["iree_module_sha256"] and len(run_id) == 32
    assert [row[0] for row in results] == [row["name"] for row in report["benchmarks"]]
    repetition = report["benchmarks"][0]
    assert results[0][3] == pytest.approx(repetition["real_time"] * 1e-3)  # ms -> s
    assert sum(row[4] for row in results) == 2  # the two dispatch rows, marked extra
    functions = {row[1] for row in dispatches}
    assert len(functions) == 2 and all(row[0] == "BM_two_dispatches" for row in dispatches)
    assert all(row[2] == 2 * 2 for row in dispatches)  # 2 iterations x 2 repetitions


def test_profiler_bracket_agrees_with_the_report(compile_mlir, ireebench, tmp_path):
    log = tmp_path / "bracket.jsonl"
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", "--device=local-sync",
                       "--benchmark_min_time=0.05s", "--benchmark_repetitions=3",
                       f"--plugin={BRACKET}", f"--bracket_log={log}", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    pairs = list(zip(events[::2], events[1::2]))
    assert all((b["event"], e["event"]) == ("begin", "end") for b, e in pairs)
    # The last bracket of each repetition is the reported one (a first
    # repetition short of the minimum time is measured again).
    last = list({begin["repetition"]: (begin, end) for begin, end in pairs}.values())
    assert [begin["repetition"] for begin, _ in last] == [0, 1, 2]
    rows = [row for row in result.json()["benchmarks"] if row["run_type"] == "iteration"]
    for (begin, end), row in zip(last, rows):
        bracketed = (end["time_ns"] - begin["time_ns"]) * 1e-9
        reported = row["real_time"] * 1e-3 * row["iterations"]  # ms per iteration -> s
        assert end["iterations"] == row["iterations"]
        assert reported <= bracketed < reported * 1.05 + 0.02, (bracketed, reported)


def test_seeded_kind_runs_bench_functions_without_inputs(compile_mlir, ireebench):
    module = compile_mlir(SEEDED_MODULE)
    result = ireebench(f"--module={module}", *LOCAL, f"--plugin={SEEDED}", "--seeded_dim=64",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    assert [row["name"] for row in result.json()["benchmarks"]] == [
        "BM_bench_mlp/process_time/real_time", "BM_bench_scale/process_time/real_time"]
    # The same seed gives the same outputs; the native profiling pass gets them as .npy.
    outputs = [ireebench(f"--module={module}", *LOCAL, f"--plugin={SEEDED}",
                         "--function=bench_mlp", "--enable_output_processing").stdout
               for _ in range(2)]
    values = [text[text.index("result[0]"):] for text in outputs]
    assert values[0] == values[1] and "4x16xf32=" in values[0]
    profiled = ireebench(f"--module={module}", *LOCAL, f"--plugin={SEEDED}",
                         "--function=bench_mlp", "--dispatch_statistics",
                         "--benchmark_format=json")
    assert profiled.returncode == 0, profiled.stderr
    names = [row["name"] for row in profiled.json()["benchmarks"]]
    assert names[0] == "BM_bench_mlp/process_time/real_time" and len(names) >= 2


def _pip_install(directory, target) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--target", str(target),
                    str(directory)], check=True, capture_output=True, timeout=300)


def test_an_installed_example_is_listed_used_and_can_be_turned_off(compile_mlir, tmp_path):
    site = tmp_path / "site"
    _pip_install(EXAMPLES / "markdown_reporter", site)
    _pip_install(EXAMPLES / "slow_alert", site)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH",
                                                                                 "")]))
    env.pop("IREEBENCH_DISABLE_PLUGIN_AUTOLOAD", None)

    def run(*args, **extra_env):
        return subprocess.run([sys.executable, "-m", "ireebench", *map(str, args)],
                              capture_output=True, text=True, timeout=300, check=False,
                              env={**env, **extra_env})

    listed = json.loads(run("plugins", "--json").stdout)
    [entry] = [plugin for plugin in listed if plugin["name"] == "markdown"]
    assert entry["origin"] == "entry point"
    assert (entry["distribution"], entry["version"]) == ("ireebench-markdown", "0.1.0")
    assert entry["reporters"] == ["markdown"]
    assert entry["hooks"] == ["ireebench_register_commands", "ireebench_reporters"]
    assert entry["commands"] == ["markdown"]  # its subcommand, listed with it
    assert "markdown 0.1.0 (entry point: ireebench-markdown)" in run("--version").stdout
    args = [f"--module={compile_mlir('simple')}", *LOCAL, "--reporter=markdown"]
    used = run(*args, f"--benchmark_out={tmp_path / 'run.json'}")
    assert used.returncode == 0, used.stderr
    assert used.stdout.startswith("| benchmark")
    # The installed package's subcommand: the same table from the saved report.
    table = run("markdown", tmp_path / "run.json")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0] == used.stdout.splitlines()[0]
    assert "BM_noargs/process_time/real_time" in table.stdout
    # A blocked installed plugin's flag says which plugin it belongs to.
    flagged = run(*args, "-p", "no:slow_alert", "--slow_alert_ms=1")
    assert flagged.stderr.strip() == ("ireebench: error: --slow_alert_ms=1: unknown flag (it "
                                      "belongs to the plugin 'slow_alert', blocked with "
                                      "-p no:slow_alert)")
    blocked = run(*args, "-p", "no:markdown")
    assert "--reporter=markdown: unknown reporter" in blocked.stderr
    off = run(*args, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    assert "--reporter=markdown: unknown reporter" in off.stderr
