"""One small converter per ONNX op type, registered in `registry.CONVERTERS` (`CONVERTERS[op_type](cx, node)`).

A converter reads the node's inputs (`cx.value`, or `cx.const` for the ones that must
be known at import: shapes, axes, filters to re-layout), emits ascend ops named after
the node (`cx.emit`) and binds the node's outputs. Opset differences (attributes that
became inputs) are handled where they matter, with `cx.opset`. The research behind the
mapping is DESIGN section 10 (Gemm -> MatMulV2 + BiasAdd, Conv -> Conv2D /
DepthwiseConv2D, MaxPool with pads -> MaxPoolV3, BatchNormalization -> BNInfer,
Clip -> ClipByValue / Relu6, ...); an op the dialect does not have yet is composed
from ops it has, exactly (Clip as Maximum + Minimum, HardSigmoid as Mul, Add, Clip).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.frontend.fold import axis_in, check_indices
from ascend_mp.frontend.registry import Unsupported, converter

if TYPE_CHECKING:
    from ascend_mp.frontend.onnx_import import Converter
    from ascend_mp.frontend.registry import Node


def _op(name: str) -> type[ascend.AscendOp]:
    """The dialect's op class for a CANN type."""
    return ascend.OPS_BY_TYPE[name]


def _unsupported(cx: Converter, node: Node, why: str) -> Unsupported:
    return Unsupported(f"{cx.label}: node '{node.name}' ({node.op_type}): {why}")


def _need_const(cx: Converter, node: Node, index: int, what: str) -> np.ndarray[Any, Any]:
    value = cx.const(node.input(index))
    if value is None:
        raise _unsupported(cx, node, f"{what} (input {index}) must be a constant")
    return value


def _node_axis(cx: Converter, node: Node, default: int, rank: int) -> int:
    """The node's `axis` attribute in [0, rank); out of range, the node's output has no inferred shape, and
    that message (naming the node and its input shapes, `Converter.type_of`) comes first."""
    axis = int(node.attr("axis", default))
    if not -rank <= axis < rank:
        for out in node.outputs:
            if out:
                cx.type_of(out)
    return axis_in(axis, rank)


def _dtype(v: SSAValue) -> str:
    d = tensor_dtype(v.type)
    assert d is not None
    return d


def _scalar(cx: Converter, value: float, like: SSAValue, name: str) -> SSAValue:
    """A 0-d constant of `like`'s dtype."""
    return cx.new_const(np.array(value), name, _dtype(like))


# --------------------------------------------------------------------------------------
# Pass-through, shapes and layout
# --------------------------------------------------------------------------------------


@converter("Identity", "Dropout")
def _identity(cx: Converter, node: Node) -> None:
    cx.bind(node.outputs[0], cx.value(node.inputs[0]))


@converter("Reshape", "Squeeze", "Unsqueeze", "Flatten")
def _reshape(cx: Converter, node: Node) -> None:
    """All four only change the shape, which folding and shape inference already know."""
    cx.emit(ascend.ReshapeOp, [cx.value(node.inputs[0])], node.outputs[0])


