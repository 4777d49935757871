// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p ascend-autodiff | filecheck %s
// RUN: ascend-opt %s --split-input-file --verify-diagnostics -p ascend-autodiff | filecheck %s --check-prefix=LOC
// COM: Every error of ascend-autodiff is an xDSL diagnostic (AscendPassError): one line that starts with
// COM: the op's location (`@func, op #k` under plain xdsl-opt, file:line:col under ascend-opt).

// CHECK: @forward, op #1: ascend-autodiff: no gradient rule for ascend.GeluGrad
// LOC: ascend-autodiff-invalid.mlir:[[# @LINE + 2]]:3: ascend-autodiff: no gradient rule for ascend.GeluGrad
func.func @forward(%w: tensor<2x4xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x4xf32>) -> tensor<f32> {
  %y = ascend.GeluGrad %w, %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = ascend.ReduceSum %y {axes = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK: module: ascend-autodiff: no function @forward in the module (functions: @g)
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

// CHECK: @forward_grad: ascend-autodiff: function @forward_grad already exists: ascend-autodiff ran before; run ascend-autodiff once, before ascend-loss-scale
// LOC: ascend-autodiff-invalid.mlir:[[# @LINE + 5]]:1: ascend-autodiff: function @forward_grad already exists
func.func @forward(%w: tensor<3xf32>, %x: tensor<3xf32>, %labels: tensor<3xf32>) -> tensor<f32> {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @forward_grad(%w: tensor<3xf32>, %x: tensor<3xf32>, %labels: tensor<3xf32>) -> tensor<f32> {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK: @forward: ascend-autodiff: argument #0 of @forward (tensor<3xi32>) is not a float tensor and cannot be differentiated
func.func @forward(%w: tensor<3xi32>, %x: tensor<3xf32>, %labels: tensor<3xf32>) -> tensor<f32> {
  %l = ascend.ReduceSum %x {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK: @forward, op #2: ascend-autodiff: @forward must return exactly one float tensor (the loss)
// LOC: ascend-autodiff-invalid.mlir:[[# @LINE + 3]]:3: ascend-autodiff: @forward must return exactly one float tensor (the loss)
func.func @forward(%w: tensor<3xf32>, %x: tensor<3xf32>, %labels: tensor<3xf32>) -> (tensor<f32>, tensor<f32>) {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l, %l : tensor<f32>, tensor<f32>
}

// -----

// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-autodiff{wrt=4}' | filecheck %s --check-prefix=WRT
// WRT: @forward: ascend-autodiff: wrt=4 is out of range: @forward has 3 arguments
func.func @forward(%w: tensor<3xf32>, %x: tensor<3xf32>, %labels: tensor<3xf32>) -> tensor<f32> {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK: @forward, op #1: ascend-autodiff: no gradient rule for result #1 of ascend.LayerNorm
func.func @forward(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %labels: tensor<3xf32>) -> tensor<f32> {
  %y, %m, %v = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %l = ascend.ReduceSum %m {axes = array<i64: 0, 1>} : (tensor<2x1xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK: @inner: ascend-autodiff: ops with regions (func.func) are not supported
builtin.module {
  func.func @forward(%w: tensor<3xf32>, %x: tensor<3xf32>, %labels: tensor<3xf32>) -> tensor<f32> {
    "func.func"() ({}) {sym_name = "inner", function_type = () -> (), sym_visibility = "private"} : () -> ()
    %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
    func.return %l : tensor<f32>
  }
}

// -----

// CHECK: @forward, op #1: ascend-autodiff: the gradient of ascend.BNTrainingUpdate needs its sum and square_sum from a BNTrainingReduce of the same input
// LOC: ascend-autodiff-invalid.mlir:[[# @LINE + 2]]:3: ascend-autodiff: the gradient of ascend.BNTrainingUpdate needs
func.func @forward(%x: tensor<2x3x2x2xf32>, %s: tensor<3xf32>, %ss: tensor<3xf32>, %c: tensor<3xf32>) -> tensor<f32> {
  %y, %m, %v, %bm, %bv = ascend.BNTrainingUpdate %x, %s, %ss, %c, %c, %c, %c : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %l = ascend.ReduceSum %y {axes = array<i64: 0, 1, 2, 3>} : (tensor<2x3x2x2xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
