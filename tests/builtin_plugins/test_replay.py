"""Replay capture (--device_replay_output), --agents_md and `ireebench replay`.

Captures are checked with the native replay tools from iree-base-runtime:
iree-dump-replay must find the `execute` scopes the native capture pass
records around the timed work, iree-run-replay must replay the file, and
`ireebench replay` must benchmark it through ireebench's reporters.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import one_error_line

MATMUL_INPUTS = ["--function=matmul", "--input=64x64xf32=1", "--input=64x64xf32=2"]
# A console row of Google Benchmark: name, time, unit, cpu, unit, iterations.
ROW = r"^{name}\s+[\d.]+ (ms|us|ns)\s+[\d.]+ (ms|us|ns)\s+{iterations}\b"


@pytest.fixture(scope="module")
def modules(compile_mlir):
    return {
        "sync": compile_mlir("replay_matmul"),
        "async": compile_mlir("replay_matmul", "--iree-execution-model=async-external"),
    }


def execute_scopes(native_tool, path) -> int:
    """Number of `execute` scopes iree-dump-replay finds in a capture."""
    dump = native_tool("iree-dump-replay", "--format=jsonl", path)
    assert dump.returncode == 0, dump.stderr
    records = [json.loads(line) for line in dump.stdout.splitlines() if line.strip()]
    summary = next(r for r in records if r.get("kind") == "summary")
    assert summary["scope_begin_count"] == summary["scope_end_count"]
    return sum(1 for r in records
               if r.get("operation") == "replay.scope_begin"
               and (r.get("payload") or {}).get("name") == "execute")


def test_dump_replay_jsonl_names_scopes(ireebench, modules, native_tool, tmp_path):
    """Guards execute_scopes(): the jsonl records carry the scope name."""
    capture = tmp_path / "one.ireereplay"
    result = ireebench("--module", modules["sync"], "--device=local-sync", *MATMUL_INPUTS,
                       "--benchmark_min_time=1x", f"--device_replay_output={capture}")
    assert result.returncode == 0, result.stderr
    text = native_tool("iree-dump-replay", capture).stdout
    assert text.count('op=replay.scope_begin(50)') >= 2  # "init" and "execute"
    assert text.count('name="execute"') == 2  # one begin, one end
    assert execute_scopes(native_tool, capture) == 1


@pytest.mark.parametrize("kind,device", [("sync", "local-sync"), ("async", "local-task")])
def test_capture_is_read_replayed_and_benchmarked(ireebench, modules, native_tool, tmp_path,
                                                  kind, device):
    capture = tmp_path / f"{kind}.ireereplay"
    result = ireebench("--module", modules[kind], f"--device={device}", *MATMUL_INPUTS,
                       "--benchmark_min_time=3x", f"--device_replay_output={capture}")
    assert result.returncode == 0, result.stderr
    assert re.search(ROW.format(name="BM_matmul/process_time/real_time", iterations=3),
                     result.stdout, re.MULTILINE), result.stdout
    # The capture pass got the run's iteration count: one scope per iteration.
    assert execute_scopes(native_tool, capture) == 3
    assert not list(tmp_path.glob(".*.tmp")), "the temporary capture was left behind"

    replayed = native_tool("iree-run-replay", f"--device={device}", capture)
    assert replayed.returncode == 0, replayed.stderr

    out = tmp_path / "replay.json"
    bench = ireebench("replay", capture, f"--device={device}", "--replay_scope=execute",
                      "--benchmark_min_time=2x", f"--benchmark_out={out}")
    assert bench.returncode == 0, bench.stderr
    name = "BM_replay/scope:execute/process_time/manual_time"
    assert re.search(ROW.format(name=re.escape(name), iterations=2), bench.stdout, re.MULTILINE), \
        bench.stdout
    report = json.loads(out.read_text())
    assert report["context"]["json_schema_version"] == 1
    assert report["context"]["iree_replay_scope"] == "execute"
    [row] = report["benchmarks"]
    assert row["name"] == name and row["iterations"] == 2 and row["real_time"] > 0


def test_replay_reporters_aggregates_and_time_unit(ireebench, modules, tmp_path):
    capture = tmp_path / "sync.ireereplay"
    assert ireebench("--module", modules["sync"], "--device=local-sync", *MATMUL_INPUTS,
                     "--benchmark_min_time=1x",
                     f"--device_replay_output={capture}").returncode == 0
    sink = tmp_path / "sink.py"  # a streaming plugin: every row, as it is reported
    sink.write_text(textwrap.dedent(f"""
        from ireebench import hookimpl

        @hookimpl
        def ireebench_benchmark_result(run):
            with open({str(tmp_path / "streamed.txt")!r}, "a") as handle:
                handle.write(run.benchmark_name + "\\n")

        @hookimpl
        def ireebench_report_context(config, context):
            context.extra["context_hook_calls"] = context.extra.get("context_hook_calls", 0) + 1
    """))
    result = ireebench("replay", capture, "--device=local-sync", "--benchmark_min_time=2x",
                       "--benchmark_repetitions=2", "--time_unit=us", "--reporter=json",
                       f"--plugin={sink}")
    assert result.returncode == 0, result.stderr
    rows = result.json()["benchmarks"]
    assert [r["name"] for r in rows] == ["BM_replay/process_time/real_time"] * 2 + [
        f"BM_replay/process_time/real_time_{a}" for a in ("mean", "median", "stddev", "cv")]
    assert {r["time_unit"] for r in rows} == {"us"}
    context = result.json()["context"]
    assert context["context_hook_calls"] == 1  # called by the hub, once
    assert context["iree_replay_file"] == str(capture.resolve())
    assert context["iree_replay_sha256"] == hashlib.sha256(capture.read_bytes()).hexdigest()
    streamed = (tmp_path / "streamed.txt").read_text().splitlines()
    assert streamed == [r["name"] for r in rows]
    csv = ireebench("replay", capture, "--device=local-sync", "--benchmark_min_time=1x",
                    "--benchmark_format=csv")
    assert csv.returncode == 0, csv.stderr
    assert csv.stdout.splitlines()[0].startswith("name,iterations,real_time,cpu_time")


def test_capture_iteration_count_rules(ireebench, modules, native_tool, tmp_path):
    """A time-based run captures one iteration; Nx with repetitions captures them all."""
    timed = tmp_path / "timed.ireereplay"
    result = ireebench("--module", modules["sync"], "--device=local-sync", *MATMUL_INPUTS,
                       "--benchmark_min_time=0.05s", f"--device_replay_output={timed}")
    assert result.returncode == 0, result.stderr
    assert execute_scopes(native_tool, timed) == 1
    # Without --function: one pass for every discovered function, and the
    # --benchmark_filter of the run selects what is captured.
    both = tmp_path / "both.ireereplay"
    result = ireebench("--module", modules["sync"], "--device=local-sync",
                       "--benchmark_min_time=2x", "--benchmark_repetitions=2",
                       f"--device_replay_output={both}")
    assert result.returncode == 0, result.stderr
    assert execute_scopes(native_tool, both) == 2 * 2 * 2
    one = tmp_path / "one.ireereplay"
    result = ireebench("--module", modules["sync"], "--device=local-sync",
                       "--benchmark_min_time=2x", "--benchmark_filter=cube",
                       f"--device_replay_output={one}")
    assert result.returncode == 0, result.stderr
    assert execute_scopes(native_tool, one) == 2


# No tensors: the module never imports the HAL module, so nothing can be recorded.
NO_HAL = """
func.func @scalar() -> i32 {
  %c = arith.constant 7 : i32
  return %c : i32
}
"""


def test_capture_is_complete_when_a_benchmark_fails(ireebench, compile_mlir, native_tool,
                                                    tmp_path):
    capture = tmp_path / "failed.ireereplay"
    result = ireebench("--module", compile_mlir("failing_cast"), "--device=local-sync",
                       "--function=check", "--input=3xf32=1",
                       "--benchmark_min_time=2x", f"--device_replay_output={capture}")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "ERROR OCCURRED" in result.stdout
    assert "ireebench: error" not in result.stderr  # the capture itself succeeded
    dump = native_tool("iree-dump-replay", capture)
    assert dump.returncode == 0, dump.stderr
    assert "hermetic: yes" in dump.stdout


def test_failed_capture_pass_is_one_line_and_leaves_no_file(ireebench, compile_mlir, tmp_path):
    capture = tmp_path / "none.ireereplay"
    result = ireebench("--module", compile_mlir(NO_HAL), "--device=local-sync",
                       "--benchmark_min_time=1x", f"--device_replay_output={capture}")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "BM_scalar/process_time/real_time" in result.stdout  # the benchmark was reported
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith(f"ireebench: error: --device_replay_output={capture}: "
                                "the capture pass failed: "), errors[0]
    assert "HAL" in errors[0]
    assert list(tmp_path.iterdir()) == []  # no capture, no temporary file


def test_capture_with_the_native_backend(ireebench, modules, native_tool, tmp_path):
    capture = tmp_path / "native.ireereplay"
    result = ireebench("--backend=native", "--module", modules["sync"], "--device=local-sync",
                       *MATMUL_INPUTS, "--benchmark_min_time=2x",
                       f"--device_replay_output={capture}")
    assert result.returncode == 0, result.stderr
    assert execute_scopes(native_tool, capture) == 2


def test_a_plugin_can_provide_the_capture(ireebench, modules, tmp_path):
    """ireebench_replay_capture is first-result: a plugin's capture replaces the native pass."""
    plugin = tmp_path / "fake_capture.py"
    plugin.write_text(textwrap.dedent("""
        from ireebench import hookimpl

        @hookimpl
        def ireebench_replay_capture(config, workloads):
            path = config.getoption("device_replay_output")
            with open(path, "w") as handle:
                handle.write(" ".join(w.run_name for w in workloads))
            return path
    """))
    capture = tmp_path / "plugin.ireereplay"
    result = ireebench(f"--plugin={plugin}", "--module", modules["sync"], "--device=local-sync",
                       "--benchmark_min_time=1x", f"--device_replay_output={capture}")
    assert result.returncode == 0, result.stderr
    assert capture.read_text() == ("BM_square/process_time/real_time "
                                   "BM_cube/process_time/real_time")


