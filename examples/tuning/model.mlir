// A two-dispatch model for whole-model tuning by replay substitution
// (docs/tuning.md): x(64x512) @ w1(512x1024), then h(64x1024) @ w2(1024x256).
// Two matmuls of other shapes do not fuse: compiled with
// --iree-hal-link-executables=false, each is an executable of its own, which
// a replay capture records and `ireebench rank --replay` can substitute.
// About 2.5 ms a call on one CPU core with --device=local-sync.
func.func @main(%x: tensor<64x512xf32>, %w1: tensor<512x1024xf32>,
                %w2: tensor<1024x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64x1024xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<64x512xf32>, tensor<512x1024xf32>) outs(%f1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %e2 = tensor.empty() : tensor<64x256xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%f2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
