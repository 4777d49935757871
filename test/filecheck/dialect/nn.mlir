// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Softmax, reductions, pooling and normalisation ops round-trip.

// CHECK-LABEL: func.func @softmax_reduce
func.func @softmax_reduce(%x: tensor<8x10xf32>) -> tensor<10xf32> {
  // CHECK: ascend.SoftmaxV2 %{{.*}} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %0 = ascend.SoftmaxV2 %x : (tensor<8x10xf32>) -> tensor<8x10xf32>
  // CHECK: ascend.LogSoftmaxV2 %{{.*}} {axes = array<i64: 0>}
  %1 = ascend.LogSoftmaxV2 %0 {axes = array<i64: 0>} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  // CHECK: ascend.ReduceSum %{{.*}} {axes = array<i64: 0>} : (tensor<8x10xf32>) -> tensor<10xf32>
  %2 = ascend.ReduceSum %1 {axes = array<i64: 0>} : (tensor<8x10xf32>) -> tensor<10xf32>
  // CHECK: ascend.ReduceMean %{{.*}} {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
  %3 = ascend.ReduceMean %1 {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
  // CHECK: ascend.ReduceMax %{{.*}} : (tensor<8x10xf32>) -> tensor<f32>
  %4 = ascend.ReduceMax %1 : (tensor<8x10xf32>) -> tensor<f32>
  func.return %2 : tensor<10xf32>
}

// -----

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16> {
  // CHECK: ascend.MaxPool %{{.*}} {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  %0 = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  // CHECK: ascend.AvgPool %{{.*}} {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  %1 = ascend.AvgPool %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  func.return %0 : tensor<1x4x4x4xf16>
}

// -----

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<2x4x3x3xf16>, %c: tensor<4xf32>, %l: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<2x4x3x3xf16> {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ascend.BatchNorm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>)
  %y, %m, %v = ascend.BatchNorm %x, %c, %c, %c, %c {epsilon = 1.0e-3 : f32} : (tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: ascend.BNTrainingReduce
  %s, %ss = ascend.BNTrainingReduce %x : (tensor<2x4x3x3xf16>) -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: ascend.BNTrainingUpdate {{.*}} {factor = 2.000000e-01 : f32}
  %u:5 = ascend.BNTrainingUpdate %x, %s, %ss, %c, %c, %c, %c {factor = 0.2 : f32} : (tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: ascend.BNTrainingUpdateGrad
  %ds, %do = ascend.BNTrainingUpdateGrad %x, %x, %c, %c : (tensor<2x4x3x3xf16>, tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: ascend.BNTrainingReduceGrad
  %dx = ascend.BNTrainingReduceGrad %x, %x, %ds, %do, %c, %c, %c : (tensor<2x4x3x3xf16>, tensor<2x4x3x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf16>
  // CHECK: ascend.LayerNorm %{{.*}}, %{{.*}}, %{{.*}} {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %ly, %lm, %lv = ascend.LayerNorm %l, %g, %g {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  func.return %y : tensor<2x4x3x3xf16>
}

// -----

// CHECK-LABEL: func.func @reduce_min_prod
func.func @reduce_min_prod(%x: tensor<8x10xf32>) -> tensor<8x1xf32> {
  // CHECK: ascend.ReduceMin %{{.*}} {axes = array<i64: -1>} : (tensor<8x10xf32>) -> tensor<8xf32>
  %0 = ascend.ReduceMin %x {axes = array<i64: -1>} : (tensor<8x10xf32>) -> tensor<8xf32>
  // CHECK: ascend.ReduceProd %{{.*}} {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
  %1 = ascend.ReduceProd %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
  func.return %1 : tensor<8x1xf32>
}

// -----

// CHECK-LABEL: func.func @instance_norm
func.func @instance_norm(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4xf32> {
  // CHECK: ascend.InstanceNorm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f32} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  %y, %m, %v = ascend.InstanceNorm %x, %g, %b {epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  func.return %y : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @cumsum
func.func @cumsum(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // CHECK: ascend.CumsumD %{{.*}} {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %y = ascend.CumsumD %x {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
