// Calls into lib.mlir's module.
module @app {
  func.func private @lib.double(tensor<4xf32>) -> tensor<4xf32>
  func.func @quadruple() -> tensor<4xf32> {
    %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %0 = call @lib.double(%c) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @lib.double(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
