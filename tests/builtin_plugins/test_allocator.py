"""The ``allocator`` plugin (``--malloc_trim``): repetitions measure one heap regime.

The module is benchmarks/mlp_128k.mlir (batch 32, 384 -> 1024 -> 384: 128 KiB
activations, about 3 MiB of transient buffers per call), compiled for the
host as users compile it. Each repetition's regime is read without timing
anything: the ``page_faults`` test plugin counts the process's minor page
faults per iteration (hundreds when freed buffers went back to the kernel,
none when they stayed). That count is deterministic; the timing consequence
(max/min of the repetitions <= 1.2 at the default) depends on the machine's
load and is checked by ``benchmarks/allocator_regimes.py``, not here.
"""

from __future__ import annotations

import io
import json
import os
import resource
import types

import ireebench
import pytest
from conftest import ROOT, ireebench_lines, one_error_line
from ireebench.lib.allocator import USER_VARIABLES, describe_setting, setting_of
from ireebench.plugins import allocator

MLP_128K = ROOT / "benchmarks" / "mlp_128k.mlir"
HOST = "--iree-llvmcpu-target-cpu=host"
NAME = "BM_mlp/process_time/real_time"
SHORT = ["--device=local-sync", "--benchmark_format=json"]
# Three runs of 10 short repetitions (a fixed 30 iterations each) at the
# default; the warm-up keeps the first touches of the heap out of the
# repetitions, as calibration does for a time.
ACCEPTANCE = [*SHORT, "--benchmark_repetitions=10", "--benchmark_min_time=30x",
              "--benchmark_min_warmup_time=0.05", "--plugin=page_faults"]
OFF = {"M_TRIM_THRESHOLD": 1000000000, "M_TOP_PAD": 16777216, "M_MMAP_THRESHOLD": 33554432}
ON = {"M_TRIM_THRESHOLD": 0, "M_TOP_PAD": 0, "M_MMAP_THRESHOLD": 131072}
# Page faults per iteration: about 800 when the transient buffers went back to
# the kernel; at most a few stray ones (Python's own objects) when they stayed.
FAULTING = 200
RESIDENT = 10


@pytest.fixture(scope="module")
def mlp_128k(compile_mlir):
    return compile_mlir(MLP_128K.read_text(), HOST)


def repetitions(report: dict) -> list[dict]:
    return [row for row in report["benchmarks"] if row["run_type"] == "iteration"]


def test_default_measures_one_regime_in_every_repetition(mlp_128k, ireebench):
    """Acceptance: three runs with the default setting, 10 repetitions each: no
    repetition faults its buffers back in (counted, not timed)."""
    for attempt in range(3):
        result = ireebench(f"--module={mlp_128k}", *ACCEPTANCE)
        assert result.returncode == 0, result.stderr
        report = result.json()
        assert report["context"]["malloc_trim"] == "off"
        assert report["context"]["malloc_parameters"] == OFF
        rows = repetitions(report)
        assert len(rows) == 10
        faults = [row["page_faults"] for row in rows]
        assert max(faults) <= RESIDENT, f"run {attempt}: buffers faulted back in: {faults}"


@pytest.mark.parametrize("mode", ["off", "on", "glibc"])
def test_each_setting_is_recorded_and_on_faults_every_iteration(mlp_128k, ireebench, mode):
    result = ireebench(f"--module={mlp_128k}", *SHORT, f"--malloc_trim={mode}",
                       "--benchmark_repetitions=3", "--benchmark_min_time=10x",
                       "--benchmark_min_warmup_time=0.01", "--plugin=page_faults")
    assert result.returncode == 0, result.stderr
    assert ireebench_lines(result) == []
    report = result.json()
    assert report["context"]["malloc_trim"] == mode
    assert report["context"]["malloc_parameters"] == {"off": OFF, "on": ON, "glibc": {}}[mode]
    faults = [row["page_faults"] for row in repetitions(report)]
    if mode == "on":  # the native tool's regime: every iteration faults
        assert min(faults) >= FAULTING, faults
    elif mode == "off":
        assert max(faults) <= RESIDENT, faults


def test_users_malloc_variables_win_over_the_default(mlp_128k, ireebench):
    variables = {"MALLOC_TRIM_THRESHOLD_": "1000000000", "MALLOC_TOP_PAD_": "16777216"}
    result = ireebench(f"--module={mlp_128k}", *SHORT, "--benchmark_min_time=2x",
                       env=variables)
    assert result.returncode == 0, result.stderr
    assert ireebench_lines(result) == []
    context = result.json()["context"]
    assert context["malloc_trim"] == "environment"
    assert context["malloc_parameters"] == variables


def test_the_flag_wins_over_the_variables_and_says_so(mlp_128k, ireebench):
    result = ireebench(f"--module={mlp_128k}", *SHORT, "--benchmark_min_time=5x",
                       "--malloc_trim=on", "--plugin=page_faults",
                       env={"MALLOC_TRIM_THRESHOLD_": "1000000000",
                            "GLIBC_TUNABLES": "glibc.malloc.top_pad=16777216"})
    assert result.returncode == 0, result.stderr
    assert ireebench_lines(result) == [
        ("ireebench: note: --malloc_trim: on overrides MALLOC_TRIM_THRESHOLD_=1000000000 "
        "GLIBC_TUNABLES=glibc.malloc.top_pad=16777216 from the environment")]
    report = result.json()
    assert report["context"]["malloc_trim"] == "on"
    assert repetitions(report)[0]["page_faults"] >= FAULTING


def test_a_bad_value_is_one_line(ireebench, mlp_128k):
    line = one_error_line(ireebench(f"--module={mlp_128k}", "--malloc_trim=maybe"))
    assert line == "ireebench: error: --malloc_trim=maybe: expected off, on or glibc"


