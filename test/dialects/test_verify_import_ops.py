"""Verifier errors of the ops added for imported models (PadV3D, ResizeD, ReduceMin, InstanceNorm,
CumsumD, ScatterNdUpdate): each is one line naming the op and what is wrong."""

from __future__ import annotations

import pytest

from ascend_mp.errors import AscendError
from ascend_mp.ir import parse_module


def one_op(args: str, op: str) -> str:
    bind = "%0:3" if op.startswith("ascend.InstanceNorm ") else "%0"
    return f"func.func @f({args}) {{\n  {bind} = {op}\n  func.return\n}}"


X = "tensor<2x4xf32>"
I4 = "tensor<1x2x3x4xf32>"
IN = "(tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)"
CASES: dict[str, tuple[str, str, str]] = {
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
