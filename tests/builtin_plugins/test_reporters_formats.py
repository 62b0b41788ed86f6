"""JSON, CSV and console output against the native iree-benchmark-module, live.

The native tool from iree-base-runtime (Google Benchmark v1.9.5) and
ireebench run the same module with the same flags; the tests compare the
structure of what they print (keys and their order, number formats, columns,
widths, quoting) and every value that is not a measurement.
"""

import csv
import io
import json
import re

import pytest

PROVENANCE = ["ireebench_version", "iree_runtime_version", "iree_devices", "iree_module",
              "iree_module_sha256", "ireebench_plugins", "ireebench_run_id", "malloc_trim",
              "malloc_parameters"]
MEASURED = {"real_time", "cpu_time", "items_per_second"}
JSON_DOUBLE = re.compile(r"-?\d\.\d{16}e[+-]\d{2,3}|NaN|-?Infinity")
CPP_DOUBLE = re.compile(r"-?(\d+(\.\d+)?|\d(\.\d+)?e[+-]\d\d)")


@pytest.fixture(scope="module")
def two_functions(compile_mlir):
    return compile_mlir("two_functions_long_name")


@pytest.fixture(scope="module")
def with_failure(compile_mlir):
    return compile_mlir("with_failure")


@pytest.fixture(scope="module")
def both(ireebench, native_tool):
    """both(*flags, out_dir=None) -> (native CliResult, ireebench CliResult).

    With ``out_dir``, each writes --benchmark_out to ``out_dir/native`` or
    ``out_dir/ours``.
    """

    def run(*flags, out_dir=None):
        flags = ["--device=local-sync", "--benchmark_min_time=3x", *map(str, flags)]
        out = {who: [f"--benchmark_out={out_dir / who}"] if out_dir else []
               for who in ("native", "ours")}
        return (native_tool("iree-benchmark-module", *flags, *out["native"]),
                ireebench(*flags, *out["ours"]))

    return run


def skeleton(text: str) -> list[str]:
    """JSON text with measurements, dates and paths blanked, line by line."""
    lines = []
    for line in text.splitlines():
        key = line.strip().split(":", 1)[0].strip('"')
        if key in ("date", "executable", "load_avg", "error_message"):
            line = line.split(":", 1)[0] + ": <X>" + ("," if line.endswith(",") else "")
        lines.append(JSON_DOUBLE.sub("<D>", line))
    return lines


def test_json_matches_native(two_functions, both):
    native, ours = both(f"--module={two_functions}", "--benchmark_repetitions=3",
                        "--benchmark_format=json", "--benchmark_context=zz=last,aa=first")
    assert native.returncode == 0 and ours.returncode == 0, ours.stderr
    # JSON goes to stdout only; neither prints the context to stderr.
    assert ours.stderr == "" and native.stderr == ""
    nat, our = json.loads(native.stdout), json.loads(ours.stdout)

    # Context: Google Benchmark's keys in its order, the --benchmark_context
    # entries sorted like its std::map, then ireebench's provenance.
    nat_keys, our_keys = list(nat["context"]), list(our["context"])
    assert our_keys == nat_keys + PROVENANCE
    assert nat_keys[-2:] == ["aa", "zz"]
    for key in nat_keys:
        if key not in ("date", "executable", "load_avg"):
            assert our["context"][key] == nat["context"][key], key
    assert our["context"]["iree_devices"] == ["local-sync"]
    assert our["context"]["iree_module"] == str(two_functions)
    assert len(our["context"]["iree_module_sha256"]) == 64

    # Rows: same names, same keys in the same order, same non-measured values.
    assert [b["name"] for b in our["benchmarks"]] == [b["name"] for b in nat["benchmarks"]]
    assert len(our["benchmarks"]) == 2 * (3 + 4)
    for mine, theirs in zip(our["benchmarks"], nat["benchmarks"]):
        assert list(mine) == list(theirs), mine["name"]
        for key, value in theirs.items():
            if key not in MEASURED:
                assert mine[key] == value, (mine["name"], key)
            assert type(mine[key]) is type(value), key

    # Text layout: indentation, separators and number formats, line by line,
    # once the provenance lines (and the comma that precedes them) are gone.
    assert without_provenance(skeleton(ours.stdout)) == skeleton(native.stdout)


