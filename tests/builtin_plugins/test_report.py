"""``ireebench report`` and ``--benchmark_report``: reports from real runs, drawn.

The inputs are real: runs of real compiled modules (repetitions, dispatch
statistics, the cold start), the same module run twice (a comparison), the
native tool's JSON, a history of four runs whose module got heavier (read
through the real ``ireebench_load_reports`` hook by a test plugin, as the
results store answers ``stored:history``), a real ``--sweep`` over n and
dtype with a ``--counter``, and a run with ``--device_time
--memory_statistics``.

Every page is then loaded in a real headless Chromium from file:// (one
browser for all of them, :mod:`browser`): no console error, no request,
a screenshot that is not blank.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser import Browser, blank_fraction, find_chromium
from conftest import _env, one_error_line
from ireebench.comparison import CompareOptions
from ireebench.plugins.report.analysis import change_points, is_geometric
from ireebench.plugins.report.data import family_and_args, read_report

LOCAL = "--device=local-sync"
QUICK = ("--benchmark_repetitions=9", "--benchmark_min_time=5x")
SCREENSHOTS_ENV = "IREEBENCH_REPORT_SCREENSHOTS"  # keep the screenshots there


def _matmul(name: str, n: int, dtype: str = "f32") -> str:
    one = "1.0" if dtype.startswith("f") else "1"
    zero = "0.0" if dtype.startswith("f") else "0"
    t = f"tensor<{n}x{n}x{dtype}>"
    return f"""
func.func @{name}() -> {t} {{
  %a = util.unfoldable_constant dense<{one}> : {t}
  %z = arith.constant {zero} : {dtype}
  %e = tensor.empty() : {t}
  %f = linalg.fill ins(%z : {dtype}) outs(%e : {t}) -> {t}
  %m = linalg.matmul ins(%a, %a : {t}, {t}) outs(%f : {t}) -> {t}
  return %m : {t}
}}
"""


SMALL = """
func.func @add() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _ok(result):
    assert result.returncode == 0, result.stderr
    return result


def _dynamic_matmul(dtype: str) -> str:
    """``mm``: a matmul of two n x n inputs of any n (a sweep's ``--input={n}x{n}x...``)."""
    t = f"tensor<?x?x{dtype}>"
    zero = "0.0" if dtype.startswith("f") else "0"
    return f"""
func.func @mm(%a: {t}, %b: {t}) -> {t} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : {t}
  %n = tensor.dim %b, %c1 : {t}
  %z = arith.constant {zero} : {dtype}
  %e = tensor.empty(%m, %n) : {t}
  %f = linalg.fill ins(%z : {dtype}) outs(%e : {t}) -> {t}
  %r = linalg.matmul ins(%a, %b : {t}, {t}) outs(%f : {t}) -> {t}
  return %r : {t}
}}
"""


