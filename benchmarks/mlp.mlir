// A two-layer MLP (batch 24, 256 -> 1024 -> 256, ReLU): about 1 ms on one
// CPU core with --device=local-sync. Weights are unfoldable constants, so
// the function takes no argument and every tool benchmarks it as is.
func.func @mlp() -> tensor<24x256xf32> {
  %x = util.unfoldable_constant dense<0.5> : tensor<24x256xf32>
  %w1 = util.unfoldable_constant dense<0.01> : tensor<256x1024xf32>
  %w2 = util.unfoldable_constant dense<0.02> : tensor<1024x256xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<24x1024xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<24x1024xf32>) -> tensor<24x1024xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<24x256xf32>, tensor<256x1024xf32>) outs(%f1 : tensor<24x1024xf32>) -> tensor<24x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<24x1024xf32>) outs(%e1 : tensor<24x1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
  } -> tensor<24x1024xf32>
  %e2 = tensor.empty() : tensor<24x256xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<24x256xf32>) -> tensor<24x256xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<24x1024xf32>, tensor<1024x256xf32>) outs(%f2 : tensor<24x256xf32>) -> tensor<24x256xf32>
  return %y : tensor<24x256xf32>
}
