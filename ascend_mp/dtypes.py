"""Dtype facts shared by the dialect, the operator library, the passes, the interpreter and the tools.

One :class:`DType` record per dtype states every fact about it once (tinygrad's ``DType`` is the model):
its name (the MLIR element-type spelling, ``f16``, the name used across the project), CANN's spelling
(``float16``; ``float`` is CANN's other name for f32), the ONNX and numpy types, the xDSL element type,
the width, float or integer and signedness, and the rank in the precision lattice. Every table below and
every lookup derives from :data:`DTYPES`.

The precision lattice: f16 and bf16 (the low floats, rank 1) are both below f32 (rank 2), below f64
(rank 3). Neither of f16 and bf16 holds the other (f16 has more mantissa bits, bf16 more exponent bits),
so their join is f32, the least float both widen into exactly (:func:`join`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class DType:
    """Everything ascend-mp knows of one dtype."""

    name: str
    """The MLIR element-type spelling (``f16``, ``i32``, ``ui8``): the dtype's name in the IR, the passes,
    the reports' internals and every table."""
    cann: str
    """CANN's canonical spelling (``float16``, ``float32``, ``double``), used in reports and log lines."""
    onnx: str
    """The ``onnx.TensorProto`` data type (``FLOAT16``)."""
    numpy_name: str
    """The numpy scalar type's name (bf16: ``ml_dtypes.bfloat16``)."""
    element: Attribute
    """The xDSL element type."""
    bits: int
    """Width in bits (MLIR's: i1 is 1 bit, stored in a byte)."""
    kind: Literal["float", "int", "uint", "bool"]
    short: str
    """The word in reports and tables: ``fp16``, ``bf16``, ``fp32`` (an integer dtype: its name)."""
    rank: int = 0
    """Place in the precision lattice: higher is more precise; 0 for a non-float. f16 and bf16 share a
    rank: neither holds the other."""
    mantissa: int = 0
    """Explicit mantissa (fraction) bits of a float."""
    exponent: int = 0
    """Exponent bits of a float."""
    cann_aliases: tuple[str, ...] = ()
    """Other spellings CANN's operator tables use for it (``float`` for f32)."""

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def signed(self) -> bool:
        """Whether it holds negative values (floats and signed integers)."""
        return self.kind in ("float", "int")

    @property
    def itemsize(self) -> int:
        """Bytes per element in memory and in blobs."""
        return (self.bits + 7) // 8

    @cached_property
    def numpy(self) -> np.dtype[Any]:
        """The numpy dtype (bf16 through ml_dtypes); numpy is imported on first use, so that tools which
        never touch numpy start fast."""
        import numpy as np

        if self.numpy_name.startswith("ml_dtypes."):
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, self.numpy_name.removeprefix("ml_dtypes.")))
        return np.dtype(getattr(np, self.numpy_name))

    def widens_exactly_to(self, other: DType) -> bool:
        """Whether every value of this float is one of `other` (so a round trip through `other` is exact)."""
        return (
            self.is_float
            and other.is_float
            and self != other
            and self.mantissa <= other.mantissa
            and self.exponent <= other.exponent
        )


