"""``ireebench report`` and ``--benchmark_report``: reports from real runs, drawn.

The inputs are real: runs of real compiled modules (repetitions, dispatch
statistics, the cold start), the same module run twice (a comparison), the
native tool's JSON, five runs saved to the real results store (SQLite; the
same runs imported into the session's real PostgreSQL) whose module does
512x the work from the fourth, read back as ``stored:history``, a real
``--sweep`` over n and dtype with a ``--counter``, a run with
``--device_time --memory_statistics``, a counter that is not a rate, and
the example plugin that adds a section (examples/plugins/report_slowest).

The pages are made once for the session (all pytest-xdist workers share
them) and each is then loaded in a real headless Chromium from file://
(one browser for all of them, :mod:`browser`): no console error, no
request, a screenshot that is not blank, the Inputs table within 800 px.
"""

from __future__ import annotations

import contextlib
import fcntl
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ireebench as ireebench_api
import pytest
from browser import Browser, blank_fraction, find_chromium
from conftest import ROOT, STORE_KINDS, _env, new_store_url, one_error_line
from ireebench.comparison import CompareOptions
from ireebench.plugins.report.analysis import change_points, is_geometric, sweeps
from ireebench.plugins.report.data import family_and_args, read_report
from ireebench.reporting import ReportSection

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
            "history": folder / "history", "svg": folder / "svg", "png": folder / "png",
            "outputs": json.loads((folder / "outputs.json").read_text())}


PAGES = ("run.html", "compare.html", "native.html", "history.html", "sweep.html",
         "metrics.html", "section.html")
SLOWEST = ROOT / "examples" / "plugins" / "report_slowest" / "ireebench_report_slowest.py"
# The history: the module does 512x the work from the fourth run on.
HISTORY_MODULES = ("light", "light", "light", "heavy", "heavy")


def _report(ireebench, folder: Path, name: str, *args, env=None) -> dict:
    """``ireebench report ARGS -o NAME``: what it printed (it must succeed, silently
    but for the path it wrote)."""
    result = ireebench("report", *args, "-o", folder / name, cwd=folder, env=env)
    assert result.returncode == 0, result.stderr
    return {"stdout": result.stdout, "stderr": result.stderr}


def _make_reports(folder: Path, compile_mlir, ireebench, native_tool) -> None:
    module = compile_mlir(_matmul("matmul", 64) + SMALL)
    files = {"run.html": folder / "run.html"}
    outputs = {}
    # A run that writes its own report; its JSON is the base of the others.
    run = _ok(ireebench(f"--module={module}", LOCAL, *QUICK, "--dispatch_statistics",
                        "--benchmark_cold_start", f"--benchmark_out={folder / 'first.json'}",
                        f"--benchmark_report={files['run.html']}"))
    outputs["run.html"] = {"stdout": "", "stderr": run.stderr}
    _ok(ireebench(f"--module={module}", LOCAL, *QUICK,
                  f"--benchmark_out={folder / 'second.json'}"))
    native = native_tool("iree-benchmark-module", f"--module={module}", LOCAL,
                         "--benchmark_repetitions=3", "--benchmark_min_time=5x",
                         "--benchmark_format=json")
    assert native.returncode == 0, native.stderr
    (folder / "native.json").write_text(native.stdout)
    # Five runs saved to a real store (SQLite) as a user saves them, each with the
    # commit it measured; their JSON is kept for the PostgreSQL test.
    history = folder / "history"
    history.mkdir()
    store = {"IREEBENCH_STORAGE": f"sqlite:///{folder / 'store.sqlite'}"}
    paths = {"light": compile_mlir(_matmul("work", 16)),
             "heavy": compile_mlir(_matmul("work", 128))}
    for number, kind in enumerate(HISTORY_MODULES, 1):
        _ok(ireebench(f"--module={paths[kind]}", LOCAL, *QUICK,
                      f"--benchmark_context=git_commit=c0ffee{number}",
                      f"--benchmark_out={history / f'run{number}.json'}", "--benchmark_save",
                      env=store))
    # A real sweep: n (geometric) and dtype (a module per dtype, named by the axis).
    for dtype in ("f32", "i32"):
        shutil.copy(compile_mlir(_dynamic_matmul(dtype)), folder / f"mm_{dtype}.vmfb")
    _ok(ireebench(f"--module={folder}/mm_{{dtype}}.vmfb", "--function=mm", LOCAL,
                  "--sweep", "n=8..64:*2", "--sweep", "dtype=f32,i32",
                  "--input={n}x{n}x{dtype}=1", "--input={n}x{n}x{dtype}=1",
                  "--counter=flops=2*{n}*{n}*{n}", "--benchmark_repetitions=6",
                  "--benchmark_min_time=5x", f"--benchmark_out={folder / 'sweep.json'}"))
    # Device time and memory as the run measures them, a rate counter (--counter)
    # and one that is not a rate (a plugin's count of page faults).
    _ok(ireebench(f"--module={module}", LOCAL, *QUICK, "--dispatch_statistics",
                  "--device_time", "--memory_statistics", "--counter=flops=2*64*64*64",
                  "--plugin=page_faults", f"--benchmark_out={folder / 'metrics.json'}"))
    for name, inputs, extra, env in (
            ("compare.html", ["first.json", "second.json"], [], None),
            ("native.html", ["native.json"], [], None),
            ("history.html", ["stored:history"], [], store),
            ("sweep.html", ["sweep.json"], ["--output_dir", str(folder / "png"),
                                            "--format=png"], None),
            ("metrics.html", ["metrics.json"], ["--output_dir", str(folder / "svg")], None),
            ("section.html", ["first.json", "second.json"], [f"--plugin={SLOWEST}"], None)):
        outputs[name] = _report(ireebench, folder, name, *inputs, *extra, env=env)
    (folder / "outputs.json").write_text(json.dumps(outputs))


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _sections(path: Path) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', _text(path))


