"""The collector sink's tests, through ireebench.testing (pip install the example first)."""

import json

import mycorp_sink


def test_each_dispatch_row_reaches_the_collector(ireebench_tester):
    collector = ireebench_tester.tmp_path / "rows.jsonl"
    result = ireebench_tester.run("--benchmark_repetitions=2", f"--mycorp_collector={collector}",
                                  plugins=[mycorp_sink])
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in collector.read_text().splitlines()]
    assert rows and {row["run_id"] for row in rows} == {result.context.extra["ireebench_run_id"]}
    assert all(row["benchmark"] == "BM_tiny" and row["calls"] > 0 for row in rows)


def test_an_unwritable_collector_is_one_line(ireebench_tester):
    result = ireebench_tester.run("--mycorp_collector=/nonexistent/rows.jsonl",
                                  plugins=[mycorp_sink])
    assert result.error_lines == [
        "ireebench: error: --mycorp_collector=/nonexistent/rows.jsonl: No such file or directory"]
