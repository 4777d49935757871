"""The `ascend` dialect: Ascend NPU operators named by their CANN op types.

Every op is a CANN op type verbatim (`ascend.MatMulV2`, `ascend.Conv2D`), with
CANN/TF attribute names (`transpose_x1`, `strides`, `pads`, `data_format`,
`axes`, `keep_dims`, ...). Operands and results are ranked tensors.

Each op may carry two dialect attributes that describe what the hardware can run:

* `caps = #ascend.caps<(f16, f16) -> f16, (f32, f32) -> f32, aicpu (f32, f32) -> f32>`:
  the kernel signatures (CANN's parallel dtype columns: column i of every input
  and output together is one kernel), each on the AI Core unless marked `aicpu`.
  A signature lists one dtype per operand *definition* of the op (an optional
  operand that is absent is skipped; a variadic one uses the same dtype for all
  of its values), then one per result.
* `list = #ascend.list<white|black|gray>`: the mixed-precision list kind
  (CANN's `precision_reduce` flag: true = white, false = black, absent = gray).

When an op does not carry them, the operator library supplies them
(`ascend_mp.opinfo`); the `ascend-attach-caps` pass writes them into the IR.
The verifier checks structure only (ranks, shapes, attribute ranges, dtype
agreement inside one kernel): whether a kernel exists for the dtypes is the
precision pass's question, so an fp32 graph holding an fp16-only Conv2D parses.

An optional `name` attribute holds the TF/ONNX node name that the
`keep_dtype` and `customize_dtypes` files refer to. A unit `keep_dtype` attribute
pins the op to its original dtype under every precision mode and policy (the
loss, loss scaling and optimizer updates carry it; see `AscendOp.keep_dtype`).

```mlir
%y = ascend.MatMulV2 %x, %w {transpose_x2 = true, name = "fc1"} : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
%r = ascend.Relu %y : (tensor<8x32xf32>) -> tensor<8x32xf32>
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import auto
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Data, Dialect, Operation, OpTraits, SSAValue, TypeAttribute

from ascend_mp.cast_patterns import CastCanonicalization
from xdsl.irdl import (
    IRDLOperation,
    OptionalDef,
    ParsePropInAttrDict,
    VariadicDef,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect, OpTrait, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from ascend_mp.dtypes import dtype_name, is_float

# --------------------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------------------

ENGINES = ("aicore", "aicpu")


@dataclass(frozen=True)
class Kernel:
    """One kernel signature: a dtype per operand definition, a dtype per result, an engine."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    engine: str = "aicore"

    def __str__(self) -> str:
        prefix = "" if self.engine == "aicore" else f"{self.engine} "
        outs = self.outputs[0] if len(self.outputs) == 1 else f"({', '.join(self.outputs)})"
        return f"{prefix}({', '.join(self.inputs)}) -> {outs}"


@irdl_attr_definition
class CapsAttr(Data[tuple[Kernel, ...]]):
    """The kernels an op has: `#ascend.caps<(f16, f16) -> f16, aicpu (f32) -> f32>`."""

    name = "ascend.caps"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[Kernel, ...]:
        def parse_dtype() -> str:
            pos = parser.pos
            name = dtype_name(parser.parse_type())
            if name is None:
                parser.raise_error("expected a tensor element type (f16, bf16, f32, i32, ...)", pos)
            return name

        def parse_dtypes_until_paren() -> list[str]:
            if parser.parse_optional_punctuation(")") is not None:
                return []
            dtypes = [parse_dtype()]
            while parser.parse_optional_punctuation(",") is not None:
                dtypes.append(parse_dtype())
            parser.parse_punctuation(")")
            return dtypes

        def parse_optional_kernel() -> Kernel | None:
            engine = parser.parse_optional_keyword_in(ENGINES)
            if engine is None and parser.parse_optional_punctuation("(") is None:
                return None
            if engine is not None:
                parser.parse_punctuation("(")
            inputs = parse_dtypes_until_paren()
            parser.parse_punctuation("->")
            if parser.parse_optional_punctuation("(") is not None:
                outputs = parse_dtypes_until_paren()
            else:
                outputs = [parse_dtype()]
            return Kernel(tuple(inputs), tuple(outputs), engine or "aicore")

        kernels: list[Kernel] = []
        with parser.in_angle_brackets():
            kernel = parse_optional_kernel()
            while kernel is not None:
                kernels.append(kernel)
                if parser.parse_optional_punctuation(",") is None:
                    break
                kernel = parse_optional_kernel()
                if kernel is None:
                    parser.raise_error("expected a kernel signature '(dtypes) -> dtypes' after ','")
        return tuple(kernels)

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(", ".join(str(k) for k in self.data))


class Unit(StrEnum):
    """Which unit runs an op, as the interpreter models it (DESIGN section 6).

    `cube`: MatMul/Conv (inputs in their dtype, fp32 accumulation, one rounding);
    `vector`: everything computed (fp16/bf16 widened to fp32, one rounding);
    `data`: exact data movement and selection in the operands' dtype; `cast`, `const`,
    `status` (the float status register) are their own kind.
    """

    VECTOR = auto()
    CUBE = auto()
    DATA = auto()
    CAST = auto()
    CONST = auto()
    STATUS = auto()


class ListKind(StrEnum):
    """CANN's mixed-precision lists: `precision_reduce` true / false / absent."""

    WHITE = auto()
    BLACK = auto()
    GRAY = auto()


@irdl_attr_definition
class ListKindAttr(Data[ListKind]):
    """`#ascend.list<white>`: the op's mixed-precision list."""

    name = "ascend.list"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ListKind:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(ListKind)

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data.value)


# --------------------------------------------------------------------------------------
# Property helpers
# --------------------------------------------------------------------------------------

FORMATS = ("NCHW", "NHWC")
PADDINGS = ("SAME", "VALID")


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def ints_prop(default: Sequence[int] | None = None):
    """A list-of-ints property printed as `array<i64: ...>`."""
    if default is None:
        return prop_def(DenseArrayBase)
    return prop_def(DenseArrayBase, default_value=_ints(default))


def bool_prop(default: bool = False):
    return prop_def(BoolAttr, default_value=BoolAttr.from_bool(default))


def int_prop(default: int):
    return prop_def(IntegerAttr, default_value=IntegerAttr(default, i64))


def float_prop(default: float):
    return prop_def(FloatAttr, default_value=FloatAttr(default, Float32Type()))


def str_prop(default: str):
    return prop_def(StringAttr, default_value=StringAttr(default))


def to_attr(value: object) -> Attribute:
    """A Python value as the attribute ascend ops use for it."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, Float32Type())
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, (list, tuple)):
        return _ints([int(v) for v in value])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    raise TypeError(f"cannot turn {value!r} into an attribute")


def from_attr(attr: Attribute) -> object:
    """The Python value of an attribute as ascend ops use it (the inverse of :func:`to_attr`)."""
    if isinstance(attr, DenseArrayBase):
        return tuple(int(v) for v in attr.get_values())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if isinstance(attr, IntegerAttr):
        width = getattr(attr.type, "width", None)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        value = int(attr.value.data)
        return bool(value) if width is not None and width.data == 1 else value  # pyright: ignore[reportUnknownMemberType]
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    raise TypeError(f"no Python value for attribute {attr}")


# --------------------------------------------------------------------------------------
# Shape helpers (dimensions < 0 are dynamic and match anything)
# --------------------------------------------------------------------------------------


def shape_of(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def _dims_match(a: Sequence[int], b: Sequence[int]) -> bool:
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b))


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy broadcasting of two shapes, or None if they do not broadcast."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1 or x == y or y < 0:
            out.append(x)
        elif x < 0:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def _norm_axis(op: AscendOp, axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < max(rank, 1):
        op.fail(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _spatial(fmt: str) -> tuple[int, int, int]:
    """(channel, height, width) dimension indices of a 4-d tensor in `fmt`."""
    return (1, 2, 3) if fmt == "NCHW" else (3, 1, 2)


def _pool_out(size: int, k: int, s: int, padding: str) -> int:
    """TF SAME/VALID output size; 0 or less when the window does not fit (-1: dynamic)."""
    if size < 0:
        return -1
    if padding == "SAME":
        return -(-size // s)
    return (size - k) // s + 1 if size >= k else 0


PAD_MODES = ("CALCULATED", "SAME", "VALID")
"""MaxPoolV3/AvgPoolV2 `padding_mode`: explicit `pads`, or TF's SAME/VALID rule."""