def _section(path: Path, anchor: str) -> str:
    return _text(path).split(f'<section id="{anchor}">', 1)[1].split("</section>", 1)[0]


def _charts(path: Path) -> int:
    return len(re.findall(r"<figure>", _text(path)))


# The headline's class and first words for each verdict of the gate.
HEADLINE_CSS = {"slower": "verdict-slower", "faster": "verdict-faster",
                "cannot judge": "verdict-cannot", "inconclusive": "verdict-cannot",
                "no significant change": ""}
HEADLINE_START = {"slower": "BM_work: ", "faster": "BM_work: ",
                  "cannot judge": "Cannot judge: BM_work", "inconclusive": "Inconclusive: BM_work",
                  "no significant change": "No significant change: "}


def _headline(path: Path) -> tuple[str, str]:
    """The summary's headline: its verdict class and its text."""
    found = re.search(r'<p class="headline ?([^"]*)">(.*?)</p>', _section(path, "summary"))
    assert found, _section(path, "summary")
    return found.group(1), html.unescape(found.group(2))


def test_every_page_says_where_it_is_and_nothing_else(reports):
    """`ireebench report` prints the path it wrote (one line on stdout) and nothing on
    stderr: no matplotlib warning naming its own files; a run's --benchmark_report
    is as quiet."""
    for name, printed in reports["outputs"].items():
        if name == "run.html":  # a run's stderr has its context; no warning
            assert "Warning" not in printed["stderr"] and "matplotlib" not in printed["stderr"]
            continue
        assert printed["stderr"] == "", (name, printed["stderr"])
        assert printed["stdout"].splitlines()[0] == f"wrote {reports[name].resolve()}"


def test_a_run_writes_its_report(reports):
    """--benchmark_report: the run's rows, drawn when it ends; the verdict first, the
    provenance last; one dispatch per benchmark is a table, not a chart."""
    page = reports["run.html"]
    assert _sections(page) == ["summary", "benchmarks", "dispatches", "inputs"]
    text = _text(page)
    assert "BM_matmul" in text and "BM_add" in text and "cold start" in text
    assert "dispatch_0_matmul_64x64x64_f32" in _section(page, "dispatches")
    assert "run one dispatch each" in _section(page, "dispatches")
    assert _charts(page) == 1  # both benchmarks on one shared axis


