// A two-layer MLP (batch 32, 384 -> 1024 -> 384, ReLU) whose hidden
// activations are 128 KiB (32 x 1024 x f32); the unfoldable weights (1.5 MiB
// each) are materialized every call too, so each iteration allocates and
// frees about 3 MiB of transient buffers. With glibc's heap trimming on, every
// iteration faults them back in (about 800 page faults): the workload of the
// allocator regimes in docs/performance.md and of tests/builtin_plugins/test_allocator.py.
func.func @mlp() -> tensor<32x384xf32> {
  %x = util.unfoldable_constant dense<0.5> : tensor<32x384xf32>
  %w1 = util.unfoldable_constant dense<0.01> : tensor<384x1024xf32>
  %w2 = util.unfoldable_constant dense<0.02> : tensor<1024x384xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x1024xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x1024xf32>) -> tensor<32x1024xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x384xf32>, tensor<384x1024xf32>) outs(%f1 : tensor<32x1024xf32>) -> tensor<32x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<32x1024xf32>) outs(%e1 : tensor<32x1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
  } -> tensor<32x1024xf32>
  %e2 = tensor.empty() : tensor<32x384xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x384xf32>) -> tensor<32x384xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<32x1024xf32>, tensor<1024x384xf32>) outs(%f2 : tensor<32x384xf32>) -> tensor<32x384xf32>
  return %y : tensor<32x384xf32>
}
