"""Measurement semantics (Google Benchmark's) through the Python API."""

import math
import statistics

import ireebench
import pytest
from ireebench.results import Run
from ireebench.stats import compute_aggregates


def _run(compile_mlir, *flags):
    return ireebench.run([f"--module={compile_mlir('stateful')}", "--device=local-sync", *flags])


def test_aggregates_from_repetitions(compile_mlir):
    result = _run(compile_mlir, "--benchmark_repetitions=4", "--benchmark_min_time=200x")
    assert result.exit_code == 0
    reps = [r for r in result.runs if r.run_type == "iteration"]
    aggs = {r.aggregate_name: r for r in result.runs if r.run_type == "aggregate"}
    assert len(reps) == 4 and set(aggs) == {"mean", "median", "stddev", "cv"}
    times = [r.real_time for r in reps]
    assert aggs["mean"].real_time == pytest.approx(statistics.mean(times))
    assert aggs["median"].real_time == pytest.approx(statistics.median(times))
    assert aggs["stddev"].real_time == pytest.approx(statistics.stdev(times))  # sample
    assert aggs["cv"].real_time == pytest.approx(statistics.stdev(times) / statistics.mean(times))
    assert all(a.iterations == 4 for a in aggs.values())
    rates = [r.counters["items_per_second"].value for r in reps]
    assert aggs["mean"].counters["items_per_second"].value == pytest.approx(statistics.mean(rates))
    for rep in reps:  # items_per_second is per real second
        assert rep.counters["items_per_second"].value == pytest.approx(
            rep.iterations / rep.real_accumulated_time)


def test_calibration_reaches_min_time(compile_mlir):
    """The reported repetition lasted the minimum time (it is measured again, grown,
    until it does). How many calls that took is the machine's: a call of a few
    microseconds preempted for 50 ms on a busy machine is the whole count."""
    result = _run(compile_mlir, "--benchmark_min_time=0.05s")
    (run,) = result.runs
    assert run.real_accumulated_time >= 0.05
    assert run.iterations >= 1


def test_explicit_iterations_and_units(compile_mlir):
    (run,) = _run(compile_mlir, "--benchmark_min_time=37x", "--time_unit=us").runs
    assert run.iterations == 37 and run.time_unit == "us"
    assert run.real_time == pytest.approx(run.real_accumulated_time / 37 * 1e6)


def test_warmup_runs_before_measuring(compile_mlir):
    """The warm-up invokes the function (discarded); even with an explicit count."""
    flags = ["--benchmark_min_time=5x", "--enable_output_processing"]
    plain = _run(compile_mlir, *flags)
    warm = _run(compile_mlir, *flags, "--benchmark_min_warmup_time=0.02")
    assert plain.exit_code == warm.exit_code == 0
    assert plain.runs[0].iterations == warm.runs[0].iterations == 5


def test_warmup_count_through_cli(compile_mlir, ireebench):
    args = [f"--module={compile_mlir('stateful')}", "--device=local-sync",
            "--benchmark_min_time=5x", "--enable_output_processing"]
    assert "result[0]: i32=5" in ireebench(*args).stdout
    warm = ireebench(*args, "--benchmark_min_warmup_time=0.02").stdout
    count = int(warm.split("i32=")[-1].split()[0])
    assert count > 5


def _rep(real, cpu=None, iterations=10, error=False):
    return Run(name="BM_x", run_name="BM_x/process_time/real_time", iterations=iterations,
               real_accumulated_time=real, cpu_accumulated_time=real if cpu is None else cpu,
               error_occurred=error, repetitions=3)


def test_no_aggregates_below_two_successes():
    assert compute_aggregates([_rep(1.0)]) == []
    assert compute_aggregates([_rep(1.0), _rep(0, error=True)]) == []
    assert len(compute_aggregates([_rep(1.0), _rep(2.0)])) == 4