@contextlib.contextmanager
def _made_once(tmp_path_factory, name: str):
    """A folder shared by the pytest-xdist workers of this session, and whether it
    still has to be made: the first worker makes it while the others wait (the
    pattern of pytest-xdist's docs, with a POSIX lock). Without xdist the
    session's own base directory: its parent holds every session's."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield shared, not (shared / ".done").exists()
            (shared / ".done").touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def reports(compile_mlir, ireebench, native_tool, tmp_path_factory):
    """Real reports, and the pages drawn from them: name -> path (made once for all
    the workers of the session)."""
    with _made_once(tmp_path_factory, "report") as (folder, to_make):
        if to_make:
            _make_reports(folder, compile_mlir, ireebench, native_tool)
    return {**{name: folder / name for name in PAGES}, "folder": folder,
            "history": folder / "history", "svg": folder / "svg", "png": folder / "png"}


PAGES = ("run.html", "compare.html", "native.html", "history.html", "sweep.html",
         "metrics.html")


def _make_reports(folder: Path, compile_mlir, ireebench, native_tool) -> None:
    module = compile_mlir(_matmul("matmul", 64) + SMALL)
    files = {"run.html": folder / "run.html"}
    # A run that writes its own report; its JSON is the base of the others.
    _ok(ireebench(f"--module={module}", LOCAL, *QUICK, "--dispatch_statistics",
                  "--benchmark_cold_start", f"--benchmark_out={folder / 'first.json'}",
                  f"--benchmark_report={files['run.html']}"))
    _ok(ireebench(f"--module={module}", LOCAL, *QUICK,
                  f"--benchmark_out={folder / 'second.json'}"))
    native = native_tool("iree-benchmark-module", f"--module={module}", LOCAL,
                         "--benchmark_repetitions=3", "--benchmark_min_time=5x",
                         "--benchmark_format=json")
    assert native.returncode == 0, native.stderr
    (folder / "native.json").write_text(native.stdout)
    history = folder / "history"
    history.mkdir()
    light, heavy = compile_mlir(_matmul("work", 16)), compile_mlir(_matmul("work", 128))
    for number, path in enumerate((light, light, heavy, heavy), 1):
        _ok(ireebench(f"--module={path}", LOCAL, *QUICK,
                      f"--benchmark_context=git_commit=c0ffee{number}0000000",
                      f"--benchmark_out={history / f'run{number}.json'}"))
    # A real sweep: n (geometric) and dtype (a module per dtype, named by the axis).
    for dtype in ("f32", "i32"):
        shutil.copy(compile_mlir(_dynamic_matmul(dtype)), folder / f"mm_{dtype}.vmfb")
    _ok(ireebench(f"--module={folder}/mm_{{dtype}}.vmfb", "--function=mm", LOCAL,
                  "--sweep", "n=8..64:*2", "--sweep", "dtype=f32,i32",
                  "--input={n}x{n}x{dtype}=1", "--input={n}x{n}x{dtype}=1",
                  "--counter=flops=2*{n}*{n}*{n}", "--benchmark_repetitions=6",
                  "--benchmark_min_time=5x", f"--benchmark_out={folder / 'sweep.json'}"))
    # Device time and memory as the run measures them.
    _ok(ireebench(f"--module={module}", LOCAL, *QUICK, "--dispatch_statistics",
                  "--device_time", "--memory_statistics",
                  f"--benchmark_out={folder / 'metrics.json'}"))
    for name, inputs, extra in (
            ("compare.html", ["first.json", "second.json"], []),
            ("native.html", ["native.json"], []),
            ("history.html", [f"history:{history}"], ["-p", "report_history"]),
            ("sweep.html", ["sweep.json"], ["--output_dir", str(folder / "png"),
                                            "--format=png"]),
            ("metrics.html", ["metrics.json"], ["--output_dir", str(folder / "svg")])):
        _ok(ireebench("report", *inputs, "-o", folder / name, *extra, cwd=folder))


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _sections(path: Path) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', _text(path))


def _charts(path: Path) -> int:
    return len(re.findall(r"<figure>", _text(path)))


def test_a_run_writes_its_report(reports):
    """--benchmark_report: the run's rows, drawn when it ends, dispatches and all."""
    page = reports["run.html"]
    assert _sections(page) == ["inputs", "benchmarks", "dispatches"]
    text = _text(page)
    assert "BM_matmul" in text and "BM_add" in text and "cold start" in text
    assert "dispatch_0_matmul_64x64x64_f32" in text
    assert _charts(page) == 3  # two distributions, the matmul's dispatches (add has none)


def test_two_runs_compared_with_the_verdicts_of_compare(reports, ireebench):
    """The comparison section is ireebench compare's: the same verdicts, the same geomean."""
    folder = reports["folder"]
    result = ireebench("compare", folder / "first.json", folder / "second.json",
                       "--reporter=json")
    assert result.returncode in (0, 1, 4), result.stderr  # 4: cannot judge, on this noise
    comparison = result.json()
    text = _text(reports["compare.html"])
    assert _sections(reports["compare.html"])[:2] == ["inputs", "comparison"]
    for benchmark in comparison["benchmarks"]:
        name = benchmark["name"].removesuffix("/process_time/real_time")
        row = re.search(rf"<tr><td class=\"name\">{re.escape(name)}</td>.*?</tr>", text)
        assert row and benchmark["verdict"] in row.group(0), name
    geomean = comparison["geomean"]["change"] * 100
    assert f"Geometric mean of the changes: {geomean:+.2f}%" in text
    # Both runs beside each other in each benchmark's distribution.
    assert text.count("#1 first.json") >= 2 and text.count("#2 second.json") >= 2


