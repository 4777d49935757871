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
