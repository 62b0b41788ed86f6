"""The ``statistics`` plugin: more aggregate rows and adaptive stopping.

* each statistic against numpy/scipy on fixed samples (percentile:
  numpy's linear interpolation; the interval of the median:
  ``scipy.stats.quantile_test``; outliers: Tukey's fences from
  ``scipy.stats.iqr``), and the interval's coverage on simulated samples;
* the rows through the real CLI: names, order, shape (Google Benchmark's
  custom statistics), values from the repetitions, a third party's
  statistic, the flags' errors;
* files with the rows are still read by Google Benchmark's compare.py;
* adaptive stopping: the target, the budget, the minimum, consistent
  ``repetitions``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats
from conftest import one_error_line, require_compare_py, run_compare_py
from ireebench.lib.statistics import outlier_fraction, percentile, relative_precision
from ireebench.results import Run
from ireebench.stats import (
    STATISTICS,
    Statistic,
    compute_aggregates,
    median_ci,
    median_ci_rank,
    minimum_repetitions,
)

LOCAL = "--device=local-sync"
# Fixed samples: skewed, with ties, with an outlier, tiny and larger.
SAMPLES = [
    [1.0, 2.0],
    [3.0, 1.0, 2.0],
    [0.5, 0.7, 0.7, 0.9, 1.3, 0.6],
    [10.2, 10.4, 10.1, 10.3, 14.9, 10.2, 10.5, 10.3, 10.0, 10.6],
    list(np.random.default_rng(7).lognormal(0.0, 0.4, 37)),
    list(np.random.default_rng(8).normal(5.0, 1.0, 100)),
]
QUANTILES = [0, 1, 5, 25, 50, 75, 90, 99, 99.9, 100]


@pytest.mark.parametrize("values", SAMPLES)
def test_percentiles_are_numpys_linear_interpolation(values):
    for q in QUANTILES:
        expected = np.percentile(values, q, method="linear")
        assert percentile(values, q) == pytest.approx(expected, rel=1e-12), q
    assert percentile(values, 50) == pytest.approx(np.median(values), rel=1e-12)


@pytest.mark.parametrize("values", SAMPLES)
def test_outlier_fraction_is_tukeys_fences(values):
    q1, q3 = np.percentile(values, [25, 75])
    iqr = scipy.stats.iqr(values)
    assert q3 - q1 == pytest.approx(iqr)
    data = np.asarray(values)
    outside = np.count_nonzero((data < q1 - 1.5 * iqr) | (data > q3 + 1.5 * iqr))
    assert outlier_fraction(values) == pytest.approx(outside / len(values))


def test_outlier_fraction_of_a_fixed_sample():
    assert outlier_fraction(SAMPLES[3]) == pytest.approx(0.1)  # 14.9, one in ten


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("values", SAMPLES)
def test_median_interval_is_scipys_quantile_test_interval(values, confidence):
    expected = scipy.stats.quantile_test(values, q=float(np.median(values)), p=0.5) \
        .confidence_interval(confidence_level=confidence)
    found = median_ci(values, confidence)
    if math.isnan(expected.low) or math.isnan(expected.high):
        assert found is None
        return
    assert found == (pytest.approx(expected.low), pytest.approx(expected.high))
    precision = relative_precision(values, confidence)
    assert precision == pytest.approx((expected.high - expected.low) / (2 * np.median(values)))


def test_interval_rank_and_minimum_repetitions_from_the_binomial():
    for confidence in (0.9, 0.95, 0.99):
        for n in range(2, 60):
            k = median_ci_rank(n, confidence)
            def coverage(rank, n=n):
                return 1 - 2 * scipy.stats.binom.cdf(rank - 1, n, 0.5)
            if k is None:
                assert coverage(1) < confidence
            else:
                assert coverage(k) >= confidence - 1e-12
                assert k == (n + 1) // 2 or coverage(k + 1) < confidence
    assert minimum_repetitions(0.95) == 6
    assert minimum_repetitions(0.99) == 8
    assert minimum_repetitions(0.9) == 5


@pytest.mark.parametrize("n, confidence", [(10, 0.95), (25, 0.9), (40, 0.99)])
def test_interval_coverage_on_simulated_samples(n, confidence):
    """On 4000 skewed samples the interval holds the true median as often as promised."""
    trials = 4000
    rng = np.random.default_rng(12345 + n)
    true_median = 1.0  # log-normal(0, sigma): the median is exp(0)
    data = rng.lognormal(0.0, 0.8, size=(trials, n))
    covered = 0
    for row in data:
        low, high = median_ci(list(row), confidence)
        covered += low <= true_median <= high
    observed = covered / trials
    k = median_ci_rank(n, confidence)
    exact = 1 - 2 * scipy.stats.binom.cdf(k - 1, n, 0.5)  # the order statistics' coverage
    assert exact >= confidence
    assert abs(observed - exact) < 4 * math.sqrt(exact * (1 - exact) / trials), (observed, exact)


def _rep(real, iterations=10):
    return Run(name="BM_x", run_name="BM_x/process_time/real_time", iterations=iterations,
               real_accumulated_time=real, cpu_accumulated_time=real / 2, repetitions=4)


def test_statistic_rows_have_google_benchmarks_custom_statistic_shape():
    reps = [_rep(1.0), _rep(2.0), _rep(4.0), _rep(3.0)]
    extra = [Statistic("max", max), Statistic("spread", lambda v: max(v) / min(v) - 1,
                                                "percentage"),
             Statistic("never", lambda v: None)]
    rows = compute_aggregates(reps, STATISTICS + extra)
    assert [r.benchmark_name for r in rows] == [
        f"BM_x/process_time/real_time_{name}"
        for name in ("mean", "median", "stddev", "cv", "max", "spread")]
    top, spread = rows[4], rows[5]
    assert (top.run_type, top.aggregate_name, top.aggregate_unit) == ("aggregate", "max", "time")
    assert top.iterations == 4 and top.repetitions == 4 and top.repetition_index is None
    assert top.real_time == pytest.approx(400.0)  # ms per iteration: 4.0 s / 10
    assert top.cpu_time == pytest.approx(200.0)
    assert spread.aggregate_unit == "percentage" and spread.real_time == pytest.approx(3.0)


# --- through the CLI ----------------------------------------------------------------


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir("two_functions")


def _report(result) -> dict:
    assert result.returncode == 0, result.stderr
    return result.json()


def _rows(report: dict, run_name: str) -> tuple[list[dict], dict[str, dict]]:
    reps = [b for b in report["benchmarks"]
            if b["run_name"] == run_name and b["run_type"] == "iteration"]
    aggs = {b["aggregate_name"]: b for b in report["benchmarks"]
            if b["run_name"] == run_name and b["run_type"] == "aggregate"}
    return reps, aggs


def test_rows_follow_googles_aggregates_in_flag_order(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=20x",
                       "--benchmark_repetitions=8", "--benchmark_format=json",
                       "--benchmark_statistics=p50,p90,min,max,ci,outliers,precision,p90")
    report = _report(result)
    name = "BM_first/process_time/real_time"
    reps, aggs = _rows(report, name)
    assert list(aggs) == ["mean", "median", "stddev", "cv", "p50", "p90", "min", "max",
                          "ci_lower", "ci_upper", "outliers", "precision"]
    ordered = [b["name"] for b in report["benchmarks"] if b["run_name"] == name]
    assert ordered[8:] == [f"{name}_{a}" for a in list(aggs)]  # right after the 8 repetitions
    times = [r["real_time"] for r in reps]
    cpu = [r["cpu_time"] for r in reps]
    rates = [r["items_per_second"] for r in reps]
    expected = {
        "p50": np.percentile(times, 50), "p90": np.percentile(times, 90),
        "min": min(times), "max": max(times),
    }
    interval = scipy.stats.quantile_test(times, q=float(np.median(times))) \
        .confidence_interval(0.95)
    expected["ci_lower"], expected["ci_upper"] = interval.low, interval.high
    for stat, value in expected.items():
        row = aggs[stat]
        assert row["aggregate_unit"] == "time" and row["time_unit"] == "ms"
        assert row["real_time"] == pytest.approx(value, rel=1e-9), stat
        assert row["iterations"] == 8 and row["repetitions"] == 8
    assert aggs["p50"]["real_time"] == pytest.approx(aggs["median"]["real_time"])
    assert aggs["p90"]["cpu_time"] == pytest.approx(np.percentile(cpu, 90), rel=1e-9)
    assert aggs["max"]["items_per_second"] == pytest.approx(max(rates), rel=1e-9)
    assert aggs["outliers"]["aggregate_unit"] == "percentage"
    assert aggs["outliers"]["real_time"] == pytest.approx(outlier_fraction(times))
    assert aggs["precision"]["aggregate_unit"] == "percentage"
    assert aggs["precision"]["real_time"] == pytest.approx(
        (interval.high - interval.low) / (2 * np.median(times)), rel=1e-9)
    assert report["context"]["statistics"] == [
        "p50", "p90", "min", "max", "ci_lower", "ci_upper", "outliers", "precision"]
    assert report["context"]["statistics_confidence"] == 0.95


def test_no_interval_rows_below_its_minimum(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=5x",
                       "--benchmark_repetitions=5", "--benchmark_format=json",
                       "--benchmark_statistics=ci,max", "--confidence=0.95")
    _, aggs = _rows(_report(result), "BM_first/process_time/real_time")
    assert list(aggs) == ["mean", "median", "stddev", "cv", "max"]
    notes = [line for line in result.stderr.splitlines() if line.startswith("ireebench:")]
    assert notes == [("ireebench: note: the 0.95 confidence interval of the median needs 6+ "
                     "repetitions; BM_first/process_time/real_time has 5: no "
                     "_ci_lower/_ci_upper/_precision rows")]
    # A lower confidence needs fewer repetitions (5 at 0.9).
    lower = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=5x",
                      "--benchmark_repetitions=5", "--benchmark_format=json",
                      "--benchmark_statistics=ci", "--confidence=0.9")
    _, aggs = _rows(_report(lower), "BM_first/process_time/real_time")
    assert "ci_lower" in aggs and "ireebench:" not in lower.stderr


def test_one_repetition_has_no_aggregates_and_console_fits_the_names(ireebench, module):
    single = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_format=json", "--benchmark_statistics=p99")
    assert [b["run_type"] for b in _report(single)["benchmarks"]] == ["iteration"] * 2
    console = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                        "--benchmark_repetitions=6", "--benchmark_statistics=ci,outliers")
    assert console.returncode == 0, console.stderr
    lines = [line for line in console.stdout.splitlines() if line.startswith("BM_")]
    assert len(lines) == 2 * (6 + 4 + 3)
    width = len("BM_second/process_time/real_time_ci_lower")
    for line in lines:  # Google Benchmark's column: the longest name + 1
        assert line[width] == " " and line[:width].rstrip() == line.split()[0], line
    outliers = [line for line in lines if "_outliers" in line]
    assert all(" %" in line for line in outliers)


def test_csv_has_the_rows(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_repetitions=3", "--benchmark_format=csv",
                       "--benchmark_statistics=p90,outliers")
    assert result.returncode == 0, result.stderr
    names = [line.split(",")[0] for line in result.stdout.splitlines()[1:]]
    assert '"BM_first/process_time/real_time_p90"' in names
    outliers = next(line for line in result.stdout.splitlines() if "_outliers" in line)
    assert outliers.split(",")[4] == ""  # a percentage has no time unit, like _cv


def test_third_party_statistic(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_repetitions=10", "--benchmark_format=json",
                       "--plugin=statistic_trimmed_mean",
                       "--benchmark_statistics=trimmed_mean,p90")
    reps, aggs = _rows(_report(result), "BM_second/process_time/real_time")
    assert list(aggs)[4:] == ["trimmed_mean", "p90"]
    times = [r["real_time"] for r in reps]
    assert aggs["trimmed_mean"]["real_time"] == pytest.approx(
        scipy.stats.trim_mean(times, 0.1), rel=1e-9)


def test_statistic_defined_twice_names_both_plugins(ireebench, module):
    line = one_error_line(ireebench(f"--module={module}", "--plugin=statistic_clash",
                                    "--benchmark_statistics=min"))
    assert line == ("ireebench: error: statistic 'min' is defined by two plugins: "
                    "'statistic_clash' and 'statistics'")


@pytest.mark.parametrize("flags, message", [
    (["--benchmark_statistics=p90,bogus"],
     ("--benchmark_statistics=p90,bogus: unknown statistic 'bogus' (known: ci, max, min, "
     "modes, outliers, pNN, precision)")),
    (["--benchmark_statistics=p101"],
     ("--benchmark_statistics=p101: unknown statistic 'p101' (known: ci, max, min, modes, "
     "outliers, pNN, precision)")),
    (["--benchmark_statistics=median"],
     "--benchmark_statistics=median: 'median' is always reported (with 2+ repetitions)"),
    (["--benchmark_statistics=ci", "--confidence=1.5"],
     "--confidence=1.5: expected a confidence level between 0 and 1"),
    (["--confidence=abc"], "--confidence=abc: expected a confidence level between 0 and 1"),
    (["--benchmark_min_rel_accuracy=-0.1"],
     ("--benchmark_min_rel_accuracy=-0.1: expected a positive fraction (0.01: the median "
     "within +-1 %)")),
    (["--benchmark_max_time=5s"], ("--benchmark_max_time=5s: requires "
     "--benchmark_min_rel_accuracy")),
    (["--benchmark_min_rel_accuracy=0.01", "--benchmark_max_time=0"],
     "--benchmark_max_time=0: expected a positive `<float>s` (seconds)"),
    (["--benchmark_min_rel_accuracy=0.01", "--backend=native"],
     ("--benchmark_min_rel_accuracy=0.01: needs a backend that decides the repetitions one at "
      "a time (capability 'adaptive_repetitions'); --backend=native does not have it")),
])
def test_bad_flags_are_one_line(ireebench, module, flags, message):
    line = one_error_line(ireebench(f"--module={module}", LOCAL, *flags))
    assert line == f"ireebench: error: {message}"


def test_compare_py_reads_files_with_the_statistics(module, ireebench, native_tool, tmp_path):
    require_compare_py()  # before any run: skipped early without it
    flags = [f"--module={module}", LOCAL, "--benchmark_min_time=3x",
             "--benchmark_repetitions=6", "--benchmark_out_format=json"]
    native = native_tool("iree-benchmark-module", *flags,
                         f"--benchmark_out={tmp_path / 'native.json'}")
    ours = ireebench(*flags, "--benchmark_statistics=p90,min,max,ci,outliers,precision",
                     "--benchmark_cold_start", f"--benchmark_out={tmp_path / 'ours.json'}")
    adaptive = ireebench(*flags, "--benchmark_min_rel_accuracy=0.5",
                         f"--benchmark_out={tmp_path / 'adaptive.json'}")
    assert native.returncode == ours.returncode == adaptive.returncode == 0, ours.stderr
    dump = tmp_path / "diff.json"
    for first, second in (("native", "ours"), ("ours", "native"), ("ours", "adaptive")):
        proc = run_compare_py(tmp_path / f"{first}.json", tmp_path / f"{second}.json", dump)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert "Traceback" not in proc.stderr
        compared = {entry["name"] for entry in json.loads(dump.read_text())}
        name = "BM_first/process_time/real_time"
        assert {f"{name}_mean", f"{name}_median"} <= compared
        if "native" not in (first, second):
            assert {f"{name}_precision"} <= compared
        if first == "ours" and second == "native":
            assert f"{name}_p90" not in compared  # only in one file: left out, no error


# --- adaptive stopping -------------------------------------------------------------


def _repetition_counts(report: dict) -> dict[str, set[int]]:
    counts: dict[str, set[int]] = {}
    for row in report["benchmarks"]:
        counts.setdefault(row["run_name"], set()).add(row["repetitions"])
    return counts


def test_adaptive_stopping_reaches_an_easy_target_at_the_minimum(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_min_rel_accuracy=1000", "--benchmark_format=json")
    report = _report(result)
    assert _repetition_counts(report) == {"BM_first/process_time/real_time": {6},
                                          "BM_second/process_time/real_time": {6}}
    reps, aggs = _rows(report, "BM_first/process_time/real_time")
    assert len(reps) == 6 and [r["repetition_index"] for r in reps] == list(range(6))
    assert list(aggs) == ["mean", "median", "stddev", "cv", "precision"]
    assert aggs["precision"]["iterations"] == 6
    assert aggs["precision"]["real_time"] <= 1000
    assert report["context"]["min_rel_accuracy"] == 1000
    assert "warning" not in result.stderr


def test_adaptive_stopping_keeps_at_least_the_asked_repetitions(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_min_rel_accuracy=1000", "--benchmark_repetitions=9",
                       "--benchmark_format=json", "--benchmark_filter=first")
    assert _repetition_counts(_report(result)) == {"BM_first/process_time/real_time": {9}}


def test_adaptive_stopping_stops_at_the_budget_and_says_so(ireebench, module):
    """A target no run reaches: each benchmark stops at its budget and says so, and
    every row agrees on the count measured. How many repetitions fit in 0.3 s is
    the machine's (benchmarks/timing_bounds.py measures it): a busy one may stop
    short of the interval's 6, and then the _precision row is missing, as a note
    says."""
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=2000x",
                       "--benchmark_min_rel_accuracy=1e-12", "--benchmark_max_time=0.3s",
                       "--benchmark_format=json", "--benchmark_statistics=ci")
    report = _report(result)
    warnings = [line for line in result.stderr.splitlines()
                if line.startswith("ireebench: warning:")]
    assert len(warnings) == 2, result.stderr
    for function, line in zip(("first", "second"), warnings):
        assert line.startswith(f"ireebench: warning: BM_{function}/process_time/real_time: "
                               "--benchmark_max_time=0.3s spent after "), line
        assert line.endswith("--benchmark_min_rel_accuracy=1e-12 not reached"), line
    counts = _repetition_counts(report)
    assert list(counts) == [f"BM_{function}/process_time/real_time"
                            for function in ("first", "second")]
    for run_name, found in counts.items():
        (count,) = found  # every row of a benchmark agrees
        reps, aggs = _rows(report, run_name)
        assert count == len(reps) >= 1
        assert f"{run_name}: --benchmark_max_time=0.3s spent after {count} repetitions" \
            in result.stderr
        if count >= 6:
            assert aggs["precision"]["iterations"] == count
            assert aggs["precision"]["real_time"] > 1e-12
        else:
            assert "precision" not in aggs
    notes = [line for line in result.stderr.splitlines() if line.startswith("ireebench: note:")]
    assert len(notes) == any(2 <= len(_rows(report, name)[0]) < 6 for name in counts), notes


def test_adaptive_stopping_is_off_by_default(ireebench, module):
    result = ireebench(f"--module={module}", LOCAL, "--benchmark_min_time=3x",
                       "--benchmark_repetitions=2", "--benchmark_format=json")
    report = _report(result)
    assert {r["aggregate_name"] for r in report["benchmarks"] if r["run_type"] == "aggregate"} \
        == {"mean", "median", "stddev", "cv"}
    assert "statistics" not in report["context"]
