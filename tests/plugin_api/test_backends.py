"""Backends are objects that say what they can do; features check capabilities, not names."""

from __future__ import annotations

import io
import json

import pytest
from conftest import FIXTURE_PLUGINS, ROOT, one_error_line
from ireebench.backend import forwarded_argv
from ireebench.cli.command import load_plugins, parse_args

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x", "--benchmark_filter=noargs"]
SUBPROCESS = ROOT / "examples" / "plugins" / "subprocess_backend" / "ireebench_subprocess.py"
SEEDED = ROOT / "examples" / "plugins" / "seeded_kind" / "ireebench_seeded.py"


def test_a_third_party_backend_with_repetition_samples_gets_statistics(ireebench,
                                                                      compile_mlir, tmp_path):
    out = tmp_path / "out.json"
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, f"--plugin={SUBPROCESS}",
                       "--backend=subprocess", "--benchmark_repetitions=3",
                       "--benchmark_statistics=p90,min", f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    names = [row["name"] for row in json.loads(out.read_text())["benchmarks"]]
    assert names[-2:] == ["BM_noargs/process_time/real_time_p90",
                          "BM_noargs/process_time/real_time_min"]
    assert names.count("BM_noargs/process_time/real_time") == 3
    # The console's column fits the statistic rows (the hub sized it).
    line = next(line for line in result.stdout.splitlines() if line.endswith("_median") or
                "_median " in line)
    assert line.index(" ") >= len("BM_noargs/process_time/real_time_median")


def test_a_backend_without_the_capability_is_refused_naming_it(ireebench, compile_mlir):
    # fake_backend gives a bare callable: a backend with no capabilities.
    line = one_error_line(ireebench("--plugin=fake_backend", "--backend=fake",
                                    "--benchmark_statistics=p90"))
    assert line == ("ireebench: error: --benchmark_statistics=p90: needs a backend that reports "
                    "each repetition's own time (capability 'repetition_samples'); "
                    "--backend=fake does not have it")
    line = one_error_line(ireebench(f"--module={compile_mlir('simple')}", *LOCAL,
                                    f"--plugin={SUBPROCESS}", "--backend=subprocess",
                                    "--benchmark_min_rel_accuracy=0.05"))
    assert "(capability 'adaptive_repetitions'); --backend=subprocess does not have it" in line


@pytest.mark.parametrize("flags, capability", [
    (["--benchmark_cold_start"], "in_process"),
    (["--dispatch_statistics"], "profiling_passes"),
    (["--device_profiling_mode=queue", "--device_profiling_output=x.ireeprof"],
     "profiling_passes"),
    (["--print_statistics"], "in_process"),
])
def test_features_name_the_capability_they_need(ireebench, flags, capability):
    line = one_error_line(ireebench("--plugin=fake_backend", "--backend=fake", *flags))
    assert f"(capability '{capability}'); --backend=fake does not have it" in line


def test_native_backend_refuses_a_plugin_kind_in_one_line(ireebench, compile_mlir):
    module = compile_mlir("""
func.func @bench_scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}""")
    line = one_error_line(ireebench(f"--module={module}", "--device=local-sync",
                                    f"--plugin={SEEDED}", "--backend=native"))
    assert line == ("ireebench: error: --backend=native: cannot run BM_bench_scale, a function "
                    "of the kind 'seeded' (plugin 'ireebench_seeded'): needs a backend that runs "
                    "the invocation kinds plugins add (capability 'plugin_kinds'); use "
                    "--backend=runtime")


def test_native_backend_has_statistics_from_its_repetitions(ireebench, compile_mlir):
    result = ireebench(f"--module={compile_mlir('simple')}", *LOCAL, "--backend=native",
                       "--benchmark_repetitions=3", "--benchmark_statistics=max",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    rows = result.json()["benchmarks"]
    repetitions = [row["real_time"] for row in rows if row["run_type"] == "iteration"]
    [maximum] = [row for row in rows if row.get("aggregate_name") == "max"]
    assert maximum["real_time"] == pytest.approx(max(repetitions), rel=1e-9)


def test_plugins_lists_each_backend_with_its_capabilities(ireebench):
    listed = {entry["name"]: entry for entry in json.loads(ireebench("plugins", "--json").stdout)}
    runtime = listed["runtime_backend"]["backend_capabilities"]["runtime"]
    assert runtime == ["adaptive_repetitions", "in_process", "plugin_kinds", "profiling_passes",
                       "repetition_samples", "sweeps"]
    assert listed["native_backend"]["backend_capabilities"]["native"] == [
        "native_flags", "repetition_samples"]


def test_a_backend_that_is_neither_object_nor_callable_is_one_line(ireebench, tmp_path):
    plugin = tmp_path / "odd.py"
    plugin.write_text("def ireebench_backends():\n    return {'odd': 42}\n")
    assert one_error_line(ireebench(f"--plugin={plugin}", "--backend=odd")) == \
        "ireebench: error: backend 'odd' is neither an ireebench.Backend nor a callable"


def test_a_backend_failing_is_blamed_on_its_plugin(ireebench):
    result = ireebench("--plugin=fake_backend", "--backend=fake", "--fake_outcome=crash")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == ("ireebench: plugin error: plugin 'fake_backend' "
                                              "failed in backend 'fake': ZeroDivisionError: "
                                              "fake bug")


def test_forwarded_argv_keeps_what_the_native_tool_understands():
    """ireebench's own flags and plugins' flags go; native ones (and native_flag options) stay."""
    argv = ["--module=m.vmfb", "--device=local-sync", "--backend=native", "-pno:console",
            "--plugin", str(FIXTURE_PLUGINS / "fake_backend.py"), "--fake_outcome=ok", "--benchmark_repetitions=2",
            "--task_topology_max_group_count=2", "--enable_output_processing",
            "--reporter=json", "--print_statistics"]
    invocation = load_plugins(argv, io.StringIO(), io.StringIO())
    config = parse_args(argv, invocation)
    try:
        assert forwarded_argv(config) == [
            "--module=m.vmfb", "--device=local-sync", "--benchmark_repetitions=2",
            "--task_topology_max_group_count=2", "--enable_output_processing",
            "--print_statistics"]
        assert "--fake_outcome=ok" in forwarded_argv(config, keep=("fake_outcome",))
    finally:
        config.release()
