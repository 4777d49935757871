// RUN: ascend-opt %s --split-input-file -p convert-ascend-to-linalg | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p convert-ascend-to-linalg | filecheck %s
// COM: Each ascend op lowers to upstream linalg/arith/math/tensor with its dtypes kept: cube ops widen
// COM: f16 operands and accumulate in f32 `outs`, then round once; vector ops compute f16 in f32.
// COM: Errors: test/filecheck/convert-ascend-to-linalg-invalid.mlir. Numerics: test/lowering/.

// CHECK-LABEL: func.func @matmul_f16
// CHECK:       %[[ACC:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK:       %[[ZERO:.*]] = linalg.generic {{.*}} outs(%[[ACC]] : tensor<4x3xf32>)
// CHECK:       linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf16>, tensor<8x3xf16>) outs(%[[ZERO]] : tensor<4x3xf32>)
// CHECK-NEXT:  ^{{.*}}(%[[X:.*]]: f16, %[[W:.*]]: f16, %[[C:.*]]: f32):
// CHECK-NEXT:    %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:    %[[WW:.*]] = arith.extf %[[W]] : f16 to f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[XW]], %[[WW]] : f32
// CHECK-NEXT:    arith.addf %[[C]], %[[P]] : f32
// CHECK:       arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT:   ascend.
func.func @matmul_f16(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>) -> tensor<4x3xf16> {
  %y = ascend.MatMulV2 %a, %b : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  func.return %y : tensor<4x3xf16>
}

// -----

