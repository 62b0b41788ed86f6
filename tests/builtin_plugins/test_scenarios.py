"""``--scenario``: LoadGen's scenarios on real compiled async modules.

examples/serving/serving.mlir: @spin(n) runs a chain of n multiply-adds
(a service time set by its input), @stall(n, every, extra) the same with
every ``every``-th call ``extra`` steps longer (a stall inside the function).
Nothing here asserts a time: the schedule is seeded (its statistics are
the same on every machine), the verdicts come from counts and from bounds
no load can cross (1 ns, 100 s), and the stall is found in the per-query
log by what the lane's order guarantees.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

import pytest
from conftest import ROOT, one_error_line, plugin_error_line
from ireebench.plugins.scenarios.search import MAX_QPS

ASYNC = "--iree-execution-model=async-external"
SERVING = (ROOT / "examples" / "serving" / "serving.mlir").read_text()
SPIN = ("--function=spin", "--input=i32=20000")
FAST = ("--benchmark_min_time=1x", "--min_duration=0")


@pytest.fixture(scope="module")
def serving(compile_mlir):
    return compile_mlir(SERVING, ASYNC)


def _rows(result) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["benchmarks"]


def _log(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run(ireebench, serving, *args):
    return ireebench(f"--module={serving}", *SPIN, *FAST, "--benchmark_format=json", *args)


def test_server_schedule_is_seeded_poisson(ireebench, serving, tmp_path):
    base = ("--scenario=server", "--target_qps=2000", "--min_query_count=1000")
    seeds, bursts = tmp_path / "seeds.jsonl", tmp_path / "bursts.jsonl"
    rows = _rows(_run(ireebench, serving, *base, "--sweep", "scenario_seed=0,1",
                      f"--scenario_log={seeds}"))
    assert [row["name"] for row in rows] == [
        f"BM_spin/scenario_seed:{seed}/scenario:server/qps:2000/process_time/real_time"
        for seed in (0, 1)]
    assert rows[0]["params"] == {"scenario_seed": 0, "scenario": "server", "qps": 2000}
    assert [row["iterations"] for row in rows] == [1000, 1000]
    _rows(_run(ireebench, serving, *base, "--sweep", "burstiness=1,0.25",
               f"--scenario_log={bursts}"))
    scheduled = {}
    for path, axis in ((seeds, "scenario_seed"), (bursts, "burstiness")):
        for query in _log(path):
            value = query["benchmark"].split(f"{axis}:")[1].split("/")[0]
            scheduled.setdefault(f"{axis}={value}", []).append(query["scheduled_s"])
    # The same seed, the same schedule, in another process; another seed, another one.
    assert scheduled["scenario_seed=0"] == scheduled["burstiness=1"]
    assert scheduled["scenario_seed=0"] != scheduled["scenario_seed=1"]
    for name, cv in (("scenario_seed=0", 1.0), ("scenario_seed=1", 1.0),
                     ("burstiness=0.25", 2.0)):
        times = scheduled[name]
        assert times[0] == 0.0 and times == sorted(times) and len(times) == 1000
        gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
        # Seeded: these are the same numbers on every machine. Exponential gaps
        # have a CV of 1; gamma gaps of shape 0.25, 1/sqrt(0.25) = 2.
        assert statistics.fmean(gaps) == pytest.approx(1 / 2000, rel=0.1), name
        assert statistics.stdev(gaps) / statistics.fmean(gaps) == pytest.approx(cv, rel=0.15)


def test_server_replays_a_trace(ireebench, serving, tmp_path):
    trace = tmp_path / "arrivals.txt"
    trace.write_text("# seconds\n10.0\n10.001\n10.0015\n10.004\n")
    log = tmp_path / "log.jsonl"
    rows = _rows(_run(ireebench, serving, "--scenario=server", f"--arrival_trace={trace}",
                      "--min_query_count=1", f"--scenario_log={log}"))
    assert rows[0]["name"] == "BM_spin/scenario:server/process_time/real_time"
    assert [round(query["scheduled_s"], 9) for query in _log(log)] == [0.0, 0.001, 0.0015,
                                                                       0.004]
    assert "target_qps" not in rows[0]
    assert "4 queries: too few to judge whether it kept up (30 needed)" in rows[0]["label"]


def test_latency_is_counted_from_the_scheduled_time_across_a_stall(ireebench, serving,
                                                                    tmp_path):
    log = tmp_path / "log.jsonl"
    # Every 40th call is 10^8 steps longer (about 0.1 s at 1 ns a step).
    result = ireebench(f"--module={serving}", "--function=stall", "--input=i32=2000",
                       "--input=i32=40", "--input=i32=100000000", *FAST, "--scenario=server",
                       "--target_qps=500", "--min_query_count=60", f"--scenario_log={log}",
                       "--benchmark_format=json")
    row = _rows(result)[0]
    queries = _log(log)
    for query in queries:
        assert query["latency_s"] == pytest.approx(query["completed_s"] - query["scheduled_s"])
    # The row's time is the mean latency from the scheduled times.
    mean = statistics.fmean(query["latency_s"] for query in queries)
    assert row["real_time"] == pytest.approx(mean * 1e3, rel=1e-9)
    # One lane runs its queries in order: find the stall as the longest service.
    previous, services = 0.0, []
    for query in queries:
        services.append(query["completed_s"] - max(previous, query["scheduled_s"]))
        previous = query["completed_s"]
    stalled = services.index(max(services))
    done = queries[stalled]["completed_s"]
    behind = [query for query in queries[stalled + 1:] if query["scheduled_s"] < done]
    assert behind, "no query was scheduled during the stall"
    for query in behind:
        # Each waited for the stalled one, and that wait is in its latency.
        assert query["completed_s"] >= done
        assert query["latency_s"] >= done - query["scheduled_s"] > 0
    # Open loop: the queries behind the stall were issued while it ran.
    assert any(query["issued_s"] < done for query in behind)
    assert row["max_ms"] == pytest.approx(max(q["latency_s"] for q in queries) * 1e3)


def test_valid_invalid_and_the_queries_a_percentile_needs(ireebench, serving):
    # A rate a busy machine keeps up with (a run that does not is INVALID: see below).
    base = ("--scenario=server", "--target_qps=300")
    valid = _rows(_run(ireebench, serving, *base, "--latency_bound=p99:100s"))[0]
    assert valid["label"].startswith("VALID"), valid["label"]
    assert valid["valid"] == 1 and valid["overlatency"] == 0
    assert valid["iterations"] == 662  # the default: what p99 needs for early stopping
    assert "p99_ms" in valid and "p99.9_ms" not in valid
    assert "p99.9 needs 6636 queries (ran 662)" in valid["label"]
    # Early stopping's estimate is the largest latency at 662 queries.
    assert valid["p99_ms"] == valid["max_ms"]
    invalid = _rows(_run(ireebench, serving, *base, "--latency_bound=p99:1ns"))[0]
    assert invalid["valid"] == 0 and invalid["overlatency"] == 662
    assert invalid["label"].startswith("INVALID: the sample p99 ")
    assert "> 1 ns" in invalid["label"]
    short = _rows(_run(ireebench, serving, *base, "--latency_bound=p99:100s",
                       "--min_query_count=300"))[0]
    assert short["valid"] == 0 and short["iterations"] == 300
    assert "p99_ms" not in short and "p97_ms" in short  # no number without enough queries
    assert short["label"].startswith(
        "INVALID: 0 of 300 queries over 100 s: p99 <= 100 s needs at least 459 queries")
    assert "p99 needs 662 queries, p99.9 6636 (ran 300)" in short["label"]


def test_a_server_that_cannot_keep_up_is_invalid(ireebench, serving):
    """@spin(2*10^6) serves about 200 queries/s on one core: at 20000 qps (100 times
    over) the backlog grows all run; at 100 qps, a hundredth of @spin(20000)'s rate,
    it keeps up on any load. No --latency_bound: only the keep-up rules judge."""
    base = ("--scenario=server", "--min_query_count=100", "--benchmark_format=json", *FAST)
    slow = _rows(ireebench(f"--module={serving}", "--function=spin", "--input=i32=2000000",
                           "--target_qps=20000", *base))[0]
    assert slow["valid"] == 0
    assert slow["label"].startswith("INVALID: it did not keep up: completed "), slow["label"]
    assert "under 90% of the " in slow["label"]
    assert "; the backlog grew: median latency " in slow["label"]
    fast = _rows(ireebench(f"--module={serving}", *SPIN, "--target_qps=100", *base))[0]
    assert fast["valid"] == 1, fast["label"]
    assert fast["label"].startswith("VALID; no --latency_bound: judged by the duration and "
                                    "keep-up rules only")


def test_the_closed_loop_scenarios(ireebench, serving):
    single, multi, offline = (
        _rows(_run(ireebench, serving, *args))[0] for args in (
            ("--scenario=single_stream", "--min_query_count=70"),
            ("--scenario=multi_stream", "--samples_per_query=4", "--batch_concurrency=2",
             "--min_query_count=20"),
            ("--scenario=offline", "--batch_concurrency=2", "--min_query_count=200")))
    assert single["name"] == "BM_spin/scenario:single_stream/process_time/real_time"
    assert single["iterations"] == 70 and "p90_ms" in single and "p95_ms" not in single
    assert single["valid"] == 1  # its p90 has enough queries (64)
    assert multi["name"] == "BM_spin/scenario:multi_stream/samples:4/process_time/real_time"
    assert multi["params"] == {"scenario": "multi_stream", "samples": 4}
    assert multi["iterations"] == 20 and multi["samples_per_query"] == 4
    assert multi["valid"] == 0 and "p99 needs at least 662 queries" in multi["label"]
    assert offline["iterations"] == 200 and offline["valid"] == 1
    assert "p50_ms" not in offline  # throughput only
    # Offline's time is the run's duration per sample: its throughput's inverse.
    assert offline["real_time"] * offline["items_per_second"] == pytest.approx(1e3, rel=1e-6)


def _replay_search(trials: list[dict], start, tolerance: float) -> list:
    """The loads the search must try, given the outcomes it got (LoadGen's order)."""
    outcome = {trial["value"]: trial["passed"] for trial in trials}
    tried = [start]

    def rounded(value):
        digits = 3 - math.floor(math.log10(value))
        value = round(value, digits)
        return int(value) if float(value).is_integer() else value

    value = start
    if outcome[value]:
        while outcome[value]:
            value = rounded(value * 2)
            if value > MAX_QPS:  # every load passed, up to the search's ceiling
                return tried
            tried.append(value)
        low, high = tried[-2], value
    else:
        while not outcome[value]:
            if len(tried) > 6:  # the search halves a failing start 6 times at most
                return tried
            value = rounded(value / 2)
            tried.append(value)
        low, high = value, tried[-2]
    while high > low * (1 + tolerance):
        middle = rounded((low + high) / 2)
        if middle in (low, high):
            break
        tried.append(middle)
        low, high = (middle, high) if outcome[middle] else (low, middle)
    return tried


def test_search_doubles_then_bisects_and_resumes(ireebench, serving, tmp_path):
    state = tmp_path / "search.json"
    # Starting at 400 qps, 64 queries a load: a start the loaded machine fails is halved
    # six times down to 6.25 qps, about 20 s of runs (from 100 qps it took minutes).
    args = ("--function=spin", "--input=i32=100000", "--scenario=server", "--target_qps=400",
            "--latency_bound=p90:50ms", "--min_query_count=64", "--search",
            "--search_tolerance=0.25", f"--search_state={state}")
    result = ireebench(f"--module={serving}", *args, *FAST, "--benchmark_format=json")
    rows = _rows(result)
    family = "BM_spin/scenario:server/search:p90:50ms"
    assert rows[0]["name"] == f"{family}/process_time/real_time"
    trials = json.loads(state.read_text())["searches"][rows[0]["name"]]["trials"]
    tried = [trial["value"] for trial in trials]
    assert tried == _replay_search(trials, 400, 0.25)
    # Each tried load is a row, named and parametrized by its rate, by rate.
    extra = rows[1:]
    assert [row["name"] for row in extra] == [f"{family}/qps:{value}" for value in
                                              sorted(tried)]
    assert [row["params"]["qps"] for row in extra] == sorted(tried)
    passed = [trial["value"] for trial in trials if trial["passed"]]
    failed = [trial["value"] for trial in trials if not trial["passed"]]
    for row in extra:
        assert row["valid"] == (1 if row["params"]["qps"] in passed else 0)
    if passed:
        assert rows[0]["max_target_qps"] == max(passed)
        assert f"highest qps meeting p90 <= 50 ms: {max(passed)}" in rows[0]["label"]
        assert not failed or min(f for f in failed if f > max(passed)) <= max(passed) * 1.25
    # Run again: nothing is measured again, the same answer.
    again = _rows(ireebench(f"--module={serving}", *args, *FAST, "--benchmark_format=json"))
    assert [row["name"] for row in again] == [row["name"] for row in rows]
    assert all(row["label"].endswith("(resumed)") for row in again[1:])
    assert again[0].get("max_target_qps") == rows[0].get("max_target_qps")
    assert f"{len(tried)} loads tried, {len(tried)} of them resumed" in again[0]["label"]


def test_multi_stream_searches_the_samples_per_query(ireebench, serving):
    rows = _rows(ireebench(f"--module={serving}", "--function=spin", "--input=i32=60000",
                           *FAST, "--scenario=multi_stream", "--samples_per_query=2",
                           "--batch_concurrency=2", "--latency_bound=p90:5ms", "--search",
                           "--min_query_count=64", "--benchmark_format=json"))
    family = "BM_spin/scenario:multi_stream/search:p90:5ms"
    assert rows[0]["name"] == f"{family}/process_time/real_time"
    tried = [row["params"]["samples"] for row in rows[1:]]
    assert tried == sorted(tried) and all(isinstance(value, int) for value in tried)
    passed = [row["params"]["samples"] for row in rows[1:] if row["valid"] == 1]
    failed = [row["params"]["samples"] for row in rows[1:] if row["valid"] == 0]
    if passed and failed:  # bisected down to neighbours
        assert min(f for f in failed if f > max(passed)) == max(passed) + 1
        assert rows[0]["max_samples_per_query"] == max(passed)


def test_a_sweep_of_rates_names_its_points(ireebench, serving):
    rows = _rows(_run(ireebench, serving, "--scenario=server", "--target_qps=1",
                      "--sweep", "target_qps=1000,2000", "--min_query_count=20"))
    assert [row["name"] for row in rows] == [
        f"BM_spin/target_qps:{rate}/scenario:server/process_time/real_time"
        for rate in (1000, 2000)]
    assert [row["target_qps"] for row in rows] == [1000, 2000]


@pytest.mark.parametrize(("args", "message"), [
    (("--scenario=serving",), ("--scenario=serving: expected one of single_stream, "
                              "multi_stream, server, offline")),
    (("--scenario=server",), "--scenario=server: needs --target_qps=QPS"),
    (("--scenario=server", "--target_qps=10", "--latency_bound=p99"),
     "--latency_bound=p99: expected pNN:TIME"),
    (("--scenario=server", "--target_qps=10", "--latency_bound=p100:1ms"),
     "--latency_bound=p100:1ms: the percentile must be above p0 and below p100"),
    (("--scenario=offline", "--latency_bound=p99:1ms"), "Offline measures throughput"),
    (("--scenario=server", "--search"), "--search: needs --latency_bound"),
    (("--scenario=server", "--target_qps=10", "--batch_size=4"),
     "--batch_size=4: --scenario=server issues one invocation per sample"),
    (("--scenario=server", "--target_qps=10", "--executor=ray", "--ray_address=x:1",
      "--scenario_log=log.jsonl"),
     ("--scenario_log=log.jsonl: written by the process that measures; --executor=ray "
      "measures each point in a process of its own elsewhere (use --executor=local)")),
    # Bounds checked before anything runs (the runtime's allocator or a run that
    # never ends otherwise).
    (("--scenario=single_stream", "--min_query_count=2000000000"),
     "--min_query_count=2000000000: must be at least 1 and at most 1048576"),
    (("--scenario=server", "--target_qps=10", "--latency_bound=p99.99999:1s"),
     "--latency_bound=p99.99999:1s: judging p99.99999 needs 66383518 queries"),
    (("--scenario=multi_stream", "--samples_per_query=100000000"),
     "--samples_per_query=100000000: must be at least 1 and at most 65536"),
    (("--scenario=single_stream", "--batch_concurrency=200000"),
     "--batch_concurrency=200000: must be at most 1024 lanes"),
    (("--scenario=server", "--target_qps=1e-9"),
     "--target_qps=1e-09: 100 queries at this rate take about 1e+11 s"),
])
def test_bad_scenario_flags_are_one_line(ireebench, serving, args, message):
    line = one_error_line(ireebench(f"--module={serving}", *SPIN, *args))
    assert message in line, line


def test_a_trace_of_decades_is_refused(ireebench, serving, tmp_path):
    trace = tmp_path / "arrivals.txt"
    trace.write_text("0\n1e9\n")
    line = one_error_line(ireebench(f"--module={serving}", *SPIN, "--scenario=server",
                                    f"--arrival_trace={trace}", timeout=60))
    assert f"--arrival_trace={trace}: spans 1e+09 s, longer than the longest" in line


@pytest.mark.parametrize("start", ["10", 0])
def test_an_edited_search_state_is_one_line(ireebench, serving, tmp_path, start):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"version": 1, "searches": {"BM_spin": {
        "key": {}, "start": start, "start_note": "", "trials": []}}}))
    line = one_error_line(ireebench(f"--module={serving}", *SPIN, "--scenario=server",
                                    "--search", "--latency_bound=p99:20ms",
                                    f"--search_state={state}", timeout=120))
    assert line == (f"ireebench: error: --search_state={state}: BM_spin: start is "
                    f"{start!r}, not a positive number")


