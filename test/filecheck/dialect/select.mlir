// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Comparison and selection: Greater gives a bool tensor, Select picks x1 where it holds, else x2.

// CHECK-LABEL: func.func @greater
func.func @greater(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %h: tensor<4xf16>, %i: tensor<4xi32>) -> tensor<4x8xi1> {
  // CHECK: ascend.Greater %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %0 = ascend.Greater %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: ascend.Greater %{{.*}}, %{{.*}} {name = "half"} : (tensor<4xf16>, tensor<f16>) -> tensor<4xi1>
  %z = ascend.Const dense<0.0> : tensor<f16>
  %1 = ascend.Greater %h, %z {name = "half"} : (tensor<4xf16>, tensor<f16>) -> tensor<4xi1>
  // CHECK: ascend.Greater %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = ascend.Greater %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  func.return %0 : tensor<4x8xi1>
}

// -----

// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[C:.*]]: tensor<i1>, %[[M:.*]]: tensor<4x8xi1>, %[[OLD:.*]]: tensor<4x8xf32>, %[[NEW:.*]]: tensor<4x8xf32>)
func.func @select(%c: tensor<i1>, %m: tensor<4x8xi1>, %old: tensor<4x8xf32>, %new: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[S:.*]] = ascend.Select %[[C]], %[[OLD]], %[[NEW]] : (tensor<i1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = ascend.Select %c, %old, %new : (tensor<i1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.Select %[[M]], %[[S]], %[[NEW]] {caps = #ascend.caps<(i1, f32, f32) -> f32>} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = ascend.Select %m, %0, %new {caps = #ascend.caps<(i1, f32, f32) -> f32>} : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @select_counter
func.func @select_counter(%c: tensor<i1>, %step: tensor<i32>) -> tensor<i32> {
  %one = ascend.Const dense<1> : tensor<i32>
  %next = ascend.Add %step, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
  // CHECK: ascend.Select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
  %0 = ascend.Select %c, %step, %next : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
  func.return %0 : tensor<i32>
}
