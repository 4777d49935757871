"""Cube kernels: matrix products and convolutions (MatMul, MatMulV2, BatchMatMul,
BatchMatMulV2, Conv2D, DepthwiseConv2D). Operands are copied to float32, multiplied and
accumulated in float32, and the result is rounded to the op's dtype by :func:`~ascend_mp.interpreter.kernels.base.make_kernel`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ascend_mp.interpreter.compiled import compiled
from ascend_mp.interpreter.geometry import ConvGeometry, contig, from_nchw, oihw, to_nchw
from ascend_mp.interpreter.kernels.base import SETS_STATUS, KernelFn, kernel
from ascend_mp.interpreter.numerics import F32, Array, nonfinite_wide
from ascend_mp.interpreter.spec import OpSpec


@kernel("MatMul", "MatMulV2", propagates=(0, 1, 2))
def _matmul(spec: OpSpec) -> KernelFn:
    ta, tb = bool(spec.attr("transpose_x1")), bool(spec.attr("transpose_x2"))

    ints = spec.compute is None  # integer kernels (int8 -> int32) accumulate in int64

    def mm(a: Array, b: Array, bias: Array | None = None) -> Array:
        if ints:
            a, b = a.astype(np.int64), b.astype(np.int64)
        y = np.matmul(a.T if ta else a, b.T if tb else b)
        return y if bias is None else y + bias

    return mm


@kernel("BatchMatMulV2", propagates=(0, 1, 2))
def _batch_matmul_v2(spec: OpSpec) -> KernelFn:
    ta, tb = bool(spec.attr("adj_x1")), bool(spec.attr("adj_x2"))
    ints = spec.compute is None

    def bmm(a: Array, b: Array, bias: Array | None = None) -> Array:
        if ints:
            a, b = a.astype(np.int64), b.astype(np.int64)
        y = np.matmul(a.swapaxes(-1, -2) if ta else a, b.swapaxes(-1, -2) if tb else b)
        return y if bias is None else y + bias

    return bmm


@kernel("BatchMatMul", propagates=(0, 1))
def _batch_matmul(spec: OpSpec) -> KernelFn:
    ta, tb = bool(spec.attr("adj_x1")), bool(spec.attr("adj_x2"))
    ints = spec.compute is None

    def bmm(a: Array, b: Array) -> Array:
        if ints:
            a, b = a.astype(np.int64), b.astype(np.int64)
        return np.matmul(a.swapaxes(-1, -2) if ta else a, b.swapaxes(-1, -2) if tb else b)

    return bmm


def _channel_bias(y: Array, bias: Array | None, fmt: str) -> Array:
    if bias is None:
        return y
    return y + (bias.reshape(1, -1, 1, 1) if fmt == "NCHW" else bias)


def _conv_bias(spec: OpSpec, fmt: str) -> Callable[[Array, Array | None], Array]:
    """The bias epilogue of a forward convolution: `y` (N, O, OH, OW, a fresh array) plus the
    channel bias, in data_format; in place when the dtypes allow it. A large static float32
    result gets the compiled loop (one pass, about a third of numpy's broadcast add's time),
    which also sets the float status (:data:`SETS_STATUS`, marked on the returned function)."""
    biased = len(spec.in_dtypes) > 2 and fmt == "NCHW" and spec.compute == F32 and bool(spec.out_shapes)
    fast = compiled("channel_bias", spec.out_shapes[0]) if biased else None
    # the result is the op's own (no rounding after): an inf/NaN seen here is one in the result
    status = spec.status if fast is not None and spec.out_dtypes[0] == F32 else None

    def add(y: Array, bias: Array | None) -> Array:
        if fast is not None and bias is not None and y.dtype == bias.dtype == F32 and y.flags.c_contiguous:
            if fast(y.reshape(y.shape[0], y.shape[1], -1), contig(bias)) and status is not None:
                status.flag = True
            return y
        if bias is None:
            y = from_nchw(y, fmt)
        elif fmt == "NCHW" and np.result_type(y, bias) == y.dtype:
            y += bias.reshape(1, -1, 1, 1)  # in place: no second output-sized buffer
        else:
            y = _channel_bias(from_nchw(y, fmt), bias, fmt)
        if status is not None and not status.flag and nonfinite_wide(y):
            status.flag = True
        return y

    if status is not None:
        setattr(add, SETS_STATUS, True)
    return add


def _sets_status_as(fn: KernelFn, epilogue: Callable[..., Any]) -> KernelFn:
    """`fn`, marked :data:`SETS_STATUS` when its result is `epilogue`'s and that sets the status."""
    if getattr(epilogue, SETS_STATUS, False):
        setattr(fn, SETS_STATUS, True)
    return fn


@kernel("Conv2D", propagates=(1, 2))  # an input pixel may lie outside every window
def _conv2d(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = ConvGeometry.of(spec)
    add_bias = _conv_bias(spec, fmt)

    def conv(x: Array, w: Array, bias: Array | None = None) -> Array:
        return add_bias(geo.forward(to_nchw(x, fmt), oihw(w, fmt)), bias)

    return _sets_status_as(conv, add_bias)


@kernel("DepthwiseConv2D", propagates=(1, 2))
def _depthwise(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    kh, kw, c, m = spec.in_shapes[1]
    geo = ConvGeometry.of(spec, groups=c)
    add_bias = _conv_bias(spec, fmt)

    def conv(x: Array, w: Array, bias: Array | None = None) -> Array:
        # Depthwise = grouped conv with one group per channel; output channel c*M + m.
        w_oihw = w.transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
        return add_bias(geo.forward(to_nchw(x, fmt), w_oihw), bias)

    return _sets_status_as(conv, add_bias)
