"""Dtype facts shared by the dialect, the operator library, the passes and the interpreter.

Dtypes are named by their MLIR element-type spelling (``f16``, ``bf16``, ``f32``,
``i32``, ...). CANN's operator tables spell them differently (``float16``,
``float``, ``bfloat16``, ``int32``); :data:`CANN_NAMES` maps those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

FLOAT_DTYPES = ("f16", "bf16", "f32", "f64")
"""Float dtypes, the ones precision decisions are made on."""

LOW_FLOATS = ("f16", "bf16")
"""The reduced-precision dtypes a mixed-precision mode can choose."""

PRECISION_RANK = {"f16": 1, "bf16": 1, "f32": 2, "f64": 3}
"""Higher is more precise; f16 and bf16 are incomparable (equal rank)."""

ALL_DTYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")

CANN_NAMES: dict[str, str] = {
    "float16": "f16",
    "float": "f32",
    "float32": "f32",
    "bfloat16": "bf16",
    "double": "f64",
    "float64": "f64",
    "bool": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "ui8",
    "uint16": "ui16",
    "uint32": "ui32",
    "uint64": "ui64",
}
"""CANN dtype name -> MLIR element type name."""

TO_CANN: dict[str, str] = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "double",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}
"""MLIR element type name -> CANN's canonical name (used in reports and logs)."""

if TYPE_CHECKING:
    import numpy as np

    NUMPY: dict[str, np.dtype[Any]]
    """MLIR element type name -> numpy dtype (bf16 through ml_dtypes)."""


def _numpy_dtypes() -> dict[str, Any]:
    import ml_dtypes
    import numpy as np

    names = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
             "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16,
             "ui32": np.uint32, "ui64": np.uint64}
    return {name: np.dtype(t) for name, t in names.items()}


def __getattr__(name: str) -> Any:
    # NUMPY is built on first use, so that tools which never touch numpy start fast.
    if name == "NUMPY":
        table = _numpy_dtypes()
        globals()["NUMPY"] = table
        return table
    raise AttributeError(name)

_ELEMENT_TYPES: dict[str, Attribute] = {
    "f16": Float16Type(),
    "bf16": BFloat16Type(),
    "f32": Float32Type(),
    "f64": Float64Type(),
    "i1": IntegerType(1),
    "i8": IntegerType(8),
    "i16": IntegerType(16),
    "i32": IntegerType(32),
    "i64": IntegerType(64),
    "ui8": IntegerType(8, Signedness.UNSIGNED),
    "ui16": IntegerType(16, Signedness.UNSIGNED),
    "ui32": IntegerType(32, Signedness.UNSIGNED),
    "ui64": IntegerType(64, Signedness.UNSIGNED),
}
_NAMES: dict[Attribute, str] = {t: n for n, t in _ELEMENT_TYPES.items()}


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


def with_dtype(type_: TensorType, name: str) -> TensorType:
    """The same tensor type (shape and encoding) with the element type of dtype `name`.

    Built without xDSL's parameter verification, which would prove nothing new: the shape and encoding come
    from a tensor type that was verified when it was built, and TensorType's element type parameter is
    unconstrained. `TensorType(...)` re-wraps the shape and re-verifies every parameter, 15x the cost of this
    (a precision pass retypes most values of a model, weights included). The result equals that of the
    constructor (`test_dtypes.py` checks it)."""
    new = _NEW(TensorType)
    _SET(new, "shape", type_.shape)
    _SET(new, "element_type", _ELEMENT_TYPES[name])
    _SET(new, "encoding", type_.encoding)
    return new


_NEW = object.__new__
_SET = object.__setattr__  # how xDSL itself sets the fields of its frozen attributes


def from_cann(name: str) -> str | None:
    """MLIR dtype name for a CANN dtype name (or an MLIR one), None if unknown."""
    name = name.strip()
    if name in CANN_NAMES:
        return CANN_NAMES[name]
    if name in _ELEMENT_TYPES:
        return name
    return None