@converter("Transpose")
def _transpose(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    rank = len(ascend.shape_of(x))
    perm = node.attr("perm") or list(reversed(range(rank)))
    cx.emit(ascend.TransposeOp, [x], node.outputs[0], perm=[int(p) for p in perm])


@converter("Concat")
def _concat(cx: Converter, node: Node) -> None:
    xs = [cx.value(n) for n in node.inputs if n]
    cx.emit(ascend.ConcatV2DOp, [xs], node.outputs[0], concat_dim=int(node.attr("axis")))


@converter("Cast")
def _cast(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    out = cx.type_of(node.outputs[0])
    if out == x.type:
        cx.bind(node.outputs[0], x)
    else:
        cx.emit(ascend.CastOp, [x], node.outputs[0])


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------

_BINARY = {
    "Add": ascend.AddOp,
    "Sub": ascend.SubOp,
    "Mul": ascend.MulOp,
    "Div": ascend.RealDivOp,
    "Pow": ascend.PowOp,
    "Max": ascend.MaximumOp,
    "Min": ascend.MinimumOp,
}
_UNARY = {
    "Relu": ascend.ReluOp,
    "Sigmoid": ascend.SigmoidOp,
    "Tanh": ascend.TanhOp,
    "Exp": ascend.ExpOp,
    "Log": ascend.LogOp,
    "Sqrt": ascend.SqrtOp,
    "Neg": ascend.NegOp,
    "Floor": ascend.FloorOp,
}


@converter(*_BINARY)
def _binary(cx: Converter, node: Node) -> None:
    cls = _BINARY[node.op_type]
    xs = [cx.value(n) for n in node.inputs if n]
    if len(xs) == 1:
        cx.bind(node.outputs[0], xs[0])
        return
    acc = xs[0]
    for i, x in enumerate(xs[1:], start=1):
        last = i == len(xs) - 1
        if last:
            acc = cx.emit(cls, [acc, x], node.outputs[0])
        else:
            from ascend_mp.dialects.ascend import broadcast_shape

            shape = broadcast_shape(ascend.shape_of(acc), ascend.shape_of(x))
            assert shape is not None
            acc = cx.emit(cls, [acc, x], cx.tensor(shape, _dtype(acc)))


@converter(*_UNARY)
def _unary(cx: Converter, node: Node) -> None:
    cx.emit(_UNARY[node.op_type], [cx.value(node.inputs[0])], node.outputs[0])


@converter("Reciprocal")
def _reciprocal(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    cx.emit(ascend.RealDivOp, [_scalar(cx, 1.0, x, f"{node.name}/one"), x], node.outputs[0])


@converter("LeakyRelu")
def _leaky_relu(cx: Converter, node: Node) -> None:
    cx.emit(
        ascend.LeakyReluOp, [cx.value(node.inputs[0])], node.outputs[0], negative_slope=float(node.attr("alpha", 0.01))
    )


def _clip(cx: Converter, node: Node, x: SSAValue, low: float | None, high: float | None, out: str | Any) -> SSAValue:
    """Clip as the dialect can say it: Relu6 for [0, 6], ClipByValue for two bounds, else Maximum/Minimum."""
    if low == 0.0 and high == 6.0:
        return cx.emit(ascend.Relu6Op, [x], out)
    if low is not None and high is not None:
        lo, hi = _scalar(cx, low, x, f"{node.name}/min"), _scalar(cx, high, x, f"{node.name}/max")
        return cx.emit(ascend.ClipByValueOp, [x, lo, hi], out)
    if low is not None:
        return cx.emit(ascend.MaximumOp, [x, _scalar(cx, low, x, f"{node.name}/min")], out)
    if high is not None:
        return cx.emit(ascend.MinimumOp, [x, _scalar(cx, high, x, f"{node.name}/max")], out)
    cx.bind(out, x)
    return x


@converter("Clip")
def _clip_node(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    if cx.opset < 11:
        low, high = node.attr("min"), node.attr("max")
    else:
        lo, hi = node.input(1), node.input(2)
        low = None if lo is None else float(_need_const(cx, node, 1, "min"))
        high = None if hi is None else float(_need_const(cx, node, 2, "max"))
    _clip(cx, node, x, None if low is None else float(low), None if high is None else float(high), node.outputs[0])


def _hard_sigmoid(cx: Converter, node: Node, x: SSAValue, alpha: float, beta: float, out: str | Any) -> SSAValue:
    return cx.emit(ascend.HardSigmoidOp, [x], out, alpha=alpha, beta=beta)


@converter("HardSigmoid")
def _hard_sigmoid_node(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    _hard_sigmoid(cx, node, x, float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5)), node.outputs[0])


@converter("HardSwish")
def _hard_swish(cx: Converter, node: Node) -> None:
    """x * HardSigmoid(x) with alpha 1/6 (CANN's table has no HardSwish)."""
    x = cx.value(node.inputs[0])
    gate = _hard_sigmoid(cx, node, x, 1.0 / 6.0, 0.5, x.type)
    cx.emit(ascend.MulOp, [x, gate], node.outputs[0])


# --------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------


@converter("MatMul")
def _matmul(cx: Converter, node: Node) -> None:
    a, b = cx.value(node.inputs[0]), cx.value(node.inputs[1])
    sa, sb = ascend.shape_of(a), ascend.shape_of(b)
    cx.type_of(node.outputs[0])  # the output's shape must be known (else a one-line error naming it)
    if len(sa) == 2 and len(sb) == 2:
        cx.emit(ascend.MatMulV2Op, [a, b], node.outputs[0])
    elif len(sa) > 2 and len(sb) == 2:  # N-D x 2-D: fold the leading dimensions into the rows
        flat = cx.emit(ascend.ReshapeOp, [a], cx.tensor((math.prod(sa[:-1]), sa[-1]), _dtype(a)))
        y = cx.emit(ascend.MatMulV2Op, [flat, b], cx.tensor((math.prod(sa[:-1]), sb[-1]), _dtype(a)))
        cx.emit(ascend.ReshapeOp, [y], node.outputs[0])
    elif len(sa) >= 3 and len(sb) >= 3:
        cx.emit(_op("BatchMatMulV2"), [a, b], node.outputs[0])
    else:
        raise _unsupported(cx, node, f"operand ranks {len(sa)} and {len(sb)} are not supported")


@converter("Gemm")
def _gemm(cx: Converter, node: Node) -> None:
    a, b = cx.value(node.inputs[0]), cx.value(node.inputs[1])
    ta, tb = bool(node.attr("transA", 0)), bool(node.attr("transB", 0))
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    out = cx.type_of(node.outputs[0])
    c_name = node.input(2)
    last = c_name is None and alpha == 1.0
    y = cx.emit(ascend.MatMulV2Op, [a, b], node.outputs[0] if last else out, transpose_x1=ta, transpose_x2=tb)
    if last:
        return
    if alpha != 1.0:
        last = c_name is None
        y = cx.emit(ascend.MulOp, [y, _scalar(cx, alpha, y, f"{node.name}/alpha")], node.outputs[0] if last else out)
        if last:
            return
    assert c_name is not None
    c_const = cx.const(c_name)
    if c_const is not None and beta != 1.0:
        c = cx.new_const((c_const * np.asarray(beta, c_const.dtype)).astype(c_const.dtype), f"{c_name}/beta")
    else:
        c = cx.value(c_name)
        if beta != 1.0:
            c = cx.emit(ascend.MulOp, [c, _scalar(cx, beta, c, f"{node.name}/beta")], c.type)  # pyright: ignore[reportArgumentType]  # an ONNX value's type is a TensorType (SSAValue.type is typed Attribute)
    sc, sy = ascend.shape_of(c), ascend.shape_of(y)
    if len(sc) == 1 and sc[0] == sy[1] and sy[1] != 1:
        cx.emit(ascend.BiasAddOp, [y, c], node.outputs[0])
    else:
        cx.emit(ascend.AddOp, [y, c], node.outputs[0])


# --------------------------------------------------------------------------------------
# Convolution and pooling
# --------------------------------------------------------------------------------------


def _spatial_attrs(
    cx: Converter, node: Node, in_hw: Sequence[int], kernel: Sequence[int]
) -> tuple[list[int], list[int], list[int]]:
    """(strides, dilations, pads [top, bottom, left, right]) of a 2-d conv/pool node."""
    if len(kernel) != 2:
        raise _unsupported(cx, node, f"only 2-d windows are supported, got kernel {list(kernel)}")
    strides = [int(s) for s in node.attr("strides", [1, 1])]
    dilations = [int(d) for d in node.attr("dilations", [1, 1])]
    auto = node.attr("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads: list[int] = []
        for size, k, s, d in zip(in_hw, kernel, strides, dilations):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            pads += [small, big] if auto == "SAME_UPPER" else [big, small]
        return strides, dilations, pads
    if auto == "VALID":
        return strides, dilations, [0, 0, 0, 0]
    p = [int(v) for v in node.attr("pads", [0, 0, 0, 0])]
    return strides, dilations, [p[0], p[2], p[1], p[3]]


@converter("Conv")
def _conv(cx: Converter, node: Node) -> None:
    x, w_name = cx.value(node.inputs[0]), node.inputs[1]
    sx = ascend.shape_of(x)
    w_shape = cx.shape(w_name) if w_name not in cx.graph.consts else cx.graph.consts[w_name].shape
    if len(sx) != 4:
        raise _unsupported(
            cx, node, f"only 1-d, 2-d and 3-d convolutions (input rank 3 to 5) are supported, got rank {len(sx)}"
        )
    kernel = node.attr("kernel_shape") or list(w_shape[2:])
    strides, dilations, pads = _spatial_attrs(cx, node, sx[2:], kernel)
    group = int(node.attr("group", 1))
    bias = cx.value(node.inputs[2]) if node.input(2) is not None else None
    props: dict[str, Any] = {"strides": [1, 1, *strides], "dilations": [1, 1, *dilations], "pads": pads}
    w_const = cx.const(w_name)
    channels = sx[1]
    if group > 1 and group == channels and w_shape[1] == 1 and w_const is not None:
        # depthwise: ONNX [C*M, 1, KH, KW] -> the dialect's [KH, KW, C, M]
        m = w_shape[0] // channels
        hwcm = np.ascontiguousarray(w_const.reshape(channels, m, *w_shape[2:]).transpose(2, 3, 0, 1))
        w = cx.new_const(hwcm, f"{w_name}/hwcm")
        cx.emit(ascend.DepthwiseConv2DOp, [x, w, bias], node.outputs[0], **props)
        return
    cx.emit(
        ascend.Conv2DOp, [x, cx.value(w_name), bias], node.outputs[0], groups=group if group != 1 else None, **props
    )


def _pool_window(cx: Converter, node: Node, x: SSAValue) -> tuple[list[int], list[int], list[int]]:
    sx = ascend.shape_of(x)
    if len(sx) != 4:
        raise _unsupported(
            cx, node, f"only 1-d, 2-d and 3-d pooling (input rank 3 to 5) is supported, got rank {len(sx)}"
        )
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides, dilations, pads = _spatial_attrs(cx, node, sx[2:], kernel)
    if dilations != [1, 1]:
        raise _unsupported(cx, node, f"dilations {dilations} are not supported")
    if node.attr("storage_order", 0):
        raise _unsupported(cx, node, "storage_order=1 is not supported")
    return kernel, strides, pads


def _tf_padding(
    in_hw: Sequence[int], out_hw: Sequence[int], kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int]
) -> str | None:
    """'VALID' or 'SAME' if TF's padding gives these exact pads and output, else None."""
    if not any(pads) and all(o == (i - k) // s + 1 for i, o, k, s in zip(in_hw, out_hw, kernel, strides)):
        return "VALID"
    same: list[int] = []
    for i, o, k, s in zip(in_hw, out_hw, kernel, strides):
        if o != -(-i // s):
            return None
        total = max((o - 1) * s + k - i, 0)
        same += [total // 2, total - total // 2]
    return "SAME" if list(pads) == same else None


@converter("MaxPool", "AveragePool")
def _pool(cx: Converter, node: Node) -> None:
    if len(node.outputs) > 1 and node.outputs[1]:
        raise _unsupported(cx, node, "the Indices output is not supported")
    x = cx.value(node.inputs[0])
    kernel, strides, pads = _pool_window(cx, node, x)
    out_hw = cx.shape(node.outputs[0])[2:]
    in_hw = ascend.shape_of(x)[2:]
    ceil = bool(node.attr("ceil_mode", 0))
    is_max = node.op_type == "MaxPool"
    include = bool(node.attr("count_include_pad", 0))
    padding = _tf_padding(in_hw, out_hw, kernel, strides, pads)
    # TF's SAME average pooling excludes the padding: right for count_include_pad=0 only
    if padding == "VALID" or (padding == "SAME" and (is_max or not include)):
        cls = ascend.MaxPoolOp if is_max else ascend.AvgPoolOp
        cx.emit(cls, [x], node.outputs[0], ksize=[1, 1, *kernel], strides=[1, 1, *strides], padding=padding)
        return
    explicit = _op("MaxPoolV3" if is_max else "AvgPoolV2")
    props: dict[str, Any] = {
        "ksize": [1, 1, *kernel],
        "strides": [1, 1, *strides],
        "padding_mode": "CALCULATED",
        "pads": pads,
        "ceil_mode": ceil,
    }
    if not is_max:
        props["exclusive"] = not include
    cx.emit(explicit, [x], node.outputs[0], **props)


@converter("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    rank = len(ascend.shape_of(x))
    cls = ascend.ReduceMeanOp if node.op_type == "GlobalAveragePool" else ascend.ReduceMaxOp
    cx.emit(cls, [x], node.outputs[0], axes=list(range(2, rank)), keep_dims=True)


@converter("BatchNormalization")
def _batch_norm(cx: Converter, node: Node) -> None:
    if int(node.attr("training_mode", 0)) or any(node.outputs[1:]):
        raise _unsupported(cx, node, "only inference (training_mode=0, one output) is supported")
    x = cx.value(node.inputs[0])
    stats = [cx.value(n) for n in node.inputs[1:5]]
    eps = float(node.attr("epsilon", 1e-5))
    cx.emit(ascend.BNInferOp, [x, *stats], node.outputs[0], epsilon=eps)


# --------------------------------------------------------------------------------------
# Softmax and reductions
# --------------------------------------------------------------------------------------


@converter("Softmax", "LogSoftmax")
def _softmax(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    shape = ascend.shape_of(x)
    rank = len(shape)
    cls = ascend.SoftmaxV2Op if node.op_type == "Softmax" else ascend.LogSoftmaxV2Op
    axis = _node_axis(cx, node, -1 if cx.opset >= 13 else 1, max(rank, 1))
    if cx.opset >= 13 or axis == rank - 1:
        cx.emit(cls, [x], node.outputs[0], axes=[axis])
        return
    # opset < 13: softmax over the dimensions from `axis` on, flattened
    flat = cx.tensor((math.prod(shape[:axis]), math.prod(shape[axis:])), _dtype(x))
    y = cx.emit(cls, [cx.emit(ascend.ReshapeOp, [x], flat)], flat, axes=[1])
    cx.emit(ascend.ReshapeOp, [y], node.outputs[0])


_REDUCE = {"ReduceMean": ascend.ReduceMeanOp, "ReduceSum": ascend.ReduceSumOp, "ReduceMax": ascend.ReduceMaxOp}
_AXES_INPUT_SINCE = {"ReduceSum": 13}


@converter(*_REDUCE)
def _reduce(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    since = _AXES_INPUT_SINCE.get(node.op_type, 18)
    if cx.opset >= since:
        axes = None if node.input(1) is None else [int(a) for a in _need_const(cx, node, 1, "axes").reshape(-1)]
    else:
        axes = node.attr("axes")
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            cx.bind(node.outputs[0], x)
            return
        axes = list(range(len(ascend.shape_of(x))))
    cx.emit(
        _REDUCE[node.op_type],
        [x],
        node.outputs[0],
        axes=[int(a) for a in axes],
        keep_dims=bool(node.attr("keepdims", 1)),
    )


# --------------------------------------------------------------------------------------
# Comparison, logic, selection (ops the transformer models need)
# --------------------------------------------------------------------------------------

_COMPARE = {"Less": "Less", "Greater": "Greater", "Equal": "Equal", "And": "LogicalAnd", "Or": "LogicalOr"}


@converter(*_COMPARE)
def _compare(cx: Converter, node: Node) -> None:
    cls = _op(_COMPARE[node.op_type])
    cx.emit(cls, [cx.value(node.inputs[0]), cx.value(node.inputs[1])], node.outputs[0])


@converter("GreaterOrEqual", "LessOrEqual")
def _compare_or_equal(cx: Converter, node: Node) -> None:
    """a >= b as Not(Less(a, b)), a <= b as Not(Greater(a, b)) (the dialect has no GreaterEqual)."""
    cls = _op("Less" if node.op_type == "GreaterOrEqual" else "Greater")
    not_ = _op("LogicalNot")
    out = cx.type_of(node.outputs[0])
    strict = cx.emit(cls, [cx.value(node.inputs[0]), cx.value(node.inputs[1])], out)
    cx.emit(not_, [strict], node.outputs[0])


@converter("IsNaN")
def _isnan(cx: Converter, node: Node) -> None:
    """IsNaN(x) as Not(Equal(x, x)): NaN is the only value unequal to itself."""
    eq, not_ = _op("Equal"), _op("LogicalNot")
    x = cx.value(node.inputs[0])
    same = cx.emit(eq, [x, x], cx.type_of(node.outputs[0]))
    cx.emit(not_, [same], node.outputs[0])


@converter("Not", "Erf")
def _logic_unary(cx: Converter, node: Node) -> None:
    cls = _op("LogicalNot" if node.op_type == "Not" else "Erf")
    cx.emit(cls, [cx.value(node.inputs[0])], node.outputs[0])


@converter("Where")
def _where(cx: Converter, node: Node) -> None:
    cls = _op("SelectV2")
    cx.emit(cls, [cx.value(n) for n in node.inputs[:3]], node.outputs[0])


@converter("Gelu")
def _gelu(cx: Converter, node: Node) -> None:
    """approximate="tanh": the dialect's Gelu; "none" (exact): 0.5 x (1 + erf(x / sqrt 2))."""
    x = cx.value(node.inputs[0])
    if node.attr("approximate", "none") == "tanh":
        cx.emit(ascend.GeluOp, [x], node.outputs[0])
        return
    erf = _op("Erf")
    t = x.type
    scaled = cx.emit(ascend.MulOp, [x, _scalar(cx, 1 / math.sqrt(2), x, f"{node.name}/rsqrt2")], t)  # pyright: ignore[reportArgumentType]  # an ONNX value's type is a TensorType (SSAValue.type is typed Attribute)
    e = cx.emit(erf, [scaled], t)  # pyright: ignore[reportArgumentType]  # an ONNX value's type is a TensorType (SSAValue.type is typed Attribute)
    one = cx.emit(ascend.AddOp, [e, _scalar(cx, 1.0, x, f"{node.name}/one")], t)  # pyright: ignore[reportArgumentType]  # an ONNX value's type is a TensorType (SSAValue.type is typed Attribute)
    half = cx.emit(ascend.MulOp, [x, _scalar(cx, 0.5, x, f"{node.name}/half")], t)  # pyright: ignore[reportArgumentType]  # an ONNX value's type is a TensorType (SSAValue.type is typed Attribute)
    cx.emit(ascend.MulOp, [half, one], node.outputs[0])


# --------------------------------------------------------------------------------------
# Gather, slices, broadcasting, tiling, layer norm
# --------------------------------------------------------------------------------------


@converter("Gather")
def _gather(cx: Converter, node: Node) -> None:
    cls = _op("GatherV2D")
    x = cx.value(node.inputs[0])
    shape = ascend.shape_of(x)
    axis = _node_axis(cx, node, 0, len(shape))
    idx = cx.const(node.input(1))
    if idx is not None:  # constant indices out of range are an error here, not a wrong value at run time
        check_indices(np.asarray(idx).astype(np.int64), shape[axis], axis)
    cx.emit(cls, [x, cx.value(node.inputs[1])], node.outputs[0], axis=axis)


@converter("GatherND")
def _gather_nd(cx: Converter, node: Node) -> None:
    """Constant indices: a GatherV2D on axis 0 of the data flattened over the indexed dimensions."""
    from ascend_mp.frontend.fold import gather_nd_rows

    cls = _op("GatherV2D")
    x = cx.value(node.inputs[0])
    idx = _need_const(cx, node, 1, "indices")
    b = int(node.attr("batch_dims", 0))
    shape = ascend.shape_of(x)
    dims = np.array(shape[b : b + idx.shape[-1]], np.int64)
    if idx.size and ((idx < -dims).any() or (idx >= dims).any()):
        raise _unsupported(
            cx, node, f"indices must lie in [-d, d-1] for the indexed dimensions {[int(d) for d in dims]}"
        )
    rest = tuple(shape[b + idx.shape[-1] :])
    rows = gather_nd_rows(shape, idx, b)
    flat = cx.emit(ascend.ReshapeOp, [x], cx.tensor((math.prod(shape[: b + idx.shape[-1]]), *rest), _dtype(x)))
    y = cx.emit(
        cls,
        [flat, cx.new_const(rows.astype(np.int32), f"{node.name}/rows")],
        cx.tensor((*rows.shape, *rest), _dtype(x)),
        axis=0,
    )
    cx.emit(ascend.ReshapeOp, [y], node.outputs[0])


@converter("GatherElements")
def _gather_elements(cx: Converter, node: Node) -> None:
    """A GatherV2D on the flattened data at each element's flat position: computed here for constant
    indices, else in the graph (indices wrapped from [-n, 0), times the axis' stride, plus each element's
    offset on the other axes; an index outside [-n, n) is an error in ONNX and reads another element here)."""
    cls = _op("GatherV2D")
    x = cx.value(node.inputs[0])
    shape = ascend.shape_of(x)
    axis = _node_axis(cx, node, 0, len(shape))
    if cx.const(node.input(1)) is None:
        _gather_elements_dynamic(cx, node, x, shape, axis)
        return
    idx = _need_const(cx, node, 1, "indices").astype(np.int64)
    idx = np.where(idx < 0, idx + shape[axis], idx)
    if idx.size and (idx.min() < 0 or idx.max() >= shape[axis]):
        raise _unsupported(cx, node, f"indices must lie in [{-shape[axis]}, {shape[axis] - 1}] on axis {axis}")
    coords = list(np.indices(idx.shape))
    coords[axis] = idx  # pyright: ignore[reportCallIssue, reportArgumentType]  # numpy's stubs type list(np.indices(...)) as a list of scalars; they are index arrays
    rows = np.ravel_multi_index(tuple(coords), shape).astype(np.int32)
    flat = cx.emit(ascend.ReshapeOp, [x], cx.tensor((math.prod(shape),), _dtype(x)))
    y = cx.emit(
        cls, [flat, cx.new_const(rows.reshape(-1), f"{node.name}/rows")], cx.tensor((rows.size,), _dtype(x)), axis=0
    )
    cx.emit(ascend.ReshapeOp, [y], node.outputs[0])


def _gather_elements_dynamic(cx: Converter, node: Node, x: SSAValue, shape: tuple[int, ...], axis: int) -> None:
    idx = cx.value(node.inputs[1])
    ishape = ascend.shape_of(idx)
    if _dtype(idx) != "i32":  # the index arithmetic in int32 (Less has no int64 kernel); positions < 2^31
        idx = cx.emit(ascend.CastOp, [idx], cx.tensor(ishape, "i32"))
    coords = list(np.indices(ishape))
    coords[axis] = np.zeros(ishape, np.int64)
    base = np.asarray(np.ravel_multi_index(tuple(coords), shape), np.int32)
    n, stride = shape[axis], math.prod(shape[axis + 1 :])
    negative = cx.emit(ascend.LessOp, [idx, _scalar(cx, 0, idx, f"{node.name}/zero")], cx.tensor(ishape, "i1"))
    wrapped = cx.emit(ascend.AddOp, [idx, _scalar(cx, n, idx, f"{node.name}/n")], cx.tensor(ishape, "i32"))
    idx = cx.emit(ascend.SelectV2Op, [negative, wrapped, idx], cx.tensor(ishape, "i32"))
    scaled = cx.emit(ascend.MulOp, [idx, _scalar(cx, stride, idx, f"{node.name}/stride")], cx.tensor(ishape, "i32"))
    rows = cx.emit(ascend.AddOp, [scaled, cx.new_const(base, f"{node.name}/base")], cx.tensor(ishape, "i32"))
    flat = cx.emit(ascend.ReshapeOp, [x], cx.tensor((math.prod(shape),), _dtype(x)))
    cx.emit(_op("GatherV2D"), [flat, rows], node.outputs[0], axis=0)


@converter("Trilu")
def _trilu(cx: Converter, node: Node) -> None:
    """Keep the upper (lower) triangle from diagonal k, zero elsewhere: SelectV2 with a constant
    mask (exact, unlike a multiplication by 0/1, which turns inf into NaN)."""
    cls = _op("SelectV2")
    x = cx.value(node.inputs[0])
    k = int(_need_const(cx, node, 1, "k").reshape(-1)[0]) if node.input(1) else 0
    rows, cols = ascend.shape_of(x)[-2:]
    ones = np.ones((rows, cols), np.bool_)
    mask = np.triu(ones, k) if int(node.attr("upper", 1)) else np.tril(ones, k)
    cx.emit(
        cls, [cx.new_const(mask, f"{node.name}/mask"), x, _scalar(cx, 0.0, x, f"{node.name}/zero")], node.outputs[0]
    )


def _slice_axis(cx: Converter, x: SSAValue, axis: int, start: int, end: int, out: str | Any) -> SSAValue:
    """x[..., start:end, ...] on one axis with StridedSliceD (every other axis whole)."""
    cls = _op("StridedSliceD")
    n = axis + 1
    begin, stop = [0] * n, [0] * n
    begin[axis], stop[axis] = start, end
    mask = ((1 << n) - 1) & ~(1 << axis)
    return cx.emit(cls, [x], out, begin=begin, end=stop, strides=[1] * n, begin_mask=mask, end_mask=mask)


@converter("Split")
def _split(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    shape = ascend.shape_of(x)
    axis = _node_axis(cx, node, 0, len(shape))
    outs = list(node.outputs)
    sizes = [cx.shape(o)[axis] for o in outs]
    start = 0
    for o, size in zip(outs, sizes):
        if o:
            _slice_axis(cx, x, axis, start, start + size, o)
        start += size


@converter("Slice")
def _slice(cx: Converter, node: Node) -> None:
    cls = _op("StridedSliceD")
    x = cx.value(node.inputs[0])
    rank = len(ascend.shape_of(x))
    if cx.opset < 10:
        starts, ends = list(node.attr("starts")), list(node.attr("ends"))
        axes = list(node.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = [int(v) for v in _need_const(cx, node, 1, "starts").reshape(-1)]
        ends = [int(v) for v in _need_const(cx, node, 2, "ends").reshape(-1)]
        axes = (
            [int(v) for v in _need_const(cx, node, 3, "axes").reshape(-1)]
            if node.input(3)
            else list(range(len(starts)))
        )
        steps = [int(v) for v in _need_const(cx, node, 4, "steps").reshape(-1)] if node.input(4) else [1] * len(starts)
    axes = [axis_in(a, rank) for a in axes]
    n = max(axes) + 1 if axes else 0
    begin, end, strides = [0] * n, [0] * n, [1] * n
    mask = (1 << n) - 1
    for s, e, a, st in zip(starts, ends, axes, steps):
        begin[a], end[a], strides[a] = s, e, st
        mask &= ~(1 << a)
    cx.emit(cls, [x], node.outputs[0], begin=begin, end=end, strides=strides, begin_mask=mask, end_mask=mask)


@converter("Expand")
def _expand(cx: Converter, node: Node) -> None:
    cls = _op("BroadcastToD")
    cx.emit(cls, [cx.value(node.inputs[0])], node.outputs[0], shape=list(cx.shape(node.outputs[0])))


@converter("Tile")
def _tile(cx: Converter, node: Node) -> None:
    cls = _op("TileD")
    repeats = [int(v) for v in _need_const(cx, node, 1, "repeats").reshape(-1)]
    cx.emit(cls, [cx.value(node.inputs[0])], node.outputs[0], multiples=repeats)


@converter("LayerNormalization")
def _layer_norm(cx: Converter, node: Node) -> None:
    if any(node.outputs[1:]):
        raise _unsupported(cx, node, "only the first output (Y) is supported")
    x = cx.value(node.inputs[0])
    shape = ascend.shape_of(x)
    axis = _node_axis(cx, node, -1, len(shape))
    gamma = cx.value(node.inputs[1])
    beta = (
        cx.value(node.inputs[2])
        if node.input(2)
        else cx.new_const(np.zeros(shape[axis:], np.float32), f"{node.name}/zero_bias", _dtype(x))
    )
    stat = cx.tensor(shape[:axis] + (1,) * (len(shape) - axis), _dtype(x))
    op = ascend.LayerNormOp(
        x,
        gamma,
        beta,
        result_types=[cx.type_of(node.outputs[0]), stat, stat],
        name=node.name,
        begin_norm_axis=axis,
        begin_params_axis=axis,
        epsilon=float(node.attr("epsilon", 1e-5)),
    )
    assert cx.block is not None
    cx.block.add_op(op)
    cx.bind(node.outputs[0], op.results[0])


from ascend_mp.frontend.converters_extra import through_2d  # noqa: E402 (registers its converters too)
from ascend_mp.frontend.registry import CONVERTERS  # noqa: E402

for _t in ("Conv", "MaxPool", "AveragePool"):
    CONVERTERS[_t] = through_2d(CONVERTERS[_t])
