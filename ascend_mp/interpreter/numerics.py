"""The numerics model's rounding steps and overflow checks.

* float16 carried in float32: the executor holds float16 tensors as float32 arrays of
  float16 values (numpy converts float16 element by element in software), so widening them
  is free and the one rounding step of a float16 result is :func:`round_f16` (bit for bit
  numpy's conversion, in about half the time): :func:`f16_rounding` picks it per static shape.
* Non-finite checks for the float status (:data:`NONFINITE`): one BLAS dot for float32 and
  float64 (:func:`nonfinite_wide`), the exponent bits for 16-bit floats.

Run under ``np.errstate(all="ignore")``: overflow gives inf, never a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from ascend_mp.interpreter.compiled import rounding_kernel

F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
FLOATS = frozenset((F16, BF16, F32, F64))

DIVERGENCE_THRESHOLD = 1e-2
"""Relative error above which an op's result diverges from its float64 reference (the default threshold of
:attr:`~ascend_mp.interpreter.compare.Attribution.first_divergent`): about ten float16 ulps."""
"""The numpy float dtypes the interpreter models."""

Array = np.ndarray[Any, Any]


try:  # the clip ufunc itself: np.clip's Python wrapper costs more than clipping a small tensor
    from numpy._core.umath import clip as _clip  # pyright: ignore[reportAttributeAccessIssue]  # numpy's stubs omit umath.clip (numpy 2 has it; the except covers 1.x)
except ImportError:  # pragma: no cover - numpy 1.x
    _clip = np.clip

_EXPONENT, _SIGN = np.uint32(0x7F800000), np.uint32(0x80000000)
_F16_QUANTUM_LO, _F16_QUANTUM_HI = np.float32(2.0**-14), np.float32(2.0**16)
_MAGIC = np.float32(1.5 * 2.0**13)
_UP, _DOWN = np.float32(2.0**112), np.float32(2.0**-112)


def round_f16(x: Array) -> Array:
    """float16 rounding inside float32: the float32 array of the float16 values nearest to
    `x` (ties to even, subnormals, overflow to inf, signed zeros), bit for bit what
    `x.astype(float16).astype(float32)` gives, in a fraction of its time.

    numpy converts float16 element by element in software, so the executor carries
    float16 tensors as float32 arrays of float16 values: widening is free and this is
    the one rounding step: a compiled ufunc (numba, see :mod:`ascend_mp.interpreter.compiled`)
    when numba is installed, else nine numpy passes (:func:`_round_f16_numpy`). The compiled
    kernel is loaded at the first rounding of a tensor of at least
    :data:`~ascend_mp.interpreter.compiled.LOAD_COMPILED_AT` elements (about 1 s of CPU once
    per process, so a run that only rounds small tensors, or none, never imports numba);
    :func:`~ascend_mp.interpreter.compiled.use_compiled_rounding` switches it off or on.
    Float64 input is rounded directly (one rounding). Run under ``np.errstate(all="ignore")``.
    """
    if x.dtype == F32:
        kernel = rounding_kernel(x.size)
        if kernel is not None:
            return kernel(x) if x.ndim else kernel(x, out=np.empty((), F32))  # a 0-d array, not a scalar
    return _round_f16_numpy(x)


def _round_f16_numpy(x: Array) -> Array:
    """:func:`round_f16` in numpy. With `e` the power of two of |x|'s binade (at least 2^-14,
    the float16 subnormal quantum's binade, at most 2^16), `m = 1.5 * 2^13 * e` puts
    `x + m` in a binade whose float32 spacing is x's float16 spacing, so `(x + m) - m`
    rounds to nearest even there; scaling by 2^112 and back sends the results of
    2^16 and up to inf exactly (float32 overflows at 2^128) and leaves the others
    exact; the sign bit of `x` restores negative zeros. Tensors under 2048 elements,
    and float64 input, go through numpy's conversion, which costs less there."""
    if x.dtype != F32 or x.size < 2048:
        return np.asarray(x).astype(F16).astype(F32)
    bits = x.view(np.uint32)
    m = np.bitwise_and(bits, _EXPONENT).view(np.float32)
    _clip(m, _F16_QUANTUM_LO, _F16_QUANTUM_HI, out=m)
    m *= _MAGIC
    y = np.add(x, m)
    y -= m
    y *= _UP
    y *= _DOWN
    y_bits = y.view(np.uint32)
    np.bitwise_or(y_bits, np.bitwise_and(bits, _SIGN), out=y_bits)
    return y


def f16_rounding(shape: tuple[int, ...]) -> Callable[[Array], Array]:
    """The float16 rounding of float32 arrays of a static `shape`, chosen at compile time: the
    compiled ufunc itself when it is (or, for a tensor of
    :data:`~ascend_mp.interpreter.compiled.LOAD_COMPILED_AT` elements or more, can be) loaded,
    else :func:`round_f16`."""
    if not shape or any(d < 0 for d in shape):
        return round_f16  # 0-d (a ufunc returns a scalar) or dynamic: decided per call
    kernel = rounding_kernel(math.prod(shape))
    return round_f16 if kernel is None else kernel


def as_f32(r: Array) -> Array:
    """`r` as float32 (no copy when it is already)."""
    return r.astype(F32, copy=False)


def nonfinite_wide(a: Array) -> bool:
    """Whether an f32/f64 array holds inf/NaN: one BLAS dot, exact check only if it overflows."""
    r = a.reshape(-1)
    if r.dot(r) < math.inf:
        return False
    return not bool(np.isfinite(r).all())


def _bits_check(mask: int) -> Callable[[Array], bool]:
    def check(a: Array) -> bool:
        if a.size == 0:
            return False
        bits = np.bitwise_and(a.reshape(-1).view(np.uint16), mask)
        return int(bits.max()) == mask

    return check


NONFINITE: dict[np.dtype[Any], Callable[[Array], bool]] = {
    F32: nonfinite_wide,
    F64: nonfinite_wide,
    F16: _bits_check(0x7C00),
    BF16: _bits_check(0x7F80),
}
"""Float dtype -> a fast test for inf/NaN elements (exponent bits all ones for 16-bit floats)."""
