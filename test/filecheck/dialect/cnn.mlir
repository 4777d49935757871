// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: The CNN-zoo ops (explicit-pad pooling, inference BatchNorm, clipping, HardSigmoid) round-trip.

// CHECK-LABEL: func.func @max_pool_v3
func.func @max_pool_v3(%x: tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16> {
  // CHECK: ascend.MaxPoolV3 %{{.*}} {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  %0 = ascend.MaxPoolV3 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  func.return %0 : tensor<1x4x4x4xf16>
}

// -----

// CHECK-LABEL: func.func @max_pool_v3_ceil_nhwc
func.func @max_pool_v3_ceil_nhwc(%x: tensor<1x7x7x4xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: ascend.MaxPoolV3 %{{.*}} {ksize = array<i64: 1, 2, 2, 1>, strides = array<i64: 1, 2, 2, 1>, data_format = "NHWC", ceil_mode = true, name = "pool1"} : (tensor<1x7x7x4xf32>) -> tensor<1x4x4x4xf32>
  %0 = ascend.MaxPoolV3 %x {ksize = array<i64: 1, 2, 2, 1>, strides = array<i64: 1, 2, 2, 1>, data_format = "NHWC", ceil_mode = true, name = "pool1"} : (tensor<1x7x7x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @avg_pool_v2
func.func @avg_pool_v2(%x: tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16> {
  // CHECK: ascend.AvgPoolV2 %{{.*}} {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, exclusive = false} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16>
  %0 = ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, exclusive = false} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16>
  func.return %0 : tensor<1x4x8x8xf16>
}

// -----

// CHECK-LABEL: func.func @avg_pool_v2_global_same
func.func @avg_pool_v2_global_same(%x: tensor<2x4x7x5xf32>) -> tensor<2x4x1x1xf32> {
  // CHECK: ascend.AvgPoolV2 %{{.*}} {ksize = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1, 1, 1>, global_pooling = true} : (tensor<2x4x7x5xf32>) -> tensor<2x4x1x1xf32>
  %0 = ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1, 1, 1>, global_pooling = true} : (tensor<2x4x7x5xf32>) -> tensor<2x4x1x1xf32>
  // CHECK: ascend.AvgPoolV2 %{{.*}} {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding_mode = "SAME"} : (tensor<2x4x7x5xf32>) -> tensor<2x4x4x3xf32>
  %1 = ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding_mode = "SAME"} : (tensor<2x4x7x5xf32>) -> tensor<2x4x4x3xf32>
  func.return %0 : tensor<2x4x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @bn_infer
func.func @bn_infer(%x: tensor<2x4x8x8xf16>, %s: tensor<4xf32>, %o: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4x8x8xf16> {
  // CHECK: ascend.BNInfer %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
  %0 = ascend.BNInfer %x, %s, %o, %m, %v {epsilon = 1.0e-03 : f32} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
  func.return %0 : tensor<2x4x8x8xf16>
}

// -----

// CHECK-LABEL: func.func @bn_infer_rank2
func.func @bn_infer_rank2(%x: tensor<8x4xf32>, %s: tensor<4xf32>) -> tensor<8x4xf32> {
  // CHECK: ascend.BNInfer %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %0 = ascend.BNInfer %x, %s, %s, %s, %s : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @clip_by_value
func.func @clip_by_value(%x: tensor<2x4xf32>, %lo: tensor<f32>, %hi: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: ascend.ClipByValue %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<f32>, tensor<4xf32>) -> tensor<2x4xf32>
  %0 = ascend.ClipByValue %x, %lo, %hi : (tensor<2x4xf32>, tensor<f32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @relu6
func.func @relu6(%x: tensor<2x4xf16>) -> tensor<2x4xf16> {
  // CHECK: ascend.Relu6 %{{.*}} : (tensor<2x4xf16>) -> tensor<2x4xf16>
  %0 = ascend.Relu6 %x : (tensor<2x4xf16>) -> tensor<2x4xf16>
  func.return %0 : tensor<2x4xf16>
}

// -----

// CHECK-LABEL: func.func @hard_sigmoid
func.func @hard_sigmoid(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK: ascend.HardSigmoid %{{.*}} {alpha = 2.000000e-01 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = ascend.HardSigmoid %x {alpha = 2.000000e-01 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK: ascend.HardSigmoid %{{.*}} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = ascend.HardSigmoid %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}
