// Two dispatches of different cost: a 128x128 matmul and an independent
// small transposed add (independent, so the compiler cannot fuse them).
func.func @two_dispatches() -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %a = util.unfoldable_constant dense<1.0> : tensor<128x128xf32>
  %b = util.unfoldable_constant dense<2.0> : tensor<128x128xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  %c = util.unfoldable_constant dense<3.0> : tensor<128x128xf32>
  %d = util.unfoldable_constant dense<4.0> : tensor<128x128xf32>
  %e2 = tensor.empty() : tensor<128x128xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%d, %c : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e2 : tensor<128x128xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.addf %x, %y : f32
      linalg.yield %r : f32
  } -> tensor<128x128xf32>
  return %m, %s : tensor<128x128xf32>, tensor<128x128xf32>
}