def without_provenance(lines: list[str]) -> list[str]:
    kept = []
    for line in lines:
        if line.strip().split(":", 1)[0].strip('"') in PROVENANCE:
            kept[-1] = kept[-1].removesuffix(",")
            continue
        kept.append(line)
    return kept


def test_json_error_rows_match_native(with_failure, both):
    native, ours = both(f"--module={with_failure}", "--benchmark_format=json")
    assert native.returncode != 0 or ours.returncode != 0
    assert ours.returncode == 1
    nat, our = json.loads(native.stdout), json.loads(ours.stdout)
    assert [list(b) for b in our["benchmarks"]] == [list(b) for b in nat["benchmarks"]]
    failed = our["benchmarks"][-1]
    assert failed["error_occurred"] is True
    assert 'boom "quoted", comma' in failed["error_message"]
    assert failed["family_index"] == 1


def _csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _csv_shape(row: list[str]) -> list[str]:
    """A row with each cell replaced by its kind."""
    shape = []
    for cell in row:
        if cell == "":
            shape.append("")
        elif CPP_DOUBLE.fullmatch(cell):
            shape.append("number")
        else:
            shape.append(cell)
    return shape


def test_csv_matches_native(two_functions, both):
    native, ours = both(f"--module={two_functions}", "--benchmark_repetitions=3",
                        "--benchmark_format=csv", "--benchmark_context=k=v")
    assert ours.returncode == 0, ours.stderr
    nat_lines, our_lines = native.stdout.splitlines(), ours.stdout.splitlines()
    assert our_lines[0] == nat_lines[0] == (
        "name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,"
        "label,error_occurred,error_message")
    assert len(our_lines) == len(nat_lines)
    for mine, theirs in zip(our_lines[1:], nat_lines[1:]):
        assert mine.startswith('"BM_') and mine.split(",")[0] == theirs.split(",")[0]
        assert _csv_shape(next(csv.reader([mine]))) == _csv_shape(next(csv.reader([theirs])))
        # std::ostream's 6 significant digits, never more.
        for cell in mine.split(",")[2:4]:
            assert len(cell.replace(".", "").lstrip("0")) <= 6 or "e" in cell
    # _cv rows: a fraction and no time unit.
    cv = [row for row in _csv_rows(ours.stdout) if row[0].endswith("_cv")]
    assert cv and all(row[4] == "" for row in cv)
    # The context goes to stderr, as Google Benchmark's CSVReporter does.
    assert _context_lines(ours.stderr) == _context_lines(native.stderr)
    assert "k: v" in ours.stderr


def test_csv_error_row_matches_native(with_failure, both):
    native, ours = both(f"--module={with_failure}", "--benchmark_format=csv")
    assert ours.returncode == 1
    nat_rows, our_rows = _csv_rows(native.stdout), _csv_rows(ours.stdout)
    assert [_csv_shape(r)[:9] for r in our_rows] == [_csv_shape(r)[:9] for r in nat_rows]
    failed = ours.stdout.splitlines()[-1]
    assert failed.startswith('"BM_fails/process_time/real_time",,,,,,,,true,"')
    assert 'boom ""quoted"", comma' in failed  # quotes doubled, comma kept inside


def _context_lines(stderr: str) -> list[str]:
    """The context block without the lines that differ between two runs."""
    lines = []
    for line in stderr.splitlines():
        if line.startswith(("Running ", "Load Average: ")) or re.match(r"\d{4}-\d\d-\d\dT", line):
            continue
        if line.startswith(("<vm>", "ireebench:")):
            continue  # the native tool's final status line; ours is the exit code
        lines.append(line)
    return lines


def _console_columns(line: str) -> tuple:
    """Where the columns of a console row end: name, times, iterations."""
    match = re.match(r"(?P<name>\S+) +(?P<real>[\d.]+) (ms|us|ns|%) +(?P<cpu>[\d.]+) "
                     r"(ms|us|ns|%) +(?P<iterations>\d+) ", line)
    assert match, line
    return tuple(match.end(group) for group in ("real", "cpu", "iterations"))


