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
          "--scenario=server", "--min_query_count=70")
LLM = (f"--llm_config={ROOT / 'examples' / 'llm' / 'config.json'}", "--llm_decode_steps=4",
       "--llm_prompt_length=20", "--device=local-sync", "--benchmark_min_time=1x")
# A toy LLM of batch sizes 1, 2 and 4 (examples/llm/toy_llm.mlir has bs1 only), with
# sharktank's interface and examples/llm/config.json's cache (pages of 16 positions
# of 64): a decode step writes each request's token at its position's slot and
# reads its context back (its cost grows with the context and the batch); the
# logits are a function of what it read.
BATCHED = """
func.func @decode_bs{n}(%tokens: tensor<{n}x1xi64>, %seq_lens: tensor<{n}xi64>,
    %start_positions: tensor<{n}xi64>, %seq_block_ids: tensor<{n}x?xi64>,
    %cache_view: !hal.buffer_view) -> tensor<{n}x1x32xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %cn = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  %pages = hal.buffer_view.dim<%cache_view : !hal.buffer_view>[0] : index
  %cache = hal.tensor.import %cache_view "cache" : !hal.buffer_view -> tensor<?x1024xf32>{{%pages}}
  // Each request's token value at its position's slot (page seq_block_ids[b, pos / 16]).
  %written = linalg.generic {{indexing_maps = [affine_map<(p, j) -> (p, j)>],
      iterator_types = ["parallel", "parallel"]}} outs(%cache : tensor<?x1024xf32>) {{
  ^bb0(%old: f32):
    %p = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = scf.for %b = %c0 to %cn step %c1 iter_args(%cur = %old) -> (f32) {{
      %pos64 = tensor.extract %start_positions[%b] : tensor<{n}xi64>
      %pos = arith.index_cast %pos64 : i64 to index
      %block = arith.divui %pos, %c16 : index
      %slot = arith.remui %pos, %c16 : index
      %page64 = tensor.extract %seq_block_ids[%b, %block] : tensor<{n}x?xi64>
      %page = arith.index_cast %page64 : i64 to index
      %jslot = arith.divui %j, %c64 : index
      %same_page = arith.cmpi eq, %p, %page : index
      %same_slot = arith.cmpi eq, %jslot, %slot : index
      %here = arith.andi %same_page, %same_slot : i1
      %tok = tensor.extract %tokens[%b, %c0] : tensor<{n}x1xi64>
      %tf = arith.sitofp %tok : i64 to f32
      %next = arith.select %here, %tf, %cur : f32
      scf.yield %next : f32
    }}
    linalg.yield %v : f32
  }} -> tensor<?x1024xf32>
  %stored = hal.tensor.alias %written : tensor<?x1024xf32>{{%pages}} to %cache_view : !hal.buffer_view
  // logits[b, 0, v]: the mean over request b's context of its cached values times (v + 1).
  %init = tensor.empty() : tensor<{n}x1x32xf32>
  %logits = linalg.generic {{indexing_maps = [affine_map<(b, t, v) -> (b, t, v)>],
      iterator_types = ["parallel", "parallel", "parallel"]}} outs(%init : tensor<{n}x1x32xf32>) {{
  ^bb0(%unused: f32):
    %b = linalg.index 0 : index
    %v = linalg.index 2 : index
    %n64 = tensor.extract %seq_lens[%b] : tensor<{n}xi64>
    %len = arith.index_cast %n64 : i64 to index
    %acc = scf.for %jpos = %c0 to %len step %c1 iter_args(%a = %zero) -> (f32) {{
      %block = arith.divui %jpos, %c16 : index
      %slot = arith.remui %jpos, %c16 : index
      %page64 = tensor.extract %seq_block_ids[%b, %block] : tensor<{n}x?xi64>
      %page = arith.index_cast %page64 : i64 to index
      %col = arith.muli %slot, %c64 : index
      %k = tensor.extract %stored[%page, %col] : tensor<?x1024xf32>
      %a2 = arith.addf %a, %k : f32
      scf.yield %a2 : f32
    }}
    %vi = arith.index_cast %v : index to i64
    %vf = arith.sitofp %vi : i64 to f32
    %nf = arith.sitofp %n64 : i64 to f32
    %mean = arith.divf %acc, %nf : f32
    %r = arith.mulf %mean, %vf : f32
    %s = math.sin %r : f32
    linalg.yield %s : f32
  }} -> tensor<{n}x1x32xf32>
  return %logits : tensor<{n}x1x32xf32>
}}

func.func @prefill_bs{n}(%tokens: tensor<{n}x?xi64>, %seq_lens: tensor<{n}xi64>,
    %seq_block_ids: tensor<{n}x?xi64>, %cache_view: !hal.buffer_view) -> tensor<{n}x?x32xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %cn = arith.constant {n} : index
  %pages = hal.buffer_view.dim<%cache_view : !hal.buffer_view>[0] : index
  %cache = hal.tensor.import %cache_view "cache" : !hal.buffer_view -> tensor<?x1024xf32>{{%pages}}
  %length = tensor.dim %tokens, %c1 : tensor<{n}x?xi64>
  %blocks = tensor.dim %seq_block_ids, %c1 : tensor<{n}x?xi64>
  // Every request's positions t < seq_len at their slots.
  %written = linalg.generic {{indexing_maps = [affine_map<(p, j) -> (p, j)>],
      iterator_types = ["parallel", "parallel"]}} outs(%cache : tensor<?x1024xf32>) {{
  ^bb0(%old: f32):
    %p = linalg.index 0 : index
    %j = linalg.index 1 : index
    %slot = arith.divui %j, %c64 : index
    %v = scf.for %b = %c0 to %cn step %c1 iter_args(%cur = %old) -> (f32) {{
      %n64 = tensor.extract %seq_lens[%b] : tensor<{n}xi64>
      %len = arith.index_cast %n64 : i64 to index
      %w = scf.for %k = %c0 to %blocks step %c1 iter_args(%in = %cur) -> (f32) {{
        %page64 = tensor.extract %seq_block_ids[%b, %k] : tensor<{n}x?xi64>
        %page = arith.index_cast %page64 : i64 to index
        %base = arith.muli %k, %c16 : index
        %t = arith.addi %base, %slot : index
        %same = arith.cmpi eq, %page, %p : index
        %inside = arith.cmpi ult, %t, %len : index
        %here = arith.andi %same, %inside : i1
        %next = scf.if %here -> (f32) {{
          %tok = tensor.extract %tokens[%b, %t] : tensor<{n}x?xi64>
          %tf = arith.sitofp %tok : i64 to f32
          scf.yield %tf : f32
        }} else {{
          scf.yield %in : f32
        }}
        scf.yield %next : f32
      }}
      scf.yield %w : f32
    }}
    linalg.yield %v : f32
  }} -> tensor<?x1024xf32>
  %stored = hal.tensor.alias %written : tensor<?x1024xf32>{{%pages}} to %cache_view : !hal.buffer_view
  // logits[b, t, v] = sin(token[b, t] * v): the prompt's own logits.
  %init = tensor.empty(%length) : tensor<{n}x?x32xf32>
  %logits = linalg.generic {{indexing_maps = [affine_map<(b, t, v) -> (b, t)>,
      affine_map<(b, t, v) -> (b, t, v)>],
      iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%tokens : tensor<{n}x?xi64>) outs(%init : tensor<{n}x?x32xf32>) {{
  ^bb0(%tok: i64, %unused: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %m = arith.muli %tok, %vi : i64
    %mf = arith.sitofp %m : i64 to f32
    %s = math.sin %mf : f32
    linalg.yield %s : f32
  }} -> tensor<{n}x?x32xf32>
  return %logits : tensor<{n}x?x32xf32>
}}
"""


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