def test_two_runs_compared_with_the_verdicts_of_compare(reports, ireebench):
    """The comparison section is ireebench compare's: the same verdicts, the same geomean."""
    folder = reports["folder"]
    result = ireebench("compare", folder / "first.json", folder / "second.json",
                       "--reporter=json")
    assert result.returncode in (0, 1, 4), result.stderr  # 4: cannot judge, on this noise
    comparison = result.json()
    page = reports["compare.html"]
    assert _sections(page)[:2] == ["summary", "comparison"]
    text = _section(page, "comparison")
    for benchmark in comparison["benchmarks"]:
        name = benchmark["name"].removesuffix("/process_time/real_time")
        row = re.search(rf"<tr><td class=\"name\">{re.escape(name)}</td>.*?</tr>", text)
        assert row and benchmark["verdict"] in row.group(0), name
    geomean = comparison["geomean"]["change"] * 100
    assert f"Geometric mean of the changes: {geomean:+.2f}%" in text
    # Both runs beside each other in each benchmark's distribution.
    assert _text(page).count("#1 first.json") >= 2 and _text(page).count("#2 second.json") >= 2


def _check_history(page: Path, gate: dict) -> None:
    """Five stored runs, 512x the work from run 4: the headline is the gate's verdict
    of the latest (``gate``: what ``ireebench compare stored:history stored:latest
    --reporter=json`` says); "slower" at the top is the change point (from #4 at its
    commit), labelled as one, and in the trend; the trend oldest first; the latest
    is #5, judged against the four before it as the gate judges it."""
    summary = _section(page, "summary")
    assert _sections(page)[0] == "summary"
    [judged] = gate["benchmarks"]
    css, text = _headline(page)
    # The gate finds the latest within its history (run 4 is stored, on the new
    # level); the page leads with the shift the latest stands on: slower, since #4.
    assert judged["verdict"] in ("no significant change", "slower", "cannot judge"), judged
    assert css == "verdict-slower", (css, text, judged)
    assert re.match(r"BM_work: \d+× slower", text) and "regression, from commit c0ffee4" \
        in text, text
    # The change point (by its first report and commit), labelled as one, its own test.
    assert re.search(r'verdict-slower">change point: slower</span></td>'
                     r'<td class="name">BM_work</td><td class="num">\+[\d.]+%</td>',
                     summary), summary
    assert re.search(r"from #4 stored:\w+ \(commit c0ffee4, ", summary), summary
    assert "faster" not in summary
    trend = _section(page, "trend")
    rows = re.findall(r"<tr><td>.*?</tr>", trend.split("</table>", 1)[0])
    assert len(rows) == 1 and "slower" in rows[0] and "#4 stored:" in rows[0], rows
    assert "c0ffee4" in rows[0]
    # The x axis oldest first (the tick labels, kept by matplotlib as comments).
    ticks = re.findall(r"<!-- (c0ffee\d) -->", trend)
    assert ticks[:5] == [f"c0ffee{n}" for n in range(1, 6)], ticks
    assert "<!-- slower +" in trend  # the change point's label on the chart
    comparison = _section(page, "comparison")
    assert re.search(r"#5 stored:\w+ \(the latest\) against the 4 report\(s\) before it",
                     comparison)
    assert judged["verdict"] in comparison
    inputs = _section(page, "inputs").split("<th>#</th>", 1)[1].split("</table>", 1)[0]
    commits = re.findall(r"<td class=\"name\">(c0ffee\d)</td>", inputs)
    assert commits == [f"c0ffee{n}" for n in range(1, 6)], commits


def _gate(ireebench, env) -> dict:
    """The gate's verdict of the store's latest run against the runs before it."""
    result = ireebench("compare", "stored:history", "stored:latest", "--reporter=json",
                       env=env)
    assert result.returncode in (0, 1, 4), result.stderr
    return result.json()


def test_a_stored_history_reads_oldest_first_in_sqlite(reports, ireebench):
    """The store hands a history over newest first; the page reads it oldest first."""
    store = {"IREEBENCH_STORAGE": f"sqlite:///{reports['folder'] / 'store.sqlite'}"}
    _check_history(reports["history.html"], _gate(ireebench, store))


@pytest.mark.parametrize("store_kind", [kind for kind in STORE_KINDS if kind != "sqlite"])
def test_a_stored_history_reads_oldest_first_in(store_kind, request, reports, ireebench,
                                                 tmp_path):
    """The same five runs imported into the session's real PostgreSQL."""
    url = new_store_url(request, store_kind, tmp_path)
    runs = [reports["history"] / f"run{n}.json" for n in range(1, 6)]
    env = {"IREEBENCH_STORAGE": url}
    result = ireebench("store", "import", *runs, env=env)
    assert result.returncode == 0, result.stderr
    page = tmp_path / "history.html"
    result = ireebench("report", "stored:history", "-o", page, env=env)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    _check_history(page, _gate(ireebench, env))


