"""Gradient rules of reductions, normalisations, pooling, softmax and the loss."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, dtype, shape, tensor
from ascend_mp.errors import AscendPassError
from ascend_mp.passes.autodiff.base import GradContext, Grads, broadcast_to, keep_dims_shape, rule, unary, window


def _axes(op: A.AscendOp, rank: int) -> list[int]:
    return sorted({a % rank for a in op.axes})  # pyright: ignore[reportAttributeAccessIssue]  # called for the Reduce* ops, which all have `axes`


@rule(A.SoftmaxV2Op)
def _softmax(c: GradContext) -> Grads:
    x, y, dy = unary(c)
    e = c.e
    rank = len(shape(x))
    axes = _axes(c.op, rank)
    if axes == [rank - 1]:
        return [e.one(A.SoftmaxGradOp, y, dy)]
    s = e.reduce_sum(e.mul(dy, y), axes, keep_dims=True)
    return [e.mul(e.sub(dy, s), y)]


@rule(A.LogSoftmaxV2Op)
def _log_softmax(c: GradContext) -> Grads:
    """dx = dy - softmax(x) * sum(dy) over the axes."""
    x, y, dy = unary(c)
    e = c.e
    axes = _axes(c.op, len(shape(x)))
    return [e.sub(dy, e.mul(e.one(A.ExpOp, y), e.reduce_sum(dy, axes, keep_dims=True)))]


def _reduced(op: A.AscendOp) -> list[int]:
    assert isinstance(op, A.ReduceOp)
    return list(op.reduced_axes())


@rule(A.ReduceSumOp)
def _reduce_sum(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [broadcast_to(c.e, c.e.reshape(dy, keep_dims_shape(shape(x), _reduced(c.op))), shape(x))]


@rule(A.ReduceMeanOp)
def _reduce_mean(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    axes = _reduced(c.op)
    count = math.prod(shape(x)[a] for a in axes)
    e = c.e
    return [e.div(e.reshape(dy, keep_dims_shape(shape(x), axes)), e.const(float(count), dtype(x), shape(x)))]


@rule(A.ReduceMaxOp)
def _reduce_max(c: GradContext) -> Grads:
    """Shared evenly between the maxima, as TF does: mask = 1 - ReluGrad(1, max - x)."""
    x, y, dy = unary(c)
    e = c.e
    axes = _reduced(c.op)
    keep = keep_dims_shape(shape(x), axes)
    ones = e.const(1.0, dtype(x), shape(x))
    below = e.one(A.ReluGradOp, ones, e.sub(e.reshape(y, keep), x))
    mask = e.sub(ones, below)
    count = e.reduce_sum(mask, axes, keep_dims=True)
    return [e.div(e.mul(e.reshape(dy, keep), mask), count)]


@rule(A.SoftmaxCrossEntropyWithLogitsOp)
def _softmax_xent(c: GradContext) -> Grads:
    """d features = backprop * dloss[:, None]; d labels = -dloss[:, None] * log_softmax(features)."""
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.SoftmaxCrossEntropyWithLogitsOp)
    n = shape(op.features)[0]
    dl = e.reshape(e.cast(c.dy(), dtype(op.features)), (n, 1))
    df = e.mul(op.backprop, dl) if c.needs[0] else None
    dt = None
    if c.needs[1]:
        logp = e.one(A.LogSoftmaxV2Op, op.features, axes=[-1])
        dt = e.neg(e.mul(logp, dl))
    return [df, dt]


@rule(A.MaxPoolOp)
def _max_pool(c: GradContext) -> Grads:
    x, y, dy = unary(c)
    props: dict[str, Any] = {k: c.op.properties[k] for k in ("ksize", "strides", "padding", "data_format")}
    return [c.e.one(A.MaxPoolGradOp, x, y, dy, type_=x.type, **props)]


@rule(A.AvgPoolOp)
def _avg_pool(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    props: dict[str, Any] = {k: c.op.properties[k] for k in ("ksize", "strides", "padding", "data_format")}
    return [c.e.one(A.AvgPoolGradOp, dy, type_=x.type, orig_input_shape=list(shape(x)), **props)]


LAYER_NORM_GRAD_EPSILON = 1e-7
"""The epsilon LayerNormGrad assumes (it has no attribute for it): LayerNorm's default."""


