"""Invocation kinds and batch accounting, checked against the native tool.

@count (stateful) returns how many times it has been invoked, so the last
output tells how many VM invocations the measurement made.
"""

import re

import pytest

ASYNC = "--iree-execution-model=async-external"
ROW = re.compile(r"^(BM_\S+)\s+([\d.]+) (ms|us|ns)\s+([\d.]+) (ms|us|ns)\s+(\d+)", re.MULTILINE)


def _rows(stdout):
    return {m.group(1): (float(m.group(2)), m.group(3), int(m.group(6)))
            for m in ROW.finditer(stdout)}


def _count_output(stdout):
    match = re.search(r"i32=(\d+)$", stdout, re.MULTILINE)
    assert match, stdout
    return int(match.group(1))


@pytest.mark.parametrize(
    "batch, concurrency, iterations, invocations",
    [
        (1, 1, 10, 10),
        (3, 1, 12, 12),  # 10x rounded up to whole batches of 3
        (3, 2, 12, 12),  # batch rounded up to 4 (a multiple of the concurrency)
        (4, 4, 12, 12),
    ],
)
def test_async_batches(compile_mlir, ireebench, native_tool, batch, concurrency,
                       iterations, invocations):
    path = compile_mlir("async", ASYNC)
    args = [f"--module={path}", "--device=local-task", "--function=count",
            f"--batch_size={batch}", f"--batch_concurrency={concurrency}",
            "--benchmark_min_time=10x", "--enable_output_processing"]
    ours = ireebench(*args)
    assert ours.returncode == 0, ours.stderr
    assert _rows(ours.stdout)["BM_count/process_time/real_time"][2] == iterations
    assert _count_output(ours.stdout) == invocations
    native = native_tool("iree-benchmark-module", *args)
    assert _rows(native.stdout)["BM_count/process_time/real_time"][2] == iterations
    assert _count_output(native.stdout) == invocations


def test_sync_invokes_once_per_batch(compile_mlir, ireebench, native_tool):
    """Sync functions repeat inside the program: one invocation per batch."""
    path = compile_mlir("stateful")
    args = [f"--module={path}", "--device=local-sync", "--batch_size=3",
            "--benchmark_min_time=10x", "--enable_output_processing"]
    ours = ireebench(*args)
    assert ours.returncode == 0, ours.stderr
    assert _rows(ours.stdout)["BM_increment/process_time/real_time"][2] == 12
    assert "result[0]: i32=4" in ours.stdout
    native = native_tool("iree-benchmark-module", *args)
    assert "result[0]: i32=4" in native.stdout


def test_repetitions_reuse_the_iteration_count(compile_mlir, ireebench):
    path = compile_mlir("stateful")
    result = ireebench(f"--module={path}", "--device=local-sync", "--benchmark_repetitions=3",
                       "--benchmark_min_time=0.01s", "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    lines = [m for m in ROW.finditer(result.stdout)]
    iterations = [int(m.group(6)) for m in lines if m.group(1).endswith("real_time")]
    assert len(iterations) == 3 and len(set(iterations)) == 1
    names = [m.group(1) for m in lines]
    assert names[3:] == [f"BM_increment/process_time/real_time_{s}"
                         for s in ("mean", "median", "stddev")]
    assert "BM_increment/process_time/real_time_cv" in result.stdout
    # Calibration ran before the measured repetitions, so more invocations
    # happened than were reported.
    assert _count_output(result.stdout) > 3 * iterations[0]


def test_dispatch_wrapper_takes_batch_size(dispatch_module, ireebench):
    result = ireebench(f"--module={dispatch_module}", "--device=local-sync", "--batch_size=8",
                       "--benchmark_min_time=20x")
    assert result.returncode == 0, result.stderr
    rows = _rows(result.stdout)
    assert rows, result.stdout
    for _, unit, iterations in rows.values():
        assert unit == "us"  # dispatch benchmarks default to microseconds
        assert iterations == 24  # whole batches of 8


def test_dispatch_wrapper_rejects_input(dispatch_module, ireebench):
    from conftest import one_error_line

    names = ireebench(f"--module={dispatch_module}", "--device=local-sync",
                      "--benchmark_list_tests").stdout.split()
    function = names[0][len("BM_"):].split("/")[0]
    result = ireebench(f"--module={dispatch_module}", "--device=local-sync",
                       f"--function={function}", "--input=1")
    assert "--input" in one_error_line(result)
    assert "--batch_size" in one_error_line(result)


def test_time_unit_flag(compile_mlir, ireebench):
    path = compile_mlir("simple")
    result = ireebench(f"--module={path}", "--device=local-sync", "--time_unit=ns",
                       "--benchmark_min_time=3x")
    assert result.returncode == 0, result.stderr
    assert {unit for _, unit, _ in _rows(result.stdout).values()} == {"ns"}


def test_third_party_kind_from_plugin(compile_mlir, ireebench, tmp_path):
    """A plugin module on --plugin adds an invocation kind and an option; it is used."""
    plugin = tmp_path / "twice_kind.py"
    plugin.write_text('''
from ireebench import hookimpl
from ireebench.plugins.kinds import SyncKind
from ireebench.plugins.kinds.batches import SyncBatch


class TwiceBatch(SyncBatch):
    """Invokes the function twice per batch."""

    def __init__(self, workload, session):
        super().__init__(workload, session)
        once = self.execute
        def twice():
            once()
            once()
        self.execute = twice


class TwiceKind(SyncKind):
    name = "twice"

    def batching(self, batch_size, concurrency):
        return 2 * batch_size, 1

    def prepare(self, workload, session):
        return TwiceBatch(workload, session)


@hookimpl
def ireebench_addoption(parser):
    parser.addoption("--twice", "twice", type=bool, help="Call each function twice.")


@hookimpl
def ireebench_invocation_kinds():
    return [TwiceKind()]


@hookimpl(tryfirst=True)
def ireebench_classify_function(function, kinds, config=None):
    return "twice" if TWICE else None


TWICE = False


@hookimpl
def ireebench_configure(config):
    global TWICE
    TWICE = config.getoption("twice")
''')
    path = compile_mlir("stateful")
    args = [f"--module={path}", "--device=local-sync", "--benchmark_min_time=10x",
            "--enable_output_processing", f"--plugin={plugin}"]
    plain = ireebench(*args)
    assert plain.returncode == 0, plain.stderr
    assert "result[0]: i32=10" in plain.stdout
    twice = ireebench(*args, "--twice")
    assert twice.returncode == 0, twice.stderr
    assert _rows(twice.stdout)["BM_increment/process_time/real_time"][2] == 10
    assert "result[0]: i32=10" in twice.stdout  # 5 batches of 2 invocations
    assert "--twice" in ireebench(f"--plugin={plugin}", "--help").stdout


@pytest.mark.parametrize("concurrency", [1, 2])
def test_async_batches_of_a_function_without_a_wait(compile_mlir, ireebench, concurrency):
    """@splat's wait fence is dropped by the compiler, so a track's calls complete out of
    order: each call signals its own semaphore (one timeline per track failed with
    "semaphore already signaled past N")."""
    path = compile_mlir("async_splat", ASYNC)
    result = ireebench(f"--module={path}", "--function=splat", "--batch_size=64",
                       f"--batch_concurrency={concurrency}", "--benchmark_min_time=2000x",
                       timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _rows(result.stdout)["BM_splat/process_time/real_time"][2] == 2048