def test_the_native_tools_json(reports):
    page = reports["native.html"]
    assert _sections(page) == ["summary", "benchmarks", "inputs"]
    assert "iree-benchmark-module" in _text(page)
    assert _charts(page) == 1


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
    assert "distribution-1.png" in files  # the eight points on one axis
    assert all((reports["png"] / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in files)
    assert reports["outputs"]["sweep.html"]["stdout"].splitlines()[1] == \
        f"wrote {len(files)} chart file(s) to {reports['png'].resolve()}"


def test_a_legend_of_any_label_and_no_warning(reports, ireebench, tmp_path):
    """A sweep axis named "_dtype" (matplotlib hides a legend label starting with "_"
    and warns, naming the chart code's file): every line in the legend, nothing on
    stderr."""
    report = json.loads((reports["folder"] / "sweep.json").read_text())
    for row in report["benchmarks"]:
        if isinstance(row.get("params"), dict):
            row["params"] = {("_" + key if key == "dtype" else key): value
                             for key, value in row["params"].items()}
    (tmp_path / "axis.json").write_text(json.dumps(report))
    result = ireebench("report", tmp_path / "axis.json", "-o", tmp_path / "axis.html")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    chart = _text(tmp_path / "axis.html").split("against n</figcaption>", 1)[1]
    assert "<!-- _dtype=f32 -->" in chart.split("</svg>", 1)[0]


def test_device_time_memory_and_counters(reports):
    """Bytes in one binary unit, a rate in its SI prefix per second, a count as it is:
    never "per second" for what is not a rate; a chart only where benchmarks differ."""
    page = reports["metrics.html"]
    assert _sections(page) == ["summary", "benchmarks", "dispatches", "metrics", "inputs"]
    text = _section(page, "metrics")
    assert "host overhead (wall − device)" in text
    headers = re.findall(r"<th>([^<]+)</th>", text)
    assert "page_faults" in headers  # a plugin's count: no unit, not a rate
    assert "flops (G/s)" in headers or "flops (M/s)" in headers  # --counter: a rate
    assert {"max_bytes_used (KiB)", "host_bytes_peak (KiB)"} <= set(headers)
    assert "page_faults per second" not in text
    captions = re.findall(r"<figcaption>([^<]+)</figcaption>", text)
    assert "host_bytes_peak" not in captions  # all zero: the table says it
    assert "max_bytes_used" not in captions  # one benchmark has it: the table says it
    assert "device time against wall time" in captions
    files = sorted(path.name for path in reports["svg"].iterdir())
    assert "metric-total_allocated_bytes.svg" in files
    svg = (reports["svg"] / "metric-total_allocated_bytes.svg").read_text()
    assert svg.startswith("<?xml") and "<text" not in svg  # text as paths: no font named


def test_a_plugin_adds_a_section_at_its_place(reports):
    """The example plugin's section comes right after the summary, its chart inlined
    with ids of its own (no id twice on the page)."""
    page = reports["section.html"]
    assert _sections(page)[:3] == ["summary", "ireebench_report_slowest-Where_the_time_goes",
                                   "comparison"]
    assert "<svg" in _section(page, "ireebench_report_slowest-Where_the_time_goes")
    ids = re.findall(r'\bid="([^"]+)"', _text(page))
    assert len(ids) == len(set(ids))


def test_a_broken_section_is_its_plugins_error(reports, ireebench, tmp_path):
    """A section that raises: the plugin named, exit 3, the page written with every
    other section and a line in its place; the chart it drew is not kept."""
    page = tmp_path / "broken.html"
    result = ireebench("report", reports["folder"] / "first.json",
                       reports["folder"] / "second.json", "-p", "report_broken_section",
                       "-o", page)
    assert result.returncode == 3
    line = ("plugin 'report_broken_section' failed in ireebench_report_sections (section "
            "'Broken'): ZeroDivisionError: the section broke")
    assert result.stderr == f"ireebench: plugin error: {line}\n", result.stderr
    assert result.stdout == f"wrote {page.resolve()}\n"
    assert _sections(page) == ["summary", "comparison", "report_broken_section-Broken",
                               "benchmarks", "inputs"]
    broken = _section(page, "report_broken_section-Broken")
    assert "could not be drawn" in broken and "never shown" not in broken
    assert "<svg" not in broken and "drawn before the failure" not in _text(page)


class _NotASection:
    """A plugin whose hook returns text instead of sections."""

    @staticmethod
    @ireebench_api.hookimpl(optionalhook=True)
    def ireebench_report_sections():
        return "a section, honest"


def test_what_is_not_a_section_is_its_plugins_error(reports, tmp_path):
    """Through the Python API and the real plugin manager: the plugin named, what it
    returned said, the page written with the built-in sections."""
    page = tmp_path / "page.html"
    with pytest.raises(ireebench_api.PluginError) as caught:
        ireebench_api.run(["report", str(reports["folder"] / "first.json"), "-o", str(page)],
                          plugins=[_NotASection()])
    assert str(caught.value) == (
        "plugin '_NotASection' failed in ireebench_report_sections: TypeError: returned "
        "str; expected a ReportSection, a list of them, or None")
    assert _sections(page) == ["summary", "benchmarks", "dispatches", "inputs"]


class _TwoSvgSections:
    """A plugin drawing the same SVG of its own twice, its ids the same each time."""

    SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><defs>'
           '<linearGradient id="fade"><stop offset="0" stop-color="#000"/></linearGradient>'
           '</defs><rect width="40" height="20" fill="url(#fade)"/></svg>')

    @staticmethod
    def render(report, out):
        out.svg(_TwoSvgSections.SVG, "one")
        out.svg(_TwoSvgSections.SVG, "two")

    @staticmethod
    @ireebench_api.hookimpl(optionalhook=True)
    def ireebench_report_sections():
        return [ReportSection("Own SVG", _TwoSvgSections.render, order=95)]


