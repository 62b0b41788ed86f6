"""Reading benchmark files and judging a comparison (core/comparison/inputs.py, model.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ireebench import UsageError
from ireebench.comparison import (
    CANNOT_JUDGE,
    FASTER,
    INCONCLUSIVE,
    NO_CHANGE,
    NOT_COMPARED,
    SLOWER,
    CompareOptions,
    compare,
    parse_threshold,
    read_benchmark_file,
)


def _row(name, real, unit="ms", **extra):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
            "threads": 1, "iterations": 10, "real_time": real, "cpu_time": real * 1.01,
            "time_unit": unit, **extra}


def _aggregate(name, aggregate, value, unit="ms", aggregate_unit="time"):
    return {"name": f"{name}_{aggregate}", "run_name": name, "run_type": "aggregate",
            "aggregate_name": aggregate, "aggregate_unit": aggregate_unit, "iterations": 10,
            "real_time": value, "cpu_time": value, "time_unit": unit}


def _report(path, benchmarks, context=None):
    path.write_text(json.dumps({"context": context or {"host_name": "h"},
                                "benchmarks": benchmarks}))
    return str(path)


def _file(tmp_path, name, samples: dict[str, list[float]], unit="ms", context=None):
    rows = []
    for bench, values in samples.items():
        rows += [_row(bench, v, unit, repetition_index=i) for i, v in enumerate(values)]
        rows += [_aggregate(bench, "mean", float(np.mean(values)), unit),
                 _aggregate(bench, "p90", float(np.max(values)), unit),
                 _aggregate(bench, "cv", 0.01, unit, "percentage")]
    return read_benchmark_file(_report(tmp_path / name, rows, context))


RNG = np.random.default_rng(3)
BASE = list(1.0 + 0.01 * RNG.standard_normal(12))


# --- reading ------------------------------------------------------------------


def test_reads_repetitions_in_seconds_and_skips_other_aggregates(tmp_path):
    rows = [_row("BM_a", 2.0, "ms"), _row("BM_a", 3.0, "ms"),
            _aggregate("BM_a", "mean", 2.5), _aggregate("BM_a", "p90", 2.9),
            _aggregate("BM_a", "cv", 0.2, aggregate_unit="percentage"),
            {"name": "BM_a_BigO", "run_name": "BM_a", "run_type": "aggregate",
             "aggregate_name": "BigO", "cpu_coefficient": 1.0, "big_o": "N",
             "time_unit": "ns"},
            _row("BM_b", 7.0, "us")]
    report = read_benchmark_file(_report(tmp_path / "a.json", rows))
    assert list(report.benchmarks) == ["BM_a", "BM_b"]
    a = report.benchmarks["BM_a"]
    assert a.values("real_time") == ([0.002, 0.003], "repetitions")
    assert a.values("cpu_time")[0] == pytest.approx([0.00202, 0.00303])
    assert set(a.aggregates) == {"mean", "p90"}
    assert report.benchmarks["BM_b"].values("real_time") == ([7e-6], "repetitions")


def test_aggregates_only_file_falls_back_to_the_median(tmp_path):
    rows = [_aggregate("BM_a", "mean", 2.5), _aggregate("BM_a", "median", 2.0)]
    rows_b = [_aggregate("BM_a", "mean", 2.5)]
    assert read_benchmark_file(_report(tmp_path / "a.json", rows)).benchmarks["BM_a"] \
        .values("real_time") == ([0.002], "median aggregate")
    assert read_benchmark_file(_report(tmp_path / "b.json", rows_b)).benchmarks["BM_a"] \
        .values("real_time") == ([0.0025], "mean aggregate")


def test_error_rows_are_kept_as_messages(tmp_path):
    rows = [_row("BM_a", 1.0), {**_row("BM_a", 0.0), "error_occurred": True,
                                "error_message": "boom\nat line 2"}]
    a = read_benchmark_file(_report(tmp_path / "a.json", rows)).benchmarks["BM_a"]
    assert a.errors == ["boom at line 2"]
    assert a.values("real_time")[0] == [0.001]


def test_text_after_the_report_is_ignored(tmp_path):
    path = tmp_path / "stdout.txt"
    path.write_text(json.dumps({"benchmarks": [_row("BM_a", 1.0)]}) + "\nEXEC @a\nresult[0]: 1\n")
    assert list(read_benchmark_file(str(path)).benchmarks) == ["BM_a"]


@pytest.mark.parametrize("content, message", [
    (None, "file not found"),
    ("", "file is empty"),
    ("not json", "not JSON (Expecting value: line 1 column 1 (char 0))"),
    ("[1, 2]", 'not a Google Benchmark JSON report (no "benchmarks" list)'),
    ('{"context": {}}', 'not a Google Benchmark JSON report (no "benchmarks" list)'),
    ('{"benchmarks": [3]}', "benchmark #1: not a JSON object"),
    ('{"benchmarks": [{"real_time": 1}]}', "benchmark #1: no name"),
    ('{"benchmarks": [{"name": "BM_a", "real_time": "x", "cpu_time": 1, "time_unit": "ms"}]}',
     "benchmark #1 (BM_a): real_time is not a finite number ('x')"),
    ('{"benchmarks": [{"name": "BM_a", "real_time": 1, "cpu_time": 1, "time_unit": "h"}]}',
     "benchmark #1 (BM_a): unknown time_unit 'h'"),
    ('{"benchmarks": [{"name": "BM_a", "real_time": 1, "cpu_time": 1, "time_unit": ["ns"]}]}',
     "benchmark #1 (BM_a): unknown time_unit ['ns'] (one of ns, us, ms, s)"),
    ('{"benchmarks": [{"name": "BM_a", "real_time": 1e308, "cpu_time": 1, "time_unit": "s"}]}',
     ("benchmark #1 (BM_a): real_time 1e+308 s is not a time a benchmark takes (between "
     "1e-24 s and 1e+24 s per iteration)")),
    ('{"benchmarks": [{"name": "BM_a", "real_time": 1, "cpu_time": 5e-324, "time_unit": "s"}]}',
     "benchmark #1 (BM_a): cpu_time 4.94066e-324 s is not a time a benchmark takes"),
    ("[" * 100000, "not JSON"),
])
def test_bad_files_are_one_line(tmp_path, content, message):
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError) as error:
        read_benchmark_file(str(path))
    assert str(error.value).startswith(f"compare: {path}: {message}")
    assert "\n" not in str(error.value)


def test_a_directory_is_not_a_report(tmp_path):
    with pytest.raises(UsageError, match="is a directory"):
        read_benchmark_file(str(tmp_path))


# --- thresholds ---------------------------------------------------------------


@pytest.mark.parametrize("text, fraction, pattern", [
    ("5%", 0.05, ""), ("0%", 0.0, ""), ("2.5%", 0.025, ""),
    ("BM_matmul.*=10%", 0.10, "BM_matmul.*"), ("a=b=5%", 0.05, "a=b"),
])
def test_threshold_grammar(text, fraction, pattern):
    threshold = parse_threshold(text)
    assert threshold.fraction == pytest.approx(fraction)
    assert threshold.pattern == pattern


@pytest.mark.parametrize("text, reason", [
    ("5", "expected a percentage"), ("0.05", "expected a percentage"),
    ("-1%", ">= 0"), ("abc%", ">= 0"), ("nan%", ">= 0"), ("=5%", "empty pattern"),
    ("(=5%", "invalid regex"),
])
def test_bad_thresholds_name_the_flag(text, reason):
    with pytest.raises(UsageError) as error:
        parse_threshold(text)
    assert str(error.value).startswith(f"--threshold={text}: ")
    assert reason in str(error.value)


def test_a_pattern_threshold_wins_over_a_plain_one_whatever_the_order():
    options = CompareOptions(thresholds=(parse_threshold("BM_mat.*=10%"),
                                         parse_threshold("5%"),
                                         parse_threshold("BM_matmul_big=20%")))
    assert options.threshold_for("BM_matmul_big/process_time").fraction == 0.20
    assert options.threshold_for("BM_matmul_small").fraction == 0.10
    assert options.threshold_for("BM_add").fraction == 0.05
    assert CompareOptions().threshold_for("BM_add") is None


# --- verdicts -----------------------------------------------------------------


def test_same_samples_no_significant_change(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE})
    result = compare(old, old, CompareOptions())
    [bench] = result.benchmarks
    assert bench.verdict == NO_CHANGE and bench.change == pytest.approx(0.0)
    assert bench.pvalue == pytest.approx(1.0, abs=0.05)
    assert bench.low < 0 < bench.high
    assert result.exit_status == 0 and result.regressions == []


def test_slower_beyond_and_within_its_threshold(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE, "BM_b": BASE})
    new = _file(tmp_path, "b.json", {"BM_a": [2 * v for v in BASE], "BM_b": BASE})
    options = CompareOptions(thresholds=(parse_threshold("5%"),))
    result = compare(old, new, options)
    a, b = result.benchmarks
    assert a.verdict == SLOWER and a.regression and a.change == pytest.approx(1.0, rel=0.05)
    assert a.low > 0.5 and a.pvalue < 0.001 and a.method == "asymptotic"
    assert b.verdict == NO_CHANGE and not b.regression
    assert result.exit_status == 1 and [r.name for r in result.regressions] == ["BM_a"]
    assert result.geomean_change == pytest.approx(np.sqrt(2.0) - 1.0, rel=0.05)
    lenient = compare(old, new, CompareOptions(thresholds=(parse_threshold("BM_a=150%"),)))
    assert lenient.benchmarks[0].verdict == SLOWER
    assert not lenient.benchmarks[0].regression and lenient.exit_status == 0


def test_faster_is_never_a_regression(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE})
    new = _file(tmp_path, "b.json", {"BM_a": [v / 3 for v in BASE]})
    result = compare(old, new, CompareOptions())
    assert result.benchmarks[0].verdict == FASTER and result.exit_status == 0


def test_fewer_than_nine_repetitions_is_inconclusive(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE[:5]})
    new = _file(tmp_path, "b.json", {"BM_a": [10 * v for v in BASE[:5]]})
    [bench] = compare(old, new, CompareOptions()).benchmarks
    assert bench.verdict == INCONCLUSIVE and not bench.regression
    assert bench.pvalue < 0.05 and bench.method == "exact"  # shown, but no verdict
    assert any("fewer than 9 repetitions a side (5 vs 5)" in note for note in bench.notes)


def test_failed_benchmark_is_not_compared(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE, "BM_b": BASE})
    rows = [{**_row("BM_a", 0.0), "error_occurred": True, "error_message": "boom"},
            *(_row("BM_b", v, repetition_index=i) for i, v in enumerate(BASE))]
    new = read_benchmark_file(_report(tmp_path / "b.json", rows))
    result = compare(old, new, CompareOptions())
    bench = result.benchmarks[0]
    assert bench.verdict == NOT_COMPARED and bench.change is None
    assert "1 failed row(s) in new: boom" in bench.notes and "no time in new" in bench.notes
    assert result.geomean_count == 1 and result.exit_status == 0


def test_a_file_whose_every_row_failed_says_so(tmp_path):
    """Not "no row has real_time (their metrics: none)": every row failed, and the first
    error is named (issue 26 item 4)."""
    rows = [{**_row(name, 0.0), "error_occurred": True, "error_message": f"{name} crashed"}
            for name in ("BM_a", "BM_b")]
    old = read_benchmark_file(_report(tmp_path / "a.json", rows))
    new = read_benchmark_file(_report(tmp_path / "b.json", rows))
    with pytest.raises(UsageError) as error:
        compare(old, new, CompareOptions())
    assert str(error.value) == (f"compare: {old.path}: every row failed (2 error row(s) in 2 "
                                "benchmark(s); the first: BM_a: BM_a crashed)")


def test_benchmarks_in_one_file_only_and_none_in_common(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE, "BM_old": BASE})
    new = _file(tmp_path, "b.json", {"BM_a": BASE, "BM_new": BASE})
    result = compare(old, new, CompareOptions())
    assert [b.name for b in result.benchmarks] == ["BM_a"]
    assert result.only_old == ["BM_old"] and result.only_new == ["BM_new"]
    other = _file(tmp_path, "c.json", {"BM_z": BASE})
    with pytest.raises(UsageError, match="have no benchmark in common"):
        compare(old, other, CompareOptions())


def test_context_differences_are_noted(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE},
                context={"host_name": "a", "executable": "/x/iree-benchmark-module"})
    new = _file(tmp_path, "b.json", {"BM_a": BASE},
                context={"host_name": "b", "executable": "/y/__main__.py",
                         "ireebench_version": "0.1.0", "iree_devices": ["local-task"]})
    notes = compare(old, new, CompareOptions()).notes
    assert notes == ["old and new ran on different hosts (a and b)",
                     "old was measured by iree-benchmark-module, new by ireebench"]


def test_cpu_time_metric_and_json_shape(tmp_path):
    old = _file(tmp_path, "a.json", {"BM_a": BASE})
    result = compare(old, old, CompareOptions(metric="cpu_time"))
    assert result.benchmarks[0].old == pytest.approx(float(np.median(BASE)) * 1.01e-3)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["metric"] == "cpu_time" and data["exit_status"] == 0
    assert data["benchmarks"][0]["verdict"] == NO_CHANGE
    assert set(data["counts"]) == {FASTER, SLOWER, NO_CHANGE, INCONCLUSIVE, NOT_COMPARED,
                                   CANNOT_JUDGE}


# --- metrics beyond the real time (--metric=NAME) -----------------------------


def _metric_file(tmp_path, name, values: list, key: str, context=None, **extra):
    """A file whose BM_a repetitions have ``key`` = each value (and real times that vary)."""
    rows = [_row("BM_a", BASE[i], repetition_index=i, **{key: value}, **extra)
            for i, value in enumerate(values)]
    return read_benchmark_file(_report(tmp_path / name, rows, context))


def test_every_number_of_a_row_is_a_metric_times_in_seconds(tmp_path):
    rows = [_row("BM_a", 2.0, "ms", device_time=1.5, max_bytes_used=4096, flops=3e9,
                 params={"bs": 4}, label="x")]
    a = read_benchmark_file(_report(tmp_path / "a.json", rows)).benchmarks["BM_a"]
    assert a.values("device_time") == ([0.0015], "repetitions")
    assert a.values("max_bytes_used") == ([4096.0], "repetitions")
    assert a.values("flops") == ([3e9], "repetitions")
    assert "iterations" not in a.metrics and "repetition_index" not in a.metrics
    assert "params" not in a.metrics and "label" not in a.metrics


def test_constant_values_are_compared_exactly(tmp_path):
    small = _metric_file(tmp_path, "a.json", [1000] * 3, "max_bytes_used")
    large = _metric_file(tmp_path, "b.json", [8000] * 3, "max_bytes_used")
    slightly = _metric_file(tmp_path, "c.json", [1030] * 3, "max_bytes_used")
    options = CompareOptions(metric="max_bytes_used")
    result = compare(small, large, options)
    (b,) = result.benchmarks
    assert (b.verdict, b.regression, b.pvalue, b.method) == (SLOWER, True, None, "equal values")
    assert b.change == pytest.approx(7.0) and b.time_unit == ""
    assert result.exit_status == 1
    # An exact comparison counts in the geometric mean like any other.
    assert (result.geomean_change, result.geomean_count) == (pytest.approx(7.0), 1)
    assert compare(large, small, options).exit_status == 0  # smaller: better
    assert compare(large, small, options).benchmarks[0].verdict == FASTER
    same = compare(small, small, options).benchmarks[0]
    assert (same.verdict, same.change, same.regression) == (NO_CHANGE, 0.0, False)
    # A change within the threshold is no verdict; beyond it, one (no U test).
    within = CompareOptions(metric="max_bytes_used", thresholds=(parse_threshold("5%"),))
    assert compare(small, slightly, within).benchmarks[0].verdict == NO_CHANGE
    assert compare(small, large, within).exit_status == 1
    # One repetition a side is enough: nothing varies.
    one, other = (_metric_file(tmp_path, n, [v], "max_bytes_used")
                  for n, v in (("d.json", 1000), ("e.json", 2000)))
    assert compare(one, other, options).exit_status == 1


def test_from_zero_is_a_change_beyond_every_threshold(tmp_path):
    zero = _metric_file(tmp_path, "a.json", [0, 0], "max_bytes_used")
    some = _metric_file(tmp_path, "b.json", [512, 512], "max_bytes_used")
    options = CompareOptions(metric="max_bytes_used", thresholds=(parse_threshold("50%"),))
    b = compare(zero, some, options).benchmarks[0]
    assert (b.verdict, b.change, b.regression) == (SLOWER, None, True)
    assert compare(zero, zero, options).benchmarks[0].verdict == NO_CHANGE


def test_a_rate_is_better_higher(tmp_path):
    slow = [1e9 * v for v in BASE]
    fast = [2e9 * v for v in BASE]
    for key, context in (("items_per_second", None), ("flops", {"rate_counters": ["flops"]})):
        old = _metric_file(tmp_path, f"{key}_a.json", slow, key, context)
        new = _metric_file(tmp_path, f"{key}_b.json", fast, key, context)
        options = CompareOptions(metric=key)
        better = compare(old, new, options)
        assert better.higher_is_better and better.benchmarks[0].verdict == FASTER
        assert better.exit_status == 0
        worse = compare(new, old, options)
        assert worse.benchmarks[0].verdict == SLOWER and worse.exit_status == 1
    # Without rate_counters a counter is judged lower-is-better, unless told.
    old = _metric_file(tmp_path, "c.json", slow, "flops")
    new = _metric_file(tmp_path, "d.json", fast, "flops")
    assert compare(old, new, CompareOptions(metric="flops")).exit_status == 1
    assert compare(old, new, CompareOptions(metric="flops", higher_is_better=True)) \
        .exit_status == 0


def test_device_time_is_a_time(tmp_path):
    old = _metric_file(tmp_path, "a.json", list(BASE), "device_time")
    new = _metric_file(tmp_path, "b.json", [2 * v for v in BASE], "device_time")
    b = compare(old, new, CompareOptions(metric="device_time")).benchmarks[0]
    assert b.time_unit == "ms" and b.method in ("exact", "asymptotic")
    assert b.verdict == SLOWER and b.regression
    assert b.old == pytest.approx(float(np.median(BASE)) * 1e-3)
    # Times of one value a side are not "constant": no verdict from them.
    one = _metric_file(tmp_path, "c.json", [1.0], "device_time")
    two = _metric_file(tmp_path, "d.json", [2.0], "device_time")
    assert compare(one, two, CompareOptions(metric="device_time")).benchmarks[0].verdict \
        == INCONCLUSIVE


def test_a_metric_neither_file_has_is_a_usage_error(tmp_path):
    old = _metric_file(tmp_path, "a.json", [1, 1], "max_bytes_used")
    with pytest.raises(UsageError, match=r"--metric=flops: no row of .* has it \(their "
                                         r"metrics: cpu_time, max_bytes_used, real_time\)"):
        compare(old, old, CompareOptions(metric="flops"))
    # A metric only some benchmarks have: the others are not compared.
    rows = [_row("BM_a", 1.0, max_bytes_used=5), _row("BM_b", 1.0)]
    both = read_benchmark_file(_report(tmp_path / "b.json", rows))
    result = compare(both, both, CompareOptions(metric="max_bytes_used"))
    assert [b.verdict for b in result.benchmarks] == [NO_CHANGE, NOT_COMPARED]
    assert result.benchmarks[1].notes == ["no max_bytes_used in old and new"]
