// Weights as dense_resource blobs: printing and parsing are bit-exact through ascend-opt and plain
// xdsl-opt, ascend-store-low-weights narrows a Const used only through f16 casts, and an ONNX
// model imports with its initializers as blobs.
// RUN: ascend-opt %s | ascend-opt | filecheck %s
// RUN: xdsl-opt %s | xdsl-opt | filecheck %s
// RUN: ascend-opt %s -p ascend-store-low-weights | ascend-opt | filecheck %s --check-prefix=LOW
// RUN: ascend-opt %S/Inputs/gemm.onnx --input_shape=x:2,16 | ascend-opt | filecheck %s --check-prefix=ONNX
// RUN: ascend-opt -f onnx %S/Inputs/gemm.onnx | filecheck %s --check-prefix=ONNX

func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
  %w = ascend.Const dense_resource<w> : tensor<4xf32> {name = "w"}
  %h = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
  %y = ascend.Add %x, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000003f000040c0"
    }
  }
#-}

// CHECK:      %w = ascend.Const dense_resource<w> : tensor<4xf32> {name = "w"}
// CHECK:      dialect_resources
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     w: "0x040000000000803f000000400000003f000040c0"

// LOW:      ascend.Const dense_resource<w_f16> : tensor<4xf16> {name = "w"}
// LOW-NOT:  ascend.Cast
// LOW:      ascend.Add
// LOW:      w_f16: "0x02000000003c00400038
// LOW-SAME: 00c2"

// ONNX:      func.func @main(%x: tensor<2x16xf32> {onnx.name = "x"}) -> (tensor<2x4xf32> {onnx.name = "y"})
// ONNX-NEXT:   ascend.Const dense_resource<w> : tensor<4x16xf32> {name = "w"}
// ONNX-NEXT:   ascend.MatMulV2 %x, %{{.*}} {name = "fc", transpose_x2 = true}
// ONNX:        w: "0x04000000000000000000803c0000003d0000403d
