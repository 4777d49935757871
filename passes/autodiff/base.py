"""What every gradient rule of `ascend-autodiff` shares: :class:`GradContext`, the rule
registry :data:`RULES` (filled by the family modules `cube`, `elementwise`, `reduce`, `shape`,
`cast`, `grad`), :data:`NO_GRADIENT`, and shape helpers."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, dtype, shape, tensor
from ascend_mp.errors import AscendPassError


@dataclass
class GradContext:
    """What a gradient rule sees: the op, its result gradients, and which operands need one."""

    e: Emitter
    op: A.AscendOp
    dys: list[SSAValue | None]
    needs: list[bool]
    where: str
    """The forward op's location, for errors."""

    def dy(self, index: int = 0) -> SSAValue:
        """The gradient of result `index` (multi-result rules call :meth:`only` first, so it exists)."""
        g = self.dys[index]
        assert g is not None, f"{self.op.name}: result #{index} has no gradient"
        return g

    def only(self, *results: int) -> None:
        """Fail if a result other than `results` carries a gradient (the rule cannot handle it)."""
        for i, d in enumerate(self.dys):
            if d is not None and i not in results:
                raise AscendPassError(
                    f"{self.where}: ascend-autodiff: no gradient rule for result #{i} of {self.op.name}"
                )


Grads = list[SSAValue | None]
Rule = Callable[[GradContext], Grads]

RULES: dict[type[A.AscendOp], Rule] = {}
"""Op class -> gradient rule: returns one gradient (or None) per operand."""

NO_GRADIENT: dict[type[A.AscendOp], str] = {
    A.ConstOp: "no operands",
    A.ArgMaxV2Op: "integer result",
    A.GreaterOp: "bool result",
    A.LessOp: "bool result",
    A.EqualOp: "bool result",
    A.LogicalAndOp: "bool result",
    A.LogicalOrOp: "bool result",
    A.LogicalNotOp: "bool result",
    A.FloorOp: "piecewise constant (zero gradient almost everywhere)",
    A.NPUAllocFloatStatusOp: "float status register",
    A.NPUClearFloatStatusOp: "float status register",
    A.NPUGetFloatStatusOp: "float status register",
}
"""Ops that pass no gradient to their operands, and why."""


def rule(*classes: type[A.AscendOp]) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for cls in classes:
            RULES[cls] = fn
        return fn

    return register


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def unbroadcast(e: Emitter, g: SSAValue, target: Sequence[int]) -> SSAValue:
    """Sum `g` over the dimensions NumPy broadcasting added or stretched to reach its shape from `target`."""
    gs = shape(g)
    lead = len(gs) - len(target)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(target) if d == 1 and gs[lead + i] != 1]
    if axes:
        g = e.reduce_sum(g, axes, keep_dims=True)
    return e.reshape(g, target)


def broadcast_to(e: Emitter, g: SSAValue, target: Sequence[int]) -> SSAValue:
    """`g` (broadcastable to `target`) materialised at `target`'s shape, by multiplying with ones."""
    if shape(g) == tuple(target):
        return g
    return e.mul(g, e.const(1.0, dtype(g), target))


def keep_dims_shape(x: Sequence[int], axes: Sequence[int]) -> list[int]:
    return [1 if i in axes else d for i, d in enumerate(x)]


def unary(c: GradContext) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x, y, dy cast to x's dtype) of a one-operand op."""
    x = c.op.operands[0]
    return x, c.op.results[0], c.e.cast(c.dy(), dtype(x))


def binary_operands(c: GradContext) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(x1, x2, dy cast to x1's dtype) of a two-operand op."""
    x1, x2 = c.op.operands
    return x1, x2, c.e.cast(c.dy(), dtype(x1))


def window(e: Emitter, g: SSAValue, dim: int, start: int, length: int, fill: float | SSAValue = 0.0) -> SSAValue:
    """`out[i] = g[start + i]` along `dim` for i in [0, length), `fill` (a number, or a rank-0
    value) where `start + i` lies outside `g`: a crop (StridedSliceD) and/or a pad (ConcatV2D)."""
    size = shape(g)[dim]
    if start == 0 and length == size:
        return g
    lo, hi = max(start, 0), min(start + length, size)
    parts: list[SSAValue] = []

    def filler(n: int) -> SSAValue:
        dims = list(shape(g))
        dims[dim] = n
        if isinstance(fill, SSAValue):
            return e.mul(e.const(1.0, dtype(g), dims), fill)
        return e.const(fill, dtype(g), dims)

    if start < 0:
        parts.append(filler(min(-start, length)))
    if hi > lo:
        if (lo, hi) == (0, size):
            parts.append(g)
        else:
            n = dim + 1
            begin, end = [0] * n, [0] * n
            begin[dim], end[dim] = lo, hi
            mask = ((1 << n) - 1) & ~(1 << dim)
            dims = list(shape(g))
            dims[dim] = hi - lo
            parts.append(
                e.one(
                    A.StridedSliceDOp,
                    g,
                    type_=tensor(dims, dtype(g)),
                    begin=begin,
                    end=end,
                    strides=[1] * n,
                    begin_mask=mask,
                    end_mask=mask,
                )
            )
    tail = length - sum(shape(p)[dim] for p in parts)
    if tail > 0:
        parts.append(filler(tail))
    if len(parts) == 1:
        return parts[0]
    dims = list(shape(g))
    dims[dim] = length
    return e.one(A.ConcatV2DOp, parts, type_=tensor(dims, dtype(g)), concat_dim=dim)


def select_along(e: Emitter, g: SSAValue, dim: int, matrix: object) -> SSAValue:
    """`g` multiplied along `dim` by a constant [size, n] matrix (a 0/1 selection or scatter):
    the dimension moves last, a MatMulV2, and back."""
    mat = np.asarray(matrix, dtype=np.float64)
    gs = shape(g)
    rank = len(gs)
    perm = [i for i in range(rank) if i != dim] + [dim]
    moved = g if dim == rank - 1 else e.one(A.TransposeOp, g, type_=tensor([gs[i] for i in perm], dtype(g)), perm=perm)
    rows = math.prod(gs[i] for i in perm[:-1])
    flat = e.reshape(moved, (rows, gs[dim]))
    n = mat.shape[1]
    out = e.one(A.MatMulV2Op, flat, e.const(mat, dtype(g)), None, type_=tensor((rows, n), dtype(g)))
    out = e.reshape(out, [gs[i] for i in perm[:-1]] + [n])
    if dim == rank - 1:
        return out
    inverse = [perm.index(i) for i in range(rank)]
    return e.one(
        A.TransposeOp, out, type_=tensor([n if i == dim else d for i, d in enumerate(gs)], dtype(g)), perm=inverse
    )
