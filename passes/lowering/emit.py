"""Building blocks of the ascend -> linalg lowering: an :class:`Emitter` that collects the upstream ops
(`tensor.empty`, `linalg.generic`, `arith`, `math`) replacing one ascend op, and :class:`Scalar`, the
builder of a `linalg.generic` body.

Numerics (as the interpreter, docs/usage/lowering.md): a float16/bfloat16 value is widened to float32
(`arith.extf`) before any arithmetic, the body computes in float32 (float64 tensors in float64), and
the result is rounded once to its dtype (`arith.truncf`). Reading op properties goes through
:func:`attr`, the one place that knows how the dialect stores them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    f64,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from ascend_mp.dialects.ascend import AscendOp, from_attr

LOW_FLOATS = (Float16Type, BFloat16Type)
"""Element types a body widens to float32 before computing (the interpreter's vector and cube units)."""

PARALLEL = IteratorTypeAttr.parallel()
REDUCTION = IteratorTypeAttr.reduction()


class LoweringError(Exception):
    """An op (or an op's configuration) this lowering does not handle; the pass reports it with the op's location."""


def attr(op: AscendOp, name: str) -> Any:
    """The property `name` of `op` as a Python value (given, else the op's declared default): an int, float, bool, str
    or int tuple, which the caller knows from the op's definition (hence Any)."""
    value = op.properties.get(name)
    if value is not None:
        return from_attr(value)
    defaults = type(op).attr_defaults()
    if name not in defaults:
        raise LoweringError(f"needs the attribute '{name}'")
    return defaults[name]


def ints(op: AscendOp, name: str) -> tuple[int, ...]:
    return tuple(int(v) for v in attr(op, name))


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    t = value.type
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise LoweringError(f"handles static tensor shapes only, got {t}")
    return t


def shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_type(value).get_shape())


def elem(value: SSAValue) -> Attribute:
    return tensor_type(value).element_type


def is_float(t: Attribute) -> TypeGuard[AnyFloat]:
    return isinstance(t, (Float16Type, BFloat16Type, Float32Type, Float64Type))


def compute_type(*types: Attribute) -> Attribute | None:
    """The float type a body computes in: float64 if any type is, else float32 when any is a float."""
    floats = [t for t in types if is_float(t)]
    if not floats:
        return None
    return f64 if any(isinstance(t, Float64Type) for t in floats) else f32


def dim(i: int) -> AffineExpr:
    return AffineExpr.dimension(i)


def const(c: int) -> AffineExpr:
    return AffineExpr.constant(c)


def amap(n_loops: int, exprs: Sequence[AffineExpr]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(n_loops, 0, tuple(exprs)))


def identity(rank: int) -> AffineMapAttr:
    return amap(rank, [dim(i) for i in range(rank)])


def broadcast_map(in_shape: Sequence[int], out_shape: Sequence[int]) -> AffineMapAttr:
    """The map reading an operand broadcast (NumPy rules) to `out_shape`, one loop per output dimension."""
    lead = len(out_shape) - len(in_shape)
    exprs = [const(0) if d == 1 and out_shape[lead + j] != 1 else dim(lead + j) for j, d in enumerate(in_shape)]
    return amap(len(out_shape), exprs)