def test_agents_md(ireebench):
    result = ireebench("--agents_md")  # no --module needed
    assert result.returncode == 0, result.stderr
    for text in ("ireebench", "--device_replay_output", "ireebench replay",
                 "--replay_scope=execute", "iree-dump-replay", "iree-run-replay",
                 "--device_replay_file_policy", "--benchmark_min_time=Nx"):
        assert text in result.stdout, text
    assert result.stdout.startswith("# ireebench replay capture")
    # --agents_md=false is not a request: the run goes on (and needs a module).
    assert "no user module" in one_error_line(ireebench("--agents_md=false"))


@pytest.mark.parametrize("args,expected", [
    (["--device_replay_output={tmp}/x.ireereplay", "--device_replay_file_policy=everything"],
     "--device_replay_file_policy=everything: expected one of reference, capture-ranges"),
    (["--device_replay_output={tmp}/x.ireereplay", "--device_replay_file_validation=sha"],
     "--device_replay_file_validation=sha: expected one of identity, digest"),
    (["--device_replay_file_policy=capture-all"],
     "--device_replay_file_policy=capture-all: needs --device_replay_output"),
    (["--device_replay_file_validation=digest"],
     "--device_replay_file_validation=digest: needs --device_replay_output"),
    (["--device_replay_output={tmp}/missing/x.ireereplay"], "does not exist"),
    (["--device_replay_output={tmp}"], ": is a directory"),
    (["--device_replay_output=-"], "must be written to a file"),
    (["--device_replay_output={module}"], "is the same file as --module="),
    (["--device_replay_output={tmp}/same", "--benchmark_out={tmp}/same"],
     "is the same file as --benchmark_out="),
])
def test_invalid_capture_flags(ireebench, modules, tmp_path, args, expected):
    module = modules["sync"]
    args = [a.format(tmp=tmp_path, module=module) for a in args]
    result = ireebench("--module", module, "--device=local-sync", "--benchmark_min_time=1x",
                       *args)
    line = one_error_line(result)
    assert expected in line, line
    assert result.stdout == ""  # rejected before anything ran
    assert not (tmp_path / "x.ireereplay").exists()