def test_aggregate_rescaling_matches_google_benchmark():
    aggs = {a.aggregate_name: a for a in compute_aggregates([_rep(1.0), _rep(2.0), _rep(3.0)])}
    # mean of per-iteration times: (0.1 + 0.2 + 0.3) / 3 seconds
    assert aggs["mean"].real_time == pytest.approx(200.0)  # ms
    assert aggs["stddev"].real_time == pytest.approx(100.0)
    assert aggs["cv"].real_time == pytest.approx(0.5)
    assert aggs["cv"].aggregate_unit == "percentage"
    assert math.isclose(aggs["median"].real_time, 200.0)


def test_a_stopping_rule_decides_the_count_and_rows_agree(compile_mlir, ireebench):
    """ireebench_continue_repetitions: fewer or more than --benchmark_repetitions."""
    args = [f"--module={compile_mlir('stateful')}", "--device=local-sync",
            "--benchmark_min_time=3x", "--benchmark_format=json", "--plugin=stop_after"]
    for asked, stop_after in ((5, 2), (2, 4)):
        result = ireebench(*args, f"--benchmark_repetitions={asked}", f"--stop_after={stop_after}")
        assert result.returncode == 0, result.stderr
        rows = result.json()["benchmarks"]
        reps = [r for r in rows if r["run_type"] == "iteration"]
        aggs = [r for r in rows if r["run_type"] == "aggregate"]
        assert [r["repetition_index"] for r in reps] == list(range(stop_after))
        assert {r["repetitions"] for r in rows} == {stop_after}
        assert {a["iterations"] for a in aggs} == {stop_after} and len(aggs) == 4
        # Asked after each repetition, the last one included.
        asked_lines = [line for line in result.stderr.splitlines() if line.startswith("ASKED")]
        assert asked_lines == [f"ASKED BM_increment {n}" for n in range(1, stop_after + 1)]


def test_default_rule_is_the_fixed_count_and_dry_run_asks_nothing(compile_mlir, ireebench):
    args = [f"--module={compile_mlir('stateful')}", "--device=local-sync",
            "--benchmark_min_time=3x", "--benchmark_format=json", "--plugin=stop_after",
            "--benchmark_repetitions=3"]
    fixed = ireebench(*args)
    assert {r["repetitions"] for r in fixed.json()["benchmarks"]} == {3}
    dry = ireebench(*args, "--benchmark_dry_run", "--stop_after=5")
    assert dry.returncode == 0 and "ASKED" not in dry.stderr
    assert len(dry.json()["benchmarks"]) == 1


def test_batch_times_are_kept_where_batches_are_timed_one_by_one(compile_mlir):
    path = compile_mlir("async", "--iree-execution-model=async-external")
    result = ireebench.run([f"--module={path}", "--device=local-task", "--function=count",
                            "--batch_size=4", "--batch_concurrency=2",
                            "--benchmark_min_time=12x", "--benchmark_repetitions=2"])
    reps = [r for r in result.runs if r.run_type == "iteration"]
    for rep in reps:
        assert len(rep.batch_samples) == 3  # 12 iterations in batches of 4
        assert math.fsum(rep.batch_samples) * 4 == pytest.approx(rep.real_accumulated_time)
    sync = _run(compile_mlir, "--benchmark_min_time=5x").runs[0]
    assert sync.batch_samples == []  # timed all at once: no per-batch clock in the loop


def test_a_failure_past_the_asked_count_keeps_rows_consistent(compile_mlir, ireebench):
    result = ireebench(f"--module={compile_mlir('fails_on_fifth_call')}", "--device=local-sync",
                       "--benchmark_min_time=1x", "--benchmark_repetitions=2",
                       "--plugin=stop_after", "--stop_after=10", "--benchmark_format=json")
    assert result.returncode == 1, result.stderr
    rows = result.json()["benchmarks"]
    assert [r.get("error_occurred", False) for r in rows if r["run_type"] == "iteration"] == \
        [False] * 4 + [True]
    assert {r["repetitions"] for r in rows} == {5}  # the count measured, on every row
