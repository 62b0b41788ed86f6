"""Reporter registry, third-party reporters, extra rows and the streaming hook, on
``ireebench_tester``."""

import csv
import io
import json

import pytest
from conftest import fixture_plugin, one_error_line


@pytest.fixture(scope="module")
def module(compile_mlir):
    return compile_mlir("two_functions")


@pytest.mark.parametrize("flag", ["--reporter", "--benchmark_format", "--benchmark_out_format"])
def test_unknown_reporter_lists_known_ones(module, ireebench_tester, tmp_path, flag):
    out = [f"--benchmark_out={tmp_path / 'out'}"] if flag == "--benchmark_out_format" else []
    line = one_error_line(ireebench_tester.run(f"--module={module}", *out, f"{flag}=xml"))
    assert line == f"ireebench: error: {flag}=xml: unknown reporter (known: console, csv, json)"
    assert not (tmp_path / "out").exists()


def test_duplicate_reporter_name_names_both_plugins(module, ireebench_tester):
    line = one_error_line(ireebench_tester.run(f"--module={module}",
                                               plugins=[fixture_plugin("reporters_duplicate")]))
    assert "reporter 'json' is defined by two plugins" in line
    assert "'json'" in line and "'reporters_duplicate'" in line


def test_benchmark_out_in_missing_directory_is_one_error(module, ireebench_tester, tmp_path):
    line = one_error_line(ireebench_tester.run(f"--module={module}",
                                               f"--benchmark_out={tmp_path / 'no' / 'out.json'}"))
    assert f"--benchmark_out={tmp_path / 'no' / 'out.json'}" in line


def test_third_party_reporter_gets_context_runs_and_extra_rows(module, ireebench_tester,
                                                               tmp_path):
    log = tmp_path / "stream.jsonl"
    result = ireebench_tester.run(f"--module={module}", "--benchmark_repetitions=2",
                                  "--reporter", "recording", f"--stream_log={log}",
                                  f"--benchmark_out={tmp_path / 'out.json'}", worker=True,
                                  plugins=[fixture_plugin("reporters_recording"),
                                           fixture_plugin("reporters_extra_rows")])
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["event"] for e in events] == ["context", "runs", "runs", "finalize"]
    assert events[0]["extra"]["iree_devices"] == ["local-sync"]
    assert {"reporters_recording", "reporters_extra_rows"} <= set(
        events[0]["extra"]["ireebench_plugins"])
    for event, function in zip(events[1:3], ("first", "second")):
        rows = event["rows"]
        assert [r["run_type"] for r in rows] == ["iteration"] * 2 + ["aggregate"] * 4 + [
            "iteration"]
        assert rows[-1]["extra_row"] and rows[-1]["name"] == f"BM_{function}/extra"
        assert all(isinstance(r["real_time"], float) and r["real_time"] > 0 for r in rows)
        assert rows[0]["iterations"] == 2

    # The streaming hook saw every row, in report order, extra rows included.
    streamed = [json.loads(line) for line in log.read_text().splitlines()]
    reported = [r["name"] for e in events[1:3] for r in e["rows"]]
    assert [s["name"] for s in streamed] == reported

    # The --benchmark_out JSON has the extra rows right under their benchmark.
    names = [b["name"] for b in json.loads((tmp_path / "out.json").read_text())["benchmarks"]]
    assert names == reported
    assert result.stderr == ""  # only console/CSV print the context on stderr


def test_extra_rows_in_builtin_formats(module, ireebench_tester, tmp_path):
    result = ireebench_tester.run(f"--module={module}", f"--benchmark_out={tmp_path / 'out.csv'}",
                                  "--benchmark_out_format=csv", worker=True,
                                  plugins=[fixture_plugin("reporters_extra_rows")])
    assert result.exit_code == 0, result.stderr
    # Console: the extra row under its benchmark, with its counter.
    rows = [line for line in result.stdout.splitlines() if line.startswith("BM_")]
    assert [r.split()[0] for r in rows] == ["BM_first/process_time/real_time", "BM_first/extra",
                                            "BM_second/process_time/real_time", "BM_second/extra"]
    assert rows[1].endswith(" calls=1")
    # CSV: a quoted "calls" user-counter column after Google Benchmark's columns.
    text = (tmp_path / "out.csv").read_text()
    header_at = text.index("name,iterations,")
    table = list(csv.reader(io.StringIO(text[header_at:])))
    assert table[0][-1] == "calls" and text[header_at:].splitlines()[0].endswith(',"calls"')
    assert [row[-1] for row in table[1:]] == ["", "1", "", "1"]


def test_failing_run_is_streamed_as_error_row(compile_mlir, ireebench_tester, tmp_path):
    log = tmp_path / "stream.jsonl"
    result = ireebench_tester.run(f"--module={compile_mlir('fails_second')}",
                                  f"--stream_log={log}", "--benchmark_format=json", worker=True,
                                  plugins=[fixture_plugin("reporters_extra_rows")])
    assert result.exit_code == 1
    streamed = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(s["name"], s["error"]) for s in streamed] == [
        ("BM_works/process_time/real_time", False), ("BM_works/extra", False),
        ("BM_fails/process_time/real_time", True)]
    rows = result.json()["benchmarks"]
    assert rows[-1]["error_occurred"] is True and "boom" in rows[-1]["error_message"]


def test_no_matching_benchmark_with_an_out_file_fails(module, ireebench_tester, tmp_path):
    """Unlike Google Benchmark (exit 0): an output flag and nothing measured is a failure
    (a CI job must not pass on an empty report); a plain console run still exits 0."""
    out = tmp_path / "out.json"
    result = ireebench_tester.run(f"--module={module}", "--benchmark_filter=nothing_matches",
                                  f"--benchmark_out={out}", "--benchmark_format=json")
    assert result.exit_code == 1, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == "Failed to match any benchmarks against regex: nothing_matches"
    assert f"ireebench: error: --benchmark_out={out}: no benchmark was measured" in result.stderr
    assert "Traceback" not in result.stderr
    # no temporary left (the tester's results store is not written by a run without
    # --benchmark_save)
    assert [p.name for p in tmp_path.iterdir()] in ([], ["out.json"])
    plain = ireebench_tester.run(f"--module={module}", "--benchmark_filter=nothing_matches")
    assert plain.exit_code == 0, plain.stderr
