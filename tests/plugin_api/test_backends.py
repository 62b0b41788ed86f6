"""Backends are objects that say what they can do; features check capabilities, not names.

Every run here is a plugin's backend or option meeting a capability: all on
``ireebench_tester`` (or ``ireebench.run`` where only the refusal matters)."""

from __future__ import annotations

import io
import json

import pytest
from conftest import FIXTURE_PLUGINS, ROOT, fixture_plugin, one_error_line
from ireebench._cli.command import build_command, load_plugins, option_specs, parse_args
from ireebench.backend import forwarded_argv

LOCAL = ["--device=local-sync", "--benchmark_min_time=2x", "--benchmark_filter=noargs"]
SUBPROCESS = ROOT / "examples" / "plugins" / "subprocess_backend" / "ireebench_subprocess.py"
SEEDED = ROOT / "examples" / "plugins" / "seeded_kind" / "ireebench_seeded.py"
FAKE = f"--plugin={FIXTURE_PLUGINS / 'fake_backend.py'}"  # for runs in this process
FAKE_BACKEND = fixture_plugin("fake_backend")


def test_a_third_party_backend_with_repetition_samples_gets_statistics(ireebench_tester,
                                                                      compile_mlir, tmp_path):
    out = tmp_path / "out.json"
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}", *LOCAL,
                                  "--backend=subprocess", "--benchmark_repetitions=3",
                                  "--benchmark_statistics=p90,min", f"--benchmark_out={out}",
                                  plugins=[SUBPROCESS])
    assert result.exit_code == 0, result.stderr
    names = [row["name"] for row in json.loads(out.read_text())["benchmarks"]]
    assert names[-2:] == ["BM_noargs/process_time/real_time_p90",
                          "BM_noargs/process_time/real_time_min"]
    assert names.count("BM_noargs/process_time/real_time") == 3
    # The console's column fits the statistic rows (the hub sized it).
    line = next(line for line in result.stdout.splitlines() if line.endswith("_median") or
                "_median " in line)
    assert line.index(" ") >= len("BM_noargs/process_time/real_time_median")


def test_a_backend_without_the_capability_is_refused_naming_it(ireebench_tester, compile_mlir):
    # fake_backend gives a bare callable: a backend with no capabilities.
    line = one_error_line(ireebench_tester.run("--backend=fake", "--benchmark_statistics=p90",
                                               plugins=[FAKE_BACKEND]))
    assert line == ("ireebench: error: --benchmark_statistics=p90: needs a backend that reports "
                    "each repetition's own time (capability 'repetition_samples'); "
                    "--backend=fake does not have it")
    line = one_error_line(ireebench_tester.run(f"--module={compile_mlir('simple')}", *LOCAL,
                                               "--backend=subprocess",
                                               "--benchmark_min_rel_accuracy=0.05",
                                               plugins=[SUBPROCESS]))
    assert "(capability 'adaptive_repetitions'); --backend=subprocess does not have it" in line


@pytest.mark.parametrize("flags, capability", [
    (["--benchmark_cold_start"], "in_process"),
    (["--dispatch_statistics"], "profiling_passes"),
    (["--device_profiling_mode=queue", "--device_profiling_output=x.ireeprof"],
     "profiling_passes"),
    (["--print_statistics"], "in_process"),
    (["--task_topology_max_group_count=2"], "native_flags"),
])
def test_features_name_the_capability_they_need(ireebench_tester, flags, capability):
    line = one_error_line(ireebench_tester.run("--backend=fake", *flags, plugins=[FAKE_BACKEND]))
    assert f"(capability '{capability}'); --backend=fake does not have it" in line