def test_an_svg_of_its_own_gets_ids_of_its_own(reports, tmp_path):
    """The chart helper prefixes every id of an SVG a section made itself, so two
    copies on one page never share one; the --output_dir files are kept as given."""
    page = tmp_path / "page.html"
    ireebench_api.run(["report", str(reports["folder"] / "first.json"), "-o", str(page),
                       "--output_dir", str(tmp_path / "charts")], plugins=[_TwoSvgSections()])
    section = _section(page, "TwoSvgSections-Own_SVG")
    ids = re.findall(r'\bid="([^"]+)"', section)
    assert len(ids) == 2 and len(set(ids)) == 2 and all(i.endswith("-fade") for i in ids)
    for name in ids:
        assert f'url(#{name})' in section
    files = sorted(path.name for path in (tmp_path / "charts").iterdir())
    assert {"TwoSvgSections-Own_SVG-one.svg", "TwoSvgSections-Own_SVG-two.svg"} <= set(files)


def test_past_the_chart_limit_a_summary_view(reports, ireebench, tmp_path):
    """60 benchmarks (real rows of one, renamed and scaled), two runs: the charts show
    the 40 most changed and say so; every benchmark is in the tables."""
    first = json.loads((reports["folder"] / "first.json").read_text())
    base = [row for row in first["benchmarks"]
            if row["run_name"] == "BM_add/process_time/real_time"]

    def renamed(factor):
        rows = []
        for index in range(60):
            for row in base:
                copied = dict(row)
                run = f"BM_layer_{index:03d}_fused_attention_block/process_time/real_time"
                copied.update(name=run + row["name"][len(row["run_name"]):], run_name=run,
                              family_index=index)
                if row.get("aggregate_unit") != "percentage":
                    scale = 1.05 ** index * (factor if index % 2 else 1.0)
                    copied.update(real_time=row["real_time"] * scale,
                                  cpu_time=row["cpu_time"] * scale)
                rows.append(copied)
        return {"context": first["context"], "benchmarks": rows}

    for name, factor in (("old.json", 1.0), ("new.json", 3.0)):
        (tmp_path / name).write_text(json.dumps(renamed(factor)))
    _ok(ireebench("report", tmp_path / "old.json", tmp_path / "new.json",
                  "-o", tmp_path / "big.html"))
    text = _text(tmp_path / "big.html")
    assert "The chart shows 40 of 60 benchmarks (the most changed)" in text
    benchmarks = _section(tmp_path / "big.html", "benchmarks")
    assert all(f"BM_layer_{index:03d}_" in benchmarks for index in range(60))
    # The odd ones tripled: they are the ones drawn in the comparison's chart.
    chart = _section(tmp_path / "big.html", "comparison").split("<table", 1)[0]
    assert all(f"BM_layer_{i:03d}" in chart for i in range(1, 60, 2))


# --- the headline: the gate's verdict, everywhere ------------------------------------------


