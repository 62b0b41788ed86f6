"""``ireebench compare`` end to end: real runs, the native tool's JSON, bad input.

Modules are compiled in the test: a loop whose trip count makes the second
one 8x heavier under the same function name. Runs use 9 repetitions (the
minimum for a verdict) of a few iterations each, so they stay short.

What compare concludes from two reports depends on their numbers only, so
most tests compare a real run of the light module with that run's report
made 8x slower (every time times 8): the verdicts, changes and p-values
they assert hold whatever the machine's load. One test compares real runs
of both modules, and asserts only what no load can turn around.
"""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import ireebench
import pytest
from conftest import MLIR_DIR, one_error_line, plugin_error_line
from scipy import stats as scipy_stats

LOOP = (MLIR_DIR / "loop.mlir").read_text()  # TRIPS: its trip count
TRIPS = 200  # about 0.5 ms per call on a laptop core
RUN = ["--device=local-sync", "--function=work", "--input=64xf32=1",
       "--benchmark_repetitions=9", "--benchmark_min_time=5x"]
NAME = "BM_work/process_time/real_time"


@pytest.fixture(scope="module")
def modules(compile_mlir):
    return {"light": compile_mlir(LOOP.replace("TRIPS", str(TRIPS))),
            "heavy": compile_mlir(LOOP.replace("TRIPS", str(8 * TRIPS)))}


def _slowed(report: dict, factor: float) -> dict:
    """``report`` with every time of every row multiplied by ``factor``."""
    rows = [dict(row, real_time=row["real_time"] * factor, cpu_time=row["cpu_time"] * factor)
            if "real_time" in row and row.get("aggregate_name") != "cv" else dict(row)
            for row in report["benchmarks"]]
    return {**report, "benchmarks": rows}


@pytest.fixture(scope="module")
def reports(modules, ireebench, tmp_path_factory):
    """ireebench's JSON of a real run of the light module, and the same report
    8x slower (see the module docstring)."""
    directory = tmp_path_factory.mktemp("compare")
    files = {name: directory / f"{name}.json" for name in modules}
    result = ireebench(f"--module={modules['light']}", *RUN, f"--benchmark_out={files['light']}",
                       "--benchmark_format=json")
    assert result.returncode == 0, result.stderr
    files["heavy"].write_text(json.dumps(_slowed(json.loads(files["light"].read_text()), 8.0)))
    return files


def _json(result) -> dict:
    return json.loads(result.stdout)