@rule(A.LayerNormOp)
def _layer_norm(c: GradContext) -> Grads:
    """LayerNormGrad when the statistics and the parameters start at one axis; otherwise the same
    formula in elementwise ops.

    LayerNormGrad has no epsilon (it adds LayerNorm's default, 1e-7, to the variance), so for
    another epsilon (ONNX's and PyTorch's 1e-5) it gets `variance + (epsilon - 1e-7)`. The fused
    op matters under mixed precision: a vector op, it computes the two means over the normalised
    axes and `g - mean(g) - xhat * mean(g * xhat)` in fp32 and rounds dx once, where the
    elementwise formula rounds every activation-sized intermediate to fp16 (and keeps them alive:
    more memory)."""
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.LayerNormOp)
    dy = e.cast(c.dy(), dtype(op.x))
    x = shape(op.x)
    rank = len(x)
    norm = op.begin_norm_axis % rank
    params = op.begin_params_axis % rank
    eps = op.epsilon
    if norm == params:
        variance = op.variance
        if not math.isclose(eps, LAYER_NORM_GRAD_EPSILON, rel_tol=1e-6):
            variance = e.add(variance, e.const(eps - LAYER_NORM_GRAD_EPSILON, dtype(op.x)))
        g = e.op(
            A.LayerNormGradOp, dy, op.x, variance, op.mean, op.gamma, types=[op.x.type, op.gamma.type, op.beta.type]
        )
        return [g.results[0], g.results[1], g.results[2]]
    axes = list(range(norm, rank))
    batch = list(range(params))
    inv = e.one(A.RsqrtOp, e.add(op.variance, e.const(eps, dtype(op.x))))
    xhat = e.mul(e.sub(op.x, op.mean), inv)
    g = e.mul(dy, op.gamma)
    # means over the normalised axes as ReduceMean (gray: it follows its input's dtype, where
    # ReduceSum, black in CANN's lists, would widen these activation-sized tensors to fp32)
    keep = [1 if i in axes else d for i, d in enumerate(x)]
    mean_g = e.one(A.ReduceMeanOp, g, type_=tensor(keep, dtype(g)), axes=axes, keep_dims=True)
    gx = e.mul(g, xhat)
    mean_gx = e.one(A.ReduceMeanOp, gx, type_=tensor(keep, dtype(gx)), axes=axes, keep_dims=True)
    dx = e.mul(inv, e.sub(e.sub(g, mean_g), e.mul(xhat, mean_gx)))
    dgamma = e.reduce_sum(e.mul(dy, xhat), batch) if c.needs[1] else None
    dbeta = e.reduce_sum(dy, batch) if c.needs[2] else None
    return [dx, dgamma, dbeta]


def _to_nchw(e: Emitter, v: SSAValue, fmt: str) -> SSAValue:
    if fmt == "NCHW":
        return v
    n, h, w, ch = shape(v)
    return e.one(A.TransposeOp, v, type_=tensor((n, ch, h, w), dtype(v)), perm=[0, 3, 1, 2])


def _from_nchw(e: Emitter, v: SSAValue, fmt: str) -> SSAValue:
    if fmt == "NCHW":
        return v
    n, ch, h, w = shape(v)
    return e.one(A.TransposeOp, v, type_=tensor((n, h, w, ch), dtype(v)), perm=[0, 2, 3, 1])


