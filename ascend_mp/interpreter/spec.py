"""The static facts of one op that a kernel is built for (:class:`OpSpec`), the float status
register the kernels share (:class:`FloatStatus`) and the kernels' user error (:class:`KernelError`).

Layouts follow the dialect: Conv2D filters are OIHW with NCHW data and HWIO with NHWC data;
DepthwiseConv2D filters are [KH, KW, C, M]; pads are [top, bottom, left, right]; strides,
ksize and dilations have 4 entries in data_format order.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascend_mp.dialects.ascend import OPS_BY_TYPE
from ascend_mp.errors import AscendError
from ascend_mp.interpreter.numerics import F16, F32, F64, FLOATS


class KernelError(AscendError, ValueError):
    """An op the kernels cannot execute (e.g. pooling over the batch dimension), or input it
    cannot run on (an out-of-range gather index): a one-line user error."""


class FloatStatus:
    """Ascend's float status register: set when an AI Core kernel produced inf/NaN."""

    __slots__ = ("flag",)

    def __init__(self) -> None:
        self.flag = False


@dataclass(frozen=True)
class OpSpec:
    """The static facts of one op a kernel is built for."""

    type: str
    in_dtypes: tuple[np.dtype[Any], ...]
    out_dtypes: tuple[np.dtype[Any], ...]
    in_shapes: tuple[tuple[int, ...], ...] = ()
    out_shapes: tuple[tuple[int, ...], ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=dict[str, Any])
    reference: bool = False
    status: FloatStatus | None = None
    carry_f16: bool = False
    """float16 tensors arrive and leave as float32 arrays holding float16 values (the
    executor's representation, see :func:`~ascend_mp.interpreter.numerics.round_f16`); the
    dtypes above stay the IR's."""

    def stored(self, dtype: np.dtype[Any]) -> np.dtype[Any]:
        """The numpy dtype a tensor of `dtype` is held in."""
        return F32 if self.carry_f16 and dtype == F16 else dtype

    @property
    def compute(self) -> np.dtype[Any] | None:
        """The dtype the body computes floats in: float64 in reference mode or with f64
        tensors, else float32 whenever a float tensor is involved; None for integer-only ops."""
        dtypes = [d for d in (*self.in_dtypes, *self.out_dtypes) if d in FLOATS]
        if not dtypes:
            return None
        if self.reference or F64 in dtypes:
            return F64
        return F32

    def attr(self, name: str) -> Any:
        """The attribute's value: given, else the op definition's declared default."""
        try:
            return self.attrs[name]
        except KeyError:
            pass
        try:
            return declared_defaults(self.type)[name]
        except KeyError:
            raise KernelError(f"{self.type} needs the attribute '{name}'") from None


@functools.cache
def declared_defaults(op_type: str) -> Mapping[str, Any]:
    """The attribute defaults the dialect declares for an op type (empty for an unknown type)."""
    cls = OPS_BY_TYPE.get(op_type)
    return {} if cls is None else cls.attr_defaults()
