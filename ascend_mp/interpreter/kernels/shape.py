"""Shape and data movement kernels: exact, in the operands' dtype."""

from __future__ import annotations


import numpy as np

from ascend_mp.interpreter.kernels.base import KernelFn, kernel, scalar
from ascend_mp.interpreter.numerics import Array
from ascend_mp.interpreter.spec import KernelError, OpSpec


@kernel("Reshape", finite_preserving=True, propagates=(0,))
def _reshape(spec: OpSpec) -> KernelFn:
    shape = spec.out_shapes[0]
    if sum(1 for d in shape if d < 0) > 1:
        raise KernelError(f"Reshape to {shape} has more than one dynamic dimension")
    return lambda x: x.reshape(shape)


@kernel("Transpose", finite_preserving=True, propagates=(0,))
def _transpose(spec: OpSpec) -> KernelFn:
    perm = tuple(spec.attr("perm"))
    return lambda x: x.transpose(perm)


@kernel("ConcatV2D", finite_preserving=True)
def _concat(spec: OpSpec) -> KernelFn:
    dim = spec.attr("concat_dim")
    return lambda *xs: np.concatenate(xs, axis=dim)


@kernel("GatherV2D", finite_preserving=True)
def _gather_v2(spec: OpSpec) -> KernelFn:
    axis = spec.attr("axis") % len(spec.in_shapes[0])

    def gather(x: Array, indices: Array) -> Array:
        n = x.shape[axis]
        if indices.size and (int(indices.min()) < -n or int(indices.max()) >= n):
            bad = indices[(indices < -n) | (indices >= n)].reshape(-1)[0]
            raise KernelError(f"GatherV2D: index {int(bad)} is out of range for axis {axis} of size {n}")
        return np.take(x, indices, axis=axis)

    return gather


@kernel("StridedSliceD", finite_preserving=True)
def _strided_slice(spec: OpSpec) -> KernelFn:
    begin, end, strides = spec.attr("begin"), spec.attr("end"), spec.attr("strides")
    bm, em = spec.attr("begin_mask"), spec.attr("end_mask")
    slices = tuple(slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i]) for i in range(len(begin)))
    return lambda x: x[slices].copy()


@kernel("BroadcastToD", finite_preserving=True, propagates=(0,))
def _broadcast_to(spec: OpSpec) -> KernelFn:
    shape = tuple(spec.attr("shape"))
    return lambda x: np.broadcast_to(x, shape).copy()


@kernel("TileD", finite_preserving=True)
def _tile(spec: OpSpec) -> KernelFn:
    multiples = tuple(spec.attr("multiples"))
    return lambda x: np.tile(x, multiples)


@kernel("OneHot", finite_preserving=True, exact=True)
def _one_hot(spec: OpSpec) -> KernelFn:
    depth, axis = spec.attr("depth"), spec.attr("axis")
    rank = len(spec.in_shapes[0]) + 1
    axis %= rank
    classes = np.arange(depth)

    def one_hot(x: Array, on: Array, off: Array) -> Array:
        hot = x[..., None] == classes  # out-of-range indices are all off
        y = np.where(hot, scalar(on), scalar(off))
        return y if axis == rank - 1 else np.moveaxis(y, -1, axis)

    return one_hot