@dataclass
class Scalar:
    """Builds the body of a `linalg.generic`: each method appends one scalar op and returns its value."""

    block: Block
    ops: list[Operation] = field(default_factory=list[Operation])

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def arg(self, i: int) -> SSAValue:
        return self.block.args[i]

    def index(self, d: int) -> SSAValue:
        return self.add(IndexOp(d))

    def const(self, value: float | int, t: Attribute) -> SSAValue:
        if is_float(t):
            return self.add(arith.ConstantOp(FloatAttr(float(value), t)))
        return self.add(arith.ConstantOp(IntegerAttr(int(value), t)))  # pyright: ignore[reportCallIssue, reportArgumentType]  # t is an integer or index type here (not is_float)

    def convert(self, v: SSAValue, to: Attribute) -> SSAValue:
        """`v` as type `to`: extf/truncf between floats, fptosi/sitofp, extsi/trunci, i1 from `!= 0`."""
        src = v.type
        if src == to:
            return v
        if isinstance(to, IntegerType) and to.width.data == 1:
            zero = self.const(0, src)
            return self.add(arith.CmpfOp(v, zero, "une") if is_float(src) else arith.CmpiOp(v, zero, "ne"))
        if is_float(src) and is_float(to):
            if _width(src) == _width(to):  # float16 <-> bfloat16: widened exactly to float32, rounded once
                v = self.add(arith.ExtFOp(v, f32))
                return self.add(arith.TruncFOp(v, to))
            return self.add(arith.ExtFOp(v, to) if _width(to) > _width(src) else arith.TruncFOp(v, to))
        if is_float(src) and isinstance(to, IntegerType):
            return self.add(arith.FPToSIOp(v, to))
        if isinstance(src, IntegerType) and is_float(to):
            if src.width.data == 1:
                return self.add(arith.UIToFPOp(v, to))
            return self.add(arith.SIToFPOp(v, to))
        if isinstance(src, IntegerType) and isinstance(to, IntegerType):
            if to.width.data > src.width.data:
                return self.add(arith.ExtUIOp(v, to) if src.width.data == 1 else arith.ExtSIOp(v, to))
            return self.add(arith.TruncIOp(v, to))
        raise LoweringError(f"cannot convert {src} to {to}")

    def widen(self, v: SSAValue, compute: Attribute | None) -> SSAValue:
        return v if compute is None or not is_float(v.type) else self.convert(v, compute)

    # float arithmetic (both operands of one type)
    def addf(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.AddfOp(a, b))

    def subf(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SubfOp(a, b))

    def mulf(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MulfOp(a, b))

    def divf(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.DivfOp(a, b))

    def maxf(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MaximumfOp(a, b))

    def minf(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.MinimumfOp(a, b))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(arith.SelectOp(c, a, b))

    def cmpf(self, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
        return self.add(arith.CmpfOp(a, b, pred))

    def exp(self, a: SSAValue) -> SSAValue:
        return self.add(math.ExpOp(a))

    def log(self, a: SSAValue) -> SSAValue:
        return self.add(math.LogOp(a))

    def sqrt(self, a: SSAValue) -> SSAValue:
        return self.add(math.SqrtOp(a))

    def tanh(self, a: SSAValue) -> SSAValue:
        return self.add(math.TanhOp(a))


def _width(t: Attribute) -> int:
    return {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}[type(t)]


BodyFn = Callable[[Scalar], Sequence[SSAValue]]


class Emitter:
    """Collects the ops that replace one ascend op, in order."""

    def __init__(self, status: object | None = None) -> None:
        self.ops: list[Operation] = []
        self.status = status
        """The function's float status (`status.StatusTracker`), when it reads one."""

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def empty(self, shape_: Sequence[int], t: Attribute) -> SSAValue:
        return self.add(tensor.EmptyOp([], TensorType(t, list(shape_))))

    def scalar(self, value: float | int, t: Attribute) -> SSAValue:
        if is_float(t):
            return self.add(arith.ConstantOp(FloatAttr(float(value), t)))
        return self.add(arith.ConstantOp(IntegerAttr(int(value), t)))  # pyright: ignore[reportCallIssue, reportArgumentType]  # t is an integer or index type here (not is_float)

    def generic(
        self,
        inputs: Sequence[tuple[SSAValue, AffineMapAttr]],
        outputs: Sequence[tuple[SSAValue, AffineMapAttr]],
        iterators: Sequence[IteratorTypeAttr],
        body: BodyFn,
    ) -> list[SSAValue]:
        """A `linalg.generic` over `inputs` into the `outputs` (init tensors) whose body `body` yields one
        value per output (the body's block arguments: one scalar per input, then per output)."""
        arg_types = [elem(v) for v, _ in inputs] + [elem(v) for v, _ in outputs]
        block = Block(arg_types=arg_types)
        s = Scalar(block)
        yielded = list(body(s))
        block.add_ops([*s.ops, YieldOp(*yielded)])
        op = GenericOp(
            [v for v, _ in inputs],
            [v for v, _ in outputs],
            Region(block),
            [m for _, m in inputs] + [m for _, m in outputs],
            list(iterators),
            [v.type for v, _ in outputs],
        )
        self.ops.append(op)
        return list(op.results)

    def fill(self, shape_: Sequence[int], t: Attribute, value: float | int) -> SSAValue:
        """A tensor of `value` (a `linalg.generic` with no inputs yielding the constant)."""
        init = self.empty(shape_, t)
        c = self.scalar(value, t)
        rank = len(shape_)
        return self.generic([], [(init, identity(rank))], [PARALLEL] * rank, lambda s: [c])[0]

    def map(
        self,
        inputs: Sequence[SSAValue],
        out_shape: Sequence[int],
        out_type: Attribute,
        fn: Callable[[Scalar, list[SSAValue]], SSAValue],
        compute: Attribute | None = None,
        maps: Sequence[AffineMapAttr] | None = None,
    ) -> SSAValue:
        """An elementwise op: `inputs` broadcast to `out_shape` (or read through `maps`), each widened to
        `compute`, `fn` applied, the result converted once to `out_type`."""
        rank = len(out_shape)
        in_maps = list(maps) if maps is not None else [broadcast_map(shape(v), out_shape) for v in inputs]
        init = self.empty(out_shape, out_type)

        def body(s: Scalar) -> list[SSAValue]:
            args = [s.widen(s.arg(i), compute) for i in range(len(inputs))]
            return [s.convert(fn(s, args), out_type)]

        return self.generic(list(zip(inputs, in_maps)), [(init, identity(rank))], [PARALLEL] * rank, body)[0]

    def convert(self, x: SSAValue, to: Attribute) -> SSAValue:
        """The tensor `x` with its elements converted to `to` (unchanged when already of that type)."""
        if elem(x) == to:
            return x
        return self.map([x], shape(x), to, lambda s, a: a[0])

    def reduce(
        self,
        x: SSAValue,
        axes: Sequence[int],
        init: float,
        combine: Callable[[Scalar, SSAValue, SSAValue], SSAValue],
        acc_type: Attribute,
        keep_dims: bool = False,
        pre: Callable[[Scalar, SSAValue], SSAValue] | None = None,
    ) -> SSAValue:
        """Reduce `x` over `axes` into an `acc_type` tensor initialised to `init` (each element widened to
        `acc_type`, then `pre` applied)."""
        in_shape = shape(x)
        rank = len(in_shape)
        red = set(axes)
        out_shape = (
            [1 if i in red else d for i, d in enumerate(in_shape)]
            if keep_dims
            else [d for i, d in enumerate(in_shape) if i not in red]
        )
        out_exprs = (
            [const(0) if i in red else dim(i) for i in range(rank)]
            if keep_dims
            else [dim(i) for i in range(rank) if i not in red]
        )
        acc = self.fill(out_shape, acc_type, init)

        def body(s: Scalar) -> list[SSAValue]:
            v = s.convert(s.arg(0), acc_type)
            if pre is not None:
                v = pre(s, v)
            return [combine(s, s.arg(1), v)]

        iters = [REDUCTION if i in red else PARALLEL for i in range(rank)]
        return self.generic([(x, identity(rank))], [(acc, amap(rank, out_exprs))], iters, body)[0]

    def collapse(self, x: SSAValue, groups: Sequence[Sequence[int]], out_shape: Sequence[int]) -> SSAValue:
        """`tensor.collapse_shape`: each group of `x`'s dimensions becomes one of `out_shape`."""
        result = TensorType(elem(x), list(out_shape))
        return self.add(
            tensor.CollapseShapeOp(
                operands=[x], result_types=[result], properties={"reassociation": _reassociation(groups)}
            )
        )

    def expand(self, x: SSAValue, groups: Sequence[Sequence[int]], out_shape: Sequence[int]) -> SSAValue:
        """`tensor.expand_shape`: each dimension of `x` becomes a group of `out_shape`'s."""
        return self.add(
            tensor.ExpandShapeOp(x, [], _reassociation(groups), list(out_shape), TensorType(elem(x), list(out_shape)))
        )

    def insert(
        self, src: SSAValue, dest: SSAValue, offsets: Sequence[int], strides: Sequence[int] | None = None
    ) -> SSAValue:
        sizes = list(shape(src))
        st = list(strides) if strides is not None else [1] * len(sizes)
        return self.add(tensor.InsertSliceOp.get(src, dest, sizes, list(offsets), st))

    def extract(self, x: SSAValue, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int]) -> SSAValue:
        return self.add(
            tensor.ExtractSliceOp(x, list(offsets), list(sizes), list(strides), TensorType(elem(x), list(sizes)))
        )

    def pad(self, x: SSAValue, lo: Sequence[int], hi: Sequence[int], value: float) -> SSAValue:
        """`x` padded with `value` (`lo`/`hi` elements before/after each dimension): a `tensor.pad`."""
        if not any(lo) and not any(hi):
            return x
        out = [d + a + b for d, a, b in zip(shape(x), lo, hi)]
        c = self.scalar(value, elem(x))
        block = Block(arg_types=[IndexType()] * len(out))
        block.add_op(tensor.YieldOp(c))
        return self.add(tensor.PadOp(x, [], [], Region(block), list(lo), list(hi), TensorType(elem(x), out)))


def _reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in groups])
