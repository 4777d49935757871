// RUN: ascend-opt %s --split-input-file --verify-diagnostics | filecheck %s
// COM: Structural verifier errors name the op and the problem.

func.func @matmul_k(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  %0 = ascend.MatMulV2 %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}
// CHECK: 'ascend.MatMulV2' op contracting dimensions differ: 8 vs 7

// -----

func.func @matmul_dtypes(%a: tensor<4x8xf32>, %b: tensor<8x16xf16>) -> tensor<4x16xf32> {
  %0 = ascend.MatMulV2 %a, %b : (tensor<4x8xf32>, tensor<8x16xf16>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}
// CHECK: 'ascend.MatMulV2' op expects x1, x2 to have the same element type, got x1: f32, x2: f16

// -----

func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  %0 = ascend.Add %a, %b : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
// CHECK: 'ascend.Add' op operand shapes (4, 8) and (3,) do not broadcast

// -----

func.func @relu_shape(%a: tensor<4xf32>) -> tensor<5xf32> {
  %0 = ascend.Relu %a : (tensor<4xf32>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}
// CHECK: 'ascend.Relu' op expects the result shape to equal the operand shape

// -----

func.func @sigmoid_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = ascend.Sigmoid %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
// CHECK: 'ascend.Sigmoid' op expects float tensors for x, y

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf16>, %w: tensor<4x2x3x3xf16>) -> tensor<1x4x6x6xf16> {
  %0 = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x2x3x3xf16>) -> tensor<1x4x6x6xf16>
  func.return %0 : tensor<1x4x6x6xf16>
}
// CHECK: 'ascend.Conv2D' op input channels 3 do not match filter channels 2 x groups 1

// -----

