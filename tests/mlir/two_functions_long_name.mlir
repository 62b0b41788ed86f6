// two_functions.mlir with names of different lengths, so the reports must
// pad the name column to the longest one (console widths, like the native tool).
func.func @first() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @second_with_a_longer_name() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