# What each option needs of the backend, the audit of every flag a built-in
# plugin adds (the core's own are every backend's: see ALWAYS_HONOURED). Given
# to a backend without the capability, each is one line, never ignored.
REFUSED = [
    ("--device_replay_output=x.ireereplay", "measured_workloads"),
    ("--device_replay_file_policy=capture", "measured_workloads"),
    ("--device_replay_file_validation=none", "measured_workloads"),
    ("--benchmark_cold_start", "in_process"),
    ("--memory_statistics", "in_process"),
    ("--counter=flops=2", "in_process"),
    ("--malloc_trim=on", "in_process"),
    ("--print_statistics", "in_process"),
    ("--enable_output_processing", "in_process"),
    ("--output=-", "in_process"),
    ("--expected_output=4xf32=1", "in_process"),
    ("--equality_mode=exact", "in_process"),
    ("--expected_f32_threshold=0.5", "in_process"),
    ("--output_max_element_count=4", "in_process"),
    ("--dispatch_statistics", "profiling_passes"),
    ("--profile_output=p.ireeprof", "profiling_passes"),
    ("--device_time", "profiling_passes"),
    ("--benchmark_statistics=p90", "repetition_samples"),
    ("--confidence=0.9", "repetition_samples"),
    ("--benchmark_min_rel_accuracy=0.01", "adaptive_repetitions"),
    ("--benchmark_max_time=1s", "adaptive_repetitions"),
    ("--scenario=server", "in_process"),
    ("--llm_decode_steps=4", "in_process"),
]
# Options every backend honours: the core's (the native tool's own, handed on
# by forwarded_argv, and the report's and ireebench's, done in this process),
# and plugin options that act here whatever measured.
ALWAYS_HONOURED = {
    "compile_flag",  # mlir_modules compiles here: forwarded module_files are .vmfb
    "environment_warnings", "multimodal_warnings",  # checks of this machine, of the rows
    "sweep", "shard_index", "shard_count",  # points: a backend without sweeps is refused
    "benchmark_save", "benchmark_storage", "benchmark_report",  # the hub's rows, here
    "agents_md",  # prints and exits
    # where the points are measured: --executor=ray itself needs 'executors'; the
    # cluster's address may be in the environment (RAY_ADDRESS) of any run
    "ray_address", "ray_node_files",
}


@pytest.mark.parametrize("flag, capability", REFUSED)
def test_an_option_a_backend_cannot_honour_is_refused_naming_the_capability(flag, capability):
    import ireebench

    with pytest.raises(ireebench.UsageError) as refused:
        ireebench.run([FAKE, "--backend=fake", flag])
    shown = flag if "=" in flag else f"{flag}=true"
    assert str(refused.value).startswith(f"{shown}: needs a backend that ")
    assert str(refused.value).endswith(f"(capability '{capability}'); --backend=fake does "
                                       "not have it")


def test_every_option_says_which_backend_capability_it_needs():
    """A new option of a built-in decides: it needs a capability, or every backend
    honours it (then it is listed above, with why)."""
    invocation = load_plugins([], io.StringIO(), io.StringIO())
    specs = option_specs(build_command(invocation.pm))
    for name, spec in specs.items():
        if spec.owner != "ireebench" and not spec.requires:
            assert name in ALWAYS_HONOURED, f"--{name} ({spec.owner}): which capability?"


def test_require_takes_the_flag_as_written(tmp_path):
    import ireebench

    plugin = tmp_path / "rusage.py"
    plugin.write_text(
        "from ireebench import hookimpl\nfrom ireebench.backend import require\n\n"
        "@hookimpl\ndef ireebench_configure(config):\n"
        "    require(config, 'rusage', '--rusage', 'true')\n")
    with pytest.raises(ireebench.UsageError) as refused:
        ireebench.run([f"--plugin={plugin}", FAKE, "--backend=fake"])
    assert str(refused.value) == ("--rusage=true: needs a backend that has it (capability "
                                  "'rusage'); --backend=fake does not have it")


