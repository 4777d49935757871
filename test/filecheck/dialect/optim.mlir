// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Optimizers and float-status ops round-trip; status ops are not Pure (never erased).

// CHECK-LABEL: func.func @optimizers
func.func @optimizers(%w: tensor<4x4xf32>, %g: tensor<4x4xf32>, %lr: tensor<f32>) -> tensor<4x4xf32> {
  // CHECK: ascend.ApplyGradientDescent %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = ascend.ApplyGradientDescent %w, %lr, %g : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: ascend.ApplyMomentumD {{.*}} {use_nesterov = true}
  %1, %2 = ascend.ApplyMomentumD %0, %g, %lr, %g, %lr {use_nesterov = true} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>, tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ascend.ApplyAdamD
  %3:3 = ascend.ApplyAdamD %1, %g, %g, %lr, %lr, %lr, %lr, %lr, %lr, %g : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
  func.return %3#0 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @float_status
func.func @float_status() -> tensor<8xf32> {
  // CHECK: %[[S:.*]] = ascend.NPUAllocFloatStatus : tensor<8xf32>
  // CHECK: ascend.NPUClearFloatStatus %[[S]] : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: ascend.NPUGetFloatStatus %[[S]] : (tensor<8xf32>) -> tensor<8xf32>
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %g = ascend.NPUGetFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  func.return %g : tensor<8xf32>
}
