"""``--benchmark_cold_start``: the first invocation, reported apart from the steady state.

@increment and @count (stateful) return how many times they were invoked,
so the printed output tells whether the cold batch ran outside the
measured repetitions.
"""

import json
import re

from conftest import one_error_line

ASYNC = "--iree-execution-model=async-external"
LOCAL = "--device=local-sync"


def _count_output(stdout):
    match = re.search(r"i32=(\d+)$", stdout, re.MULTILINE)
    assert match, stdout
    return int(match.group(1))


def _row_names(stdout):
    return [line.split()[0] for line in stdout.splitlines() if line.startswith("BM_")]


def test_cold_batch_runs_before_and_outside_the_repetitions(compile_mlir, ireebench):
    args = [f"--module={compile_mlir('stateful')}", LOCAL, "--benchmark_min_time=5x",
            "--enable_output_processing"]
    plain = ireebench(*args)
    cold = ireebench(*args, "--benchmark_cold_start")
    assert plain.returncode == cold.returncode == 0, cold.stderr
    # Nx: without the flag the first measured batch is the cold one; with
    # it, one more invocation happens first and the 5 measured are warm.
    assert _count_output(plain.stdout) == 5
    assert _count_output(cold.stdout) == 6
    assert _row_names(plain.stdout) == ["BM_increment/process_time/real_time"]
    assert _row_names(cold.stdout) == ["BM_increment/process_time/real_time",
                                       "BM_increment/cold_start"]
    measured = [line for line in cold.stdout.splitlines() if line.startswith("BM_")]
    assert measured[0].split()[-2] == "5"  # iterations of the repetition (before the counter)
    assert measured[1].split()[-1] == "1"  # the cold row: one iteration, no counter


def test_cold_row_shape_in_json(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('two_functions')}", LOCAL,
                       "--benchmark_min_time=3x", "--benchmark_repetitions=2", "--batch_size=3",
                       "--benchmark_cold_start", "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["benchmarks"]
    names = [row["name"] for row in rows]
    assert names == [
        *(["BM_first/process_time/real_time"] * 2),
        *[f"BM_first/process_time/real_time_{a}" for a in ("mean", "median", "stddev", "cv")],
        "BM_first/cold_start",
        *(["BM_second/process_time/real_time"] * 2),
        *[f"BM_second/process_time/real_time_{a}" for a in ("mean", "median", "stddev", "cv")],
        "BM_second/cold_start",
    ]
    for family, cold in ((0, rows[6]), (1, rows[13])):
        assert cold["run_name"] == cold["name"] and cold["run_type"] == "iteration"
        assert cold["iterations"] == 3 and cold["repetitions"] == 1
        assert cold["repetition_index"] == 0 and cold["family_index"] == family
        assert cold["real_time"] > 0 and cold["time_unit"] == "ms"
    # The steady state is untouched: its aggregates come from its 2 repetitions.
    assert rows[2]["iterations"] == 2


def test_cold_start_with_time_based_min_time(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('stateful')}", LOCAL,
                       "--benchmark_min_time=0.01s", "--benchmark_cold_start",
                       "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    assert _row_names(result.stdout) == ["BM_increment/process_time/real_time",
                                         "BM_increment/cold_start"]
    measured = int(result.stdout.splitlines()[3].split()[-2])
    # The cold batch, then calibration, then the measured repetition.
    assert _count_output(result.stdout) > measured + 1


def test_cold_start_of_an_async_batch(compile_mlir, ireebench):
    path = compile_mlir("async", ASYNC)
    result = ireebench(f"--module={path}", "--device=local-task", "--function=count",
                       "--batch_size=4", "--batch_concurrency=2", "--benchmark_min_time=8x",
                       "--benchmark_cold_start", "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    assert _count_output(result.stdout) == 4 + 8  # one cold batch of 4, then 8 measured
    cold = next(line for line in result.stdout.splitlines()
                if line.startswith("BM_count/cold_start"))
    assert cold.split()[-1] == "4"


def test_cold_start_needs_the_in_process_backend(compile_mlir, ireebench):
    line = one_error_line(ireebench(f"--module={compile_mlir('stateful')}", "--backend=native",
                                    "--benchmark_cold_start"))
    assert line == ("ireebench: error: --benchmark_cold_start=true: needs a backend that "
                    "measures in this process with the IREE runtime (capability 'in_process'); "
                    "--backend=native does not have it")
