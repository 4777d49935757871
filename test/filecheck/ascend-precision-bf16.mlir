// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | filecheck %s
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=mixed_bfloat16 --soc_version=ascend910b | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_fp32_to_bf16 soc=ascend910b}' | filecheck %s --check-prefix=TOBF
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision_bf16}' 2>/dev/null | filecheck %s --check-prefix=NOBF
// COM: allow_mix_precision_bf16 (v2 mixed_bfloat16): the mix rules with bf16 as the low dtype.
// COM: allow_fp32_to_bf16 (TOBF): keep the original dtype where a kernel has it, else bf16 (like allow_fp32_to_fp16).
// COM: On ascend910 (NOBF) there are no bf16 kernels: white ops stay fp32 (with a warning); fp16-only ops run in fp16.

// CHECK-LABEL: func.func @mlp
// CHECK-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf32>) -> tensor<{{.*}}xbf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}} : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT: ascend.Cast %{{.*}} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT: ascend.BiasAdd {{.*}} : (tensor<8x4xbf16>, tensor<4xbf16>) -> tensor<8x4xbf16>
// CHECK: %[[S:.*]] = ascend.SoftmaxV2 {{.*}} : (tensor<8x4xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT: ascend.Cast %[[S]] : (tensor<8x4xbf16>) -> tensor<8x4xf32>
// TOBF-LABEL: func.func @mlp
// TOBF-NOT: ascend.Cast
// TOBF: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// NOBF-LABEL: func.func @mlp
// NOBF-NOT: ascend.Cast
// NOBF: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @cnn
// CHECK: ascend.Conv2D {{.*}} : (tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<1x4x6x6xbf16>
// CHECK-NEXT: ascend.Relu {{.*}} : (tensor<1x4x6x6xbf16>) -> tensor<1x4x6x6xbf16>
// CHECK-NEXT: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xbf16>) -> tensor<1x4x3x3xbf16>
// TOBF-LABEL: func.func @cnn
// TOBF: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xbf16>
// TOBF: ascend.Relu {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// TOBF: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xbf16>) -> tensor<1x4x3x3xbf16>
// NOBF-LABEL: func.func @cnn
// NOBF: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// NOBF-NEXT: ascend.Relu {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
// NOBF-NEXT: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x3x3xf16>
func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: Original fp16 ops stay fp16 in the bf16 modes too.
// CHECK-LABEL: func.func @fp16_graph
// CHECK-NOT: ascend.Cast
// CHECK: ascend.Log {{.*}} -> tensor<8x4xf16>
// TOBF-LABEL: func.func @fp16_graph
// TOBF-NOT: ascend.Cast
// TOBF: ascend.Log {{.*}} -> tensor<8x4xf16>
func.func @fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: An fp16-only white op (hand-written caps) next to a bf16 one. The gray Add gets an fp16 and a
// COM: bf16 vote: neither holds the other, so it runs in fp32. fp16 -> bf16 goes through fp32 (the
// COM: fp32 copy made for Add); each cast sits right before its first consumer.
// CHECK-LABEL: func.func @fp16_meets_bf16
// CHECK: %[[H:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// CHECK: %[[B:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xbf16>
// CHECK-NEXT: %[[HF:.*]] = ascend.Cast %[[H]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[BF:.*]] = ascend.Cast %[[B]] : (tensor<8x8xbf16>) -> tensor<8x8xf32>
// CHECK-NEXT: ascend.Add %[[HF]], %[[BF]] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[HB:.*]] = ascend.Cast %[[HF]] : (tensor<8x8xf32>) -> tensor<8x8xbf16>
// CHECK-NEXT: ascend.MatMulV2 %[[HB]], %{{.*}} : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
func.func @fp16_meets_bf16(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %h = ascend.MatMul %x, %w {caps = #ascend.caps<(f16, f16, f16) -> f16>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.Add %h, %b : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %h, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %s, %n : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @train
// CHECK: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xbf16>, tensor<8x4xbf16>)
// CHECK: ascend.ReluGrad {{.*}} -> tensor<8x4xbf16>
// CHECK: %[[DW:.*]] = ascend.MatMulV2 {{.*}} -> tensor<16x4xbf16>
// CHECK-NEXT: %[[DWF:.*]] = ascend.Cast %[[DW]] : (tensor<16x4xbf16>) -> tensor<16x4xf32>
// CHECK-NEXT: ascend.ApplyGradientDescent %{{.*}}, %{{.*}}, %[[DWF]] {{.*}} -> tensor<16x4xf32>
// TOBF-LABEL: func.func @train
// TOBF-NOT: ascend.Cast
// TOBF: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
func.func @train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}
