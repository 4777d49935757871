// RUN: ascend-opt %s --split-input-file --precision_mode=cube_fp16in_fp32out | filecheck %s
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=cube_fp16in_fp32out | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=force_fp32}' | filecheck %s --check-prefix=FP32
// COM: cube_fp16in_fp32out (current CANN): cube ops prefer fp16 in with fp32 out, then fp32/fp32, then
// COM: fp16/fp16; every other op as force_fp32 (fp32 where supported). force_fp32 keeps fp32 cube ops.

// CHECK-LABEL: func.func @mlp
// CHECK: %[[X:.*]] = ascend.Cast %x : (tensor<8x16xf32>) -> tensor<8x16xf16>
// CHECK: %[[W:.*]] = ascend.Cast %w : (tensor<16x4xf32>) -> tensor<16x4xf16>
// CHECK: ascend.MatMulV2 %[[X]], %[[W]] {{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
// CHECK-NEXT: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: func.return
// FP32-LABEL: func.func @mlp
// FP32-NOT: ascend.Cast
// FP32: ascend.MatMulV2 {{.*}} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Without an fp16-in/fp32-out kernel a cube op takes fp32/fp32, then fp16/fp16.
// CHECK-LABEL: func.func @fallbacks
// CHECK: ascend.MatMulV2 {{.*}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: ascend.MatMulV2 {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
func.func @fallbacks(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = ascend.MatMulV2 %a, %a {caps = #ascend.caps<(f16, f16, f16) -> f16, (f32, f32, f32) -> f32>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = ascend.MatMulV2 %a, %a {caps = #ascend.caps<(f16, f16, f16) -> f16>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m, %n : tensor<4x4xf32>, tensor<4x4xf32>
}
