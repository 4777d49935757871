// RUN: ascend-opt %s --split-input-file | filecheck %s
// RUN: %roundtrip | filecheck %s
// COM: Elementwise ops (broadcasting binary, unary, BiasAdd) round-trip.

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[ADD:.*]] = ascend.Add %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[SUB:.*]] = ascend.Sub %[[ADD]], %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: ascend.Mul
  // CHECK-NEXT: ascend.RealDiv
  // CHECK-NEXT: ascend.Maximum
  // CHECK-NEXT: ascend.Minimum
  // CHECK-NEXT: ascend.Pow
  %0 = ascend.Add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = ascend.Sub %0, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = ascend.Mul %1, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = ascend.RealDiv %2, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %4 = ascend.Maximum %3, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = ascend.Minimum %4, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = ascend.Pow %5, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %6 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<16xf16>) -> tensor<16xf16> {
  // CHECK: ascend.Neg
  // CHECK: ascend.Relu
  // CHECK: ascend.LeakyRelu %{{.*}} {negative_slope = 1.000000e-01 : f32}
  // CHECK: ascend.Gelu
  // CHECK: ascend.Sigmoid
  // CHECK: ascend.Tanh
  // CHECK: ascend.Exp
  // CHECK: ascend.Log
  // CHECK: ascend.Sqrt
  // CHECK: ascend.Rsqrt
  // CHECK: ascend.Square
  // CHECK: %[[F:.*]] = ascend.Floor %{{.*}} : (tensor<16xf16>) -> tensor<16xf16>
  %0 = ascend.Neg %x : (tensor<16xf16>) -> tensor<16xf16>
  %1 = ascend.Relu %0 : (tensor<16xf16>) -> tensor<16xf16>
  %2 = ascend.LeakyRelu %1 {negative_slope = 0.1 : f32} : (tensor<16xf16>) -> tensor<16xf16>
  %3 = ascend.Gelu %2 : (tensor<16xf16>) -> tensor<16xf16>
  %4 = ascend.Sigmoid %3 : (tensor<16xf16>) -> tensor<16xf16>
  %5 = ascend.Tanh %4 : (tensor<16xf16>) -> tensor<16xf16>
  %6 = ascend.Exp %5 : (tensor<16xf16>) -> tensor<16xf16>
  %7 = ascend.Log %6 : (tensor<16xf16>) -> tensor<16xf16>
  %8 = ascend.Sqrt %7 : (tensor<16xf16>) -> tensor<16xf16>
  %9 = ascend.Rsqrt %8 : (tensor<16xf16>) -> tensor<16xf16>
  %10 = ascend.Square %9 : (tensor<16xf16>) -> tensor<16xf16>
  %11 = ascend.Floor %10 : (tensor<16xf16>) -> tensor<16xf16>
  // CHECK: func.return %[[F]]
  func.return %11 : tensor<16xf16>
}

// -----

// CHECK-LABEL: func.func @bias_add
func.func @bias_add(%x: tensor<2x4x3x3xbf16>, %b: tensor<4xbf16>, %y: tensor<2x3x3x4xf32>, %c: tensor<4xf32>) -> tensor<2x4x3x3xbf16> {
  // CHECK: ascend.BiasAdd %{{.*}}, %{{.*}} : (tensor<2x4x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x3x3xbf16>
  %0 = ascend.BiasAdd %x, %b : (tensor<2x4x3x3xbf16>, tensor<4xbf16>) -> tensor<2x4x3x3xbf16>
  // CHECK: ascend.BiasAdd %{{.*}}, %{{.*}} {data_format = "NHWC"}
  %1 = ascend.BiasAdd %y, %c {data_format = "NHWC"} : (tensor<2x3x3x4xf32>, tensor<4xf32>) -> tensor<2x3x3x4xf32>
  func.return %0 : tensor<2x4x3x3xbf16>
}
