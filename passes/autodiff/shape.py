"""Gradient rules of the shape and data movement ops."""

from __future__ import annotations

import math

import numpy as np

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import dtype, shape, tensor
from ascend_mp.passes.autodiff.base import GradContext, Grads, rule, select_along, unary, unbroadcast, window


@rule(A.ReshapeOp)
def _reshape(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [c.e.reshape(dy, shape(x))]


@rule(A.TransposeOp)
def _transpose(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    assert isinstance(c.op, A.TransposeOp)
    perm = c.op.perm
    inverse = [perm.index(i) for i in range(len(perm))]
    return [c.e.one(A.TransposeOp, dy, type_=x.type, perm=inverse)]


@rule(A.ConcatV2DOp)
def _concat(c: GradContext) -> Grads:
    """Slices of dy by a matrix product with 0/1 selection matrices (the dialect has no Slice op)."""
    op, e = c.op, c.e
    ys = shape(op.results[0])
    rank = len(ys)
    assert isinstance(op, A.ConcatV2DOp)
    dim = op.concat_dim % rank
    dy = e.cast(c.dy(), dtype(op.operands[0]))
    perm = [i for i in range(rank) if i != dim] + [dim]
    moved = (
        dy if dim == rank - 1 else e.one(A.TransposeOp, dy, type_=tensor([ys[i] for i in perm], dtype(dy)), perm=perm)
    )
    rows = math.prod(ys[i] for i in perm[:-1])
    flat = e.reshape(moved, (rows, ys[dim]))
    inverse = [perm.index(i) for i in range(rank)]
    grads: Grads = []
    offset = 0
    for i, x in enumerate(op.operands):
        n = shape(x)[dim]
        if c.needs[i]:
            sel = np.zeros((ys[dim], n))
            sel[offset : offset + n, :] = np.eye(n)
            part = e.one(A.MatMulV2Op, flat, e.const(sel, dtype(dy)), None, type_=tensor((rows, n), dtype(dy)))
            part = e.reshape(part, [ys[j] for j in perm[:-1]] + [n])
            if dim != rank - 1:
                part = e.one(A.TransposeOp, part, type_=x.type, perm=inverse)
            grads.append(part)
        else:
            grads.append(None)
        offset += n
    return grads


@rule(A.OneHotOp)
def _one_hot(c: GradContext) -> Grads:
    """Indices get none; on_value / off_value get the sum of dy where the mask is on / off."""
    op, e = c.op, c.e
    assert isinstance(op, A.OneHotOp)
    dy = c.dy()
    f = dtype(dy)
    one, zero = e.const(1.0, f), e.const(0.0, f)
    mask = e.one(A.OneHotOp, op.x, one, zero, type_=dy.type, depth=op.properties["depth"], axis=op.properties["axis"])
    d_on = e.reshape(e.reduce_sum(e.mul(dy, mask), range(len(shape(dy)))), shape(op.on_value)) if c.needs[1] else None
    d_off = (
        e.reshape(e.reduce_sum(e.mul(dy, e.sub(e.const(1.0, f), mask)), range(len(shape(dy)))), shape(op.off_value))
        if c.needs[2]
        else None
    )
    return [None, d_on, d_off]


@rule(A.GatherV2DOp)
def _gather(c: GradContext) -> Grads:
    """The scatter-add of dy into the rows it was gathered from: UnsortedSegmentSumD over the
    (wrapped) indices, with the gathered axis moved first: dx[p, j, q] = sum over k with
    indices[k] == j of dy[p, k, q] (repeated indices add up; a negative index -m counts as n - m,
    as the forward does). Memory is that of dy and dx: no indices x n one-hot matrix."""
    op, e = c.op, c.e
    assert isinstance(op, A.GatherV2DOp)
    xs, ids = shape(op.x), shape(op.indices)
    axis = op.axis % len(xs)
    n = xs[axis]
    dy = e.cast(c.dy(), dtype(op.x))
    f, idx, it = dtype(dy), op.indices, dtype(op.indices)
    negative = e.one(A.LessOp, idx, e.const(0, it), type_=tensor(ids, "i1"))
    idx = e.one(A.SelectOp, negative, e.add(idx, e.const(n, it)), idx, type_=idx.type)
    k = math.prod(ids)
    pre, post = math.prod(xs[:axis]), math.prod(xs[axis + 1 :])
    if pre == 1:
        dx = e.one(A.UnsortedSegmentSumDOp, e.reshape(dy, (k, post)), e.reshape(idx, (k,)),
                   type_=tensor((n, post), f), num_segments=n)  # fmt: skip
        return [e.reshape(dx, xs), None]
    g = e.one(A.TransposeOp, e.reshape(dy, (pre, k, post)), type_=tensor((k, pre, post), f), perm=[1, 0, 2])
    dx = e.one(A.UnsortedSegmentSumDOp, g, e.reshape(idx, (k,)), type_=tensor((n, pre, post), f), num_segments=n)
    dx = e.one(A.TransposeOp, dx, type_=tensor((pre, n, post), f), perm=[1, 0, 2])
    return [e.reshape(dx, xs), None]


@rule(A.StridedSliceDOp)
def _strided_slice(c: GradContext) -> Grads:
    """dy put back where it was taken, zeros elsewhere: per sliced dimension a pad (unit
    stride) or a 0/1 scatter matrix product (other strides)."""
    op, e = c.op, c.e
    assert isinstance(op, A.StridedSliceDOp)
    x, _, g = unary(c)
    xs = shape(x)
    for dim, sl in enumerate(op.slices(xs)):
        start, stop, step = sl.indices(xs[dim])
        taken = range(start, stop, step)
        if len(taken) == xs[dim] and step == 1:
            continue
        if step == 1:
            g = window(e, g, dim, -start, xs[dim])
        else:
            scatter = np.zeros((len(taken), xs[dim]))
            scatter[np.arange(len(taken)), list(taken)] = 1.0
            g = select_along(e, g, dim, scatter)
    return [g]


@rule(A.BroadcastToDOp)
def _broadcast_to(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [unbroadcast(c.e, dy, shape(x))]


@rule(A.TileDOp)
def _tile(c: GradContext) -> Grads:
    """The sum over the copies: dy as [m0, d0, m1, d1, ...] summed over the m axes."""
    x, _, dy = unary(c)
    assert isinstance(c.op, A.TileDOp)
    xs, mult = shape(x), c.op.multiples
    split = [v for m, d in zip(mult, xs) for v in (m, d)]
    e = c.e
    return [e.reshape(e.reduce_sum(e.reshape(dy, split), range(0, 2 * len(xs), 2)), xs)]
