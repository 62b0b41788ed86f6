// Compiled with --iree-execution-model=async-external: every function takes
// a wait and a signal fence (coarse-fences ABI). @count increments a global,
// so its output counts the invocations.
util.global private mutable @counter = dense<0> : tensor<i32>
func.func @count() -> tensor<i32> {
  %c1 = arith.constant dense<1> : tensor<i32>
  %0 = util.global.load @counter : tensor<i32>
  %1 = arith.addi %0, %c1 : tensor<i32>
  util.global.store %1, @counter : tensor<i32>
  return %1 : tensor<i32>
}
func.func @noargs() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