F16 = DType(
    "f16",
    cann="float16",
    onnx="FLOAT16",
    numpy_name="float16",
    element=Float16Type(),
    bits=16,
    kind="float",
    short="fp16",
    rank=1,
    mantissa=10,
    exponent=5,
)
BF16 = DType(
    "bf16",
    cann="bfloat16",
    onnx="BFLOAT16",
    numpy_name="ml_dtypes.bfloat16",
    element=BFloat16Type(),
    bits=16,
    kind="float",
    short="bf16",
    rank=1,
    mantissa=7,
    exponent=8,
)
F32 = DType(
    "f32",
    cann="float32",
    onnx="FLOAT",
    numpy_name="float32",
    element=Float32Type(),
    bits=32,
    kind="float",
    short="fp32",
    rank=2,
    mantissa=23,
    exponent=8,
    cann_aliases=("float",),
)
F64 = DType(
    "f64",
    cann="double",
    onnx="DOUBLE",
    numpy_name="float64",
    element=Float64Type(),
    bits=64,
    kind="float",
    short="fp64",
    rank=3,
    mantissa=52,
    exponent=11,
    cann_aliases=("float64",),
)
I1 = DType("i1", cann="bool", onnx="BOOL", numpy_name="bool_", element=IntegerType(1), bits=1, kind="bool", short="i1")
I8 = DType("i8", cann="int8", onnx="INT8", numpy_name="int8", element=IntegerType(8), bits=8, kind="int", short="i8")
I16 = DType(
    "i16", cann="int16", onnx="INT16", numpy_name="int16", element=IntegerType(16), bits=16, kind="int", short="i16"
)
I32 = DType(
    "i32", cann="int32", onnx="INT32", numpy_name="int32", element=IntegerType(32), bits=32, kind="int", short="i32"
)
I64 = DType(
    "i64", cann="int64", onnx="INT64", numpy_name="int64", element=IntegerType(64), bits=64, kind="int", short="i64"
)
UI8 = DType(
    "ui8",
    cann="uint8",
    onnx="UINT8",
    numpy_name="uint8",
    element=IntegerType(8, Signedness.UNSIGNED),
    bits=8,
    kind="uint",
    short="ui8",
)
UI16 = DType(
    "ui16",
    cann="uint16",
    onnx="UINT16",
    numpy_name="uint16",
    element=IntegerType(16, Signedness.UNSIGNED),
    bits=16,
    kind="uint",
    short="ui16",
)
UI32 = DType(
    "ui32",
    cann="uint32",
    onnx="UINT32",
    numpy_name="uint32",
    element=IntegerType(32, Signedness.UNSIGNED),
    bits=32,
    kind="uint",
    short="ui32",
)
UI64 = DType(
    "ui64",
    cann="uint64",
    onnx="UINT64",
    numpy_name="uint64",
    element=IntegerType(64, Signedness.UNSIGNED),
    bits=64,
    kind="uint",
    short="ui64",
)

DTYPES: tuple[DType, ...] = (F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64)
"""Every dtype ascend-mp models."""

FLOATS: tuple[DType, ...] = tuple(d for d in DTYPES if d.is_float)
"""The float dtypes, the ones precision decisions are made on."""

# ---------------------------------------------------------------------------------------------- derived tables

BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}
BY_CANN: dict[str, DType] = {n: d for d in DTYPES for n in (d.cann, *d.cann_aliases)}
"""Every CANN spelling (canonical and alias) -> its dtype."""

LOW_FLOATS: tuple[str, ...] = tuple(d.name for d in FLOATS if d.rank == min(f.rank for f in FLOATS))
"""The reduced-precision dtypes a mixed-precision mode can choose (f16, bf16)."""

PRECISION_RANK: dict[str, int] = {d.name: d.rank for d in FLOATS}
"""Float name -> rank in the precision lattice (higher is more precise; f16 and bf16 are equal)."""

CANN_NAMES: dict[str, str] = {n: d.name for n, d in BY_CANN.items()}
"""CANN dtype name -> MLIR element type name."""

TO_CANN: dict[str, str] = {d.name: d.cann for d in DTYPES}
"""MLIR element type name -> CANN's canonical name (used in reports and logs)."""

EXACT_WIDENING: frozenset[tuple[str, str]] = frozenset(
    (a.name, b.name) for a in FLOATS for b in FLOATS if a.widens_exactly_to(b)
)
"""(narrow, wide) float pairs whose round trip narrow -> wide -> narrow is the identity."""

_ELEMENT_TYPES: dict[str, Attribute] = {d.name: d.element for d in DTYPES}
_NAMES: dict[Attribute, str] = {d.element: d.name for d in DTYPES}

if TYPE_CHECKING:
    NUMPY: dict[str, np.dtype[Any]]
    """MLIR element type name -> numpy dtype (bf16 through ml_dtypes)."""


