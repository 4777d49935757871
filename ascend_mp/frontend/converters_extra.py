"""Converters of the ONNX ops that segmentation and detection models bring: Pad, Resize and the
reductions beyond Sum/Mean/Max. Registered into `registry.CONVERTERS` like every converter
(kept apart so the main module stays under the house's size limit).

The mapping (docs/design.md §10): Pad -> PadV3D; Resize -> ResizeD (CANN's ONNX-semantics resize,
nearest and linear); ReduceMin -> ReduceMin; ReduceProd -> ReduceProd; ReduceL1 -> Maximum(x, Neg x)
+ ReduceSum (Abs likewise; Ceil -> Neg(Floor(Neg x))); ReduceL2 -> Square + ReduceSum + Sqrt; ReduceSumSquare -> Square + ReduceSum;
ReduceLogSumExp -> ReduceMax + Sub + Exp + ReduceSum + Log + Add (shifted by the maximum, as
onnxruntime computes it); InstanceNormalization -> InstanceNorm; CumSum -> CumsumD; ScatterND -> ScatterNdUpdate. 1-d Conv, MaxPool and AveragePool
go through the 2-d kernels, as CANN's ONNX parser does: Reshape (N, C, L) -> (N, C, 1, L), the 2-d
op with a (1, k) window, Reshape back (:func:`through_2d` wraps the 2-d converters). 3-d ones fold
the depth into the batch: per depth tap, StridedSliceD of the (PadV3D-padded) input, Transpose +
Reshape to (N * D_out, C, H, W), the 2-d op with that tap's window, then Add (Conv), Maximum
(MaxPool) or Add and Mul by 1 / k_d (AveragePool) over the taps, Reshape + Transpose back. Einsum of one
or two operands -> ReduceSum (indices of one operand only), Transpose/Reshape into (batch, M, K) x
(batch, K, N), BatchMatMulV2 (`adj_x*` instead of a transpose where that suffices), Reshape and
Transpose into the output's order; other equations (ellipsis, repeated indices, three operands) are
one-line errors naming the node and the equation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from onnx import helper
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend
from ascend_mp.dialects.ascend.shape import RESIZE_COORDINATES, RESIZE_MODES
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.frontend.registry import Convert, Node, Unsupported
from ascend_mp.frontend.registry import converter as _converter

if TYPE_CHECKING:
    from ascend_mp.frontend.onnx_import import Converter


def _unsupported(cx: Converter, node: Node, why: str) -> Unsupported:
    return Unsupported(f"{cx.label}: node '{node.name}' ({node.op_type}): {why}")


def _need_const(cx: Converter, node: Node, index: int, what: str) -> np.ndarray[Any, Any]:
    value = cx.const(node.input(index))
    if value is None:
        raise _unsupported(cx, node, f"{what} (input {index}) must be a constant")
    return value


def _dtype(v: SSAValue) -> str:
    d = tensor_dtype(v.type)
    assert d is not None
    return d


# --------------------------------------------------------------------------------------
# Pad
# --------------------------------------------------------------------------------------

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge"}


@_converter("Pad")
def _pad(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    rank = len(ascend.shape_of(x))
    mode = node.attr("mode", "constant")
    if isinstance(mode, bytes):
        mode = mode.decode()
    if mode not in _PAD_MODES:
        raise _unsupported(cx, node, f"mode '{mode}' is not supported (constant, reflect, edge)")
    if cx.opset >= 11:
        pads = [int(p) for p in _need_const(cx, node, 1, "pads").reshape(-1)]
        value = 0.0 if node.input(2) is None else float(_need_const(cx, node, 2, "constant_value").reshape(-1)[0])
        axes = (
            list(range(rank))
            if node.input(3) is None
            else [int(a) % rank for a in _need_const(cx, node, 3, "axes").reshape(-1)]
        )
    else:
        pads = [int(p) for p in node.attr("pads")]
        value = float(node.attr("value", 0.0))
        axes = list(range(rank))
    if len(pads) != 2 * len(axes):
        raise _unsupported(cx, node, f"expects {2 * len(axes)} pads for {len(axes)} axes, got {len(pads)}")
    if any(p < 0 for p in pads):
        raise _unsupported(cx, node, f"negative pads (cropping) are not supported, got {pads}")
    pairs = [[0, 0] for _ in range(rank)]
    for i, a in enumerate(axes):
        pairs[a] = [pads[i], pads[i + len(axes)]]
    flat = [p for pair in pairs for p in pair]
    cx.emit(ascend.PadV3DOp, [x], node.outputs[0], paddings=flat, constant_values=value, mode=_PAD_MODES[mode])


# --------------------------------------------------------------------------------------
# Resize
# --------------------------------------------------------------------------------------


def _text(node: Node, key: str, default: str) -> str:
    v = node.attr(key, default)
    return v.decode() if isinstance(v, bytes) else str(v)


@_converter("Resize")
def _resize(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    src, out = ascend.shape_of(x), cx.shape(node.outputs[0])
    mode = _text(node, "mode", "nearest")
    coords = _text(node, "coordinate_transformation_mode", "half_pixel")
    nearest = _text(node, "nearest_mode", "round_prefer_floor")
    if mode not in RESIZE_MODES:
        raise _unsupported(cx, node, f"mode '{mode}' is not supported (nearest, linear)")
    if coords not in RESIZE_COORDINATES:
        raise _unsupported(cx, node, f"coordinate_transformation_mode '{coords}' is not supported")
    if len(src) < 3 or tuple(src[:2]) != tuple(out[:2]):
        raise _unsupported(
            cx, node, f"only the spatial dimensions (2 and on) may be resized, got {list(src)} -> {list(out)}"
        )
    if node.attr("antialias", 0) and any(o < i for i, o in zip(src, out)):
        raise _unsupported(cx, node, "antialias=1 when downsampling is not supported")
    if node.attr("axes") is not None or _text(node, "keep_aspect_ratio_policy", "stretch") != "stretch":
        raise _unsupported(cx, node, "the axes and keep_aspect_ratio_policy attributes are not supported")
    scales_name = node.input(2) if cx.opset >= 11 else node.input(1)
    scales = cx.const(scales_name)
    if scales is not None and scales.size and node.input(3) is None:
        for i, o, s in zip(src, out, scales.reshape(-1).tolist()):
            if abs(float(s) * i - o) > 1e-6 * o:  # the transform uses the given scale: it must be out / in
                raise _unsupported(cx, node, f"scale {s} does not map size {i} exactly to {o}; give sizes instead")
    cx.emit(
        ascend.ResizeDOp, [x], node.outputs[0], mode=mode, coordinate_transformation_mode=coords, nearest_mode=nearest
    )


# --------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------


def _reduce_axes(cx: Converter, node: Node, x: SSAValue) -> list[int] | None:
    """The reduced axes (all when none are given), or None for the no-op of `noop_with_empty_axes`."""
    if cx.opset >= 18:
        axes = None if node.input(1) is None else [int(a) for a in _need_const(cx, node, 1, "axes").reshape(-1)]
    else:
        axes = node.attr("axes")
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            return None
        return list(range(len(ascend.shape_of(x))))
    return [int(a) for a in axes]


def _reduced_type(cx: Converter, x: SSAValue, axes: list[int], keep: bool) -> Any:
    shape = ascend.shape_of(x)
    rank = len(shape)
    red = {a % rank for a in axes}
    dims = (
        [1 if i in red else d for i, d in enumerate(shape)]
        if keep
        else [d for i, d in enumerate(shape) if i not in red]
    )
    return cx.tensor(dims, _dtype(x))


_DIRECT = {"ReduceMin": ascend.ReduceMinOp, "ReduceProd": ascend.ReduceProdOp}


@_converter("ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp")
def _reduce(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    axes = _reduce_axes(cx, node, x)
    keep = bool(node.attr("keepdims", 1))
    out = node.outputs[0]
    if axes is None:
        _reduce_noop(cx, node, x)
        return
    op = node.op_type
    if op in _DIRECT:
        cx.emit(_DIRECT[op], [x], out, axes=axes, keep_dims=keep)
        return
    full = cx.tensor(ascend.shape_of(x), _dtype(x))
    if op == "ReduceLogSumExp":
        m = cx.emit(ascend.ReduceMaxOp, [x], _reduced_type(cx, x, axes, True), axes=axes, keep_dims=True)
        e = cx.emit(ascend.ExpOp, [cx.emit(ascend.SubOp, [x, m], full)], full)
        s = cx.emit(
            ascend.LogOp,
            [cx.emit(ascend.ReduceSumOp, [e], _reduced_type(cx, x, axes, True), axes=axes, keep_dims=True)],
            m.type,  # pyright: ignore[reportArgumentType]
        )
        if keep:
            cx.emit(ascend.AddOp, [s, m], out)
        else:
            cx.emit(ascend.ReshapeOp, [cx.emit(ascend.AddOp, [s, m], m.type)], out)  # pyright: ignore[reportArgumentType]
        return
    if op == "ReduceL1":
        mag = _abs(cx, x, full)
    else:
        mag = cx.emit(ascend.SquareOp, [x], full)
    if op == "ReduceL2":
        total = cx.emit(ascend.ReduceSumOp, [mag], _reduced_type(cx, x, axes, keep), axes=axes, keep_dims=keep)
        cx.emit(ascend.SqrtOp, [total], out)
    else:
        cx.emit(ascend.ReduceSumOp, [mag], out, axes=axes, keep_dims=keep)


def _abs(cx: Converter, x: SSAValue, out: Any) -> SSAValue:
    """|x| exactly, as Maximum(x, Neg x) (CANN's Abs is not modelled)."""
    return cx.emit(ascend.MaximumOp, [x, cx.emit(ascend.NegOp, [x], cx.tensor(ascend.shape_of(x), _dtype(x)))], out)


@_converter("Abs")
def _abs_node(cx: Converter, node: Node) -> None:
    _abs(cx, cx.value(node.inputs[0]), node.outputs[0])


@_converter("Ceil")
def _ceil(cx: Converter, node: Node) -> None:
    """ceil(x) = -floor(-x), exactly."""
    x = cx.value(node.inputs[0])
    full = cx.tensor(ascend.shape_of(x), _dtype(x))
    floor = cx.emit(ascend.FloorOp, [cx.emit(ascend.NegOp, [x], full)], full)
    cx.emit(ascend.NegOp, [floor], node.outputs[0])


def _reduce_noop(cx: Converter, node: Node, x: SSAValue) -> None:
    """`noop_with_empty_axes` with no axes: the reduction over nothing applies the element function only."""
    op, out = node.op_type, node.outputs[0]
    full = cx.tensor(ascend.shape_of(x), _dtype(x))
    if op == "ReduceL1":
        _abs(cx, x, out)
    elif op == "ReduceSumSquare":
        cx.emit(ascend.SquareOp, [x], out)
    elif op == "ReduceL2":
        cx.emit(ascend.SqrtOp, [cx.emit(ascend.SquareOp, [x], full)], out)
    else:  # Min, Prod and LogSumExp of one element are the element
        cx.bind(out, x)


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


@_converter("InstanceNormalization")
def _instance_norm(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    shape = ascend.shape_of(x)
    if len(shape) < 3:
        raise _unsupported(cx, node, f"expects an input of rank >= 3 (N, C, spatial...), got shape {list(shape)}")
    stat = cx.tensor(shape[:2] + (1,) * (len(shape) - 2), _dtype(x))
    out = cx.type_of(node.outputs[0])
    y = cx.emit(
        ascend.InstanceNormOp,
        [x, cx.value(node.inputs[1]), cx.value(node.inputs[2])],
        [out, stat, stat],
        epsilon=float(node.attr("epsilon", 1e-5)),
    )
    cx.bind(node.outputs[0], y)


# --------------------------------------------------------------------------------------
# 1-d convolution and pooling through the 2-d kernels
# --------------------------------------------------------------------------------------


def _lift_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """A 1-d node's window attributes as the 2-d node's over (H = 1, W = L)."""
    out = dict(attrs)
    for key, one in (("kernel_shape", 1), ("strides", 1), ("dilations", 1)):
        if key in attrs:
            out[key] = [one, *[int(v) for v in attrs[key]]]
    if "pads" in attrs:
        begin, end = (int(v) for v in attrs["pads"])
        out["pads"] = [0, begin, 0, end]
    return out


def through_2d(base: Convert) -> Convert:
    """The converter `base` of a 2-d Conv/MaxPool/AveragePool, extended to 1-d (rank-3 input) and
    3-d (rank-5 input) nodes."""

    def convert(cx: Converter, node: Node) -> None:
        rank = len(cx.shape(node.inputs[0]))
        if rank == 5:
            _depth_taps(cx, node, base)
            return
        if rank != 3:
            base(cx, node)
            return
        x = cx.value(node.inputs[0])
        n, c, length = ascend.shape_of(x)
        dtype = _dtype(x)
        inputs = list(node.inputs)
        inputs[0] = f"{node.name}/input_2d"
        cx.bind(inputs[0], cx.emit(ascend.ReshapeOp, [x], cx.tensor((n, c, 1, length), dtype)))
        if node.op_type == "Conv":
            w_name = node.inputs[1]
            w_const = cx.const(w_name)
            inputs[1] = f"{w_name}/filter_2d"
            if w_const is not None:
                o, cg, k = w_const.shape
                cx.graph.consts[inputs[1]] = w_const.reshape(o, cg, 1, k)
            else:
                w = cx.value(w_name)
                o, cg, k = ascend.shape_of(w)
                cx.bind(inputs[1], cx.emit(ascend.ReshapeOp, [w], cx.tensor((o, cg, 1, k), _dtype(w))))
        out = node.outputs[0]
        cx.type_of(out)  # a static output type (or the importer's one-line error)
        elem_type, shape = cx.graph.types[out]
        assert shape is not None
        lifted = f"{out}/output_2d"
        cx.graph.types[lifted] = (elem_type, (shape[0], shape[1], 1, shape[2]))
        proto = helper.make_node(
            node.op_type, inputs, [lifted, *node.outputs[1:]], name=node.name, **_lift_attrs(node.attrs)
        )
        base(cx, Node(proto))
        cx.emit(ascend.ReshapeOp, [cx.value(lifted)], out)

    return convert


# --------------------------------------------------------------------------------------
# Einsum
# --------------------------------------------------------------------------------------


class _Einsum:
    """Emits one Einsum node's ops; each value travels with its index letters."""

    def __init__(self, cx: Converter, node: Node, dtype: str):
        self.cx, self.node, self.dtype = cx, node, dtype

    def emit(self, cls: type[ascend.AscendOp], operands: list[SSAValue], shape: list[int], **props: Any) -> SSAValue:
        return self.cx.emit(cls, operands, self.cx.tensor(shape, self.dtype), **props)

    def reduce(self, v: SSAValue, letters: str, keep: str) -> tuple[SSAValue, str]:
        """Sum `v` over its letters not in `keep`."""
        axes = [i for i, c in enumerate(letters) if c not in keep]
        if not axes:
            return v, letters
        shape = [d for i, d in enumerate(ascend.shape_of(v)) if i not in axes]
        kept = "".join(c for c in letters if c in keep)
        return self.emit(ascend.ReduceSumOp, [v], shape, axes=axes, keep_dims=False), kept

    def order(self, v: SSAValue, letters: str, want: str) -> SSAValue:
        if letters == want:
            return v
        perm = [letters.index(c) for c in want]
        shape = ascend.shape_of(v)
        return self.emit(ascend.TransposeOp, [v], [shape[p] for p in perm], perm=perm)

    def reshape(self, v: SSAValue, shape: list[int]) -> SSAValue:
        return v if list(ascend.shape_of(v)) == shape else self.emit(ascend.ReshapeOp, [v], shape)


def _einsum_terms(cx: Converter, node: Node, ranks: list[int]) -> tuple[list[str], str]:
    raw = node.attr("equation", "")
    eq = (raw.decode() if isinstance(raw, bytes) else str(raw)).replace(" ", "")

    def bad(why: str) -> Unsupported:
        return _unsupported(cx, node, f"equation '{eq}' is not supported: {why}")

    if "..." in eq:
        raise bad("an ellipsis")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) not in (1, 2) or len(terms) != len(ranks):
        raise bad(f"{len(terms)} operand terms for {len(ranks)} inputs (one or two operands are supported)")
    if not arrow:  # implicit output: the letters used once, in alphabetical order
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    for t, r in zip(terms, ranks):
        if not t.isalpha() or len(t) != r:
            raise bad(f"term '{t}' does not name the {r} dimensions of its operand with letters")
        if len(set(t)) != len(t):
            raise bad(f"a repeated index in '{t}' (a diagonal)")
    if not (out == "" or out.isalpha()) or len(set(out)) != len(out) or any(c not in lhs for c in out):
        raise bad(f"output '{out}' must name distinct indices of the operands")
    return terms, out


@_converter("Einsum")
def _einsum(cx: Converter, node: Node) -> None:
    xs = [cx.value(n) for n in node.inputs]
    terms, out = _einsum_terms(cx, node, [len(ascend.shape_of(x)) for x in xs])
    e = _Einsum(cx, node, _dtype(xs[0]))
    size = {c: d for x, t in zip(xs, terms) for c, d in zip(t, ascend.shape_of(x))}
    for x, t in zip(xs, terms):
        for c, d in zip(t, ascend.shape_of(x)):
            if size[c] != d:
                raise _unsupported(cx, node, f"equation index '{c}' has sizes {size[c]} and {d}")
    if len(xs) == 1:
        v, letters = e.reduce(xs[0], terms[0], out)
        cx.bind(node.outputs[0], e.order(v, letters, out))
        return
    (a, la), (b, lb) = e.reduce(xs[0], terms[0], out + terms[1]), e.reduce(xs[1], terms[1], out + terms[0])
    batch = "".join(c for c in out if c in la and c in lb)
    contract = "".join(c for c in la if c in lb and c not in out)
    lfree = "".join(c for c in la if c not in lb)
    rfree = "".join(c for c in lb if c not in la)
    bdims = [size[c] for c in batch]
    m, k, n = (int(np.prod([size[c] for c in g])) for g in (lfree, contract, rfree))
    adj_a = la == batch + contract + lfree and len(lfree) <= 1 and len(contract) <= 1
    adj_b = lb == batch + rfree + contract and len(rfree) <= 1 and len(contract) <= 1
    a2 = e.reshape(
        e.order(a, la, batch + (contract + lfree if adj_a else lfree + contract)), bdims + ([k, m] if adj_a else [m, k])
    )
    b2 = e.reshape(
        e.order(b, lb, batch + (rfree + contract if adj_b else contract + rfree)), bdims + ([n, k] if adj_b else [k, n])
    )
    y = e.emit(ascend.BatchMatMulV2Op, [a2, b2], bdims + [m, n], adj_x1=adj_a or None, adj_x2=adj_b or None)
    letters = batch + lfree + rfree
    y = e.reshape(y, [size[c] for c in letters])
    cx.bind(node.outputs[0], e.order(y, letters, out))


# --------------------------------------------------------------------------------------
# CumSum
# --------------------------------------------------------------------------------------


@_converter("CumSum")
def _cumsum(cx: Converter, node: Node) -> None:
    x = cx.value(node.inputs[0])
    axis = _need_const(cx, node, 1, "axis").reshape(-1)
    if axis.size != 1:
        raise _unsupported(cx, node, f"expects one axis, got {axis.size}")
    cx.emit(
        ascend.CumsumDOp,
        [x],
        node.outputs[0],
        axis=int(axis[0]),
        exclusive=bool(node.attr("exclusive", 0)),
        reverse=bool(node.attr("reverse", 0)),
    )


# --------------------------------------------------------------------------------------
# ScatterND
# --------------------------------------------------------------------------------------


@_converter("ScatterND")
def _scatter_nd(cx: Converter, node: Node) -> None:
    reduction = _text(node, "reduction", "none")
    if reduction != "none":
        raise _unsupported(cx, node, f"reduction '{reduction}' is not supported (none)")
    data, updates = cx.value(node.inputs[0]), cx.value(node.inputs[2])
    # CANN's kernels take int32 indices (ONNX's are int64): constants are stored as int32, others cast
    known = cx.const(node.inputs[1])
    if known is not None and (not known.size or np.abs(known).max() < 2**31):
        indices = cx.new_const(known.astype(np.int32), f"{node.inputs[1]}/int32")
    else:
        indices = cx.value(node.inputs[1])
        if _dtype(indices) == "i64":
            indices = cx.emit(ascend.CastOp, [indices], cx.tensor(ascend.shape_of(indices), "i32"))
    cx.emit(ascend.ScatterNdUpdateOp, [data, indices, updates], node.outputs[0])


def _window_3d(
    cx: Converter, node: Node, x: tuple[int, ...], kernel: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """(strides, dilations, pads [d0, h0, w0, d1, h1, w1]) of a 3-d node."""
    strides = [int(v) for v in node.attr("strides", [1, 1, 1])]
    dilations = [int(v) for v in node.attr("dilations", [1, 1, 1])]
    auto = _text(node, "auto_pad", "NOTSET")
    if auto == "VALID":
        return strides, dilations, [0] * 6
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        lo: list[int] = []
        hi: list[int] = []
        for size, k, st, d in zip(x[2:], kernel, strides, dilations):
            total = max((-(-size // st) - 1) * st + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            lo.append(small if auto == "SAME_UPPER" else big)
            hi.append(big if auto == "SAME_UPPER" else small)
        return strides, dilations, lo + hi
    return strides, dilations, [int(v) for v in node.attr("pads", [0] * 6)]


def _depth_taps(cx: Converter, node: Node, base: Convert) -> None:
    """A 3-d Conv/MaxPool/AveragePool as one 2-d op per depth tap over (N * D_out, C, H, W)."""
    op = node.op_type
    x = cx.value(node.inputs[0])
    xs = ascend.shape_of(x)
    n, c, depth, h, w = xs
    dtype = _dtype(x)
    out = node.outputs[0]
    ys = cx.shape(out)
    w_const = cx.const(node.input(1)) if op == "Conv" else None
    if op == "Conv" and w_const is None:
        raise _unsupported(cx, node, "a 3-d convolution needs a constant filter")
    kernel = [int(k) for k in (node.attr("kernel_shape") or (w_const.shape[2:] if w_const is not None else []))]
    strides, dilations, pads = _window_3d(cx, node, xs, kernel)
    if op != "Conv" and int(node.attr("ceil_mode", 0)):
        raise _unsupported(cx, node, "ceil_mode=1 is not supported for 3-d pooling")
    include = int(node.attr("count_include_pad", 0))
    if op == "AveragePool" and (pads[0] or pads[3]) and not include:
        raise _unsupported(cx, node, "padding the depth of a 3-d average pool needs count_include_pad=1")
    kd, sd, dd = kernel[0], strides[0], dilations[0]
    d_out = ys[2]
    if pads[0] or pads[3]:
        fill = float("-inf") if op == "MaxPool" else 0.0
        padded = (n, c, depth + pads[0] + pads[3], h, w)
        x = cx.emit(
            ascend.PadV3DOp,
            [x],
            cx.tensor(padded, dtype),
            paddings=[0, 0, 0, 0, pads[0], pads[3], 0, 0, 0, 0],
            constant_values=fill,
        )
    attrs2 = {
        k: v for k, v in node.attrs.items() if k not in ("kernel_shape", "strides", "dilations", "pads", "auto_pad")
    }
    attrs2.update(
        kernel_shape=kernel[1:], strides=strides[1:], dilations=dilations[1:], pads=[pads[1], pads[2], pads[4], pads[5]]
    )
    flat_out = cx.tensor((n * d_out, ys[1], ys[3], ys[4]), dtype)
    total: SSAValue | None = None
    for t in range(kd):
        start = t * dd
        sliced = cx.emit(
            ascend.StridedSliceDOp,
            [x],
            cx.tensor((n, c, d_out, h, w), dtype),
            begin=[0, 0, start, 0, 0],
            end=[n, c, start + (d_out - 1) * sd + 1, h, w],
            strides=[1, 1, sd, 1, 1],
        )
        moved = cx.emit(ascend.TransposeOp, [sliced], cx.tensor((n, d_out, c, h, w), dtype), perm=[0, 2, 1, 3, 4])
        names = [f"{node.name}/tap{t}/input"]
        cx.bind(names[0], cx.emit(ascend.ReshapeOp, [moved], cx.tensor((n * d_out, c, h, w), dtype)))
        if w_const is not None:
            names.append(f"{node.inputs[1]}/tap{t}")
            cx.graph.consts[names[1]] = np.ascontiguousarray(w_const[:, :, t])
            if t == 0 and node.input(2) is not None:
                names.append(node.inputs[2])
        lifted = f"{out}/tap{t}"
        elem_type = cx.graph.types[out][0]
        cx.graph.types[lifted] = (elem_type, tuple(flat_out.get_shape()))
        base(cx, Node(helper.make_node(op, names, [lifted], name=node.name, **attrs2)))
        y = cx.value(lifted)
        if total is None:
            total = y
        else:
            total = cx.emit(ascend.MaximumOp if op == "MaxPool" else ascend.AddOp, [total, y], flat_out)
    assert total is not None
    if op == "AveragePool" and kd > 1:
        total = cx.emit(ascend.MulOp, [total, cx.new_const(np.array(1.0 / kd), f"{node.name}/inv_kd", dtype)], flat_out)
    back = cx.emit(ascend.ReshapeOp, [total], cx.tensor((n, d_out, ys[1], ys[3], ys[4]), dtype))
    cx.emit(ascend.TransposeOp, [back], out, perm=[0, 2, 1, 3, 4])
