// RUN: ascend-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// COM: Malformed capability attributes are parse errors that say what was expected.

func.func @bad_dtype(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x {caps = #ascend.caps<(index) -> f32>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: expected a tensor element type (f16, bf16, f32, i32, ...)

// -----

func.func @bad_arrow(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x {caps = #ascend.caps<(f32) f32>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: Expected '->'

// -----

func.func @bad_list(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x {list = #ascend.list<purple>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: Expected `white`, `black`, or `gray`