def __getattr__(name: str) -> Any:
    # NUMPY is built on first use, so that tools which never touch numpy start fast.
    if name == "NUMPY":
        table = {d.name: d.numpy for d in DTYPES}
        globals()["NUMPY"] = table
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------- lookups


def by_numpy(dtype: Any) -> DType | None:
    """The dtype of a numpy dtype (or scalar type), or None."""
    import numpy as np

    wanted = np.dtype(dtype)
    return next((d for d in DTYPES if d.numpy == wanted), None)


def element_type(name: str) -> Attribute:
    """The xDSL element type for a dtype name (``"f16"`` -> ``Float16Type()``)."""
    return _ELEMENT_TYPES[name]


def dtype_name(element: Attribute) -> str | None:
    """The dtype name of an element type, or None for a type ascend-mp does not model."""
    return _NAMES.get(element)


def tensor_dtype(type_: Attribute) -> str | None:
    """The dtype name of a tensor type's elements, or None if it is not a modelled tensor."""
    if isinstance(type_, TensorType):
        return _NAMES.get(type_.element_type)
    return None


def is_float(name: str | None) -> bool:
    return name in PRECISION_RANK


def itemsize(name: str) -> int:
    """Bytes per element of dtype `name`."""
    return BY_NAME[name].itemsize


def cann_name(name: str | None) -> str | None:
    """CANN's canonical spelling of dtype `name` (a name it does not model: unchanged; None: None)."""
    return None if name is None else TO_CANN.get(name, name)


def short(name: str) -> str:
    """The word for dtype `name` in reports (``fp16``, ``bf16``, ``fp32``); an unknown name unchanged."""
    d = BY_NAME.get(name)
    return name if d is None else d.short


def rank(name: str | None) -> int:
    """The rank of `name` in the precision lattice; 0 for a non-float, an unknown name or None."""
    return 0 if name is None else PRECISION_RANK.get(name, 0)


def join(a: str, b: str) -> str:
    """The more precise of two dtypes, at least one of them a float (a non-float has rank 0). f16 and bf16
    (equal rank, neither holds the other) join at f32: the least float above both."""
    if a == b:
        return a
    ra, rb = rank(a), rank(b)
    if ra != rb:
        return a if ra > rb else b
    if ra == 0:
        raise ValueError(f"join of two non-float dtypes '{a}' and '{b}'")
    return min((d for d in FLOATS if d.rank > ra), key=lambda d: d.rank).name


def mode_low(mode: str) -> str:
    """The low float a CANN precision mode reduces to: the one its name ends with (``allow_mix_precision_bf16``,
    ``allow_fp32_to_bf16``, ``mixed_bfloat16``: bf16), else f16 (``force_fp16``, ``allow_mix_precision``,
    and the modes that keep fp32 where they can, whose only low dtype is f16)."""
    for name in LOW_FLOATS:
        d = BY_NAME[name]
        if mode.endswith((f"_{d.name}", f"_{d.short}", f"_{d.cann}")):
            return d.name
    return F16.name


def with_dtype(type_: TensorType, name: str) -> TensorType:
    """The same tensor type (shape and encoding) with the element type of dtype `name`.

    Built without xDSL's parameter verification, which would prove nothing new: the shape and encoding come
    from a tensor type that was verified when it was built, and TensorType's element type parameter is
    unconstrained. `TensorType(...)` re-wraps the shape and re-verifies every parameter, 15x the cost of this
    (a precision pass retypes most values of a model, weights included). The result equals that of the
    constructor (`test_fast_attrs.py` checks it)."""
    new = _NEW(TensorType)
    _SET(new, "shape", type_.shape)
    _SET(new, "element_type", _ELEMENT_TYPES[name])
    _SET(new, "encoding", type_.encoding)
    return new


_NEW = object.__new__
_SET = object.__setattr__  # how xDSL itself sets the fields of its frozen attributes
