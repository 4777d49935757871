// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Constants, casts and data-movement ops round-trip.

// CHECK-LABEL: func.func @const_cast
func.func @const_cast(%x: tensor<4xf32>) -> tensor<4xf16> {
  // CHECK: %[[C:.*]] = ascend.Const dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  %c = ascend.Const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  // CHECK: ascend.Const dense<5> : tensor<i32> {name = "five"}
  %i = ascend.Const dense<5> : tensor<i32> {name = "five"}
  %0 = ascend.Add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: ascend.Cast %{{.*}} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = ascend.Cast %0 : (tensor<4xf32>) -> tensor<4xf16>
  // CHECK: ascend.Cast %{{.*}} {dst_type = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
  %2 = ascend.Cast %1 {dst_type = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
  func.return %1 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>) -> tensor<4x2x3xf32> {
  // CHECK: ascend.Reshape %{{.*}} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %0 = ascend.Reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK: ascend.Transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = ascend.Transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  // CHECK: ascend.ConcatV2D %{{.*}}, %{{.*}} {concat_dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  %2 = ascend.ConcatV2D %x, %y {concat_dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  func.return %1 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @classify
func.func @classify(%z: tensor<8x10xf32>, %t: tensor<8x10xf32>, %idx: tensor<8xi32>, %on: tensor<f32>, %off: tensor<f32>) -> tensor<8xi32> {
  // CHECK: ascend.ArgMaxV2 %{{.*}} {dimension = 1 : i64} : (tensor<8x10xf32>) -> tensor<8xi32>
  %0 = ascend.ArgMaxV2 %z {dimension = 1 : i64} : (tensor<8x10xf32>) -> tensor<8xi32>
  // CHECK: ascend.OneHot %{{.*}}, %{{.*}}, %{{.*}} {depth = 10 : i64} : (tensor<8xi32>, tensor<f32>, tensor<f32>) -> tensor<8x10xf32>
  %1 = ascend.OneHot %idx, %on, %off {depth = 10 : i64} : (tensor<8xi32>, tensor<f32>, tensor<f32>) -> tensor<8x10xf32>
  // CHECK: ascend.SoftmaxCrossEntropyWithLogits %{{.*}}, %{{.*}} : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %z, %1 : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  func.return %0 : tensor<8xi32>
}

// -----

// CHECK-LABEL: func.func @pad_resize
func.func @pad_resize(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  // CHECK: ascend.PadV3D %{{.*}} {paddings = array<i64: 0, 0, 0, 0, 1, 1, 2, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x5x8xf32>
  %0 = ascend.PadV3D %x {paddings = array<i64: 0, 0, 0, 0, 1, 1, 2, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x5x8xf32>
  // CHECK: ascend.PadV3D %{{.*}} {paddings = array<i64: 0, 0, 0, 0, 1, 2, 1, 0>, mode = "reflect"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x5xf32>
  %1 = ascend.PadV3D %x {paddings = array<i64: 0, 0, 0, 0, 1, 2, 1, 0>, mode = "reflect"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x5xf32>
  // CHECK: ascend.PadV3D %{{.*}} {paddings = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, constant_values = -1.000000e+00 : f32, paddings_contiguous = false} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x5xf32>
  %2 = ascend.PadV3D %x {paddings = array<i64: 0, 0, 0, 0, 0, 0, 1, 1>, constant_values = -1.0 : f32, paddings_contiguous = false} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x5xf32>
  // CHECK: ascend.ResizeD %{{.*}} {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  %3 = ascend.ResizeD %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  // CHECK: ascend.ResizeD %{{.*}} {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  %4 = ascend.ResizeD %x {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  func.return %4 : tensor<1x2x6x8xf32>
}

// -----

// CHECK-LABEL: func.func @scatter
func.func @scatter(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // CHECK: ascend.ScatterNdUpdate %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %y = ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @segment_sum
func.func @segment_sum(%x: tensor<2x8x16xf32>, %i: tensor<2x8xi64>) -> tensor<100x16xf32> {
  // CHECK: ascend.UnsortedSegmentSumD %{{.*}}, %{{.*}} {num_segments = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  %y = ascend.UnsortedSegmentSumD %x, %i {num_segments = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  func.return %y : tensor<100x16xf32>
}