def test_the_llm_rows_draw_their_pareto_frontier(ireebench, tmp_path, compile_mlir):
    """A sweep over --function=decode_bs{bs} (docs/serving.md): one point per batch size."""
    module = compile_mlir("".join(BATCHED.format(n=n) for n in (1, 2, 4)))
    out = tmp_path / "llm.json"
    result = ireebench(f"--module={module}", *LLM, "--sweep", "bs=1,2,4",
                       "--function=decode_bs{bs}", f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    rows = [row for row in json.loads(out.read_text())["benchmarks"] if "tpot_ms" in row]
    assert [row["params"]["bs"] for row in rows] == [1, 2, 4]
    section = _section(_report(ireebench, tmp_path, out), "frontier-llm-frontier")
    assert section.count("<figure>") == 1
    cells = _cells(section)
    assert [row[0] for row in cells] == [f"BM_decode_bs{n}/bs:{n}" for n in (1, 2, 4)]
    points = [(row["output_tokens_per_second"], 1e3 / row["tpot_ms"]) for row in rows]
    assert [row[4] == "yes" for row in cells] == pareto(points)
    for cell, (device, user) in zip(cells, points):  # the axes are the rows' own numbers
        assert float(cell[1]) == pytest.approx(device, rel=1e-3)
        assert float(cell[2]) == pytest.approx(user, rel=1e-3)


def test_one_llm_row_is_no_frontier(ireebench, tmp_path):
    out = tmp_path / "llm.json"
    result = ireebench(f"--module={ROOT / 'examples' / 'llm' / 'toy_llm.mlir'}", *LLM,
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    assert 'id="frontier-llm-frontier"' not in _report(ireebench, tmp_path, out).read_text()


def test_the_loads_a_search_tried_are_a_frontier(ireebench, tmp_path):
    """--search's tried loads are rows under its benchmark: drawn by rate. A bound no
    run meets halves the rate six times, whatever the machine."""
    out = tmp_path / "search.json"
    result = ireebench(*SERVER, "--target_qps=64000", "--search", "--latency_bound=p50:1ns",
                       f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    section = _section(_report(ireebench, tmp_path, out), "frontier-serving-frontier")
    assert "BM_spin/scenario:server/search:p50:1ns: the loads --search tried" in section
    rows = _cells(section)
    assert [row[0] for row in rows] == [str(1000 * 2 ** i) for i in range(7)]
    assert {row[4] for row in rows} == {"INVALID"}
