"""The seeded kind's tests, through ireebench.testing (pip install the example first)."""

import ireebench_seeded

MODULE = """
func.func @bench_mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
func.func @bench_scale(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %s : f32
      linalg.yield %m : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @needs_inputs(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
"""
PLUGINS = [ireebench_seeded]


def test_bench_functions_run_without_inputs(ireebench_tester):
    module = ireebench_tester.compile_module(MODULE)
    result = ireebench_tester.run(f"--module={module}", "--seeded_dim=64", plugins=PLUGINS)
    assert result.exit_code == 0, result.stderr
    assert [row.benchmark_name for row in result.rows] == [
        "BM_bench_mlp/process_time/real_time", "BM_bench_scale/process_time/real_time"]


def test_the_same_seed_gives_the_same_inputs(ireebench_tester):
    module = ireebench_tester.compile_module(MODULE)
    outputs = [ireebench_tester.run(f"--module={module}", "--function=bench_mlp",
                                    "--enable_output_processing", plugins=PLUGINS).stdout
               for _ in range(2)]
    values = [text[text.index("result[0]"):] for text in outputs]
    assert values[0] == values[1] and "4x16xf32=" in values[0]


def test_the_native_profiling_pass_gets_the_arrays(ireebench_tester):
    module = ireebench_tester.compile_module(MODULE)
    result = ireebench_tester.run(f"--module={module}", "--function=bench_mlp",
                                  "--dispatch_statistics", plugins=PLUGINS)
    assert result.exit_code == 0, result.stderr
    names = [row.benchmark_name for row in result.rows]
    assert names[0] == "BM_bench_mlp/process_time/real_time" and len(names) >= 2


def test_a_bad_dimension_is_one_line(ireebench_tester):
    result = ireebench_tester.run("--seeded_dim=0", plugins=PLUGINS)
    assert result.error_lines == ["ireebench: error: --seeded_dim=0: must be positive"]
