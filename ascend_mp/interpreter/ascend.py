"""Numpy kernels for every op of the `ascend` dialect, and the numerics model they follow.

:data:`KERNELS` maps each CANN op type to a :class:`KernelDef`: a *builder* that
receives the op's static facts (:class:`OpSpec`: attributes as Python values,
operand and result dtypes and shapes) once, at compile time, and returns a plain
function over numpy arrays. :func:`make_kernel` adds the dtype handling, so a
kernel body only states the math.

Numerics (what :func:`make_kernel` does around a kernel body):

* **Vector ops** (elementwise, reductions, normalisation, softmax, pooling,
  gradients, optimizers): float16/bfloat16 operands are widened to float32, the
  body runs in float32, and each result is rounded once to its result dtype
  (round to nearest even; fp16 overflow gives inf). This models Ascend's vector
  unit, which computes fp16 with fp32 internals closely enough for precision
  studies; an f32 op runs in f32 and is not rounded again. Nothing is computed in
  Python floats.
* **Cube ops** (MatMul, MatMulV2, BatchMatMul, Conv2D, DepthwiseConv2D,
  Conv2DBackpropInput/Filter): operands arrive in their dtype (already rounded),
  are copied to float32, multiplied and accumulated in float32 (numpy's matmul on
  the float32 copies) and the result is rounded to the kernel's output dtype
  (f16 or f32), as the Cube unit accumulates in its fp32 L0C buffer.
* **Data movement** (Reshape, Transpose, ConcatV2D) and **Select** are exact and
  run in the operands' dtype; **Cast** rounds to nearest even (float to int
  truncates). Greater compares float16/bfloat16 operands widened to float32
  (exactly), like any vector op.
* **float16 carried in float32** (``OpSpec.carry_f16``, what the executor uses):
  numpy converts float16 element by element in software, so float16 tensors are
  held as float32 arrays of float16 values. Widening them is then free, and the
  one rounding step of a float16 result is :func:`round_f16` (bit for bit
  numpy's conversion, in about half the time); a result of an ``exact`` kernel
  (Relu, ReluGrad, Maximum, Neg, MaxPool, ...) is already a float16 value and is
  not rounded again. Without it float16 tensors are numpy float16 arrays, widened
  for every op; both give the same bits (tests run both).
* **Reference mode** (``OpSpec.reference``): every float tensor is float64 and
  every op computes in float64, the "same graph in float64" baseline.
* **Compiled float32 kernels** (numba, :func:`compiled`): a float32 Relu and the
  convolutions' bias epilogue on tensors of 2048 elements or more run as loops
  numba compiles, with numpy's bits, in one pass; the epilogue also counts the
  inf/NaN results, so the executor does not check them again (:data:`SETS_STATUS`).
* The float status ops model Ascend's overflow register (:class:`FloatStatus`):
  the executor sets it when an AI Core kernel (every op but Const and the status
  ops) writes inf or NaN into a float result; NPUGetFloatStatus returns a
  tensor<8xf32> whose element 0 is 1.0 when it is set (all zeros otherwise), and
  NPUClearFloatStatus clears it. NPUAllocFloatStatus returns zeros and leaves the
  flag alone.

Callers must run kernels under ``np.errstate(all="ignore")`` (the executor does):
overflow and invalid operations produce inf/NaN, never warnings or exceptions.
Layouts follow the dialect: Conv2D filters are OIHW with NCHW data and HWIO with
NHWC data; DepthwiseConv2D filters are [KH, KW, C, M]; pads are
[top, bottom, left, right]; strides, ksize and dilations have 4 entries in
data_format order.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ascend_mp.dialects.ascend import OPS_BY_TYPE, Unit, pool_pads, pool_v2_out
from ascend_mp.errors import AscendError

F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
FLOATS = frozenset((F16, BF16, F32, F64))
"""The numpy float dtypes the interpreter models."""

VECTOR, CUBE, DATA, CAST, CONST, STATUS = Unit.VECTOR, Unit.CUBE, Unit.DATA, Unit.CAST, Unit.CONST, Unit.STATUS
"""Kernel units (each op's `UNIT` in the dialect): how :func:`make_kernel` treats dtypes around a kernel body."""

Array = np.ndarray[Any, Any]
KernelFn = Callable[..., Any]


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
    executor's representation, see :func:`round_f16`); the dtypes above stay the IR's."""

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


@dataclass(frozen=True)
class KernelDef:
    """One table entry: a builder and how the result dtypes come about."""

    build: Callable[[OpSpec], KernelFn]
    unit: Unit = Unit.VECTOR
    finite_preserving: bool = False
    """Finite operands give finite results of the same dtype (so the float status
    check can be skipped when every operand was already checked)."""
    keeps_dtype: bool = True
    """The body returns arrays in the compute dtype (else results are always cast)."""
    propagates: tuple[int, ...] = ()
    """Operand positions whose inf/NaN elements always give inf/NaN in a (non-empty)
    result 0 (so a check of that result also sees the operand's overflow)."""
    exact: bool = False
    """Every float result element is an operand element or a constant of the operands'
    dtype (max, select, negate, ...), so it needs no rounding to that dtype."""


KERNELS: dict[str, KernelDef] = {}
"""CANN op type -> kernel. Every op of the dialect has one (a registry test checks it)."""


@functools.cache
def declared_defaults(op_type: str) -> Mapping[str, Any]:
    """The attribute defaults the dialect declares for an op type (empty for an unknown type)."""
    cls = OPS_BY_TYPE.get(op_type)
    return {} if cls is None else cls.attr_defaults()


def kernel(
    *types: str,
    finite_preserving: bool = False,
    keeps_dtype: bool = True,
    propagates: tuple[int, ...] = (),
    exact: bool = False,
):
    """Register a builder `spec -> function` for op types (their unit is the dialect op's `UNIT`)."""

    def register(build: Callable[[OpSpec], KernelFn]) -> Callable[[OpSpec], KernelFn]:
        for t in types:
            assert t not in KERNELS, f"two kernels for {t}"
            KERNELS[t] = KernelDef(build, OPS_BY_TYPE[t].UNIT, finite_preserving, keeps_dtype, propagates, exact)
        return build

    return register


def simple(fn: KernelFn) -> Callable[[OpSpec], KernelFn]:
    """A builder for a body that needs no static facts."""
    return lambda spec: fn


def make_kernel(spec: OpSpec) -> KernelFn:
    """The kernel for `spec`, with its operand widening and result rounding.

    The function takes the operands (in their dtypes, or float16 carried in float32
    with `spec.carry_f16`) and returns one array, or a tuple for ops with several
    results, each exactly in its result dtype (held the same way).
    """
    try:
        kd = KERNELS[spec.type]
    except KeyError:
        raise KernelError(f"no kernel for op type '{spec.type}'") from None
    body = kd.build(spec)
    if kd.unit in (DATA, CAST, CONST, STATUS):
        return body
    cd = spec.compute
    casts = tuple(cd if (cd is not None and d in FLOATS and spec.stored(d) != cd) else None for d in spec.in_dtypes)
    widen = any(c is not None for c in casts)
    # numpy returns scalars, not arrays, for 0-d results of ufuncs and reductions
    scalar = not spec.out_shapes or any(len(s) == 0 for s in spec.out_shapes)
    exact = kd.exact and all(d == F16 for d in spec.in_dtypes if d in FLOATS)
    # a body over operands all in the compute dtype returns it (RealDiv and Pow widen only integers)
    keeps = kd.keeps_dtype or all(spec.stored(d) == cd for d in spec.in_dtypes)
    shapes = spec.out_shapes or ((),) * len(spec.out_dtypes)
    finishers = tuple(_finisher(spec, d, shape, cd, exact, keeps) for d, shape in zip(spec.out_dtypes, shapes))
    stored_outs = tuple(spec.stored(d) for d in spec.out_dtypes)
    in_place = all(f is None for f in finishers) and all(d == cd for d in stored_outs)
    if not widen and not scalar and cd is not None and keeps and in_place:
        return body  # the body's results are already what the op returns
    if len(finishers) == 1:
        (finish,), (out,) = finishers, stored_outs
        if finish is not None and not widen and not scalar and keeps:
            return lambda *xs: finish(body(*xs))  # an array in the compute dtype, rounded
        if finish is None and not widen and keeps and isinstance(body, np.ufunc) and spec.out_shapes == ((),):
            return lambda *xs: body(*xs, out=np.empty((), out))  # a 0-d array (a bare ufunc gives a scalar)

        def one(*xs: Array) -> Array:
            if widen:
                xs = tuple(x if c is None else x.astype(c) for x, c in zip(xs, casts))
            r = np.asarray(body(*xs))
            return r.astype(out, copy=False) if finish is None else finish(r)

        return one

    def many(*xs: Array) -> tuple[Array, ...]:
        if widen:
            xs = tuple(x if c is None else x.astype(c) for x, c in zip(xs, casts))
        return tuple(
            np.asarray(r).astype(d, copy=False) if f is None else f(np.asarray(r))
            for r, d, f in zip(body(*xs), stored_outs, finishers)
        )

    return many


def _finisher(
    spec: OpSpec, dtype: np.dtype[Any], shape: tuple[int, ...], compute: np.dtype[Any] | None, exact: bool, keeps: bool
) -> Callable[[Array], Array] | None:
    """How a result computed in `compute` becomes `dtype`; None: a plain `astype` (a no-op when they agree).

    A carried float16 result of an `exact` kernel on float16 operands needs no rounding (its
    float32 elements are float16 values already); any other is rounded (:func:`f16_rounding`)."""
    if not (spec.carry_f16 and dtype == F16):
        return None
    if exact and compute == F32:
        return None if keeps else _as_f32
    return f16_rounding(shape) if compute == F32 and keeps else round_f16


def f16_rounding(shape: tuple[int, ...]) -> Callable[[Array], Array]:
    """The float16 rounding of float32 arrays of a static `shape`, chosen at compile time: the
    compiled ufunc itself when it is (or, for a tensor of :data:`LOAD_COMPILED_AT` elements or
    more, can be) loaded, else :func:`round_f16`."""
    if not shape or any(d < 0 for d in shape) or not _COMPILED_ON[0]:
        return round_f16  # 0-d (a ufunc returns a scalar) or dynamic: decided per call
    kernel = _KERNEL[0] if _KERNEL else (_compiled_kernel() if math.prod(shape) >= LOAD_COMPILED_AT else None)
    return round_f16 if kernel is None else kernel


def _as_f32(r: Array) -> Array:
    return r.astype(F32, copy=False)


def apply(spec: OpSpec, *inputs: Array) -> Any:
    """Build and run one kernel (for tests and one-off use), with fp errors silenced."""
    with np.errstate(all="ignore"):
        return make_kernel(spec)(*inputs)


# --------------------------------------------------------------------------------------
# Float status checks (chosen per result dtype at compile time)
# --------------------------------------------------------------------------------------


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


try:  # the clip ufunc itself: np.clip's Python wrapper costs more than clipping a small tensor
    from numpy._core.umath import clip as _clip  # pyright: ignore[reportMissingModuleSource, reportPrivateImportUsage]
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
    the one rounding step: a compiled ufunc (:func:`_round_f16_element`, numba) when
    numba is installed, else nine numpy passes (:func:`_round_f16_numpy`). The compiled
    kernel is loaded at the first rounding of a tensor of at least :data:`LOAD_COMPILED_AT`
    elements (about 1 s of CPU once per process, so a run that only rounds small tensors,
    or none, never imports numba); :func:`use_compiled_rounding` switches it off or on.
    Float64 input is rounded directly (one rounding). Run under ``np.errstate(all="ignore")``.
    """
    if x.dtype == F32 and _COMPILED_ON[0]:
        kernel = _KERNEL[0] if _KERNEL else (_compiled_kernel() if x.size >= LOAD_COMPILED_AT else None)
        if kernel is not None:
            return kernel(x) if x.ndim else kernel(x, out=np.empty((), F32))  # a 0-d array, not a scalar
    return _round_f16_numpy(x)


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


_KERNEL: list[Callable[..., Array] | None] = []


def _compiled_kernel() -> Callable[..., Array] | None:
    """The numpy ufunc numba compiles from :func:`_round_f16_element` on first use (numba caches
    it on disk); None when numba is not installed or cannot compile it (then numpy does the work)."""
    if not _KERNEL:
        try:
            kernel = _build_compiled_kernel()
            kernel(np.array([1.0, 65520.0, 2.0**-25 * 3, -0.0], F32))  # loads it now, not in the middle of a run
            _KERNEL.append(kernel)
        except Exception:  # noqa: BLE001 - no numba, or no compiler for this machine: numpy it is
            _KERNEL.append(None)
    return _KERNEL[0]


def _build_compiled_kernel() -> Callable[..., Array]:
    import warnings

    import numba  # pyright: ignore[reportMissingImports]

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


# --------------------------------------------------------------------------------------
# Compiled float32 kernels (numba): numpy's operations, bit for bit, in one pass
# --------------------------------------------------------------------------------------

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


_FAST_ON = [True]
_FAST: dict[str, Callable[..., Any] | None] = {}


def use_compiled_kernels(enabled: bool = True) -> None:
    """Build float32 Relu and the Conv2D bias epilogue on the compiled kernels (numba;
    the default) or on numpy (``enabled=False``: for tests; same bits). Affects kernels built
    afterwards."""
    _FAST_ON[0] = enabled


def compiled(name: str, shape: tuple[int, ...] | None = None) -> Callable[..., Any] | None:
    """The compiled kernel `name` ("relu", "relu_in_place", "channel_bias"): numba compiles it once
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

    import numba  # pyright: ignore[reportMissingImports]

    def build(cache: bool) -> Callable[..., Any]:
        if name == "relu":  # a real ufunc: out= works, any layout
            return numba.vectorize(["float32(float32)"], nopython=True, cache=cache)(_relu_element).ufunc
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


NONFINITE: dict[np.dtype[Any], Callable[[Array], bool]] = {
    F32: nonfinite_wide,
    F64: nonfinite_wide,
    F16: _bits_check(0x7C00),
    BF16: _bits_check(0x7F80),
}
"""Float dtype -> a fast test for inf/NaN elements (exponent bits all ones for 16-bit floats)."""


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def _reduce_axes(spec: OpSpec, rank: int) -> tuple[int, ...]:
    axes = spec.attr("axes") or tuple(range(rank))
    return tuple(sorted({a % rank for a in axes})) if rank else ()


def _channel_axis(fmt: str, rank: int) -> int:
    return 1 if fmt == "NCHW" else rank - 1


def _spatial(fmt: str) -> tuple[int, int]:
    """Indices of H and W in a 4-entry strides/ksize/dilations list."""
    return (2, 3) if fmt == "NCHW" else (1, 2)


def _to_nchw(x: Array, fmt: str) -> Array:
    return x if fmt == "NCHW" else x.transpose(0, 3, 1, 2)


def _from_nchw(y: Array, fmt: str) -> Array:
    return y if fmt == "NCHW" else y.transpose(0, 2, 3, 1)


def _scalar(x: Array) -> Array:
    """A one-element hyper-parameter tensor as a 0-d array (so it broadcasts against anything)."""
    return x.reshape(())


def _contig(x: Array) -> Array:
    return np.ascontiguousarray(x)


# --------------------------------------------------------------------------------------
# Constants, casts, data movement
# --------------------------------------------------------------------------------------


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


@kernel("Reshape", finite_preserving=True, propagates=(0,))
def _reshape(spec: OpSpec) -> KernelFn:
    shape = spec.out_shapes[0]
    if sum(1 for d in shape if d < 0) > 1:
        raise KernelError(f"Reshape to {shape} has more than one dynamic dimension")
    return lambda x: x.reshape(shape)


@kernel("Transpose", finite_preserving=True, propagates=(0,))
def _transpose(spec: OpSpec) -> KernelFn:
    perm = tuple(spec.attr("perm"))
    return lambda x: x.transpose(perm)


@kernel("ConcatV2D", finite_preserving=True)
def _concat(spec: OpSpec) -> KernelFn:
    dim = spec.attr("concat_dim")
    return lambda *xs: np.concatenate(xs, axis=dim)


@kernel("GatherV2D", finite_preserving=True)
def _gather_v2(spec: OpSpec) -> KernelFn:
    axis = spec.attr("axis") % len(spec.in_shapes[0])

    def gather(x: Array, indices: Array) -> Array:
        n = x.shape[axis]
        if indices.size and (int(indices.min()) < -n or int(indices.max()) >= n):
            bad = indices[(indices < -n) | (indices >= n)].reshape(-1)[0]
            raise KernelError(f"GatherV2D: index {int(bad)} is out of range for axis {axis} of size {n}")
        return np.take(x, indices, axis=axis)

    return gather


@kernel("StridedSliceD", finite_preserving=True)
def _strided_slice(spec: OpSpec) -> KernelFn:
    begin, end, strides = spec.attr("begin"), spec.attr("end"), spec.attr("strides")
    bm, em = spec.attr("begin_mask"), spec.attr("end_mask")
    slices = tuple(slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i]) for i in range(len(begin)))
    return lambda x: x[slices].copy()


