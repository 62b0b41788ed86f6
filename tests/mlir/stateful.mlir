// A module with state: every call increments a global counter.
util.global private mutable @counter = 0 : i32
func.func @increment() -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = util.global.load @counter : i32
  %1 = arith.addi %0, %c1 : i32
  util.global.store %1, @counter : i32
  return %1 : i32
}
