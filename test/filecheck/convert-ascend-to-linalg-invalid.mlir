// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p convert-ascend-to-linalg | filecheck %s
// RUN: not ascend-opt %s -p convert-ascend-to-linalg 2>&1 | filecheck %s --check-prefix=TOOL
// COM: An op without a lowering is a one-line diagnostic naming the op and its location (plain xdsl-opt
// COM: keeps no source locations: `@func, op #k`); nothing is
// COM: rewritten (the whole module is checked before any op is lowered).

// CHECK: @bn_reduce, op #1: convert-ascend-to-linalg: ascend.BNTrainingReduce has no lowering to linalg
// TOOL: ascend-opt: error: {{.*}}convert-ascend-to-linalg-invalid.mlir:[[# @LINE + 2]]:{{[0-9]+}}: convert-ascend-to-linalg: ascend.BNTrainingReduce has no lowering to linalg
func.func @bn_reduce(%x: tensor<2x3x4x4xf32>) -> tensor<3xf32> {
  %s, %q = ascend.BNTrainingReduce %x : (tensor<2x3x4x4xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %s : tensor<3xf32>
}

// -----

// CHECK: @impl_mode, op #1: convert-ascend-to-linalg: ascend.Exp with impl_mode 'high_performance' has no lowering (only high_precision numerics are lowered)
func.func @impl_mode(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = ascend.Exp %x {impl_mode = "high_performance"} : (tensor<4xf16>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

// CHECK: @negative_stride, op #1: convert-ascend-to-linalg: ascend.StridedSliceD with a negative stride is not lowered
func.func @negative_stride(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.StridedSliceD %x {begin = array<i64: 3>, end = array<i64: -5>, strides = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
