// RUN: ascend-opt %s --split-input-file -p ascend-attach-caps | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-attach-caps{soc=ascend910b}' | filecheck %s --check-prefix=B
// RUN: %roundtrip | filecheck %s --check-prefix=RT
// COM: Capabilities default from the built-in library and print in the IR; hand-written ones win.

// CHECK-LABEL: func.func @defaults
// B-LABEL: func.func @defaults
func.func @defaults(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %a: tensor<8x64xf32>, %b: tensor<64x10xf32>) -> tensor<8x10xf32> {
  // CHECK: ascend.Conv2D {{.*}}caps = #ascend.caps<(f16, f16, f16) -> f16>, list = #ascend.list<white>
  // B: ascend.Conv2D {{.*}}caps = #ascend.caps<(f16, f16, f16) -> f16, (bf16, bf16, bf16) -> bf16>, list = #ascend.list<white>
  %0 = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK: ascend.MaxPool {{.*}}caps = #ascend.caps<(f16) -> f16, aicpu (f32) -> f32>, list = #ascend.list<gray>
  %1 = ascend.MaxPool %0 {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  // CHECK: ascend.MatMulV2 {{.*}}caps = #ascend.caps<(f16, f16, f16) -> f16, (f16, f16, f32) -> f32, (f32, f32, f32) -> f32, (i32, i32, i32) -> i32, (i8, i8, i32) -> i32>, list = #ascend.list<white>
  %2 = ascend.MatMulV2 %a, %b : (tensor<8x64xf32>, tensor<64x10xf32>) -> tensor<8x10xf32>
  // CHECK: ascend.Log {{.*}}list = #ascend.list<black>
  %3 = ascend.Log %2 : (tensor<8x10xf32>) -> tensor<8x10xf32>
  func.return %3 : tensor<8x10xf32>
}

// -----

// CHECK-LABEL: func.func @by_hand
// RT-LABEL: func.func @by_hand
func.func @by_hand(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ascend.Relu %{{.*}} {caps = #ascend.caps<(f32) -> f32, aicpu (f16) -> f16>, list = #ascend.list<black>}
  // RT: ascend.Relu %{{.*}} {caps = #ascend.caps<(f32) -> f32, aicpu (f16) -> f16>, list = #ascend.list<black>}
  %0 = ascend.Relu %x {caps = #ascend.caps<(f32) -> f32, aicpu (f16) -> f16>, list = #ascend.list<black>} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: ascend.Exp {{.*}}caps = #ascend.caps<>
  // RT: caps = #ascend.caps<>
  %e = ascend.Exp %x {caps = #ascend.caps<>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
