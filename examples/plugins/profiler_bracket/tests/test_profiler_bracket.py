"""The profiler bracket's tests, through ireebench.testing (pip install the example first)."""

import json

import ireebench_bracket


def test_the_bracket_holds_exactly_each_reported_repetition(ireebench_tester):
    log = ireebench_tester.tmp_path / "bracket.jsonl"
    result = ireebench_tester.run("--benchmark_min_time=0.01s", "--benchmark_repetitions=3",
                                  f"--bracket_log={log}", plugins=[ireebench_bracket])
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    pairs = list(zip(events[::2], events[1::2]))
    assert all((b["event"], e["event"]) == ("begin", "end") for b, e in pairs)
    # The last bracket of each repetition is the reported one (a first
    # repetition short of the minimum time is measured again).
    last = list({begin["repetition"]: (begin, end) for begin, end in pairs}.values())
    assert [begin["repetition"] for begin, _ in last] == [0, 1, 2]
    rows = [row for row in result.rows if row.run_type == "iteration"]
    for (begin, end), row in zip(last, rows):
        assert end["iterations"] == row.iterations
        assert end["measured_seconds"] == row.real_accumulated_time
        # The reported time was taken inside the bracket.
        assert (end["time_ns"] - begin["time_ns"]) * 1e-9 >= row.real_accumulated_time


def test_a_backend_that_measures_elsewhere_is_refused(ireebench_tester):
    log = ireebench_tester.tmp_path / "bracket.jsonl"
    result = ireebench_tester.run("--backend=native", f"--bracket_log={log}",
                                  plugins=[ireebench_bracket])
    assert result.error_lines == [
        (f"ireebench: error: --bracket_log={log}: needs a backend that measures in this process "
        "with the IREE runtime (capability 'in_process'); --backend=native does not have it")]
    assert not log.exists()


def test_a_bracket_log_that_cannot_be_opened_is_one_line(ireebench_tester):
    result = ireebench_tester.run("--bracket_log=/nonexistent/dir/log.jsonl",
                                  plugins=[ireebench_bracket])
    assert result.exit_code == 1
    assert result.error_lines == [("ireebench: error: profiler_bracket: cannot open "
                                  "/nonexistent/dir/log.jsonl: No such file or directory")]
