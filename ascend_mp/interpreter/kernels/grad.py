"""Gradient kernels: the convolution and pooling backprops, the activation, softmax, bias and
normalisation gradients."""

from __future__ import annotations

import math

import numpy as np

from ascend_mp.interpreter.geometry import ConvGeometry, PoolGeometry, channel_axis, contig, from_nchw, oihw, to_nchw
from ascend_mp.interpreter.kernels.base import KernelFn, kernel
from ascend_mp.interpreter.kernels.elementwise import GELU_A, GELU_C
from ascend_mp.interpreter.kernels.reduce import NCHW_AXES, NCHW_VEC
from ascend_mp.interpreter.numerics import Array
from ascend_mp.interpreter.spec import OpSpec


@kernel("Conv2DBackpropInput")
def _conv_backprop_input(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = ConvGeometry.of(spec)
    size = tuple(spec.attr("input_size"))
    nchw = size if fmt == "NCHW" else (size[0], size[3], size[1], size[2])
    return lambda w, dy: from_nchw(geo.backprop_input(oihw(w, fmt), to_nchw(dy, fmt), nchw), fmt)


@kernel("Conv2DBackpropFilter", propagates=(1,))
def _conv_backprop_filter(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = ConvGeometry.of(spec)
    size = tuple(spec.attr("filter_size"))
    oihw = size if fmt == "NCHW" else (size[3], size[2], size[0], size[1])

    def grad(x: Array, dy: Array) -> Array:
        dw = geo.backprop_filter(to_nchw(x, fmt), to_nchw(dy, fmt), oihw)
        return dw if fmt == "NCHW" else contig(dw.transpose(2, 3, 1, 0))

    return grad


@kernel("MaxPoolGrad")
def _max_pool_grad(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = PoolGeometry.of(spec)

    def grad(x1: Array, x2: Array, g: Array) -> Array:
        # Each output's gradient goes to the first maximum of its window (row-major), as TF does.
        xn, gn = to_nchw(x1, fmt), to_nchw(g, fmt)
        win = geo.windows(xn, -np.inf)
        n, c, oh, ow = win.shape[:4]
        arg = win.reshape(n, c, oh, ow, geo.kh * geo.kw).argmax(axis=-1)
        zero = np.zeros((), gn.dtype)
        dx = geo.scatter(lambda a, b: np.where(arg == a * geo.kw + b, gn, zero), xn.shape, gn.dtype)
        return contig(from_nchw(dx, fmt))

    return grad


@kernel("AvgPoolGrad")
def _avg_pool_grad(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = PoolGeometry.of(spec)
    size = tuple(spec.attr("orig_input_shape"))
    nchw = size if fmt == "NCHW" else (size[0], size[3], size[1], size[2])

    def grad(g: Array) -> Array:
        gn = to_nchw(g, fmt)
        share = gn / geo.counts(nchw[2], nchw[3], gn.dtype)
        return contig(from_nchw(geo.scatter(lambda a, b: share, nchw, gn.dtype), fmt))

    return grad


@kernel("BNTrainingUpdateGrad")
def _bn_training_update_grad(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))

    def grad(dy: Array, x: Array, bm: Array, bv: Array) -> tuple[Array, Array]:
        xhat = (x - bm.reshape(NCHW_VEC)) * np.reciprocal(np.sqrt(bv + eps)).reshape(NCHW_VEC)
        return (dy * xhat).sum(axis=NCHW_AXES), dy.sum(axis=NCHW_AXES)

    return grad


@kernel("BNTrainingReduceGrad")
def _bn_training_reduce_grad(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))
    n = math.prod(spec.in_shapes[1][i] for i in NCHW_AXES)

    def grad(dy: Array, x: Array, dscale: Array, doffset: Array, scale: Array, bm: Array, bv: Array) -> Array:
        inv = np.reciprocal(np.sqrt(bv + eps))
        xhat = (x - bm.reshape(NCHW_VEC)) * inv.reshape(NCHW_VEC)
        corr = (doffset.reshape(NCHW_VEC) + xhat * dscale.reshape(NCHW_VEC)) / n
        return (scale * inv).reshape(NCHW_VEC) * (dy - corr)

    return grad


@kernel("LayerNormGrad")
def _layer_norm_grad(spec: OpSpec) -> KernelFn:
    x_shape, var_shape, gamma_shape = spec.in_shapes[1], spec.in_shapes[2], spec.in_shapes[4]
    rank = len(x_shape)
    # The normalised axes are those where the statistics have size 1 (reducing a size-1
    # axis or not is the same); the parameter axes are gamma's trailing ones.
    norm = rank
    while norm > 0 and var_shape[norm - 1] == 1:
        norm -= 1
    axes = tuple(range(norm, rank))
    n = math.prod(x_shape[i] for i in axes)
    batch = tuple(range(rank - len(gamma_shape)))
    # The op has no epsilon attribute: LayerNorm's default (1e-7) unless one is given.
    eps = float(spec.attr("epsilon"))

    def grad(dy: Array, x: Array, variance: Array, mean: Array, gamma: Array) -> tuple[Array, Array, Array]:
        inv = np.reciprocal(np.sqrt(variance + eps))
        xhat = (x - mean) * inv
        g = dy * gamma
        dx = inv * (g - g.sum(axis=axes, keepdims=True) / n - xhat * ((g * xhat).sum(axis=axes, keepdims=True) / n))
        return dx, (dy * xhat).sum(axis=batch), dy.sum(axis=batch)

    return grad


@kernel("ReluGrad", finite_preserving=True, exact=True)
def _relu_grad(spec: OpSpec) -> KernelFn:
    zero = np.zeros((), spec.compute or spec.in_dtypes[0])
    return lambda g, f: np.where(f > 0, g, zero)


@kernel("LeakyReluGrad")
def _leaky_relu_grad(spec: OpSpec) -> KernelFn:
    slope = float(spec.attr("negative_slope"))
    return lambda g, f: np.where(f > 0, g, g * slope)


@kernel("SigmoidGrad", propagates=(0, 1))
def _sigmoid_grad(spec: OpSpec) -> KernelFn:
    return lambda y, dy: dy * y * (1 - y)


@kernel("TanhGrad", propagates=(0, 1))
def _tanh_grad(spec: OpSpec) -> KernelFn:
    return lambda y, dy: dy * (1 - y * y)


@kernel("GeluGrad")
def _gelu_grad(spec: OpSpec) -> KernelFn:
    def grad(dy: Array, x: Array, y: Array) -> Array:
        x2 = x * x
        t = np.tanh(GELU_C * (x + GELU_A * x2 * x))
        return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (GELU_C * (1 + 3 * GELU_A * x2)))

    return grad


@kernel("SoftmaxGrad", propagates=(0, 1))
def _softmax_grad(spec: OpSpec) -> KernelFn:
    return lambda s, g: (g - (g * s).sum(axis=-1, keepdims=True)) * s


@kernel("BiasAddGrad", propagates=(0,))
def _bias_add_grad(spec: OpSpec) -> KernelFn:
    rank = len(spec.in_shapes[0])
    channel = channel_axis(spec.attr("data_format"), rank)
    axes = tuple(i for i in range(rank) if i != channel)
    return lambda x: x.sum(axis=axes)