@pytest.mark.parametrize("args,expected", [
    ([], "expected one replay file"),
    (["{tmp}/missing.ireereplay"], "missing.ireereplay: file not found"),
    (["{tmp}"], ": not a file"),
    (["{tmp}/a.ireereplay", "{tmp}/b.ireereplay"], "expected one replay file"),
    (["{tmp}/junk.ireereplay"], "iree-benchmark-replay failed: "),
    (["{tmp}/junk.ireereplay", "--module=x.vmfb"], "--module cannot be used with ireebench replay"),
    (["{tmp}/junk.ireereplay", "--device_replay_output={tmp}/y"], "--device_replay_output cannot"),
    (["{tmp}/junk.ireereplay", "--benchmark_min_time=fast"], "--benchmark_min_time=fast"),
    (["{tmp}/junk.ireereplay", "--strict_flags=true", "--no_such_flag=1"],
     "--no_such_flag=1: unknown flag"),
    (["{tmp}/junk.ireereplay", "--compile_flag=-O3"], "--compile_flag cannot be used"),
    (["{tmp}/junk.ireereplay", "--benchmark_statistics=min"],
     "--benchmark_statistics cannot be used"),
])
def test_invalid_replay_invocations(ireebench, tmp_path, args, expected):
    (tmp_path / "junk.ireereplay").write_text("not a replay file\n")
    result = ireebench("replay", *[a.format(tmp=tmp_path) for a in args])
    line = one_error_line(result)
    assert expected in line, line