def test_a_sync_function_is_refused_by_the_server(ireebench, compile_mlir):
    line = one_error_line(ireebench(f"--module={compile_mlir(SERVING)}", *SPIN,
                                    "--scenario=server", "--target_qps=10"))
    assert line == ("ireebench: error: --scenario=server: @spin is a "
                    "function of the 'sync' kind; the scenario drives async (coarse-fences) "
                    "functions (compile it with --iree-execution-model=async-external)")


def test_a_trace_or_state_that_is_no_file_is_one_line(ireebench, serving, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opened plainly, it would block the run forever
    for flags in ([f"--arrival_trace={fifo}"], ["--target_qps=10", "--search",
                                                 "--latency_bound=p99:20ms",
                                                 f"--search_state={fifo}"]):
        line = one_error_line(ireebench(f"--module={serving}", *SPIN, "--scenario=server",
                                        *flags))
        assert line == f"ireebench: error: {flags[-1]}: not a regular file"


def test_no_output_replaces_an_input(ireebench, serving, tmp_path):
    line = one_error_line(ireebench(f"--module={serving}", *SPIN, "--scenario=server",
                                    "--target_qps=10", f"--scenario_log={serving}"))
    assert line.endswith(f"--scenario_log={serving}: is the same file as --module={serving} "
                         "(an input of this run): refusing to overwrite it; choose another path")
    trace = tmp_path / "arrivals.txt"
    trace.write_text("0\n0.5\n")
    line = one_error_line(ireebench(f"--module={serving}", *SPIN, "--scenario=server",
                                    f"--arrival_trace={trace}", f"--search_state={trace}"))
    assert f"--search_state={trace}: is the same file as --arrival_trace={trace}" in line


def test_a_function_that_ignores_its_wait_fence_completes_out_of_order(ireebench,
                                                                        compile_mlir):
    """@splat is a constant: the compiler drops its wait fence, so a lane's samples
    complete out of order; each signals its own semaphore, so none fails (on one
    timeline per lane: "semaphore already signaled past N"). The subprocess timeout
    turns a hang in cleanup into a failure."""
    module = compile_mlir("async_splat", ASYNC)
    for lanes in (1, 2):
        result = ireebench(f"--module={module}", "--function=splat", *FAST,
                           "--scenario=server", "--target_qps=5000", "--min_query_count=5000",
                           f"--batch_concurrency={lanes}", "--benchmark_format=json",
                           timeout=120)
        assert _rows(result)[0]["iterations"] == 5000, result.stdout


def test_single_stream_runs_a_sync_function(ireebench, compile_mlir):
    result = ireebench(f"--module={compile_mlir(SERVING)}", *SPIN, *FAST,
                       "--scenario=single_stream", "--min_query_count=5",
                       "--benchmark_format=json")
    assert _rows(result)[0]["iterations"] == 5


BURSTY = ROOT / "examples" / "serving" / "bursty_arrivals.py"


def test_a_plugin_supplies_the_server_arrivals(ireebench, serving, tmp_path):
    """``ireebench_server_arrivals`` (docs/serving.md's bursty example): the run's
    schedule is the plugin's, seeded, every query inside a burst."""
    log = tmp_path / "log.jsonl"
    rows = _rows(_run(ireebench, serving, "--scenario=server", "--target_qps=1000",
                      "--min_query_count=300", f"--plugin={BURSTY}", f"--scenario_log={log}"))
    assert rows[0]["iterations"] >= 300
    scheduled = [query["scheduled_s"] for query in _log(log)]
    assert scheduled[0] == 0.0 and scheduled == sorted(scheduled)
    in_period = [time - math.floor(time / 0.1 + 1e-9) * 0.1 for time in scheduled]
    assert all(offset < 0.05 for offset in in_period)  # none in the 50 ms of silence
    assert any(time > 0.1 for time in scheduled)  # a second burst was reached
    assert BURSTY.read_text() in (ROOT / "docs" / "serving.md").read_text()


SLO_GATE = ROOT / "examples" / "serving" / "slo_gate.py"


def test_a_plugin_fails_a_server_run_on_its_slos(ireebench, serving, tmp_path):
    """docs/serving.md's slo_gate: an INVALID Server row (a rate the function cannot
    keep up with), or goodput under 99 % of the completed queries, fails the run with
    exit 5 after every row is written; a run within its SLOs passes."""
    base = ("--scenario=server", "--min_query_count=100", "--benchmark_format=json", *FAST,
            f"--plugin={SLO_GATE}")
    out = tmp_path / "out.json"
    slow = ireebench(f"--module={serving}", "--function=spin", "--input=i32=2000000",
                     "--target_qps=20000", *base, f"--benchmark_out={out}")
    assert slow.returncode == 5, slow.stderr
    line = slow.stderr.strip().splitlines()[-1]
    assert line.startswith("ireebench: run failed: plugin 'slo_gate': BM_spin/"), line
    assert ": INVALID: it did not keep up: completed " in line, line
    assert json.loads(out.read_text())["benchmarks"][0]["valid"] == 0  # written whole
    missed = ireebench(f"--module={serving}", *SPIN, "--target_qps=100", *base,
                       "--goodput=e2e:1us")
    assert missed.returncode == 5, missed.stderr
    assert ": goodput 0/s, under 99% of the " in missed.stderr, missed.stderr
    kept = ireebench(f"--module={serving}", *SPIN, "--target_qps=100", *base,
                     "--goodput=e2e:100s")
    assert kept.returncode == 0, kept.stderr
    assert SLO_GATE.read_text() in (ROOT / "docs" / "serving.md").read_text()


def test_arrivals_that_are_not_a_schedule_are_the_plugins_error(ireebench, serving,
                                                                 tmp_path):
    plugin = tmp_path / "backwards.py"
    plugin.write_text("from ireebench import hookimpl\n\n\n@hookimpl\n"
                      "def ireebench_server_arrivals():\n    return [0.0, 0.2, 0.1]\n")
    result = _run(ireebench, serving, "--scenario=server", "--target_qps=100",
                  f"--plugin={plugin}")
    line = plugin_error_line(result)
    assert "plugin 'backwards'" in line and "ireebench_server_arrivals" in line, line
    assert "ascending" in line, line


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root (real-time priority) and setpriv to take it away")
def test_the_issuing_thread_is_real_time_where_permitted(ireebench, serving):
    """Issue 42: the Server's issuing thread runs at SCHED_FIFO where the process may
    (here root), so a busy machine's scheduler does not wake it late; where it may not
    (CAP_SYS_NICE dropped, no RLIMIT_RTPRIO) the label says so and why."""
    args = ("--scenario=server", "--target_qps=300", "--min_query_count=60")
    allowed = _rows(_run(ireebench, serving, *args))[0]
    assert "normal priority" not in allowed["label"], allowed["label"]
    command = [sys.executable, "-m", "ireebench", f"--module={serving}", *SPIN, *FAST,
               "--benchmark_format=json", *args]
    denied = subprocess.run(["setpriv", "--bounding-set", "-sys_nice", "--inh-caps",
                             "-sys_nice", "bash", "-c", 'ulimit -r 0 && exec "$@"', "bash",
                             *command], capture_output=True, text=True, check=False)
    assert denied.returncode == 0, denied.stderr
    label = json.loads(denied.stdout)["benchmarks"][0]["label"]
    assert "the issuing thread at normal priority (real-time priority: Operation not " \
           "permitted)" in label, label


def test_server_goodput_is_a_recount_of_the_scenario_log(ireebench, serving, tmp_path):
    """--goodput on a Server row (issue 42): good_queries is the count of the log's
    queries whose latency met the e2e SLO, goodput that count over the run's duration
    (the same duration as items_per_second's)."""
    log = tmp_path / "log.jsonl"
    rows = _rows(_run(ireebench, serving, "--scenario=server", "--target_qps=300",
                      "--min_query_count=200", f"--scenario_log={log}"))
    bound = sorted(q["latency_s"] for q in _log(log))[100]  # about half the queries meet it
    result = _run(ireebench, serving, "--scenario=server", "--target_qps=300",
                  "--min_query_count=200", f"--scenario_log={log}",
                  f"--goodput=e2e:{bound * 1e6:.3f}us")
    [row] = _rows(result)
    queries = _log(log)
    good = sum(q["latency_s"] <= bound + 5e-10 for q in queries)  # the flag's rounding
    assert row["good_queries"] == pytest.approx(good, abs=1)
    assert row["goodput"] == pytest.approx(row["good_queries"] * row["items_per_second"]
                                           / row["iterations"], rel=1e-9)
    assert "; goodput: e2e <= " in row["label"], row["label"]
    assert rows[0]["iterations"] == 200 and "goodput" not in rows[0]  # none without the flag