@kernel("BroadcastToD", finite_preserving=True, propagates=(0,))
def _broadcast_to(spec: OpSpec) -> KernelFn:
    shape = tuple(spec.attr("shape"))
    return lambda x: np.broadcast_to(x, shape).copy()


@kernel("TileD", finite_preserving=True)
def _tile(spec: OpSpec) -> KernelFn:
    multiples = tuple(spec.attr("multiples"))
    return lambda x: np.tile(x, multiples)


@kernel("SelectV2", finite_preserving=True)  # as Select: the operand not chosen goes nowhere
def _select_v2(spec: OpSpec) -> KernelFn:
    return np.where


@kernel("Select", finite_preserving=True)  # a NaN in the operand not chosen goes nowhere: no `propagates`
def _select(spec: OpSpec) -> KernelFn:
    if spec.in_shapes[0] == ():  # one flag for the whole tensor: copy the chosen operand
        return lambda c, x1, x2: (x1 if c else x2).copy()
    return np.where


def select_moving(move1: bool, move2: bool) -> KernelFn:
    """A Select on one flag (0-d condition) that returns the chosen operand itself, not a copy,
    where `move1`/`move2` say so: the runner passes True for an operand whose buffer it knows
    dies at this Select (then no one can tell the difference; the loss-scale pass gates each
    gradient of a skipped update with such a Select)."""
    return lambda c, x1, x2: (x1 if move1 else x1.copy()) if c else (x2 if move2 else x2.copy())


# --------------------------------------------------------------------------------------
# Implementation modes (`impl_mode`, the ascend-impl-mode pass)
# --------------------------------------------------------------------------------------
# high_precision (no `impl_mode`): the bodies below, fp32 internals. high_performance (and
# super_performance, keep_fp16) on an fp16/bf16 op of DUAL_IMPL_OPS: the `_fast_*` bodies, whose
# every intermediate step (and constant) is rounded to the op's dtype; reductions accumulate in
# fp32 and round their result once. f32 ops and reference runs are unaffected.


