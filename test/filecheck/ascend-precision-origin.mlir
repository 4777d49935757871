// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=must_keep_origin_dtype}' | filecheck %s
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=origin | filecheck %s
// COM: must_keep_origin_dtype (v2 origin): every op keeps its original dtype. An unsupported fp16 op
// COM: rises to fp32; an unsupported fp32 op runs its AI CPU fp32 kernel (else: ascend-precision-invalid.mlir).

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

// COM: A CNN written with fp16 convolutions: Conv2D stays fp16, the fp32 MaxPool runs on the AI CPU.
// CHECK-LABEL: func.func @cnn
// CHECK: %[[C:.*]] = ascend.Conv2D {{.*}} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16>
// CHECK-NEXT: %[[CF:.*]] = ascend.Cast %[[C]]
// CHECK-NEXT: ascend.Relu %[[CF]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT: func.return
func.func @cnn(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16>
  %cf = ascend.Cast %c : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %cf : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: fp16 ops keep fp16; the one without an fp16 kernel rises to fp32.
// CHECK-LABEL: func.func @fp16_graph
// CHECK: ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// CHECK: %[[E:.*]] = ascend.Exp {{.*}} : (tensor<8x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[EF:.*]] = ascend.Cast %[[E]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[L:.*]] = ascend.Log %[[EF]] {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: ascend.Cast %[[L]] : (tensor<8x4xf32>) -> tensor<8x4xf16>
func.func @fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e {caps = #ascend.caps<(f32) -> f32>} : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Mixed precision written by hand (user casts) is kept exactly.
// CHECK-LABEL: func.func @manual_mix
// CHECK: %[[XH:.*]] = ascend.Cast %{{.*}} : (tensor<8x16xf32>) -> tensor<8x16xf16>
// CHECK: %[[WH:.*]] = ascend.Cast %{{.*}} : (tensor<16x4xf32>) -> tensor<16x4xf16>
// CHECK: %[[Y:.*]] = ascend.MatMulV2 %[[XH]], %[[WH]] : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
// CHECK: ascend.Relu %[[Y]] : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NOT: ascend.Cast
func.func @manual_mix(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %xh = ascend.Cast %x : (tensor<8x16xf32>) -> tensor<8x16xf16>
  %wh = ascend.Cast %w : (tensor<16x4xf32>) -> tensor<16x4xf16>
  %y = ascend.MatMulV2 %xh, %wh : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @train
// CHECK-NOT: ascend.Cast
// CHECK: ascend.MaxPoolGrad {{.*}} -> tensor<1x4x6x6xf32>
// CHECK: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
func.func @train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>, %c: tensor<1x4x6x6xf32>, %p: tensor<1x4x3x3xf32>) -> (tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %y, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dp = ascend.MaxPoolGrad %c, %p, %p {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %dw = ascend.MatMulV2 %x, %g {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l, %dp : tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>
}
