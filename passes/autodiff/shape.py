"""Gradient rules of the shape and data movement ops."""

from __future__ import annotations

import math

import numpy as np

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, dtype, shape, tensor
from ascend_mp.passes.autodiff.base import GradContext, Grads, binary_operands, broadcast_to, keep_dims_shape, rule, unary, unbroadcast

@rule(A.ReshapeOp)
def _reshape(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [c.e.reshape(dy, shape(x))]


@rule(A.TransposeOp)
def _transpose(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    perm = c.op.prop_ints("perm")
    inverse = [perm.index(i) for i in range(len(perm))]
    return [c.e.one(A.TransposeOp, dy, type_=x.type, perm=inverse)]


@rule(A.ConcatV2DOp)
def _concat(c: GradContext) -> Grads:
    """Slices of dy by a matrix product with 0/1 selection matrices (the dialect has no Slice op)."""
    op, e = c.op, c.e
    ys = shape(op.results[0])
    rank = len(ys)
    dim = op.prop_int("concat_dim") % rank
    dy = e.cast(c.dy(), dtype(op.operands[0]))
    perm = [i for i in range(rank) if i != dim] + [dim]
    moved = dy if dim == rank - 1 else e.one(A.TransposeOp, dy, type_=tensor([ys[i] for i in perm], dtype(dy)), perm=perm)
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
    d_off = e.reshape(e.reduce_sum(e.mul(dy, e.sub(e.const(1.0, f), mask)), range(len(shape(dy)))), shape(op.off_value)) if c.needs[2] else None
    return [None, d_on, d_off]