def _bn_training_grads(
    e: Emitter, dy: SSAValue, x: SSAValue, scale: SSAValue, mean: SSAValue, var: SSAValue, eps: object, fmt: str
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(dx, dscale, doffset) of training batch norm with BNTrainingUpdateGrad + BNTrainingReduceGrad."""
    dy_c, x_c = _to_nchw(e, dy, fmt), _to_nchw(e, x, fmt)
    upd = e.op(A.BNTrainingUpdateGradOp, dy_c, x_c, mean, var, types=[scale.type, scale.type], epsilon=eps)
    dscale, doffset = upd.results
    dx = e.one(A.BNTrainingReduceGradOp, dy_c, x_c, dscale, doffset, scale, mean, var, type_=x_c.type, epsilon=eps)
    return _from_nchw(e, dx, fmt), dscale, doffset


@rule(A.BatchNormOp)
def _batch_norm(c: GradContext) -> Grads:
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.BatchNormOp)
    dy = e.cast(c.dy(), dtype(op.x))
    fmt = op.data_format
    eps = op.properties["epsilon"]
    if op.is_training:
        # batch_variance is Bessel-corrected (as TF's FusedBatchNorm); the grad ops take the biased one.
        ch = A._spatial(fmt)[0]
        n = math.prod(d for i, d in enumerate(shape(op.x)) if i != ch)
        biased = e.mul(op.batch_variance, e.const(max(n - 1, 1) / n, dtype(op.batch_variance)))
        dx, dscale, doffset = _bn_training_grads(e, dy, op.x, op.scale, op.batch_mean, biased, eps, fmt)
        return [dx, dscale, doffset, None, None]
    # Inference: y = (x - mean) * rsqrt(var + eps) * scale + offset, all per channel.
    ch = A._spatial(fmt)[0]
    stat = [1, 1, 1, 1]
    stat[ch] = shape(op.x)[ch]
    axes = [i for i in range(4) if i != ch]

    def per_channel(v: SSAValue) -> SSAValue:
        return e.reshape(e.cast(v, dtype(op.x)), stat)

    inv = e.one(A.RsqrtOp, e.add(per_channel(op.variance), e.const(op.epsilon, dtype(op.x))))
    centred = e.sub(op.x, per_channel(op.mean))
    scale_c = per_channel(op.scale)
    dx = e.mul(dy, e.mul(scale_c, inv))
    dscale = e.cast(e.reshape(e.reduce_sum(e.mul(dy, e.mul(centred, inv)), axes), shape(op.scale)), dtype(op.scale))
    doffset = e.cast(e.reshape(e.reduce_sum(dy, axes), shape(op.offset)), dtype(op.offset))
    dmean = e.cast(e.reshape(e.neg(e.reduce_sum(dx, axes)), shape(op.mean)), dtype(op.mean)) if c.needs[3] else None
    dvar = None
    if c.needs[4]:
        # d/dvar (var + eps)^-1/2 = -1/2 inv^3
        inv3 = e.mul(e.mul(inv, inv), inv)
        t = e.reduce_sum(e.mul(e.mul(dy, e.mul(centred, scale_c)), inv3), axes)
        dvar = e.cast(e.reshape(e.mul(t, e.scalar(-0.5, t)), shape(op.variance)), dtype(op.variance))
    return [dx, dscale, doffset, dmean, dvar]


@rule(A.BNTrainingUpdateOp)
def _bn_training_update(c: GradContext) -> Grads:
    """The full input gradient (through the batch statistics too), so `sum`/`square_sum` must come from
    a BNTrainingReduce of the same `x`."""
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.BNTrainingUpdateOp)
    src = op.sum.owner
    if not (isinstance(src, A.BNTrainingReduceOp) and src.x == op.x and op.square_sum == src.square_sum):
        raise AscendPassError(
            f"{c.where}: ascend-autodiff: the gradient of {op.name} needs its sum and square_sum from a BNTrainingReduce of the same input"
        )
    dy = e.cast(c.dy(), dtype(op.x))
    dx, dscale, doffset = _bn_training_grads(
        e, dy, op.x, op.scale, op.batch_mean, op.batch_variance, op.properties["epsilon"], "NCHW"
    )
    return [dx, None, None, dscale, doffset, None, None]


@rule(A.BNTrainingReduceOp)
def _bn_training_reduce(c: GradContext) -> Grads:
    """sum and square_sum per channel: dx = dsum + 2 x dsquare_sum (broadcast over N, H, W)."""
    op, e = c.op, c.e
    assert isinstance(op, A.BNTrainingReduceOp)
    x = op.x
    ch = shape(x)[1]
    total: SSAValue | None = None
    if c.dys[0] is not None:
        total = broadcast_to(e, e.reshape(e.cast(c.dys[0], dtype(x)), (1, ch, 1, 1)), shape(x))
    if c.dys[1] is not None:
        d = e.mul(e.reshape(e.cast(c.dys[1], dtype(x)), (1, ch, 1, 1)), e.mul(x, e.scalar(2.0, x)))
        total = d if total is None else e.add(total, d)
    return [total]


# Explicitly padded pooling (ONNX's MaxPool/AveragePool with pads or ceil_mode): the input is
# padded to the exact span the windows read, so the VALID gradient ops of MaxPool/AvgPool apply.


PoolDim = tuple[int, int, int, int, int, int]
"""(dimension, window, stride, leading pad, trailing pad, span the windows read from the padded start)."""


def _pool_v2_geometry(op: A.AscendOp, xs: tuple[int, ...]) -> tuple[str, list[PoolDim]]:
    """data_format and the :data:`PoolDim` of H and W."""
    assert isinstance(op, A.PoolV2Op)
    fmt = op.data_format
    _, h, w = (1, 2, 3) if fmt == "NCHW" else (3, 1, 2)
    ys = shape(op.results[0])
    k, s, p = op.ksize, op.strides, op.pads
    dims = []
    for dim, lo, hi in ((h, p[0], p[1]), (w, p[2], p[3])):
        if op.global_pooling:
            dims.append((dim, xs[dim], 1, 0, 0, xs[dim]))
            continue
        lo, hi = A.pool_pads(xs[dim], k[dim], s[dim], op.padding_mode, lo, hi)
        dims.append((dim, k[dim], s[dim], lo, hi, (ys[dim] - 1) * s[dim] + k[dim]))
    return fmt, dims


def _pool_props(fmt: str, dims: list[PoolDim]) -> dict[str, Any]:
    ksize, strides = [1, 1, 1, 1], [1, 1, 1, 1]
    for dim, k, s, _, _, _ in dims:
        ksize[dim], strides[dim] = k, s
    return {"ksize": ksize, "strides": strides, "padding": "VALID", "data_format": fmt}


@rule(A.MaxPoolV3Op)
def _max_pool_v3(c: GradContext) -> Grads:
    """MaxPoolGrad on the input padded with a value below all of it (padding never wins: every
    window holds an input element), cropped back. The value is min(x) - 1, computed, not an
    infinite constant (xDSL 0.74 prints -inf as a hex literal it cannot parse back)."""
    x, y, dy = unary(c)
    e = c.e
    fmt, dims = _pool_v2_geometry(c.op, shape(x))
    rank = len(shape(x))
    below = e.sub(
        e.neg(e.one(A.ReduceMaxOp, e.neg(x), type_=tensor((), dtype(x)), axes=list(range(rank)), keep_dims=False)),
        e.scalar(1.0, x),
    )
    padded = x
    for dim, _, _, lo, _, span in dims:
        padded = window(e, padded, dim, -lo, span, fill=below)
    g = e.one(A.MaxPoolGradOp, padded, y, dy, type_=padded.type, **_pool_props(fmt, dims))
    for dim, _, _, lo, _, _ in dims:
        g = window(e, g, dim, lo, shape(x)[dim])
    return [g]


def _window_counts(size: int, k: int, s: int, lo: int, hi: int, out: int, exclusive: bool) -> np.ndarray:
    """Per output position of one dimension: the elements its window divides by (input
    elements only when `exclusive`, else those inside the padded input, never the ceil_mode
    overhang)."""
    first, last = (lo, lo + size) if exclusive else (0, lo + size + hi)
    starts = np.arange(out) * s
    return np.maximum(np.minimum(starts + k, last) - np.maximum(starts, first), 1)


@rule(A.AvgPoolV2Op)
def _avg_pool_v2(c: GradContext) -> Grads:
    """dy rescaled from its window's divisor to k_h * k_w, spread by a VALID AvgPoolGrad over
    the padded input, cropped back."""
    x, y, dy = unary(c)
    op, e = c.op, c.e
    assert isinstance(op, A.AvgPoolV2Op)
    xs, ys = shape(x), shape(y)
    fmt, dims = _pool_v2_geometry(op, xs)
    exclusive = op.exclusive
    scale = np.ones([1, 1, 1, 1])
    for dim, k, s, lo, hi, _ in dims:
        counts = _window_counts(xs[dim], k, s, lo, hi, ys[dim], exclusive)
        view = [1, 1, 1, 1]
        view[dim] = ys[dim]
        scale = scale * (k / counts).reshape(view)
    g = e.mul(dy, e.const(scale, dtype(dy)))
    padded = list(xs)
    for dim, _, _, _, _, span in dims:
        padded[dim] = span
    g = e.one(A.AvgPoolGradOp, g, type_=tensor(padded, dtype(dy)), orig_input_shape=padded, **_pool_props(fmt, dims))
    for dim, _, _, lo, _, _ in dims:
        g = window(e, g, dim, lo, xs[dim])
    return [g]


@rule(A.BNInferOp)
def _bn_infer(c: GradContext) -> Grads:
    """y = (x - mean) * rsqrt(var + eps) * scale + offset per channel (axis 1): every operand's gradient."""
    op, e = c.op, c.e
    assert isinstance(op, A.BNInferOp)
    xs = shape(op.x)
    stat = [1] * len(xs)
    stat[1] = xs[1]
    axes = [i for i in range(len(xs)) if i != 1]
    dy = e.cast(c.dy(), dtype(op.x))

    def per_channel(v: SSAValue) -> SSAValue:
        return e.reshape(e.cast(v, dtype(op.x)), stat)

    def back(v: SSAValue, like: SSAValue) -> SSAValue:
        return e.cast(e.reshape(e.reduce_sum(v, axes), shape(like)), dtype(like))

    inv = e.one(A.RsqrtOp, e.add(per_channel(op.variance), e.const(op.epsilon, dtype(op.x))))
    centred = e.sub(op.x, per_channel(op.mean))
    dxhat = e.mul(dy, per_channel(op.scale))
    dx = e.mul(dxhat, inv)
    dscale = back(e.mul(dy, e.mul(centred, inv)), op.scale) if c.needs[1] else None
    doffset = back(dy, op.offset) if c.needs[2] else None
    dmean = back(e.neg(dx), op.mean) if c.needs[3] else None
    dvar = None
    if c.needs[4]:
        inv3 = e.mul(e.mul(inv, inv), inv)
        dvar = back(e.mul(e.mul(dxhat, centred), e.mul(inv3, e.scalar(-0.5, inv3))), op.variance)
    return [dx if c.needs[0] else None, dscale, doffset, dmean, dvar]
