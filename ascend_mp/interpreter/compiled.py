"""The compiled kernels (numba): numpy's operations, bit for bit, in one pass.

* float16 rounding inside float32 (:func:`_round_f16_element`, a ufunc), what
  :func:`~ascend_mp.interpreter.numerics.round_f16` runs once loaded: at the first rounding
  of a tensor of :data:`LOAD_COMPILED_AT` elements or more; :func:`use_compiled_rounding`.
* float32 Relu (a ufunc, and an in-place loop), the convolutions' bias epilogue (which
  also counts the inf/NaN sums) and Erf (float32: :func:`erf_f32`'s rational approximation;
  float64: libm's erf): :func:`compiled`, switched by :func:`use_compiled_kernels`.

numba is imported when a kernel is first built (about 1 s of CPU once per process, cached on
disk), never at import; without numba (or a compiler for this machine) every kernel is None
and numpy does the work, with the same bits.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

LOAD_COMPILED_AT = 2048
"""Elements of the first float16 result whose rounding loads the compiled kernel."""

_COMPILED_ON = [os.environ.get("ASCEND_MP_COMPILED_ROUNDING", "1") not in ("", "0")]


def use_compiled_rounding(enabled: bool = True) -> bool:
    """Round float16 results with the compiled kernel (numba), the default, or with numpy
    (``enabled=False``, or ``ASCEND_MP_COMPILED_ROUNDING=0`` in the environment); returns
    whether the compiled kernel is in use (False when numba is not installed). Enabling it
    loads the kernel now. Both give the same bits; the kernel makes the rounding about 3x
    faster and a mixed training step about 1.4x faster."""
    _COMPILED_ON[0] = enabled
    return enabled and _compiled_kernel() is not None


def rounding_kernel(size: int) -> Callable[..., Array] | None:
    """The compiled float16 rounding ufunc when it is switched on and loaded, or loaded now for a
    tensor of `size` >= :data:`LOAD_COMPILED_AT` elements; else None (numpy rounds)."""
    if not _COMPILED_ON[0]:
        return None
    return _KERNEL[0] if _KERNEL else (_compiled_kernel() if size >= LOAD_COMPILED_AT else None)


_KERNEL: list[Callable[..., Array] | None] = []


def _compiled_kernel() -> Callable[..., Array] | None:
    """The numpy ufunc numba compiles from :func:`_round_f16_element` on first use (numba caches
    it on disk); None when numba is not installed or cannot compile it (then numpy does the work)."""
    if not _KERNEL:
        try:
            kernel = _build_compiled_kernel()
            kernel(np.array([1.0, 65520.0, 2.0**-25 * 3, -0.0], np.float32))  # loads it now, not in the middle of a run
            _KERNEL.append(kernel)
        except Exception:  # noqa: BLE001 - no numba, or no compiler for this machine: numpy it is
            _KERNEL.append(None)
    return _KERNEL[0]


def _build_compiled_kernel() -> Callable[..., Array]:
    import warnings

    import numba

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # a real numpy ufunc (not numba's dispatcher): about 0.3 us per call, vectorized inside
        try:
            return numba.vectorize(["float32(float32)"], nopython=True, cache=True)(_round_f16_element).ufunc
        except Exception:  # noqa: BLE001 - no writable cache directory: compile it every time (about 1 s)
            return numba.vectorize(["float32(float32)"], nopython=True)(_round_f16_element).ufunc


_SUB_MAGIC, _MIN_NORMAL_F, _OVERFLOW_F = np.float32(0.5), np.float32(2.0**-14), np.float32(65520.0)
_SPLIT, _INF_F = np.float32(2.0**13 + 1), np.float32(np.inf)
_KEEP, _PAYLOAD, _NAN_MIN = np.uint32(0xFFFFE000), np.uint32(0x007FE000), np.uint32(0x2000)


def _round_f16_element(x: np.float32) -> np.float32:
    """The compiled kernel's body, one float32 element (numba compiles it into a ufunc; plain
    Python runs it too, slowly).

    Branch-free but for NaN (so the compiler vectorizes it), on |x|: in float16's normal
    range (2^-14 <= |x| < 65520) Veltkamp's split, c = |x| (2^13 + 1), c - (c - |x|), keeps
    the top 11 significant bits rounded to nearest even (checked over all 2^32 inputs);
    below it (|x| + 0.5) - 0.5 rounds to the float16 quantum 2^-24 (float32's spacing in
    [0.5, 1)); from 65520, the tie above 65504, inf; the sign is put back last. A NaN keeps
    the top 10 payload bits, at least one, as numpy's conversion does."""
    a = abs(x)
    sub = (a + _SUB_MAGIC) - _SUB_MAGIC
    c = a * _SPLIT
    r = sub if a < _MIN_NORMAL_F else c - (c - a)
    r = _INF_F if a >= _OVERFLOW_F else r
    if x == x:
        return np.copysign(r, x)
    t = np.uint32(np.float32(x).view(np.uint32) & _KEEP)
    return np.uint32(t if t & _PAYLOAD else t | _NAN_MIN).view(np.float32)


_F32_ZERO = np.float32(0.0)


def _relu_element(x: np.float32) -> np.float32:
    """`np.maximum(x, 0)` for one float32 element (the compiled Relu ufunc's body): x when x > 0
    or x is NaN (the same NaN), else +0 (so -0 gives +0, as numpy's maximum returns its second
    operand on a tie)."""
    return x if x > _F32_ZERO or x != x else _F32_ZERO


def _relu_loop(x: Array) -> None:
    """x = Relu(x) in place (x flat), elementwise as :func:`_relu_element` (one array: the
    compiler vectorizes it; a ufunc whose output is its input falls back to scalar code)."""
    for i in range(x.shape[0]):
        v = x[i]
        x[i] = v if v > _F32_ZERO or v != v else _F32_ZERO


