// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Cube ops: custom syntax survives custom -> generic -> custom unchanged.

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<4x8xf16>, %b: tensor<16x8xf16>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  // CHECK: %[[Y:.*]] = ascend.MatMul %{{.*}}, %{{.*}} {transpose_x2 = true} : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf32>
  %0 = ascend.MatMul %a, %b {transpose_x2 = true} : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf32>
  // CHECK: ascend.MatMulV2 %{{.*}}, %{{.*}}, %{{.*}} {name = "fc", transpose_x2 = true} : (tensor<4x8xf16>, tensor<16x8xf16>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = ascend.MatMulV2 %a, %b, %bias {name = "fc", transpose_x2 = true, transpose_x1 = false} : (tensor<4x8xf16>, tensor<16x8xf16>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
func.func @batch_matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x3x8xf32>) -> tensor<2x4x3xf32> {
  // CHECK: ascend.BatchMatMul %{{.*}}, %{{.*}} {adj_x2 = true} : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x4x3xf32>
  %0 = ascend.BatchMatMul %a, %b {adj_x2 = true} : (tensor<2x4x8xf32>, tensor<2x3x8xf32>) -> tensor<2x4x3xf32>
  func.return %0 : tensor<2x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @convs
func.func @convs(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dw: tensor<3x3x3x2xf32>, %xh: tensor<1x8x8x3xf16>, %wh: tensor<3x3x3x4xf16>) -> tensor<1x4x8x8xf32> {
  // CHECK: ascend.Conv2D %{{.*}}, %{{.*}} {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %0 = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: ascend.Conv2D %{{.*}}, %{{.*}} {strides = array<i64: 1, 2, 2, 1>, data_format = "NHWC"} : (tensor<1x8x8x3xf16>, tensor<3x3x3x4xf16>) -> tensor<1x3x3x4xf16>
  %1 = ascend.Conv2D %xh, %wh {strides = array<i64: 1, 2, 2, 1>, data_format = "NHWC"} : (tensor<1x8x8x3xf16>, tensor<3x3x3x4xf16>) -> tensor<1x3x3x4xf16>
  // CHECK: ascend.DepthwiseConv2D %{{.*}}, %{{.*}} {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<3x3x3x2xf32>) -> tensor<1x6x6x6xf32>
  %2 = ascend.DepthwiseConv2D %x, %dw {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<3x3x3x2xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @conv_backprop
func.func @conv_backprop(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %dy: tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32> {
  // CHECK: ascend.Conv2DBackpropInput %{{.*}}, %{{.*}} {input_size = array<i64: 1, 3, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x3x3x3xf16>, tensor<1x4x6x6xf16>) -> tensor<1x3x8x8xf16>
  %0 = ascend.Conv2DBackpropInput %w, %dy {input_size = array<i64: 1, 3, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x3x3x3xf16>, tensor<1x4x6x6xf16>) -> tensor<1x3x8x8xf16>
  // CHECK: ascend.Conv2DBackpropFilter %{{.*}}, %{{.*}} {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
  %1 = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
  func.return %1 : tensor<4x3x3x3xf32>
}
