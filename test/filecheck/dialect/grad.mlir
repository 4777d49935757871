// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Gradient ops round-trip.

// CHECK-LABEL: func.func @activation_grads
func.func @activation_grads(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<8xf32> {
  // CHECK: ascend.ReluGrad %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = ascend.ReluGrad %dy, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.LeakyReluGrad %{{.*}}, %{{.*}} {negative_slope = 2.000000e-01 : f32}
  %1 = ascend.LeakyReluGrad %dy, %x {negative_slope = 0.2 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.SigmoidGrad
  %2 = ascend.SigmoidGrad %x, %dy : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.TanhGrad
  %3 = ascend.TanhGrad %x, %dy : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.GeluGrad
  %4 = ascend.GeluGrad %dy, %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.SoftmaxGrad
  %5 = ascend.SoftmaxGrad %x, %dy : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ascend.BiasAddGrad %{{.*}} : (tensor<4x8xf32>) -> tensor<8xf32>
  %6 = ascend.BiasAddGrad %5 : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return %6 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @pool_grads
func.func @pool_grads(%x: tensor<1x4x8x8xf16>, %y: tensor<1x4x4x4xf16>) -> tensor<1x4x8x8xf16> {
  // CHECK: ascend.MaxPoolGrad %{{.*}}, %{{.*}}, %{{.*}} {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>}
  %0 = ascend.MaxPoolGrad %x, %y, %y {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>, tensor<1x4x4x4xf16>, tensor<1x4x4x4xf16>) -> tensor<1x4x8x8xf16>
  // CHECK: ascend.AvgPoolGrad %{{.*}} {orig_input_shape = array<i64: 1, 4, 8, 8>, ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>}
  %1 = ascend.AvgPoolGrad %y {orig_input_shape = array<i64: 1, 4, 8, 8>, ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x4x4xf16>) -> tensor<1x4x8x8xf16>
  func.return %1 : tensor<1x4x8x8xf16>
}

// -----

// CHECK-LABEL: func.func @layer_norm_grad
func.func @layer_norm_grad(%x: tensor<4x8xf32>, %s: tensor<4x1xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ascend.LayerNormGrad
  %dx, %dg, %db = ascend.LayerNormGrad %x, %x, %s, %s, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  func.return %dx : tensor<4x8xf32>
}
