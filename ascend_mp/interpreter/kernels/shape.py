"""Shape and data movement kernels: exact, in the operands' dtype."""

from __future__ import annotations

import numpy as np

from ascend_mp.dialects.ascend import resize_taps
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
    slices = tuple(
        slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i]) for i in range(len(begin))
    )
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


@kernel("PadV3D", exact=True)
def _pad_v3(spec: OpSpec) -> KernelFn:
    p, rank = spec.attr("paddings"), len(spec.in_shapes[0])
    pairs = (
        [(p[2 * i], p[2 * i + 1]) for i in range(rank)]
        if spec.attr("paddings_contiguous")
        else list(zip(p[:rank], p[rank:]))
    )
    mode, value = spec.attr("mode"), spec.attr("constant_values")
    if mode == "constant":
        return lambda x: np.pad(x, pairs, mode="constant", constant_values=np.asarray(value).astype(x.dtype))
    return lambda x: np.pad(x, pairs, mode=mode)


@kernel("ResizeD", finite_preserving=True)
def _resize(spec: OpSpec) -> KernelFn:
    """Separable: each spatial dimension in turn, `x[i0] * (1 - w) + x[i1] * w` (nearest: a gather)."""
    src, out = spec.in_shapes[0], spec.out_shapes[0]
    if min(src[2:] + out[2:]) < 0:
        raise KernelError(f"ResizeD needs static spatial sizes, got {tuple(src)} -> {tuple(out)}")
    mode = spec.attr("mode")
    taps = [
        resize_taps(n, m, spec.attr("coordinate_transformation_mode"), mode, spec.attr("nearest_mode"))
        for n, m in zip(src[2:], out[2:])
    ]

    def resize(x: Array) -> Array:
        for d, t in enumerate(taps, start=2):
            i0 = np.array([a for a, _, _ in t])
            if mode == "nearest":
                x = np.take(x, i0, axis=d)
                continue
            i1 = np.array([b for _, b, _ in t])
            w = np.array([c for _, _, c in t], x.dtype).reshape((-1,) + (1,) * (x.ndim - d - 1))
            x = np.take(x, i0, axis=d) * (1 - w) + np.take(x, i1, axis=d) * w
        return x

    return resize


@kernel("ScatterNdUpdate", finite_preserving=True, exact=True)
def _scatter_nd_update(spec: OpSpec) -> KernelFn:
    var = spec.in_shapes[0]
    k = spec.in_shapes[1][-1]

    def scatter(x: Array, indices: Array, updates: Array) -> Array:
        rows = indices.reshape(-1, k).astype(np.int64)
        dims = np.array(var[:k], np.int64)
        if rows.size and ((rows < -dims) | (rows >= dims)).any():
            bad = rows[((rows < -dims) | (rows >= dims)).any(axis=1)][0]
            raise KernelError(f"ScatterNdUpdate: index {bad.tolist()} is out of range for shape {tuple(var)}")
        y = x.copy()
        y[tuple((rows % dims).T)] = updates.reshape((-1, *var[k:]))  # duplicate rows: the last wins
        return y

    return scatter


@kernel("UnsortedSegmentSumD")
def _unsorted_segment_sum(spec: OpSpec) -> KernelFn:
    n = spec.attr("num_segments")
    k = len(spec.in_shapes[1])

    def segment_sum(x: Array, ids: Array) -> Array:
        flat = ids.reshape(-1).astype(np.int64)
        rows = x.reshape((flat.size, *x.shape[k:]))
        keep = (flat >= 0) & (flat < n)
        y = np.zeros((n, *x.shape[k:]), x.dtype)
        np.add.at(y, flat[keep], rows[keep])  # a scatter-add: repeated ids add up
        return y

    return segment_sum