// COM: transpose_x2 reads the second operand through (n, k); an f32 output is not rounded again.
// CHECK-LABEL: func.func @matmul_transposed_f32_out
// CHECK:       affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-NOT:   arith.truncf
// CHECK:       func.return
func.func @matmul_transposed_f32_out(%a: tensor<4x8xf16>, %b: tensor<3x8xf16>) -> tensor<4x3xf32> {
  %y = ascend.MatMulV2 %a, %b {transpose_x2 = true} : (tensor<4x8xf16>, tensor<3x8xf16>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

// COM: Padding is a tensor.pad; a one-group NCHW float convolution is linalg.conv_2d_nchw_fchw on operands
// COM: widened to f32 (IREE's im2col and data tiling apply to the named op), rounded once.
// CHECK-LABEL: func.func @conv2d
// CHECK:       tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:       tensor.yield %{{.*}} : f16
// CHECK-NEXT:  } : tensor<1x3x8x8xf16> to tensor<1x3x10x10xf16>
// CHECK:       arith.extf %{{.*}} : f16 to f32
// CHECK:       arith.extf %{{.*}} : f16 to f32
// CHECK:       linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK:       arith.truncf
func.func @conv2d(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x4x4xf16> {
  %y = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x4x4xf16>
  func.return %y : tensor<1x4x4x4xf16>
}

// -----

// COM: NHWC, one group: a 7-loop generic contraction (n, f, oh, ow, c, kh, kw) with no unit group loop.
// CHECK-LABEL: func.func @conv2d_nhwc
// CHECK:       affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d2 + d5), (d3 + d6), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d5, d6, d4, d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d3, d1)>
// CHECK-SAME:  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-NOT:   tensor.collapse_shape
// CHECK:       func.return
func.func @conv2d_nhwc(%x: tensor<1x4x4x3xf32>, %w: tensor<2x2x3x5xf32>) -> tensor<1x3x3x5xf32> {
  %y = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, data_format = "NHWC"} : (tensor<1x4x4x3xf32>, tensor<2x2x3x5xf32>) -> tensor<1x3x3x5xf32>
  func.return %y : tensor<1x3x3x5xf32>
}

// -----

// COM: Two groups: loops (n, g, f, oh, ow, c, kh, kw), group g reads channels 2g + c, its filters 3g + f; the (N, G, F/G, OH, OW)
// COM: accumulator collapses to NCHW.
// CHECK-LABEL: func.func @conv2d_grouped
// CHECK:       affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, ((d1 * 2) + d5), (d3 + d6), (d4 + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (((d1 * 3) + d2), d5, d6, d7)>
// CHECK-SAME:  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK:       tensor.collapse_shape %{{.*}} {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] : tensor<1x2x3x4x4xf32> into tensor<1x6x4x4xf32>
func.func @conv2d_grouped(%x: tensor<1x4x4x4xf32>, %w: tensor<6x2x1x1xf32>) -> tensor<1x6x4x4xf32> {
  %y = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 2 : i64} : (tensor<1x4x4x4xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x4x4xf32>
  func.return %y : tensor<1x6x4x4xf32>
}

// -----

// COM: An elementwise f16 op widens, computes in f32 and rounds once; the bias is read on the channel.
// CHECK-LABEL: func.func @bias_relu_f16
// CHECK:       affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK:       arith.addf {{.*}} : f32
// CHECK:       arith.truncf
// CHECK:       arith.maximumf {{.*}} : f32
func.func @bias_relu_f16(%x: tensor<2x4x3x3xf16>, %b: tensor<4xf16>) -> tensor<2x4x3x3xf16> {
  %0 = ascend.BiasAdd %x, %b : (tensor<2x4x3x3xf16>, tensor<4xf16>) -> tensor<2x4x3x3xf16>
  %1 = ascend.Relu %0 : (tensor<2x4x3x3xf16>) -> tensor<2x4x3x3xf16>
  func.return %1 : tensor<2x4x3x3xf16>
}

// -----

// COM: Broadcasting reads a size-1 dimension at 0.
// CHECK-LABEL: func.func @add_broadcast
// CHECK:       indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:       arith.addf
func.func @add_broadcast(%x: tensor<3x4xf32>, %y: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %0 = ascend.Add %x, %y : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @softmax
// CHECK:       arith.maximumf
// CHECK:       arith.subf
// CHECK:       math.exp
// CHECK:       arith.addf
// CHECK:       arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = ascend.SoftmaxV2 %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_mean_keep
// CHECK:       iterator_types = ["parallel", "reduction"]
// CHECK:       arith.divf
// CHECK:       -> tensor<3x1xf32>
func.func @reduce_mean_keep(%x: tensor<3x4xf32>) -> tensor<3x1xf32> {
  %0 = ascend.ReduceMean %x {axes = array<i64: 1>, keep_dims = true} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_transpose
// CHECK:       tensor.collapse_shape %x {{\[}}[0 : i64, 1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:       tensor.expand_shape
// CHECK:       affine_map<(d0, d1) -> (d1, d0)>
func.func @reshape_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = ascend.Reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = ascend.Transpose %0 {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  func.return %1 : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK:       tensor.insert_slice %x into %{{.*}}[0, 0] [2, 3]
// CHECK:       tensor.insert_slice %y into %{{.*}}[0, 3] [2, 1]
func.func @concat(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %0 = ascend.ConcatV2D %x, %y {concat_dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK:       arith.index_cast
// CHECK:       tensor.extract %x
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<4xi32>) -> tensor<4x3xf32> {
  %0 = ascend.GatherV2D %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

// COM: Casts are one conversion each; float -> int truncates (fptosi).
// CHECK-LABEL: func.func @casts
// CHECK:       arith.truncf %{{.*}} : f32 to f16
// CHECK:       arith.extf %{{.*}} : f16 to f32
// CHECK:       arith.fptosi %{{.*}} : f32 to i32
func.func @casts(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = ascend.Cast %x : (tensor<4xf32>) -> tensor<4xf16>
  %1 = ascend.Cast %0 : (tensor<4xf16>) -> tensor<4xf32>
  %2 = ascend.Cast %1 : (tensor<4xf32>) -> tensor<4xi32>
  func.return %1, %2 : tensor<4xf32>, tensor<4xi32>
}

// -----

// COM: A dense_resource weight stays a resource.
// CHECK-LABEL: func.func @const_resource
// CHECK:       arith.constant dense_resource<[[W:w[_0-9]*]]> : tensor<2xf32>
// CHECK:       dialect_resources
// CHECK:       [[W]]: "0x040000000000803f00000040"
func.func @const_resource(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = ascend.Const dense_resource<w> : tensor<2xf32> {name = "w"}
  %y = ascend.Mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f00000040"
    }
  }
#-}

// -----

// COM: A scalar blob becomes a literal (iree-compile 3.13 crashes on a 0-d float16 blob); -inf as its bits.
// CHECK-LABEL: func.func @const_scalar_resource
// CHECK:       arith.constant dense<0xfc00> : tensor<f16>
func.func @const_scalar_resource(%x: tensor<4xf16>) -> tensor<4xf16> {
  %m = ascend.Const dense_resource<m> : tensor<f16> {name = "m"}
  %y = ascend.Maximum %x, %m : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

{-#
  dialect_resources: {
    builtin: {
      m: "0x0200000000fc"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @select_compare
// CHECK:       arith.cmpf ogt
// CHECK:       arith.select
func.func @select_compare(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c = ascend.Greater %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %0 = ascend.SelectV2 %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool
// CHECK:       tensor.empty() : tensor<2x2xf32>
// CHECK:       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:       arith.maximumf
func.func @max_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0 = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

// COM: The float status is an explicit flag: the OR of "any inf/NaN" over the float results since the
// COM: last clear (here the Cast's), read into element 0 of the status buffer.
// CHECK-LABEL: func.func @float_status
// CHECK:       arith.truncf
// CHECK:       arith.cmpf uno
// CHECK:       math.absf
// CHECK:       arith.cmpf oeq
// CHECK:       arith.ori
// CHECK:       linalg.index 0
// CHECK:       arith.andi
// CHECK:       arith.select
// CHECK-NOT:   ascend.
func.func @float_status(%x: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf16>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %h = ascend.Cast %x : (tensor<4xf32>) -> tensor<4xf16>
  %g = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  func.return %g, %h : tensor<8xf32>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @relu_grad_sgd
// CHECK:       arith.cmpf ogt
// CHECK:       arith.select
// CHECK:       affine_map<(d0) -> ()>
// CHECK:       arith.subf
func.func @relu_grad_sgd(%g: tensor<4xf32>, %f: tensor<4xf32>, %w: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  %d = ascend.ReluGrad %g, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w1 = ascend.ApplyGradientDescent %w, %lr, %d : (tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %w1 : tensor<4xf32>
}
