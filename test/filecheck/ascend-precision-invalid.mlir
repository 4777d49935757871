// RUN: not ascend-opt %s -p 'ascend-precision{mode=must_keep_origin_dtype}' 2>&1 | filecheck %s --check-prefix=KEEP
// RUN: not ascend-opt %s --precision_mode=allow_mix_precision --customize_dtypes=%S/Inputs/customize_unsupported.cfg 2>&1 | filecheck %s --check-prefix=CUSTOM
// RUN: not ascend-opt %s -p 'ascend-precision{mode=fp17}' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: not ascend-opt %s --precision_mode=force_fp16 --precision_mode_v2=fp16 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not ascend-opt %s --precision_mode=allow_mix_precision --modify_mixlist=%S/Inputs/no-such-file.json 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: xdsl-opt %s --split-input-file -p 'ascend-precision{mode=must_keep_origin_dtype}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-KEEP
// RUN: xdsl-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision customize_dtypes="%S/Inputs/customize_unsupported.cfg"}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-CUSTOM
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=must_keep_origin_dtype}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-LOC
// RUN: xdsl-opt %s --split-input-file -p 'ascend-precision{mode=bogus}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-OPTION
// RUN: xdsl-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision modify-mixlist="%S/Inputs/no-such-file.json"}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-FILE
// RUN: xdsl-opt %s --split-input-file -p 'ascend-attach-caps{soc=bogus}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-SOC
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=fast xdsl-opt %s --split-input-file -p 'ascend-precision{policy=tf}' --verify-diagnostics | filecheck %s --check-prefix=DIAG-ENV
// COM: User errors of ascend-opt are one line naming the file and position (more in test/passes/test_precision.py);
// COM: the first five RUN lines read the whole file as one module (its first error is @conv's).
// COM: Every error of ascend-precision that belongs to an op is an xDSL diagnostic (AscendPassError, a
// COM: PassFailedException) whose message starts with the op's location: plain xdsl-opt prints it as one line
// COM: under --verify-diagnostics (`@func, op #k` there; ascend-opt's parser knows file:line:col).
// COM: A bad option, option file or environment variable is a diagnostic too (DIAG-OPTION, DIAG-FILE, DIAG-ENV),
// COM: also of ascend-attach-caps (DIAG-SOC).

// KEEP: ascend-opt: error: {{.*}}ascend-precision-invalid.mlir:{{[0-9]+}}:3: Conv2D 'conv1' has no kernel for its original dtype float32 under must_keep_origin_dtype and no AI CPU fallback; kernels: (f16, f16, f16) -> f16
// CUSTOM: ascend-opt: error: {{.*}}ascend-precision-invalid.mlir:{{[0-9]+}}:3: Conv2D 'conv1' has no kernel (f32, f32) -> f32 (customize_dtypes {{.*}}customize_unsupported.cfg:2); kernels: (f16, f16, f16) -> f16
// MODE: ascend-opt: error: unknown precision_mode 'fp17'; expected one of force_fp32, cube_fp16in_fp32out, force_fp16,
// BOTH: ascend-opt: error: precision_mode 'force_fp16' and precision_mode_v2 'fp16' are mutually exclusive
// MISSING: ascend-opt: error: {{.*}}no-such-file.json: cannot read file
// DIAG-SOC: unknown soc_version 'bogus'; accepted: Ascend910,
// DIAG-OPTION: unknown precision_mode 'bogus'; expected one of force_fp32,
// DIAG-FILE: no-such-file.json: cannot read file: No such file or directory
// DIAG-ENV: environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL: unknown level 'FAST'; expected TENSOR_CORES_ONLY, TREAT_INFER_AS_DENY, UNSAFE_FORCE_ALL or unset

// DIAG-KEEP: @conv, op #1: Conv2D 'conv1' has no kernel for its original dtype float32 under must_keep_origin_dtype and no AI CPU fallback; kernels: (f16, f16, f16) -> f16
// DIAG-LOC: ascend-precision-invalid.mlir:{{[0-9]+}}:3: Conv2D 'conv1' has no kernel for its original dtype float32 under must_keep_origin_dtype
// DIAG-CUSTOM: @conv, op #1: Conv2D 'conv1' has no kernel (f32, f32) -> f32 (customize_dtypes {{.*}}customize_unsupported.cfg:2); kernels: (f16, f16, f16) -> f16
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, name = "conv1"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}

// -----

// COM: The second chunk is still processed after the first one's diagnostic.
// DIAG-KEEP: @relu, op #1: Relu 'r' has no kernel for its original dtype float32 under must_keep_origin_dtype and no AI CPU fallback; kernels: (f16) -> f16
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = ascend.Relu %x {caps = #ascend.caps<(f16) -> f16>, name = "r"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
