"""The example's own tests: a real module measured, its report drawn with the section.

Run them with ``python -m pytest examples/plugins/report_slowest`` (they
need the compiler, ``pip install "ireebench[compiler,report]"``, and skip
without it).
"""

import io
import re

import ireebench
import ireebench_report_slowest
import pytest

MODULE = """
func.func @small() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
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


@pytest.fixture(scope="module")
def run_json(tmp_path_factory):
    compiler = pytest.importorskip("iree.compiler", reason="needs iree-base-compiler")
    folder = tmp_path_factory.mktemp("slowest")
    module = folder / "m.vmfb"
    module.write_bytes(compiler.compile_str(MODULE, target_backends=["llvm-cpu"]))
    out = folder / "run.json"
    ireebench.run([f"--module={module}", "--device=local-sync", "--benchmark_min_time=3x",
                   "--benchmark_repetitions=3", f"--benchmark_out={out}"])
    return out


def test_the_section_comes_after_the_summary(run_json, tmp_path):
    page = tmp_path / "report.html"
    stdout = io.StringIO()
    result = ireebench.run(["report", str(run_json), "-o", str(page)], stdout=stdout,
                           plugins=[ireebench_report_slowest])
    assert result.exit_code == 0 and stdout.getvalue() == f"wrote {page.resolve()}\n"
    text = page.read_text()
    sections = re.findall(r'<section id="([^"]+)"><h2>([^<]+)</h2>', text)
    assert [title for _, title in sections][:2] == ["Summary", "Where the time goes"]
    section = text.split("Where the time goes</h2>", 1)[1].split("</section>", 1)[0]
    # The heaviest first, with its share; the chart inlined as SVG.
    names = re.findall(r'<td class="name">(BM_\w+)</td>', section)
    assert names == ["BM_large", "BM_small"]
    assert section.count("<svg") == 1 and "%" in section