def _synthetic(path: Path, number: int, levels: dict[str, float], reps: int = 9,
               context: dict | None = None) -> Path:
    """A Google Benchmark JSON report of chosen times: per benchmark (``BM_x``: its
    level in ms), ``reps`` repetitions within +-1% of the level (a fixed pattern,
    shifted by the report's number); the report's commit ``c0de000N...``."""
    rows = []
    for family, (name, level) in enumerate(levels.items()):
        run = f"{name}/process_time/real_time"
        for rep in range(reps):
            value = level * (1 + 0.01 * (((rep * 7 + number) % 9) - 4) / 4)
            rows.append({"name": run, "run_name": run, "run_type": "iteration",
                         "repetitions": reps, "repetition_index": rep, "threads": 1,
                         "family_index": family, "per_family_instance_index": 0,
                         "iterations": 10, "real_time": value, "cpu_time": value,
                         "time_unit": "ms"})
    path.write_text(json.dumps({"context": {
        "date": f"2026-01-{number:02d}T10:00:00+00:00", "host_name": "h", "num_cpus": 2,
        "git_commit": f"c0de{number:04d}" + "0" * 32, **(context or {})}, "benchmarks": rows}))
    return path


def _series(folder: Path, levels: list) -> list[Path]:
    """One report per level (a number: BM_work's; a dict: every benchmark's), oldest
    first."""
    return [_synthetic(folder / f"r{number}.json", number,
                       level if isinstance(level, dict) else {"BM_work": level})
            for number, level in enumerate(levels, 1)]


def _gate_of(ireebench, files: list[Path], tmp_path: Path) -> dict:
    """What ``ireebench compare`` says of the latest file against the ones before it:
    ``compare OLD NEW`` for two, else the gate, ``compare stored:history NEW``
    against a real store holding the others."""
    if len(files) == 2:
        result = ireebench("compare", *files, "--reporter=json")
    else:
        storage = f"--benchmark_storage=sqlite:///{tmp_path / 'gate.sqlite'}"
        assert ireebench("store", "import", *files[:-1], storage).returncode == 0
        result = ireebench("compare", "stored:history", files[-1], "--reporter=json", storage)
    assert result.returncode in (0, 1, 4), result.stderr
    return result.json()


def _pvalue(value: float) -> str:
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _page(ireebench, files: list[Path], tmp_path: Path) -> Path:
    page = tmp_path / "report.html"
    _ok(ireebench("report", *files, "-o", page))
    return page


@pytest.mark.parametrize("levels", [
    [1.0, 4.0],
    [1.0, 1.003, 4.0],
    [1.0, 1.003, 0.998, 1.001, 4.0],
], ids=["2-runs", "3-runs", "5-runs"])
def test_the_headline_is_the_gates_verdict_with_its_magnitude(ireebench, tmp_path, levels):
    """The latest 4x slower than the runs before it: the page leads with the verdict
    ireebench compare gives (two reports: compare OLD NEW; more: the gate against a
    store holding the others), its size, its interval and the commit of the first
    report of the new level; the p-value beside it is the one the verdict used."""
    files = _series(tmp_path, levels)
    gate = _gate_of(ireebench, files, tmp_path)
    [judged] = gate["benchmarks"]
    assert judged["verdict"] == "slower" and judged["regression"], judged
    page = _page(ireebench, files, tmp_path)
    css, text = _headline(page)
    low, high = (f"{judged[key] * 100:+.0f} %" for key in ("change_low", "change_high"))
    commit = f"c0de{len(levels):04d}"
    assert css == "verdict-slower"
    assert text == (f"BM_work: 4.0× slower, {judged['change'] * 100:+.0f} % [{low}, {high}] — "
                    f"regression, from commit {commit}."), text
    assert re.match(r"BM_work: 4\.0× slower, \+(299|300|301) % \[", text), text
    row = re.search(r"<tr><td><span[^>]*>slower: REGRESSION[^<]*</span></td>"
                    r"<td class=\"name\">BM_work</td>.*?</tr>", _section(page, "summary"))
    assert row and f">{html.escape(_pvalue(judged['adjusted_pvalue']))}</td>" in row.group(0)
    assert judged["verdict"] in _section(page, "comparison")


