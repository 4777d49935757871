// RUN: ascend-opt %s --split-input-file -p ascend-precision | filecheck %s
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=fp16 | filecheck %s
// COM: force_fp16 (ATC's default, v2 fp16): every op with an fp16 kernel runs in fp16, whatever its
// COM: list or original dtype; an op without one keeps its original dtype.

// CHECK-LABEL: func.func @mlp
// CHECK-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf32>) -> tensor<{{.*}}xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: ascend.Cast %{{.*}} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: ascend.BiasAdd {{.*}} : (tensor<8x4xf16>, tensor<4xf16>) -> tensor<8x4xf16>
// CHECK: ascend.Relu {{.*}} -> tensor<8x4xf16>
// CHECK: %[[S:.*]] = ascend.SoftmaxV2 {{.*}} -> tensor<8x4xf16>
// CHECK: %[[OUT:.*]] = ascend.Cast %[[S]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// CHECK: func.return %[[OUT]] : tensor<8x4xf32>
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: MaxPool has an fp32 AI CPU kernel, but force_fp16 takes its fp16 AI Core one.
// CHECK-LABEL: func.func @cnn
// CHECK-COUNT-2: ascend.Cast
// CHECK: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// CHECK: ascend.Relu {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
// CHECK: %[[P:.*]] = ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x3x3xf16>
// CHECK-NEXT: ascend.Cast %[[P]] : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// CHECK-NOT: ascend.Cast
func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @fp16_graph
// CHECK-NOT: ascend.Cast
// CHECK: ascend.Log {{.*}} -> tensor<8x4xf16>
// CHECK-NEXT: func.return
func.func @fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Lists do not matter: the black Log and ReduceSum run in fp16 too, and so does every gray op.
// CHECK-LABEL: func.func @gray
// CHECK: ascend.Log {{.*}} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: ascend.Relu {{.*}} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: ascend.ReduceSum {{.*}} : (tensor<8x8xf16>) -> tensor<8x1xf16>
// CHECK: ascend.Add {{.*}} : (tensor<8x8xf16>, tensor<8x1xf16>) -> tensor<8x8xf16>
func.func @gray(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %l = ascend.Log %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = ascend.Relu %l : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %both = ascend.Add %m, %s : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  func.return %a, %both : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: The optimizer runs in fp16 as well; BiasAddGrad's fp16 kernel has an fp32 output; the float
// COM: status ops have fp32 kernels only and keep fp32.
// CHECK-LABEL: func.func @train
// CHECK: ascend.BiasAddGrad {{.*}} : (tensor<8x4xf16>) -> tensor<4xf32>
// CHECK: %[[W2:.*]] = ascend.ApplyGradientDescent {{.*}} : (tensor<16x4xf16>, tensor<f16>, tensor<16x4xf16>) -> tensor<16x4xf16>
// CHECK-NEXT: %[[S0:.*]] = ascend.NPUAllocFloatStatus : tensor<8xf32>
// CHECK-NEXT: ascend.NPUGetFloatStatus %[[S0]] : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[W2F:.*]] = ascend.Cast %[[W2]] : (tensor<16x4xf16>) -> tensor<16x4xf32>
// CHECK-NEXT: %[[LF:.*]] = ascend.Cast %{{.*}} : (tensor<8xf16>) -> tensor<8xf32>
// CHECK-NEXT: func.return %[[W2F]], %[[LF]]
func.func @train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %db = ascend.BiasAddGrad %dr {data_format = "NHWC"} : (tensor<8x4xf32>) -> tensor<4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %s0 = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %s1 = ascend.NPUGetFloatStatus %s0 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}

// -----

// COM: An op without an fp16 kernel keeps its original dtype.
// CHECK-LABEL: func.func @no_fp16_kernel
// CHECK-NOT: ascend.Cast
// CHECK: ascend.Exp {{.*}} : (tensor<4xf32>) -> tensor<4xf32>
func.func @no_fp16_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Exp %x {caps = #ascend.caps<(f32) -> f32>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
