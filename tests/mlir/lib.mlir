// Imported by app.mlir: load it first (--module=lib.vmfb --module=app.vmfb).
module @lib {
  func.func @double(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = arith.addf %a, %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
