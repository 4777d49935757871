"""Reductions, normalisations, pooling, softmax and the softmax cross-entropy loss, with the
high_performance bodies of SoftmaxV2 and LayerNorm."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ascend_mp.interpreter.geometry import channel_axis, contig, from_nchw, pool_geometry, tap_span, tap_view, to_nchw
from ascend_mp.interpreter.kernels.base import KernelFn, impl_rounding, kernel
from ascend_mp.interpreter.numerics import Array
from ascend_mp.interpreter.spec import OpSpec


def _reduce_axes(spec: OpSpec, rank: int) -> tuple[int, ...]:
    axes = spec.attr("axes") or tuple(range(rank))
    return tuple(sorted({a % rank for a in axes})) if rank else ()


def _fast_softmax(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    axes = _softmax_axes(spec)

    def softmax(x: Array) -> Array:
        e = rnd(np.exp(rnd(x - x.max(axis=axes, keepdims=True))))
        return e / rnd(e.sum(axis=axes, keepdims=True))

    return softmax


def _fast_layer_norm(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    rank = len(spec.in_shapes[0])
    axes = tuple(range(spec.attr("begin_norm_axis") % rank, rank))
    eps = rnd(np.float32(spec.attr("epsilon")))  # pyright: ignore[reportArgumentType]  # rnd rounds numpy scalars too; the stubs don't count np.float32 as an ndarray

    def ln(x: Array, gamma: Array, beta: Array) -> tuple[Array, Array, Array]:
        m = rnd(x.mean(axis=axes, keepdims=True))
        d = rnd(x - m)
        var = rnd(rnd(d * d).mean(axis=axes, keepdims=True))
        inv = rnd(np.reciprocal(rnd(np.sqrt(rnd(var + eps)))))
        return rnd(rnd(d * inv) * gamma) + beta, m, var

    return ln


# --------------------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------------------


@kernel("MaxPool", "MaxPoolV3", finite_preserving=True, exact=True)
def _max_pool(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = pool_geometry(spec)

    def pool(x: Array) -> Array:
        xn = to_nchw(x, fmt)
        n, c, h, w = xn.shape
        oh, ow, pt, _, pl, _ = geo.layout(h, w)
        rows = [(*tap_span(oh, h, geo.sh, a - pt), geo.sh) for a in range(geo.kh)]
        cols = [(*tap_span(ow, w, geo.sw, b - pl), geo.sw) for b in range(geo.kw)]
        taps = [(r, q) for r in rows if r[1] > r[0] for q in cols if q[1] > q[0]]  # the padding is never read
        whole = next((t for t in taps if t[0][:2] == (0, oh) and t[1][:2] == (0, ow)), None)
        if whole is None:  # no tap reads every window: windows of padding alone are -inf
            out = np.full((n, c, oh, ow), -np.inf if xn.dtype.kind == "f" else np.iinfo(xn.dtype).min, xn.dtype)
        else:
            out = tap_view(xn, *whole).copy()
        for t in taps:  # one np.maximum per window tap, over the outputs it reads (NaN propagates, as max does)
            if t is not whole:
                part = out[:, :, t[0][0] : t[0][1], t[1][0] : t[1][1]]
                np.maximum(part, tap_view(xn, *t), out=part)
        return contig(from_nchw(out, fmt))

    return pool


@kernel("AvgPool", "AvgPoolV2")
def _avg_pool(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = pool_geometry(spec)

    def pool(x: Array) -> Array:
        xn = to_nchw(x, fmt)
        total = geo.windows(xn, 0.0).sum(axis=(4, 5))
        return contig(from_nchw(total / geo.counts(xn.shape[2], xn.shape[3], xn.dtype), fmt))

    return pool


# --------------------------------------------------------------------------------------
# Reductions and softmax
# --------------------------------------------------------------------------------------


@kernel("ReduceSum", propagates=(0,))
def _reduce_sum(spec: OpSpec) -> KernelFn:
    axes, keep = _reduce_axes(spec, len(spec.in_shapes[0])), bool(spec.attr("keep_dims"))
    return lambda x: np.asarray(np.add.reduce(x, axis=axes, keepdims=keep))


@kernel("ReduceMean", propagates=(0,))
def _reduce_mean(spec: OpSpec) -> KernelFn:
    shape = spec.in_shapes[0]
    axes, keep = _reduce_axes(spec, len(shape)), bool(spec.attr("keep_dims"))
    if spec.compute is None:  # integer mean: computed in float64, truncated by the result cast
        return lambda x: np.asarray(np.mean(x, axis=axes, keepdims=keep))
    count = math.prod(shape[a] for a in axes)
    if count <= 0:  # dynamic dimensions: counted at run time
        return lambda x: np.asarray(np.mean(x, axis=axes, keepdims=keep, dtype=x.dtype))
    return lambda x: np.asarray(np.add.reduce(x, axis=axes, keepdims=keep) / count)


@kernel("ReduceMax", finite_preserving=True, exact=True)
def _reduce_max(spec: OpSpec) -> KernelFn:
    axes, keep = _reduce_axes(spec, len(spec.in_shapes[0])), bool(spec.attr("keep_dims"))
    return lambda x: np.asarray(np.maximum.reduce(x, axis=axes, keepdims=keep))


@kernel("ReduceMin", finite_preserving=True, exact=True)
def _reduce_min(spec: OpSpec) -> KernelFn:
    axes, keep = _reduce_axes(spec, len(spec.in_shapes[0])), bool(spec.attr("keep_dims"))
    return lambda x: np.asarray(np.minimum.reduce(x, axis=axes, keepdims=keep))


@kernel("ReduceProd", propagates=(0,))
def _reduce_prod(spec: OpSpec) -> KernelFn:
    axes, keep = _reduce_axes(spec, len(spec.in_shapes[0])), bool(spec.attr("keep_dims"))
    return lambda x: np.asarray(np.multiply.reduce(x, axis=axes, keepdims=keep))


@kernel("CumsumD", propagates=(0,))
def _cumsum(spec: OpSpec) -> KernelFn:
    axis = spec.attr("axis") % len(spec.in_shapes[0])
    exclusive, reverse = bool(spec.attr("exclusive")), bool(spec.attr("reverse"))

    def cumsum(x: Array) -> Array:
        v = np.flip(x, axis) if reverse else x
        c = np.cumsum(v, axis=axis, dtype=v.dtype)
        if exclusive:  # shifted by one: the first is 0, the last sum is dropped
            zero = np.zeros_like(np.take(c, [0], axis=axis))
            c = np.concatenate([zero, np.take(c, range(c.shape[axis] - 1), axis=axis)], axis=axis)
        return np.flip(c, axis) if reverse else c

    return cumsum


def _softmax_axes(spec: OpSpec) -> tuple[int, ...]:
    rank = len(spec.in_shapes[0])
    return tuple(sorted({a % rank for a in spec.attr("axes")}))


def _softmax(x: Array, axes: tuple[int, ...]) -> Array:
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def log_softmax(x: Array, axes: tuple[int, ...]) -> Array:
    shifted = x - x.max(axis=axes, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))


@kernel("SoftmaxV2", finite_preserving=True)
def _softmax_v2(spec: OpSpec) -> KernelFn:
    if (rnd := impl_rounding(spec)) is not None:  # high_performance
        return _fast_softmax(spec, rnd)
    axes = _softmax_axes(spec)
    return lambda x: _softmax(x, axes)


@kernel("LogSoftmaxV2")
def _log_softmax_v2(spec: OpSpec) -> KernelFn:
    axes = _softmax_axes(spec)
    return lambda x: log_softmax(x, axes)


@kernel("SoftmaxCrossEntropyWithLogits", propagates=(0, 1))
def _softmax_xent(spec: OpSpec) -> KernelFn:
    def xent(features: Array, labels: Array) -> tuple[Array, Array]:
        logp = log_softmax(features, (1,))
        return -(labels * logp).sum(axis=1), np.exp(logp) - labels

    return xent


@kernel("ArgMaxV2", keeps_dtype=False)
def _argmax(spec: OpSpec) -> KernelFn:
    dim = spec.attr("dimension")
    return lambda x: np.asarray(np.argmax(x, axis=dim))


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


def _bn_view(spec: OpSpec) -> tuple[tuple[int, ...], list[int]]:
    """(reduced axes, broadcast shape of a per-channel vector) of a rank-4 BatchNorm input."""
    axis = channel_axis(spec.attr("data_format"), 4)
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    return tuple(i for i in range(4) if i != axis), shape


@kernel("BatchNorm")
def _batch_norm(spec: OpSpec) -> KernelFn:
    axes, shape = _bn_view(spec)
    eps = float(spec.attr("epsilon"))
    training = bool(spec.attr("is_training"))

    def bn(x: Array, scale: Array, offset: Array, mean: Array, variance: Array) -> tuple[Array, Array, Array]:
        if training:
            n = math.prod(x.shape[i] for i in axes)
            m = x.mean(axis=axes)
            var = np.square(x - m.reshape(shape)).mean(axis=axes)
            # As TF's FusedBatchNorm: y uses the biased variance, batch_variance is Bessel-corrected.
            out_var = var * (n / max(n - 1, 1))
        else:
            m, var, out_var = mean, variance, variance
        inv = np.reciprocal(np.sqrt(var + eps))
        y = (x - m.reshape(shape)) * (scale * inv).reshape(shape) + offset.reshape(shape)
        return y, m, out_var

    return bn


@kernel("BNInfer")
def _bn_infer(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))
    shape = [1] * len(spec.in_shapes[0])
    shape[1] = -1

    def bn(x: Array, scale: Array, offset: Array, mean: Array, variance: Array) -> Array:
        inv = np.reciprocal(np.sqrt(variance + eps))
        return (x - mean.reshape(shape)) * (scale * inv).reshape(shape) + offset.reshape(shape)

    return bn


NCHW_AXES = (0, 2, 3)
NCHW_VEC = (1, -1, 1, 1)


@kernel("BNTrainingReduce")
def _bn_training_reduce(spec: OpSpec) -> KernelFn:
    return lambda x: (x.sum(axis=NCHW_AXES), np.square(x).sum(axis=NCHW_AXES))


@kernel("BNTrainingUpdate")
def _bn_training_update(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))
    factor = float(spec.attr("factor"))
    n = math.prod(spec.in_shapes[0][i] for i in NCHW_AXES)

    def update(x: Array, s: Array, ss: Array, scale: Array, offset: Array, mean: Array, variance: Array):
        # CANN: batch statistics from the sums (biased variance normalises; the running
        # variance is updated with the Bessel-corrected one).
        bm = s / n
        bv = ss / n - bm * bm
        inv = np.reciprocal(np.sqrt(bv + eps))
        y = (x - bm.reshape(NCHW_VEC)) * (scale * inv).reshape(NCHW_VEC) + offset.reshape(NCHW_VEC)
        mean_out = mean * (1 - factor) + bm * factor
        var_out = variance * (1 - factor) + bv * (factor * n / max(n - 1, 1))
        return y, mean_out, var_out, bm, bv

    return update


@kernel("InstanceNorm")
def _instance_norm(spec: OpSpec) -> KernelFn:
    rank = len(spec.in_shapes[0])
    axes = tuple(range(2, rank))
    eps = float(spec.attr("epsilon"))
    per_channel = (-1,) + (1,) * (rank - 2)

    def norm(x: Array, gamma: Array, beta: Array) -> tuple[Array, Array, Array]:
        m = x.mean(axis=axes, keepdims=True)
        var = np.square(x - m).mean(axis=axes, keepdims=True)
        y = (x - m) * np.reciprocal(np.sqrt(var + eps)) * gamma.reshape(per_channel) + beta.reshape(per_channel)
        return y, m, var

    return norm


@kernel("LayerNorm")
def _layer_norm(spec: OpSpec) -> KernelFn:
    if (rnd := impl_rounding(spec)) is not None:  # high_performance
        return _fast_layer_norm(spec, rnd)
    rank = len(spec.in_shapes[0])
    axes = tuple(range(spec.attr("begin_norm_axis") % rank, rank))
    eps = float(spec.attr("epsilon"))

    def ln(x: Array, gamma: Array, beta: Array) -> tuple[Array, Array, Array]:
        m = x.mean(axis=axes, keepdims=True)
        var = np.square(x - m).mean(axis=axes, keepdims=True)
        y = (x - m) * np.reciprocal(np.sqrt(var + eps)) * gamma + beta
        return y, m, var

    return ln