def _impl_rounding(spec: OpSpec) -> Callable[[Array], Array] | None:
    """How a high_performance op rounds its intermediates (to its dtype), or None: high_precision."""
    from ascend_mp.implmode import DEFAULT_MODE, LOW_INTERNAL_MODES

    # an optional property without a declared default: absent means the dialect's high_precision
    mode = spec.attrs["impl_mode"] if "impl_mode" in spec.attrs else DEFAULT_MODE
    low = spec.out_dtypes[0] if spec.out_dtypes else None
    if mode not in LOW_INTERNAL_MODES or spec.reference or low not in (F16, BF16):
        return None
    return lambda a: np.asarray(a).astype(low).astype(F32)


def _impl_mode(fast: Callable[[OpSpec, Callable[[Array], Array]], KernelFn], precise: Callable[[OpSpec], KernelFn]) -> Callable[[OpSpec], KernelFn]:
    """A builder that picks the `fast` body for high_performance ops, else the `precise` one."""

    def build(spec: OpSpec) -> KernelFn:
        rnd = _impl_rounding(spec)
        return precise(spec) if rnd is None else fast(spec, rnd)

    return build


def _fast_exp(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    # exp(x) = 2^n * 2^f with t = x*log2(e) rounded, n = floor(t), f = t - n in [0, 1)
    log2e = rnd(np.float32(math.log2(math.e)))

    def exp(x: Array) -> Array:
        t = rnd(x * log2e)
        n = np.clip(np.floor(t), -64, 64)
        return np.ldexp(rnd(np.exp2(rnd(t - n))), n.astype(np.int32))

    return exp


def _fast_log(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    ln2 = rnd(np.float32(math.log(2.0)))  # log(x) = log2(x) * ln(2)
    return lambda x: rnd(np.log2(x)) * ln2


def _fast_sqrt(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    def sqrt(x: Array) -> Array:  # x * rsqrt(x); 0, inf, negative and NaN as sqrt
        r = rnd(np.reciprocal(np.sqrt(x)))
        return np.where(np.isfinite(r) & (r > 0), x * r, np.sqrt(x))

    return sqrt


def _fast_tanh(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    def tanh(x: Array) -> Array:  # sign(x) (1 - e) / (1 + e), e = exp(-2|x|)
        e = rnd(np.exp(rnd(-2 * np.abs(x))))
        return np.copysign(rnd(rnd(1 - e) / rnd(1 + e)), x)

    return tanh


def _fast_sigmoid(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    def sigmoid(x: Array) -> Array:
        e = rnd(np.exp(rnd(-np.abs(x))))
        r = rnd(np.reciprocal(rnd(e + 1)))
        return np.where(x >= 0, r, e * r)

    return sigmoid


def _fast_gelu(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    c, a = rnd(np.float32(_GELU_C)), rnd(np.float32(_GELU_A))

    def gelu(x: Array) -> Array:
        cube = rnd(rnd(x * x) * x)
        t = rnd(np.tanh(rnd(c * rnd(x + rnd(a * cube)))))
        return rnd(0.5 * x) * rnd(1 + t)

    return gelu


def _fast_softmax(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    axes = _softmax_axes(spec)

    def softmax(x: Array) -> Array:
        e = rnd(np.exp(rnd(x - x.max(axis=axes, keepdims=True))))
        return e / rnd(e.sum(axis=axes, keepdims=True))

    return softmax


def _fast_layer_norm(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    rank = len(spec.in_shapes[0])
    axes = tuple(range(spec.attr("begin_norm_axis") % rank, rank))
    eps = rnd(np.float32(spec.attr("epsilon")))

    def ln(x: Array, gamma: Array, beta: Array) -> tuple[Array, Array, Array]:
        m = rnd(x.mean(axis=axes, keepdims=True))
        d = rnd(x - m)
        var = rnd(rnd(d * d).mean(axis=axes, keepdims=True))
        inv = rnd(np.reciprocal(rnd(np.sqrt(rnd(var + eps)))))
        return rnd(rnd(d * inv) * gamma) + beta, m, var

    return ln


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------


def _int_safe(fn: KernelFn) -> Callable[[OpSpec], KernelFn]:
    """A binary body that computes integer operands in float64 (the result is cast back),
    so that integer division by zero or negative powers never raise."""

    def build(spec: OpSpec) -> KernelFn:
        if spec.compute is None:
            return lambda a, b: fn(a.astype(F64), b.astype(F64))
        return fn

    return build


kernel("Add", propagates=(0, 1))(simple(np.add))
kernel("Sub", propagates=(0, 1))(simple(np.subtract))
kernel("Mul", propagates=(0, 1))(simple(np.multiply))  # inf * 0 is NaN: still caught
kernel("RealDiv", keeps_dtype=False, propagates=(0,))(_int_safe(np.true_divide))  # x / inf is 0
kernel("Pow", keeps_dtype=False)(_int_safe(np.power))
kernel("Maximum", finite_preserving=True, exact=True)(simple(np.maximum))
kernel("Minimum", finite_preserving=True, exact=True)(simple(np.minimum))
kernel("Greater")(simple(np.greater))  # a bool result: nothing for the float status to watch
kernel("Less")(simple(np.less))
kernel("Equal")(simple(np.equal))
kernel("LogicalAnd")(simple(np.logical_and))
kernel("LogicalOr")(simple(np.logical_or))
kernel("LogicalNot")(simple(np.logical_not))
kernel("Neg", finite_preserving=True, propagates=(0,), exact=True)(simple(np.negative))
kernel("Square", propagates=(0,))(simple(np.square))
kernel("Exp")(_impl_mode(_fast_exp, simple(np.exp)))
kernel("Log", propagates=(0,))(_impl_mode(_fast_log, simple(np.log)))
kernel("Sqrt", propagates=(0,))(_impl_mode(_fast_sqrt, simple(np.sqrt)))
kernel("Floor", finite_preserving=True, propagates=(0,), exact=True)(simple(np.floor))  # floor of a float16 is one
kernel("Tanh", finite_preserving=True)(_impl_mode(_fast_tanh, simple(np.tanh)))


@kernel("Relu", finite_preserving=True, exact=True)
def _relu(spec: OpSpec) -> KernelFn:
    fast = _compiled_relu(spec)
    if fast is not None:
        return fast  # a ufunc: a new array
    zero = np.zeros((), spec.compute or spec.in_dtypes[0])
    return lambda x: np.maximum(x, zero)


def _compiled_relu(spec: OpSpec) -> np.ufunc | None:
    """The compiled Relu ufunc for a float32 Relu of a large static shape (numpy's maximum, with
    its NaN and signed-zero results, in about a quarter of its time), else None."""
    return compiled("relu", spec.in_shapes[0]) if spec.compute == F32 and spec.in_shapes else None


@kernel("Relu6", finite_preserving=True, exact=True)
def _relu6(spec: OpSpec) -> KernelFn:
    dtype = spec.compute or spec.in_dtypes[0]
    zero, six = np.zeros((), dtype), np.asarray(6, dtype)
    return lambda x: np.minimum(np.maximum(x, zero), six)


@kernel("ClipByValue", finite_preserving=True, exact=True)
def _clip_by_value(spec: OpSpec) -> KernelFn:
    return lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi)


@kernel("HardSigmoid", keeps_dtype=False)
def _hard_sigmoid(spec: OpSpec) -> KernelFn:
    dtype = spec.compute or F64  # integer operands: computed in float64, truncated by the result cast
    alpha, beta = np.asarray(spec.attr("alpha"), dtype), np.asarray(spec.attr("beta"), dtype)
    zero, one = np.zeros((), dtype), np.ones((), dtype)
    return lambda x: np.minimum(np.maximum(x * alpha + beta, zero), one)


@kernel("Rsqrt")
def _rsqrt(spec: OpSpec) -> KernelFn:
    return lambda x: np.reciprocal(np.sqrt(x))


@kernel("Sigmoid", finite_preserving=True)
def _sigmoid(spec: OpSpec) -> KernelFn:
    if (rnd := _impl_rounding(spec)) is not None:  # high_performance
        return _fast_sigmoid(spec, rnd)
    # With e = exp(-|x|) <= 1 nothing overflows: 1/(1+e) for x >= 0, e/(1+e) below, so a very
    # negative x gives its tiny (subnormal) value instead of 1/(1+inf) = 0; NaN stays NaN.
    def sigmoid(x: Array) -> Array:
        e = np.exp(-np.abs(x))
        r = np.reciprocal(e + 1)
        return np.where(x >= 0, r, e * r)

    return sigmoid


@kernel("LeakyRelu")
def _leaky_relu(spec: OpSpec) -> KernelFn:
    slope = float(spec.attr("negative_slope"))
    return lambda x: np.where(x > 0, x, x * slope)


def _erf_ufunc() -> Callable[[Array], Array]:
    """scipy's erf ufunc when scipy is installed, else math.erf element by element (exact, slower)."""
    try:
        from scipy.special import erf  # pyright: ignore[reportMissingTypeStubs, reportUnknownVariableType]

        return erf  # pyright: ignore[reportUnknownVariableType]
    except ImportError:  # pragma: no cover - scipy comes with the test and train extras
        scalar = np.frompyfunc(math.erf, 1, 1)
        return lambda x: scalar(x).astype(x.dtype)


@kernel("Erf", finite_preserving=True)
def _erf(spec: OpSpec) -> KernelFn:
    return _erf_ufunc()


_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_A = 0.044715


@kernel("Gelu")
def _gelu(spec: OpSpec) -> KernelFn:
    if (rnd := _impl_rounding(spec)) is not None:  # high_performance
        return _fast_gelu(spec, rnd)
    # The tanh approximation (CANN's Gelu): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    return lambda x: 0.5 * x * (1 + np.tanh(_GELU_C * (x + _GELU_A * (x * x * x))))


@kernel("BiasAdd", propagates=(0, 1))
def _bias_add(spec: OpSpec) -> KernelFn:
    rank = len(spec.in_shapes[0])
    axis = _channel_axis(spec.attr("data_format"), rank)
    if axis == rank - 1:
        return np.add
    shape = [1] * rank
    shape[axis] = -1
    return lambda x, b: x + b.reshape(shape)


# --------------------------------------------------------------------------------------
# Cube: matrix products and convolutions
# --------------------------------------------------------------------------------------


@kernel("MatMul", "MatMulV2", propagates=(0, 1, 2))
def _matmul(spec: OpSpec) -> KernelFn:
    ta, tb = bool(spec.attr("transpose_x1")), bool(spec.attr("transpose_x2"))

    ints = spec.compute is None  # integer kernels (int8 -> int32) accumulate in int64

    def mm(a: Array, b: Array, bias: Array | None = None) -> Array:
        if ints:
            a, b = a.astype(np.int64), b.astype(np.int64)
        y = np.matmul(a.T if ta else a, b.T if tb else b)
        return y if bias is None else y + bias

    return mm


@kernel("BatchMatMulV2", propagates=(0, 1, 2))
def _batch_matmul_v2(spec: OpSpec) -> KernelFn:
    ta, tb = bool(spec.attr("adj_x1")), bool(spec.attr("adj_x2"))
    ints = spec.compute is None

    def bmm(a: Array, b: Array, bias: Array | None = None) -> Array:
        if ints:
            a, b = a.astype(np.int64), b.astype(np.int64)
        y = np.matmul(a.swapaxes(-1, -2) if ta else a, b.swapaxes(-1, -2) if tb else b)
        return y if bias is None else y + bias

    return bmm


@kernel("BatchMatMul", propagates=(0, 1))
def _batch_matmul(spec: OpSpec) -> KernelFn:
    ta, tb = bool(spec.attr("adj_x1")), bool(spec.attr("adj_x2"))
    ints = spec.compute is None

    def bmm(a: Array, b: Array) -> Array:
        if ints:
            a, b = a.astype(np.int64), b.astype(np.int64)
        return np.matmul(a.swapaxes(-1, -2) if ta else a, b.swapaxes(-1, -2) if tb else b)

    return bmm


@dataclass(frozen=True)
class ConvGeometry:
    """A Conv2D in NCHW/OIHW terms: strides, dilations, pads (top, bottom, left, right), groups."""

    sh: int
    sw: int
    dh: int
    dw: int
    pads: tuple[int, int, int, int]
    groups: int

    @classmethod
    def of(cls, spec: OpSpec, groups: int | None = None) -> ConvGeometry:
        h, w = _spatial(spec.attr("data_format"))
        s = spec.attr("strides")
        d = spec.attr("dilations")
        p = tuple(spec.attr("pads"))
        g = groups if groups is not None else int(spec.attr("groups"))
        return cls(s[h], s[w], d[h], d[w], (p[0], p[1], p[2], p[3]), g)

    def out_size(self, h: int, w: int, kh: int, kw: int) -> tuple[int, int]:
        pt, pb, pl, pr = self.pads
        oh = (h + pt + pb - (self.dh * (kh - 1) + 1)) // self.sh + 1
        ow = (w + pl + pr - (self.dw * (kw - 1) + 1)) // self.sw + 1
        return oh, ow

    def windows(self, x: Array, kh: int, kw: int) -> Array:
        """(N, C, OH, OW, KH, KW) view of the (padded, strided, dilated) windows of `x` (N, C, H, W)."""
        oh, ow = self.out_size(x.shape[2], x.shape[3], kh, kw)
        pt, pb, pl, pr = self.pads
        if any(self.pads):
            x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
        eh, ew = self.dh * (kh - 1) + 1, self.dw * (kw - 1) + 1
        win = sliding_window_view(x, (eh, ew), axis=(2, 3))  # N, C, H', W', eh, ew
        return win[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw, :: self.dh, :: self.dw]

    def columns(self, x: Array, kh: int, kw: int) -> Array:
        """im2col: (N*OH*OW, G, C/G*KH*KW) patches of padded `x` (N, C, H, W)."""
        n, c, h, w = x.shape
        oh, ow = self.out_size(h, w, kh, kw)
        win = self.windows(x, kh, kw)
        return win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, self.groups, (c // self.groups) * kh * kw)

    def patches(self, x: Array, kh: int, kw: int) -> Array:
        """im2col, channel-major: (N, C*KH*KW, OH*OW) patches of `x` (N, C, H, W), padding as zeros; a 1x1
        window without padding or dilation is a strided view of `x` (no copy at stride 1). Else one copy
        per filter tap: at stride 1 with an output as wide as x (resnet's 3x3), one flat shifted copy
        (:func:`_copy_shifted_tap`); for a strided window of many taps (the 7x7 stem), a stride-1 copy
        from x split by stride phase (:meth:`phases`); else a copy of the output rows it reads."""
        n, c, h, w = x.shape
        oh, ow = self.out_size(h, w, kh, kw)
        if kh == kw == 1 and not any(self.pads):
            return x[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw].reshape(n, c, oh * ow)
        cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
        pt, _, pl, _ = self.pads
        if self.sh == self.sw == 1 and ow == w:  # output rows align with x's: one flat copy per tap
            xf, flat = _contig(x).reshape(n, c, h * w), cols.reshape(n, c, kh * kw, oh * ow)
            for a in range(kh):
                for b in range(kw):
                    _copy_shifted_tap(cols[:, :, a, b], flat[:, :, a * kw + b], xf, h, a * self.dh - pt, b * self.dw - pl)
            return cols.reshape(n, c * kh * kw, oh * ow)
        if kh * kw >= 4 * self.sh * self.sw > 4:  # a strided window of many taps (resnet's 7x7 stem)
            phases = self.phases(x, kh, kw, oh, ow)
            for a in range(kh):
                u, p = divmod(a * self.dh, self.sh)
                for b in range(kw):
                    v, q = divmod(b * self.dw, self.sw)
                    cols[:, :, a, b] = phases[p, q][:, :, u : u + oh, v : v + ow]
            return cols.reshape(n, c * kh * kw, oh * ow)
        for a in range(kh):  # one slice copy per filter tap (the copy streams whole output rows)
            rows = (*_tap_span(oh, h, self.sh, a * self.dh - pt), self.sh)
            for b in range(kw):
                _copy_tap(cols[:, :, a, b], x, rows, (*_tap_span(ow, w, self.sw, b * self.dw - pl), self.sw))
        return cols.reshape(n, c * kh * kw, oh * ow)

    def phases(self, x: Array, kh: int, kw: int, oh: int, ow: int) -> dict[tuple[int, int], Array]:
        """The zero-padded x split by stride phase: (p, q) -> the contiguous padded x[:, :, p::SH, q::SW],
        so that tap (a, b) reads phase (a*DH % SH, b*DW % SW) from row a*DH // SH, column b*DW // SW
        with stride 1 (for every phase some tap reads; one strided pass over x instead of one per tap)."""
        n, c, h, w = x.shape
        pt, _, pl, _ = self.pads
        hp = (oh - 1) * self.sh + self.dh * (kh - 1) + 1  # the padded extent the windows read
        wp = (ow - 1) * self.sw + self.dw * (kw - 1) + 1
        xp = np.zeros((n, c, hp + self.sh, wp + self.sw), x.dtype)  # a stride's margin: every phase is as long
        rows, cols = max(0, min(h, hp - pt)), max(0, min(w, wp - pl))
        xp[:, :, pt : pt + rows, pl : pl + cols] = x[:, :, :rows, :cols]
        needed = {((a * self.dh) % self.sh, (b * self.dw) % self.sw) for a in range(kh) for b in range(kw)}
        return {(p, q): _contig(xp[:, :, p :: self.sh, q :: self.sw]) for p, q in needed}

    def forward(self, x: Array, w: Array) -> Array:
        """y (N, O, OH, OW) = conv(x (N, C, H, W), w (O, C/G, KH, KW))."""
        n, _, h, wd = x.shape
        o, i, kh, kw = w.shape
        g = self.groups
        oh, ow = self.out_size(h, wd, kh, kw)
        if g == 1:  # (O, C*K) @ (N, C*K, OH*OW): the products land in NCHW order, one fp32 matmul
            return np.matmul(w.reshape(o, i * kh * kw), self.patches(x, kh, kw)).reshape(n, o, oh, ow)
        cols = self.patches(x, kh, kw).reshape(n, g, i * kh * kw, oh * ow)  # channel-major, so group-major
        return np.matmul(w.reshape(g, o // g, i * kh * kw), cols).reshape(n, o, oh, ow)  # N, G, O/G, P: NCHW

    def backprop_filter(self, x: Array, dy: Array, filter_shape: tuple[int, ...]) -> Array:
        """dw (O, C/G, KH, KW) of the forward conv, from its input x and output gradient dy."""
        o, i, kh, kw = filter_shape
        g = self.groups
        cols = self.columns(x, kh, kw)  # P, G, I*K
        dym = dy.transpose(0, 2, 3, 1).reshape(-1, g, o // g)  # P, G, O/G
        dw = np.matmul(dym.transpose(1, 2, 0), cols.transpose(1, 0, 2))  # G, O/G, I*K
        return dw.reshape(o, i, kh, kw)

    def backprop_input(self, w: Array, dy: Array, input_shape: tuple[int, ...]) -> Array:
        """dx (N, C, H, W) of the forward conv, from its filter w and output gradient dy."""
        n, c, h, wd = input_shape
        o, i, kh, kw = w.shape
        g = self.groups
        oh, ow = dy.shape[2], dy.shape[3]
        dym = dy.transpose(0, 2, 3, 1).reshape(-1, g, o // g).transpose(1, 0, 2)  # G, P, O/G
        dcols = np.matmul(dym, w.reshape(g, o // g, i * kh * kw))  # G, P, I*K
        dcols = dcols.reshape(g, n, oh, ow, i, kh, kw).transpose(1, 0, 4, 5, 6, 2, 3).reshape(n, c, kh, kw, oh, ow)
        pt, pb, pl, pr = self.pads
        dx = np.zeros((n, c, h + pt + pb, wd + pl + pr), dcols.dtype)
        for a in range(kh):  # a loop over filter taps, not pixels
            h0 = a * self.dh
            for b in range(kw):
                w0 = b * self.dw
                dx[:, :, h0 : h0 + (oh - 1) * self.sh + 1 : self.sh, w0 : w0 + (ow - 1) * self.sw + 1 : self.sw] += dcols[:, :, a, b]
        return _contig(dx[:, :, pt : pt + h, pl : pl + wd])


def _tap_span(n_out: int, n_in: int, stride: int, offset: int) -> tuple[int, int, int]:
    """(first, end, first input index) of the outputs i whose tap i*stride + offset lies inside [0, n_in)."""
    lo = max(0, -(offset // stride))
    hi = max(lo, min(n_out, (n_in - 1 - offset) // stride + 1))
    return lo, hi, lo * stride + offset


def _tap_view(x: Array, rows: tuple[int, int, int, int], cols: tuple[int, int, int, int]) -> Array:
    """The elements of x (N, C, H, W) that one window tap reads for outputs i0 <= i < i1, j0 <= j < j1:
    rows r0 + s*(i - i0), columns c0 + s*(j - j0) (`rows`/`cols` = (i0, i1, r0, s), from :func:`_tap_span`)."""
    i0, i1, r0, sh = rows
    j0, j1, c0, sw = cols
    return x[:, :, r0 : r0 + (i1 - i0 - 1) * sh + 1 : sh, c0 : c0 + (j1 - j0 - 1) * sw + 1 : sw]


def _copy_tap(dst: Array, x: Array, rows: tuple[int, int, int, int], cols: tuple[int, int, int, int]) -> None:
    """dst (N, C, OH, OW) = what one filter tap reads from x (:func:`_tap_view`), zero elsewhere (the padding)."""
    i0, i1 = rows[:2]
    j0, j1 = cols[:2]
    if i1 == i0 or j1 == j0:
        dst[...] = 0
        return
    if i0:
        dst[:, :, :i0] = 0
    if i1 < dst.shape[2]:
        dst[:, :, i1:] = 0
    if j0:
        dst[:, :, i0:i1, :j0] = 0
    if j1 < dst.shape[3]:
        dst[:, :, i0:i1, j1:] = 0
    dst[:, :, i0:i1, j0:j1] = _tap_view(x, rows, cols)


def _copy_shifted_tap(dst: Array, flat: Array, xf: Array, h: int, dr: int, dc: int) -> None:
    """dst (N, C, OH, W), and `flat`, the same memory as (N, C, OH*W), = x at rows i + dr, columns
    j + dc, zero outside x (one stride-1 filter tap whose output is as wide as x; `xf` is x
    (N, C, H, W) as (N, C, H*W)). Flat, the tap is x shifted by dr*W + dc: one copy of long
    contiguous runs; then the columns it wrapped around (|dc| per row) and the rows outside x
    are zeroed."""
    oh, w = dst.shape[2], dst.shape[3]
    i0, i1 = max(0, -dr), min(oh, h - dr)
    if i1 <= i0 or abs(dc) >= w:
        dst[...] = 0
        return
    lo, hi = i0 * w, i1 * w
    src_lo, src_hi = lo + dr * w + dc, hi + dr * w + dc  # may pass x's ends by |dc|: those are wrapped columns
    s0, s1 = max(src_lo, 0), min(src_hi, h * w)
    flat[:, :, lo + s0 - src_lo : hi - (src_hi - s1)] = xf[:, :, s0:s1]
    if lo:
        flat[:, :, :lo] = 0
    if hi < flat.shape[2]:
        flat[:, :, hi:] = 0
    if dc < 0:
        dst[:, :, i0:i1, :-dc] = 0
    elif dc > 0:
        dst[:, :, i0:i1, w - dc :] = 0


def _oihw(w: Array, fmt: str) -> Array:
    return w if fmt == "NCHW" else w.transpose(3, 2, 0, 1)


def _channel_bias(y: Array, bias: Array | None, fmt: str) -> Array:
    if bias is None:
        return y
    return y + (bias.reshape(1, -1, 1, 1) if fmt == "NCHW" else bias)


SETS_STATUS = "sets_status"
"""A kernel function with this attribute set sets the float status register itself when its
result holds inf or NaN (a convolution whose bias epilogue sees every element of its float32
result anyway), so the executor does not check that result again."""


def _conv_bias(spec: OpSpec, fmt: str) -> Callable[[Array, Array | None], Array]:
    """The bias epilogue of a forward convolution: `y` (N, O, OH, OW, a fresh array) plus the
    channel bias, in data_format; in place when the dtypes allow it. A large static float32
    result gets the compiled loop (one pass, about a third of numpy's broadcast add's time),
    which also sets the float status (:data:`SETS_STATUS`, marked on the returned function)."""
    biased = len(spec.in_dtypes) > 2 and fmt == "NCHW" and spec.compute == F32 and bool(spec.out_shapes)
    fast = compiled("channel_bias", spec.out_shapes[0]) if biased else None
    # the result is the op's own (no rounding after): an inf/NaN seen here is one in the result
    status = spec.status if fast is not None and spec.out_dtypes[0] == F32 else None

    def add(y: Array, bias: Array | None) -> Array:
        if fast is not None and bias is not None and y.dtype == bias.dtype == F32 and y.flags.c_contiguous:
            if fast(y.reshape(y.shape[0], y.shape[1], -1), _contig(bias)) and status is not None:
                status.flag = True
            return y
        if bias is None:
            y = _from_nchw(y, fmt)
        elif fmt == "NCHW" and np.result_type(y, bias) == y.dtype:
            y += bias.reshape(1, -1, 1, 1)  # in place: no second output-sized buffer
        else:
            y = _channel_bias(_from_nchw(y, fmt), bias, fmt)
        if status is not None and not status.flag and nonfinite_wide(y):
            status.flag = True
        return y

    if status is not None:
        setattr(add, SETS_STATUS, True)
    return add


def _sets_status_as(fn: KernelFn, epilogue: Callable[..., Any]) -> KernelFn:
    """`fn`, marked :data:`SETS_STATUS` when its result is `epilogue`'s and that sets the status."""
    if getattr(epilogue, SETS_STATUS, False):
        setattr(fn, SETS_STATUS, True)
    return fn


@kernel("Conv2D", propagates=(1, 2))  # an input pixel may lie outside every window
def _conv2d(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = ConvGeometry.of(spec)
    add_bias = _conv_bias(spec, fmt)

    def conv(x: Array, w: Array, bias: Array | None = None) -> Array:
        return add_bias(geo.forward(_to_nchw(x, fmt), _oihw(w, fmt)), bias)

    return _sets_status_as(conv, add_bias)


@kernel("DepthwiseConv2D", propagates=(1, 2))
def _depthwise(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    kh, kw, c, m = spec.in_shapes[1]
    geo = ConvGeometry.of(spec, groups=c)
    add_bias = _conv_bias(spec, fmt)

    def conv(x: Array, w: Array, bias: Array | None = None) -> Array:
        # Depthwise = grouped conv with one group per channel; output channel c*M + m.
        w_oihw = w.transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
        return add_bias(geo.forward(_to_nchw(x, fmt), w_oihw), bias)

    return _sets_status_as(conv, add_bias)


@kernel("Conv2DBackpropInput")
def _conv_backprop_input(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = ConvGeometry.of(spec)
    size = tuple(spec.attr("input_size"))
    nchw = size if fmt == "NCHW" else (size[0], size[3], size[1], size[2])
    return lambda w, dy: _from_nchw(geo.backprop_input(_oihw(w, fmt), _to_nchw(dy, fmt), nchw), fmt)


@kernel("Conv2DBackpropFilter", propagates=(1,))
def _conv_backprop_filter(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = ConvGeometry.of(spec)
    size = tuple(spec.attr("filter_size"))
    oihw = size if fmt == "NCHW" else (size[3], size[2], size[0], size[1])

    def grad(x: Array, dy: Array) -> Array:
        dw = geo.backprop_filter(_to_nchw(x, fmt), _to_nchw(dy, fmt), oihw)
        return dw if fmt == "NCHW" else _contig(dw.transpose(2, 3, 1, 0))

    return grad


# --------------------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolGeometry:
    """TF pooling on the H and W dimensions of an NCHW tensor."""

    kh: int
    kw: int
    sh: int
    sw: int
    same: bool

    @classmethod
    def of(cls, spec: OpSpec) -> PoolGeometry:
        fmt = spec.attr("data_format")
        k, s = spec.attr("ksize"), spec.attr("strides")
        h, w = _spatial(fmt)
        others = [i for i in range(4) if i not in (h, w)]
        if any(k[i] != 1 or s[i] != 1 for i in others):
            raise KernelError(f"{spec.type} pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 elsewhere")
        return cls(k[h], k[w], s[h], s[w], spec.attr("padding") == "SAME")

    def layout(self, h: int, w: int) -> tuple[int, int, int, int, int, int]:
        """(OH, OW, pad top, pad bottom, pad left, pad right), TF's SAME/VALID rule."""
        if not self.same:
            return (h - self.kh) // self.sh + 1, (w - self.kw) // self.sw + 1, 0, 0, 0, 0
        oh, ow = -(-h // self.sh), -(-w // self.sw)
        ph = max((oh - 1) * self.sh + self.kh - h, 0)
        pw = max((ow - 1) * self.sw + self.kw - w, 0)
        return oh, ow, ph // 2, ph - ph // 2, pw // 2, pw - pw // 2

    def windows(self, x: Array, fill: float) -> Array:
        """(N, C, OH, OW, KH, KW) windows of `x` padded with `fill`."""
        oh, ow, pt, pb, pl, pr = self.layout(x.shape[2], x.shape[3])
        if pt or pb or pl or pr:
            x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
        win = sliding_window_view(x, (self.kh, self.kw), axis=(2, 3))
        return win[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw]

    def counts(self, h: int, w: int, dtype: np.dtype[Any]) -> Array | int:
        """Number of valid (unpadded) elements per window: TF's SAME AvgPool divisor."""
        if not self.same:
            return self.kh * self.kw
        ones = np.ones((1, 1, h, w), dtype)
        return self.windows(ones, 0.0).sum(axis=(4, 5))

    def scatter(self, taps: Callable[[int, int], Array], shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
        """Sum `taps(a, b)` (N, C, OH, OW) back onto the input positions of window tap (a, b)."""
        n, c, h, w = shape
        oh, ow, pt, pb, pl, pr = self.layout(h, w)
        dx = np.zeros((n, c, h + pt + pb, w + pl + pr), dtype)
        for a in range(self.kh):  # a loop over window taps, not pixels
            for b in range(self.kw):
                dx[:, :, a : a + (oh - 1) * self.sh + 1 : self.sh, b : b + (ow - 1) * self.sw + 1 : self.sw] += taps(a, b)
        return _contig(dx[:, :, pt : pt + h, pl : pl + w])


def _pool_geometry(spec: OpSpec) -> PoolGeometry:
    """TF SAME/VALID pooling (MaxPool, AvgPool) or explicit-pad pooling (MaxPoolV3, AvgPoolV2)."""
    return PadPoolGeometry.of(spec) if spec.type in ("MaxPoolV3", "AvgPoolV2") else PoolGeometry.of(spec)


@kernel("MaxPool", "MaxPoolV3", finite_preserving=True, exact=True)
def _max_pool(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = _pool_geometry(spec)

    def pool(x: Array) -> Array:
        xn = _to_nchw(x, fmt)
        n, c, h, w = xn.shape
        oh, ow, pt, _, pl, _ = geo.layout(h, w)
        rows = [(*_tap_span(oh, h, geo.sh, a - pt), geo.sh) for a in range(geo.kh)]
        cols = [(*_tap_span(ow, w, geo.sw, b - pl), geo.sw) for b in range(geo.kw)]
        taps = [(r, q) for r in rows if r[1] > r[0] for q in cols if q[1] > q[0]]  # the padding is never read
        whole = next((t for t in taps if t[0][:2] == (0, oh) and t[1][:2] == (0, ow)), None)
        if whole is None:  # no tap reads every window: windows of padding alone are -inf
            out = np.full((n, c, oh, ow), -np.inf if xn.dtype.kind == "f" else np.iinfo(xn.dtype).min, xn.dtype)
        else:
            out = _tap_view(xn, *whole).copy()
        for t in taps:  # one np.maximum per window tap, over the outputs it reads (NaN propagates, as max does)
            if t is not whole:
                part = out[:, :, t[0][0] : t[0][1], t[1][0] : t[1][1]]
                np.maximum(part, _tap_view(xn, *t), out=part)
        return _contig(_from_nchw(out, fmt))

    return pool


@kernel("AvgPool", "AvgPoolV2")
def _avg_pool(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = _pool_geometry(spec)

    def pool(x: Array) -> Array:
        xn = _to_nchw(x, fmt)
        total = geo.windows(xn, 0.0).sum(axis=(4, 5))
        return _contig(_from_nchw(total / geo.counts(xn.shape[2], xn.shape[3], xn.dtype), fmt))

    return pool


@dataclass(frozen=True)
class PadPoolGeometry(PoolGeometry):
    """MaxPoolV3/AvgPoolV2 pooling: explicit pads or TF's SAME/VALID, ceil_mode, global pooling."""

    mode: str = "CALCULATED"
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    ceil_mode: bool = False
    exclusive: bool = True

    @classmethod
    def of(cls, spec: OpSpec) -> PadPoolGeometry:
        fmt = spec.attr("data_format")
        exclusive = bool(spec.attr("exclusive")) if spec.type == "AvgPoolV2" else True
        if spec.attr("global_pooling"):  # the window is the whole (static) H x W
            n, c, h, w = _nchw_shape(spec.in_shapes[0], fmt)
            if min(h, w) < 0:
                raise KernelError(f"{spec.type} with global_pooling needs a static H and W, got {spec.in_shapes[0]}")
            return cls(h, w, 1, 1, False, "VALID", exclusive=exclusive)
        k, s, p = spec.attr("ksize"), spec.attr("strides"), tuple(spec.attr("pads"))
        h, w = _spatial(fmt)
        if any(k[i] != 1 or s[i] != 1 for i in range(4) if i not in (h, w)):
            raise KernelError(f"{spec.type} pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 elsewhere")
        return cls(k[h], k[w], s[h], s[w], False, spec.attr("padding_mode"), (p[0], p[1], p[2], p[3]), bool(spec.attr("ceil_mode")), exclusive)

    def layout(self, h: int, w: int) -> tuple[int, int, int, int, int, int]:
        """(OH, OW, pad top, pad bottom, pad left, pad right); bottom/right include the ceil_mode overhang."""
        pt, pb = pool_pads(h, self.kh, self.sh, self.mode, self.pads[0], self.pads[1])
        pl, pr = pool_pads(w, self.kw, self.sw, self.mode, self.pads[2], self.pads[3])
        oh = pool_v2_out(h, self.kh, self.sh, pt, pb, self.ceil_mode)
        ow = pool_v2_out(w, self.kw, self.sw, pl, pr, self.ceil_mode)
        extra_h = max((oh - 1) * self.sh + self.kh - (h + pt + pb), 0)
        extra_w = max((ow - 1) * self.sw + self.kw - (w + pl + pr), 0)
        return oh, ow, pt, pb + extra_h, pl, pr + extra_w

    def counts(self, h: int, w: int, dtype: np.dtype[Any]) -> Array | int:
        """AvgPoolV2's per-window divisor: input elements (`exclusive`) or elements of the padded
        input (the ceil_mode overhang excluded), shaped (1, 1, OH, OW)."""
        if self.exclusive:
            return self.windows(np.ones((1, 1, h, w), dtype), 0.0).sum(axis=(4, 5))
        pt, pb = pool_pads(h, self.kh, self.sh, self.mode, self.pads[0], self.pads[1])
        pl, pr = pool_pads(w, self.kw, self.sw, self.mode, self.pads[2], self.pads[3])
        oh, ow, _, pb_all, _, pr_all = self.layout(h, w)
        inside = np.zeros((1, 1, h + pt + pb_all, w + pl + pr_all), dtype)
        inside[:, :, : h + pt + pb, : w + pl + pr] = 1
        win = sliding_window_view(inside, (self.kh, self.kw), axis=(2, 3))
        return win[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw].sum(axis=(4, 5))


def _nchw_shape(shape: tuple[int, ...], fmt: str) -> tuple[int, int, int, int]:
    n, a, b, c = shape
    return (n, a, b, c) if fmt == "NCHW" else (n, c, a, b)


@kernel("MaxPoolGrad")
def _max_pool_grad(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = PoolGeometry.of(spec)

    def grad(x1: Array, x2: Array, g: Array) -> Array:
        # Each output's gradient goes to the first maximum of its window (row-major), as TF does.
        xn, gn = _to_nchw(x1, fmt), _to_nchw(g, fmt)
        win = geo.windows(xn, -np.inf)
        n, c, oh, ow = win.shape[:4]
        arg = win.reshape(n, c, oh, ow, geo.kh * geo.kw).argmax(axis=-1)
        zero = np.zeros((), gn.dtype)
        dx = geo.scatter(lambda a, b: np.where(arg == a * geo.kw + b, gn, zero), xn.shape, gn.dtype)
        return _contig(_from_nchw(dx, fmt))

    return grad


@kernel("AvgPoolGrad")
def _avg_pool_grad(spec: OpSpec) -> KernelFn:
    fmt = spec.attr("data_format")
    geo = PoolGeometry.of(spec)
    size = tuple(spec.attr("orig_input_shape"))
    nchw = size if fmt == "NCHW" else (size[0], size[3], size[1], size[2])

    def grad(g: Array) -> Array:
        gn = _to_nchw(g, fmt)
        share = gn / geo.counts(nchw[2], nchw[3], gn.dtype)
        return _contig(_from_nchw(geo.scatter(lambda a, b: share, nchw, gn.dtype), fmt))

    return grad


# --------------------------------------------------------------------------------------
# Reductions and softmax
# --------------------------------------------------------------------------------------


@kernel("ReduceSum", propagates=(0,))
def _reduce_sum(spec: OpSpec) -> KernelFn:
    axes, keep = _reduce_axes(spec, len(spec.in_shapes[0])), bool(spec.attr("keep_dims"))
    return lambda x: np.asarray(np.add.reduce(x, axis=axes, keepdims=keep))


@kernel("ReduceMean", propagates=(0,))
def _reduce_mean(spec: OpSpec) -> KernelFn:
    shape = spec.in_shapes[0]
    axes, keep = _reduce_axes(spec, len(shape)), bool(spec.attr("keep_dims"))
    if spec.compute is None:  # integer mean: computed in float64, truncated by the result cast
        return lambda x: np.asarray(np.mean(x, axis=axes, keepdims=keep))
    count = math.prod(shape[a] for a in axes)
    if count <= 0:  # dynamic dimensions: counted at run time
        return lambda x: np.asarray(np.mean(x, axis=axes, keepdims=keep, dtype=x.dtype))
    return lambda x: np.asarray(np.add.reduce(x, axis=axes, keepdims=keep) / count)


@kernel("ReduceMax", finite_preserving=True, exact=True)
def _reduce_max(spec: OpSpec) -> KernelFn:
    axes, keep = _reduce_axes(spec, len(spec.in_shapes[0])), bool(spec.attr("keep_dims"))
    return lambda x: np.asarray(np.maximum.reduce(x, axis=axes, keepdims=keep))


def _softmax_axes(spec: OpSpec) -> tuple[int, ...]:
    rank = len(spec.in_shapes[0])
    return tuple(sorted({a % rank for a in spec.attr("axes")}))


def _softmax(x: Array, axes: tuple[int, ...]) -> Array:
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def _log_softmax(x: Array, axes: tuple[int, ...]) -> Array:
    shifted = x - x.max(axis=axes, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))


@kernel("SoftmaxV2", finite_preserving=True)
def _softmax_v2(spec: OpSpec) -> KernelFn:
    if (rnd := _impl_rounding(spec)) is not None:  # high_performance
        return _fast_softmax(spec, rnd)
    axes = _softmax_axes(spec)
    return lambda x: _softmax(x, axes)


@kernel("LogSoftmaxV2")
def _log_softmax_v2(spec: OpSpec) -> KernelFn:
    axes = _softmax_axes(spec)
    return lambda x: _log_softmax(x, axes)


@kernel("SoftmaxCrossEntropyWithLogits", propagates=(0, 1))
def _softmax_xent(spec: OpSpec) -> KernelFn:
    def xent(features: Array, labels: Array) -> tuple[Array, Array]:
        logp = _log_softmax(features, (1,))
        return -(labels * logp).sum(axis=1), np.exp(logp) - labels

    return xent


@kernel("ArgMaxV2", keeps_dtype=False)
def _argmax(spec: OpSpec) -> KernelFn:
    dim = spec.attr("dimension")
    return lambda x: np.asarray(np.argmax(x, axis=dim))


@kernel("OneHot", finite_preserving=True, exact=True)
def _one_hot(spec: OpSpec) -> KernelFn:
    depth, axis = spec.attr("depth"), spec.attr("axis")
    rank = len(spec.in_shapes[0]) + 1
    axis %= rank
    classes = np.arange(depth)

    def one_hot(x: Array, on: Array, off: Array) -> Array:
        hot = x[..., None] == classes  # out-of-range indices are all off
        y = np.where(hot, _scalar(on), _scalar(off))
        return y if axis == rank - 1 else np.moveaxis(y, -1, axis)

    return one_hot


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


def _bn_view(spec: OpSpec) -> tuple[tuple[int, ...], list[int]]:
    """(reduced axes, broadcast shape of a per-channel vector) of a rank-4 BatchNorm input."""
    axis = _channel_axis(spec.attr("data_format"), 4)
    shape = [1, 1, 1, 1]
    shape[axis] = -1
    return tuple(i for i in range(4) if i != axis), shape


@kernel("BatchNorm")
def _batch_norm(spec: OpSpec) -> KernelFn:
    axes, shape = _bn_view(spec)
    eps = float(spec.attr("epsilon"))
    training = bool(spec.attr("is_training"))

    def bn(x: Array, scale: Array, offset: Array, mean: Array, variance: Array) -> tuple[Array, Array, Array]:
        if training:
            n = math.prod(x.shape[i] for i in axes)
            m = x.mean(axis=axes)
            var = np.square(x - m.reshape(shape)).mean(axis=axes)
            # As TF's FusedBatchNorm: y uses the biased variance, batch_variance is Bessel-corrected.
            out_var = var * (n / max(n - 1, 1))
        else:
            m, var, out_var = mean, variance, variance
        inv = np.reciprocal(np.sqrt(var + eps))
        y = (x - m.reshape(shape)) * (scale * inv).reshape(shape) + offset.reshape(shape)
        return y, m, out_var

    return bn


@kernel("BNInfer")
def _bn_infer(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))
    shape = [1] * len(spec.in_shapes[0])
    shape[1] = -1

    def bn(x: Array, scale: Array, offset: Array, mean: Array, variance: Array) -> Array:
        inv = np.reciprocal(np.sqrt(variance + eps))
        return (x - mean.reshape(shape)) * (scale * inv).reshape(shape) + offset.reshape(shape)

    return bn


_NCHW_AXES = (0, 2, 3)
_NCHW_VEC = (1, -1, 1, 1)


@kernel("BNTrainingReduce")
def _bn_training_reduce(spec: OpSpec) -> KernelFn:
    return lambda x: (x.sum(axis=_NCHW_AXES), np.square(x).sum(axis=_NCHW_AXES))


@kernel("BNTrainingUpdate")
def _bn_training_update(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))
    factor = float(spec.attr("factor"))
    n = math.prod(spec.in_shapes[0][i] for i in _NCHW_AXES)

    def update(x: Array, s: Array, ss: Array, scale: Array, offset: Array, mean: Array, variance: Array):
        # CANN: batch statistics from the sums (biased variance normalises; the running
        # variance is updated with the Bessel-corrected one).
        bm = s / n
        bv = ss / n - bm * bm
        inv = np.reciprocal(np.sqrt(bv + eps))
        y = (x - bm.reshape(_NCHW_VEC)) * (scale * inv).reshape(_NCHW_VEC) + offset.reshape(_NCHW_VEC)
        mean_out = mean * (1 - factor) + bm * factor
        var_out = variance * (1 - factor) + bv * (factor * n / max(n - 1, 1))
        return y, mean_out, var_out, bm, bv

    return update


@kernel("BNTrainingUpdateGrad")
def _bn_training_update_grad(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))

    def grad(dy: Array, x: Array, bm: Array, bv: Array) -> tuple[Array, Array]:
        xhat = (x - bm.reshape(_NCHW_VEC)) * np.reciprocal(np.sqrt(bv + eps)).reshape(_NCHW_VEC)
        return (dy * xhat).sum(axis=_NCHW_AXES), dy.sum(axis=_NCHW_AXES)

    return grad


@kernel("BNTrainingReduceGrad")
def _bn_training_reduce_grad(spec: OpSpec) -> KernelFn:
    eps = float(spec.attr("epsilon"))
    n = math.prod(spec.in_shapes[1][i] for i in _NCHW_AXES)

    def grad(dy: Array, x: Array, dscale: Array, doffset: Array, scale: Array, bm: Array, bv: Array) -> Array:
        inv = np.reciprocal(np.sqrt(bv + eps))
        xhat = (x - bm.reshape(_NCHW_VEC)) * inv.reshape(_NCHW_VEC)
        corr = (doffset.reshape(_NCHW_VEC) + xhat * dscale.reshape(_NCHW_VEC)) / n
        return (scale * inv).reshape(_NCHW_VEC) * (dy - corr)

    return grad


@kernel("LayerNorm")
def _layer_norm(spec: OpSpec) -> KernelFn:
    if (rnd := _impl_rounding(spec)) is not None:  # high_performance
        return _fast_layer_norm(spec, rnd)
    rank = len(spec.in_shapes[0])
    axes = tuple(range(spec.attr("begin_norm_axis") % rank, rank))
    eps = float(spec.attr("epsilon"))

    def ln(x: Array, gamma: Array, beta: Array) -> tuple[Array, Array, Array]:
        m = x.mean(axis=axes, keepdims=True)
        var = np.square(x - m).mean(axis=axes, keepdims=True)
        y = (x - m) * np.reciprocal(np.sqrt(var + eps)) * gamma + beta
        return y, m, var

    return ln


@kernel("LayerNormGrad")
def _layer_norm_grad(spec: OpSpec) -> KernelFn:
    x_shape, var_shape, gamma_shape = spec.in_shapes[1], spec.in_shapes[2], spec.in_shapes[4]
    rank = len(x_shape)
    # The normalised axes are those where the statistics have size 1 (reducing a size-1
    # axis or not is the same); the parameter axes are gamma's trailing ones.
    norm = rank
    while norm > 0 and var_shape[norm - 1] == 1:
        norm -= 1
    axes = tuple(range(norm, rank))
    n = math.prod(x_shape[i] for i in axes)
    batch = tuple(range(rank - len(gamma_shape)))
    # The op has no epsilon attribute: LayerNorm's default (1e-7) unless one is given.
    eps = float(spec.attr("epsilon"))

    def grad(dy: Array, x: Array, variance: Array, mean: Array, gamma: Array) -> tuple[Array, Array, Array]:
        inv = np.reciprocal(np.sqrt(variance + eps))
        xhat = (x - mean) * inv
        g = dy * gamma
        dx = inv * (g - g.sum(axis=axes, keepdims=True) / n - xhat * ((g * xhat).sum(axis=axes, keepdims=True) / n))
        return dx, (dy * xhat).sum(axis=batch), dy.sum(axis=batch)

    return grad


# --------------------------------------------------------------------------------------
# Gradients
# --------------------------------------------------------------------------------------


@kernel("ReluGrad", finite_preserving=True, exact=True)
def _relu_grad(spec: OpSpec) -> KernelFn:
    zero = np.zeros((), spec.compute or spec.in_dtypes[0])
    return lambda g, f: np.where(f > 0, g, zero)


@kernel("LeakyReluGrad")
def _leaky_relu_grad(spec: OpSpec) -> KernelFn:
    slope = float(spec.attr("negative_slope"))
    return lambda g, f: np.where(f > 0, g, g * slope)


@kernel("SigmoidGrad", propagates=(0, 1))
def _sigmoid_grad(spec: OpSpec) -> KernelFn:
    return lambda y, dy: dy * y * (1 - y)


@kernel("TanhGrad", propagates=(0, 1))
def _tanh_grad(spec: OpSpec) -> KernelFn:
    return lambda y, dy: dy * (1 - y * y)


@kernel("GeluGrad")
def _gelu_grad(spec: OpSpec) -> KernelFn:
    def grad(dy: Array, x: Array, y: Array) -> Array:
        x2 = x * x
        t = np.tanh(_GELU_C * (x + _GELU_A * x2 * x))
        return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_GELU_C * (1 + 3 * _GELU_A * x2)))

    return grad


@kernel("SoftmaxGrad", propagates=(0, 1))
def _softmax_grad(spec: OpSpec) -> KernelFn:
    return lambda s, g: (g - (g * s).sum(axis=-1, keepdims=True)) * s


@kernel("BiasAddGrad", propagates=(0,))
def _bias_add_grad(spec: OpSpec) -> KernelFn:
    rank = len(spec.in_shapes[0])
    channel = _channel_axis(spec.attr("data_format"), rank)
    axes = tuple(i for i in range(rank) if i != channel)
    return lambda x: x.sum(axis=axes)


# --------------------------------------------------------------------------------------
# Optimizers (functional: they return the updated state)
# --------------------------------------------------------------------------------------


@kernel("ApplyGradientDescent", propagates=(0, 1, 2))
def _apply_gradient_descent(spec: OpSpec) -> KernelFn:
    if spec.in_shapes[1] == ():
        return lambda var, alpha, delta: var - alpha * delta
    return lambda var, alpha, delta: var - _scalar(alpha) * delta


@kernel("ApplyMomentumD", propagates=(0, 1, 2, 3, 4))
def _apply_momentum(spec: OpSpec) -> KernelFn:
    nesterov = bool(spec.attr("use_nesterov"))

    def momentum(var: Array, accum: Array, lr: Array, grad: Array, mom: Array) -> tuple[Array, Array]:
        lr, mom = _scalar(lr), _scalar(mom)
        accum = accum * mom + grad
        step = grad + mom * accum if nesterov else accum
        return var - lr * step, accum

    return momentum


@kernel("ApplyAdamD")
def _apply_adam(spec: OpSpec) -> KernelFn:
    nesterov = bool(spec.attr("use_nesterov"))

    def adam(var: Array, m: Array, v: Array, b1p: Array, b2p: Array, lr: Array, b1: Array, b2: Array, eps: Array, grad: Array):
        b1p, b2p, lr, b1, b2, eps = (_scalar(t) for t in (b1p, b2p, lr, b1, b2, eps))
        m = m + (grad - m) * (1 - b1)
        v = v + (grad * grad - v) * (1 - b2)
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        direction = m * b1 + grad * (1 - b1) if nesterov else m
        return var - lr_t * direction / (np.sqrt(v) + eps), m, v

    return adam


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


# --------------------------------------------------------------------------------------
# In-place variants (buffer reuse, for the executor's memory planning)
# --------------------------------------------------------------------------------------
# CANN's optimizer ops update their state operands in place (their outputs are ref
# outputs); a select of a full-size operand can overwrite it. When the executor finds that
# such an operand dies at the op (and its buffer is the step's own or a donated argument),
# it runs the variant below, which writes the results into those operands' arrays and
# returns them: the same numbers as the functional kernel, bit for bit (the same numpy
# operations in the same order, only with `out=`), and no new buffer.


def _plain(spec: OpSpec) -> bool:
    """Every float operand and result is held in the compute dtype (no widening, no rounding)."""
    cd = spec.compute
    return cd is not None and all(spec.stored(d) == d == cd for d in (*spec.in_dtypes, *spec.out_dtypes) if d in FLOATS)


def _in_place_gradient_descent(spec: OpSpec) -> KernelFn | None:
    def sgd(var: Array, alpha: Array, delta: Array) -> Array:
        return np.subtract(var, _scalar(alpha) * delta, out=var)

    return sgd if spec.in_shapes[0] == spec.in_shapes[2] else None


def _in_place_momentum(spec: OpSpec) -> KernelFn | None:
    nesterov = bool(spec.attr("use_nesterov"))

    def momentum(var: Array, accum: Array, lr: Array, grad: Array, mom: Array) -> tuple[Array, Array]:
        lr, mom = _scalar(lr), _scalar(mom)
        np.multiply(accum, mom, out=accum)
        np.add(accum, grad, out=accum)
        step = grad + mom * accum if nesterov else accum
        return np.subtract(var, lr * step, out=var), accum

    return momentum


def _in_place_adam(spec: OpSpec) -> KernelFn | None:
    nesterov = bool(spec.attr("use_nesterov"))

    def adam(var: Array, m: Array, v: Array, b1p: Array, b2p: Array, lr: Array, b1: Array, b2: Array, eps: Array, grad: Array):
        b1p, b2p, lr, b1, b2, eps = (_scalar(t) for t in (b1p, b2p, lr, b1, b2, eps))
        np.add(m, (grad - m) * (1 - b1), out=m)
        np.add(v, (grad * grad - v) * (1 - b2), out=v)
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        direction = m * b1 + grad * (1 - b1) if nesterov else m
        return np.subtract(var, lr_t * direction / (np.sqrt(v) + eps), out=var), m, v

    return adam


def _in_place_select_v2(spec: OpSpec) -> KernelFn | None:
    def select(c: Array, x1: Array, x2: Array) -> Array:  # np.where(c, x1, x2), written into x2
        np.copyto(x2, x1, where=c)
        return x2

    def select_on_flag(c: Array, x1: Array, x2: Array) -> Array:  # one flag: x2 is kept or overwritten whole
        if c:
            np.copyto(x2, x1)
        return x2

    if spec.in_shapes[2] != spec.out_shapes[0] or spec.in_dtypes[1] != spec.in_dtypes[2]:
        return None
    return select_on_flag if spec.in_shapes[0] == () else select


def _in_place_relu(spec: OpSpec) -> KernelFn | None:
    fast = compiled("relu_in_place", spec.in_shapes[0]) if _compiled_relu(spec) is not None else None
    if fast is None:
        return None

    zero = np.zeros((), F32)

    def relu(x: Array) -> Array:
        if x.flags.c_contiguous:
            fast(x.reshape(-1))  # a view
            return x
        return np.maximum(x, zero, out=x)

    return relu


def _in_place_binary(ufunc: np.ufunc) -> Callable[[OpSpec], KernelFn | None]:
    def build(spec: OpSpec) -> KernelFn | None:
        return lambda a, b: ufunc(a, b, out=a)

    return build


IN_PLACE: dict[str, tuple[tuple[int, ...], Callable[[OpSpec], KernelFn | None]]] = {
    "Add": ((0,), _in_place_binary(np.add)),
    "Sub": ((0,), _in_place_binary(np.subtract)),
    "Mul": ((0,), _in_place_binary(np.multiply)),
    "RealDiv": ((0,), _in_place_binary(np.true_divide)),
    "ApplyGradientDescent": ((0,), _in_place_gradient_descent),
    "ApplyMomentumD": ((0, 1), _in_place_momentum),
    "ApplyAdamD": ((0, 1, 2), _in_place_adam),
    "SelectV2": ((2,), _in_place_select_v2),
    "Relu": ((0,), _in_place_relu),
}
"""Op type -> (for each result, the operand whose buffer it takes; the in-place builder)."""


def make_in_place_kernel(spec: OpSpec) -> tuple[tuple[int, ...], KernelFn] | None:
    """(the operand each result overwrites, the kernel) when `spec` has an in-place variant
    that computes what :func:`make_kernel`'s kernel does (plain dtypes, matching shapes)."""
    entry = IN_PLACE.get(spec.type)
    if entry is None or not _plain(spec) or any(-1 in s or () == s for s in spec.out_shapes):
        return None
    targets, build = entry
    if any(spec.in_shapes[j] != spec.out_shapes[i] or spec.in_dtypes[j] != spec.out_dtypes[i] for i, j in enumerate(targets)):
        return None
    fn = build(spec)
    return None if fn is None else (targets, fn)
