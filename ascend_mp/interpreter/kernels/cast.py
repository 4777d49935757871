"""Constants, casts and the float status ops (Ascend's overflow register)."""

from __future__ import annotations

import numpy as np

from ascend_mp.interpreter.kernels.base import KernelFn, kernel
from ascend_mp.interpreter.numerics import F16, F32, F64, FLOATS, Array, f16_rounding, round_f16
from ascend_mp.interpreter.spec import FloatStatus, KernelError, OpSpec


@kernel("Const")
def _const(spec: OpSpec) -> KernelFn:
    dtype = spec.out_dtypes[0]
    # a dense_resource blob arrives decoded and read-only: no copy when its dtype is already right
    value = np.asarray(spec.attr("value")).astype(dtype, copy=False).astype(spec.stored(dtype), copy=False)
    value.setflags(write=False)
    return lambda: value


@kernel("Cast", finite_preserving=True, propagates=(0,))
def _cast(spec: OpSpec) -> KernelFn:
    (out,) = spec.out_dtypes
    src = spec.in_dtypes[0]
    if out == np.dtype(np.bool_):
        return lambda x: x != 0
    if out.kind in "iu" and src in FLOATS:
        # Float -> int truncates toward zero; NaN and out-of-range values are undefined (as on the device).
        return lambda x: np.trunc(x).astype(out)
    if spec.stored(out) != out:  # to float16 carried in float32
        if src == F16:
            return lambda x: x.copy()
        if src == F32:
            return f16_rounding(spec.out_shapes[0] if spec.out_shapes else ())
        if src == F64:
            return round_f16
        return lambda x: x.astype(F16).astype(F32)  # bfloat16 and integers: numpy's one rounding
    if spec.stored(src) != src and out == F32:  # float16 carried in float32: already these values
        return identity
    return lambda x: x.astype(out, copy=False)


def identity(x: Array) -> Array:
    """The kernel of an op whose result is its operand as the executor holds it (a Cast from
    float16 carried in float32 to float32): the runner's generated code copies the register."""
    return x


# --------------------------------------------------------------------------------------
# Float status
# --------------------------------------------------------------------------------------


def _status_register(spec: OpSpec) -> FloatStatus:
    if spec.status is None:
        raise KernelError(f"{spec.type} needs the program's float status register")
    return spec.status


@kernel("NPUAllocFloatStatus")
def _alloc_status(spec: OpSpec) -> KernelFn:
    dtype = spec.stored(spec.out_dtypes[0])
    return lambda: np.zeros(8, dtype)


@kernel("NPUClearFloatStatus")
def _clear_status(spec: OpSpec) -> KernelFn:
    status, dtype = _status_register(spec), spec.stored(spec.out_dtypes[0])

    def clear(addr: Array) -> Array:
        status.flag = False
        return np.zeros(8, dtype)

    return clear


@kernel("NPUGetFloatStatus")
def _get_status(spec: OpSpec) -> KernelFn:
    status, dtype = _status_register(spec), spec.stored(spec.out_dtypes[0])
    clear, overflow = np.zeros(8, dtype), np.zeros(8, dtype)
    overflow[0] = 1.0
    clear.setflags(write=False)
    overflow.setflags(write=False)
    return lambda addr: overflow if status.flag else clear
