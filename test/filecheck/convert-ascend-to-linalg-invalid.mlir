// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p convert-ascend-to-linalg | filecheck %s
// RUN: not ascend-opt %s -p convert-ascend-to-linalg 2>&1 | filecheck %s --check-prefix=TOOL
// COM: An op (or an op's configuration) without a lowering is a one-line diagnostic naming the op and
// COM: its location (plain xdsl-opt keeps no source locations: `@func, op #k`); nothing is rewritten
// COM: (the whole module is checked before any op is lowered). Every dialect op has a lowering
// COM: (test/lowering/test_convert_pass.py checks the table and the missing-lowering message).

// CHECK: @impl_mode, op #1: convert-ascend-to-linalg: ascend.Exp with impl_mode 'high_performance' has no lowering (only high_precision numerics are lowered)
// TOOL: ascend-opt: error: {{.*}}convert-ascend-to-linalg-invalid.mlir:[[# @LINE + 2]]:{{[0-9]+}}: convert-ascend-to-linalg: ascend.Exp with impl_mode 'high_performance' has no lowering
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

// -----

// CHECK: @nhwc_grad, op #1: convert-ascend-to-linalg: ascend.Conv2DBackpropFilter is lowered for NCHW data and one group only
func.func @nhwc_grad(%x: tensor<1x5x5x3xf32>, %dy: tensor<1x3x3x4xf32>) -> tensor<3x3x3x4xf32> {
  %0 = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 3, 3, 3, 4>, strides = array<i64: 1, 1, 1, 1>, data_format = "NHWC"} : (tensor<1x5x5x3xf32>, tensor<1x3x3x4xf32>) -> tensor<3x3x3x4xf32>
  func.return %0 : tensor<3x3x3x4xf32>
}
