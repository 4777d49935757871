"""Every mapped ONNX op and attribute combination: import + interpreter vs onnxruntime (CPU, fp32), 1e-5 relative."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_util import check, graph_model

from ascend_mp.dialects.ascend import OPS_BY_TYPE
from ascend_mp.frontend import import_onnx

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(0)


def f32(*shape: int, positive: bool = False) -> np.ndarray[Any, Any]:
    a = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(a) + 0.1 if positive else a


def one_node(
    op: str, inputs: dict[str, Any], inits: dict[str, Any] | None = None, opset: int = 17, n_out: int = 1, **attrs: Any
):
    names = list(inputs) + list(inits or {})
    node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], name=f"{op.lower()}_node", **attrs)
    return graph_model([node], inputs, [f"y{i}" for i in range(n_out)], inits, opset)


def needs(op_type: str) -> None:
    assert op_type in OPS_BY_TYPE, f"the dialect has no {op_type}"


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------

UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Floor", "Identity", "Reciprocal"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op: str) -> None:
    x = f32(2, 3, 4)
    check(one_node(op, {"x": x}), {"x": x})


@pytest.mark.parametrize("op", ["Log", "Sqrt"])
def test_unary_positive(op: str) -> None:
    x = f32(3, 5, positive=True)
    check(one_node(op, {"x": x}), {"x": x})


def test_leaky_relu() -> None:
    x = f32(4, 6)
    check(one_node("LeakyRelu", {"x": x}, alpha=0.2), {"x": x})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@pytest.mark.parametrize(
    "shapes", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1, 3, 1, 1), (2, 3, 5, 5))]
)
def test_binary_broadcasting(op: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = f32(*shapes[0]), f32(*shapes[1])
    if op == "Div":
        b = np.abs(b) + 0.5
    check(one_node(op, {"a": a, "b": b}), {"a": a, "b": b})


def test_binary_with_constant_operand() -> None:
    x = f32(2, 8)
    check(one_node("Mul", {"x": x}, {"s": np.array(1.5, np.float32)}), {"x": x})


def test_pow() -> None:
    x = f32(3, 4, positive=True)
    check(one_node("Pow", {"x": x}, {"p": np.array(2.5, np.float32)}), {"x": x})


def test_silu_pattern() -> None:
    x = f32(2, 4, 3, 3)
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["s"], name="sig"),
        helper.make_node("Mul", ["x", "s"], ["y"], name="mul"),
    ]
    check(graph_model(nodes, {"x": x}, ["y"]), {"x": x})


@pytest.mark.parametrize(
    "opset,low,high", [(11, 0.0, 6.0), (13, -0.5, 0.5), (13, None, 0.3), (13, 0.1, None), (7, -1.0, 2.0)]
)
def test_clip(opset: int, low: float | None, high: float | None) -> None:
    x = f32(2, 3, 4) * 4
    if opset < 11:
        model = one_node("Clip", {"x": x}, opset=opset, min=low, max=high)
    else:
        names = ["x", "" if low is None else "lo", "" if high is None else "hi"]
        inits = {k: np.array(v, np.float32) for k, v in (("lo", low), ("hi", high)) if v is not None}
        node = helper.make_node("Clip", names, ["y"], name="clip")
        model = graph_model([node], {"x": x}, ["y"], inits, opset)
    check(model, {"x": x})


@pytest.mark.parametrize("alpha,beta", [(0.2, 0.5), (1 / 6, 0.5), (0.5, 0.1)])
def test_hard_sigmoid(alpha: float, beta: float) -> None:
    x = f32(2, 5, 3) * 4
    check(one_node("HardSigmoid", {"x": x}, alpha=alpha, beta=beta), {"x": x})


def test_hard_swish() -> None:
    x = f32(2, 5, 3) * 4
    check(one_node("HardSwish", {"x": x}, opset=14), {"x": x})


# --------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize(
    "alpha,beta,c_shape",
    [(1.0, 1.0, (5,)), (0.5, 2.0, (5,)), (1.0, 1.0, (3, 5)), (1.0, 1.0, (1, 5)), (2.0, 1.0, None), (1.0, 1.0, None)],
)
def test_gemm(trans_a: int, trans_b: int, alpha: float, beta: float, c_shape: tuple[int, ...] | None) -> None:
    a = f32(4, 3) if trans_a else f32(3, 4)
    b = f32(5, 4) if trans_b else f32(4, 5)
    inits: dict[str, Any] = {"b": b}
    if c_shape is not None:
        inits["c"] = f32(*c_shape)
    check(one_node("Gemm", {"a": a}, inits, transA=trans_a, transB=trans_b, alpha=alpha, beta=beta), {"a": a})


def test_gemm_runtime_bias() -> None:
    a, c = f32(3, 4), f32(5)
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm", beta=0.5)
    check(graph_model([node], {"a": a, "c": c}, ["y"], {"b": f32(4, 5)}), {"a": a, "c": c})


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5))])
def test_matmul(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = f32(*sa), f32(*sb)
    check(one_node("MatMul", {"a": a}, {"b": b}), {"a": a})


# --------------------------------------------------------------------------------------
# Convolution, pooling, normalisation
# --------------------------------------------------------------------------------------

CONVS = [
    dict(),
    dict(pads=[1, 1, 1, 1]),
    dict(pads=[0, 1, 2, 1], strides=[2, 2]),
    dict(dilations=[2, 2], pads=[2, 2, 2, 2]),
    dict(auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(auto_pad="SAME_LOWER"),
    dict(auto_pad="VALID"),
]


@pytest.mark.parametrize("attrs", CONVS, ids=str)
@pytest.mark.parametrize("bias", [False, True])
def test_conv(attrs: dict[str, Any], bias: bool) -> None:
    x = f32(2, 4, 9, 9)
    inits = {"w": f32(6, 4, 3, 3)}
    if bias:
        inits["b"] = f32(6)
    check(one_node("Conv", {"x": x}, inits, **attrs), {"x": x})


@pytest.mark.parametrize("channels,out,group", [(4, 6, 2), (4, 4, 4), (4, 8, 4), (6, 6, 3)])
def test_conv_groups_and_depthwise(channels: int, out: int, group: int) -> None:
    x = f32(1, channels, 8, 8)
    inits = {"w": f32(out, channels // group, 3, 3), "b": f32(out)}
    model = one_node("Conv", {"x": x}, inits, group=group, pads=[1, 1, 1, 1], strides=[2, 2])
    check(model, {"x": x})
    if group == channels:
        text = str(import_onnx(model))
        assert "ascend.DepthwiseConv2D" in text


def test_conv_runtime_filter() -> None:
    x, w = f32(1, 3, 6, 6), f32(4, 3, 3, 3)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv")
    check(graph_model([node], {"x": x, "w": w}, ["y"]), {"x": x, "w": w})


POOLS = [
    (dict(kernel_shape=[2, 2], strides=[2, 2]), None),
    (dict(kernel_shape=[3, 3], strides=[1, 1]), None),
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]), None),  # TF SAME on 8x8
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), "V3"),  # resnet's: not SAME on 8x8
    (dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), "V3"),
    (dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 1, 0]), "V3"),
]


@pytest.mark.parametrize("attrs,needs_v3", POOLS, ids=str)
def test_max_pool(attrs: dict[str, Any], needs_v3: str | None) -> None:
    if needs_v3:
        needs("MaxPoolV3")
    x = f32(2, 3, 8, 8)
    check(one_node("MaxPool", {"x": x}, **attrs), {"x": x})


@pytest.mark.parametrize("attrs,needs_v2", POOLS, ids=str)
@pytest.mark.parametrize("include", [0, 1])
def test_average_pool(attrs: dict[str, Any], needs_v2: str | None, include: int) -> None:
    if needs_v2 or (include and attrs.get("pads")):
        needs("AvgPoolV2")
    x = f32(2, 3, 8, 8)
    check(one_node("AveragePool", {"x": x}, count_include_pad=include, **attrs), {"x": x})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool(op: str) -> None:
    x = f32(2, 5, 7, 7)
    check(one_node(op, {"x": x}), {"x": x})


@pytest.mark.parametrize("eps", [1e-5, 1e-3])
def test_batch_norm(eps: float) -> None:
    x = f32(2, 4, 5, 5)
    inits = {"s": f32(4), "b": f32(4), "m": f32(4), "v": f32(4, positive=True)}
    check(one_node("BatchNormalization", {"x": x}, inits, epsilon=eps), {"x": x})


# --------------------------------------------------------------------------------------
# Shapes, layout, softmax, reductions
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_flatten(axis: int) -> None:
    x = f32(2, 3, 4)
    check(one_node("Flatten", {"x": x}, axis=axis), {"x": x})


@pytest.mark.parametrize("target", [[-1], [2, -1], [0, 12], [3, 2, 4]])
def test_reshape(target: list[int]) -> None:
    x = f32(2, 3, 4)
    check(one_node("Reshape", {"x": x}, {"shape": np.array(target, np.int64)}), {"x": x})


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_unsqueeze(opset: int) -> None:
    x = f32(2, 1, 4)
    if opset < 13:
        nodes = [
            helper.make_node("Squeeze", ["x"], ["s"], axes=[1]),
            helper.make_node("Unsqueeze", ["s"], ["y"], axes=[0, 3]),
        ]
        model = graph_model(nodes, {"x": x}, ["y"], opset=opset)
    else:
        nodes = [helper.make_node("Squeeze", ["x", "a1"], ["s"]), helper.make_node("Unsqueeze", ["s", "a2"], ["y"])]
        inits = {"a1": np.array([1], np.int64), "a2": np.array([0, 3], np.int64)}
        model = graph_model(nodes, {"x": x}, ["y"], inits, opset)
    check(model, {"x": x})


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose(perm: list[int] | None) -> None:
    x = f32(2, 3, 4)
    attrs = {} if perm is None else {"perm": perm}
    check(one_node("Transpose", {"x": x}, **attrs), {"x": x})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis: int) -> None:
    a, b = f32(2, 3, 4), f32(2, 3, 4)
    check(one_node("Concat", {"a": a, "b": b}, axis=axis), {"a": a, "b": b})


def test_dropout_is_identity() -> None:
    x = f32(3, 4)
    check(one_node("Dropout", {"x": x}, {"ratio": np.array(0.5, np.float32)}), {"x": x})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset,axis", [(11, 1), (11, -1), (13, 1), (13, -1), (13, 0)])
def test_softmax(op: str, opset: int, axis: int) -> None:
    x = f32(2, 3, 4)
    check(one_node(op, {"x": x}, opset=opset, axis=axis), {"x": x})


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceMax"])
@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("axes,keep", [([1], 1), ([0, 2], 0), ([-1], 1), (None, 0)])
def test_reduce(op: str, opset: int, axes: list[int] | None, keep: int) -> None:
    x = f32(2, 3, 4)
    as_input = opset >= 18 or (op == "ReduceSum" and opset >= 13)
    if as_input:
        inits = {} if axes is None else {"axes": np.array(axes, np.int64)}
        model = one_node(op, {"x": x}, inits, opset=opset, keepdims=keep)
    else:
        attrs = {} if axes is None else {"axes": axes}
        model = one_node(op, {"x": x}, opset=opset, keepdims=keep, **attrs)
    check(model, {"x": x})


def test_cast_same_type_is_free() -> None:
    x = f32(2, 3)
    model = one_node("Cast", {"x": x}, to=1)
    check(model, {"x": x})


# --------------------------------------------------------------------------------------
# Ops for transformer models (the dialect's issue-10 ops)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("op,cann", [("Less", "Less"), ("Greater", "Greater"), ("Equal", "Equal")])
def test_compare_then_where(op: str, cann: str) -> None:
    needs(cann)
    needs("SelectV2")
    a, b = f32(2, 3, 4), f32(3, 1)
    if op == "Equal":
        b = np.round(b)
        a = np.round(a)
    nodes = [
        helper.make_node(op, ["a", "b"], ["c"], name="cmp"),
        helper.make_node("Where", ["c", "a", "b"], ["y"], name="where"),
    ]
    check(graph_model(nodes, {"a": a, "b": b}, ["y"]), {"a": a, "b": b})


def test_logic_ops() -> None:
    for cann in ("LogicalAnd", "LogicalOr", "LogicalNot", "Less", "SelectV2"):
        needs(cann)
    a, b = f32(4, 5), f32(4, 5)
    nodes = [
        helper.make_node("Less", ["a", "zero"], ["p"]),
        helper.make_node("Less", ["b", "zero"], ["q"]),
        helper.make_node("And", ["p", "q"], ["pq"]),
        helper.make_node("Or", ["p", "q"], ["p_or_q"]),
        helper.make_node("Not", ["pq"], ["n"]),
        helper.make_node("Where", ["n", "a", "b"], ["y1"]),
        helper.make_node("Where", ["p_or_q", "b", "a"], ["y2"]),
    ]
    check(graph_model(nodes, {"a": a, "b": b}, ["y1", "y2"], {"zero": np.array(0, np.float32)}), {"a": a, "b": b})


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str) -> None:
    needs("Erf")
    x = f32(3, 7) * 3
    check(one_node("Gelu", {"x": x}, opset=20, approximate=approximate), {"x": x})


def test_erf() -> None:
    needs("Erf")
    x = f32(3, 7) * 2
    check(one_node("Erf", {"x": x}), {"x": x})


@pytest.mark.parametrize("axis,idx_shape", [(0, (2, 3)), (1, (4,)), (-1, ())])
def test_gather(axis: int, idx_shape: tuple[int, ...]) -> None:
    needs("GatherV2D")
    table = f32(5, 6, 3)
    ids = RNG.integers(-3, 3, idx_shape).astype(np.int64)
    model = one_node("Gather", {"table": table, "ids": ids}, axis=axis)
    check(model, {"table": table, "ids": ids})


@pytest.mark.parametrize(
    "starts,ends,axes,steps",
    [
        ([1], [3], [0], [1]),
        ([0, 1], [4, -1], [1, 2], [2, 1]),
        ([-2], [2**62], [2], [1]),
        ([3], [-(2**62)], [1], [-1]),
    ],
)
def test_slice(starts: list[int], ends: list[int], axes: list[int], steps: list[int]) -> None:
    needs("StridedSliceD")
    x = f32(4, 5, 6)
    inits = {
        k: np.array(v, np.int64) for k, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps))
    }
    check(one_node("Slice", {"x": x}, inits), {"x": x})


def test_expand_and_tile() -> None:
    needs("BroadcastToD")
    needs("TileD")
    x = f32(3, 1)
    nodes = [
        helper.make_node("Expand", ["x", "shape"], ["e"], name="expand"),
        helper.make_node("Tile", ["e", "reps"], ["y"], name="tile"),
    ]
    inits = {"shape": np.array([2, 3, 4], np.int64), "reps": np.array([1, 2, 1], np.int64)}
    check(graph_model(nodes, {"x": x}, ["y"], inits), {"x": x})


@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm(axis: int, bias: bool) -> None:
    x = f32(2, 3, 8) * 2 + 1
    norm_shape = x.shape[axis % 3 :]
    inits = {"g": f32(*norm_shape)}
    if bias:
        inits["b"] = f32(*norm_shape)
    check(one_node("LayerNormalization", {"x": x}, inits, axis=axis, epsilon=1e-5), {"x": x})


def test_batched_matmul_broadcasting() -> None:
    a, b = f32(2, 1, 3, 4), f32(5, 4, 6)
    check(one_node("MatMul", {"a": a}, {"b": b}), {"a": a})
