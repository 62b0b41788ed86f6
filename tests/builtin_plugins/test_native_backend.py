"""--backend=native: the native iree-benchmark-module measures, ireebench reports.

Cross-checks the two backends on the same module (names; times that the
runs' own clocks bound, whatever the load: how close the two backends'
times come is measured by benchmarks/compare_native.py), and checks that the native results flow
through ireebench's reporters, the streaming hook and the Python API, and
that native failures become error rows or one error line.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import one_error_line, slow_function

MATMUL_ARGS = ["--device=local-sync", "--function=matmul", "--input=192x192xf32=1",
               "--input=192x192xf32=2"]


def iteration_rows(report) -> list[dict]:
    return [r for r in report["benchmarks"] if r["run_type"] == "iteration"]


def test_same_names_for_the_same_module(ireebench, compile_mlir):
    """Discovery without --function: both backends benchmark the same functions."""
    module = compile_mlir("simple")
    names = {}
    for backend in ("runtime", "native"):
        result = ireebench(f"--backend={backend}", "--module", module, "--device=local-sync",
                           "--benchmark_min_time=2x", "--benchmark_repetitions=2",
                           "--benchmark_format=json")
        assert result.returncode == 0, result.stderr
        names[backend] = [(r["name"], r["run_type"]) for r in result.json()["benchmarks"]]
    assert names["native"] == names["runtime"]
    assert ("BM_noargs/process_time/real_time_cv", "aggregate") in names["native"]
    listed = {b: ireebench(f"--backend={b}", "--module", module, "--benchmark_list_tests").stdout
              for b in ("runtime", "native")}
    assert listed["native"] == listed["runtime"]
    assert "BM_entry_wrapper/process_time/real_time" in listed["native"]


def test_times_are_per_iteration_in_the_reported_unit(ireebench, compile_mlir):
    """Same ~1 ms matmul on both backends: the first repetition's time, times
    its iterations, lasted at least --benchmark_min_time (Google Benchmark
    grows the count until it has; the later repetitions reuse the count, so
    a quieter moment can make one of them shorter), and all repetitions
    together no longer than the process that measured them. Load only adds
    time, so neither bound can break; a wrong unit or divisor (x1000,
    /iterations twice) breaks one of them."""
    module = compile_mlir("native_matmul")
    for backend in ("runtime", "native"):
        started = time.monotonic()
        result = ireebench(f"--backend={backend}", "--module", module, *MATMUL_ARGS,
                           "--benchmark_min_time=0.05s", "--benchmark_repetitions=4",
                           "--benchmark_format=json")
        wall = time.monotonic() - started
        assert result.returncode == 0, result.stderr
        rows = iteration_rows(result.json())
        assert [r["name"] for r in rows] == ["BM_matmul/process_time/real_time"] * 4
        assert {r["time_unit"] for r in rows} == {"ms"}
        seconds = [r["real_time"] * 1e-3 * r["iterations"] for r in rows]
        assert seconds[0] >= 0.05, (backend, rows)
        assert sum(seconds) < wall, (backend, seconds, wall)
        assert all(r["cpu_time"] > 0 for r in rows), rows


def test_native_results_flow_through_reporters_hooks_and_api(ireebench, compile_mlir,
                                                             tmp_path):
    plugin = tmp_path / "stream_sink.py"
    plugin.write_text(textwrap.dedent("""
        import json
        from ireebench import hookimpl

        @hookimpl
        def ireebench_addoption(parser):
            parser.addoption("--stream_to", "stream_to", default="")

        @hookimpl
        def ireebench_configure(config):
            global TARGET
            TARGET = config.getoption("stream_to")

        @hookimpl
        def ireebench_benchmark_result(run):
            with open(TARGET, "a") as handle:
                handle.write(json.dumps(run.to_dict()) + "\\n")
    """))
    stream, out = tmp_path / "stream.jsonl", tmp_path / "out.json"
    module = compile_mlir("simple")
    result = ireebench("--backend=native", f"--plugin={plugin}", f"--stream_to={stream}",
                       "--module", module, "--device=local-sync", "--benchmark_min_time=3x",
                       "--benchmark_repetitions=2", "--benchmark_report_aggregates_only",
                       f"--benchmark_out={out}", "--benchmark_out_format=csv",
                       "--time_unit=us")
    assert result.returncode == 0, result.stderr
    assert "Running " in result.stderr and "iree-benchmark-module" in result.stderr
    # Aggregates only (applied by ireebench's hub, not by the native tool).
    assert "BM_noargs/process_time/real_time_mean" in result.stdout
    assert "BM_noargs/process_time/real_time " not in result.stdout
    streamed = [json.loads(line) for line in stream.read_text().splitlines()]
    assert len(streamed) == 2 * (2 + 4)  # every row, repetitions included
    assert {row["time_unit"] for row in streamed} == {"us"}
    csv_lines = out.read_text().splitlines()  # the machine context comes first
    assert any(line.startswith("name,iterations,real_time,cpu_time,time_unit")
               for line in csv_lines), csv_lines
    assert sum(line.startswith('"BM_') for line in csv_lines) == 2 * 4


def test_python_api(compile_mlir):
    import ireebench

    result = ireebench.run(["--backend=native", f"--module={compile_mlir('simple')}",
                            "--device=local-sync", "--function=add", "--input=4xf32=1",
                            "--input=4xf32=2", "--benchmark_min_time=5x"])
    assert result.exit_code == 0
    [run] = result.runs
    assert run.benchmark_name == "BM_add/process_time/real_time"
    assert run.iterations == 5
    assert isinstance(run.real_time, float) and run.real_time > 0
    assert run.counters["items_per_second"].is_rate
    assert result.context.executable.endswith("iree-benchmark-module")
    assert result.context.extra["ireebench_backend"] == "native"


def test_failing_benchmark_is_an_error_row(ireebench, compile_mlir, tmp_path):
    out = tmp_path / "out.json"
    result = ireebench("--backend=native", "--module", compile_mlir("failing_cast"),
                       "--device=local-sync", "--function=check", "--input=3xf32=1",
                       "--benchmark_min_time=2x", f"--benchmark_out={out}")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "BM_check/process_time/real_time ERROR OCCURRED:" in result.stdout
    assert "shape dimension 0 mismatch" in result.stdout
    [row] = json.loads(out.read_text())["benchmarks"]
    assert row["error_occurred"] is True and "mismatch" in row["error_message"]


def test_output_processing_is_done_by_the_native_tool(ireebench, compile_mlir):
    module = compile_mlir("simple")
    base = ["--backend=native", "--module", module, "--device=local-sync", "--function=add",
            "--input=4xf32=1", "--input=4xf32=2", "--benchmark_min_time=1x",
            "--enable_output_processing"]
    good = ireebench(*base, "--expected_output=4xf32=3")
    assert good.returncode == 0, good.stderr
    assert "[SUCCESS]" in good.stdout
    bad = ireebench(*base, "--expected_output=4xf32=4")
    assert bad.returncode == 1
    assert "[FAILED]" in bad.stdout and "Traceback" not in bad.stderr


@pytest.mark.parametrize("args,expected", [
    (["--module={simple}", "--function=nope"],
     "--backend=native: iree-benchmark-module failed: "),
    (["--module={simple}", "--device=nodriver"], "no driver 'nodriver'"),
    (["--module={tmp}/missing.vmfb"], "--module={tmp}/missing.vmfb: file not found"),
    (["--module={tmp}"], "--module={tmp}: is a directory"),  # the in-process message
    ([], "no user module specified"),
    (["--module={simple}", "--strict_flags=true", "--not_a_runtime_flag=1"],
     "--not_a_runtime_flag=1: unknown flag"),
    (["--module={simple}", "--backend=nosuch"], "--backend=nosuch: unknown backend"),
])
def test_native_failures_are_one_line(ireebench, compile_mlir, tmp_path, args, expected):
    simple = compile_mlir("simple")
    args = [a.format(simple=simple, tmp=tmp_path) for a in args]
    if not any(a.startswith("--backend=") for a in args):
        args.insert(0, "--backend=native")
    line = one_error_line(ireebench(*args, "--benchmark_min_time=1x"))
    assert expected.format(tmp=tmp_path) in line, line


def test_filter_matching_nothing(ireebench, compile_mlir, tmp_path):
    out = tmp_path / "out.json"
    result = ireebench("--backend=native", "--module", compile_mlir("simple"),
                       "--device=local-sync", "--benchmark_filter=nothing_matches",
                       f"--benchmark_out={out}")
    assert result.returncode == 1, result.stderr  # an output flag, nothing measured
    assert "Failed to match any benchmarks against regex: nothing_matches" in result.stderr
    assert f"ireebench: error: --benchmark_out={out}: no benchmark was measured" in result.stderr
    assert result.stdout == ""


def test_module_from_stdin(ireebench, compile_mlir):
    """--module=- is saved once and loaded by the native tool; provenance hashes its bytes."""
    data = compile_mlir("simple").read_bytes()
    result = ireebench("--backend=native", "--module=-", "--device=local-sync",
                       "--benchmark_min_time=2x", "--benchmark_format=json", input=data)
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert [b["name"] for b in report["benchmarks"]] == [
        "BM_noargs/process_time/real_time", "BM_entry_wrapper/process_time/real_time"]
    assert report["context"]["iree_module"] == "-"
    assert report["context"]["iree_module_sha256"] == hashlib.sha256(data).hexdigest()
    empty = ireebench("--backend=native", "--module=-", "--device=local-sync", input=b"")
    assert "--module=-: standard input is empty" in one_error_line(empty)


def test_report_context_hook_runs_once(ireebench, compile_mlir, tmp_path):
    """The hub calls ireebench_report_context; the native backend does not call it again."""
    plugin = tmp_path / "count_context.py"
    plugin.write_text(textwrap.dedent("""
        from ireebench import hookimpl

        @hookimpl
        def ireebench_report_context(config, context):
            context.extra["context_hook_calls"] = context.extra.get("context_hook_calls", 0) + 1
    """))
    result = ireebench("--backend=native", f"--plugin={plugin}", "--module",
                       compile_mlir("simple"), "--device=local-sync", "--benchmark_min_time=1x",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    context = result.json()["context"]
    assert context["context_hook_calls"] == 1
    assert context["ireebench_backend"] == "native" and context["iree_module_sha256"]


# --- finished work is never lost ---------------------------------------------------

# Three functions of ~0.1 s per call: each native process lasts a while.
SLOW_FUNCTIONS = "\n".join(slow_function(f"slow{i}", 6000000 + i) for i in range(3))


def _start_native(module, out, *extra):
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.Popen(
        [sys.executable, "-m", "ireebench", "--backend=native", f"--module={module}",
         "--device=local-sync", "--benchmark_min_time=5x", f"--benchmark_out={out}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _wait_for_row(proc, name: str) -> None:
    for line in proc.stdout:
        if line.startswith(name):
            return
    raise AssertionError("the row never came")


def _native_children(pid: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat_file:
                fields = stat_file.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue
        if int(fields[1]) == pid and b"iree-benchmark-module" in command:
            children.append(int(entry))
    return children


def test_sigint_keeps_the_benchmarks_that_finished(compile_mlir, tmp_path):
    out = tmp_path / "out.json"
    proc = _start_native(compile_mlir(SLOW_FUNCTIONS), out)
    _wait_for_row(proc, "BM_slow0")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    names = [row["name"] for row in json.loads(out.read_text())["benchmarks"]]
    assert names[:1] == ["BM_slow0/process_time/real_time"] and len(names) < 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_native_process_that_dies_is_an_error_row(compile_mlir, tmp_path):
    out = tmp_path / "out.json"
    proc = _start_native(compile_mlir(SLOW_FUNCTIONS), out)
    _wait_for_row(proc, "BM_slow0")
    deadline = time.monotonic() + 300
    while not (children := _native_children(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    for child in children:
        os.kill(child, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    rows = {row["name"]: row for row in json.loads(out.read_text())["benchmarks"]}
    assert list(rows) == [f"BM_slow{i}/process_time/real_time" for i in range(3)]
    killed = rows["BM_slow1/process_time/real_time"]
    assert killed["error_occurred"] is True
    assert "killed by signal 9" in killed["error_message"]
    assert "error_occurred" not in rows["BM_slow2/process_time/real_time"]  # still ran
    assert "Traceback" not in stderr


PREFIX_PLUGIN = """
from ireebench import hookimpl


