// RUN: ascend-run %s --compare-modes --seed 0 2>/dev/null | filecheck %s

// COM: Every precision mode against the float64 reference of this fp32 graph. Conv2D has
// COM: only an fp16 kernel, so must_keep_origin_dtype cannot compile it and says why.
// CHECK:      @cnn: 3 inputs, 1 output
// CHECK:      mode {{ +}}max_rel_err mean_rel_err peak_bytes low_ops casts
// CHECK:      force_fp32 {{ +}}[[E:[0-9]\.[0-9]+e-[0-9]+]] {{ +}}{{[0-9]\.[0-9]+e-[0-9]+}} {{ +}}[[FP32:[0-9]+]] {{ +}}2
// CHECK:      force_fp16 {{ +}}{{[0-9]\.[0-9]+e-[0-9]+}} {{ +}}{{[0-9]\.[0-9]+e-[0-9]+}} {{ +}}{{[0-9]+}} {{ +}}5
// CHECK:      must_keep_origin_dtype {{ +}}error: {{.*}}ascend-run-modes.mlir:11:3: Conv2D 'conv' has no kernel for its original dtype float32
func.func @cnn(%x: tensor<4x1x6x6xf32>, %k: tensor<4x1x3x3xf32>, %w: tensor<16x3xf32>) -> tensor<4x3xf32> {
  %c = ascend.Conv2D %x, %k {name = "conv", strides = array<i64: 1, 1, 1, 1>} : (tensor<4x1x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<4x4x4x4xf32>
  %p = ascend.MaxPool %c {name = "pool", ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<4x4x4x4xf32>) -> tensor<4x4x2x2xf32>
  %f = ascend.Reshape %p : (tensor<4x4x2x2xf32>) -> tensor<4x16xf32>
  %z = ascend.MatMulV2 %f, %w {name = "fc"} : (tensor<4x16xf32>, tensor<16x3xf32>) -> tensor<4x3xf32>
  %y = ascend.SoftmaxV2 %z {name = "softmax"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
