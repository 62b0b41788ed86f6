"""Discovery: the benchmarked names equal those of the native iree-benchmark-module."""

import pytest

ASYNC = "--iree-execution-model=async-external"


def _names(result):
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "module, flags",
    [
        ("simple", ()),
        ("async", (ASYNC,)),
        ("async", ()),
        ("stateful", ()),
        ("two_dispatches", ()),
    ],
)
def test_names_match_native(compile_mlir, ireebench, native_tool, module, flags):
    path = compile_mlir(module, *flags)
    ours = _names(ireebench(f"--module={path}", "--device=local-sync", "--benchmark_list_tests"))
    native = _names(native_tool("iree-benchmark-module", f"--module={path}",
                                "--device=local-sync", "--benchmark_list_tests"))
    assert ours == native
    assert ours  # something was discovered


def test_rules_on_simple_module(compile_mlir, ireebench):
    """No-arg functions and entry wrappers run; functions with args and __internal don't."""
    path = compile_mlir("simple")
    names = _names(ireebench(f"--module={path}", "--device=local-sync", "--benchmark_list_tests"))
    assert names == ["BM_noargs/process_time/real_time", "BM_entry_wrapper/process_time/real_time"]


def test_dispatch_wrappers_are_discovered(dispatch_module, ireebench, native_tool):
    ours = _names(ireebench(f"--module={dispatch_module}", "--device=local-sync",
                            "--benchmark_list_tests"))
    native = _names(native_tool("iree-benchmark-module", f"--module={dispatch_module}",
                                "--device=local-sync", "--benchmark_list_tests"))
    assert ours == native and len(ours) >= 1


def test_two_modules_last_is_benchmarked(compile_mlir, ireebench, native_tool):
    lib, app = compile_mlir("lib"), compile_mlir("app")
    args = [f"--module={lib}", f"--module={app}", "--device=local-sync"]
    ours = _names(ireebench(*args, "--benchmark_list_tests"))
    assert ours == ["BM_quadruple/process_time/real_time"]
    assert ours == _names(native_tool("iree-benchmark-module", *args, "--benchmark_list_tests"))
    run = ireebench(*args, "--benchmark_min_time=2x", "--enable_output_processing")
    assert run.returncode == 0, run.stderr
    assert "4xf32=4 8 12 16" in run.stdout


def test_function_selects_one(compile_mlir, ireebench):
    path = compile_mlir("simple")
    names = _names(ireebench(f"--module={path}", "--device=local-sync", "--function=add",
                             "--input=4xf32=1", "--input=4xf32=2", "--benchmark_list_tests"))
    assert names == ["BM_add/process_time/real_time"]


def test_benchmark_filter(compile_mlir, ireebench):
    path = compile_mlir("simple")
    names = _names(ireebench(f"--module={path}", "--device=local-sync",
                             "--benchmark_filter=entry", "--benchmark_list_tests"))
    assert names == ["BM_entry_wrapper/process_time/real_time"]
    names = _names(ireebench(f"--module={path}", "--device=local-sync",
                             "--benchmark_filter=-entry", "--benchmark_list_tests"))
    assert names == ["BM_noargs/process_time/real_time"]