def pool_pads(size: int, k: int, s: int, mode: str, lo: int, hi: int) -> tuple[int, int]:
    """The (before, after) padding of one pooled dimension under `padding_mode`."""
    if mode == "VALID":
        return 0, 0
    if mode == "SAME":
        total = max((-(-size // s) - 1) * s + k - size, 0)
        return total // 2, total - total // 2
    return lo, hi


def pool_v2_out(size: int, k: int, s: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """Output size of one dimension with explicit pads (ONNX/PyTorch rule: with `ceil_mode` the
    last window must start inside the input or its leading pad); 0 when the window does not fit
    the padded input."""
    span = size + lo + hi - k
    if span < 0:
        return 0
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    return out


# --------------------------------------------------------------------------------------
# Base classes
# --------------------------------------------------------------------------------------


class AscendOp(IRDLOperation, ABC):
    """Base of every ascend op: capability attributes, node name, custom syntax."""

    caps = opt_prop_def(CapsAttr)
    list_kind = opt_prop_def(ListKindAttr, prop_name="list")
    node_name = opt_prop_def(StringAttr, prop_name="name")
    keep_dtype = opt_prop_def(UnitAttr, prop_name="keep_dtype")
    """Set by the passes that emit training machinery (the loss, the unscale, the loss-scale
    state, the optimizer update): every precision mode and policy keeps the op in its
    original dtype, as a `keep_dtype` entry would; only `customize_dtypes` overrides it."""
    impl_mode = opt_prop_def(StringAttr, prop_name="impl_mode")
    """The kernel implementation mode (`ascend-impl-mode`: high_performance, ...); absent: high_precision."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    SAME_DTYPE: ClassVar[tuple[str, ...]] = ()
    """Operand/result definitions whose element types must agree (one kernel column)."""
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ()
    """Operand/result definitions that must be float tensors."""
    CANN_INPUTS: ClassVar[tuple[str, ...] | None] = None
    """CANN input names where they differ from the operand field names."""
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = None
    """CANN output names where they differ from the result field names."""
    UNIT: ClassVar[Unit] = Unit.VECTOR
    """The unit that runs the op (the interpreter's numerics follow it)."""
    VARIABLE_UPDATE: ClassVar[bool] = False
    """The op updates variables (an optimizer: on Ascend its var/slot outputs are ref outputs, as TF's ref and
    resource optimizers, which TF's mixed-precision rewrite never forces to fp16)."""

    @classmethod
    def attr_defaults(cls) -> dict[str, object]:
        """Declared default of every attribute that has one, as Python values (the one place
        defaults are stated: parsing and construction fill them in, the interpreter reads them)."""
        return {
            name: from_attr(d.default_value)
            for name, d in cls.get_irdl_definition().properties.items()
            if d.default_value is not None
        }

    def __init__(
        self,
        *operands: SSAValue | Operation | Sequence[SSAValue | Operation] | None,
        result_types: Sequence[Attribute | Sequence[Attribute]],
        **props: object,
    ):
        super().__init__(
            operands=list(operands),
            result_types=list(result_types),
            properties={k: (None if v is None else to_attr(v)) for k, v in props.items()},
        )

    # -- helpers ------------------------------------------------------------------
    def fail(self, message: str) -> None:
        raise VerifyException(f"'{self.name}' op {message}")

    def prop_ints(self, name: str) -> tuple[int, ...]:
        attr = self.properties[name]
        assert isinstance(attr, DenseArrayBase)
        return tuple(int(v) for v in attr.get_values())  # pyright: ignore[reportUnknownArgumentType]

    def prop_int(self, name: str) -> int:
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    def prop_float(self, name: str) -> float:
        attr = self.properties[name]
        assert isinstance(attr, (FloatAttr, IntegerAttr))
        return float(attr.value.data)

    def prop_bool(self, name: str) -> bool:
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        return bool(attr.value.data)

    def prop_str(self, name: str) -> str:
        attr = self.properties[name]
        assert isinstance(attr, StringAttr)
        return attr.data

    def _named_values(self) -> dict[str, list[SSAValue]]:
        layout = _layout(type(self))
        if layout.fixed:  # one value per operand definition (most ops): no grouping needed
            named = {name: [v] for name, v in zip(layout.operands, self.operands)}
        else:
            named = dict(zip(layout.operands, _operand_groups(self)))
        for name, result in zip(layout.results, self.results):
            named[name] = [result]
        return named

    # -- verification ---------------------------------------------------------------
    def verify_(self) -> None:
        if self.SAME_DTYPE or self.FLOAT_ONLY:
            self._verify_dtypes(self._named_values())
        properties = self.properties
        if "data_format" in properties and self.prop_str("data_format") not in FORMATS:
            self.fail(f"data_format must be one of {', '.join(FORMATS)}, got '{self.prop_str('data_format')}'")
        if "padding" in properties and self.prop_str("padding") not in PADDINGS:
            self.fail(f"padding must be one of {', '.join(PADDINGS)}, got '{self.prop_str('padding')}'")
        if self.caps is not None:
            self.verify_caps_arity(self.caps.data)
        self.verify_shapes()

    def _verify_dtypes(self, named: dict[str, list[SSAValue]]) -> None:
        """SAME_DTYPE's values share one element type; FLOAT_ONLY's are float tensors."""
        same = [v.type.element_type for n in self.SAME_DTYPE for v in named.get(n, [])]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        if same and any(t != same[0] for t in same):  # pyright: ignore[reportUnknownVariableType]
            dtypes = _group_dtypes(self.SAME_DTYPE, named)
            if len(set(dtypes.values())) > 1:
                listed = ", ".join(f"{n}: {d}" for n, d in dtypes.items())
                self.fail(f"expects {', '.join(self.SAME_DTYPE)} to have the same element type, got {listed}")
        if self.FLOAT_ONLY:
            bad = [n for n, d in _group_dtypes(self.FLOAT_ONLY, named).items() if not is_float(d)]
            if bad:
                self.fail(f"expects float tensors for {', '.join(bad)}")

    def verify_caps_arity(self, kernels: Sequence[Kernel]) -> None:
        """Each kernel lists one dtype per operand definition (or per present one) and one per result."""
        op_def = self.get_irdl_definition()
        defs = len(op_def.operands)
        present = sum(1 for g in _operand_groups(self) if g)
        names = ", ".join(n for n, _ in op_def.operands) or "none"
        for k in kernels:
            if len(k.inputs) not in (defs, present):
                self.fail(f"caps kernel '{k}' has {len(k.inputs)} input dtypes, expected {defs} (one per operand definition: {names})")
            if len(k.outputs) != len(self.results):
                self.fail(f"caps kernel '{k}' has {len(k.outputs)} output dtypes, expected {len(self.results)}")

    def verify_shapes(self) -> None:
        """Op-specific shape checks."""


def _group_dtypes(group: Sequence[str], named: Mapping[str, list[SSAValue]]) -> dict[str, str | None]:
    """The dtype of each value of `group`'s definitions (a variadic one's values as `name#i`)."""
    return {
        (n if len(named.get(n, [])) == 1 else f"{n}#{i}"): dtype_name(v.type.element_type)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]
        for n in group
        for i, v in enumerate(named.get(n, []))
    }


@dataclass(frozen=True)
class _Layout:
    """Per op class facts the verifier needs for every op (derived once from the IRDL definition)."""

    operands: tuple[str, ...]
    results: tuple[str, ...]
    fixed: bool
    """No optional or variadic operand definition: operand i is definition i."""


_LAYOUTS: dict[type[Operation], _Layout] = {}


def _layout(cls: type[IRDLOperation]) -> _Layout:
    found = _LAYOUTS.get(cls)
    if found is None:
        op_def = cls.get_irdl_definition()
        found = _LAYOUTS[cls] = _Layout(
            tuple(n for n, _ in op_def.operands),
            tuple(n for n, _ in op_def.results),
            not any(isinstance(d, VariadicDef) for _, d in op_def.operands),
        )
    return found


def _operand_groups(op: IRDLOperation) -> list[list[SSAValue]]:
    """Operands grouped per operand definition (an absent optional one is an empty group).

    Ascend ops have at most one optional or variadic operand, so the split is unambiguous.
    """
    if _layout(type(op)).fixed:
        return [[v] for v in op.operands]
    defs = [d for _, d in op.get_irdl_definition().operands]
    extra = len(op.operands) - sum(1 for d in defs if not isinstance(d, VariadicDef))
    groups: list[list[SSAValue]] = []
    pos = 0
    for d in defs:
        take = 1 if not isinstance(d, VariadicDef) else (min(extra, 1) if isinstance(d, OptionalDef) else extra)
        groups.append(list(op.operands[pos : pos + take]))
        pos += take
    return groups


def operand_groups(op: Operation) -> list[list[SSAValue]]:
    """Public form of the per-definition operand grouping, for passes and the interpreter."""
    assert isinstance(op, IRDLOperation)
    return _operand_groups(op)


class UnaryOp(AscendOp, ABC):
    """Elementwise `y = f(x)`."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        if not _dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects the result shape to equal the operand shape")


class FloatUnaryOp(UnaryOp, ABC):
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")


class BinaryOp(AscendOp, ABC):
    """Elementwise `y = f(x1, x2)` with NumPy broadcasting."""

    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "y")

    def verify_shapes(self) -> None:
        out = broadcast_shape(shape_of(self.x1), shape_of(self.x2))
        if out is None:
            self.fail(f"operand shapes {shape_of(self.x1)} and {shape_of(self.x2)} do not broadcast")
        elif not _dims_match(out, shape_of(self.y)):
            self.fail(f"expects result shape {out}, got {shape_of(self.y)}")


class UnaryGradOp(AscendOp, ABC):
    """Elementwise gradient `z = f'(y) * dy`, all of one shape."""

    y = operand_def(TensorType)
    dy = operand_def(TensorType)
    z = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("y", "dy", "z")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("y", "dy", "z")

    def verify_shapes(self) -> None:
        if not (_dims_match(shape_of(self.y), shape_of(self.dy)) and _dims_match(shape_of(self.y), shape_of(self.z))):
            self.fail("expects y, dy and z to have the same shape")


class ReduceOp(AscendOp, ABC):
    """Reduction over `axes` (all axes when empty), optionally keeping them as size 1."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    axes = ints_prop(())
    keep_dims = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(shape_of(self.x))
        axes = self.prop_ints("axes") or tuple(range(rank))
        return tuple(sorted({_norm_axis(self, a, rank, "axis") for a in axes}))

    def verify_shapes(self) -> None:
        shape = shape_of(self.x)
        axes = self.reduced_axes()
        if self.prop_bool("keep_dims"):
            want = tuple(1 if i in axes else d for i, d in enumerate(shape))
        else:
            want = tuple(d for i, d in enumerate(shape) if i not in axes)
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


class SoftmaxLikeOp(AscendOp, ABC):
    axes = ints_prop((-1,))

    def verify_shapes(self) -> None:
        x, y = self.operands[0], self.results[0]
        for a in self.prop_ints("axes"):
            _norm_axis(self, a, len(shape_of(x)), "axis")
        if not _dims_match(shape_of(x), shape_of(y)):
            self.fail("expects the result shape to equal the operand shape")


def _check_matmul(op: AscendOp, a: tuple[int, ...], b: tuple[int, ...], ta: bool, tb: bool, y: tuple[int, ...]) -> None:
    m, k1 = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if k1 >= 0 and k2 >= 0 and k1 != k2:
        op.fail(f"contracting dimensions differ: {k1} vs {k2}")
    if not _dims_match((m, n), y[-2:]):
        op.fail(f"expects result matrix shape {(m, n)}, got {y[-2:]}")


class PoolOp(AscendOp, ABC):
    """MaxPool / AvgPool: TF-style `ksize`, `strides` (4 entries in data_format order), `padding`."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    ksize = ints_prop()
    strides = ints_prop()
    padding = str_prop("VALID")
    data_format = str_prop("NCHW")
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        verify_pool(self, shape_of(self.x), shape_of(self.y))


def verify_pool(op: AscendOp, x: tuple[int, ...], y: tuple[int, ...]) -> None:
    if len(x) != 4:
        op.fail(f"expects a rank-4 input, got rank {len(x)}")
    k, s = op.prop_ints("ksize"), op.prop_ints("strides")
    if len(k) != 4 or len(s) != 4 or min(k) < 1 or min(s) < 1:
        op.fail("expects ksize and strides of 4 positive entries")
    c, h, w = _spatial(op.prop_str("data_format"))
    if any(k[i] != 1 or s[i] != 1 for i in (0, c)):
        op.fail(f"pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 on N and C")
    pad = op.prop_str("padding")
    want = list(x)
    want[h] = _pool_out(x[h], k[h], s[h], pad)
    want[w] = _pool_out(x[w], k[w], s[w], pad)
    if min(want[h], want[w]) == 0:
        op.fail(f"window {k[h]}x{k[w]} is larger than the {pad} padded input {x[h]}x{x[w]}")
    if not _dims_match(want, y):
        op.fail(f"expects result shape {tuple(want)}, got {y}")


class ConvOp(AscendOp, ABC):
    """Shared attributes of the Conv2D family (strides/dilations in data_format order, pads [top, bottom, left, right])."""

    strides = ints_prop()
    pads = ints_prop((0, 0, 0, 0))
    dilations = ints_prop((1, 1, 1, 1))
    groups = int_prop(1)
    data_format = str_prop("NCHW")
    UNIT: ClassVar[Unit] = Unit.CUBE

    def check_conv(self, x: Sequence[int], f: Sequence[int], y: Sequence[int], depthwise: bool = False) -> None:
        """x: input, f: filter (OIHW for NCHW, HWIO for NHWC; depthwise: HW C M), y: output."""
        if len(x) != 4 or len(f) != 4 or len(y) != 4:
            self.fail("expects rank-4 input, filter and output")
        s, p, d = self.prop_ints("strides"), self.prop_ints("pads"), self.prop_ints("dilations")
        if len(s) != 4 or len(p) != 4 or len(d) != 4:
            self.fail("expects strides, pads and dilations of 4 entries")
        if min(s) < 1 or min(d) < 1 or min(p) < 0:
            self.fail("expects positive strides and dilations and non-negative pads")
        groups = self.prop_int("groups")
        if groups < 1:
            self.fail(f"groups must be positive, got {groups}")
        fmt = self.prop_str("data_format")
        c, h, w = _spatial(fmt)
        if depthwise:
            kh, kw, cin, out = f[0], f[1], f[2], f[2] * f[3]
        elif fmt == "NCHW":
            out, cin, kh, kw = f
        else:
            kh, kw, cin, out = f
        if not depthwise and x[c] >= 0 and cin >= 0 and x[c] != cin * groups:
            self.fail(f"input channels {x[c]} do not match filter channels {cin} x groups {groups}")
        if depthwise and x[c] >= 0 and cin >= 0 and x[c] != cin:
            self.fail(f"input channels {x[c]} do not match filter channels {cin}")
        if not depthwise and out >= 0 and out % groups:
            self.fail(f"output channels {out} are not a multiple of groups {groups}")
        bias = self.operands[2] if len(self.operands) == 3 else None
        if bias is not None and not _dims_match(shape_of(bias), (out,)):
            self.fail(f"expects a bias of shape ({out},), got {shape_of(bias)}")
        want = list(x)
        want[c] = out
        for dim, k, pad_lo, pad_hi in ((h, kh, p[0], p[1]), (w, kw, p[2], p[3])):
            size = x[dim]
            eff = d[dim] * (k - 1) + 1
            if size >= 0 and k >= 0 and size + pad_lo + pad_hi < eff:
                self.fail(f"filter window {eff} (dilated) is larger than the padded input {size + pad_lo + pad_hi}")
            want[dim] = -1 if size < 0 or k < 0 else (size + pad_lo + pad_hi - eff) // s[dim] + 1
        if not _dims_match(want, y):
            self.fail(f"expects output shape {tuple(want)}, got {tuple(y)}")


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
        if not _dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects the result shape to equal the operand shape")
        assert isinstance(self.y.type, TensorType)
        if self.dst_type is not None and self.dst_type != self.y.type.element_type:
            self.fail(f"dst_type {self.dst_type} differs from the result element type {self.y.type.element_type}")


# --------------------------------------------------------------------------------------
# Cube ops
# --------------------------------------------------------------------------------------


class MatMulBase(AscendOp, ABC):
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    transpose_x1 = bool_prop(False)
    transpose_x2 = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ()
    UNIT: ClassVar[Unit] = Unit.CUBE

    def verify_shapes(self) -> None:
        a, b, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if len(a) != 2 or len(b) != 2 or len(y) != 2:
            self.fail("expects rank-2 operands and result")
        _check_matmul(self, a, b, self.prop_bool("transpose_x1"), self.prop_bool("transpose_x2"), y)
        if self.bias is not None and not _dims_match(shape_of(self.bias), y[-1:]):
            self.fail(f"expects a bias of shape ({y[-1]},), got {shape_of(self.bias)}")


@irdl_op_definition
class MatMulOp(MatMulBase):
    """Matrix product `y = op(x1) @ op(x2) (+ bias)` on the Cube unit.

    ```mlir
    %y = ascend.MatMul %a, %b {transpose_x2 = true} : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf32>
    ```
    """

    name = "ascend.MatMul"


@irdl_op_definition
class MatMulV2Op(MatMulBase):
    """Matrix product, CANN's V2 kernel (same semantics as MatMul).

    ```mlir
    %y = ascend.MatMulV2 %a, %b, %bias : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    ```
    """

    name = "ascend.MatMulV2"


@irdl_op_definition
class BatchMatMulOp(AscendOp):
    """Batched matrix product over the leading (broadcast) dimensions; `adj_x*` transpose the last two.

    ```mlir
    %y = ascend.BatchMatMul %a, %b : (tensor<2x4x8xf16>, tensor<2x8x3xf16>) -> tensor<2x4x3xf16>
    ```
    """

    name = "ascend.BatchMatMul"
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    adj_x1 = bool_prop(False)
    adj_x2 = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")
    UNIT: ClassVar[Unit] = Unit.CUBE

    def verify_shapes(self) -> None:
        a, b, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if len(a) < 3 or len(b) < 3:
            self.fail("expects operands of rank 3 or more")
        batch = broadcast_shape(a[:-2], b[:-2])
        if batch is None or not _dims_match(batch, y[:-2]):
            self.fail(f"batch dimensions {a[:-2]} and {b[:-2]} do not give {y[:-2]}")
        _check_matmul(self, a, b, self.prop_bool("adj_x1"), self.prop_bool("adj_x2"), y)


@irdl_op_definition
class BatchMatMulV2Op(AscendOp):
    """N-d matrix product: the last two dimensions multiply (`adj_x*` transpose them), the leading
    ones broadcast (NumPy `matmul`), so a 3-d x 2-d product is one op; optional `bias` over the
    last dimension. Operands of rank 2 or more (promote a vector with Reshape).

    ```mlir
    %y = ascend.BatchMatMulV2 %a, %w, %b : (tensor<2x5x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<2x5x3xf32>
    ```
    """

    name = "ascend.BatchMatMulV2"
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    adj_x1 = bool_prop(False)
    adj_x2 = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")
    UNIT: ClassVar[Unit] = Unit.CUBE

    def verify_shapes(self) -> None:
        a, b, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if len(a) < 2 or len(b) < 2:
            self.fail(f"expects operands of rank 2 or more, got ranks {len(a)} and {len(b)}")
        batch = broadcast_shape(a[:-2], b[:-2])
        if batch is None or len(y) != len(batch) + 2 or not _dims_match(batch, y[:-2]):
            self.fail(f"batch dimensions {a[:-2]} and {b[:-2]} do not broadcast to the result's {y[:-2]}")
        _check_matmul(self, a, b, self.prop_bool("adj_x1"), self.prop_bool("adj_x2"), y)
        if self.bias is not None and not _dims_match(shape_of(self.bias), y[-1:]):
            self.fail(f"expects a bias of shape ({y[-1]},), got {shape_of(self.bias)}")


@irdl_op_definition
class Conv2DOp(ConvOp):
    """2-d convolution. Filter layout: OIHW with NCHW data, HWIO with NHWC data.

    ```mlir
    %y = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16>
    ```
    """

    name = "ascend.Conv2D"
    x = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "filter")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "filter", "y")

    def verify_shapes(self) -> None:
        self.check_conv(shape_of(self.x), shape_of(self.filter), shape_of(self.y))


@irdl_op_definition
class DepthwiseConv2DOp(ConvOp):
    """Depthwise 2-d convolution; filter `[KH, KW, C, multiplier]`, output channels C x multiplier.

    ```mlir
    %y = ascend.DepthwiseConv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<3x3x3x1xf16>) -> tensor<1x3x6x6xf16>
    ```
    """

    name = "ascend.DepthwiseConv2D"
    x = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "filter")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "filter", "y")

    def verify_shapes(self) -> None:
        self.check_conv(shape_of(self.x), shape_of(self.filter), shape_of(self.y), depthwise=True)


@irdl_op_definition
class Conv2DBackpropInputOp(ConvOp):
    """Gradient of Conv2D with respect to its input; `input_size` is the input's shape.

    ```mlir
    %dx = ascend.Conv2DBackpropInput %w, %dy {input_size = array<i64: 1, 3, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x3x3x3xf16>, tensor<1x4x6x6xf16>) -> tensor<1x3x8x8xf16>
    ```
    """

    name = "ascend.Conv2DBackpropInput"
    filter = operand_def(TensorType)
    out_backprop = operand_def(TensorType)
    y = result_def(TensorType)
    input_size = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("filter", "out_backprop")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("filter", "out_backprop", "y")

    def verify_shapes(self) -> None:
        size = self.prop_ints("input_size")
        if min(size, default=0) < 0:
            self.fail(f"expects a static input_size, got {list(size)}")
        if not _dims_match(size, shape_of(self.y)):
            self.fail(f"expects the result shape to equal input_size {size}")
        self.check_conv(size, shape_of(self.filter), shape_of(self.out_backprop))


@irdl_op_definition
class Conv2DBackpropFilterOp(ConvOp):
    """Gradient of Conv2D with respect to its filter; `filter_size` is the filter's shape.

    ```mlir
    %dw = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
    ```
    """

    name = "ascend.Conv2DBackpropFilter"
    x = operand_def(TensorType)
    out_backprop = operand_def(TensorType)
    y = result_def(TensorType)
    filter_size = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "out_backprop")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "out_backprop", "y")

    def verify_shapes(self) -> None:
        size = self.prop_ints("filter_size")
        if min(size, default=0) < 0:
            self.fail(f"expects a static filter_size, got {list(size)}")
        if not _dims_match(size, shape_of(self.y)):
            self.fail(f"expects the result shape to equal filter_size {size}")
        self.check_conv(shape_of(self.x), size, shape_of(self.out_backprop))


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BiasAddOp(AscendOp):
    """Adds a rank-1 `bias` along the channel dimension (1 for NCHW, last for NHWC).

    ```mlir
    %y = ascend.BiasAdd %x, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
    """

    name = "ascend.BiasAdd"
    x = operand_def(TensorType)
    bias = operand_def(TensorType)
    y = result_def(TensorType)
    data_format = str_prop("NCHW")
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "bias", "y")

    def verify_shapes(self) -> None:
        x, b = shape_of(self.x), shape_of(self.bias)
        if len(x) < 2 or len(b) != 1:
            self.fail("expects an operand of rank >= 2 and a rank-1 bias")
        channel = 1 if self.prop_str("data_format") == "NCHW" else len(x) - 1
        if not _dims_match(b, (x[channel],)):
            self.fail(f"expects a bias of {x[channel]} elements, got {b[0]}")
        if not _dims_match(x, shape_of(self.y)):
            self.fail("expects the result shape to equal the operand shape")


@irdl_op_definition
class AddOp(BinaryOp):
    """`y = x1 + x2`. ```mlir
    %y = ascend.Add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```"""

    name = "ascend.Add"


@irdl_op_definition
class SubOp(BinaryOp):
    """`y = x1 - x2`."""

    name = "ascend.Sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """`y = x1 * x2`."""

    name = "ascend.Mul"


@irdl_op_definition
class RealDivOp(BinaryOp):
    """`y = x1 / x2`."""

    name = "ascend.RealDiv"


@irdl_op_definition
class MaximumOp(BinaryOp):
    """`y = max(x1, x2)`."""

    name = "ascend.Maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """`y = min(x1, x2)`."""

    name = "ascend.Minimum"


@irdl_op_definition
class PowOp(BinaryOp):
    """`y = x1 ** x2`."""

    name = "ascend.Pow"


def _expect_bool(op: AscendOp, values: Sequence[SSAValue], what: str) -> None:
    for v in values:
        assert isinstance(v.type, TensorType)
        if dtype_name(v.type.element_type) != "i1":  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
            op.fail(f"expects a bool (i1) {what}, got {v.type.element_type}")  # pyright: ignore[reportUnknownMemberType]


class CompareOp(BinaryOp, ABC):
    """`y = x1 <op> x2` with NumPy broadcasting; the result is bool (`i1`)."""

    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _expect_bool(self, [self.y], "result")


@irdl_op_definition
class GreaterOp(CompareOp):
    """`y = x1 > x2` with NumPy broadcasting; the result is bool (`i1`), the operands float or integer.

    ```mlir
    %y = ascend.Greater %a, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    ```
    """

    name = "ascend.Greater"


@irdl_op_definition
class LessOp(CompareOp):
    """`y = x1 < x2` (bool result, NumPy broadcasting)."""

    name = "ascend.Less"


@irdl_op_definition
class EqualOp(CompareOp):
    """`y = x1 == x2` (bool result, NumPy broadcasting; NaN equals nothing). `IsNaN(x)` is
    `LogicalNot(Equal(x, x))` (CANN's table has no IsNan).

    ```mlir
    %y = ascend.Equal %a, %b : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi1>
    ```
    """

    name = "ascend.Equal"


class LogicalBinaryOp(BinaryOp, ABC):
    """Elementwise boolean `y = x1 <op> x2` on bool (`i1`) tensors, NumPy broadcasting."""

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _expect_bool(self, [self.x1, self.x2, self.y], "operand and result")


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """`y = x1 and x2`. ```mlir
    %y = ascend.LogicalAnd %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    ```"""

    name = "ascend.LogicalAnd"


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """`y = x1 or x2`."""

    name = "ascend.LogicalOr"


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """`y = not x` on a bool (`i1`) tensor."""

    name = "ascend.LogicalNot"

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _expect_bool(self, [self.x, self.y], "operand and result")


@irdl_op_definition
class SelectV2Op(AscendOp):
    """`result = condition ? then : else` elementwise, the three broadcast together (NumPy `where`).

    CANN's inputs are `condition`, `then`, `else` (fields `x1`, `x2`: `else` is a Python keyword).

    ```mlir
    %y = ascend.SelectV2 %mask, %a, %fill : (tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
    ```
    """

    name = "ascend.SelectV2"
    condition = operand_def(TensorType)
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "y")
    UNIT: ClassVar[Unit] = Unit.DATA
    CANN_INPUTS: ClassVar[tuple[str, ...] | None] = ("condition", "then", "else")
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("result",)

    def verify_shapes(self) -> None:
        _expect_bool(self, [self.condition], "condition")
        shapes = [shape_of(v) for v in self.operands]
        out: tuple[int, ...] | None = shapes[0]
        for s in shapes[1:]:
            out = None if out is None else broadcast_shape(out, s)
        if out is None:
            self.fail(f"condition, then and else shapes {shapes[0]}, {shapes[1]}, {shapes[2]} do not broadcast")
        elif not _dims_match(out, shape_of(self.y)):
            self.fail(f"expects result shape {out}, got {shape_of(self.y)}")


@irdl_op_definition
class SelectOp(AscendOp):
    """`y = condition ? x1 : x2` elementwise; `condition` is bool (`i1`), rank 0 or shaped like `x1`.

    Only the chosen operand's value reaches `y`, so the result is bit-exact whatever the
    other holds (inf, NaN).

    ```mlir
    %y = ascend.Select %overflow, %old, %new : (tensor<i1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    ```
    """

    name = "ascend.Select"
    UNIT: ClassVar[Unit] = Unit.DATA
    condition = operand_def(TensorType)
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "y")

    def verify_shapes(self) -> None:
        cond = self.condition.type
        assert isinstance(cond, TensorType)
        if dtype_name(cond.element_type) != "i1":  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
            self.fail(f"expects a bool (i1) condition, got {cond.element_type}")  # pyright: ignore[reportUnknownMemberType]
        x1, x2, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if not (_dims_match(x1, x2) and _dims_match(x1, y)):
            self.fail(f"expects x1, x2 and y of one shape, got {x1}, {x2} and {y}")
        c = shape_of(self.condition)
        if c and not _dims_match(c, x1):
            self.fail(f"expects a rank-0 condition or one shaped like x1 {x1}, got {c}")


@irdl_op_definition
class NegOp(UnaryOp):
    """`y = -x`. ```mlir
    %y = ascend.Neg %x : (tensor<4xf32>) -> tensor<4xf32>
    ```"""

    name = "ascend.Neg"


@irdl_op_definition
class ReluOp(UnaryOp):
    """`y = max(x, 0)`."""

    name = "ascend.Relu"


@irdl_op_definition
class SquareOp(UnaryOp):
    """`y = x * x`."""

    name = "ascend.Square"


@irdl_op_definition
class Relu6Op(UnaryOp):
    """`y = min(max(x, 0), 6)`. ```mlir
    %y = ascend.Relu6 %x : (tensor<4xf16>) -> tensor<4xf16>
    ```"""

    name = "ascend.Relu6"


@irdl_op_definition
class ClipByValueOp(AscendOp):
    """`y = min(max(x, clip_value_min), clip_value_max)`; the bounds broadcast to x's shape.

    ```mlir
    %y = ascend.ClipByValue %x, %lo, %hi : (tensor<2x4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x4xf32>
    ```
    """

    name = "ascend.ClipByValue"
    x = operand_def(TensorType)
    clip_value_min = operand_def(TensorType)
    clip_value_max = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "clip_value_min", "clip_value_max", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        for bound in (self.clip_value_min, self.clip_value_max):
            b = broadcast_shape(x, shape_of(bound))
            if b is None or not _dims_match(b, x):
                self.fail(f"bound shape {shape_of(bound)} does not broadcast to the input shape {x}")
        if not _dims_match(x, shape_of(self.y)):
            self.fail("expects the result shape to equal the input shape")


@irdl_op_definition
class HardSigmoidOp(AscendOp):
    """`output_y = max(0, min(1, alpha * input_x + beta))` (ONNX HardSigmoid; HardSwish is
    `x * HardSigmoid(x)` with alpha 1/6, beta 0.5).

    ```mlir
    %y = ascend.HardSigmoid %x {alpha = 2.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.HardSigmoid"
    input_x = operand_def(TensorType)
    output_y = result_def(TensorType)
    alpha = float_prop(0.16666666)
    beta = float_prop(0.5)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("input_x", "output_y")

    def verify_shapes(self) -> None:
        if not _dims_match(shape_of(self.input_x), shape_of(self.output_y)):
            self.fail("expects the result shape to equal the operand shape")


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """`y = x if x > 0 else negative_slope * x`."""

    name = "ascend.LeakyRelu"
    negative_slope = float_prop(0.0)


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """`y = erf(x)`; ONNX's exact Gelu is `0.5 * x * (1 + Erf(x / sqrt(2)))` (the dialect's Gelu is
    CANN's tanh form). ```mlir
    %y = ascend.Erf %x : (tensor<4xf32>) -> tensor<4xf32>
    ```"""

    name = "ascend.Erf"


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """GELU, tanh approximation as CANN computes it."""

    name = "ascend.Gelu"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`y = 1 / (1 + exp(-x))`."""

    name = "ascend.Sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """`y = tanh(x)`."""

    name = "ascend.Tanh"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """`y = exp(x)` (CANN's default base e)."""

    name = "ascend.Exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """`y = ln(x)`."""

    name = "ascend.Log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """`y = sqrt(x)`."""

    name = "ascend.Sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """`y = 1 / sqrt(x)`."""

    name = "ascend.Rsqrt"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """`y = floor(x)`."""

    name = "ascend.Floor"


# --------------------------------------------------------------------------------------
# Softmax, reductions, normalisation
# --------------------------------------------------------------------------------------


@irdl_op_definition
class SoftmaxV2Op(SoftmaxLikeOp):
    """Softmax over `axes` (default the last).

    ```mlir
    %y = ascend.SoftmaxV2 %x : (tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
    """

    name = "ascend.SoftmaxV2"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")


@irdl_op_definition
class LogSoftmaxV2Op(SoftmaxLikeOp):
    """Log-softmax over `axes` (default the last)."""

    name = "ascend.LogSoftmaxV2"
    logits = operand_def(TensorType)
    logsoftmax = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("logits", "logsoftmax")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("logits", "logsoftmax")


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes`. ```mlir
    %s = ascend.ReduceSum %x {axes = array<i64: 0>} : (tensor<8x10xf32>) -> tensor<10xf32>
    ```"""

    name = "ascend.ReduceSum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over `axes`."""

    name = "ascend.ReduceMean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes` (an empty axis is an error: the maximum of nothing is undefined)."""

    name = "ascend.ReduceMax"

    def verify_shapes(self) -> None:
        super().verify_shapes()
        x = shape_of(self.x)
        empty = [a for a in self.reduced_axes() if x[a] == 0]
        if empty:
            self.fail(f"reduces over the empty axis {empty[0]} of shape {x}: the maximum of no elements is undefined")


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Max pooling. ```mlir
    %y = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
    ```"""

    name = "ascend.MaxPool"


@irdl_op_definition
class AvgPoolOp(PoolOp):
    """Average pooling (SAME padding averages over the valid elements only, as TF does)."""

    name = "ascend.AvgPool"


class PoolV2Op(AscendOp, ABC):
    """MaxPoolV3 / AvgPoolV2: `ksize`, `strides` (4 entries in data_format order), explicit
    `pads` [top, bottom, left, right] under `padding_mode` CALCULATED (SAME/VALID: TF's rule,
    pads ignored), `ceil_mode`, and `global_pooling` (the window is the whole H x W)."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    ksize = ints_prop()
    strides = ints_prop()
    padding_mode = str_prop("CALCULATED")
    pads = ints_prop((0, 0, 0, 0))
    data_format = str_prop("NCHW")
    global_pooling = bool_prop(False)
    ceil_mode = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x, y = shape_of(self.x), shape_of(self.y)
        if len(x) != 4:
            self.fail(f"expects a rank-4 input, got rank {len(x)}")
        k, s, p = self.prop_ints("ksize"), self.prop_ints("strides"), self.prop_ints("pads")
        if len(k) != 4 or len(s) != 4 or min(k) < 1 or min(s) < 1:
            self.fail("expects ksize and strides of 4 positive entries")
        if len(p) != 4 or min(p) < 0:
            self.fail(f"expects pads of 4 non-negative entries [top, bottom, left, right], got {list(p)}")
        mode = self.prop_str("padding_mode")
        if mode not in PAD_MODES:
            self.fail(f"padding_mode must be one of {', '.join(PAD_MODES)}, got '{mode}'")
        c, h, w = _spatial(self.prop_str("data_format"))
        want = list(x)
        if self.prop_bool("global_pooling"):
            want[h] = want[w] = 1
        else:
            if any(k[i] != 1 or s[i] != 1 for i in (0, c)):
                self.fail(f"pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 on N and C")
            for dim, lo, hi in ((h, p[0], p[1]), (w, p[2], p[3])):
                if mode == "CALCULATED" and max(lo, hi) >= k[dim]:
                    self.fail(f"pads {list(p)} must be smaller than the window {k[h]}x{k[w]}")
                if x[dim] < 0:
                    want[dim] = -1
                    continue
                lo, hi = pool_pads(x[dim], k[dim], s[dim], mode, lo, hi)
                want[dim] = pool_v2_out(x[dim], k[dim], s[dim], lo, hi, self.prop_bool("ceil_mode"))
                if want[dim] == 0:
                    self.fail(f"window {k[h]}x{k[w]} is larger than the padded input (dimension {dim}: {x[dim]} + pads {lo}, {hi})")
        if not _dims_match(want, y):
            self.fail(f"expects result shape {tuple(want)}, got {y}")


@irdl_op_definition
class MaxPoolV3Op(PoolV2Op):
    """Max pooling with explicit pads (padding never wins: it is -inf).

    ```mlir
    %y = ascend.MaxPoolV3 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
    ```
    """

    name = "ascend.MaxPoolV3"


@irdl_op_definition
class AvgPoolV2Op(PoolV2Op):
    """Average pooling with explicit pads. `exclusive` (CANN's default, ONNX's
    count_include_pad = 0) divides by the input elements in the window; otherwise by the
    elements inside the padded input (the ceil_mode overhang never counts, as in ONNX).

    ```mlir
    %y = ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, exclusive = false} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16>
    ```
    """

    name = "ascend.AvgPoolV2"
    exclusive = bool_prop(True)


@irdl_op_definition
class BatchNormOp(AscendOp):
    """Batch normalisation over N, H, W; with `is_training` the batch statistics are used.

    ```mlir
    %y, %m, %v = ascend.BatchNorm %x, %s, %o, %mean, %var : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.BatchNorm"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    offset = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    y = result_def(TensorType)
    batch_mean = result_def(TensorType)
    batch_variance = result_def(TensorType)
    epsilon = float_prop(1e-4)
    data_format = str_prop("NCHW")
    is_training = bool_prop(True)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y", "scale", "offset", "mean", "variance")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(v) for v in self.operands[1:]] + [shape_of(r) for r in self.results[1:]])
        if not _dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects y to have the shape of x")


@irdl_op_definition
class BNInferOp(AscendOp):
    """Inference batch normalisation over channel axis 1 (NCHW, or N x C x ...):
    `y = (x - mean) / sqrt(variance + epsilon) * scale + offset`.

    ```mlir
    %y = ascend.BNInfer %x, %s, %o, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
    ```
    """

    name = "ascend.BNInfer"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    offset = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    y = result_def(TensorType)
    epsilon = float_prop(1e-5)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "scale", "offset", "mean", "variance", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if len(x) < 2:
            self.fail(f"expects an input of rank >= 2 (channels on axis 1), got rank {len(x)}")
        for v in self.operands[1:]:
            if not _dims_match(shape_of(v), (x[1],)):
                self.fail(f"expects per-channel tensors of shape ({x[1]},), got {shape_of(v)}")
        if not _dims_match(x, shape_of(self.y)):
            self.fail("expects y to have the shape of x")


def verify_channel_stats(op: AscendOp, x: tuple[int, ...], stats: list[tuple[int, ...]]) -> None:
    if len(x) != 4:
        op.fail(f"expects a rank-4 input, got rank {len(x)}")
    channels = x[_spatial(op.prop_str("data_format") if "data_format" in op.properties else "NCHW")[0]]
    for s in stats:
        if not _dims_match(s, (channels,)):
            op.fail(f"expects per-channel tensors of shape ({channels},), got {s}")


@irdl_op_definition
class BNTrainingReduceOp(AscendOp):
    """Per-channel `sum` and `square_sum` of an NCHW batch (first half of training BatchNorm)."""

    name = "ascend.BNTrainingReduce"
    x = operand_def(TensorType)
    sum = result_def(TensorType)
    square_sum = result_def(TensorType)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "sum", "square_sum")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(self.sum), shape_of(self.square_sum)])


@irdl_op_definition
class BNTrainingUpdateOp(AscendOp):
    """Normalises an NCHW batch from BNTrainingReduce's sums; updates running mean/variance by `factor`."""

    name = "ascend.BNTrainingUpdate"
    x = operand_def(TensorType)
    sum = operand_def(TensorType)
    square_sum = operand_def(TensorType)
    scale = operand_def(TensorType)
    offset = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    y = result_def(TensorType)
    mean_out = result_def(TensorType)
    variance_out = result_def(TensorType)
    batch_mean = result_def(TensorType)
    batch_variance = result_def(TensorType)
    factor = float_prop(0.1)
    epsilon = float_prop(1e-4)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("y", "mean", "variance", "batch_mean", "batch_variance")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(v) for v in self.operands[1:]] + [shape_of(r) for r in self.results[1:]])
        if not _dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects y to have the shape of x")


@irdl_op_definition
class BNTrainingUpdateGradOp(AscendOp):
    """Gradients of scale and offset of training BatchNorm (NCHW)."""

    name = "ascend.BNTrainingUpdateGrad"
    grads = operand_def(TensorType)
    x = operand_def(TensorType)
    batch_mean = operand_def(TensorType)
    batch_variance = operand_def(TensorType)
    diff_scale = result_def(TensorType)
    diff_offset = result_def(TensorType)
    epsilon = float_prop(1e-4)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("grads", "x")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("grads", "x")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(v) for v in self.operands[2:]] + [shape_of(r) for r in self.results])


@irdl_op_definition
class BNTrainingReduceGradOp(AscendOp):
    """Gradient of the input of training BatchNorm (NCHW)."""

    name = "ascend.BNTrainingReduceGrad"
    grads = operand_def(TensorType)
    x = operand_def(TensorType)
    diff_scale = operand_def(TensorType)
    diff_offset = operand_def(TensorType)
    scale = operand_def(TensorType)
    batch_mean = operand_def(TensorType)
    batch_variance = operand_def(TensorType)
    y = result_def(TensorType)
    epsilon = float_prop(1e-4)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("grads", "x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("grads", "x", "y")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(v) for v in self.operands[2:]])


@irdl_op_definition
class LayerNormOp(AscendOp):
    """Layer normalisation over the dimensions from `begin_norm_axis`; gamma/beta cover `begin_params_axis` on.

    ```mlir
    %y, %m, %v = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
    ```
    """

    name = "ascend.LayerNorm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    y = result_def(TensorType)
    mean = result_def(TensorType)
    variance = result_def(TensorType)
    begin_norm_axis = int_prop(-1)
    begin_params_axis = int_prop(-1)
    epsilon = float_prop(1e-7)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "gamma", "beta", "y", "mean", "variance")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        norm = _norm_axis(self, self.prop_int("begin_norm_axis"), len(x), "begin_norm_axis")
        params = _norm_axis(self, self.prop_int("begin_params_axis"), len(x), "begin_params_axis")
        for v in (self.gamma, self.beta):
            if not _dims_match(shape_of(v), x[params:]):
                self.fail(f"expects gamma and beta of shape {x[params:]}, got {shape_of(v)}")
        stat = x[:norm] + (1,) * (len(x) - norm)
        for r in (self.mean, self.variance):
            if not _dims_match(shape_of(r), stat):
                self.fail(f"expects mean and variance of shape {stat}, got {shape_of(r)}")
        if not _dims_match(x, shape_of(self.y)):
            self.fail("expects y to have the shape of x")


# --------------------------------------------------------------------------------------
# Data movement
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ReshapeOp(AscendOp):
    """Same elements, the result's shape. ```mlir
    %y = ascend.Reshape %x : (tensor<2x4x4xf32>) -> tensor<2x16xf32>
    ```"""

    name = "ascend.Reshape"
    UNIT: ClassVar[Unit] = Unit.DATA
    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        a, b = shape_of(self.x), shape_of(self.y)
        if all(d >= 0 for d in a + b) and prod(a) != prod(b):
            self.fail(f"cannot reshape {a} ({prod(a)} elements) to {b} ({prod(b)} elements)")


@irdl_op_definition
class TransposeOp(AscendOp):
    """Permutes dimensions: `y.shape[i] = x.shape[perm[i]]`."""

    name = "ascend.Transpose"
    UNIT: ClassVar[Unit] = Unit.DATA
    x = operand_def(TensorType)
    y = result_def(TensorType)
    perm = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x, perm = shape_of(self.x), self.prop_ints("perm")
        if sorted(perm) != list(range(len(x))):
            self.fail(f"perm {list(perm)} is not a permutation of {len(x)} dimensions")
        want = tuple(x[p] for p in perm)
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class ConcatV2DOp(AscendOp):
    """Concatenates its operands along `concat_dim`. ```mlir
    %y = ascend.ConcatV2D %a, %b {concat_dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```"""

    name = "ascend.ConcatV2D"
    UNIT: ClassVar[Unit] = Unit.DATA
    input_values = var_operand_def(TensorType)
    output_data = result_def(TensorType)
    concat_dim = int_prop(0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("input_values", "output_data")

    def verify_shapes(self) -> None:
        shapes = [shape_of(v) for v in self.input_values]
        if not shapes:
            self.fail("expects at least one operand")
        rank = len(shapes[0])
        dim = _norm_axis(self, self.prop_int("concat_dim"), rank, "concat_dim")
        want = list(shapes[0])
        for s in shapes[1:]:
            if len(s) != rank or not _dims_match(s[:dim] + s[dim + 1 :], tuple(want[:dim] + want[dim + 1 :])):
                self.fail(f"operand shapes {shapes} differ outside concat_dim {dim}")
            want[dim] = -1 if min(want[dim], s[dim]) < 0 else want[dim] + s[dim]
        if not _dims_match(want, shape_of(self.output_data)):
            self.fail(f"expects result shape {tuple(want)}, got {shape_of(self.output_data)}")


@irdl_op_definition
class GatherV2DOp(AscendOp):
    """`y = take(x, indices, axis)`: `y.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]`.
    Indices in [-n, n) (negative ones count from the end, as ONNX's Gather); others are a run-time error.

    ```mlir
    %y = ascend.GatherV2D %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
    ```
    """

    name = "ascend.GatherV2D"
    x = operand_def(TensorType)
    indices = operand_def(TensorType)
    y = result_def(TensorType)
    axis = int_prop(0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def verify_shapes(self) -> None:
        assert isinstance(self.indices.type, TensorType)
        if not isinstance(self.indices.type.element_type, IntegerType) or dtype_name(self.indices.type.element_type) == "i1":
            self.fail(f"expects integer indices, got {self.indices.type.element_type}")
        x = shape_of(self.x)
        axis = _norm_axis(self, self.prop_int("axis"), len(x), "axis")
        if not x:
            self.fail("expects an operand of rank >= 1")
        want = x[:axis] + shape_of(self.indices) + x[axis + 1 :]
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class StridedSliceDOp(AscendOp):
    """TF's strided slice: per dimension i < len(begin), `x[begin[i]:end[i]:strides[i]]` (Python
    rules: negative indices count from the end, out-of-range ones clamp); bit i of `begin_mask`
    / `end_mask` ignores begin[i] / end[i]; later dimensions are kept whole. The ellipsis,
    new-axis and shrink-axis masks must be 0.

    ```mlir
    %y = ascend.StridedSliceD %x {begin = array<i64: 0, 1>, end = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
    """

    name = "ascend.StridedSliceD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    begin = ints_prop()
    end = ints_prop()
    strides = ints_prop()
    begin_mask = int_prop(0)
    end_mask = int_prop(0)
    ellipsis_mask = int_prop(0)
    new_axis_mask = int_prop(0)
    shrink_axis_mask = int_prop(0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def slices(self, shape: Sequence[int]) -> tuple[slice, ...]:
        """The Python slices the op takes of a tensor of `shape`."""
        begin, end, strides = self.prop_ints("begin"), self.prop_ints("end"), self.prop_ints("strides")
        bm, em = self.prop_int("begin_mask"), self.prop_int("end_mask")
        return tuple(
            slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i]) for i in range(len(begin))
        )

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        begin, end, strides = self.prop_ints("begin"), self.prop_ints("end"), self.prop_ints("strides")
        if not len(begin) == len(end) == len(strides) or len(begin) > len(x):
            self.fail(f"expects begin, end and strides of one length <= rank {len(x)}, got {len(begin)}, {len(end)}, {len(strides)}")
        if 0 in strides:
            self.fail("strides must be non-zero")
        for mask in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
            if self.prop_int(mask) != 0:
                self.fail(f"{mask} is not supported (must be 0)")
        want = list(x)
        for i, sl in enumerate(self.slices(x)):
            if x[i] >= 0:
                want[i] = len(range(*sl.indices(x[i])))
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {tuple(want)}, got {shape_of(self.y)}")


@irdl_op_definition
class BroadcastToDOp(AscendOp):
    """Broadcasts `x` to `shape` (NumPy rules; ONNX's Expand with its shape folded).

    ```mlir
    %y = ascend.BroadcastToD %x {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
    """

    name = "ascend.BroadcastToD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    shape = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def verify_shapes(self) -> None:
        x, shape = shape_of(self.x), self.prop_ints("shape")
        if min(shape, default=0) < 0:
            self.fail(f"expects a static shape, got {list(shape)}")
        b = broadcast_shape(x, shape)
        if b is None or len(x) > len(shape) or not _dims_match(b, shape):
            self.fail(f"cannot broadcast {x} to {tuple(shape)}")
        if not _dims_match(shape, shape_of(self.y)):
            self.fail(f"expects result shape {tuple(shape)}, got {shape_of(self.y)}")


@irdl_op_definition
class TileDOp(AscendOp):
    """Repeats `x` `multiples[i]` times along dimension i (one multiple per dimension).

    ```mlir
    %y = ascend.TileD %x {multiples = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
    ```
    """

    name = "ascend.TileD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    multiples = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def verify_shapes(self) -> None:
        x, m = shape_of(self.x), self.prop_ints("multiples")
        if len(m) != len(x) or min(m, default=1) < 0:
            self.fail(f"expects {len(x)} non-negative multiples, got {list(m)}")
        want = tuple(-1 if d < 0 else d * k for d, k in zip(x, m))
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class ArgMaxV2Op(AscendOp):
    """Index of the maximum along `dimension` (int32 result)."""

    name = "ascend.ArgMaxV2"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    dimension = int_prop(-1)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x",)

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        dim = _norm_axis(self, self.prop_int("dimension"), len(x), "dimension")
        if len(x) and x[dim] == 0:
            self.fail(f"dimension {dim} of shape {x} is empty: the argmax of no elements is undefined")
        want = x[:dim] + x[dim + 1 :]
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")
        assert isinstance(self.y.type, TensorType)
        if not isinstance(self.y.type.element_type, IntegerType):
            self.fail("expects an integer result")


@irdl_op_definition
class OneHotOp(AscendOp):
    """One-hot encoding of integer indices `x`, `depth` wide at `axis`; rank-0 `on_value`/`off_value`.

    ```mlir
    %y = ascend.OneHot %i, %on, %off {depth = 10 : i64} : (tensor<8xi32>, tensor<f32>, tensor<f32>) -> tensor<8x10xf32>
    ```
    """

    name = "ascend.OneHot"
    x = operand_def(TensorType)
    on_value = operand_def(TensorType)
    off_value = operand_def(TensorType)
    y = result_def(TensorType)
    depth = int_prop(1)
    axis = int_prop(-1)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("on_value", "off_value", "y")

    def verify_shapes(self) -> None:
        assert isinstance(self.x.type, TensorType)
        if not isinstance(self.x.type.element_type, IntegerType):
            self.fail("expects integer indices")
        depth, x = self.prop_int("depth"), shape_of(self.x)
        for v, what in ((self.on_value, "on_value"), (self.off_value, "off_value")):
            if any(d != 1 for d in shape_of(v)):
                self.fail(f"expects a scalar {what} (one element), got shape {shape_of(v)}")
        if depth < 1:
            self.fail(f"depth must be positive, got {depth}")
        axis = _norm_axis(self, self.prop_int("axis"), len(x) + 1, "axis")
        want = x[:axis] + (depth,) + x[axis:]
        if not _dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class SoftmaxCrossEntropyWithLogitsOp(AscendOp):
    """Per-example softmax cross-entropy `loss` [N] and its gradient `backprop` [N, C].

    ```mlir
    %l, %g = ascend.SoftmaxCrossEntropyWithLogits %z, %t : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
    ```
    """

    name = "ascend.SoftmaxCrossEntropyWithLogits"
    features = operand_def(TensorType)
    labels = operand_def(TensorType)
    loss = result_def(TensorType)
    backprop = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("features", "labels", "loss", "backprop")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("features", "labels")

    def verify_shapes(self) -> None:
        f = shape_of(self.features)
        if len(f) != 2 or not _dims_match(f, shape_of(self.labels)) or not _dims_match(f, shape_of(self.backprop)):
            self.fail("expects rank-2 features, labels and backprop of one shape")
        if not _dims_match(shape_of(self.loss), f[:1]):
            self.fail(f"expects a loss of shape {f[:1]}, got {shape_of(self.loss)}")


# --------------------------------------------------------------------------------------
# Gradients
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ReluGradOp(AscendOp):
    """`backprops = gradients * (features > 0)`."""

    name = "ascend.ReluGrad"
    gradients = operand_def(TensorType)
    features = operand_def(TensorType)
    backprops = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")

    def verify_shapes(self) -> None:
        if not (_dims_match(shape_of(self.gradients), shape_of(self.features)) and _dims_match(shape_of(self.features), shape_of(self.backprops))):
            self.fail("expects gradients, features and backprops of one shape")


@irdl_op_definition
class LeakyReluGradOp(AscendOp):
    """`backprops = gradients * (features > 0 ? 1 : negative_slope)`."""

    name = "ascend.LeakyReluGrad"
    gradients = operand_def(TensorType)
    features = operand_def(TensorType)
    backprops = result_def(TensorType)
    negative_slope = float_prop(0.0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")

    def verify_shapes(self) -> None:
        if not (_dims_match(shape_of(self.gradients), shape_of(self.features)) and _dims_match(shape_of(self.features), shape_of(self.backprops))):
            self.fail("expects gradients, features and backprops of one shape")


@irdl_op_definition
class SigmoidGradOp(UnaryGradOp):
    """`z = dy * y * (1 - y)` where y = sigmoid(x)."""

    name = "ascend.SigmoidGrad"


@irdl_op_definition
class TanhGradOp(UnaryGradOp):
    """`z = dy * (1 - y^2)` where y = tanh(x)."""

    name = "ascend.TanhGrad"


@irdl_op_definition
class GeluGradOp(AscendOp):
    """`z = dy * gelu'(x)`; `y` is the forward output."""

    name = "ascend.GeluGrad"
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    z = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("dy", "x", "y", "z")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("dy", "x", "y", "z")

    def verify_shapes(self) -> None:
        shapes = {shape_of(v) for v in (*self.operands, self.z)}
        if len(shapes) > 1 and not all(_dims_match(s, shape_of(self.z)) for s in shapes):
            self.fail("expects dy, x, y and z of one shape")


@irdl_op_definition
class SoftmaxGradOp(AscendOp):
    """`grad_x = (grad_softmax - sum(grad_softmax * softmax, -1)) * softmax` over the last axis."""

    name = "ascend.SoftmaxGrad"
    softmax = operand_def(TensorType)
    grad_softmax = operand_def(TensorType)
    grad_x = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("softmax", "grad_softmax", "grad_x")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("softmax", "grad_softmax", "grad_x")

    def verify_shapes(self) -> None:
        if not (_dims_match(shape_of(self.softmax), shape_of(self.grad_softmax)) and _dims_match(shape_of(self.softmax), shape_of(self.grad_x))):
            self.fail("expects softmax, grad_softmax and grad_x of one shape")


@irdl_op_definition
class BiasAddGradOp(AscendOp):
    """Sum of `x` over every dimension but the channel one (rank-1 result)."""

    name = "ascend.BiasAddGrad"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    data_format = str_prop("NCHW")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if len(x) < 2:
            self.fail("expects an operand of rank >= 2")
        channel = 1 if self.prop_str("data_format") == "NCHW" else len(x) - 1
        if not _dims_match(shape_of(self.y), (x[channel],)):
            self.fail(f"expects a result of shape ({x[channel]},), got {shape_of(self.y)}")


@irdl_op_definition
class MaxPoolGradOp(AscendOp):
    """Routes `grad` to the maxima of the window: x1 = forward input, x2 = forward output."""

    name = "ascend.MaxPoolGrad"
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    grad = operand_def(TensorType)
    y = result_def(TensorType)
    ksize = ints_prop()
    strides = ints_prop()
    padding = str_prop("VALID")
    data_format = str_prop("NCHW")
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "grad", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x1", "x2", "grad", "y")

    def verify_shapes(self) -> None:
        verify_pool(self, shape_of(self.x1), shape_of(self.x2))
        if not _dims_match(shape_of(self.x2), shape_of(self.grad)) or not _dims_match(shape_of(self.x1), shape_of(self.y)):
            self.fail("expects grad shaped like x2 and y shaped like x1")


@irdl_op_definition
class AvgPoolGradOp(AscendOp):
    """Spreads `input_grad` evenly over each window; `orig_input_shape` is the forward input's shape."""

    name = "ascend.AvgPoolGrad"
    input_grad = operand_def(TensorType)
    out_grad = result_def(TensorType)
    orig_input_shape = ints_prop()
    ksize = ints_prop()
    strides = ints_prop()
    padding = str_prop("VALID")
    data_format = str_prop("NCHW")
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("input_grad", "out_grad")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("input_grad", "out_grad")

    def verify_shapes(self) -> None:
        orig = self.prop_ints("orig_input_shape")
        if min(orig, default=0) < 0:
            self.fail(f"expects a static orig_input_shape, got {list(orig)}")
        if not _dims_match(orig, shape_of(self.out_grad)):
            self.fail(f"expects the result shape to equal orig_input_shape {orig}")
        verify_pool(self, orig, shape_of(self.input_grad))


@irdl_op_definition
class LayerNormGradOp(AscendOp):
    """Gradients of LayerNorm: `pd_x`, `pd_gamma`, `pd_beta`."""

    name = "ascend.LayerNormGrad"
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    variance = operand_def(TensorType)
    mean = operand_def(TensorType)
    gamma = operand_def(TensorType)
    pd_x = result_def(TensorType)
    pd_gamma = result_def(TensorType)
    pd_beta = result_def(TensorType)
    epsilon = float_prop(1e-7)
    """Not a CANN attribute (CANN's LayerNormGrad assumes LayerNorm's default): the forward epsilon."""
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("dy", "x", "variance", "mean", "gamma", "pd_x", "pd_gamma", "pd_beta")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("dy", "x", "pd_x")

    def verify_shapes(self) -> None:
        if not (_dims_match(shape_of(self.dy), shape_of(self.x)) and _dims_match(shape_of(self.x), shape_of(self.pd_x))):
            self.fail("expects dy, x and pd_x of one shape")
        if not (_dims_match(shape_of(self.gamma), shape_of(self.pd_gamma)) and _dims_match(shape_of(self.gamma), shape_of(self.pd_beta))):
            self.fail("expects gamma, pd_gamma and pd_beta of one shape")
        x, g = shape_of(self.x), shape_of(self.gamma)
        if len(g) > len(x) or not _dims_match(g, x[len(x) - len(g) :]):
            self.fail(f"expects gamma shaped like trailing dimensions of x {x}, got {g}")
        var, mean = shape_of(self.variance), shape_of(self.mean)
        if not _dims_match(var, mean):
            self.fail(f"expects mean and variance of one shape, got {mean} and {var}")
        norm = len(var)
        while norm > 0 and var[norm - 1] == 1:
            norm -= 1
        if len(var) != len(x) or norm == len(x) or not _dims_match(var[:norm], x[:norm]):
            self.fail(f"expects mean and variance shaped like x {x} with the normalised trailing dimensions 1, got {var}")


# --------------------------------------------------------------------------------------
# Optimizers (functional: they return the updated state)
# --------------------------------------------------------------------------------------


def _verify_slots(op: AscendOp, slots: Sequence[SSAValue], scalars: Sequence[SSAValue]) -> None:
    shape = shape_of(slots[0])
    for v in (*slots, *op.results):
        if not _dims_match(shape_of(v), shape):
            op.fail(f"expects the variable, its slots, gradient and results to share the shape {shape}")
    for v in scalars:
        if prod(shape_of(v)) != 1:
            op.fail(f"expects scalar hyper-parameters, got shape {shape_of(v)}")


@irdl_op_definition
class ApplyGradientDescentOp(AscendOp):
    """`var - alpha * delta`. ```mlir
    %w2 = ascend.ApplyGradientDescent %w, %lr, %g : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    ```"""

    name = "ascend.ApplyGradientDescent"
    var = operand_def(TensorType)
    alpha = operand_def(TensorType)
    delta = operand_def(TensorType)
    var_out = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("var", "alpha", "delta", "var_out")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("var", "alpha", "delta", "var_out")
    VARIABLE_UPDATE: ClassVar[bool] = True
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var",)

    def verify_shapes(self) -> None:
        _verify_slots(self, [self.var, self.delta], [self.alpha])


@irdl_op_definition
class ApplyMomentumDOp(AscendOp):
    """`accum = accum * momentum + grad; var -= lr * accum` (Nesterov: `var -= lr * (grad + momentum * accum)`)."""

    name = "ascend.ApplyMomentumD"
    var = operand_def(TensorType)
    accum = operand_def(TensorType)
    lr = operand_def(TensorType)
    grad = operand_def(TensorType)
    momentum = operand_def(TensorType)
    var_out = result_def(TensorType)
    accum_out = result_def(TensorType)
    use_nesterov = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("var", "accum", "lr", "grad", "momentum", "var_out", "accum_out")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = SAME_DTYPE
    VARIABLE_UPDATE: ClassVar[bool] = True
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var", "accum")

    def verify_shapes(self) -> None:
        _verify_slots(self, [self.var, self.accum, self.grad], [self.lr, self.momentum])


@irdl_op_definition
class ApplyAdamDOp(AscendOp):
    """Adam: `m, v` moments; `lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)`."""

    name = "ascend.ApplyAdamD"
    var = operand_def(TensorType)
    m = operand_def(TensorType)
    v = operand_def(TensorType)
    beta1_power = operand_def(TensorType)
    beta2_power = operand_def(TensorType)
    lr = operand_def(TensorType)
    beta1 = operand_def(TensorType)
    beta2 = operand_def(TensorType)
    epsilon = operand_def(TensorType)
    grad = operand_def(TensorType)
    var_out = result_def(TensorType)
    m_out = result_def(TensorType)
    v_out = result_def(TensorType)
    use_locking = bool_prop(False)
    use_nesterov = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad", "var_out", "m_out", "v_out")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = SAME_DTYPE
    VARIABLE_UPDATE: ClassVar[bool] = True
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var", "m", "v")

    def verify_shapes(self) -> None:
        _verify_slots(self, [self.var, self.m, self.v, self.grad], self.operands[3:9])


# --------------------------------------------------------------------------------------
# Float status (overflow detection)
# --------------------------------------------------------------------------------------


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
    """Clears the overflow flag; returns the cleared buffer."""

    name = "ascend.NPUClearFloatStatus"
    addr = operand_def(TensorType)
    data = result_def(TensorType)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("addr", "data")


@_status_effects(MemoryReadEffect(), MemoryWriteEffect())
@irdl_op_definition
class NPUGetFloatStatusOp(FloatStatusOp):
    """Reads the overflow flag: element 0 is nonzero if an AI Core kernel produced inf/NaN since the last clear."""

    name = "ascend.NPUGetFloatStatus"
    addr = operand_def(TensorType)
    data = result_def(TensorType)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("addr", "data")


# --------------------------------------------------------------------------------------
# The dialect
# --------------------------------------------------------------------------------------

OPS: tuple[type[AscendOp], ...] = (
    ConstOp,
    CastOp,
    MatMulOp,
    MatMulV2Op,
    BatchMatMulOp,
    BatchMatMulV2Op,
    Conv2DOp,
    DepthwiseConv2DOp,
    Conv2DBackpropInputOp,
    Conv2DBackpropFilterOp,
    BiasAddOp,
    AddOp,
    SubOp,
    MulOp,
    RealDivOp,
    MaximumOp,
    MinimumOp,
    PowOp,
    GreaterOp,
    LessOp,
    EqualOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalNotOp,
    SelectOp,
    SelectV2Op,
    NegOp,
    ReluOp,
    SquareOp,
    Relu6Op,
    ClipByValueOp,
    HardSigmoidOp,
    LeakyReluOp,
    ErfOp,
    GeluOp,
    SigmoidOp,
    TanhOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    FloorOp,
    SoftmaxV2Op,
    LogSoftmaxV2Op,
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    MaxPoolOp,
    AvgPoolOp,
    MaxPoolV3Op,
    AvgPoolV2Op,
    BatchNormOp,
    BNInferOp,
    BNTrainingReduceOp,
    BNTrainingUpdateOp,
    BNTrainingUpdateGradOp,
    BNTrainingReduceGradOp,
    LayerNormOp,
    ReshapeOp,
    TransposeOp,
    ConcatV2DOp,
    GatherV2DOp,
    StridedSliceDOp,
    BroadcastToDOp,
    TileDOp,
    ArgMaxV2Op,
    OneHotOp,
    SoftmaxCrossEntropyWithLogitsOp,
    ReluGradOp,
    LeakyReluGradOp,
    SigmoidGradOp,
    TanhGradOp,
    GeluGradOp,
    SoftmaxGradOp,
    BiasAddGradOp,
    MaxPoolGradOp,
    AvgPoolGradOp,
    LayerNormGradOp,
    ApplyGradientDescentOp,
    ApplyMomentumDOp,
    ApplyAdamDOp,
    NPUAllocFloatStatusOp,
    NPUClearFloatStatusOp,
    NPUGetFloatStatusOp,
)



def check_op_facts(cls: type[AscendOp]) -> None:
    """Raise TypeError if an op's stated facts name things the op does not have (run at import,
    so a misspelt SAME_DTYPE entry cannot silently disable a check)."""
    op_def = cls.get_irdl_definition()
    fields = [n for n, _ in op_def.operands] + [n for n, _ in op_def.results]
    for fact in ("SAME_DTYPE", "FLOAT_ONLY"):
        unknown = [n for n in getattr(cls, fact) if n not in fields]
        if unknown:
            raise TypeError(f"{cls.name}: {fact} names {unknown}, which are not operands or results ({', '.join(fields)})")
    if cls.CANN_INPUTS is not None and len(cls.CANN_INPUTS) != len(op_def.operands):
        raise TypeError(f"{cls.name}: CANN_INPUTS has {len(cls.CANN_INPUTS)} names for {len(op_def.operands)} operands")
    if cls.CANN_OUTPUTS is not None and len(cls.CANN_OUTPUTS) != len(op_def.results):
        raise TypeError(f"{cls.name}: CANN_OUTPUTS has {len(cls.CANN_OUTPUTS)} names for {len(op_def.results)} results")
    if not isinstance(cls.UNIT, Unit):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(f"{cls.name}: UNIT {cls.UNIT!r} is not an ascend.Unit")
    cls.attr_defaults()  # every declared default has a Python value


for _cls in OPS:
    check_op_facts(_cls)

OPS_BY_TYPE: Mapping[str, type[AscendOp]] = {op.name.removeprefix("ascend."): op for op in OPS}
"""CANN op type (`"MatMulV2"`) -> op class."""


def op_type(op: Operation) -> str:
    """The CANN op type of an ascend op (`ascend.MatMulV2` -> `MatMulV2`)."""
    return op.name.removeprefix("ascend.")


def cann_inputs(cls: type[AscendOp]) -> tuple[str, ...]:
    """CANN input names of an op class: its operand definition names unless stated."""
    if cls.CANN_INPUTS is not None:
        return cls.CANN_INPUTS
    return tuple(name for name, _ in cls.get_irdl_definition().operands)


def cann_outputs(cls: type[AscendOp]) -> tuple[str, ...]:
    """CANN output names of an op class."""
    if cls.CANN_OUTPUTS is not None:
        return cls.CANN_OUTPUTS
    return tuple(name for name, _ in cls.get_irdl_definition().results)


Ascend = Dialect("ascend", list(OPS), [CapsAttr, ListKindAttr])