def test_several_benchmarks_the_worst_first_then_a_count(ireebench, tmp_path):
    """Four benchmarks, five reports: the latest 4x slower, 1.5x slower, the same,
    twice as fast. The headline names the worst; the next line counts the others by
    verdict."""
    before = {"BM_work": 1.0, "BM_less": 1.0, "BM_same": 1.0, "BM_fast": 1.0}
    after = {"BM_work": 4.0, "BM_less": 1.5, "BM_same": 1.0, "BM_fast": 0.5}
    files = _series(tmp_path, [before, {**before, "BM_work": 1.003}, before,
                               {**before, "BM_same": 1.002}, after])
    gate = _gate_of(ireebench, files, tmp_path)
    verdicts = {b["name"].split("/")[0]: b["verdict"] for b in gate["benchmarks"]}
    assert verdicts == {"BM_work": "slower", "BM_less": "slower",
                        "BM_same": "no significant change", "BM_fast": "faster"}, verdicts
    page = _page(ireebench, files, tmp_path)
    css, text = _headline(page)
    assert css == "verdict-slower" and text.startswith("BM_work: 4.0× slower, +"), text
    assert text.endswith("— regression, from commit c0de0005."), text
    lead = re.search(r'<p class="lead">(.*?)</p>', _section(page, "summary")).group(1)
    assert html.unescape(lead) == ("And 2 more: 1 slower (1 regression), 1 faster; "
                                   "1 benchmark within its history."), lead


def test_no_p_value_contradicts_its_verdict(ireebench, tmp_path):
    """The runs before the latest drifted 40% apart, the latest 40% above two of them:
    its repetitions differ from the pooled ones (a U test alone: p < 0.01), but
    not beyond the runs' own spread and within their band, so the gate finds no
    significant change. The headline is the history's shift at #3; every p-value shown is the one the
    verdict used (the larger of the two tests), none the U test's alone."""
    files = _series(tmp_path, [1.0, 1.0, 1.4, 1.405])
    gate = _gate_of(ireebench, files, tmp_path)
    [judged] = gate["benchmarks"]
    assert judged["verdict"] == "no significant change" and judged["pvalue"] < 0.01, judged
    assert "within the runs' own spread" in judged["reason"], judged
    page = _page(ireebench, files, tmp_path)
    css, text = _headline(page)
    # The page leads with the shift of level at #3 the latest stands on (labelled so).
    assert css == "verdict-slower" and "slower since #3" in text, text
    shown = _pvalue(judged["adjusted_pvalue"])
    assert shown != _pvalue(judged["pvalue"]) and judged["adjusted_pvalue"] >= 0.05
    row = re.search(r"<tr><td[^>]*>(?:<span[^>]*>)?(?:no significant change|BM_work).*?</tr>",
                    _section(page, "comparison")).group(0)
    assert f">{shown}</td>" in row and f">{_pvalue(judged['pvalue'])}</td>" not in row, row


def test_no_change_says_what_the_history_could_have_shown(ireebench, tmp_path):
    """Three runs within 0.5% of each other: no significant change, and the smallest
    change this history could have shown (the gate's detectable change)."""
    from ireebench.plugins.report.verdict import percent

    files = _series(tmp_path, [1.0, 1.003, 0.998])
    gate = _gate_of(ireebench, files, tmp_path)
    [judged] = gate["benchmarks"]
    assert judged["verdict"] == "no significant change", judged
    css, text = _headline(_page(ireebench, files, tmp_path))
    assert css == "" and text == (
        "No significant change: 1 benchmark within its history (smallest change this history "
        f"could show: {percent(judged['detectable'])[1:]})."), text


def test_a_p_value_overruled_by_another_rule_shows_the_rule():
    """A significant test that the history's band overruled: the p column says the
    rule, not the p (which would read as a change)."""
    from ireebench.comparison import BenchmarkComparison
    from ireebench.plugins.report.verdict import pvalue_text

    result = BenchmarkComparison("BM_f", "ms", 18, 9, verdict="no significant change",
                                 pvalue=1e-5, adjusted_pvalue=0.001,
                                 reason="slower than the pooled runs (p=0.001) but within the "
                                        "band: the stored runs drifted as much")
    assert pvalue_text(result, 0.05) == "within the band: the stored runs drifted as much"
    result.verdict, result.reason = "slower", ""
    assert pvalue_text(result, 0.05) == "0.0010"


