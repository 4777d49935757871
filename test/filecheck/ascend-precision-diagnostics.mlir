// RUN: xdsl-opt %s --split-input-file -p 'ascend-precision{mode=must_keep_origin_dtype}' --verify-diagnostics | filecheck %s --check-prefix=KEEP
// RUN: xdsl-opt %s --split-input-file -p 'ascend-precision{mode=allow_mix_precision customize_dtypes="%S/Inputs/customize_unsupported.cfg"}' --verify-diagnostics | filecheck %s --check-prefix=CUSTOM
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=must_keep_origin_dtype}' --verify-diagnostics | filecheck %s --check-prefix=KEEP-LOC
// COM: Every error of ascend-precision that belongs to an op is an xDSL diagnostic (AscendPassError, a
// COM: PassFailedException) whose message starts with the op's location: plain xdsl-opt prints it as one line
// COM: under --verify-diagnostics (`@func, op #k` there; ascend-opt's parser knows file:line:col).

// KEEP: @conv, op #1: Conv2D 'conv1' has no kernel for its original dtype float32 under must_keep_origin_dtype and no AI CPU fallback; kernels: (f16, f16, f16) -> f16
// KEEP-LOC: ascend-precision-diagnostics.mlir:{{[0-9]+}}:3: Conv2D 'conv1' has no kernel for its original dtype float32 under must_keep_origin_dtype
// CUSTOM: @conv, op #1: Conv2D 'conv1' has no kernel (f32, f32) -> f32 (customize_dtypes {{.*}}customize_unsupported.cfg:2); kernels: (f16, f16, f16) -> f16
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, name = "conv1"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}

// -----

// COM: The second chunk is still processed after the first one's diagnostic.
// KEEP: @relu, op #1: Relu 'r' has no kernel for its original dtype float32 under must_keep_origin_dtype and no AI CPU fallback; kernels: (f16) -> f16
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = ascend.Relu %x {caps = #ascend.caps<(f16) -> f16>, name = "r"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
