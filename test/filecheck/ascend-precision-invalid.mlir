// RUN: not ascend-opt %s -p 'ascend-precision{mode=must_keep_origin_dtype}' 2>&1 | filecheck %s --check-prefix=KEEP
// RUN: not ascend-opt %s --precision_mode=allow_mix_precision --customize_dtypes=%S/Inputs/customize_unsupported.cfg 2>&1 | filecheck %s --check-prefix=CUSTOM
// RUN: not ascend-opt %s -p 'ascend-precision{mode=fp17}' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: not ascend-opt %s --precision_mode=force_fp16 --precision_mode_v2=fp16 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not ascend-opt %s --precision_mode=allow_mix_precision --modify_mixlist=%S/Inputs/no-such-file.json 2>&1 | filecheck %s --check-prefix=MISSING
// COM: User errors are one line naming the file and position (more in test/test_precision.py).

// KEEP: ascend-opt: error: {{.*}}ascend-precision-invalid.mlir:{{[0-9]+}}:3: Conv2D 'conv1' has no kernel for its original dtype float32 under must_keep_origin_dtype and no AI CPU fallback; kernels: (f16, f16, f16) -> f16
// CUSTOM: ascend-opt: error: {{.*}}ascend-precision-invalid.mlir:{{[0-9]+}}:3: Conv2D 'conv1' has no kernel (f32, f32) -> f32 (customize_dtypes {{.*}}customize_unsupported.cfg:2); kernels: (f16, f16, f16) -> f16
// MODE: ascend-opt: error: unknown precision_mode 'fp17'; expected one of force_fp32, cube_fp16in_fp32out, force_fp16,
// BOTH: ascend-opt: error: precision_mode 'force_fp16' and precision_mode_v2 'fp16' are mutually exclusive
// MISSING: ascend-opt: error: {{.*}}no-such-file.json: cannot read file
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, name = "conv1"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}