def test_real_runs_lead_with_the_slowdown(reports, ireebench, tmp_path):
    """Real runs: three of a module, then one of 512x the work: "slower" at the top,
    with the gate's change and the commit of the slow run."""
    files = [reports["history"] / f"run{n}.json" for n in range(1, 5)]
    gate = _gate_of(ireebench, files, tmp_path)
    [judged] = gate["benchmarks"]
    assert judged["verdict"] == "slower", judged
    css, text = _headline(_page(ireebench, files, tmp_path))
    assert css == "verdict-slower", text
    assert re.fullmatch(r"BM_work: \d+× slower, \+\d+ % \[\+\d+ %, \+\d+ %\] — regression, "
                        r"from commit c0ffee4\.", text), text
    assert f"{judged['change'] * 100:+.0f} %" in text


def test_change_points_read_as_history_changes_reads_them(ireebench, tmp_path):
    """Six runs, the last three 4x slower, imported into a real store: `ireebench
    history --changes` and the report find the same change point with the same
    verdict, change, interval, p-value and commit (the user's git_commit, not the
    checkout's that every run shares)."""
    files = [_synthetic(tmp_path / f"r{n}.json", n, {"BM_work": 1.0 if n < 4 else 4.0},
                        context={"ireebench_git_commit": "a" * 40}) for n in range(1, 7)]
    storage = f"--benchmark_storage=sqlite:///{tmp_path / 'store.sqlite'}"
    assert ireebench("store", "import", *files, storage).returncode == 0
    result = ireebench("history", "--changes", "--json", storage)
    assert result.returncode == 0, result.stderr
    [change] = result.json()["benchmarks"][0]["changes"]
    assert change["verdict"] == "slower" and change["after_commit"] == "c0de0004" + "0" * 32
    table = ireebench("history", "--changes", storage)
    [line] = [line for line in table.stdout.splitlines() if line.startswith("BM_work")]
    shown = [f"{change[key] * 100:+.2f}%" for key in ("change", "change_low", "change_high")]
    assert f"{shown[0]}  [{shown[1]}, {shown[2]}]" in line and line.endswith("slower"), line
    assert "c0de000300 -> c0de000400" in line, line
    page = _page(ireebench, files, tmp_path)
    row = re.search(r"<tr><td><span[^>]*>change point: slower</span></td>.*?</tr>",
                    _section(page, "summary")).group(0)
    assert f">{shown[0]}</td><td class=\"num\">[{shown[1]}, {shown[2]}]</td>" in row, row
    assert f">{html.escape(_pvalue(change['pvalue']))}</td>" in row, row
    assert re.search(r"from #4 \S*r4.json \(commit c0de00040000, ", row), row


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


INPUTS_RIGHT = "document.querySelector('#inputs table').getBoundingClientRect().right"


def test_every_page_renders_in_chromium(reports, browser, tmp_path):
    """From file://: no console error, no request, a screenshot that is not blank; on
    an 800 px wide screen the Inputs table fits. A page that does request and log is
    caught (the check can fail)."""
    keep = os.environ.get(SCREENSHOTS_ENV)
    for name in PAGES:
        load = browser.load(reports[name])
        assert load.problems == [], (name, load.problems)
        assert blank_fraction(load.screenshot) < 0.97, name
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / f"{Path(name).stem}.png").write_bytes(load.screenshot)
        narrow = browser.load(reports[name], viewport=(800, 900), evaluate=(INPUTS_RIGHT,))
        assert narrow.values[0] <= 800, (name, narrow.values)
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


def test_a_family_whose_points_have_other_axes_is_one_sweep_per_set_of_axes():
    """A ranking's rows: its candidates, the baseline's rounds on each device, the
    re-rank. Charted each against its own axes (not "device" with None for most)."""
    row = {"run_type": "iteration", "iterations": 10, "time_unit": "ms", "family_index": 0,
           "real_time": 2.0, "cpu_time": 2.0}
    names = ["candidate:fast", "candidate:mid", "candidate:baseline/device:d#0/round:1",
             "candidate:baseline/device:d#1/round:1", "candidate:baseline/device:d#0/round:2",
             "candidate:fast/pass:rerank", "candidate:mid/pass:rerank"]
    report = read_report("r", {"context": {}, "benchmarks": [
        {**row, "name": f"BM_main/{name}/process_time/real_time"} for name in names]})
    found = {tuple(sweep.axes): len(sweep.points) for sweep in sweeps(report)}
    assert found == {("candidate",): 2, ("candidate", "device", "round"): 3,
                     ("candidate", "pass"): 2}


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

