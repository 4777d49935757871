"""Verifier errors: IR the interpreter cannot run is refused at parse time with one line.

Each case is one op in a function; the error must name the op and what is wrong (windows larger than their padded input, AvgPoolGrad's window, OneHot's on/off values,
LayerNormGrad's statistics, empty reductions, caps of the wrong arity), and the new CNN ops'
structural checks.
"""

from __future__ import annotations

import pytest

from ascend_mp.errors import AscendError
from ascend_mp.ir import parse_module


def one_op(args: str, op: str) -> str:
    """A function holding `op` (bound to %0, or to %0:3 for LayerNormGrad's and InstanceNorm's three results)."""
    bind = "%0:3" if op.startswith(("ascend.LayerNormGrad ", "ascend.InstanceNorm ")) else "%0"
    return f"func.func @f({args}) {{\n  {bind} = {op}\n  func.return\n}}"


F = "tensor<1x1x2x2xf32>"
X = "tensor<2x4xf32>"
I4 = "tensor<1x2x3x4xf32>"
IN = "(tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)"
CASES: dict[str, tuple[str, str, str]] = {
    # -- windows larger than the (padded) input
    "max_pool_window": (
        f"%x: {F}",
        f"ascend.MaxPool %x {{ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>}} : ({F}) -> tensor<1x1x1x1xf32>",
        "'ascend.MaxPool' op window 3x3 is larger than the VALID padded input 2x2",
    ),
    "avg_pool_window_dynamic_result": (
        f"%x: {F}",
        f"ascend.AvgPool %x {{ksize = array<i64: 1, 1, 3, 1>, strides = array<i64: 1, 1, 1, 1>}} : ({F}) -> tensor<1x1x?x2xf32>",
        "'ascend.AvgPool' op window 3x1 is larger than the VALID padded input 2x2",
    ),
    "max_pool_over_channels": (
        "%x: tensor<1x4x4x4xf32>",
        "ascend.MaxPool %x {ksize = array<i64: 1, 2, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>",
        "'ascend.MaxPool' op pools only over H and W",
    ),
    "conv_window": (
        "%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>",
        "ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>",
        "'ascend.Conv2D' op filter window 3 (dilated) is larger than the padded input 2",
    ),
    "conv_dilated_window": (
        "%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>",
        "ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1, 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>",
        "'ascend.Conv2D' op filter window 5 (dilated) is larger than the padded input 4",
    ),
    "conv_groups_output_channels": (
        "%x: tensor<1x4x5x5xf32>, %w: tensor<5x2x3x3xf32>",
        "ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x3x3xf32>",
        "'ascend.Conv2D' op output channels 5 are not a multiple of groups 2",
    ),
    "conv_bias_shape": (
        "%x: tensor<1x4x5x5xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<4xf32>",
        "ascend.Conv2D %x, %w, %b {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>, tensor<4xf32>) -> tensor<1x6x3x3xf32>",
        "'ascend.Conv2D' op expects a bias of shape (6,), got (4,)",
    ),
    "depthwise_bias_shape": (
        "%x: tensor<1x3x5x5xf32>, %w: tensor<3x3x3x2xf32>, %b: tensor<3xf32>",
        "ascend.DepthwiseConv2D %x, %w, %b {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>) -> tensor<1x6x3x3xf32>",
        "'ascend.DepthwiseConv2D' op expects a bias of shape (6,), got (3,)",
    ),
    "concat_mixed_operand_dtypes": (
        "%a: tensor<2x3xf16>, %b: tensor<2x3xf32>",
        "ascend.ConcatV2D %a, %b {concat_dim = 1 : i64} : (tensor<2x3xf16>, tensor<2x3xf32>) -> tensor<2x6xf32>",
        "'ascend.ConcatV2D' op expects input_values, output_data to have the same element type, got input_values#0: f16, input_values#1: f32",
    ),
    "conv_backprop_input_dynamic_size": (
        "%w: tensor<4x3x3x3xf32>, %dy: tensor<1x4x6x6xf32>",
        "ascend.Conv2DBackpropInput %w, %dy {input_size = array<i64: 1, 3, -1, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x3x3x3xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>",
        "'ascend.Conv2DBackpropInput' op expects a static input_size, got [1, 3, -1, 8]",
    ),
    "conv_backprop_filter_dynamic_size": (
        "%x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>",
        "ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 3, -1, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>",
        "'ascend.Conv2DBackpropFilter' op expects a static filter_size, got [4, 3, -1, 3]",
    ),
    "depthwise_window": (
        "%x: tensor<1x3x2x2xf32>, %w: tensor<3x3x3x1xf32>",
        "ascend.DepthwiseConv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x2x2xf32>, tensor<3x3x3x1xf32>) -> tensor<1x3x1x1xf32>",
        "'ascend.DepthwiseConv2D' op filter window 3 (dilated) is larger than the padded input 2",
    ),
    "conv_backprop_input_window": (
        "%w: tensor<4x3x3x3xf32>, %dy: tensor<1x4x1x1xf32>",
        "ascend.Conv2DBackpropInput %w, %dy {input_size = array<i64: 1, 3, 2, 2>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x3x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x3x2x2xf32>",
        "'ascend.Conv2DBackpropInput' op filter window 3 (dilated) is larger than the padded input 2",
    ),
    "avg_pool_grad_window": (
        "%g: tensor<1x1x1x1xf32>",
        "ascend.AvgPoolGrad %g {orig_input_shape = array<i64: 1, 1, 2, 2>, ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>",
        "'ascend.AvgPoolGrad' op window 3x3 is larger than the VALID padded input 2x2",
    ),
    "avg_pool_grad_dynamic_orig": (
        "%g: tensor<1x1x1x1xf32>",
        "ascend.AvgPoolGrad %g {orig_input_shape = array<i64: 1, 1, -1, 2>, ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>",
        "'ascend.AvgPoolGrad' op expects a static orig_input_shape, got [1, 1, -1, 2]",
    ),
    "max_pool_v3_window": (
        f"%x: {F}",
        f"ascend.MaxPoolV3 %x {{ksize = array<i64: 1, 1, 4, 4>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 0, 1, 0>}} : ({F}) -> tensor<1x1x1x1xf32>",
        "'ascend.MaxPoolV3' op window 4x4 is larger than the padded input (dimension 2: 2 + pads 1, 0)",
    ),
    # -- OneHot, LayerNormGrad, empty reductions
    "one_hot_vector_on_value": (
        "%i: tensor<8xi32>, %on: tensor<2xf32>, %off: tensor<f32>",
        "ascend.OneHot %i, %on, %off {depth = 10 : i64} : (tensor<8xi32>, tensor<2xf32>, tensor<f32>) -> tensor<8x10xf32>",
        "'ascend.OneHot' op expects a scalar on_value (one element), got shape (2,)",
    ),
    "one_hot_matrix_off_value": (
        "%i: tensor<8xi32>, %on: tensor<1xf32>, %off: tensor<2x2xf32>",
        "ascend.OneHot %i, %on, %off {depth = 10 : i64} : (tensor<8xi32>, tensor<1xf32>, tensor<2x2xf32>) -> tensor<8x10xf32>",
        "'ascend.OneHot' op expects a scalar off_value (one element), got shape (2, 2)",
    ),
    "layer_norm_grad_stats_rank": (
        "%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %v: tensor<4xf32>, %m: tensor<4xf32>, %g: tensor<8xf32>",
        "ascend.LayerNormGrad %dy, %x, %v, %m, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)",
        "'ascend.LayerNormGrad' op expects mean and variance shaped like x (4, 8) with the normalised trailing dimensions 1, got (4,)",
    ),
    "layer_norm_grad_stats_not_reduced": (
        "%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %v: tensor<4x8xf32>, %m: tensor<4x8xf32>, %g: tensor<8xf32>",
        "ascend.LayerNormGrad %dy, %x, %v, %m, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)",
        "'ascend.LayerNormGrad' op expects mean and variance shaped like x (4, 8) with the normalised trailing dimensions 1, got (4, 8)",
    ),
    "layer_norm_grad_mean_differs": (
        "%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %v: tensor<4x1xf32>, %m: tensor<3x1xf32>, %g: tensor<8xf32>",
        "ascend.LayerNormGrad %dy, %x, %v, %m, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<3x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)",
        "'ascend.LayerNormGrad' op expects mean and variance of one shape, got (3, 1) and (4, 1)",
    ),
    "layer_norm_grad_gamma": (
        "%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %v: tensor<4x1xf32>, %m: tensor<4x1xf32>, %g: tensor<5xf32>",
        "ascend.LayerNormGrad %dy, %x, %v, %m, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<5xf32>) -> (tensor<4x8xf32>, tensor<5xf32>, tensor<5xf32>)",
        "'ascend.LayerNormGrad' op expects gamma shaped like trailing dimensions of x (4, 8), got (5,)",
    ),
    "reduce_max_empty_axis": (
        "%x: tensor<3x0xf32>",
        "ascend.ReduceMax %x {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>",
        "'ascend.ReduceMax' op reduces over the empty axis 1 of shape (3, 0)",
    ),
    "reduce_max_all_of_empty": (
        "%x: tensor<0x4xf32>",
        "ascend.ReduceMax %x : (tensor<0x4xf32>) -> tensor<f32>",
        "'ascend.ReduceMax' op reduces over the empty axis 0 of shape (0, 4)",
    ),
    "argmax_empty_axis": (
        "%x: tensor<3x0xf32>",
        "ascend.ArgMaxV2 %x : (tensor<3x0xf32>) -> tensor<3xi32>",
        "'ascend.ArgMaxV2' op dimension 1 of shape (3, 0) is empty",
    ),
    # -- caps arity
    "caps_too_few_inputs": (
        "%a: tensor<4xf32>, %b: tensor<4xf32>",
        "ascend.Add %a, %b {caps = #ascend.caps<(f32) -> f32>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'ascend.Add' op caps kernel '(f32) -> f32' has 1 input dtypes, expected 2 (one per operand definition: x1, x2)",
    ),
    "caps_too_many_outputs": (
        "%a: tensor<4xf32>",
        "ascend.Relu %a {caps = #ascend.caps<(f16) -> f16, (f32) -> (f32, f32)>} : (tensor<4xf32>) -> tensor<4xf32>",
        "'ascend.Relu' op caps kernel '(f32) -> (f32, f32)' has 2 output dtypes, expected 1",
    ),
    # -- the CNN ops' own checks
    "max_pool_v3_pads_not_smaller_than_window": (
        "%x: tensor<1x1x4x4xf32>",
        "ascend.MaxPoolV3 %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x5x3xf32>",
        "'ascend.MaxPoolV3' op pads [2, 0, 0, 0] must be smaller than the window 2x2",
    ),
    "avg_pool_v2_negative_pads": (
        "%x: tensor<1x1x4x4xf32>",
        "ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: -1, 0, 0, 0>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x3xf32>",
        "'ascend.AvgPoolV2' op expects pads of 4 non-negative entries [top, bottom, left, right], got [-1, 0, 0, 0]",
    ),
    "avg_pool_v2_padding_mode": (
        "%x: tensor<1x1x4x4xf32>",
        'ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>, padding_mode = "FULL"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>',
        "'ascend.AvgPoolV2' op padding_mode must be one of CALCULATED, SAME, VALID, got 'FULL'",
    ),
    "avg_pool_v2_result_shape_ceil": (
        "%x: tensor<1x1x5x5xf32>",
        "ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>",
        "'ascend.AvgPoolV2' op expects result shape (1, 1, 3, 3), got (1, 1, 2, 2)",
    ),
    "max_pool_v3_over_channels": (
        "%x: tensor<1x4x4x4xf32>",
        "ascend.MaxPoolV3 %x {ksize = array<i64: 1, 2, 2, 2>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x3x3xf32>",
        "'ascend.MaxPoolV3' op pools only over H and W",
    ),
    "max_pool_v3_rank": (
        "%x: tensor<4x4x4xf32>",
        "ascend.MaxPoolV3 %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x4x4xf32>) -> tensor<4x3x3xf32>",
        "'ascend.MaxPoolV3' op expects a rank-4 input, got rank 3",
    ),
    "bn_infer_stats": (
        "%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %v: tensor<3xf32>",
        "ascend.BNInfer %x, %s, %s, %s, %v : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4x3x3xf32>",
        "'ascend.BNInfer' op expects per-channel tensors of shape (4,), got (3,)",
    ),
    "bn_infer_rank": (
        "%x: tensor<4xf32>, %s: tensor<4xf32>",
        "ascend.BNInfer %x, %s, %s, %s, %s : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'ascend.BNInfer' op expects an input of rank >= 2 (channels on axis 1), got rank 1",
    ),
    "bn_infer_dtype": (
        "%x: tensor<2x4xf16>, %s: tensor<4xf32>",
        "ascend.BNInfer %x, %s, %s, %s, %s : (tensor<2x4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>",
        "'ascend.BNInfer' op expects x, y to have the same element type, got x: f16, y: f32",
    ),
    "clip_bound_shape": (
        "%x: tensor<2x4xf32>, %lo: tensor<3xf32>, %hi: tensor<f32>",
        "ascend.ClipByValue %x, %lo, %hi : (tensor<2x4xf32>, tensor<3xf32>, tensor<f32>) -> tensor<2x4xf32>",
        "'ascend.ClipByValue' op bound shape (3,) does not broadcast to the input shape (2, 4)",
    ),
    "clip_bound_larger_than_input": (
        "%x: tensor<4xf32>, %lo: tensor<2x4xf32>, %hi: tensor<f32>",
        "ascend.ClipByValue %x, %lo, %hi : (tensor<4xf32>, tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>",
        "'ascend.ClipByValue' op bound shape (2, 4) does not broadcast to the input shape (4,)",
    ),
    "clip_dtype": (
        "%x: tensor<4xf32>, %lo: tensor<f16>, %hi: tensor<f32>",
        "ascend.ClipByValue %x, %lo, %hi : (tensor<4xf32>, tensor<f16>, tensor<f32>) -> tensor<4xf32>",
        "'ascend.ClipByValue' op expects x, clip_value_min, clip_value_max, y to have the same element type",
    ),
    "relu6_shape": (
        "%x: tensor<4xf32>",
        "ascend.Relu6 %x : (tensor<4xf32>) -> tensor<5xf32>",
        "'ascend.Relu6' op expects the result shape to equal the operand shape",
    ),
    "hard_sigmoid_dtype": (
        "%x: tensor<4xf32>",
        "ascend.HardSigmoid %x : (tensor<4xf32>) -> tensor<4xf16>",
        "'ascend.HardSigmoid' op expects input_x, output_y to have the same element type",
    ),
    # -- transformer ops
    "less_result_not_bool": (
        "%a: tensor<4xf32>",
        "ascend.Less %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'ascend.Less' op expects a bool (i1) result, got f32",
    ),
    "equal_shapes": (
        "%a: tensor<4xf32>, %b: tensor<3xf32>",
        "ascend.Equal %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xi1>",
        "'ascend.Equal' op operand shapes (4,) and (3,) do not broadcast",
    ),
    "logical_and_float": (
        "%a: tensor<4xf32>",
        "ascend.LogicalAnd %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'ascend.LogicalAnd' op expects a bool (i1) operand and result, got f32",
    ),
    "logical_not_int": (
        "%a: tensor<4xi32>",
        "ascend.LogicalNot %a : (tensor<4xi32>) -> tensor<4xi32>",
        "'ascend.LogicalNot' op expects a bool (i1) operand and result, got i32",
    ),
    "select_v2_condition": (
        "%c: tensor<4xf32>, %a: tensor<4xf32>",
        "ascend.SelectV2 %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'ascend.SelectV2' op expects a bool (i1) condition, got f32",
    ),
    "select_v2_broadcast": (
        "%c: tensor<3xi1>, %a: tensor<2x4xf32>, %b: tensor<f32>",
        "ascend.SelectV2 %c, %a, %b : (tensor<3xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>",
        "'ascend.SelectV2' op condition, then and else shapes (3,), (2, 4), () do not broadcast",
    ),
    "select_v2_result": (
        "%c: tensor<2x1xi1>, %a: tensor<4xf32>, %b: tensor<f32>",
        "ascend.SelectV2 %c, %a, %b : (tensor<2x1xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>",
        "'ascend.SelectV2' op expects result shape (2, 4), got (4,)",
    ),
    "erf_int": (
        "%a: tensor<4xi32>",
        "ascend.Erf %a : (tensor<4xi32>) -> tensor<4xi32>",
        "'ascend.Erf' op expects float tensors for x, y",
    ),
    "batch_matmul_v2_rank": (
        "%a: tensor<8xf32>, %b: tensor<8x3xf32>",
        "ascend.BatchMatMulV2 %a, %b : (tensor<8xf32>, tensor<8x3xf32>) -> tensor<3xf32>",
        "'ascend.BatchMatMulV2' op expects operands of rank 2 or more, got ranks 1 and 2",
    ),
    "batch_matmul_v2_batches": (
        "%a: tensor<2x5x8xf32>, %b: tensor<3x8x4xf32>",
        "ascend.BatchMatMulV2 %a, %b : (tensor<2x5x8xf32>, tensor<3x8x4xf32>) -> tensor<2x5x4xf32>",
        "'ascend.BatchMatMulV2' op batch dimensions (2,) and (3,) do not broadcast to the result's (2,)",
    ),
    "batch_matmul_v2_contraction": (
        "%a: tensor<2x5x8xf32>, %b: tensor<7x4xf32>",
        "ascend.BatchMatMulV2 %a, %b : (tensor<2x5x8xf32>, tensor<7x4xf32>) -> tensor<2x5x4xf32>",
        "'ascend.BatchMatMulV2' op contracting dimensions differ: 8 vs 7",
    ),
    "gather_float_indices": (
        "%t: tensor<10x4xf32>, %i: tensor<3xf32>",
        "ascend.GatherV2D %t, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>",
        "'ascend.GatherV2D' op expects integer indices, got f32",
    ),
    "gather_axis": (
        "%t: tensor<10x4xf32>, %i: tensor<3xi32>",
        "ascend.GatherV2D %t, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>",
        "'ascend.GatherV2D' op axis 2 is out of range for rank 2",
    ),
    "gather_result": (
        "%t: tensor<10x4xf32>, %i: tensor<3xi32>",
        "ascend.GatherV2D %t, %i : (tensor<10x4xf32>, tensor<3xi32>) -> tensor<4x3xf32>",
        "'ascend.GatherV2D' op expects result shape (3, 4), got (4, 3)",
    ),
    "strided_slice_zero_stride": (
        "%x: tensor<4x8xf32>",
        "ascend.StridedSliceD %x {begin = array<i64: 0>, end = array<i64: 4>, strides = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        "'ascend.StridedSliceD' op strides must be non-zero",
    ),
    "strided_slice_lengths": (
        "%x: tensor<4x8xf32>",
        "ascend.StridedSliceD %x {begin = array<i64: 0, 0>, end = array<i64: 4>, strides = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>",
        "'ascend.StridedSliceD' op expects begin, end and strides of one length <= rank 2, got 2, 1, 1",
    ),
    "strided_slice_shrink": (
        "%x: tensor<4x8xf32>",
        "ascend.StridedSliceD %x {begin = array<i64: 0>, end = array<i64: 1>, strides = array<i64: 1>, shrink_axis_mask = 1 : i64} : (tensor<4x8xf32>) -> tensor<8xf32>",
        "'ascend.StridedSliceD' op shrink_axis_mask is not supported (must be 0)",
    ),
    "strided_slice_result": (
        "%x: tensor<4x8xf32>",
        "ascend.StridedSliceD %x {begin = array<i64: 1>, end = array<i64: 100>, strides = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<3x8xf32>",
        "'ascend.StridedSliceD' op expects result shape (2, 8), got (3, 8)",
    ),
    "broadcast_to_incompatible": (
        "%x: tensor<3x2xf32>",
        "ascend.BroadcastToD %x {shape = array<i64: 2, 3, 4>} : (tensor<3x2xf32>) -> tensor<2x3x4xf32>",
        "'ascend.BroadcastToD' op cannot broadcast (3, 2) to (2, 3, 4)",
    ),
    "broadcast_to_fewer_dims": (
        "%x: tensor<2x3x1xf32>",
        "ascend.BroadcastToD %x {shape = array<i64: 3, 4>} : (tensor<2x3x1xf32>) -> tensor<3x4xf32>",
        "'ascend.BroadcastToD' op cannot broadcast (2, 3, 1) to (3, 4)",
    ),
    "tile_multiples": (
        "%x: tensor<3x2xf32>",
        "ascend.TileD %x {multiples = array<i64: 2>} : (tensor<3x2xf32>) -> tensor<6x2xf32>",
        "'ascend.TileD' op expects 2 non-negative multiples, got [2]",
    ),
    "tile_result": (
        "%x: tensor<3x2xf32>",
        "ascend.TileD %x {multiples = array<i64: 2, 2>} : (tensor<3x2xf32>) -> tensor<6x2xf32>",
        "'ascend.TileD' op expects result shape (6, 4), got (6, 2)",
    ),
    # the ops added for imported models (PadV3D, ResizeD, ReduceMin, InstanceNorm, CumsumD, ScatterNdUpdate)
    "pad_count": (
        f"%x: {X}",
        f"ascend.PadV3D %x {{paddings = array<i64: 1, 2>}} : ({X}) -> tensor<2x7xf32>",
        "expects 4 paddings",
    ),
    "pad_negative": (
        f"%x: {X}",
        f"ascend.PadV3D %x {{paddings = array<i64: 0, 0, -1, 0>}} : ({X}) -> tensor<2x3xf32>",
        "expects non-negative paddings, got [0, 0, -1, 0]",
    ),
    "pad_mode": (
        f"%x: {X}",
        f'ascend.PadV3D %x {{paddings = array<i64: 0, 0, 0, 0>, mode = "wrap"}} : ({X}) -> {X}',
        "mode must be one of",
    ),
    "pad_reflect": (
        f"%x: {X}",
        f'ascend.PadV3D %x {{paddings = array<i64: 0, 0, 4, 0>, mode = "reflect"}} : ({X}) -> tensor<2x8xf32>',
        "reflect padding (4, 0) of dimension 1 must be smaller than its size 4",
    ),
    "pad_edge_empty": (
        "%x: tensor<2x0xf32>",
        'ascend.PadV3D %x {paddings = array<i64: 0, 0, 1, 0>, mode = "edge"} : (tensor<2x0xf32>) -> tensor<2x1xf32>',
        "edge padding of the empty dimension 1",
    ),
    "pad_result": (
        f"%x: {X}",
        f"ascend.PadV3D %x {{paddings = array<i64: 0, 0, 1, 1>}} : ({X}) -> {X}",
        "expects result shape (2, 6), got (2, 4)",
    ),
    "resize_coordinates": (
        f"%x: {I4}",
        f'ascend.ResizeD %x {{coordinate_transformation_mode = "tf_crop_and_resize"}} : ({I4}) -> {I4}',
        "coordinate_transformation_mode must be one of",
    ),
    "resize_nearest_mode": (
        f"%x: {I4}",
        f'ascend.ResizeD %x {{nearest_mode = "up"}} : ({I4}) -> {I4}',
        "nearest_mode must be one of",
    ),
    "resize_rank": (f"%x: {X}", f"ascend.ResizeD %x : ({X}) -> {X}", "expects an operand of rank >= 3"),
    "resize_channels": (
        f"%x: {I4}",
        f"ascend.ResizeD %x : ({I4}) -> tensor<1x3x3x4xf32>",
        "resizes the spatial dimensions only",
    ),
    "resize_empty": (
        f"%x: {I4}",
        f"ascend.ResizeD %x : ({I4}) -> tensor<1x2x0x4xf32>",
        "cannot resize empty dimensions",
    ),
    "resize_integer": (
        "%x: tensor<1x2x3x4xi32>",
        "ascend.ResizeD %x : (tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xi32>",
        "float",
    ),
    "reduce_min_empty": (
        "%x: tensor<3x0xf32>",
        "ascend.ReduceMin %x {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>",
        "the minimum of no elements is undefined",
    ),
    "instance_norm_layout": (
        "%x: tensor<2x3x4xf32>, %g: tensor<3xf32>",
        f'ascend.InstanceNorm %x, %g, %g {{data_format = "NHWC"}} : {IN} -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)',
        "supports the channels-first layout only",
    ),
    "instance_norm_rank": (
        "%x: tensor<2x3xf32>, %g: tensor<3xf32>",
        "ascend.InstanceNorm %x, %g, %g : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)",
        "expects an operand of rank >= 3",
    ),
    "instance_norm_stats": (
        "%x: tensor<2x3x4xf32>, %g: tensor<3xf32>",
        f"ascend.InstanceNorm %x, %g, %g : {IN} -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)",
        "expects mean and variance of shape (2, 3, 1)",
    ),
    "instance_norm_y": (
        "%x: tensor<2x3x4xf32>, %g: tensor<3xf32>",
        f"ascend.InstanceNorm %x, %g, %g : {IN} -> (tensor<2x3x5xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)",
        "expects y to have the shape of x",
    ),
    "cumsum_scalar": (
        "%x: tensor<f32>",
        "ascend.CumsumD %x : (tensor<f32>) -> tensor<f32>",
        "expects an operand of rank >= 1",
    ),
    "cumsum_axis": (f"%x: {X}", f"ascend.CumsumD %x {{axis = -3 : i64}} : ({X}) -> {X}", "axis -3 is out of range"),
    "cumsum_result": (f"%x: {X}", f"ascend.CumsumD %x : ({X}) -> tensor<4x2xf32>", "expects the result shape (2, 4)"),
    "scatter_float_indices": (
        "%x: tensor<4x3xf32>, %i: tensor<2x1xf32>, %u: tensor<2x3xf32>",
        "ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
        "expects integer indices",
    ),
    "scatter_scalar_indices": (
        "%x: tensor<4x3xf32>, %i: tensor<i32>, %u: tensor<2x3xf32>",
        "ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<i32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
        "expects indices of rank >= 1",
    ),
    "scatter_depth": (
        "%x: tensor<4x3xf32>, %i: tensor<2x3xi32>, %u: tensor<2xf32>",
        "ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<2x3xi32>, tensor<2xf32>) -> tensor<4x3xf32>",
        "indices address 3 dimensions of a rank-2 var",
    ),
    "scatter_result": (
        "%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>",
        "ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<3x4xf32>",
        "expects the result shape (4, 3)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_verifier_error(case: str) -> None:
    args, op, message = CASES[case]
    with pytest.raises(AscendError) as info:
        parse_module(one_op(args, op), "v.mlir")
    text = str(info.value)
    assert text.startswith("v.mlir:2:3: "), text
    assert message in text, text
    assert "\n" not in text


VALID = {
    "reduce_sum_of_empty": (
        "%x: tensor<3x0xf32>",
        "ascend.ReduceSum %x {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>",
    ),
    "reduce_max_keeps_empty_axis": (
        "%x: tensor<0x4xf32>",
        "ascend.ReduceMax %x {axes = array<i64: 1>} : (tensor<0x4xf32>) -> tensor<0xf32>",
    ),
    "one_hot_one_element_values": (
        "%i: tensor<8xi32>, %on: tensor<1xf32>, %off: tensor<1x1xf32>",
        "ascend.OneHot %i, %on, %off {depth = 10 : i64} : (tensor<8xi32>, tensor<1xf32>, tensor<1x1xf32>) -> tensor<8x10xf32>",
    ),
    "caps_skipping_absent_bias": (
        "%a: tensor<4x8xf32>, %b: tensor<8x2xf32>",
        "ascend.MatMulV2 %a, %b {caps = #ascend.caps<(f32, f32) -> f32, (f16, f16, f16) -> f16>} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>",
    ),
    "conv_window_fits_with_pads": (
        "%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>",
        "ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 0, 1, 0>} : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>",
    ),
    "layer_norm_grad_two_axes": (
        "%dy: tensor<2x4x8xf32>, %x: tensor<2x4x8xf32>, %v: tensor<2x1x1xf32>, %g: tensor<4x8xf32>",
        "ascend.LayerNormGrad %dy, %x, %v, %v, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<4x8xf32>) -> (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)",
    ),
}


@pytest.mark.parametrize("case", sorted(VALID))
def test_verifier_accepts(case: str) -> None:
    args, op = VALID[case]
    parse_module(one_op(args, op), "ok.mlir")
