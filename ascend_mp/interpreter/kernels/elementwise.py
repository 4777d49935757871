"""Elementwise kernels: arithmetic, comparisons, logic, selects and activations (BiasAdd
included), with the high_performance bodies of the activations that have one and the in-place
variants of Add, Sub, Mul, RealDiv, SelectV2 and Relu."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ascend_mp.interpreter.compiled import compiled, erf_f32
from ascend_mp.interpreter.geometry import channel_axis
from ascend_mp.interpreter.kernels.base import KernelFn, impl_mode, impl_rounding, in_place, kernel, simple
from ascend_mp.interpreter.numerics import F32, F64, Array
from ascend_mp.interpreter.spec import OpSpec


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


def _fast_exp(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    # exp(x) = 2^n * 2^f with t = x*log2(e) rounded, n = floor(t), f = t - n in [0, 1)
    log2e = rnd(np.float32(math.log2(math.e)))  # pyright: ignore[reportArgumentType]  # rnd rounds numpy scalars too; the stubs don't count np.float32 as an ndarray

    def exp(x: Array) -> Array:
        t = rnd(x * log2e)
        n = np.clip(np.floor(t), -64, 64)
        return np.ldexp(rnd(np.exp2(rnd(t - n))), n.astype(np.int32))

    return exp


def _fast_log(spec: OpSpec, rnd: Callable[[Array], Array]) -> KernelFn:
    ln2 = rnd(np.float32(math.log(2.0)))  # log(x) = log2(x) * ln(2)  # pyright: ignore[reportArgumentType]  # rnd rounds numpy scalars too; the stubs don't count np.float32 as an ndarray
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
    c, a = rnd(np.float32(GELU_C)), rnd(np.float32(GELU_A))  # pyright: ignore[reportArgumentType]  # rnd rounds numpy scalars too; the stubs don't count np.float32 as an ndarray

    def gelu(x: Array) -> Array:
        cube = rnd(rnd(x * x) * x)
        t = rnd(np.tanh(rnd(c * rnd(x + rnd(a * cube)))))
        return rnd(0.5 * x) * rnd(1 + t)

    return gelu


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
kernel("Exp")(impl_mode(_fast_exp, simple(np.exp)))
kernel("Log", propagates=(0,))(impl_mode(_fast_log, simple(np.log)))
kernel("Sqrt", propagates=(0,))(impl_mode(_fast_sqrt, simple(np.sqrt)))
kernel("Floor", finite_preserving=True, propagates=(0,), exact=True)(simple(np.floor))  # floor of a float16 is one
kernel("Tanh", finite_preserving=True)(impl_mode(_fast_tanh, simple(np.tanh)))


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
    return compiled("relu", spec.in_shapes[0]) if spec.compute == F32 and spec.in_shapes else None  # pyright: ignore[reportReturnType]  # `compiled` is typed as any callable; for "relu" it is a numba ufunc


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
    if (rnd := impl_rounding(spec)) is not None:  # high_performance
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


_ERF_EXACT = np.frompyfunc(math.erf, 1, 1)


def _erf_exact(x: Array) -> Array:
    """libm's erf element by element (the float64 reference on tensors too small to load the compiled ufunc)."""
    return _ERF_EXACT(x).astype(x.dtype)  # pyright: ignore[reportAttributeAccessIssue]  # np.frompyfunc returns an object array for an array input


@kernel("Erf", finite_preserving=True)
def _erf(spec: OpSpec) -> KernelFn:
    """float32 (and the float16/bfloat16 values held in it): the rational approximation of
    :data:`~ascend_mp.interpreter.compiled.ERF_NUMERATOR`; float64 (the reference): libm's erf."""
    shape = spec.in_shapes[0] if spec.in_shapes else None
    if spec.compute == F64:
        return compiled("erf64", shape) or _erf_exact
    return compiled("erf", shape) or erf_f32


GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


@kernel("Gelu")
def _gelu(spec: OpSpec) -> KernelFn:
    if (rnd := impl_rounding(spec)) is not None:  # high_performance
        return _fast_gelu(spec, rnd)
    # The tanh approximation (CANN's Gelu): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    return lambda x: 0.5 * x * (1 + np.tanh(GELU_C * (x + GELU_A * (x * x * x))))


@kernel("BiasAdd", propagates=(0, 1))
def _bias_add(spec: OpSpec) -> KernelFn:
    rank = len(spec.in_shapes[0])
    axis = channel_axis(spec.attr("data_format"), rank)
    if axis == rank - 1:
        return np.add
    shape = [1] * rank
    shape[axis] = -1
    return lambda x, b: x + b.reshape(shape)


@in_place("SelectV2", (2,))
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


@in_place("Relu", (0,))
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


in_place("Add", (0,))(_in_place_binary(np.add))
in_place("Sub", (0,))(_in_place_binary(np.subtract))
in_place("Mul", (0,))(_in_place_binary(np.multiply))
in_place("RealDiv", (0,))(_in_place_binary(np.true_divide))
