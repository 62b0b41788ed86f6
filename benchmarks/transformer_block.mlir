// A transformer block (sequence 96, model 256, one attention head, MLP
// 256 -> 1024 -> 256): projections, softmax(Q K^T / 16) V, output
// projection with a residual, then the MLP with a residual. About 2 ms on one
// CPU core with --device=local-sync. Unfoldable constants: no argument.
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @transformer_block() -> tensor<96x256xf32> {
  %x = util.unfoldable_constant dense<0.5> : tensor<96x256xf32>
  %wq = util.unfoldable_constant dense<0.01> : tensor<256x256xf32>
  %wk = util.unfoldable_constant dense<0.02> : tensor<256x256xf32>
  %wv = util.unfoldable_constant dense<0.03> : tensor<256x256xf32>
  %wo = util.unfoldable_constant dense<0.04> : tensor<256x256xf32>
  %w1 = util.unfoldable_constant dense<0.01> : tensor<256x1024xf32>
  %w2 = util.unfoldable_constant dense<0.02> : tensor<1024x256xf32>
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.0625 : f32
  %e = tensor.empty() : tensor<96x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x256xf32>) -> tensor<96x256xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<96x256xf32>, tensor<256x256xf32>) outs(%f : tensor<96x256xf32>) -> tensor<96x256xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<96x256xf32>, tensor<256x256xf32>) outs(%f : tensor<96x256xf32>) -> tensor<96x256xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<96x256xf32>, tensor<256x256xf32>) outs(%f : tensor<96x256xf32>) -> tensor<96x256xf32>
  %es = tensor.empty() : tensor<96x96xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<96x96xf32>) -> tensor<96x96xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<96x256xf32>, tensor<96x256xf32>) outs(%fs : tensor<96x96xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %t = arith.mulf %a, %b : f32
      %t2 = arith.addf %t, %acc : f32
      linalg.yield %t2 : f32
  } -> tensor<96x96xf32>
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<96x96xf32>) outs(%es : tensor<96x96xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.mulf %a, %scale : f32
      %x2 = math.exp %t : f32
      linalg.yield %x2 : f32
  } -> tensor<96x96xf32>
  %er = tensor.empty() : tensor<96xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<96xf32>) -> tensor<96xf32>
  %sum = linalg.generic {indexing_maps = [#map, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<96x96xf32>) outs(%fr : tensor<96xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %t = arith.addf %a, %acc : f32
      linalg.yield %t : f32
  } -> tensor<96xf32>
  %sm = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%p, %sum : tensor<96x96xf32>, tensor<96xf32>) outs(%es : tensor<96x96xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.divf %a, %b : f32
      linalg.yield %t : f32
  } -> tensor<96x96xf32>
  %att = linalg.matmul ins(%sm, %v : tensor<96x96xf32>, tensor<96x256xf32>) outs(%f : tensor<96x256xf32>) -> tensor<96x256xf32>
  %proj = linalg.matmul ins(%att, %wo : tensor<96x256xf32>, tensor<256x256xf32>) outs(%f : tensor<96x256xf32>) -> tensor<96x256xf32>
  %h = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%proj, %x : tensor<96x256xf32>, tensor<96x256xf32>) outs(%e : tensor<96x256xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
  } -> tensor<96x256xf32>
  %e1 = tensor.empty() : tensor<96x1024xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<96x1024xf32>) -> tensor<96x1024xf32>
  %u = linalg.matmul ins(%h, %w1 : tensor<96x256xf32>, tensor<256x1024xf32>) outs(%f1 : tensor<96x1024xf32>) -> tensor<96x1024xf32>
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<96x1024xf32>) outs(%e1 : tensor<96x1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.maximumf %a, %zero : f32
      linalg.yield %t : f32
  } -> tensor<96x1024xf32>
  %d = linalg.matmul ins(%g, %w2 : tensor<96x1024xf32>, tensor<1024x256xf32>) outs(%f : tensor<96x256xf32>) -> tensor<96x256xf32>
  %y = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%d, %h : tensor<96x256xf32>, tensor<96x256xf32>) outs(%e : tensor<96x256xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
  } -> tensor<96x256xf32>
  return %y : tensor<96x256xf32>
}
