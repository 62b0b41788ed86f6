// Functions the discovery rules must sort: no-argument ones run, functions
// with arguments need --function, internal names are skipped.
func.func @noargs() -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @scalar(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}
func.func @mixed(%a: tensor<2x3xf32>, %s: f32) -> (tensor<2x3xf32>, i32) {
  %e = tensor.empty() : tensor<2x3xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %s : f32
      linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %c = arith.constant 7 : i32
  return %0, %c : tensor<2x3xf32>, i32
}
func.func @ints(%a: tensor<2x2xi32>, %b: tensor<3xi8>) -> (tensor<2x2xi32>, tensor<3xi8>) {
  return %a, %b : tensor<2x2xi32>, tensor<3xi8>
}
func.func @__internal() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}
func.func @entry_wrapper() -> tensor<4xf32> attributes {iree.reflection = {iree.benchmark = "entry"}} {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %0 = arith.addf %c, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
