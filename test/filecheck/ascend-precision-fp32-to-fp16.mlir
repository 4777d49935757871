// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_fp32_to_fp16}' | filecheck %s
// COM: allow_fp32_to_fp16: an op keeps its original dtype when it has a kernel for it, else runs in fp16.

// CHECK-LABEL: func.func @mlp
// CHECK-NOT: ascend.Cast
// CHECK: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
// CHECK: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Conv2D and MaxPool have no fp32 AI Core kernel: fp16. Relu between them keeps fp32.
// CHECK-LABEL: func.func @cnn
// CHECK: %[[C:.*]] = ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// CHECK-NEXT: %[[CF:.*]] = ascend.Cast %[[C]] : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: %[[R:.*]] = ascend.Relu %[[CF]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf16>
// CHECK-NEXT: %[[P:.*]] = ascend.MaxPool %[[RH]] {{.*}} -> tensor<1x4x3x3xf16>
// CHECK-NEXT: %[[OUT:.*]] = ascend.Cast %[[P]] : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT: func.return %[[OUT]]
func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: fp16 ops stay fp16; one without an fp16 kernel rises to fp32.
// CHECK-LABEL: func.func @fp16_graph
// CHECK: %[[E:.*]] = ascend.Exp {{.*}} : (tensor<8x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[EF:.*]] = ascend.Cast %[[E]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[L:.*]] = ascend.Log %[[EF]] {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[OUT:.*]] = ascend.Cast %[[L]] : (tensor<8x4xf32>) -> tensor<8x4xf16>
func.func @fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e {caps = #ascend.caps<(f32) -> f32>} : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Gray and black lists play no part: everything with an fp32 kernel keeps fp32.
// CHECK-LABEL: func.func @train
// CHECK-NOT: ascend.Cast
// CHECK: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// CHECK: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
func.func @train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}