def test_a_plugin_option_that_requires_a_capability_is_refused_before_configure(tmp_path):
    import ireebench

    plugin = tmp_path / "needs.py"
    plugin.write_text(
        "from ireebench import hookimpl\nfrom ireebench.backend import IN_PROCESS\n\n"
        "@hookimpl\ndef ireebench_addoption(parser):\n"
        "    parser.addoption('--trace_me', 'trace_me', type=bool, requires=IN_PROCESS)\n\n"
        "@hookimpl\ndef ireebench_configure(config):\n"
        "    raise AssertionError('configured')\n")
    with pytest.raises(ireebench.UsageError) as refused:
        ireebench.run([f"--plugin={plugin}", FAKE, "--backend=fake", "--trace_me"])
    assert "--trace_me=true: needs a backend that measures in this process" in str(refused.value)


def test_native_backend_refuses_a_plugin_kind_in_one_line(ireebench_tester, compile_mlir):
    module = compile_mlir("""
func.func @bench_scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}""")
    line = one_error_line(ireebench_tester.run(f"--module={module}", "--backend=native",
                                               plugins=[SEEDED]))
    assert line == ("ireebench: error: --backend=native: cannot run BM_bench_scale, a function "
                    "of the kind 'seeded' (plugin 'ireebench_seeded'): needs a backend that runs "
                    "the invocation kinds plugins add (capability 'plugin_kinds'); use "
                    "--backend=runtime")


def test_native_backend_has_statistics_from_its_repetitions(ireebench_tester, compile_mlir):
    result = ireebench_tester.run(f"--module={compile_mlir('simple')}", *LOCAL,
                                  "--backend=native", "--benchmark_repetitions=3",
                                  "--benchmark_statistics=max", "--benchmark_format=json")
    assert result.exit_code == 0, result.stderr
    rows = result.json()["benchmarks"]
    repetitions = [row["real_time"] for row in rows if row["run_type"] == "iteration"]
    [maximum] = [row for row in rows if row.get("aggregate_name") == "max"]
    assert maximum["real_time"] == pytest.approx(max(repetitions), rel=1e-9)


def test_plugins_lists_each_backend_with_its_capabilities(ireebench_tester):
    listed = {entry["name"]: entry
              for entry in ireebench_tester.subcommand("plugins", "--json").json()}
    runtime = listed["runtime_backend"]["backend_capabilities"]["runtime"]
    assert runtime == ["adaptive_repetitions", "executors", "in_process", "measured_workloads",
                       "plugin_kinds", "process_repetitions", "profiling_passes",
                       "repetition_samples", "sweeps"]
    assert listed["native_backend"]["backend_capabilities"]["native"] == [
        "measured_workloads", "native_environment", "native_flags", "repetition_samples"]


def test_a_backend_that_is_neither_object_nor_callable_is_one_line(ireebench_tester, tmp_path):
    plugin = tmp_path / "odd.py"
    plugin.write_text("def ireebench_backends():\n    return {'odd': 42}\n")
    assert one_error_line(ireebench_tester.run("--backend=odd", plugins=[plugin])) == \
        "ireebench: error: backend 'odd' is neither an ireebench.Backend nor a callable"


def test_a_backend_failing_is_blamed_on_its_plugin(ireebench_tester):
    result = ireebench_tester.run("--backend=fake", "--fake_outcome=crash",
                                  plugins=[FAKE_BACKEND])
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == ("ireebench: plugin error: plugin 'fake_backend' "
                                              "failed in backend 'fake': ZeroDivisionError: "
                                              "fake bug")


def test_forwarded_argv_keeps_what_the_native_tool_understands():
    """ireebench's own flags, plugins' flags and the report's flags go; native ones
    (and native_flag options) stay."""
    argv = ["--module=m.vmfb", "--device=local-sync", "--backend=native", "-pno:console",
            "--plugin", str(FIXTURE_PLUGINS / "fake_backend.py"), "--fake_outcome=ok",
            "--benchmark_repetitions=2", "--benchmark_out=run.json",
            "--benchmark_format", "csv", "--benchmark_out_format=csv",
            "--benchmark_counters_tabular=true", "--benchmark_display_aggregates_only",
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
