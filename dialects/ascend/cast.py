"""Constants, casts and the float status ops of the `ascend` dialect, and the Cast canonicalization.

`ascend.Cast` registers its canonicalization patterns on the op (:class:`CastCanonicalization`),
so xDSL's plain `canonicalize` pass uses them:

* an identity cast (`f16 -> f16`) is its operand;
* an exact round trip through a wider type (`f16 -> f32 -> f16`, `bf16 -> f32 -> bf16`, any
  float through f64) is the original value; `f32 -> f16 -> f32` rounds, so it is never folded;
* a cast of an `ascend.Const` between float types is a constant of the destination type, its
  values rounded to nearest even as the Cast kernel rounds them.

```mlir
%h = ascend.Cast %x : (tensor<4xf16>) -> tensor<4xf32>
%y = ascend.Cast %h : (tensor<4xf32>) -> tensor<4xf16>      // -> %x
%s = ascend.NPUAllocFloatStatus : tensor<8xf32>
```
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, TensorType
from xdsl.ir import OpTraits, SSAValue, TypeAttribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.printer import Printer
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    MemoryAllocEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    OpTrait,
    Pure,
)

from ascend_mp.dialects.ascend.attrs import Unit
from ascend_mp.dialects.ascend.base import AscendOp, dims_match, shape_of
from ascend_mp.dtypes import element_type, tensor_dtype


class FloatStatusOp(AscendOp, ABC):
    """The float status ops touch a device register (Ascend's overflow flag), so they are not Pure.

    Each declares its effect on the register as an xDSL memory effect: Alloc allocates
    the status buffer, Clear writes the register, Get reads the register and writes
    its buffer. So `dce`/`canonicalize` never erase a Clear or a Get, `cse` never merges
    two Gets (a write lies between any two) or two Clears, and passes that hoist or
    speculate ops leave them in place (they are not speculatable).

    The compute ops stay Pure: the register reports inf/NaN in the values the program
    computes. An op whose result is unused may be erased by `dce`/`canonicalize`, and
    its overflow is then not reported (it influenced nothing); two identical ops merged
    by `cse` compute one value and report what it reports, as each would have.
    """

    UNIT: ClassVar[Unit] = Unit.STATUS

    def verify_shapes(self) -> None:
        for v in (*self.operands, *self.results):
            if shape_of(v) != (8,):
                self.fail("expects the float status buffer tensor<8xf32>")


def _status_effects(*effects: OpTrait):  # noqa: ANN202
    """Replace the Pure that a float status op inherits from `AscendOp` by its memory effects
    (xDSL unites the traits of every base class, so a subclass cannot drop one itself)."""

    def apply(cls: type[FloatStatusOp]) -> type[FloatStatusOp]:
        kept = tuple(t for t in cls.traits if not isinstance(t, Pure))
        traits = OpTraits(lambda: (*kept, *effects))
        cls.traits = traits
        cls.get_irdl_definition().traits = traits
        return cls

    return apply


# --------------------------------------------------------------------------------------
# Constants and casts
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ConstOp(AscendOp):
    """A constant tensor (TF's `Const`): inline `dense<...>` elements, or a `dense_resource<...>`
    blob for weights (MLIR's `{-# dialect_resources #-}` section; see `ascend_mp.resources`).

    ```mlir
    %c = ascend.Const dense<1.0> : tensor<4xf32>
    %w = ascend.Const dense_resource<fc1.weight> {name = "fc1.weight"} : tensor<32x16xf32>
    ```
    """

    name = "ascend.Const"
    UNIT: ClassVar[Unit] = Unit.CONST
    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    y = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())
    assembly_format = None

    def __init__(self, value: DenseIntOrFPElementsAttr | DenseResourceAttr, **props: object):
        super().__init__(result_types=[value.type], value=value, **props)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, (DenseIntOrFPElementsAttr, DenseResourceAttr)):
            parser.raise_error("ascend.Const expects a dense or dense_resource elements attribute", pos)
        extra = parser.parse_optional_attr_dict()
        op = cls.build(result_types=[value.type], properties={"value": value})
        for key, attr in extra.items():
            if key in op.get_irdl_definition().properties:
                op.properties[key] = attr
            else:
                op.attributes[key] = attr
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        rest = {k: v for k, v in self.properties.items() if k != "value"} | dict(self.attributes)
        printer.print_op_attributes(rest)

    def verify_shapes(self) -> None:
        if self.value.type != self.y.type:
            self.fail("expects the value's type to equal the result type")
        if isinstance(self.value, DenseResourceAttr):
            from ascend_mp.resources import resource_problem

            problem = resource_problem(self.value)
            if problem is not None:
                self.fail(problem)


class CastCanonicalization(HasCanonicalizationPatternsTrait):
    """The canonicalization patterns of `ascend.Cast` (below the op)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldIdentityCast(), FoldExactRoundTrip(), FoldCastOfConstant())


@irdl_op_definition
class CastOp(AscendOp):
    """Converts a tensor to the result's element type (round to nearest even).

    The destination dtype is the result type; `dst_type`, when given, must equal it.

    ```mlir
    %h = ascend.Cast %x : (tensor<4xf32>) -> tensor<4xf16>
    ```
    """

    name = "ascend.Cast"
    UNIT: ClassVar[Unit] = Unit.CAST
    x = operand_def(TensorType)
    y = result_def(TensorType)
    dst_type = opt_prop_def(TypeAttribute)
    traits = traits_def(Pure(), CastCanonicalization())  # identity casts, exact round trips, casts of constants

    def verify_shapes(self) -> None:
        if not dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects the result shape to equal the operand shape")
        assert isinstance(self.y.type, TensorType)
        if self.dst_type is not None and self.dst_type != self.y.type.element_type:
            self.fail(f"dst_type {self.dst_type} differs from the result element type {self.y.type.element_type}")


# --------------------------------------------------------------------------------------
# Cast canonicalization
# --------------------------------------------------------------------------------------

FLOATS = ("f16", "bf16", "f32", "f64")
"""The float dtypes a cast of a constant folds between."""
EXACT_WIDENING = frozenset({("f16", "f32"), ("bf16", "f32"), ("f16", "f64"), ("bf16", "f64"), ("f32", "f64")})
"""(narrow, wide) pairs whose round trip narrow -> wide -> narrow is the identity."""


def _dtype(value: SSAValue) -> str | None:
    return tensor_dtype(value.type)


class FoldIdentityCast(RewritePattern):
    """`Cast(x: T -> T)` is `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        if op.x.type == op.y.type:
            rewriter.replace(op, [], [op.x])


class FoldExactRoundTrip(RewritePattern):
    """`Cast(Cast(x: A -> B): B -> A)` is `x` when A -> B widens exactly (f16/bf16 -> f32, -> f64)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        inner = op.x.owner
        if not isinstance(inner, CastOp) or inner.x.type != op.y.type:
            return
        if (_dtype(inner.x), _dtype(op.x)) in EXACT_WIDENING:
            rewriter.replace(op, [], [inner.x])


class FoldCastOfConstant(RewritePattern):
    """`Cast(Const c)` between float types is `Const(round(c))` for inline `dense<...>` elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        const = op.x.owner
        if not isinstance(const, ConstOp) or not isinstance(const.value, DenseIntOrFPElementsAttr):
            return  # a weight blob (dense_resource) stays one: ascend-store-low-weights narrows those
        src, dst = _dtype(op.x), _dtype(op.y)
        if src not in FLOATS or dst not in FLOATS:
            return
        import numpy as np  # numpy (and NUMPY) load on first use: parsing alone stays fast

        from ascend_mp.dtypes import NUMPY

        with np.errstate(over="ignore"):  # out of range rounds to inf, as the kernel does
            values = np.asarray(const.value.get_values(), dtype=NUMPY[src]).astype(NUMPY[dst])
        y_type = op.y.type
        assert isinstance(y_type, TensorType)
        new_type = TensorType(element_type(dst), y_type.get_shape())
        attr = DenseIntOrFPElementsAttr.from_list(new_type, [float(v) for v in values.astype(np.float64).ravel()])  # pyright: ignore[reportCallIssue, reportArgumentType]  # xDSL's from_list overloads want a TensorType of a float/int type statically; this one is only known at run time
        rewriter.replace(op, ConstOp(attr))


# --------------------------------------------------------------------------------------
# Float status (overflow detection)
# --------------------------------------------------------------------------------------


@_status_effects(MemoryAllocEffect())
@irdl_op_definition
class NPUAllocFloatStatusOp(FloatStatusOp):
    """Allocates the float status buffer. ```mlir
    %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
    ```"""

    name = "ascend.NPUAllocFloatStatus"
    data = result_def(TensorType)
    assembly_format = "attr-dict `:` type($data)"
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("data",)


@_status_effects(MemoryWriteEffect())
@irdl_op_definition
class NPUClearFloatStatusOp(FloatStatusOp):
    """Clears the overflow flag; returns the cleared buffer.

    ```mlir
    %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
    ```
    """

    name = "ascend.NPUClearFloatStatus"
    addr = operand_def(TensorType)
    data = result_def(TensorType)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("addr", "data")


@_status_effects(MemoryReadEffect(), MemoryWriteEffect())
@irdl_op_definition
class NPUGetFloatStatusOp(FloatStatusOp):
    """Reads the overflow flag: element 0 is nonzero if an AI Core kernel produced inf/NaN since the last clear.

    ```mlir
    %f = ascend.NPUGetFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
    ```
    """

    name = "ascend.NPUGetFloatStatus"
    addr = operand_def(TensorType)
    data = result_def(TensorType)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("addr", "data")
