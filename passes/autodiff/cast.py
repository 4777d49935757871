"""Gradient rule of Cast."""

from __future__ import annotations

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import dtype
from ascend_mp.passes.autodiff.base import GradContext, Grads, rule


@rule(A.CastOp)
def _cast(c: GradContext) -> Grads:
    """The gradient is cast back to the input's dtype."""
    x = c.op.operands[0]
    return [c.e.cast(c.dy(), dtype(x))]
