// A two-layer MLP (64 -> 128 -> 64, ReLU) with a dynamic batch: one module
// for every batch size of a sweep (--input={bs}x64xf32=0.5). The weights are
// unfoldable constants, so the only argument is the batch.
func.func @forward(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %w1 = util.unfoldable_constant dense<0.01> : tensor<64x128xf32>
  %w2 = util.unfoldable_constant dense<0.02> : tensor<128x64xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty(%n) : tensor<?x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x128xf32>) -> tensor<?x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<?x64xf32>, tensor<64x128xf32>) outs(%f1 : tensor<?x128xf32>) -> tensor<?x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x128xf32>) outs(%e1 : tensor<?x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
  } -> tensor<?x128xf32>
  %e2 = tensor.empty(%n) : tensor<?x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<?x128xf32>, tensor<128x64xf32>) outs(%f2 : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