def _halves(report: dict, directory, attempt: int) -> list:
    """The repetitions of one report split alternately into two reports (odd, even)."""
    rows = [row for row in report["benchmarks"] if row["run_type"] == "iteration"]
    paths = []
    for half in (0, 1):
        part = [dict(row, repetition_index=index, repetitions=len(rows) // 2)
                for index, row in enumerate(rows[half::2])]
        path = directory / f"half{half}-{attempt}.json"
        path.write_text(json.dumps({"context": report["context"], "benchmarks": part}))
        paths.append(path)
    return paths


def test_same_module_twice_no_significant_change(modules, ireebench, tmp_path):
    """The same module twice: no significant change, exit 0.

    Two separate runs on this shared 2-core machine differ for real (the load
    changes between them, and the U test rightly sees it), so the two samples
    are the alternate repetitions of one run of 18: the same module, measured
    under the same conditions, interleaved in time. Under the null hypothesis
    the test is significant 5 % of the time; up to four attempts are made.
    Under load the halves can be too noisy to show a change of 10 %
    (``--detectable``): that pair is ``cannot judge`` (exit 4), which is
    the right answer there (never a regression).
    """
    outcomes = []
    for attempt in range(4):
        out = tmp_path / f"run{attempt}.json"
        run = ireebench(f"--module={modules['light']}", *RUN, "--benchmark_repetitions=18",
                        f"--benchmark_out={out}", "--benchmark_format=json")
        assert run.returncode == 0, run.stderr
        paths = _halves(json.loads(out.read_text()), tmp_path, attempt)
        result = ireebench("compare", *paths, "--threshold=5%")
        assert "Traceback" not in result.stderr, result.stderr
        data = _json(ireebench("compare", *paths, "--threshold=5%", "--reporter=json"))
        [bench] = data["benchmarks"]
        assert result.returncode == data["exit_status"]
        outcomes.append((result.returncode, bench["verdict"], round(bench["change"], 3)))
        if bench["verdict"] == "cannot judge":
            assert result.returncode == 4 and bench["detectable"] > 0.10, bench
            assert bench["reason"].startswith("detectable "), bench
            assert "CANNOT JUDGE: 1 benchmark(s)" in result.stdout
            return
        if result.returncode == 0 and bench["verdict"] == "no significant change":
            row = next(line for line in result.stdout.splitlines() if line.startswith(NAME))
            assert "no significant change" in row and "9 vs 9" in row
            assert "OK: no significant regression beyond the thresholds" in result.stdout
            assert bench["change_low"] < 0 < bench["change_high"]
            return
    pytest.fail(f"four pairs of halves of one run all differed: {outcomes}")


def test_eight_times_heavier_is_a_significant_regression(reports, ireebench):
    result = ireebench("compare", reports["light"], reports["heavy"], "--threshold", "5%")
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    row = next(line for line in result.stdout.splitlines() if line.startswith(NAME))
    assert "slower: REGRESSION (> 5%)" in row and "9 vs 9" in row
    assert f"FAILED: 1 significant regression(s) beyond the threshold: {NAME}" in result.stdout
    data = _json(ireebench("compare", reports["light"], reports["heavy"], "--threshold=5%",
                           "--reporter=json"))
    [bench] = data["benchmarks"]
    assert bench["verdict"] == "slower" and bench["regression"] is True
    # Every time x8: the Hodges-Lehmann ratio (the median of all ratios
    # new/old) is exactly 8, and the p-value is scipy's for the same samples.
    assert bench["change"] == pytest.approx(7.0)
    light = [row["real_time"] for row in json.loads(reports["light"].read_text())["benchmarks"]
             if row["run_type"] == "iteration"]
    expected = scipy_stats.mannwhitneyu([8 * t for t in light], light).pvalue
    assert bench["pvalue"] == pytest.approx(expected, rel=1e-6)
    if max(light) < 8 * min(light):  # no overlap: U = 0
        assert bench["pvalue"] < 0.001 and bench["change_low"] > 0
    assert data["exit_status"] == 1 and data["regressions"] == [NAME]
    [cpu] = _json(ireebench("compare", reports["light"], reports["heavy"], "--threshold=5%",
                            "--metric=cpu_time", "--reporter=json"))["benchmarks"]
    assert cpu["verdict"] == "slower" and cpu["change"] == pytest.approx(7.0), cpu


def test_real_runs_of_the_heavier_module_are_slower(modules, reports, ireebench, tmp_path):
    """The 8x heavier module really measured (its CPU time: load takes CPUs
    away, it does not make a core do more work): compare names it slower,
    and its exit status and JSON agree. How much slower, under load, is a
    timing question; the exact figures are the derived report's, above."""
    heavy = tmp_path / "heavy.json"
    run = ireebench(f"--module={modules['heavy']}", *RUN, f"--benchmark_out={heavy}",
                    "--benchmark_format=json")
    assert run.returncode == 0, run.stderr
    result = ireebench("compare", reports["light"], heavy, "--metric=cpu_time",
                       "--reporter=json")
    data = _json(result)
    [bench] = data["benchmarks"]
    assert bench["verdict"] == "slower", bench
    assert result.returncode == data["exit_status"] == (1 if bench["regression"] else 0)


def test_the_other_way_round_is_faster_and_exits_zero(reports, ireebench):
    result = ireebench("compare", reports["heavy"], reports["light"], "--threshold=5%",
                       "--reporter=json")
    assert result.returncode == 0, result.stderr
    assert _json(result)["benchmarks"][0]["verdict"] == "faster"


def test_a_per_name_threshold_above_the_change_passes(reports, ireebench):
    result = ireebench("compare", reports["light"], reports["heavy"], "--threshold=5%",
                       "--threshold=BM_work.*=2000%")
    assert result.returncode == 0, result.stderr
    assert "slower (within 2000%)" in result.stdout


def test_native_tool_json_is_read(modules, reports, native_tool, ireebench, tmp_path):
    """iree-benchmark-module's --benchmark_out file and its --benchmark_format=json
    stdout, compared with ireebench's."""
    out_file = tmp_path / "native_out.json"
    native = native_tool("iree-benchmark-module", f"--module={modules['light']}", *RUN,
                         f"--benchmark_out={out_file}", "--benchmark_out_format=json",
                         "--benchmark_format=json")
    assert native.returncode == 0, native.stderr
    stdout_file = tmp_path / "native_stdout.json"
    stdout_file.write_text(native.stdout)
    for old in (out_file, stdout_file):
        result = ireebench("compare", old, reports["heavy"], "--threshold=5%",
                           "--reporter=json", "--metric=auto")
        assert result.returncode == 1, result.stderr
        data = _json(result)
        assert data["benchmarks"][0]["verdict"] == "slower"
        assert data["benchmarks"][0]["old_repetitions"] == 9
        assert "old was measured by iree-benchmark-module, new by ireebench" in data["notes"]


def test_extra_aggregate_rows_are_read(reports, ireebench, tmp_path):
    """A file with statistics Google Benchmark does not have (``_p90``) or no
    repetition rows at all (--benchmark_report_aggregates_only)."""
    data = json.loads(reports["light"].read_text())
    p90 = dict(next(b for b in data["benchmarks"] if b.get("aggregate_name") == "median"))
    p90.update(name=f"{NAME}_p90", aggregate_name="p90")
    data["benchmarks"].append(p90)
    with_p90 = tmp_path / "p90.json"
    with_p90.write_text(json.dumps(data))
    result = ireebench("compare", with_p90, reports["light"], "--accept_cannot_judge")
    assert result.returncode == 0, result.stderr
    data["benchmarks"] = [b for b in data["benchmarks"] if b["run_type"] == "aggregate"]
    aggregates_only = tmp_path / "aggregates.json"
    aggregates_only.write_text(json.dumps(data))
    result = ireebench("compare", aggregates_only, reports["heavy"], "--threshold=5%")
    assert result.returncode == 4, result.stderr  # one value a side: no verdict
    assert "inconclusive" in result.stdout
    assert "old: only the median aggregate (no repetition rows)" in result.stdout
    assert "fewer than 9 repetitions a side (1 vs 9)" in result.stdout


def test_fewer_than_nine_repetitions_says_so(modules, ireebench, tmp_path):
    paths = []
    for name in ("light", "heavy"):
        paths.append(tmp_path / f"{name}.json")
        run = ireebench(f"--module={modules[name]}", *RUN[:3], "--benchmark_repetitions=3",
                        "--benchmark_min_time=3x", f"--benchmark_out={paths[-1]}")
        assert run.returncode == 0, run.stderr
    result = ireebench("compare", *paths, "--threshold=5%")
    # Several times the work, unseen with 3 repetitions: the gate cannot judge
    # it (exit 4), it never passes it.
    assert result.returncode == 4, result.stderr
    assert "inconclusive" in result.stdout
    assert "fewer than 9 repetitions a side (3 vs 3): no verdict" in result.stdout
    assert "CANNOT JUDGE: 1 benchmark(s) could not be judged" in result.stdout
    accepted = ireebench("compare", *paths, "--threshold=5%", "--accept_cannot_judge")
    assert accepted.returncode == 0, accepted.stderr
    assert "OK (accepted)" in accepted.stdout


@pytest.mark.parametrize("reporter", ["console", "markdown", "json"])
def test_out_file_in_every_format(reports, ireebench, tmp_path, reporter):
    out = tmp_path / f"comparison.{reporter}"
    result = ireebench("compare", reports["light"], reports["heavy"], "--reporter=console",
                       f"--out={out}", f"--out_format={reporter}", "--metric=auto")
    assert result.returncode == 1, result.stderr
    text = out.read_text()
    if reporter == "json":
        assert json.loads(text)["regressions"] == [NAME]
    elif reporter == "markdown":
        assert f"| `{NAME}` |" in text and "**slower: REGRESSION (> 0%)" in text
        assert "| Benchmark " in text and "|---" in text.replace("-|-", "|-")
    else:
        assert text.startswith("Comparing ")
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left


# --- bad input: one line, exit 2 ----------------------------------------------


def _usage(result) -> str:
    line = one_error_line(result)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    return line.removeprefix("ireebench: error: ")


def test_missing_file(reports, ireebench, tmp_path):
    missing = tmp_path / "missing.json"
    assert _usage(ireebench("compare", missing, reports["light"])) == \
        f"compare: {missing}: file not found"


def test_not_json(reports, ireebench, tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x00\xffIREE\x00")
    assert _usage(ireebench("compare", reports["light"], path)).startswith(
        f"compare: {path}: not JSON (")


@pytest.mark.parametrize("content", ['{"context": {}}', "[]", '"benchmarks"'])
def test_json_that_is_not_a_benchmark_report(reports, ireebench, tmp_path, content):
    path = tmp_path / "other.json"
    path.write_text(content)
    assert _usage(ireebench("compare", path, reports["light"])) == \
        f'compare: {path}: not a Google Benchmark JSON report (no "benchmarks" list)'


@pytest.mark.parametrize("value, reason", [
    ("5", "expected a percentage such as 5% or PATTERN=5%"),
    ("-5%", "the percentage must be a number >= 0"),
    ("[=5%", "invalid regex"),
])
def test_bad_threshold(reports, ireebench, value, reason):
    message = _usage(ireebench("compare", reports["light"], reports["heavy"],
                               f"--threshold={value}"))
    assert message.startswith(f"--threshold={value}: {reason}")


@pytest.mark.parametrize("args, message", [
    ([], ("compare: expected two files: ireebench compare OLD.json NEW.json [flags] "
         "(got 0: none)")),
    (["--alpha=1.5"], "--alpha=1.5: must be between 0 and 1 (exclusive)"),
    (["--confidence=0"], "--confidence=0.0: must be between 0 and 1 (exclusive)"),
    (["--metric=wall"], "--metric=wall: no row of "),
    (["--reporter=html"], ("--reporter=html: unknown compare reporter "
                          "(known: console, json, markdown)")),
    (["--benchmark_repetitions=3"], "No such option '--benchmark_repetitions'"),
])
def test_bad_flags(reports, ireebench, args, message):
    files = [reports["light"], reports["heavy"]] if args else []
    assert _usage(ireebench("compare", *files, *args)).startswith(message)


def test_bad_input_writes_no_out_file(reports, ireebench, tmp_path):
    out = tmp_path / "out.json"
    _usage(ireebench("compare", reports["light"], tmp_path / "missing.json", f"--out={out}"))
    assert list(tmp_path.iterdir()) == []


def test_no_benchmark_in_common(reports, ireebench, tmp_path):
    data = json.loads(reports["light"].read_text())
    for row in data["benchmarks"]:
        row["run_name"] = row["name"] = row["name"].replace("BM_work", "BM_other")
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    assert _usage(ireebench("compare", reports["light"], other)).startswith(
        f"compare: {reports['light']} and {other} have no benchmark in common")


def test_help(ireebench):
    result = ireebench("compare", "--help")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: ireebench compare OLD.json NEW.json [OPTIONS]")
    assert "--threshold [PATTERN=]PERCENT" in result.stdout
    assert "--detectable PERCENT" in result.stdout and "--accept_cannot_judge" in result.stdout
    assert "--correction bh|holm|none" in result.stdout
    assert "4 a benchmark cannot be judged" in result.stdout
    assert "console|json|markdown" in result.stdout
    assert "Runtime flags" not in result.stdout


# --- plugins ------------------------------------------------------------------

THIRD_PARTY = """
from ireebench import hookimpl
from ireebench.comparison import CompareReporter

class Tsv(CompareReporter):
    def report(self, comparison):
        for b in comparison.benchmarks:
            self.stream.write(f"{b.name}\\t{b.verdict}\\t{b.regression}\\n")

class Broken(CompareReporter):
    def report(self, comparison):
        raise ValueError("no ink")

@hookimpl
def ireebench_compare_reporters(config):
    return {"tsv": Tsv, "broken": Broken}
"""


def test_third_party_compare_reporter(reports, ireebench, tmp_path):
    plugin = tmp_path / "tsv_compare.py"
    plugin.write_text(THIRD_PARTY)
    result = ireebench("compare", reports["light"], reports["heavy"], f"--plugin={plugin}",
                       "--reporter=tsv", "--metric=auto")
    assert result.returncode == 1, result.stderr
    assert result.stdout == f"{NAME}\tslower\tTrue\n"


def test_failing_compare_reporter_is_a_plugin_error(reports, ireebench, tmp_path):
    plugin = tmp_path / "tsv_compare.py"
    plugin.write_text(THIRD_PARTY)
    line = plugin_error_line(ireebench("compare", reports["light"], reports["heavy"],
                                       f"--plugin={plugin}", "--reporter=broken"))
    assert line == ("ireebench: plugin error: plugin 'tsv_compare' failed in compare "
                    "reporter Broken.report: ValueError: no ink")


def test_duplicate_compare_reporter_names_both_plugins(reports, ireebench, tmp_path):
    plugin = tmp_path / "mine.py"
    plugin.write_text("from ireebench import hookimpl\n\n@hookimpl\n"
                      "def ireebench_compare_reporters():\n    return {'json': object}\n")
    assert _usage(ireebench("compare", reports["light"], reports["heavy"],
                            f"--plugin={plugin}")) == \
        "compare reporter 'json' is defined by two plugins: 'mine' and 'compare'"


def test_a_wrapper_on_compare_reporters_is_refused(reports, ireebench, tmp_path):
    plugin = tmp_path / "wrapping.py"
    plugin.write_text("from ireebench import hookimpl\n\n@hookimpl(wrapper=True)\n"
                      "def ireebench_compare_reporters():\n    return (yield)\n")
    assert "ireebench_compare_reporters cannot be a wrapper" in \
        _usage(ireebench("compare", reports["light"], reports["heavy"], f"--plugin={plugin}"))


# --- the Python API -----------------------------------------------------------


def test_python_api_returns_the_comparison(reports, capfd):
    out = io.StringIO()
    result = ireebench.run(["compare", str(reports["light"]), str(reports["heavy"]),
                            "--threshold=5%", "--metric=auto"], stdout=out)
    assert result.exit_code == 1 and result.runs == []
    assert [b.name for b in result.comparison.regressions] == [NAME]
    assert out.getvalue().startswith("Comparing ")
    with pytest.raises(ireebench.UsageError) as error:
        ireebench.run(["compare", str(reports["light"]), "--threshold=5"])
    assert error.value.exit_code == 2
    assert capfd.readouterr() == ("", "")


# --- extreme values, hostile names, large reports ------------------------------


def _report_file(path, rows_by_name, unit="s"):
    """A Google Benchmark JSON report: name -> the repetitions' real (= cpu) times."""
    rows = [{"name": name, "run_name": name, "run_type": "iteration", "iterations": 1,
             "repetitions": len(times), "repetition_index": index, "real_time": value,
             "cpu_time": value, "time_unit": unit}
            for name, times in rows_by_name.items() for index, value in enumerate(times)]
    path.write_text(json.dumps({"context": {}, "benchmarks": rows}))
    return path


@pytest.mark.parametrize("value, unit, shown", [
    (1e308, "s", "real_time 1e+308 s"), (5e-324, "s", "real_time 4.94066e-324 s"),
    (1e300, "ms", "real_time 1e+300 ms"), (["ns"], None, "unknown time_unit ['ns']"),
])
def test_values_no_benchmark_takes_are_bad_input(ireebench, tmp_path, value, unit, shown):
    good = _report_file(tmp_path / "good.json", {"BM_x": [1.0 + i / 100 for i in range(9)]})
    if unit is None:  # a time_unit that is a list
        bad = _report_file(tmp_path / "bad.json", {"BM_x": [1.0] * 9})
        report = json.loads(bad.read_text())
        report["benchmarks"][3]["time_unit"] = value
        bad.write_text(json.dumps(report))
    else:
        bad = _report_file(tmp_path / "bad.json", {"BM_x": [value] * 9}, unit)
    for old, new in ((good, bad), (bad, good)):
        result = ireebench("compare", old, new)
        assert result.returncode == 2, result.stderr
        line = one_error_line(result)
        row = 4 if unit is None else 1
        assert line.startswith(f"ireebench: error: compare: {bad}: benchmark #{row} (BM_x): "
                               f"{shown}"), line


def test_the_extremes_of_the_range_compare_without_a_warning(ireebench, tmp_path):
    """1e-24 s against 1e24 s: a ratio of 1e48, no numpy RuntimeWarning line."""
    tiny = _report_file(tmp_path / "tiny.json", {"BM_x": [1e-24 * (1 + i / 100)
                                                          for i in range(9)]})
    huge = _report_file(tmp_path / "huge.json", {"BM_x": [1e24 * (1 - i / 100)
                                                          for i in range(9)]})
    for old, new in ((tiny, huge), (huge, tiny)):
        result = ireebench("compare", old, new, "--reporter=json")
        assert result.returncode in (0, 1), result.stderr
        assert result.stderr == ""  # no warning of any kind
        [benchmark] = _json(result)["benchmarks"]
        assert benchmark["verdict"] in ("slower", "faster")


HOSTILE = "BM_\x1b[31mred\x1b[0m\x07\x08\r\u202egnp.exe|`x`\ttab"


@pytest.mark.parametrize("reporter", ["console", "markdown"])
def test_control_characters_in_names_are_escaped(ireebench, tmp_path, reporter):
    times = [1.0 + i / 100 for i in range(9)]
    old = _report_file(tmp_path / "old.json", {HOSTILE: times})
    new = _report_file(tmp_path / "new\x1b[2J.json", {HOSTILE: [2 * t for t in times]})
    result = ireebench("compare", old, new, f"--reporter={reporter}")
    assert result.returncode == 1, result.stderr
    escaped = "BM_\\x1b[31mred\\x1b[0m\\x07\\x08\\r\\u202egnp.exe"
    assert escaped in result.stdout and "new\\x1b[2J.json" in result.stdout
    for char in "\x1b\x07\x08\r\u202e\t":
        assert char not in result.stdout, repr(char)
    if reporter == "markdown":  # the name in a code span that holds its backticks
        assert f"``{escaped}\\|`x`\\ttab``" in result.stdout
    as_json = ireebench("compare", old, new, "--reporter=json")
    assert _json(as_json)["benchmarks"][0]["name"] == HOSTILE  # JSON keeps the name exactly


@pytest.mark.parametrize("style", ["simple", "github"])
def test_the_table_is_laid_out_as_tabulate_lays_it_out(style):
    """The reporters' one-pass layout gives tabulate's output for any table of strings."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from ireebench.plugins.compare.reporters import layout
    from tabulate import tabulate

    cell = st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]),
                   max_size=12)

    # No deadline and no too_slow health check: both are wall-clock limits, which a
    # busy machine reaches.
    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(1, 8).flatmap(lambda width: st.tuples(
        st.lists(cell.filter(lambda text: text == text.lstrip()), min_size=width,
                 max_size=width),
        st.lists(st.lists(cell, min_size=width, max_size=width), max_size=5))))
    def check(table):
        headers, rows = table
        assert layout(headers, rows, style) == tabulate(rows, headers=headers, tablefmt=style,
                                                        disable_numparse=True)

    check()


def test_a_report_of_many_benchmarks(ireebench, tmp_path):
    """5,000 benchmarks of 9 repetitions a side compare (the reading, the test
    and the tables are linear; timing is not asserted: docs/compare.md has it)."""
    names = [f"BM_f{index}/process_time/real_time" for index in range(5000)]
    old = _report_file(tmp_path / "old.json",
                       {name: [1.0 + (i * 7 % 9) / 100 for i in range(9)] for name in names})
    new = _report_file(tmp_path / "new.json",
                       {name: [1.5 + (i * 5 % 9) / 100 for i in range(9)] for name in names})
    result = ireebench("compare", old, new, "--reporter=markdown", timeout=600)
    assert result.returncode == 1, result.stderr
    assert result.stdout.count("REGRESSION") == 5000


def test_different_allocator_settings_are_one_warning(reports, ireebench, tmp_path):
    """Reports measured under different --malloc_trim settings (or one that does
    not record it, as the native tool's) get one warning line and a note."""
    data = json.loads(reports["light"].read_text())
    assert data["context"]["malloc_trim"] == "off"
    on = tmp_path / "on.json"
    on.write_text(json.dumps({**data, "context": {
        **data["context"], "malloc_trim": "on",
        "malloc_parameters": {"M_TRIM_THRESHOLD": 0, "M_TOP_PAD": 0,
                              "M_MMAP_THRESHOLD": 131072}}}))
    unrecorded = tmp_path / "unrecorded.json"
    unrecorded.write_text(json.dumps({**data, "context": {
        key: value for key, value in data["context"].items()
        if key not in ("malloc_trim", "malloc_parameters")}}))
    expected = {
        on: "old: malloc_trim=off, new: malloc_trim=on",
        unrecorded: "old: malloc_trim=off, new: not recorded",
    }
    for new, settings in expected.items():
        result = ireebench("compare", reports["light"], new, "--reporter=json",
                           "--accept_cannot_judge")  # the same times: as noisy as they are
        assert result.returncode == 0, result.stderr
        note = (f"old and new were measured with different allocator settings ({settings}): "
                "the heap regime alone can change the times; see --malloc_trim in "
                "docs/usage.md")
        assert result.stderr.splitlines() == [f"ireebench: warning: compare: {note}"]
        assert note in _json(result)["notes"]
    same = ireebench("compare", reports["light"], reports["heavy"])
    assert "allocator" not in same.stderr + same.stdout


# --- what the gate can see: the detectable change, disturbances, many benchmarks ------

LOAD = {"load_average": "load average 3.03 is above the 2 CPUs: other work competes for them"}
BUSY = {"busy_processes": "other busy processes: stress (pid 42, 100% of a CPU): they "
                          "compete for the CPUs"}


def _tight(level: float) -> list[float]:
    """Nine repetitions within 0.8 % of ``level``: a run that had the machine."""
    return [level * (1 + 0.002 * (k - 4)) for k in range(9)]


def _iterations(report: dict) -> list[dict]:
    return [row for row in report["benchmarks"] if row["run_type"] == "iteration"]


def _median_time(report: dict, member: str = "real_time") -> float:
    values = sorted(row[member] for row in _iterations(report))
    return values[len(values) // 2]


def _run_like(path, report: dict, index: int, real=None, cpu=None, scale=None,
              context=None, findings=None):
    """A report with ``report``'s context and benchmark, its own run id and date, and
    controlled times: ``scale`` times its own (CPU time = real time: it had its CPU),
    or the ``real`` and ``cpu`` lists (cpu defaults to real)."""
    rows = _iterations(report)
    if scale is not None:
        real = [row["real_time"] * scale for row in rows]
    cpu = real if cpu is None else cpu
    written = {"context": {**report["context"], "ireebench_run_id": f"{index + 1:x}" * 32,
                           "date": f"2026-01-{index + 1:02d}T00:00:00+00:00",
                           **(context or {})},
               "benchmarks": [dict(row, real_time=r, cpu_time=c)
                              for row, r, c in zip(rows, real, cpu)]}
    if findings:
        written["findings"] = findings
    path.write_text(json.dumps(written))
    return path


def _import(ireebench, storage: str, *files):
    result = ireebench("store", "import", *files, storage)
    assert result.returncode == 0, result.stderr
    return [line.split(" as run ")[1].split()[0] for line in result.stdout.splitlines()]


def _row(result) -> str:
    """NAME's row, its verdict's wrapped lines (indented under it) joined on."""
    lines = result.stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(NAME))
    wrapped = itertools.takewhile(lambda line: line.startswith(" ") and line.strip(),
                                  lines[start + 1:])
    return " ".join([lines[start], *(line.strip() for line in wrapped)])


def test_a_history_made_noisy_passes_within_its_band_and_cannot_judge_beyond(
        reports, ireebench, store_url, tmp_path):
    """Three stored runs at 0.6x, 1x and 1.7x: a new run within their band with no
    significant change passes (exit 0, issue 37: identical builds must pass) and says
    the smallest change this history could have shown; a new run above the band that
    neither test confirms, its interval still among the stored repetitions, cannot be
    judged (exit 4), saying what would decide it."""
    light = json.loads(reports["light"].read_text())
    level = _median_time(light)
    files = [_run_like(tmp_path / f"run{i}.json", light, i, real=_tight(level * scale))
             for i, scale in enumerate((0.6, 1.0, 1.7))]
    storage = f"--benchmark_storage={store_url}"
    _import(ireebench, storage, *files)
    within = _run_like(tmp_path / "within.json", light, 7, real=_tight(level * 1.02))
    result = ireebench("compare", "stored:history", within, storage)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _row(result).endswith("no significant change")
    assert (f"Note: {NAME}: within the 3 stored run(s)' band: passes; only a change of "
            in result.stdout and "or more could have shown against this history" in result.stdout)
    beyond = _run_like(tmp_path / "beyond.json", light, 8,
                       real=[level * (1.62 + 0.04 * k) for k in range(9)])
    result = ireebench("compare", "stored:history", beyond, storage)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "cannot judge (slower than the pooled repetitions" in _row(result)
    assert _row(result).endswith("% > 10%)")
    assert (f"Note: {NAME}: cannot judge: more stored runs (3 now), runs with "
            "--benchmark_processes, or the paired A/B") in result.stdout
    assert result.stdout.rstrip().endswith(
        f"CANNOT JUDGE: 1 benchmark(s) could not be judged: {NAME} (see the verdicts; exit 4, "
        "--accept_cannot_judge passes)")
    data = _json(ireebench("compare", "stored:history", beyond, storage, "--reporter=json"))
    [bench] = data["benchmarks"]
    assert bench["verdict"] == "cannot judge" and not bench["regression"]
    assert bench["detectable"] > 0.5  # the band reaches 1.7x the baseline's median
    assert data["exit_status"] == 4 and data["cannot_judge"] == [NAME]
    accepted = ireebench("compare", "stored:history", beyond, storage, "--accept_cannot_judge")
    assert accepted.returncode == 0 and "cannot judge" in _row(accepted)
    assert "OK (accepted): no significant regression, but 1 benchmark(s) cannot be judged" \
        in accepted.stdout


def test_disturbed_stored_runs_are_left_out_of_the_baseline_and_named(modules, reports,
                                                                      ireebench, tmp_path):
    """Three quiet stored runs of the light module, one measured under load and one
    whose repetitions fell into two regimes, both 12x slower in real time: left out
    of a real-time baseline (they measured otherwise than the quiet runs), so a real
    run of the 8x heavier module is still a regression (one bad night does not blind
    the gate)."""
    heavy = tmp_path / "heavy.json"
    run = ireebench(f"--module={modules['heavy']}", *RUN, f"--benchmark_out={heavy}",
                    "--benchmark_format=json")
    assert run.returncode == 0, run.stderr
    light = json.loads(reports["light"].read_text())
    level = _median_time(light, "cpu_time")
    quiet = [_run_like(tmp_path / f"quiet{i}.json", light, i, real=_tight(level * factor))
             for i, factor in enumerate((1.0, 1.01, 0.99))]
    loaded = _run_like(tmp_path / "loaded.json", light, 3, real=_tight(12 * level),
                       context={"environment_warnings": LOAD})
    regimes = {"multimodal_repetitions": {NAME: {
        "metric": "real_time", "time_unit": "ms",
        "groups": [{"repetitions": 6, "median": 1.0}, {"repetitions": 3, "median": 2.0}]}}}
    bimodal = _run_like(tmp_path / "bimodal.json", light, 4, real=_tight(12 * level),
                        findings=regimes)
    storage = f"--benchmark_storage={new_store_url_for(tmp_path)}"
    *_, loaded_id, bimodal_id = _import(ireebench, storage, *quiet, loaded, bimodal)
    gate = ["compare", "stored:history", heavy, "--metric=real_time", "--threshold=100%",
            storage]
    result = ireebench(*gate)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "slower: REGRESSION (> 100%)" in _row(result)
    assert (f"Note: {NAME}: disturbed stored run(s) left out of its baseline: "
            f"stored:{bimodal_id} (repetitions form 2 separate groups (6 + 3 repetitions)), "
            f"stored:{loaded_id} (load average 3.03 is above the 2 CPUs)") in result.stdout
    assert (f"Disturbed: stored:{loaded_id} (stored run): load average 3.03 is above the 2 "
            "CPUs") in result.stdout
    [bench] = _json(ireebench(*gate, "--reporter=json"))["benchmarks"]
    assert len(bench["baseline_runs"]) == 3 and len(bench["left_out"]) == 2
    assert bench["new_median_seconds"] > bench["band_high_seconds"]


def new_store_url_for(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'results.sqlite'}"


def test_a_new_run_that_shared_its_cpus_is_named_and_a_rerun_advised(reports, ireebench,
                                                                     tmp_path):
    """A new run that shared its CPUs (busy processes; its CPU share halved) is 1.5x
    slower in real time than a quiet history: the halved share explains it, so it
    cannot be judged (exit 4), the disturbance is named and a re-run advised; with
    --metric=auto (the default) the CPU time is compared, the run is faster, and the
    load is named but no re-run advised (CPU time does not count the wait)."""
    light = json.loads(reports["light"].read_text())
    level = _median_time(light)
    history = [_run_like(tmp_path / f"quiet{i}.json", light, i, real=_tight(level * factor))
               for i, factor in enumerate((1.0, 1.01, 0.99))]
    storage = f"--benchmark_storage={new_store_url_for(tmp_path)}"
    _import(ireebench, storage, *history)
    new = _run_like(tmp_path / "new.json", light, 9, real=_tight(1.5 * level),
                    cpu=_tight(0.75 * level), context={"environment_warnings": BUSY})
    result = ireebench("compare", "stored:history", new, storage, "--metric=real_time")
    assert result.returncode == 4, result.stdout + result.stderr
    assert _row(result).endswith(
        "cannot judge (slower in real time, but its CPU share fell 2.00x: it waited for the "
        "CPU); re-run advised")
    # The verdict wraps under its column (60 characters wide), not onto one long line.
    table = result.stdout.split("\n\n")[1].splitlines()
    assert len(table[1].split()[-1]) <= 60 and len(table) == 4, result.stdout
    assert (f"Disturbed: {new} (new): other busy processes: stress (pid 42, 100% of a CPU): "
            "re-run advised") in result.stdout
    assert ("real time and CPU time disagree on a synchronous CPU device (CPU share 0.50 in "
            f"{new}: preempted): the real times measured the wait; --metric=auto (the default) "
            "compares the CPU time") in result.stdout
    auto = ireebench("compare", "stored:history", new, storage, "--reporter=json")
    assert auto.returncode == 0, auto.stdout + auto.stderr
    [bench] = _json(auto)["benchmarks"]
    assert bench["metric"] == "cpu_time" and bench["verdict"] == "faster"
    assert bench["advice"] == "" and "compared on cpu_time (--metric=auto" in \
        " ".join(bench["notes"])
    console = ireebench("compare", "stored:history", new, storage)
    assert (f"Disturbed: {new} (new): other busy processes: stress (pid 42, 100% of a CPU) "
            "(not what the CPU times compared count: no re-run needed)") in console.stdout


def _suite_report(path, samples: dict[str, list[float]], member: str = "real_time",
                  values=None) -> Path:
    """A report of several benchmarks (times in ms; ``member``'s values per benchmark
    from ``values`` when given, else the times)."""
    rows = []
    for name, times in samples.items():
        for index, value in enumerate(times):
            row = {"name": name, "run_name": name, "run_type": "iteration", "iterations": 1,
                   "repetitions": len(times), "repetition_index": index, "real_time": value,
                   "cpu_time": value, "time_unit": "ms"}
            if values is not None:
                row[member] = values[name][index]
            rows.append(row)
    path.write_text(json.dumps({"context": {}, "benchmarks": rows}))
    return path


def test_many_benchmarks_are_corrected_for_multiple_comparisons(ireebench, tmp_path):
    """Twenty benchmarks, one of them slower with p = 0.015 on its own: among twenty
    that is what chance gives (Benjamini-Hochberg, the default, and Holm say no
    change); --correction=none makes it a regression."""
    base = [1 + i / 1000 for i in range(9)]
    names = [f"BM_f{index}" for index in range(20)]
    old = _suite_report(tmp_path / "old.json", {name: base for name in names})
    new = _suite_report(tmp_path / "new.json", {
        name: [v + 0.004 for v in base] if name == "BM_f7" else base for name in names})
    for correction, status, header in (("bh", 0, "p (BH)"), ("holm", 0, "p (Holm)"),
                                       ("none", 1, "p-value")):
        result = ireebench("compare", old, new, f"--correction={correction}")
        assert result.returncode == status, result.stdout + result.stderr
        assert header in result.stdout.splitlines()[3]
        row = next(line for line in result.stdout.splitlines() if line.startswith("BM_f7 "))
        if status == 0:
            assert "no significant change" in row and "0.2982" in row  # 0.0149 x 20
            assert "p-values adjusted over 20 benchmarks" in result.stdout
        else:
            assert "slower: REGRESSION" in row and "0.0149" in row


def test_a_count_of_zero_is_compared(ireebench, tmp_path):
    """Page faults 0 in most repetitions of one run (normal for a count): compared as a
    difference, not "not compared" (issue 26 item 4)."""
    base = [1 + i / 1000 for i in range(9)]
    old = _suite_report(tmp_path / "old.json", {"BM_x": base}, "page_faults",
                        {"BM_x": [0, 1, 0, 2, 0, 1, 0, 0, 1]})
    new = _suite_report(tmp_path / "new.json", {"BM_x": base}, "page_faults",
                        {"BM_x": [5, 6, 5, 7, 6, 5, 6, 7, 5]})
    result = ireebench("compare", old, new, "--metric=page_faults", "--reporter=json")
    assert result.returncode == 1, result.stdout + result.stderr
    [bench] = _json(result)["benchmarks"]
    assert bench["verdict"] == "slower" and bench["regression"] and bench["pvalue"] < 0.001
    assert bench["old_median"] == 0 and bench["new_median"] == 6
    assert "values of 0 or below: compared as a difference (Hodges-Lehmann shift +5" in \
        bench["notes"][0]
    same = ireebench("compare", old, old, "--metric=page_faults", "--reporter=json")
    assert same.returncode == 0 and _json(same)["benchmarks"][0]["verdict"] == \
        "no significant change"


@pytest.mark.parametrize("value, shown", [("abc", "'abc'"), (float("nan"), "nan"),
                                          (float("inf"), "inf")])
def test_a_metric_that_is_not_a_number_is_bad_input(ireebench, tmp_path, value, shown):
    """``--metric=flops`` whose values are text, NaN or Infinity: exit 2, one line naming
    the file, the row and the metric (issue 25 item 9), not "not compared"."""
    base = [1 + i / 1000 for i in range(9)]
    good = _suite_report(tmp_path / "good.json", {"BM_x": base}, "flops",
                         {"BM_x": [1e9] * 9})
    bad = _suite_report(tmp_path / "bad.json", {"BM_x": base}, "flops",
                        {"BM_x": [1e9, 1e9, value] + [1e9] * 6})
    result = ireebench("compare", good, bad, "--metric=flops")
    assert _usage(result) == f"compare: {bad}: benchmark #3 (BM_x): flops is not a finite " \
                             f"number ({shown})"
    assert ireebench("compare", good, bad).returncode == 0  # real_time is fine


def test_reports_whose_every_row_failed_say_so(ireebench, tmp_path):
    """Two reports of error rows only (the native tool's when every function failed):
    "every row failed", naming the first error, exit 2 (issue 26 item 4)."""
    rows = [{"name": name, "run_name": name, "run_type": "iteration", "iterations": 0,
             "real_time": 0, "cpu_time": 0, "time_unit": "ns", "error_occurred": True,
             "error_message": f"{name}: INVALID_ARGUMENT; input shape mismatch"}
            for name in ("BM_a/process_time/real_time", "BM_b/process_time/real_time")]
    native = tmp_path / "nat.json"
    native.write_text(json.dumps({"context": {"executable": "iree-benchmark-module"},
                                  "benchmarks": rows}))
    result = ireebench("compare", native, native)
    assert _usage(result) == (
        f"compare: {native}: every row failed (2 error row(s) in 2 benchmark(s); the first: "
        "BM_a/process_time/real_time: BM_a/process_time/real_time: INVALID_ARGUMENT; input "
        "shape mismatch)")


def test_a_change_whose_sign_differs_from_the_medians_is_marked(ireebench, tmp_path):
    """Medians 1.10 and 1.12 ms (+1.8 %) and a Hodges-Lehmann change of -5 %: correct,
    but it reads like a bug; the change is marked and a footnote says what it is
    (issue 26 item 6)."""
    old = _suite_report(tmp_path / "old.json", {"BM_x": [1.00, 1.01, 1.02, 1.03, 1.10, 1.20,
                                                          1.21, 1.22, 1.23]})
    new = _suite_report(tmp_path / "new.json", {"BM_x": [0.95, 0.96, 0.97, 0.98, 1.12, 1.13,
                                                          1.14, 1.15, 1.16]})
    result = ireebench("compare", old, new, "--detectable=100%")
    assert result.returncode == 0, result.stdout + result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("BM_x "))
    assert "1.1 ms" in row and "1.12 ms" in row and "-5.00% *" in row
    assert ("* Change is the Hodges-Lehmann estimate (the median of the new/old ratios of all "
            "pairs of repetitions), not the ratio of the medians shown; where marked the two "
            "differ in sign (the medians' change: BM_x +1.82%)") in result.stdout
    [bench] = _json(ireebench("compare", old, new, "--reporter=json"))["benchmarks"]
    assert round(bench["median_change"], 4) == 0.0182 and round(bench["change"], 4) == -0.05


@pytest.mark.parametrize("flag, message", [
    ("--detectable=ten", "--detectable=ten: expected a percentage >= 0 such as 10%"),
    ("--detectable=-1%", "--detectable=-1%: expected a percentage >= 0 such as 10%"),
    ("--correction=bonferroni", "--correction=bonferroni: one of bh, holm, none"),
])
def test_bad_gate_flags(reports, ireebench, flag, message):
    assert _usage(ireebench("compare", reports["light"], reports["heavy"], flag)) == message
