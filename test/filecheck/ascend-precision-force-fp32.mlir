// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=force_fp32}' | filecheck %s
// COM: force_fp32 (cube_fp16in_fp32out differs on cube ops: ascend-precision-cube.mlir): the most precise kernel an op has:
// COM: fp32; else fp16 in with fp32 out; else fp16. A black op without an fp32 AI Core kernel runs
// COM: its fp32 AI CPU kernel.

// CHECK-LABEL: func.func @mlp
// CHECK-NOT: ascend.Cast
// CHECK: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
// CHECK: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: func.return
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Conv2D (fp16 only) and the gray MaxPool (fp16 AI Core kernel; its fp32 kernel is AI CPU and
// COM: it is not black) run in fp16, between them Relu goes back to fp32.
// CHECK-LABEL: func.func @cnn
// CHECK: %[[C:.*]] = ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// CHECK-NEXT: %[[CF:.*]] = ascend.Cast %[[C]] : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: %[[R:.*]] = ascend.Relu %[[CF]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf16>
// CHECK-NEXT: ascend.MaxPool %[[RH]] {{.*}} -> tensor<1x4x3x3xf16>
func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: A black MaxPool takes its fp32 AI CPU kernel instead.
// CHECK-LABEL: func.func @black_maxpool
// CHECK-NOT: ascend.Cast
// CHECK: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
func.func @black_maxpool(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32> {
  %p = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, list = #ascend.list<black>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: An fp16 graph rises to fp32; casts at the function's edges keep its signature.
// CHECK-LABEL: func.func @fp16_graph
// CHECK-SAME: -> tensor<8x4xf16>
// CHECK-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf16>) -> tensor<{{.*}}xf32>
// CHECK: ascend.MatMulV2 {{.*}} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[L:.*]] = ascend.Log {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[OUT:.*]] = ascend.Cast %[[L]] : (tensor<8x4xf32>) -> tensor<8x4xf16>
// CHECK-NEXT: func.return %[[OUT]] : tensor<8x4xf16>
func.func @fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Cube ops without an fp32 kernel take their fp16-in / fp32-out column.
// CHECK-LABEL: func.func @cube_columns
// CHECK: ascend.MatMulV2 {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf32>
// CHECK: ascend.Conv2DBackpropFilter {{.*}} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
func.func @cube_columns(%a: tensor<4x4xf32>, %x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) -> (tensor<4x4xf32>, tensor<4x3x3x3xf32>) {
  %m = ascend.MatMulV2 %a, %a {caps = #ascend.caps<(f16, f16, f16) -> f16, (f16, f16, f32) -> f32>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  func.return %m, %dw : tensor<4x4xf32>, tensor<4x3x3x3xf32>
}

// -----

// COM: A training step stays in fp32 except the fp16-only MaxPoolGrad (gray).
// CHECK-LABEL: func.func @train
// CHECK: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// CHECK: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
// CHECK: ascend.MaxPoolGrad {{.*}} -> tensor<1x4x6x6xf16>
func.func @train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>, %c: tensor<1x4x6x6xf32>, %p: tensor<1x4x3x3xf32>) -> (tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %y, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dw = ascend.MatMulV2 %x, %g {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %dp = ascend.MaxPoolGrad %c, %p, %p {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %w2, %l, %dp : tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>
}