@hookimpl(wrapper=True)
def ireebench_profiling_pass(config, workload, runs, profile_pass):
    profile_pass.command_prefix[:0] = ["/nonexistent/profiler"]
    return (yield)
"""


def test_a_profiler_that_cannot_start_keeps_the_measured_rows(ireebench, compile_mlir,
                                                               tmp_path):
    plugin = tmp_path / "broken_profiler.py"
    plugin.write_text(PREFIX_PLUGIN)
    out = tmp_path / "out.json"
    result = ireebench(f"--module={compile_mlir('two_dispatches')}", "--device=local-sync",
                       "--benchmark_min_time=2x", "--dispatch_statistics", f"--plugin={plugin}",
                       f"--benchmark_out={out}")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "cannot run /nonexistent/profiler" in result.stderr
    names = [row["name"] for row in json.loads(out.read_text())["benchmarks"]]
    assert names == ["BM_two_dispatches/process_time/real_time"]


def test_whole_run_flags_keep_one_native_process(ireebench, compile_mlir, tmp_path):
    """--print_statistics (like device profiling) is of the whole run: printed once."""
    result = ireebench("--backend=native", f"--module={compile_mlir('two_functions')}",
                       "--device=local-sync", "--benchmark_min_time=2x", "--print_statistics")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("[[ iree_hal_allocator_t memory statistics ]]") == 1
    assert "BM_first" in result.stdout and "BM_second" in result.stdout


def test_the_tool_runs_in_the_heap_regime_a_user_gets(compile_mlir, tmp_path):
    """--backend=native measures what the tool run by hand measures: the same
    heap regime, counted in page faults (not timed). On examples/matmul.mlir
    the tool by hand trims its heap and faults its buffers back in every
    iteration; asked for JSON on stdout it keeps them (a hundredth of the
    faults), so a backend that asked for it reported a third of the time."""
    from conftest import ROOT
    module = compile_mlir((ROOT / "examples" / "matmul.mlir").read_text())
    script = tmp_path / "faults.py"
    script.write_text(textwrap.dedent(f"""
        import resource, subprocess, sys
        from ireebench.native.tools import tool_path
        def faults(command):
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
            subprocess.run(command, capture_output=True, check=True)
            return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
        args = ["--module={module}", "--device=local-sync", "--benchmark_min_time=5000x"]
        print(faults([str(tool_path("iree-benchmark-module")), *args]),
              faults([sys.executable, "-m", "ireebench", "--backend=native", *args]))
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "IREEBENCH_DISABLE_PLUGIN_AUTOLOAD": "1"},
                          check=False)
    assert proc.returncode == 0, proc.stderr
    by_hand, backend = map(int, proc.stdout.split())
    assert by_hand > 5000 * 5, by_hand  # the trimming regime: faults every iteration
    assert backend > by_hand / 2, (by_hand, backend)
