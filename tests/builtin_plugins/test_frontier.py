"""The report's frontiers (plugins/frontier.py): a real Server sweep over
``--target_qps`` and a real sweep of the toy LLM, saved to JSON and drawn by
``ireebench report``. Where the knee lands on a real run depends on the
machine's load, so the pages are checked for the section, its caption and its
table, and the knee rule itself on constructed numbers.
"""

from __future__ import annotations

import html
import json
import os
import re

import pytest
from browser import Browser, blank_fraction, find_chromium
from conftest import ROOT
from ireebench.plugins.frontier import KNEE_FACTOR, knee, pareto

SERVING = ROOT / "examples" / "serving" / "serving.mlir"
ASYNC = "--compile_flag=--iree-execution-model=async-external"
FAST = ("--benchmark_min_time=1x", "--min_duration=0")
# 70 queries a rate: the p50 and the p90 have early-stopping estimates.
SERVER = (f"--module={SERVING}", ASYNC, "--function=spin", "--input=i32=20000", *FAST,
          "--scenario=server", "--target_qps=1", "--min_query_count=70")
LLM = (f"--module={ROOT / 'examples' / 'llm' / 'toy_llm.mlir'}",
       f"--llm_config={ROOT / 'examples' / 'llm' / 'config.json'}", "--llm_decode_steps=4",
       "--device=local-sync", "--benchmark_min_time=1x")
CAPTION = re.compile(r"(The knee at \d+ queries/s asked \([\d.]+ completed\): p90 [\d.]+ \S+, "
                     rf"within {KNEE_FACTOR:g}× the sweep's lowest p90, [\d.]+ \S+; at \d+ "
                     r"queries/s it is [\d.]+ \S+|No knee within the sweep: p90 stayed within "
                     rf"{KNEE_FACTOR:g}× the sweep's lowest p90, [\d.]+ \S+, up to 4000 "
                     r"queries/s asked)")


@pytest.mark.parametrize(("latencies", "expected"), [
    ([1.0, 1.1, 1.2, 1.5, 5.0, 20.0], 3),  # flat, then the queue grows
    ([1.0, 1.2, 1.1], 2),  # never rose: the last point (the knee is beyond the sweep)
    ([1.0, 1.1, 9.0, 1.3, 10.0, 30.0], 3),  # one stall at a middle rate passes over
    ([5.0, 1.0, 1.2, 1.9, 4.0], 3),  # a slow low-load point does not raise the limit
    ([1.0, 2.0, 2.0001], 1),  # the limit is inclusive: 2x the lowest
    ([0.0, 1.0, 3.0], 1),  # a point with no latency is no baseline
    ([1.0], None), ([], None), ([0.0, 0.0], None),
])
def test_the_knee_is_the_last_point_within_twice_the_lowest_latency(latencies, expected):
    assert KNEE_FACTOR == 2.0
    assert knee(latencies) == expected


def test_the_knee_factor_is_a_parameter():
    assert knee([1.0, 2.5, 3.0, 4.0], factor=3.0) == 2
    assert knee([1.0, 2.5, 3.0, 4.0], factor=1.5) == 0


def test_the_pareto_frontier_keeps_what_nothing_beats_in_both():
    points = [(1.0, 10.0), (2.0, 5.0), (1.0, 5.0), (3.0, 1.0), (2.0, 5.0), (0.5, 0.5)]
    assert pareto(points) == [True, True, False, True, True, False]
    assert pareto([(1.0, 1.0)]) == [True]


@pytest.fixture(scope="module")
def browser():
    """A real headless Chromium, as tests/builtin_plugins/test_report.py's."""
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium not found; CI=true needs it (.ci/run installs it)")
        pytest.skip("Chromium not found (apt-get install chromium)")
    browser = Browser(executable)
    yield browser
    browser.close()


def _section(page, anchor: str) -> str:
    text = page.read_text(encoding="utf-8")
    assert f'<section id="{anchor}">' in text, re.findall(r'<section id="([^"]+)">', text)
    return html.unescape(text.split(f'<section id="{anchor}">', 1)[1].split("</section>", 1)[0])


def _cells(section: str) -> list[list[str]]:
    body = section.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL)]


def _report(ireebench, tmp_path, run_json, *args):
    result = ireebench("report", run_json, "-o", tmp_path / "page.html", *args)
    assert result.returncode == 0 and not result.stderr, result.stderr
    return tmp_path / "page.html"


def test_a_sweep_of_rates_draws_its_frontier_and_knee(ireebench, tmp_path, browser):
    out = tmp_path / "sweep.json"
    result = ireebench(*SERVER, "--sweep", "target_qps=1000,2000,4000", "--goodput=e2e:1s",
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    page = _report(ireebench, tmp_path, out)
    load = browser.load(page)  # from file://: no console error, no request
    assert load.problems == [] and blank_fraction(load.screenshot) < 0.97, load.problems
    section = _section(page, "frontier-serving-frontier")
    assert "<h3" in section and "BM_spin" in section
    assert CAPTION.search(section), section[:2000]
    assert section.count("<figure>") == 2  # throughput-latency, and goodput beside it
    rows = _cells(section)
    assert [row[0] for row in rows] == ["1000", "2000", "4000"]
    assert all(row[5] in ("VALID", "INVALID") for row in rows), rows
    assert [row[6] for row in rows].count("knee") == 1, rows
    files = tmp_path / "charts"
    assert ireebench("report", out, f"--output_dir={files}").returncode == 0
    assert {"frontier-serving-frontier-BM_spin.svg",
            "frontier-serving-frontier-BM_spin-goodput.svg"} <= {p.name for p in files.iterdir()}


def test_invalid_rates_are_said_and_one_rate_is_no_frontier(ireebench, tmp_path):
    out = tmp_path / "sweep.json"
    result = ireebench(*SERVER, "--sweep", "target_qps=1000,2000", "--latency_bound=p50:1ns",
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    section = _section(_report(ireebench, tmp_path, out), "frontier-serving-frontier")
    assert section.count("<figure>") == 1  # no goodput without --goodput
    assert [row[4] for row in _cells(section)] == ["INVALID", "INVALID"]  # no goodput column
    one = tmp_path / "one.json"
    assert ireebench(*SERVER, "--target_qps=1000", f"--benchmark_out={one}").returncode == 0
    assert 'id="frontier-serving-frontier"' not in _report(ireebench, tmp_path, one).read_text()


def test_the_llm_rows_draw_their_pareto_frontier(ireebench, tmp_path):
    """The toy LLM has one batch size (decode_bs1), so its points are a sweep of the
    prompt length: a frontier of whatever points the rows are."""
    out = tmp_path / "llm.json"
    result = ireebench(*LLM, "--sweep", "llm_prompt_length=4,16", f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    rows = [row for row in json.loads(out.read_text())["benchmarks"]
            if "tpot_ms" in row]
    section = _section(_report(ireebench, tmp_path, out), "frontier-llm-frontier")
    assert section.count("<figure>") == 1
    cells = _cells(section)
    assert [row[0] for row in cells] == [row["name"].removesuffix("/process_time/real_time")
                                         for row in rows]
    assert "yes" in [row[4] for row in cells]
    for cell, row in zip(cells, rows):  # the axes are the rows' own numbers
        assert float(cell[1]) == pytest.approx(row["output_tokens_per_second"], rel=1e-3)
        assert float(cell[2]) == pytest.approx(1e3 / row["tpot_ms"], rel=1e-3)
