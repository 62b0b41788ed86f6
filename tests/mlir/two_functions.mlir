// Two no-argument functions of the same cost: two benchmark rows per run.
func.func @first() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @second() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