def test_console_matches_native(two_functions, both):
    native, ours = both(f"--module={two_functions}", "--benchmark_repetitions=3",
                        "--benchmark_context=k=v")
    assert ours.returncode == 0, ours.stderr
    nat_lines, our_lines = native.stdout.splitlines(), ours.stdout.splitlines()
    assert our_lines[:3] == nat_lines[:3]  # the header: same widths
    assert len(our_lines) == len(nat_lines)
    for mine, theirs in zip(our_lines[3:], nat_lines[3:]):
        assert mine.split()[0] == theirs.split()[0]
        assert _console_columns(mine) == _console_columns(theirs)
        assert re.search(r" items_per_second=[\d.]+[kMG]?(/s|%)$", mine), mine
    assert _context_lines(ours.stderr) == _context_lines(native.stderr)
    assert ours.stderr.splitlines()[1].startswith("Running ")


def test_console_tabular_matches_native(two_functions, both):
    native, ours = both(f"--module={two_functions}", "--benchmark_repetitions=2",
                        "--benchmark_counters_tabular")
    assert ours.returncode == 0, ours.stderr
    nat_lines, our_lines = native.stdout.splitlines(), ours.stdout.splitlines()
    assert our_lines[:3] == nat_lines[:3]
    assert our_lines[1].endswith("Iterations items_per_second")
    # Counters right-aligned in a column as wide as the counter's name.
    assert [len(line) for line in our_lines] == [len(line) for line in nat_lines]


def test_console_error_row_matches_native(with_failure, both):
    native, ours = both(f"--module={with_failure}")
    assert ours.returncode == 1
    nat_last, our_last = native.stdout.splitlines()[-1], ours.stdout.splitlines()[-1]
    # The name padded to the same width, then the message in quotes.
    assert nat_last.startswith("BM_fails/process_time/real_time")
    assert our_last.split("ERROR OCCURRED: '")[0] == nat_last.split("ERROR OCCURRED: '")[0]
    assert our_last.endswith("'") and 'boom "quoted", comma' in our_last


@pytest.mark.parametrize("flag", ["--benchmark_report_aggregates_only",
                                  "--benchmark_display_aggregates_only"])
def test_aggregates_only_flags_match_native(two_functions, both, tmp_path, flag):
    names = {}
    results = both(f"--module={two_functions}", "--benchmark_repetitions=2", flag,
                   "--benchmark_out_format=json", out_dir=tmp_path)
    for who, result in zip(("native", "ours"), results):
        assert result.returncode == 0, result.stderr
        shown = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("BM_")]
        written = [b["name"] for b in json.loads((tmp_path / who).read_text())["benchmarks"]]
        names[who] = (shown, written)
    assert names["ours"] == names["native"]
    shown, written = names["ours"]
    assert all(name.endswith(("_mean", "_median", "_stddev", "_cv")) for name in shown)
    iterations_in_file = [n for n in written if n.endswith("/real_time")]
    assert len(iterations_in_file) == (4 if flag.endswith("display_aggregates_only") else 0)


@pytest.mark.parametrize("out_format", ["csv", "console"])
def test_out_file_formats_match_native(two_functions, both, tmp_path, out_format):
    """--benchmark_out writes the context into CSV and console files too."""
    texts = {}
    results = both(f"--module={two_functions}", f"--benchmark_out_format={out_format}",
                   "--benchmark_format=json", out_dir=tmp_path)
    for who, result in zip(("native", "ours"), results):
        assert result.returncode == 0, result.stderr
        json.loads(result.stdout)  # the display is unaffected
        texts[who] = (tmp_path / who).read_text().splitlines()
    marks = ("***WARNING", "Load Average")
    nat_context = [i for i, line in enumerate(texts["native"]) if line.startswith(marks)]
    our_context = [i for i, line in enumerate(texts["ours"]) if line.startswith(marks)]
    assert our_context == nat_context
    assert len(texts["ours"]) == len(texts["native"])
    start = max(nat_context) + 1
    if out_format == "csv":
        assert texts["ours"][start] == texts["native"][start]  # the header
    else:
        assert texts["ours"][start:start + 3] == texts["native"][start:start + 3]