def test_a_history_shows_the_trend_and_the_change_point(reports):
    """Four stored runs, the module's matmul 512x the work from the third (a shift
    far beyond what load does to a median): one change point, at the third run's
    commit."""
    page = reports["history.html"]
    assert "trend" in _sections(page)
    text = _text(page)
    table = text.split('id="trend"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr><td") == 1, table
    assert "c0ffee30000000" in table and "slower" in table and "history:run3" in table


def test_the_native_tools_json(reports):
    page = reports["native.html"]
    assert _sections(page) == ["inputs", "benchmarks"]
    assert "iree-benchmark-module" in _text(page)
    assert _charts(page) == 2


def test_a_sweep_against_each_axis_and_its_files(reports):
    """Time and throughput against n (log axis: 8..64) and dtype; each chart a PNG too."""
    page = reports["sweep.html"]
    assert "sweeps" in _sections(page)
    text = _text(page)
    for caption in ("BM_mm: wall time per iteration against n",
                    "BM_mm: flops per second against n",
                    "BM_mm: wall time per iteration against dtype"):
        assert caption in text
    assert "n (sweep axis, log scale)" in text  # log axis (matplotlib keeps the text as a comment)
    files = sorted(path.name for path in reports["png"].iterdir())
    assert "sweep-BM_mm-n-real_time.png" in files and "sweep-BM_mm-dtype-flops.png" in files
    assert len([name for name in files if name.startswith("distribution-")]) == 8
    assert all((reports["png"] / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in files)


def test_device_time_and_memory(reports):
    page = reports["metrics.html"]
    assert _sections(page) == ["inputs", "benchmarks", "dispatches", "metrics"]
    text = _text(page)
    assert "host overhead (wall − device)" in text
    for caption in ("max_bytes_used", "total_allocated_bytes", "net_heap_growth",
                    "device_bytes_peak", "host_bytes_peak"):
        assert f"<figcaption>{caption}</figcaption>" in text  # bytes, never "per second"
    files = sorted(path.name for path in reports["svg"].iterdir())
    assert "device_time.svg" in files and "metric-max_bytes_used.svg" in files
    svg = (reports["svg"] / "device_time.svg").read_text()
    assert svg.startswith("<?xml") and "<text" not in svg  # text as paths: no font named


REMOTE = re.compile(r"(?:https?:|ftp:|wss?:)?//[\w.-]+", re.IGNORECASE)


def test_no_page_names_a_remote_resource(reports):
    """No script, stylesheet, font or image from anywhere: no <script>, <link>,
    <img>, src=, @import, url() but the page's own #ids, and no address at all
    but the XML namespaces of the SVG elements."""
    for name in PAGES:
        text = _text(reports[name])
        for pattern in (r"<script", r"<link", r"<img", r"<iframe", r"<object", r"<embed",
                        r"\bsrc\s*=", r"@import", r"@font-face", r"url\((?!#)"):
            assert not re.search(pattern, text, re.IGNORECASE), (name, pattern)
        bare = re.sub(r'\bxmlns(?::\w+)?="[^"]*"', "", text)
        assert not REMOTE.search(bare), (name, REMOTE.search(bare).group(0))
        assert re.findall(r'href="([^#"][^"]*)"', bare) == [], name


def test_the_page_grows_by_tens_of_kilobytes_a_benchmark(reports, ireebench, tmp_path):
    """20 benchmarks (real rows of one, renamed and scaled) take under 40 kB each, so a
    100-benchmark run stays a few MB (docs/report.md: 2.0 MB measured)."""
    first = json.loads((reports["folder"] / "first.json").read_text())
    base = [row for row in first["benchmarks"]
            if row["run_name"] == "BM_add/process_time/real_time"]
    rows = []
    for index in range(20):
        for row in base:
            copied = dict(row)
            run = f"BM_layer_{index:03d}_fused_attention_block/process_time/real_time"
            copied.update(name=run + row["name"][len(row["run_name"]):], run_name=run,
                          family_index=index)
            if row.get("aggregate_unit") != "percentage":
                copied.update(real_time=row["real_time"] * 1.7 ** index,
                              cpu_time=row["cpu_time"] * 1.7 ** index)
            rows.append(copied)
    (tmp_path / "big.json").write_text(json.dumps({"context": first["context"],
                                                   "benchmarks": rows}))
    _ok(ireebench("report", tmp_path / "big.json", "-o", tmp_path / "big.html"))
    assert _charts(tmp_path / "big.html") == 20
    assert (tmp_path / "big.html").stat().st_size < 20 * 40_000


@pytest.fixture(scope="module")
def browser():
    executable = find_chromium()
    if executable is None:
        reason = "Chromium not found (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true needs it (.ci/run installs it)")
        pytest.skip(reason)
    browser = Browser(executable)
    yield browser
    browser.close()


def test_every_page_renders_in_chromium(reports, browser, tmp_path):
    """From file://: no console error, no request, a screenshot that is not blank.
    A page that does request and log is caught (the check can fail)."""
    keep = os.environ.get(SCREENSHOTS_ENV)
    for name in PAGES:
        load = browser.load(reports[name])
        assert load.problems == [], (name, load.problems)
        assert blank_fraction(load.screenshot) < 0.97, name
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"{Path(name).stem}.png").write_bytes(load.screenshot)
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p>"
                   "<img src=\"http://127.0.0.1:9/chart.png\">"
                   "<script>console.error('broken')</script></body></html>")
    load = browser.load(bad)
    assert any("broken" in problem for problem in load.problems), load.problems
    assert "request: http://127.0.0.1:9/chart.png" in load.problems


