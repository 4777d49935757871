// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Ops transformers need (comparisons, logic, SelectV2, Erf, ...) round-trip.

// CHECK-LABEL: func.func @compare
func.func @compare(%a: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xi1> {
  // CHECK: ascend.Less %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %0 = ascend.Less %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  // CHECK: ascend.Equal %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %1 = ascend.Equal %a, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  func.return %1 : tensor<2x4xi1>
}

// -----

// CHECK-LABEL: func.func @logic
func.func @logic(%a: tensor<2x4xi1>, %b: tensor<i1>) -> tensor<2x4xi1> {
  // CHECK: ascend.LogicalAnd %{{.*}}, %{{.*}} : (tensor<2x4xi1>, tensor<i1>) -> tensor<2x4xi1>
  %0 = ascend.LogicalAnd %a, %b : (tensor<2x4xi1>, tensor<i1>) -> tensor<2x4xi1>
  // CHECK: ascend.LogicalOr %{{.*}}, %{{.*}} : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
  %1 = ascend.LogicalOr %0, %a : (tensor<2x4xi1>, tensor<2x4xi1>) -> tensor<2x4xi1>
  // CHECK: ascend.LogicalNot %{{.*}} : (tensor<2x4xi1>) -> tensor<2x4xi1>
  %2 = ascend.LogicalNot %1 : (tensor<2x4xi1>) -> tensor<2x4xi1>
  func.return %2 : tensor<2x4xi1>
}

// -----

// CHECK-LABEL: func.func @select_v2
func.func @select_v2(%m: tensor<1x1x4x4xi1>, %a: tensor<2x3x4x4xf32>, %fill: tensor<f32>) -> tensor<2x3x4x4xf32> {
  // CHECK: ascend.SelectV2 %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %0 = ascend.SelectV2 %m, %a, %fill : (tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  func.return %0 : tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @erf
func.func @erf(%x: tensor<4xf16>) -> tensor<4xf16> {
  // CHECK: ascend.Erf %{{.*}} : (tensor<4xf16>) -> tensor<4xf16>
  %0 = ascend.Erf %x : (tensor<4xf16>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @batch_matmul_v2
func.func @batch_matmul_v2(%a: tensor<2x5x8xf16>, %w: tensor<8x3xf16>, %b: tensor<3xf16>) -> tensor<2x5x3xf16> {
  // CHECK: ascend.BatchMatMulV2 %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x5x8xf16>, tensor<8x3xf16>, tensor<3xf16>) -> tensor<2x5x3xf16>
  %0 = ascend.BatchMatMulV2 %a, %w, %b : (tensor<2x5x8xf16>, tensor<8x3xf16>, tensor<3xf16>) -> tensor<2x5x3xf16>
  // CHECK: ascend.BatchMatMulV2 %{{.*}}, %{{.*}} {adj_x2 = true} : (tensor<2x5x8xf16>, tensor<2x5x8xf16>) -> tensor<2x5x5xf32>
  %1 = ascend.BatchMatMulV2 %a, %a {adj_x2 = true} : (tensor<2x5x8xf16>, tensor<2x5x8xf16>) -> tensor<2x5x5xf32>
  func.return %0 : tensor<2x5x3xf16>
}

// -----

// CHECK-LABEL: func.func @gather
func.func @gather(%t: tensor<100x16xf32>, %ids: tensor<2x8xi64>) -> tensor<2x8x16xf32> {
  // CHECK: ascend.GatherV2D %{{.*}}, %{{.*}} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  %0 = ascend.GatherV2D %t, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  // CHECK: ascend.GatherV2D %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<100x2x8xf32>
  %1 = ascend.GatherV2D %t, %ids {axis = 1 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<100x2x8xf32>
  func.return %0 : tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @strided_slice
func.func @strided_slice(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  // CHECK: ascend.StridedSliceD %{{.*}} {begin = array<i64: 0, 1>, end = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  %0 = ascend.StridedSliceD %x {begin = array<i64: 0, 1>, end = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // CHECK: ascend.StridedSliceD %{{.*}} {begin = array<i64: 0, -1>, end = array<i64: 0, 0>, strides = array<i64: 1, -1>, end_mask = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  %1 = ascend.StridedSliceD %x {begin = array<i64: 0, -1>, end = array<i64: 0, 0>, strides = array<i64: 1, -1>, end_mask = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_tile
func.func @broadcast_tile(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  // CHECK: ascend.BroadcastToD %{{.*}} {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = ascend.BroadcastToD %x {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: ascend.TileD %{{.*}} {multiples = array<i64: 2, 3>} : (tensor<3x1xf32>) -> tensor<6x3xf32>
  %1 = ascend.TileD %x {multiples = array<i64: 2, 3>} : (tensor<3x1xf32>) -> tensor<6x3xf32>
  func.return %0 : tensor<2x3x4xf32>
}