def _channel_bias_loops(y: Array, b: Array) -> int:
    """y[n, c, :] += b[c] for y (N, C, P) (the compiled convolution bias epilogue, in place);
    returns how many sums are inf or NaN (v - v is 0 exactly for finite v), so the float
    status needs no second pass over y."""
    bad = 0
    for n in range(y.shape[0]):
        for c in range(y.shape[1]):
            bc = b[c]
            row = y[n, c]
            for p in range(row.shape[0]):
                v = row[p] + bc
                row[p] = v
                bad += (v - v) != _F32_ZERO
    return bad


ERF_CLAMP = 4.0
ERF_NUMERATOR = (
    -1.60960333262415e-02,
    -2.95459980854025e-03,
    -7.34990630326855e-04,
    -5.69250639462346e-05,
    -2.10102402082508e-06,
    2.77068142495902e-08,
    -2.72614225801306e-10,
)
ERF_DENOMINATOR = (
    -1.42647390514189e-02,
    -7.37332916720468e-03,
    -1.68282697438203e-03,
    -2.13374055278905e-04,
    -1.45660718464996e-05,
)
"""float32 erf as Eigen and XLA compute it: on x clamped to [-4, 4], x * P(x^2) / Q(x^2) with P's and Q's
coefficients from the constant term up, evaluated by Horner's rule in float32. Measured against libm's
double erf on 2e6 points of [-6, 6]: at most 4.5e-7 absolute (7.5 float32 ulps), and rounded to float16 it
is within one ulp of the correctly rounded value (102 of the 2e6 differ)."""

_C = np.float32(ERF_CLAMP)
_P0, _P1, _P2, _P3, _P4, _P5, _P6 = (np.float32(c) for c in ERF_NUMERATOR)
_Q0, _Q1, _Q2, _Q3, _Q4 = (np.float32(c) for c in ERF_DENOMINATOR)


def erf_f32(x: Array) -> Array:
    """float32 erf with numpy (what the compiled "erf" ufunc computes, bit for bit; NaN stays NaN)."""
    c = np.clip(np.asarray(x, np.float32), -_C, _C)
    x2 = c * c
    p = (((((_P6 * x2 + _P5) * x2 + _P4) * x2 + _P3) * x2 + _P2) * x2 + _P1) * x2 + _P0
    q = (((_Q4 * x2 + _Q3) * x2 + _Q2) * x2 + _Q1) * x2 + _Q0
    return (p * c) / q


def _erf_element(x: np.float32) -> np.float32:
    """:func:`erf_f32` for one element (the compiled ufunc's body)."""
    if x != x:
        return x
    c = min(max(x, -_C), _C)
    x2 = c * c
    p = (((((_P6 * x2 + _P5) * x2 + _P4) * x2 + _P3) * x2 + _P2) * x2 + _P1) * x2 + _P0
    q = (((_Q4 * x2 + _Q3) * x2 + _Q2) * x2 + _Q1) * x2 + _Q0
    return (p * c) / q


def _erf64_element(x: float) -> float:
    return math.erf(x)


_FAST_ON = [True]
_FAST: dict[str, Callable[..., Any] | None] = {}


def use_compiled_kernels(enabled: bool = True) -> None:
    """Build float32 Relu and the Conv2D bias epilogue on the compiled kernels (numba;
    the default) or on numpy (``enabled=False``: for tests; same bits). Affects kernels built
    afterwards."""
    _FAST_ON[0] = enabled


def compiled(name: str, shape: tuple[int, ...] | None = None) -> Callable[..., Any] | None:
    """The compiled kernel `name` ("relu", "relu_in_place", "channel_bias", "erf", "erf64"): numba compiles it once
    (cached on disk) and it loads at the first kernel built for a tensor of at least
    :data:`LOAD_COMPILED_AT` elements of `shape` (a dynamic or small one gets None, numpy then
    does the work, as it does when they are switched off or numba cannot build them)."""
    if not _FAST_ON[0] or (shape is not None and (any(d < 0 for d in shape) or math.prod(shape) < LOAD_COMPILED_AT)):
        return None
    if name not in _FAST:
        try:
            _FAST[name] = _build_compiled(name)
        except Exception:  # noqa: BLE001 - no numba, or no compiler for this machine: numpy it is
            _FAST[name] = None
    return _FAST[name]


def _build_compiled(name: str) -> Callable[..., Any]:
    import warnings

    import numba

    def build(cache: bool) -> Callable[..., Any]:
        if name in ("relu", "erf", "erf64"):  # real ufuncs: out= works, any layout
            body, signature = {
                "relu": (_relu_element, "float32(float32)"),
                "erf": (_erf_element, "float32(float32)"),
                "erf64": (_erf64_element, "float64(float64)"),
            }[name]
            return numba.vectorize([signature], nopython=True, cache=cache)(body).ufunc
        f32, i64, void = numba.types.float32, numba.types.int64, numba.types.void

        def arrays(ndim: int, layout: str) -> list[Any]:  # constants are read-only arrays
            return [numba.types.Array(f32, ndim, layout, readonly=r) for r in (False, True)]

        if name == "relu_in_place":
            return numba.njit([void(numba.types.Array(f32, 1, "C"))], cache=cache)(_relu_loop)
        if name == "channel_bias":
            y = numba.types.Array(f32, 3, "C")
            return numba.njit([i64(y, b) for b in arrays(1, "C")], cache=cache)(_channel_bias_loops)
        raise KeyError(name)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return build(True)
        except Exception:  # noqa: BLE001 - no writable cache directory: compile it every time
            return build(False)