def _children_faults(run) -> int:
    """Minor page faults of ``run()``'s subprocesses and theirs (RUSAGE_CHILDREN
    counts every waited-for descendant)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    run()
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before


def test_native_backend_keeps_the_native_regime_unless_asked(mlp_128k, ireebench):
    """``--backend=native`` measures the native tool as it is (glibc's defaults:
    every iteration faults); ``--malloc_trim=off`` hands it the MALLOC_*
    variables, and its iterations stop faulting."""
    iterations = 300
    results = {}

    def run(*flags):
        def go():
            results[flags] = ireebench(f"--module={mlp_128k}", *SHORT, "--backend=native",
                                       f"--benchmark_min_time={iterations}x", *flags)
        return go

    native = _children_faults(run())
    kept = _children_faults(run("--malloc_trim=off"))
    for flags, result in results.items():
        assert result.returncode == 0, (flags, result.stderr)
    default_context = results[()].json()["context"]
    off_context = results[("--malloc_trim=off",)].json()["context"]
    assert default_context["malloc_trim"] == "glibc"
    assert default_context["malloc_parameters"] == {}
    assert off_context["malloc_trim"] == "off"
    assert off_context["malloc_parameters"] == {
        "MALLOC_TRIM_THRESHOLD_": "1000000000", "MALLOC_TOP_PAD_": "16777216",
        "MALLOC_MMAP_THRESHOLD_": "33554432"}
    # About 800 faults per iteration natively, none with trimming off.
    assert native - kept > FAULTING * iterations, (native, kept)


def test_python_api_setting_stays_in_the_process(mlp_128k):
    """mallopt cannot be undone: a later run asking for glibc's defaults is told."""
    base = [f"--module={mlp_128k}", "--device=local-sync", "--benchmark_min_time=2x"]
    first = ireebench.run([*base, "--malloc_trim=on"])
    assert first.exit_code == 0
    assert first.context.extra["malloc_trim"] == "on"
    stderr = io.StringIO()
    second = ireebench.run([*base, "--malloc_trim=glibc"], stderr=stderr)
    assert second.exit_code == 0
    assert second.context.extra["malloc_trim"] == "on"
    assert ("ireebench: note: --malloc_trim: glibc: this process's allocator was already "
            "set to on by an earlier run, and stays so") in stderr.getvalue()
    third = ireebench.run([*base])  # back to the default
    assert third.context.extra["malloc_trim"] == "off"


def _config():
    """What :func:`allocator.resolve` uses of a run's Config: stderr and cleanups."""
    cleanups = []
    return types.SimpleNamespace(stderr=io.StringIO(), add_cleanup=cleanups.append,
                                 cleanups=cleanups)


def test_another_c_library_applies_nothing_and_says_so_when_asked():
    """musl and macOS have no mallopt: nothing is set, the setting is recorded as
    unavailable, and only an explicit --malloc_trim gets a note."""
    config = _config()
    setting = allocator.resolve(config, "", True, "musl", environ={})
    assert (setting.mode, setting.parameters) == ("unavailable", {})
    assert config.stderr.getvalue() == ""
    setting = allocator.resolve(config, "off", True, "musl", environ={})
    assert setting.mode == "unavailable"
    assert config.stderr.getvalue() == (
        "ireebench: note: --malloc_trim: off not applied: the C library (musl) has no "
        "mallopt; its allocator's own behaviour is measured\n")


def test_out_of_process_values_are_the_native_variables():
    """For a backend that measures in a native tool, the tool's environment for
    this run only (the run's cleanup puts the variables back)."""
    config = _config()
    before = {name: os.environ.get(name) for name in USER_VARIABLES}
    setting = allocator.resolve(config, "on", False, "glibc", environ={})
    try:
        assert setting.parameters == {"MALLOC_TRIM_THRESHOLD_": "0", "MALLOC_TOP_PAD_": "0",
                                      "MALLOC_MMAP_THRESHOLD_": "131072"}
        assert os.environ["MALLOC_TOP_PAD_"] == "0"  # what the tool inherits
    finally:
        for cleanup in config.cleanups:
            cleanup()
    assert {name: os.environ.get(name) for name in USER_VARIABLES} == before


def test_context_setting_is_comparable():
    assert setting_of({"executable": "iree-benchmark-module"}) is None
    off = setting_of({"malloc_trim": "off", "malloc_parameters": OFF})
    assert off == setting_of(json.loads(json.dumps(
        {"malloc_parameters": OFF, "malloc_trim": "off"})))
    assert off != setting_of({"malloc_trim": "on", "malloc_parameters": ON})


def test_a_setting_is_the_same_whichever_way_it_was_set():
    """In process (mallopt names) and for the native tool (the MALLOC_* variables it
    was handed, as strings), the same parameters are the same setting; the same
    mode with other parameters (the user's variables) is described by them."""
    in_process = {"malloc_trim": "off", "malloc_parameters": OFF}
    native = {"malloc_trim": "off",
              "malloc_parameters": allocator.tool_variables("off")}
    assert setting_of(in_process) == setting_of(native)
    mine = setting_of({"malloc_trim": "environment",
                                 "malloc_parameters": {"MALLOC_TOP_PAD_": "1"}})
    theirs = setting_of({"malloc_trim": "environment",
                                   "malloc_parameters": {"MALLOC_TOP_PAD_": "2"}})
    assert mine != theirs
    assert describe_setting(mine, theirs) == "malloc_trim=environment (M_TOP_PAD=1)"
    assert describe_setting(mine) == "malloc_trim=environment"