def test_nothing_to_draw_is_one_line(ireebench, tmp_path, reports):
    empty = tmp_path / "empty.json"
    empty.write_text('{"context": {}, "benchmarks": []}')
    result = ireebench("report", empty, "-o", tmp_path / "x.html")
    assert one_error_line(result) == f"ireebench: error: report: {empty}: nothing to draw " \
                                     "(no benchmark rows)"
    assert not (tmp_path / "x.html").exists()
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps({"context": {}, "benchmarks": [
        {"name": "BM_f/process_time/real_time", "run_name": "BM_f/process_time/real_time",
         "run_type": "iteration", "error_occurred": True, "error_message": "boom",
         "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ms"}]}))
    result = ireebench("report", failed, reports["folder"] / "native.json", "-o",
                       tmp_path / "y.html")
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"ireebench: warning: report: {failed}: nothing to draw (every " \
                            "benchmark failed (1; BM_f: boom))\n"


@pytest.mark.parametrize("field, value, reason", [
    ("time_unit", ["ns"], "unknown time_unit ['ns'] (one of ns, us, ms, s)"),
    ("real_time", "fast", "real_time is not a finite number ('fast')"),
    ("max_bytes_used", 10 ** 400, None),  # beyond any float: not a metric, no error
], ids=["unit-a-list", "time-a-string", "number-beyond-floats"])
def test_a_bad_row_is_one_line_naming_it(ireebench, tmp_path, field, value, reason):
    """Rows are read as compare reads them (one line, exit 1), never a traceback."""
    row = {"name": "BM_x", "run_name": "BM_x", "run_type": "iteration", "iterations": 1,
           "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms", field: value}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"context": {}, "benchmarks": [row]}))
    result = ireebench("report", bad, "-o", tmp_path / "x.html")
    if reason is None:
        assert result.returncode == 0 and (tmp_path / "x.html").exists(), result.stderr
        return
    assert one_error_line(result) == f"ireebench: error: report: {bad}: benchmark #1 (BM_x): " \
                                     f"{reason}"
    assert not (tmp_path / "x.html").exists()


@pytest.mark.parametrize("args, line", [
    ((), "report: expected one or more inputs"),
    (("A.json",), "report: nothing to write: give -o FILE.html and/or --output_dir=DIR"),
    (("A.json", "-o", "x.html", "--format=png"), "--format=png: needs --output_dir"),
    (("A.json", "--output_dir=d", "--format=gif"), "--format=gif: one of svg, png"),
    (("missing.json", "-o", "x.html"), "report: missing.json: file not found"),
    (("A.json", "-o", "no/such/dir/x.html"), "--output=no/such/dir/x.html: directory"),
])
def test_bad_command_lines(ireebench, tmp_path, args, line):
    (tmp_path / "A.json").write_text('{"context": {}, "benchmarks": []}')
    result = ireebench("report", *args, cwd=tmp_path)
    assert line in one_error_line(result)
    assert not (tmp_path / "x.html").exists()


