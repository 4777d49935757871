// RUN: ascend-opt %s --precision_mode=allow_mix_precision --keep_dtype=%S/Inputs/keep_dtype.txt --customize_dtypes=%S/Inputs/customize_dtypes.cfg | filecheck %s
// RUN: ascend-opt %s -p 'ascend-precision{mode=force_fp16 keep-dtype="%S/Inputs/keep_dtype.txt"}' | filecheck %s --check-prefix=KEEP
// COM: Overrides, strongest first: customize_dtypes > keep_dtype > modify_mixlist > library lists > mode.
// COM: fc1 is in both files: customize_dtypes wins (fp16 in, fp32 out). Relu: customize_dtypes by type.
// COM: fc2 and every SoftmaxV2 keep fp32 (keep_dtype); the unnamed MatMulV2 follows the mode.

// CHECK-LABEL: func.func @overrides
// CHECK: %[[H:.*]] = ascend.MatMulV2 {{.*}}{name = "fc1"} : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[R:.*]] = ascend.Relu %[[H]] : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: ascend.MatMulV2 %[[R]], %{{.*}} {name = "fc2"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<8x16xf32>) -> tensor<8x16xf16>
// CHECK-NEXT: ascend.Cast %{{.*}} : (tensor<16x4xf32>) -> tensor<16x4xf16>
// CHECK-NEXT: %[[P:.*]] = ascend.MatMulV2 %[[RH]], %{{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// CHECK-NEXT: %[[PF:.*]] = ascend.Cast %[[P]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// CHECK-NEXT: ascend.SoftmaxV2 %[[PF]] : (tensor<8x4xf32>) -> tensor<8x4xf32>
// KEEP-LABEL: func.func @overrides
// KEEP: ascend.MatMulV2 {{.*}}{name = "fc1"} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
// KEEP: ascend.Relu {{.*}} : (tensor<8x16xf16>) -> tensor<8x16xf16>
// KEEP: ascend.MatMulV2 {{.*}}{name = "fc2"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// KEEP: ascend.MatMulV2 {{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// KEEP: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @overrides(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %h = ascend.MatMulV2 %x, %w1 {name = "fc1"} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %r = ascend.Relu %h : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %o = ascend.MatMulV2 %r, %w2 {name = "fc2"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %p = ascend.MatMulV2 %r, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %p : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %o, %s : tensor<8x4xf32>, tensor<8x4xf32>
}
