"""Gradient rules of gradient ops (second order, where they are simple)."""

from __future__ import annotations

from typing import Any

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import dtype, shape
from ascend_mp.passes.autodiff.base import GradContext, Grads, broadcast_to, rule


@rule(A.ReluGradOp)
def _relu_grad(c: GradContext) -> Grads:
    op = c.op
    return [c.e.one(A.ReluGradOp, c.e.cast(c.dy(), dtype(op.operands[0])), op.operands[1]), None]


@rule(A.LeakyReluGradOp)
def _leaky_relu_grad(c: GradContext) -> Grads:
    op = c.op
    return [c.e.one(A.LeakyReluGradOp, c.dy(), op.operands[1], negative_slope=op.properties["negative_slope"]), None]


@rule(A.SigmoidGradOp)
def _sigmoid_grad(c: GradContext) -> Grads:
    """z = dy * y * (1 - y): d dy = SigmoidGrad(y, dz); d y = dz * dy * (1 - 2y)."""
    e = c.e
    y, g = c.op.operands
    dz = c.dy()
    dy_ = e.one(A.SigmoidGradOp, y, dz) if c.needs[1] else None
    d_y = e.mul(e.mul(dz, g), e.sub(e.scalar(1.0, y), e.mul(y, e.scalar(2.0, y)))) if c.needs[0] else None
    return [d_y, dy_]


@rule(A.TanhGradOp)
def _tanh_grad(c: GradContext) -> Grads:
    """z = dy * (1 - y^2): d dy = TanhGrad(y, dz); d y = -2 dz dy y."""
    e = c.e
    y, g = c.op.operands
    dz = c.dy()
    dy_ = e.one(A.TanhGradOp, y, dz) if c.needs[1] else None
    d_y = e.mul(e.mul(dz, g), e.mul(y, e.scalar(-2.0, y))) if c.needs[0] else None
    return [d_y, dy_]


@rule(A.SoftmaxGradOp)
def _softmax_grad(c: GradContext) -> Grads:
    """z = (g - sum(g s)) s over the last axis: d g = SoftmaxGrad(s, dz); d s = dz (g - sum(g s)) - g sum(dz s)."""
    e = c.e
    s, g = c.op.operands
    dz = c.dy()
    last = [len(shape(s)) - 1]
    dg = e.one(A.SoftmaxGradOp, s, dz) if c.needs[1] else None
    ds = None
    if c.needs[0]:
        gs = e.reduce_sum(e.mul(g, s), last, keep_dims=True)
        zs = e.reduce_sum(e.mul(dz, s), last, keep_dims=True)
        ds = e.sub(e.mul(dz, e.sub(g, gs)), e.mul(g, zs))
    return [ds, dg]


@rule(A.BiasAddGradOp)
def _bias_add_grad(c: GradContext) -> Grads:
    op, e = c.op, c.e
    assert isinstance(op, A.BiasAddGradOp)
    x = op.operands[0]
    rank = len(shape(x))
    ch = 1 if op.data_format == "NCHW" else rank - 1
    stat = [1] * rank
    stat[ch] = shape(x)[ch]
    return [broadcast_to(e, e.reshape(e.cast(c.dy(), dtype(x)), stat), shape(x))]


@rule(A.AvgPoolGradOp)
def _avg_pool_grad(c: GradContext) -> Grads:
    """AvgPoolGrad is the adjoint of AvgPool, so its adjoint is AvgPool."""
    op = c.op
    props: dict[str, Any] = {k: op.properties[k] for k in ("ksize", "strides", "padding", "data_format")}
    return [c.e.one(A.AvgPoolOp, c.dy(), type_=op.operands[0].type, **props)]