def test_without_matplotlib_one_line_names_the_extra(tmp_path, compile_mlir, reports):
    """matplotlib made unimportable (None in sys.modules, from a sitecustomize):
    the report and a run asking for one say which extra to install; the run
    says it before measuring anything."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['matplotlib'] = None\n")
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(hide), env["PYTHONPATH"]])

    def run(*args):
        return subprocess.run([sys.executable, "-m", "ireebench", *map(str, args)],
                              capture_output=True, text=True, env=env, timeout=120,
                              check=False)

    result = run("report", reports["folder"] / "native.json", "-o", tmp_path / "x.html")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ("ireebench: error: report: needs matplotlib, which is not "
                             "installed: pip install \"ireebench[report]\"\n")
    module = compile_mlir(SMALL)
    result = run(f"--module={module}", LOCAL, f"--benchmark_report={tmp_path / 'y.html'}")
    assert result.returncode == 1 and result.stdout == ""
    assert "pip install \"ireebench[report]\"" in result.stderr
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "y.html").exists()


def test_help_and_a_run_import_no_matplotlib(compile_mlir):
    """The extra is imported only when a report is made."""
    module = compile_mlir(SMALL)
    code = ("import io, sys, ireebench\n"
            "ireebench.run(['--help'], stdout=io.StringIO(), stderr=io.StringIO())\n"
            f"ireebench.run(['--module={module}', '{LOCAL}', '--benchmark_min_time=2x'],"
            " stdout=io.StringIO(), stderr=io.StringIO())\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=_env(), timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --- the pieces, on their own ---------------------------------------------------------


def test_sweep_axes_from_names_and_log_scales():
    assert family_and_args("BM_forward/bs:4/seq:2048/process_time/real_time") == (
        "BM_forward", {"bs": 4, "seq": 2048})
    assert family_and_args("BM_f/process_time/real_time") == ("BM_f", {})
    assert is_geometric([1, 2, 4, 8]) and is_geometric([128, 1024, 4096])
    assert not is_geometric([128, 256, 384, 512]) and not is_geometric(["a", "b", "c"])


def test_rows_under_a_benchmark_are_its_own():
    """Dispatch rows and the cold start belong to the benchmark above them."""
    row = {"run_type": "iteration", "iterations": 10, "time_unit": "ms", "family_index": 0}
    report = read_report("r", {"context": {}, "benchmarks": [
        {**row, "name": "BM_f/process_time/real_time", "real_time": 2.0, "cpu_time": 2.0},
        {**row, "name": "BM_f/cold_start", "real_time": 5.0, "cpu_time": 5.0},
        {**row, "name": "BM_f/f_dispatch_0", "real_time": 1.5, "cpu_time": 1.5,
         "calls": 1.0, "percent": 100.0},
        {**row, "name": "BM_g/process_time/real_time", "real_time": 3.0, "cpu_time": 3.0,
         "family_index": 1}]})
    assert list(report.benchmarks) == ["BM_f/process_time/real_time",
                                       "BM_g/process_time/real_time"]
    first = report.benchmarks["BM_f/process_time/real_time"]
    assert first.cold_start.real == pytest.approx(5e-3)
    assert [d.name for d in first.dispatches] == ["f_dispatch_0"]


def test_change_points_need_a_shift_beyond_the_run_to_run_noise():
    """A 30% step after four runs is found where it is; a wobble of a few percent
    between runs (each run's own repetitions tight) is not a change."""
    options = CompareOptions()

    def run(level, number):
        return [level * (1 + 0.002 * ((i * 7 + number) % 5)) for i in range(9)]

    levels = [1.0, 1.01, 0.99, 1.0, 1.3, 1.31, 1.29, 1.3]
    points = change_points("f", [run(v, i) for i, v in enumerate(levels)], options)
    assert [p.index for p in points] == [4] and points[0].verdict == "slower"
    wobble = [1.0, 1.04, 0.97, 1.03, 0.98, 1.02, 0.96, 1.01]
    assert change_points("f", [run(v, i) for i, v in enumerate(wobble)], options) == []