def test_replay_scope_that_does_not_exist(ireebench, modules, tmp_path):
    capture = tmp_path / "sync.ireereplay"
    assert ireebench("--module", modules["sync"], "--device=local-sync", *MATMUL_INPUTS,
                     "--benchmark_min_time=1x",
                     f"--device_replay_output={capture}").returncode == 0
    out = tmp_path / "out.json"
    result = ireebench("replay", capture, "--device=local-sync", "--replay_scope=nosuch",
                       "--benchmark_min_time=1x", f"--benchmark_out={out}")
    assert "nosuch" in one_error_line(result)
    assert not out.exists()  # nothing was reported: no half-written file


def test_a_capture_the_tool_refuses_is_never_hashed(tmp_path):
    """A 1 GiB file (sparse) whose header is not a capture's: the native tool's
    one line comes back without ireebench reading the file (its sha256 is
    taken only once the tool accepted the capture). ireebench's own reads are
    counted by /proc/self/io at its exit."""
    capture = tmp_path / "huge.ireereplay"
    with open(capture, "wb") as handle:
        handle.truncate(1 << 30)
    code = ("import atexit, runpy, sys\n"
            "def report():\n"
            "    with open('/proc/self/io') as io:\n"
            "        sys.stderr.write('READ ' + io.readline().split()[1] + '\\n')\n"
            "atexit.register(report)\n"
            f"sys.argv = ['ireebench', 'replay', {str(capture)!r}, '--device=local-sync']\n"
            "runpy.run_module('ireebench', run_name='__main__', alter_sys=True)\n")
    env = dict(os.environ, IREEBENCH_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    *lines, read = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"ireebench: error: replay: {capture}: iree-benchmark-replay "
                               "failed: ") and "replay file magic" in lines[0], lines[0]
    assert int(read.split()[1]) < (1 << 28)  # a quarter of the file, at most: not hashed
