"""Attributes of the `ascend` dialect and the helpers that declare op properties.

* `#ascend.caps<...>` (:class:`CapsAttr`): the kernel signatures an op has (CANN's parallel
  dtype columns), each a :class:`Kernel`;
* `#ascend.list<...>` (:class:`ListKindAttr`): the op's mixed-precision list (:class:`ListKind`);
* :class:`Unit`: which unit runs an op, as the interpreter models it;
* the property declarations ops use (`bool_prop`, `int_prop`, `float_prop`, `str_prop`,
  `ints_prop`): each declares an IRDL property and reads it back as its Python value
  (:class:`ValueProp`), and :func:`to_attr` / :func:`from_attr` convert between the two.

```mlir
%y = ascend.Relu %x {caps = #ascend.caps<(f16) -> f16, aicpu (f32) -> f32>, list = #ascend.list<gray>} : (tensor<4xf16>) -> tensor<4xf16>
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import auto
from typing import Generic, TypeVar, cast, overload

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Data
from xdsl.irdl import IRDLOperation, irdl_attr_definition, prop_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from ascend_mp.dtypes import dtype_name

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
    """Which unit runs an op, as the interpreter models it (docs/design.md §6).

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

    WHITE = "white"
    BLACK = "black"
    GRAY = "gray"


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
# Property declarations: an IRDL property read as its Python value
# --------------------------------------------------------------------------------------


FORMATS = ("NCHW", "NHWC")
PADDINGS = ("SAME", "VALID")

T = TypeVar("T")


class ValueProp(property, Generic[T]):
    """An op property that reads (and writes) as its Python value.

    In an op class, `transpose_x1 = bool_prop(False)` declares the IRDL property
    `transpose_x1` (a `BoolAttr`, default false; parsing, printing, defaults and constraint
    checks are xDSL's) and makes `op.transpose_x1` a `bool`. The attribute itself stays
    `op.properties["transpose_x1"]` (the generic path: printing, the interpreter's OpSpec),
    and `op.transpose_x1_attr` is xDSL's accessor for it: `__set_name__` declares the IRDL
    field under that Python name, with the property's IR name.

    A subclass of `property` because IRDL takes a property in an op class body for a method
    and leaves it alone.
    """

    def __init__(
        self,
        constraint: type[Attribute],
        default: Attribute | None,
        read: Callable[[Attribute], T],
        write: Callable[[T], Attribute],
    ):
        super().__init__()
        self.constraint = constraint
        self.default = default
        self.read = read
        self.write = write
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        setattr(owner, f"{name}_attr", prop_def(self.constraint, self.default, prop_name=name))

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> ValueProp[T]: ...
    @overload
    def __get__(self, obj: IRDLOperation, objtype: type | None = None) -> T: ...
    def __get__(self, obj: IRDLOperation | None, objtype: type | None = None) -> ValueProp[T] | T:
        if obj is None:
            return self
        attr = obj.properties.get(self.name, self.default)
        if attr is None:
            raise KeyError(f"{obj.name} has no '{self.name}' property")
        return self.read(attr)

    def __set__(self, obj: IRDLOperation, value: T) -> None:
        obj.properties[self.name] = self.write(value)


def _ints(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def _read_ints(attr: Attribute) -> tuple[int, ...]:
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


def _read_int(attr: Attribute) -> int:
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def _read_bool(attr: Attribute) -> bool:
    assert isinstance(attr, IntegerAttr)
    return bool(attr.value.data)


def _read_float(attr: Attribute) -> float:
    assert isinstance(attr, (FloatAttr, IntegerAttr))
    return float(attr.value.data)


def _read_str(attr: Attribute) -> str:
    assert isinstance(attr, StringAttr)
    return attr.data


def _write_ints(values: Sequence[int]) -> Attribute:
    return _ints([int(v) for v in values])


def _write_float(value: float) -> Attribute:
    return FloatAttr(float(value), Float32Type())


def ints_prop(default: Sequence[int] | None = None) -> tuple[int, ...]:
    """A list-of-ints property printed as `array<i64: ...>`, read as a tuple (required without a default)."""
    return cast(
        tuple[int, ...], ValueProp(DenseArrayBase, None if default is None else _ints(default), _read_ints, _write_ints)
    )


def bool_prop(default: bool = False) -> bool:
    """A bool property (`transpose_x1 = true`), read as a `bool`."""
    return cast(bool, ValueProp(BoolAttr, BoolAttr.from_bool(default), _read_bool, BoolAttr.from_bool))


def int_prop(default: int) -> int:
    """An `i64` property (`axis = 1 : i64`), read as an `int`."""
    return cast(int, ValueProp(IntegerAttr, IntegerAttr(default, i64), _read_int, lambda v: IntegerAttr(int(v), i64)))


def float_prop(default: float) -> float:
    """An `f32` property (`epsilon = 1.0e-05 : f32`), read as a `float`."""
    return cast(float, ValueProp(FloatAttr, FloatAttr(default, Float32Type()), _read_float, _write_float))


def str_prop(default: str) -> str:
    """A string property (`data_format = "NHWC"`), read as a `str`."""
    return cast(str, ValueProp(StringAttr, StringAttr(default), _read_str, StringAttr))


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
        return _ints([int(v) for v in value])
    raise TypeError(f"cannot turn {value!r} into an attribute")


def from_attr(attr: Attribute) -> object:
    """The Python value of an attribute as ascend ops use it (the inverse of :func:`to_attr`)."""
    if isinstance(attr, DenseArrayBase):
        return tuple(int(v) for v in attr.get_values())
    if isinstance(attr, IntegerAttr):
        width = getattr(attr.type, "width", None)
        value = int(attr.value.data)
        return bool(value) if width is not None and width.data == 1 else value
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    raise TypeError(f"no Python value for attribute {attr}")
