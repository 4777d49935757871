// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p ascend-loss-scale | filecheck %s
// RUN: ascend-opt %s --split-input-file --verify-diagnostics -p ascend-loss-scale | filecheck %s --check-prefix=LOC
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{manager=static}' | filecheck %s --check-prefix=MANAGER
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{optimizer=rmsprop}' | filecheck %s --check-prefix=OPT
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{preset=jax}' | filecheck %s --check-prefix=PRESET
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{backoff-factor=2.0}' | filecheck %s --check-prefix=BACKOFF
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{manager=fixed scale=-1.0}' | filecheck %s --check-prefix=SCALE
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{growth-factor=1.0}' | filecheck %s --check-prefix=GROWTH
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{growth-interval=0}' | filecheck %s --check-prefix=INTERVAL
// RUN: xdsl-opt %s --split-input-file --verify-diagnostics -p 'ascend-loss-scale{lr=0.0}' | filecheck %s --check-prefix=LR
// COM: Every error of ascend-loss-scale is an xDSL diagnostic (AscendPassError): one line starting with the
// COM: op's location; option errors name the pass and the option.

// MANAGER: ascend-loss-scale: manager must be one of dynamic, fixed, none, got 'static'
// OPT: ascend-loss-scale: optimizer must be one of sgd, momentum, adam, got 'rmsprop'
// PRESET: ascend-loss-scale: preset must be one of pytorch, mindspore, tensorflow, got 'jax'
// BACKOFF: ascend-loss-scale: backoff-factor must be in (0, 1), got 2
// SCALE: ascend-loss-scale: scale must be a positive finite float32 number, got -1
// GROWTH: ascend-loss-scale: growth-factor must be > 1 and finite, got 1
// INTERVAL: ascend-loss-scale: growth-interval must be a positive integer, got 0
// LR: ascend-loss-scale: lr must be > 0 and finite, got 0

// CHECK: module: ascend-loss-scale: no function @forward_grad or @forward in the module (functions: @g)
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

// CHECK: @train_step: ascend-loss-scale: function @train_step already exists (ascend-loss-scale ran already)
// LOC: ascend-loss-scale-invalid.mlir:[[# @LINE + 1]]:1: ascend-loss-scale: function @train_step already exists
func.func @train_step(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

// CHECK: @forward_grad, op #2: ascend-loss-scale: @forward_grad must return (loss, one gradient per leading argument)
// LOC: ascend-loss-scale-invalid.mlir:[[# @LINE + 3]]:3: ascend-loss-scale: @forward_grad must return (loss, one gradient per leading argument)
func.func @forward_grad(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// CHECK: @forward_grad, op #2: ascend-loss-scale: result #1 of @forward_grad is not shaped like argument #0
func.func @forward_grad(%w: tensor<3xf32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<f32>) {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l, %l : tensor<f32>, tensor<f32>
}

// -----

// CHECK: @forward_grad: ascend-loss-scale: @forward_grad has no gradient seed (a Const named 'gradients/seed', as ascend-autodiff makes)
// LOC: ascend-loss-scale-invalid.mlir:[[# @LINE + 1]]:1: ascend-loss-scale: @forward_grad has no gradient seed
func.func @forward_grad(%w: tensor<3xf32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  func.return %l, %w : tensor<f32>, tensor<3xf32>
}

// -----

// COM: Errors of the ascend-autodiff that ascend-loss-scale runs when @forward_grad is missing.
// CHECK: @forward, op #1: ascend-autodiff: no gradient rule for ascend.GeluGrad
func.func @forward(%w: tensor<2x4xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x4xf32>) -> tensor<f32> {
  %y = ascend.GeluGrad %w, %x, %x : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = ascend.ReduceSum %y {axes = array<i64: 0, 1>} : (tensor<2x4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