func.func @conv_strides(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16> {
  %0 = ascend.Conv2D %x, %w {strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16>
  func.return %0 : tensor<1x4x6x6xf16>
}
// CHECK: 'ascend.Conv2D' op expects strides, pads and dilations of 4 entries

// -----

func.func @conv_out(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16> {
  %0 = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16>
  func.return %0 : tensor<1x4x8x8xf16>
}
// CHECK: 'ascend.Conv2D' op expects output shape (1, 4, 6, 6), got (1, 4, 8, 8)

// -----

func.func @format(%x: tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16> {
  %0 = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, data_format = "NCDHW"} : (tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16>
  func.return %0 : tensor<1x3x4x4xf16>
}
// CHECK: 'ascend.MaxPool' op data_format must be one of NCHW, NHWC, got 'NCDHW'

// -----

func.func @padding(%x: tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16> {
  %0 = ascend.AvgPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, padding = "FULL"} : (tensor<1x3x8x8xf16>) -> tensor<1x3x4x4xf16>
  func.return %0 : tensor<1x3x4x4xf16>
}
// CHECK: 'ascend.AvgPool' op padding must be one of SAME, VALID, got 'FULL'

// -----

func.func @reduce_axis(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = ascend.ReduceSum %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.ReduceSum' op axis 2 is out of range for rank 2

// -----

func.func @reduce_shape(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = ascend.ReduceMean %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}
// CHECK: 'ascend.ReduceMean' op expects result shape (4,), got (8,)

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = ascend.Transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
// CHECK: 'ascend.Transpose' op perm [0, 0] is not a permutation of 2 dimensions

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  %0 = ascend.Reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}
// CHECK: 'ascend.Reshape' op cannot reshape (2, 3) (6 elements) to (7,) (7 elements)

// -----

func.func @concat(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  %0 = ascend.ConcatV2D %a, %b {concat_dim = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'ascend.ConcatV2D' op operand shapes [(2, 3), (3, 3)] differ outside concat_dim 1

// -----

func.func @bias(%x: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  %0 = ascend.BiasAdd %x, %b : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
// CHECK: 'ascend.BiasAdd' op expects a bias of 8 elements, got 4

// -----

func.func @argmax(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = ascend.ArgMaxV2 %x {dimension = 1 : i64} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.ArgMaxV2' op expects an integer result

// -----

func.func @onehot(%i: tensor<4xf32>, %on: tensor<f32>) -> tensor<4x3xf32> {
  %0 = ascend.OneHot %i, %on, %on {depth = 3 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: 'ascend.OneHot' op expects integer indices

// -----

func.func @status(%s: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.NPUGetFloatStatus %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.NPUGetFloatStatus' op expects the float status buffer tensor<8xf32>

// -----

func.func @cast_dst(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = ascend.Cast %x {dst_type = bf16} : (tensor<4xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}
// CHECK: 'ascend.Cast' op dst_type bf16 differs from the result element type f16

// -----

func.func @adam_scalar(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %0:3 = ascend.ApplyAdamD %w, %g, %g, %g, %g, %g, %g, %g, %g, %g : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0#0 : tensor<4xf32>
}
// CHECK: 'ascend.ApplyAdamD' op expects scalar hyper-parameters, got shape (4,)

// -----

func.func @layernorm(%x: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x8xf32> {
  %y, %m, %v = ascend.LayerNorm %x, %g, %g {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  func.return %y : tensor<4x8xf32>
}
// CHECK: 'ascend.LayerNorm' op expects gamma and beta of shape (8,), got (4,)

// -----

func.func @greater_result(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Greater %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.Greater' op expects a bool (i1) result, got f32

// -----

func.func @greater_dtypes(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xi1> {
  %0 = ascend.Greater %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}
// CHECK: 'ascend.Greater' op expects x1, x2 to have the same element type, got x1: f32, x2: f16

// -----

func.func @greater_broadcast(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xi1> {
  %0 = ascend.Greater %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}
// CHECK: 'ascend.Greater' op operand shapes (4,) and (3,) do not broadcast

// -----

func.func @select_condition_dtype(%c: tensor<f32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Select %c, %a, %a : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.Select' op expects a bool (i1) condition, got f32

// -----

func.func @select_condition_shape(%c: tensor<2xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Select %c, %a, %a : (tensor<2xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.Select' op expects a rank-0 condition or one shaped like x1 (4,), got (2,)

// -----

func.func @select_shapes(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<1xf32>) -> tensor<4xf32> {
  %0 = ascend.Select %c, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.Select' op expects x1, x2 and y of one shape, got (4,), (1,) and (4,)

// -----

func.func @select_dtypes(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  %0 = ascend.Select %c, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'ascend.Select' op expects x1, x2, y to have the same element type, got x1: f32, x2: f16, y: f32

// -----

func.func @pad_count(%a: tensor<2x4xf32>) -> tensor<2x7xf32> {
  %0 = ascend.PadV3D %a {paddings = array<i64: 1, 2>} : (tensor<2x4xf32>) -> tensor<2x7xf32>
  func.return %0 : tensor<2x7xf32>
}
// CHECK: 'ascend.PadV3D' op expects 4 paddings (before and after for each of 2 dimensions), got 2

// -----

func.func @pad_reflect_too_wide(%a: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %0 = ascend.PadV3D %a {paddings = array<i64: 0, 0, 4, 4>, mode = "reflect"} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  func.return %0 : tensor<2x12xf32>
}
// CHECK: 'ascend.PadV3D' op reflect padding (4, 4) of dimension 1 must be smaller than its size 4

// -----

func.func @pad_mode(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = ascend.PadV3D %a {paddings = array<i64: 0, 0, 0, 0>, mode = "wrap"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: 'ascend.PadV3D' op mode must be one of constant, reflect, edge, got 'wrap'

// -----

func.func @resize_channels(%a: tensor<1x2x3x4xf32>) -> tensor<1x3x6x8xf32> {
  %0 = ascend.ResizeD %a : (tensor<1x2x3x4xf32>) -> tensor<1x3x6x8xf32>
  func.return %0 : tensor<1x3x6x8xf32>
}
// CHECK: 'ascend.ResizeD' op resizes the spatial dimensions only: N and C of (1, 2, 3, 4) and (1, 3, 6, 8) differ

// -----

func.func @resize_mode(%a: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %0 = ascend.ResizeD %a {mode = "cubic"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  func.return %0 : tensor<1x2x6x8xf32>
}
// CHECK: 'ascend.ResizeD' op mode must be one of nearest, linear, got 'cubic'

// -----

func.func @instance_norm_gamma(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y, %m, %v = ascend.InstanceNorm %x, %g, %g : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: 'ascend.InstanceNorm' op expects gamma and beta of shape (3,), got (4,)

// -----

func.func @cumsum_axis(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = ascend.CumsumD %x {axis = 2 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}
// CHECK: 'ascend.CumsumD' op axis 2 is out of range for rank 2

// -----

func.func @scatter_updates(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> tensor<4x3xf32> {
  %y = ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
// CHECK: 'ascend.ScatterNdUpdate' op expects updates of shape (2, 3), got (2, 4)

// -----

func.func @segment_sum_ids(%x: tensor<2x8x16xf32>, %i: tensor<2x7xi64>) -> tensor<100x16xf32> {
  %y = ascend.UnsortedSegmentSumD %x, %i {num_segments = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x7xi64>) -> tensor<100x16xf32>
  func.return %y : tensor<100x16xf32>
}
// CHECK: 'ascend.UnsortedSegmentSumD' op expects segment ids shaped as a prefix of x's shape (2, 8, 16), got (2, 7)
