"""Canonicalization of `ascend.Cast`, registered on the op so xDSL's `canonicalize` uses it.

* an identity cast (`f16 -> f16`) is its operand;
* an exact round trip through a wider type (`f16 -> f32 -> f16`, `bf16 -> f32 -> bf16`, any
  float through f64) is the original value; `f32 -> f16 -> f32` rounds, so it is never folded;
* a cast of an `ascend.Const` between float types is a constant of the destination type, its
  values rounded to nearest even as the Cast kernel rounds them.

```mlir
%h = ascend.Cast %x : (tensor<4xf16>) -> tensor<4xf32>
%y = ascend.Cast %h : (tensor<4xf32>) -> tensor<4xf16>      // -> %x
```
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait

FLOATS = ("f16", "bf16", "f32", "f64")
EXACT_WIDENING = frozenset({("f16", "f32"), ("bf16", "f32"), ("f16", "f64"), ("bf16", "f64"), ("f32", "f64")})
"""(narrow, wide) pairs whose round trip narrow -> wide -> narrow is the identity."""


def _dtype(value: object) -> str | None:
    from ascend_mp.dtypes import tensor_dtype

    return tensor_dtype(value.type)  # type: ignore[attr-defined]


class FoldIdentityCast(RewritePattern):
    """`Cast(x: T -> T)` is `x`."""

    def match_and_rewrite(self, op: object, rewriter: PatternRewriter) -> None:
        from ascend_mp.dialects.ascend import CastOp

        if isinstance(op, CastOp) and op.x.type == op.y.type:
            rewriter.replace(op, [], [op.x])


class FoldExactRoundTrip(RewritePattern):
    """`Cast(Cast(x: A -> B): B -> A)` is `x` when A -> B widens exactly (f16/bf16 -> f32, -> f64)."""

    def match_and_rewrite(self, op: object, rewriter: PatternRewriter) -> None:
        from ascend_mp.dialects.ascend import CastOp

        if not isinstance(op, CastOp):
            return
        inner = op.x.owner
        if not isinstance(inner, CastOp) or inner.x.type != op.y.type:
            return
        if (_dtype(inner.x), _dtype(op.x)) in EXACT_WIDENING:
            rewriter.replace(op, [], [inner.x])


class FoldCastOfConstant(RewritePattern):
    """`Cast(Const c)` between float types is `Const(round(c))`."""

    def match_and_rewrite(self, op: object, rewriter: PatternRewriter) -> None:
        from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType

        from ascend_mp.dialects.ascend import CastOp, ConstOp
        from ascend_mp.dtypes import NUMPY, element_type

        if not isinstance(op, CastOp) or not isinstance(op.x.owner, ConstOp):
            return
        src, dst = _dtype(op.x), _dtype(op.y)
        if src not in FLOATS or dst not in FLOATS:
            return
        import numpy as np

        const = op.x.owner
        with np.errstate(over="ignore"):  # out of range rounds to inf, as the kernel does
            values = np.asarray(const.value.get_values(), dtype=NUMPY[src]).astype(NUMPY[dst])
        y_type = op.y.type
        assert isinstance(y_type, TensorType)
        new_type = TensorType(element_type(dst), y_type.get_shape())
        attr = DenseIntOrFPElementsAttr.from_list(new_type, [float(v) for v in values.astype(np.float64).ravel()])
        rewriter.replace(op, ConstOp(attr))


class CastCanonicalization(HasCanonicalizationPatternsTrait):
    """The canonicalization patterns of `ascend.Cast`."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldIdentityCast(), FoldExactRoundTrip(), FoldCastOfConstant())
