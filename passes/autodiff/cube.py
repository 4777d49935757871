"""Gradient rules of the cube ops: matrix products and convolutions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import dtype, shape, tensor
from ascend_mp.passes.autodiff.base import GradContext, Grads, rule, unbroadcast


def matmul_shape(a: Sequence[int], b: Sequence[int], ta: bool, tb: bool) -> list[int]:
    m = a[-1] if ta else a[-2]
    n = b[-2] if tb else b[-1]
    batch = A.broadcast_shape(a[:-2], b[:-2]) or ()
    return [*batch, m, n]


def matmul_grads(
    c: GradContext, x1: SSAValue, x2: SSAValue, ta: bool, tb: bool, cls: type[A.AscendOp], flags: tuple[str, str]
) -> Grads:
    """d(op(x1) @ op(x2)) for MatMul/MatMulV2 (`transpose_x*`) and BatchMatMul (`adj_x*`)."""
    e = c.e
    dy = e.cast(c.dy(), dtype(x1))
    fa, fb = flags

    def mm(a: SSAValue, b: SSAValue, t1: bool, t2: bool, like: SSAValue) -> SSAValue:
        out = matmul_shape(shape(a), shape(b), t1, t2)
        operands: list[SSAValue | None] = [a, b] if cls is A.BatchMatMulOp else [a, b, None]
        r = e.one(cls, *operands, type_=tensor(out, dtype(like)), **{fa: t1, fb: t2})  # pyright: ignore[reportArgumentType]  # the keys are transpose/adj attribute names, never `name`
        return unbroadcast(e, r, shape(like))

    d1 = d2 = None
    if c.needs[0]:
        if not ta:
            d1 = mm(dy, x2, False, not tb, x1)
        else:
            d1 = mm(x2, dy, tb, True, x1)
    if c.needs[1]:
        if not tb:
            d2 = mm(x1, dy, not ta, False, x2)
        else:
            d2 = mm(dy, x1, True, ta, x2)
    return [d1, d2]


def conv_props(op: A.AscendOp) -> dict[str, Any]:
    return {
        k: op.properties[k] for k in ("strides", "pads", "dilations", "groups", "data_format") if k in op.properties
    }


# --------------------------------------------------------------------------------------
# Rules: cube ops
# --------------------------------------------------------------------------------------


@rule(A.MatMulOp, A.MatMulV2Op)
def _matmul(c: GradContext) -> Grads:
    op = c.op
    assert isinstance(op, A.MatMulBase)
    grads = matmul_grads(c, op.x1, op.x2, op.transpose_x1, op.transpose_x2, type(op), ("transpose_x1", "transpose_x2"))
    if op.bias is not None:
        grads.append(
            c.e.one(A.BiasAddGradOp, c.e.cast(c.dy(), dtype(op.bias)), type_=op.bias.type) if c.needs[2] else None
        )
    return grads


@rule(A.BatchMatMulOp)
def _batch_matmul(c: GradContext) -> Grads:
    op = c.op
    assert isinstance(op, A.BatchMatMulOp)
    return matmul_grads(c, op.x1, op.x2, op.adj_x1, op.adj_x2, A.BatchMatMulOp, ("adj_x1", "adj_x2"))


@rule(A.Conv2DOp)
def _conv2d(c: GradContext) -> Grads:
    op, e = c.op, c.e
    assert isinstance(op, A.Conv2DOp)
    dy = e.cast(c.dy(), dtype(op.x))
    props = conv_props(op)
    dx = (
        e.one(A.Conv2DBackpropInputOp, op.filter, dy, type_=op.x.type, input_size=list(shape(op.x)), **props)
        if c.needs[0]
        else None
    )
    dw = (
        e.one(A.Conv2DBackpropFilterOp, op.x, dy, type_=op.filter.type, filter_size=list(shape(op.filter)), **props)
        if c.needs[1]
        else None
    )
    grads: Grads = [dx, dw]
    if op.bias is not None:
        fmt = op.data_format
        grads.append(
            e.one(A.BiasAddGradOp, e.cast(c.dy(), dtype(op.bias)), type_=op.bias.type, data_format=fmt)
            if c.needs[2]
            else None
        )
    return grads


@rule(A.DepthwiseConv2DOp)
def _depthwise(c: GradContext) -> Grads:
    """As a grouped Conv2D (groups = C): filter [KH, KW, C, M] -> OIHW [C*M, 1, KH, KW] (HWIO [KH, KW, 1, C*M] for NHWC)."""
    op, e = c.op, c.e
    assert isinstance(op, A.DepthwiseConv2DOp)
    dy = e.cast(c.dy(), dtype(op.x))
    kh, kw, ch, mult = shape(op.filter)
    nchw = op.data_format == "NCHW"
    props: dict[str, Any] = conv_props(op) | {"groups": ch}
    if nchw:
        t = e.one(A.TransposeOp, op.filter, type_=tensor((ch, mult, kh, kw), dtype(op.filter)), perm=[2, 3, 0, 1])
        grouped_shape = (ch * mult, 1, kh, kw)
        grouped = e.reshape(t, grouped_shape)
    else:
        grouped_shape = (kh, kw, 1, ch * mult)
        grouped = e.reshape(op.filter, grouped_shape)
    dx = (
        e.one(A.Conv2DBackpropInputOp, grouped, dy, type_=op.x.type, input_size=list(shape(op.x)), **props)
        if c.needs[0]
        else None
    )
    dw = None
    if c.needs[1]:
        dg = e.one(
            A.Conv2DBackpropFilterOp,
            op.x,
            dy,
            type_=tensor(grouped_shape, dtype(op.filter)),
            filter_size=list(grouped_shape),
            **props,
        )
        if nchw:
            dg = e.reshape(dg, (ch, mult, kh, kw))
            dw = e.one(A.TransposeOp, dg, type_=op.filter.type, perm=[2, 3, 0, 1])
        else:
            dw = e.reshape(dg, shape(op.filter))
    grads: Grads = [dx, dw]
    if op.bias is not None:
        grads.append(
            e.one(A.BiasAddGradOp, e.cast(c.dy(), dtype(op.bias)), type_=op.bias.type, data_format=op.data_format)
            if c.needs[2]
            else None
        )
    return grads


@rule(A.Conv2DBackpropInputOp)
def _conv_bp_input(c: GradContext) -> Grads:
    """y = conv^T(g, W): dg = conv(dy, W), dW = Conv2DBackpropFilter(dy, g)."""
    op, e = c.op, c.e
    assert isinstance(op, A.Conv2DBackpropInputOp)
    dy = e.cast(c.dy(), dtype(op.filter))
    props = conv_props(op)
    dw = (
        e.one(
            A.Conv2DBackpropFilterOp,
            dy,
            op.out_backprop,
            type_=op.filter.type,
            filter_size=list(shape(op.filter)),
            **props,
        )
        if c.needs[0]
        else None
    )
    dg = e.one(A.Conv2DOp, dy, op.filter, None, type_=op.out_backprop.type, **props) if c.needs[1] else None
    return [dw, dg]


@rule(A.Conv2DBackpropFilterOp)
def _conv_bp_filter(c: GradContext) -> Grads:
    """y = dW(x, g): dx = Conv2DBackpropInput(dy, g), dg = conv(x, dy)."""
    op, e = c.op, c.e
    assert isinstance(op, A.Conv2DBackpropFilterOp)
    dy = e.cast(c.dy(), dtype(op.x))
    props = conv_props(op)
    dx = (
        e.one(A.Conv2DBackpropInputOp, dy, op.out_backprop, type_=op.x.type, input_size=list(shape(op.x)), **props)
        if c.needs[0]
        else None
    )
    dg = e.one(A.Conv2DOp, op.x, dy, None, type_=op.out_backprop.type, **props) if c.needs[1] else None
    return [dx, dg]


@rule(A.BatchMatMulV2Op)
def _batch_matmul_v2(c: GradContext) -> Grads:
    """As BatchMatMul (`adj_x*`, broadcast batch dimensions summed back); the optional bias over
    the last dimension gets dy summed over every other dimension."""
    op = c.op
    assert isinstance(op, A.BatchMatMulV2Op)
    grads = matmul_grads(c, op.x1, op.x2, op.adj_x1, op.adj_x2, A.BatchMatMulV2Op, ("adj_x1", "adj_x2"))
    if op.bias is not None:
        dy = c.e.cast(c.dy(), dtype(op.bias))
        grads.append(c.e.reduce_sum(dy, range(len(shape(dy)) - 1)) if c.needs[2] else None)
    return grads
