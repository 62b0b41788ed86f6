"""report_slowest's tests, through ireebench.testing (pip install the example first)."""

import json
import re
import statistics

import ireebench_report_slowest

# Two functions of very different weight: the section names the heavier first.
MODULE = """
func.func @small() -> tensor<4xf32> {
  %c = util.unfoldable_constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @large() -> tensor<64x64xf32> {
  %a = util.unfoldable_constant dense<1.0> : tensor<64x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %a : tensor<64x64xf32>, tensor<64x64xf32>)
                     outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}
"""


def test_the_section_comes_after_the_summary(ireebench_tester):
    module = ireebench_tester.compile_module(MODULE)
    run = ireebench_tester.tmp_path / "run.json"
    result = ireebench_tester.run(f"--module={module}", "--benchmark_repetitions=3",
                                  f"--benchmark_out={run}")
    assert result.exit_code == 0, result.stderr
    page = ireebench_tester.tmp_path / "report.html"
    result = ireebench_tester.subcommand("report", run, "-o", page,
                                         plugins=[ireebench_report_slowest])
    assert result.exit_code == 0 and result.stdout == f"wrote {page.resolve()}\n", result.stderr
    text = page.read_text()
    titles = re.findall(r'<section id="[^"]+"><h2>([^<]+)</h2>', text)
    assert titles[:2] == ["Summary", "Where the time goes"]
    section = text.split("Where the time goes</h2>", 1)[1].split("</section>", 1)[0]
    # The heaviest first (by the median wall time the run measured: on a busy machine a
    # preempted call can make the small one the slower), with its share; the chart
    # inlined as SVG.
    times = {}
    for row in json.loads(run.read_text())["benchmarks"]:
        if row["run_type"] == "iteration":
            times.setdefault(row["run_name"].split("/")[0], []).append(row["real_time"])
    heaviest = sorted(times, key=lambda name: -statistics.median(times[name]))
    assert sorted(heaviest) == ["BM_large", "BM_small"]
    assert re.findall(r'<td class="name">(BM_\w+)</td>', section) == heaviest
    assert section.count("<svg") == 1 and "%" in section
