"""Every kernel of ascend_mp.interpreter.kernels against an independent float64 reference.

The references are written here from the ops' definitions (numpy in float64, naive
loops for convolution and pooling); none calls a kernel. A result in dtype D passes
when it is within one ulp of the float64 reference rounded to D (the one rounding
step), or within the error float32 arithmetic may add (k * 2^-23 * scale, the scale
chosen per op), so the tolerances follow from the dtypes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ascend_mp.dialects.ascend import OPS, op_type
from ascend_mp.interpreter.kernels import KERNELS, FloatStatus, KernelError, OpSpec, apply, make_kernel
from ascend_mp.interpreter.numerics import round_f16

F16, BF16, F32, F64 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)
EPS32 = 2.0**-23
EXAMPLES = settings(max_examples=30, deadline=None)

# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def run(
    op: str,
    *inputs: Any,
    out: Any = None,
    attrs: dict[str, Any] | None = None,
    out_shapes: Any = (),
    reference: bool = False,
) -> Any:
    """Build and run one kernel; `out` is the result dtype or a tuple of them (default: the first input's)."""
    arrays = [np.asarray(x) for x in inputs]
    outs = (
        tuple(np.dtype(d) for d in out)
        if isinstance(out, tuple)
        else (np.dtype(out if out is not None else arrays[0].dtype),)
    )
    spec = OpSpec(
        type=op,
        in_dtypes=tuple(a.dtype for a in arrays),
        out_dtypes=outs,
        in_shapes=tuple(a.shape for a in arrays),
        out_shapes=tuple(out_shapes),
        attrs=attrs or {},
        reference=reference,
        status=FloatStatus(),
    )
    result = apply(spec, *arrays)
    results = result if isinstance(result, tuple) else (result,)
    assert len(results) == len(outs)
    for r, d in zip(results, outs):
        assert isinstance(r, np.ndarray), f"{op} returned {type(r)}"
        assert r.dtype == d, f"{op} returned {r.dtype}, expected {d}"
    return result


def ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns as integers ordered like the floats (adjacent floats differ by 1)."""
    bits = a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize]).astype(np.int64)
    sign = 1 << (8 * a.dtype.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


FORMATS = {F16: (11, -14, 65504.0), BF16: (8, -126, float(ml_dtypes.finfo(BF16).max))}
"""precision bits, minimum normal exponent, largest finite value."""


def rne(x: Any, dtype: np.dtype) -> np.ndarray:
    """Round float64 values to `dtype` (nearest, ties to even, overflow to inf), written from
    the format's definition rather than through numpy's or ml_dtypes' conversions."""
    x = np.asarray(x, np.float64)
    if dtype not in FORMATS:
        return x.astype(dtype)
    p, emin, top = FORMATS[dtype]
    finite = np.isfinite(x) & (x != 0)
    _, e = np.frexp(np.where(finite, x, 1.0))  # |x| = m 2^e, m in [0.5, 1)
    quantum = np.ldexp(1.0, np.maximum(e - 1, emin) - (p - 1))
    r = np.where(finite, np.round(np.where(finite, x, 0.0) / quantum) * quantum, x)
    r = np.where(np.abs(r) > top, np.copysign(np.inf, x), r)
    return r.astype(dtype)


def assert_close(ours: np.ndarray, ref: np.ndarray, scale: Any = None, k: float = 8, ulps: int = 1) -> None:
    """`ours` (in its dtype) against the float64 `ref`: NaN where the reference is NaN, and each
    element within `ulps` of the correctly rounded reference or within k * 2^-23 * scale."""
    dtype = ours.dtype
    ref = np.broadcast_to(np.asarray(ref, np.float64), ours.shape)
    with np.errstate(all="ignore"):
        rounded = rne(ref, dtype)
    nan_ours, nan_ref = np.isnan(ours.astype(np.float64)), np.isnan(rounded.astype(np.float64))
    assert (nan_ours == nan_ref).all(), f"NaN pattern differs:\nours {ours}\nref  {ref}"
    ok = nan_ours | (np.abs(ordered(ours) - ordered(rounded)) <= ulps)
    if scale is not None:
        with np.errstate(all="ignore"):
            diff = np.abs(ours.astype(np.float64) - ref)
        ok |= diff <= k * EPS32 * np.broadcast_to(scale, ours.shape)
    bad = np.argwhere(~ok)
    assert bad.size == 0, (
        f"{len(bad)} elements off, first at {tuple(bad[0])}: ours {ours[tuple(bad[0])]!r}, ref {ref[tuple(bad[0])]!r}"
    )


def f64(a: Any) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


SPECIAL_BITS = {
    # zeros, smallest subnormals (6e-8), largest subnormal, smallest normal, +-1, max (65504), inf, NaN
    F16: [
        0x0000,
        0x8000,
        0x0001,
        0x8001,
        0x03FF,
        0x0400,
        0x3C00,
        0xBC00,
        0x7BFF,
        0xFBFF,
        0x7BFE,
        0x7C00,
        0xFC00,
        0x7E00,
    ],
    BF16: [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0],
}


def arrays_of(dtype: np.dtype, shape: Any, bound: float | None = None) -> st.SearchStrategy[np.ndarray]:
    """Arrays of `dtype`. Without `bound`: any value, 16-bit floats drawn as bit patterns mixed
    with the limits (65504, subnormals such as 6e-8, inf, NaN). With `bound`: finite values in
    [-bound, bound] (drawn as float32 and rounded to `dtype`)."""
    if bound is not None:
        values = hnp.arrays(
            np.float32, shape, elements=st.floats(-float(np.float32(bound)), float(np.float32(bound)), width=32)
        )
        return values if dtype == F32 else values.map(lambda a: a.astype(dtype))
    if dtype in SPECIAL_BITS:
        bits = st.one_of(st.integers(0, 0xFFFF), st.sampled_from(SPECIAL_BITS[dtype]))
        return hnp.arrays(np.uint16, shape, elements=bits).map(lambda a: a.view(dtype))
    return hnp.arrays(dtype, shape, elements=st.floats(width=32))


SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)
LOW_FLOATS = [F16, BF16, F32]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------


def test_every_dialect_op_has_a_kernel() -> None:
    missing = [op_type(op) for op in OPS if op.name.removeprefix("ascend.") not in KERNELS]
    assert not missing, f"ops without a kernel: {missing}"
    extra = set(KERNELS) - {op.name.removeprefix("ascend.") for op in OPS}
    assert not extra, f"kernels for ops the dialect does not have: {extra}"


def test_unknown_op_type_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match="no kernel for op type 'Bogus'"):
        make_kernel(OpSpec("Bogus", (F32,), (F32,)))


def test_missing_attribute_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match="Transpose needs the attribute 'perm'"):
        make_kernel(OpSpec("Transpose", (F32,), (F32,), ((2, 3),), ((3, 2),)))


def test_pooling_over_channels_is_rejected() -> None:
    with pytest.raises(KernelError, match="pools only over H and W"):
        make_kernel(
            OpSpec("MaxPool", (F32,), (F32,), ((1, 2, 4, 4),), (), {"ksize": (1, 2, 2, 2), "strides": (1, 1, 2, 2)})
        )


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------

GELU_C, GELU_A = math.sqrt(2 / math.pi), 0.044715


def gelu64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + GELU_A * x**3)))


UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray, np.ndarray], Any]]] = {
    # op: (float64 reference, scale of the float32 compute error)
    "Neg": (lambda x: -x, lambda x, r: 0),
    "Relu": (lambda x: np.where(np.isnan(x) | (x > 0), x, 0.0), lambda x, r: 0),
    "Square": (lambda x: x * x, lambda x, r: np.abs(r)),
    "Exp": (np.exp, lambda x, r: np.abs(r) * (1 + np.abs(x))),
    "Log": (np.log, lambda x, r: 1 + np.abs(r)),
    "Sqrt": (np.sqrt, lambda x, r: np.abs(r)),
    "Rsqrt": (lambda x: 1 / np.sqrt(x), lambda x, r: np.abs(r)),
    "Floor": (np.floor, lambda x, r: 0),
    "Tanh": (np.tanh, lambda x, r: 1),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x, r: np.abs(r)),
    "Gelu": (gelu64, lambda x, r: 1 + np.abs(x) ** 2),
}


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@pytest.mark.parametrize("op", sorted(UNARY))
@EXAMPLES
@given(data=st.data())
def test_unary(op: str, dtype: np.dtype, data: st.DataObject) -> None:
    x = data.draw(arrays_of(dtype, SHAPES))
    ref_fn, scale = UNARY[op]
    with np.errstate(all="ignore"):
        ref = ref_fn(f64(x))
        s = scale(f64(x), ref)
    assert_close(run(op, x), ref, scale=s, ulps=1 if dtype != F32 else 2)


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@EXAMPLES
@given(data=st.data(), slope=st.sampled_from([0.0, 0.01, 0.2, 1.5]))
def test_leaky_relu(dtype: np.dtype, data: st.DataObject, slope: float) -> None:
    x = data.draw(arrays_of(dtype, SHAPES))
    s32 = float(np.float32(slope))  # the attribute is an f32
    with np.errstate(all="ignore"):
        ref = np.where(f64(x) > 0, f64(x), f64(x) * s32)
    assert_close(run("LeakyRelu", x, attrs={"negative_slope": s32}), ref, scale=np.abs(ref))


def test_relu_keeps_nan_and_zeroes_negative_infinity() -> None:
    y = run("Relu", np.array([np.nan, -np.inf, np.inf, -0.0, 2.5], np.float16))
    assert np.isnan(y[0]) and y[1] == 0 and y[2] == np.inf and y[4] == 2.5


BINARY: dict[
    str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], Callable[[np.ndarray, np.ndarray, np.ndarray], Any]]
] = {
    "Add": (np.add, lambda a, b, r: 0),
    "Sub": (np.subtract, lambda a, b, r: 0),
    "Mul": (np.multiply, lambda a, b, r: 0),
    "RealDiv": (np.divide, lambda a, b, r: np.abs(r)),
    "Maximum": (np.maximum, lambda a, b, r: 0),
    "Minimum": (np.minimum, lambda a, b, r: 0),
    "Pow": (np.power, lambda a, b, r: np.abs(r) * (1 + np.abs(b * np.log(np.abs(a))))),
}


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
@EXAMPLES
@given(data=st.data())
def test_binary_broadcasting(op: str, dtype: np.dtype, data: st.DataObject) -> None:
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    a = data.draw(arrays_of(dtype, shapes.input_shapes[0]))
    b = data.draw(arrays_of(dtype, shapes.input_shapes[1]))
    ref_fn, scale = BINARY[op]
    with np.errstate(all="ignore"):
        ref = ref_fn(f64(a), f64(b))
        s = scale(f64(a), f64(b), ref)
    y = run(op, a, b)
    assert y.shape == shapes.result_shape
    assert_close(y, ref, scale=s, ulps=1 if dtype != F32 else 2)


@pytest.mark.parametrize("dtype", [*LOW_FLOATS, np.dtype(np.int32)], ids=str)
@EXAMPLES
@given(data=st.data())
def test_greater(dtype: np.dtype, data: st.DataObject) -> None:
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    if dtype.kind == "i":
        a, b = (data.draw(hnp.arrays(dtype, s, elements=st.integers(-3, 3))) for s in shapes.input_shapes)
    else:
        a, b = (data.draw(arrays_of(dtype, s)) for s in shapes.input_shapes)
    y = run("Greater", a, b, out=np.bool_)
    ref = np.empty(shapes.result_shape, np.bool_)
    for index in np.ndindex(*shapes.result_shape):  # element by element, in float64 (NaN compares false)
        ia = tuple(i if n > 1 else 0 for i, n in zip(index[len(index) - a.ndim :], a.shape))
        ib = tuple(i if n > 1 else 0 for i, n in zip(index[len(index) - b.ndim :], b.shape))
        ref[index] = float(a[ia]) > float(b[ib])
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("dtype", [*LOW_FLOATS, np.dtype(np.int32)], ids=str)
@EXAMPLES
@given(data=st.data(), scalar=st.booleans())
def test_select_is_bit_exact(dtype: np.dtype, data: st.DataObject, scalar: bool) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    if dtype.kind == "i":
        x1, x2 = (data.draw(hnp.arrays(dtype, shape)) for _ in range(2))
    else:  # any bit pattern, inf and NaN included: only the chosen operand reaches y
        x1, x2 = (data.draw(arrays_of(dtype, shape)) for _ in range(2))
    cond = data.draw(hnp.arrays(np.bool_, () if scalar else shape))
    y = run("Select", cond, x1, x2, out=dtype, out_shapes=[shape])
    raw = {1: np.uint8, 2: np.uint16, 4: np.uint32}[dtype.itemsize]
    want = [
        int(p if bool(cond if scalar else c) else q)
        for c, p, q in zip(np.broadcast_to(cond, shape).reshape(-1), x1.reshape(-1).view(raw), x2.reshape(-1).view(raw))
    ]
    assert y.shape == shape and y.reshape(-1).view(raw).tolist() == want


def test_select_does_not_alias_its_operands() -> None:
    x1, x2 = np.ones(3, F32), np.zeros(3, F32)
    y = run("Select", np.array(True), x1, x2, out=F32, out_shapes=[(3,)])
    assert y is not x1 and not np.shares_memory(y, x1)


def test_fp16_overflow_is_inf_without_exception() -> None:
    a = np.array([65504.0, -65504.0, 60000.0], np.float16)
    y = run("Add", a, a)
    assert y.tolist() == [np.inf, -np.inf, np.inf]
    assert run("Mul", np.array([300.0], np.float16), np.array([300.0], np.float16))[0] == np.inf
    # 65519 rounds down to 65504, 65520 is the first value that rounds to inf
    near = run("Add", np.array([65504.0, 65504.0], np.float16), np.array([15.0, 16.0], np.float16))
    assert near.tolist() == [65504.0, np.inf]


def test_fp16_subnormals_survive_float32_compute() -> None:
    tiny = np.array([2.0**-24, 3 * 2.0**-24, -(2.0**-24)], np.float16)
    assert run("Add", tiny, tiny).tolist() == [2.0**-23, 6 * 2.0**-24, -(2.0**-23)]
    # half of the smallest subnormal ties to even: 0
    assert run("Mul", tiny, np.array([0.5, 0.5, 0.5], np.float16)).tolist() == [0.0, 2 * 2.0**-24, -0.0]


def test_integer_elementwise_ops_do_not_raise() -> None:
    a, b = np.array([7, -7, 3], np.int32), np.array([2, 2, 0], np.int32)
    assert run("Add", a, b).tolist() == [9, -5, 3]
    assert run("RealDiv", a, b)[:2].tolist() == [3, -3]  # truncates toward zero
    assert run("Pow", a, np.array([2, -1, 0], np.int32)).tolist() == [49, 0, 1]


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(data=st.data())
def test_bias_add(fmt: str, dtype: np.dtype, data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=4, max_side=4))
    x = data.draw(arrays_of(dtype, shape))
    channel = 1 if fmt == "NCHW" else len(shape) - 1
    b = data.draw(arrays_of(dtype, (shape[channel],)))
    view = [1] * len(shape)
    view[channel] = -1
    with np.errstate(all="ignore"):
        ref = f64(x) + f64(b).reshape(view)
    assert_close(run("BiasAdd", x, b, attrs={"data_format": fmt}), ref)


# --------------------------------------------------------------------------------------
# Cube: matrix products
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_dtype,out_dtype", [(F16, F16), (F16, F32), (F32, F32), (BF16, BF16), (BF16, F32)], ids=lambda d: str(d)
)
@EXAMPLES
@given(
    data=st.data(),
    m=st.integers(1, 5),
    k=st.integers(1, 6),
    n=st.integers(1, 5),
    ta=st.booleans(),
    tb=st.booleans(),
    bias=st.booleans(),
)
def test_matmul(
    in_dtype: np.dtype, out_dtype: np.dtype, data: st.DataObject, m: int, k: int, n: int, ta: bool, tb: bool, bias: bool
) -> None:
    # fp16 products never overflow the fp32 accumulator; wider inputs are kept below that
    bound = None if in_dtype == F16 else 2.0**50
    a = data.draw(arrays_of(in_dtype, (k, m) if ta else (m, k), bound))
    b = data.draw(arrays_of(in_dtype, (n, k) if tb else (k, n), bound))
    a64, b64 = f64(a), f64(b)
    a64, b64 = (a64.T if ta else a64), (b64.T if tb else b64)
    with np.errstate(all="ignore"):
        ref = a64 @ b64
        scale = np.abs(a64) @ np.abs(b64)
    inputs = [a, b]
    if bias:
        c = data.draw(arrays_of(in_dtype, (n,), bound))
        with np.errstate(all="ignore"):
            ref, scale = ref + f64(c), scale + np.abs(f64(c))
        inputs.append(c)
    for op in ("MatMul", "MatMulV2"):
        y = run(op, *inputs, out=out_dtype, attrs={"transpose_x1": ta, "transpose_x2": tb})
        assert y.shape == (m, n)
        assert_close(y, ref, scale=scale, k=k + 2)


def test_matmul_accumulates_in_fp32_not_fp16() -> None:
    # 4096 ones + 1: an fp16 accumulator would stop at 2048; fp32 accumulation is exact.
    a = np.ones((1, 4097), np.float16)
    b = np.ones((4097, 1), np.float16)
    assert run("MatMulV2", a, b, out=F32)[0, 0] == 4097.0
    assert run("MatMulV2", a, b, out=F16)[0, 0] == 4096.0  # 4097 rounds to even in fp16


def test_matmul_fp16_overflow_gives_inf() -> None:
    a = np.full((2, 4), 200.0, np.float16)
    y = run("MatMulV2", a, a.T.copy(), out=F16)
    assert np.isinf(y).all()
    assert (run("MatMulV2", a, a.T.copy(), out=F32) == 160000.0).all()


def test_int8_matmul_accumulates_in_int32() -> None:
    a = np.full((2, 64), 127, np.int8)
    assert (run("MatMulV2", a, a.T.copy(), out=np.int32) == 64 * 127 * 127).all()


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(
    data=st.data(),
    adj=st.tuples(st.booleans(), st.booleans()),
    batch=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=2, max_side=3),
)
def test_batch_matmul(dtype: np.dtype, data: st.DataObject, adj: tuple[bool, bool], batch: Any) -> None:
    m, k, n = data.draw(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)))
    sa, sb = batch.input_shapes
    a = data.draw(arrays_of(dtype, (*sa, *((k, m) if adj[0] else (m, k))), 100))
    b = data.draw(arrays_of(dtype, (*sb, *((n, k) if adj[1] else (k, n))), 100))
    a64 = np.swapaxes(f64(a), -1, -2) if adj[0] else f64(a)
    b64 = np.swapaxes(f64(b), -1, -2) if adj[1] else f64(b)
    y = run("BatchMatMul", a, b, attrs={"adj_x1": adj[0], "adj_x2": adj[1]})
    assert y.shape == (*batch.result_shape, m, n)
    with np.errstate(all="ignore"):
        assert_close(y, a64 @ b64, scale=np.abs(a64) @ np.abs(b64), k=k + 2)


# --------------------------------------------------------------------------------------
# Cube: convolutions (against naive loops)
# --------------------------------------------------------------------------------------


def naive_conv(
    x: np.ndarray, w: np.ndarray, strides: tuple[int, int], pads: tuple[int, ...], dil: tuple[int, int], groups: int
) -> np.ndarray:
    """Direct NCHW / OIHW convolution with loops over every output element (float64)."""
    n_, c_, h_, w_ = x.shape
    o_, i_, kh_, kw_ = w.shape
    (sh, sw), (dh, dw), (pt, pb, pl, pr) = strides, dil, pads
    oh_ = (h_ + pt + pb - dh * (kh_ - 1) - 1) // sh + 1
    ow_ = (w_ + pl + pr - dw * (kw_ - 1) - 1) // sw + 1
    y = np.zeros((n_, o_, oh_, ow_))
    per_group = o_ // groups
    for n, o, oh, ow in itertools.product(range(n_), range(o_), range(oh_), range(ow_)):
        g = o // per_group
        acc = 0.0
        for i, a, b in itertools.product(range(i_), range(kh_), range(kw_)):
            h, v = oh * sh + a * dh - pt, ow * sw + b * dw - pl
            if 0 <= h < h_ and 0 <= v < w_:
                acc += x[n, g * i_ + i, h, v] * w[o, i, a, b]
        y[n, o, oh, ow] = acc
    return y


@st.composite
def conv_cases(draw: st.DrawFn, depthwise: bool = False) -> dict[str, Any]:
    groups = 1 if depthwise else draw(st.sampled_from([1, 1, 2]))
    c = draw(st.integers(1, 3)) * groups
    o = draw(st.integers(1, 2)) * groups
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = tuple(draw(st.lists(st.integers(0, 2), min_size=4, max_size=4)))
    h = draw(st.integers(dh * (kh - 1) + 1, 6))
    w = draw(st.integers(dw * (kw - 1) + 1, 6))
    n = draw(st.integers(1, 2))
    return {
        "n": n,
        "c": c,
        "o": o,
        "h": h,
        "w": w,
        "k": (kh, kw),
        "s": (sh, sw),
        "d": (dh, dw),
        "pads": pads,
        "groups": groups,
        "fmt": draw(st.sampled_from(["NCHW", "NHWC"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def conv_attrs(case: dict[str, Any]) -> dict[str, Any]:
    (sh, sw), (dh, dw) = case["s"], case["d"]
    nchw = case["fmt"] == "NCHW"
    return {
        "strides": (1, 1, sh, sw) if nchw else (1, sh, sw, 1),
        "dilations": (1, 1, dh, dw) if nchw else (1, dh, dw, 1),
        "pads": case["pads"],
        "groups": case["groups"],
        "data_format": case["fmt"],
    }


def to_fmt(x: np.ndarray, fmt: str) -> np.ndarray:
    return np.ascontiguousarray(x if fmt == "NCHW" else x.transpose(0, 2, 3, 1))


def filter_to_fmt(w: np.ndarray, fmt: str) -> np.ndarray:
    return np.ascontiguousarray(w if fmt == "NCHW" else w.transpose(2, 3, 1, 0))


@pytest.mark.parametrize("dtype,out", [(F16, F16), (F16, F32), (F32, F32)], ids=str)
@EXAMPLES
@given(case=conv_cases(), bias=st.booleans())
def test_conv2d_matches_naive_loops(dtype: np.dtype, out: np.dtype, case: dict[str, Any], bias: bool) -> None:
    r = rng(case["seed"])
    x = r.standard_normal((case["n"], case["c"], case["h"], case["w"])).astype(dtype)
    w = r.standard_normal((case["o"], case["c"] // case["groups"], *case["k"])).astype(dtype)
    ref = naive_conv(f64(x), f64(w), case["s"], case["pads"], case["d"], case["groups"])
    scale = naive_conv(np.abs(f64(x)), np.abs(f64(w)), case["s"], case["pads"], case["d"], case["groups"])
    inputs = [to_fmt(x, case["fmt"]), filter_to_fmt(w, case["fmt"])]
    if bias:
        b = r.standard_normal(case["o"]).astype(dtype)
        ref, scale = ref + f64(b).reshape(1, -1, 1, 1), scale + np.abs(f64(b)).reshape(1, -1, 1, 1)
        inputs.append(b)
    y = run("Conv2D", *inputs, out=out, attrs=conv_attrs(case))
    assert_close(y, to_fmt(ref, case["fmt"]), scale=to_fmt(scale, case["fmt"]), k=64)
    y64 = run("Conv2D", *[f64(a) for a in inputs], out=F64, attrs=conv_attrs(case), reference=True)
    np.testing.assert_allclose(y64, to_fmt(ref, case["fmt"]), rtol=1e-12, atol=1e-12)


@EXAMPLES
@given(case=conv_cases(depthwise=True), m=st.integers(1, 2))
def test_depthwise_conv2d_matches_naive_loops(case: dict[str, Any], m: int) -> None:
    r = rng(case["seed"])
    c, (kh, kw) = case["c"], case["k"]
    x = r.standard_normal((case["n"], c, case["h"], case["w"])).astype(F16)
    f = r.standard_normal((kh, kw, c, m)).astype(F16)
    # depthwise = grouped conv with C groups; output channel c*M + m uses filter [:, :, c, m]
    w_oihw = f64(f).transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
    ref = naive_conv(f64(x), w_oihw, case["s"], case["pads"], case["d"], c)
    scale = naive_conv(np.abs(f64(x)), np.abs(w_oihw), case["s"], case["pads"], case["d"], c)
    attrs = conv_attrs(case) | {"groups": 1}
    y = run("DepthwiseConv2D", to_fmt(x, case["fmt"]), f, attrs=attrs)
    assert_close(y, to_fmt(ref, case["fmt"]), scale=to_fmt(scale, case["fmt"]), k=32)


def frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy: what a Const op hands its users."""
    a = np.array(a)
    a.setflags(write=False)
    return a


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(case=conv_cases())
def test_conv2d_constant_filter_and_bias_match_naive_loops(dtype: np.dtype, case: dict[str, Any]) -> None:
    """Read-only (constant) filter and bias, float16 carried in float32 as the executor does, one kernel
    run many times: every run, a second constant filter, and a writable filter changed in place
    between runs match the naive loops (nothing computed from operands may go stale)."""
    r, fmt = rng(case["seed"]), case["fmt"]
    x = r.standard_normal((case["n"], case["c"], case["h"], case["w"])).astype(dtype)
    shape_w = (case["o"], case["c"] // case["groups"], *case["k"])
    w1, w2 = (r.standard_normal(shape_w).astype(dtype) for _ in range(2))
    b = r.standard_normal(case["o"]).astype(dtype)
    spec = OpSpec(
        "Conv2D",
        (dtype,) * 3,
        (dtype,),
        (to_fmt(x, fmt).shape, filter_to_fmt(w1, fmt).shape, b.shape),
        (),
        conv_attrs(case),
        status=FloatStatus(),
        carry_f16=True,
    )
    kern = make_kernel(spec)
    held = F32 if dtype == F16 else dtype  # float16 values held in float32 arrays

    def check(w: np.ndarray, w_arg: np.ndarray) -> np.ndarray:
        args = (to_fmt(x, fmt).astype(held), w_arg, frozen(b.astype(held)))
        with np.errstate(all="ignore"):
            y = kern(*args)
        ref = naive_conv(f64(x), f64(w), case["s"], case["pads"], case["d"], case["groups"]) + f64(b).reshape(
            1, -1, 1, 1
        )
        scale = naive_conv(np.abs(f64(x)), np.abs(f64(w)), case["s"], case["pads"], case["d"], case["groups"]) + np.abs(
            f64(b)
        ).reshape(1, -1, 1, 1)
        assert y.dtype == held
        assert_close(y.astype(dtype), to_fmt(ref, fmt), scale=to_fmt(scale, fmt), k=64)
        return y

    c1 = frozen(filter_to_fmt(w1, fmt).astype(held))
    first = check(w1, c1)
    np.testing.assert_array_equal(check(w1, c1), first)  # the same constants again
    check(w2, frozen(filter_to_fmt(w2, fmt).astype(held)))  # other constants
    writable = filter_to_fmt(w2, fmt).astype(held)
    check(w2, writable)
    writable[...] = filter_to_fmt(w1, fmt).astype(held)  # changed in place: nothing stale may be used
    check(w1, writable)
    np.testing.assert_array_equal(check(w1, c1), first)


@EXAMPLES
@given(case=conv_cases())
def test_conv2d_backprops_match_naive_adjoints(case: dict[str, Any]) -> None:
    """<conv(x, w), dy> = <x, dx(dy)> = <w, dw(dy)>, with the forward from the naive loops."""
    r = rng(case["seed"])
    fmt = case["fmt"]
    x = r.standard_normal((case["n"], case["c"], case["h"], case["w"]))
    w = r.standard_normal((case["o"], case["c"] // case["groups"], *case["k"]))
    y = naive_conv(x, w, case["s"], case["pads"], case["d"], case["groups"])
    dy = r.standard_normal(y.shape)
    attrs = conv_attrs(case)
    size_x = to_fmt(x, fmt).shape
    size_w = filter_to_fmt(w, fmt).shape
    dx = run(
        "Conv2DBackpropInput",
        filter_to_fmt(w, fmt),
        to_fmt(dy, fmt),
        attrs=attrs | {"input_size": size_x},
        reference=True,
    )
    dw = run(
        "Conv2DBackpropFilter", to_fmt(x, fmt), to_fmt(dy, fmt), attrs=attrs | {"filter_size": size_w}, reference=True
    )
    inner = float((y * dy).sum())
    assert math.isclose(float((to_fmt(x, fmt) * dx).sum()), inner, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(float((filter_to_fmt(w, fmt) * dw).sum()), inner, rel_tol=1e-9, abs_tol=1e-9)


def test_conv2d_backprop_filter_fp16_in_fp32_out() -> None:
    r = rng(3)
    x = r.standard_normal((2, 3, 5, 5)).astype(F16)
    dy = r.standard_normal((2, 4, 3, 3)).astype(F16)
    attrs = {"strides": (1, 1, 1, 1), "filter_size": (4, 3, 3, 3)}
    dw = run("Conv2DBackpropFilter", x, dy, out=F32, attrs=attrs)
    ref = run("Conv2DBackpropFilter", f64(x), f64(dy), out=F64, attrs=attrs, reference=True)
    np.testing.assert_allclose(dw, ref, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------
# Pooling (against naive loops)
# --------------------------------------------------------------------------------------


def tf_pads(size: int, k: int, s: int, same: bool) -> tuple[int, int, int]:
    if not same:
        return (size - k) // s + 1, 0, 0
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


def naive_pool(x: np.ndarray, k: tuple[int, int], s: tuple[int, int], same: bool, kind: str) -> np.ndarray:
    """NCHW pooling with loops over output pixels; windows cover the valid (unpadded) elements."""
    n_, c_, h_, w_ = x.shape
    oh_, pt, _ = tf_pads(h_, k[0], s[0], same)
    ow_, pl, _ = tf_pads(w_, k[1], s[1], same)
    y = np.zeros((n_, c_, oh_, ow_))
    for oh, ow in itertools.product(range(oh_), range(ow_)):
        h0, w0 = oh * s[0] - pt, ow * s[1] - pl
        win = x[:, :, max(h0, 0) : h0 + k[0], max(w0, 0) : w0 + k[1]]
        y[:, :, oh, ow] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y


@st.composite
def pool_cases(draw: st.DrawFn) -> dict[str, Any]:
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    same = draw(st.booleans())
    h, w = draw(st.integers(k[0], 7)), draw(st.integers(k[1], 7))
    fmt = draw(st.sampled_from(["NCHW", "NHWC"]))
    nchw = fmt == "NCHW"
    attrs = {
        "ksize": (1, 1, *k) if nchw else (1, *k, 1),
        "strides": (1, 1, *s) if nchw else (1, *s, 1),
        "padding": "SAME" if same else "VALID",
        "data_format": fmt,
    }
    return {
        "k": k,
        "s": s,
        "same": same,
        "shape": (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w),
        "fmt": fmt,
        "attrs": attrs,
        "seed": draw(st.integers(0, 2**16)),
    }


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(case=pool_cases())
def test_pooling_matches_naive_loops(dtype: np.dtype, case: dict[str, Any]) -> None:
    x = rng(case["seed"]).standard_normal(case["shape"]).astype(dtype)
    xin = to_fmt(x, case["fmt"])
    for op, kind in (("MaxPool", "max"), ("AvgPool", "avg")):
        ref = naive_pool(f64(x), case["k"], case["s"], case["same"], kind)
        y = run(op, xin, attrs=case["attrs"])
        assert_close(
            y,
            to_fmt(ref, case["fmt"]),
            scale=to_fmt(naive_pool(np.abs(f64(x)), case["k"], case["s"], case["same"], "max"), case["fmt"]),
        )


def test_max_pool_of_fp16_extremes() -> None:
    x = np.array([[[[65504.0, -np.inf], [np.nan, 1.0]], [[-65504.0, -65504.0], [6e-8, 0.0]]]], np.float16)
    y = run("MaxPool", x, attrs={"ksize": (1, 1, 2, 2), "strides": (1, 1, 2, 2)})
    assert np.isnan(y[0, 0, 0, 0]) and y[0, 1, 0, 0] == np.float16(6e-8)


# --------------------------------------------------------------------------------------
# Reductions, softmax, losses
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax"])
@EXAMPLES
@given(data=st.data(), keep=st.booleans())
def test_reductions(op: str, dtype: np.dtype, data: st.DataObject, keep: bool) -> None:
    x = data.draw(arrays_of(dtype, SHAPES, 65504 if dtype == F16 else 1e4))
    rank = x.ndim
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda a: a % rank))
    reduced = tuple(sorted({a % rank for a in axes})) or tuple(range(rank))
    x64 = f64(x)
    ref = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max}[op](x64, axis=reduced, keepdims=keep)
    scale = np.sum(np.abs(x64), axis=reduced, keepdims=keep)
    y = run(op, x, attrs={"axes": tuple(axes), "keep_dims": keep})
    assert y.shape == np.shape(ref)
    assert_close(y, ref, scale=scale, k=2 * x.size)


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@EXAMPLES
@given(data=st.data(), keep=st.booleans())
def test_reduce_min_is_exact_and_reduce_prod_close(dtype: np.dtype, data: st.DataObject, keep: bool) -> None:
    x = data.draw(arrays_of(dtype, SHAPES, 4.0))
    rank = x.ndim
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda a: a % rank))
    reduced = tuple(sorted({a % rank for a in axes})) or tuple(range(rank))
    x64 = f64(x)
    attrs = {"axes": tuple(axes), "keep_dims": keep}
    y = run("ReduceMin", x, attrs=attrs)
    np.testing.assert_array_equal(f64(y), np.min(x64, axis=reduced, keepdims=keep))
    ref = np.prod(x64, axis=reduced, keepdims=keep)
    y = run("ReduceProd", x, attrs=attrs)
    assert y.shape == ref.shape
    with np.errstate(over="ignore"):
        finite = np.isfinite(ref.astype(dtype))
    assert_close(y[finite], ref[finite], scale=np.prod(np.abs(x64), axis=reduced, keepdims=keep)[finite], k=2 * x.size)


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@EXAMPLES
@given(data=st.data(), exclusive=st.booleans(), reverse=st.booleans())
def test_cumsum(dtype: np.dtype, data: st.DataObject, exclusive: bool, reverse: bool) -> None:
    x = data.draw(arrays_of(dtype, SHAPES, 100.0))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    x64, n = f64(x), x.shape[axis]
    idx = np.arange(n)
    # the (i, j) mask of the summed elements, then one sum per i: an independent formula
    mask = {
        (False, False): idx[None, :] <= idx[:, None],
        (True, False): idx[None, :] < idx[:, None],
        (False, True): idx[None, :] >= idx[:, None],
        (True, True): idx[None, :] > idx[:, None],
    }[(exclusive, reverse)]
    moved = np.moveaxis(x64, axis, -1)
    ref = np.moveaxis(moved @ mask.T.astype(np.float64), -1, axis)
    scale = np.moveaxis(np.abs(moved) @ mask.T.astype(np.float64), -1, axis)
    y = run("CumsumD", x, attrs={"axis": axis, "exclusive": exclusive, "reverse": reverse})
    assert_close(y, ref, scale=scale, k=2 * n)


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@EXAMPLES
@given(data=st.data())
def test_instance_norm(dtype: np.dtype, data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=3, max_dims=5, min_side=1, max_side=4))
    x = data.draw(arrays_of(dtype, st.just(shape), 100.0))
    g = data.draw(arrays_of(dtype, st.just((shape[1],)), 4.0))
    b = data.draw(arrays_of(dtype, st.just((shape[1],)), 4.0))
    x64, axes = f64(x), tuple(range(2, x.ndim))
    per = (-1,) + (1,) * (x.ndim - 2)
    m = x64.mean(axis=axes, keepdims=True)
    v = ((x64 - m) ** 2).mean(axis=axes, keepdims=True)
    ref = (x64 - m) / np.sqrt(v + 1e-5) * f64(g).reshape(per) + f64(b).reshape(per)
    y, mean, var = run("InstanceNorm", x, g, b, out=(dtype, dtype, dtype), attrs={"epsilon": 1e-5}, reference=True)
    assert mean.shape == m.shape and var.shape == v.shape
    assert_close(mean, m, scale=np.abs(x64).max(axis=axes, keepdims=True), k=8)
    assert_close(
        y,
        ref,
        scale=(np.abs(x64 - m) / np.sqrt(v + 1e-5) + 1)
        * (np.abs(f64(g)).reshape(per) + np.abs(f64(b)).reshape(per) + 1),
        k=16 * x.size,
    )


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@EXAMPLES
@given(data=st.data())
def test_softmax_and_log_softmax(dtype: np.dtype, data: st.DataObject) -> None:
    x = data.draw(arrays_of(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), 65504 if dtype == F16 else 80))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    x64 = f64(x)
    shifted = x64 - x64.max(axis=axis, keepdims=True)
    ref = np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)
    assert_close(run("SoftmaxV2", x, attrs={"axes": (axis,)}), ref, scale=1 + 0 * ref, k=64)
    log_ref = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    assert_close(run("LogSoftmaxV2", x, attrs={"axes": (axis,)}), log_ref, scale=8 + np.abs(shifted), k=64)


def test_softmax_of_huge_fp16_logits_is_finite() -> None:
    y = run("SoftmaxV2", np.array([[65504.0, 0.0, -65504.0]], np.float16))
    assert y.tolist() == [[1.0, 0.0, 0.0]]


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(data=st.data(), n=st.integers(1, 4), c=st.integers(1, 6))
def test_softmax_cross_entropy(dtype: np.dtype, data: st.DataObject, n: int, c: int) -> None:
    z = data.draw(arrays_of(dtype, (n, c), 30))
    labels = np.eye(c, dtype=dtype)[data.draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, c - 1)))]
    z64 = f64(z)
    logp = z64 - z64.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    loss, grad = run("SoftmaxCrossEntropyWithLogits", z, labels, out=(dtype, dtype))
    assert_close(loss, -(f64(labels) * logp).sum(1), scale=8 + np.abs(logp).sum(1), k=64)
    assert_close(grad, np.exp(logp) - f64(labels), scale=np.ones_like(logp), k=64)


@EXAMPLES
@given(data=st.data())
def test_argmax(data: st.DataObject) -> None:
    x = data.draw(arrays_of(F16, SHAPES, 65504))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    y = run("ArgMaxV2", x, out=np.int32, attrs={"dimension": dim})
    np.testing.assert_array_equal(y, np.argmax(f64(x), axis=dim))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis: int) -> None:
    idx = np.array([[0, 3], [2, 7]], np.int32)  # 7 is out of range: all off
    on, off = np.array(2.0, np.float16), np.array(-1.0, np.float16)
    y = run("OneHot", idx, on, off, out=F16, attrs={"depth": 4, "axis": axis})
    ref = np.full((2, 2, 4), -1.0)
    for i, j in itertools.product(range(2), range(2)):
        if idx[i, j] < 4:
            ref[i, j, idx[i, j]] = 2.0
    np.testing.assert_array_equal(y, np.moveaxis(ref, -1, axis % 3))


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


def bn_reference(
    x: np.ndarray, scale: np.ndarray, offset: np.ndarray, eps: float, axes: tuple[int, ...], view: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean = x.mean(axis=axes)
    var = ((x - mean.reshape(view)) ** 2).mean(axis=axes)
    y = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + eps) * scale.reshape(view) + offset.reshape(view)
    return y, mean, var


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(fmt: str, training: bool) -> None:
    r = rng(1)
    x = (r.standard_normal((3, 4, 5, 2)) * 3 + 1).astype(F16)
    c = x.shape[1] if fmt == "NCHW" else x.shape[3]
    scale, offset = r.standard_normal(c).astype(F32), r.standard_normal(c).astype(F32)
    mean, var = r.standard_normal(c).astype(F32), (r.random(c) + 0.5).astype(F32)
    axes = (0, 2, 3) if fmt == "NCHW" else (0, 1, 2)
    view = [1, -1, 1, 1] if fmt == "NCHW" else [1, 1, 1, -1]
    eps = 1e-3
    y, bm, bv = run(
        "BatchNorm",
        x,
        scale,
        offset,
        mean,
        var,
        out=(F16, F32, F32),
        attrs={"epsilon": eps, "data_format": fmt, "is_training": training},
    )
    if training:
        ry, rm, rv = bn_reference(f64(x), f64(scale), f64(offset), eps, axes, view)
        n = x.size // c
        rv_out = rv * n / (n - 1)
    else:
        rm, rv = f64(mean), f64(var)
        ry = (f64(x) - rm.reshape(view)) / np.sqrt(rv.reshape(view) + eps) * f64(scale).reshape(view) + f64(
            offset
        ).reshape(view)
        rv_out = rv
    assert_close(y, ry, scale=8 + np.abs(ry), k=64)
    assert_close(bm, rm, scale=1 + np.abs(rm), k=64)
    assert_close(bv, rv_out, scale=1 + np.abs(rv_out), k=64)


def test_bn_training_reduce_and_update() -> None:
    r = rng(2)
    x = (r.standard_normal((4, 3, 2, 5)) * 2).astype(F32)
    scale, offset = r.standard_normal(3).astype(F32), r.standard_normal(3).astype(F32)
    mean, var = r.standard_normal(3).astype(F32), (r.random(3) + 0.5).astype(F32)
    s, ss = run("BNTrainingReduce", x, out=(F32, F32))
    np.testing.assert_allclose(s, f64(x).sum(axis=(0, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(ss, (f64(x) ** 2).sum(axis=(0, 2, 3)), rtol=1e-5)
    eps, factor = 1e-3, 0.25
    y, mean_out, var_out, bm, bv = run(
        "BNTrainingUpdate", x, s, ss, scale, offset, mean, var, out=(F32,) * 5, attrs={"epsilon": eps, "factor": factor}
    )
    view = [1, -1, 1, 1]
    ry, rm, rv = bn_reference(f64(x), f64(scale), f64(offset), eps, (0, 2, 3), view)
    n = x.size // 3
    np.testing.assert_allclose(y, ry, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bm, rm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bv, rv, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean_out, (1 - factor) * f64(mean) + factor * rm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var_out, (1 - factor) * f64(var) + factor * rv * n / (n - 1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(data=st.data())
def test_layer_norm(dtype: np.dtype, data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=2, max_side=5))
    norm = data.draw(st.integers(1, len(shape) - 1))
    params = data.draw(st.integers(norm, len(shape) - 1))
    r = rng(data.draw(st.integers(0, 2**16)))
    x = (r.standard_normal(shape) * 4).astype(dtype)
    gamma, beta = r.standard_normal(shape[params:]).astype(dtype), r.standard_normal(shape[params:]).astype(dtype)
    eps = 1e-5
    y, m, v = run(
        "LayerNorm",
        x,
        gamma,
        beta,
        out=(dtype,) * 3,
        attrs={"begin_norm_axis": norm, "begin_params_axis": params, "epsilon": eps},
    )
    axes = tuple(range(norm, len(shape)))
    x64 = f64(x)
    rm = x64.mean(axis=axes, keepdims=True)
    rv = ((x64 - rm) ** 2).mean(axis=axes, keepdims=True)
    ry = (x64 - rm) / np.sqrt(rv + eps) * f64(gamma) + f64(beta)
    assert m.shape == rm.shape
    assert_close(y, ry, scale=(1 + np.abs(ry)) * 16, k=64)
    assert_close(m, rm, scale=1 + np.abs(x64).max(), k=64)
    assert_close(v, rv, scale=1 + rv, k=256)


# --------------------------------------------------------------------------------------
# Data movement and casts
# --------------------------------------------------------------------------------------


@EXAMPLES
@given(x=arrays_of(F16, hnp.array_shapes(min_dims=1, max_dims=4, max_side=4)), data=st.data())
def test_reshape_transpose_concat_are_exact(x: np.ndarray, data: st.DataObject) -> None:
    flat = run("Reshape", x, out_shapes=[(x.size,)])
    np.testing.assert_array_equal(flat.view(np.uint16), x.reshape(-1).view(np.uint16))
    perm = tuple(data.draw(st.permutations(range(x.ndim))))
    np.testing.assert_array_equal(
        run("Transpose", x, attrs={"perm": perm}).view(np.uint16), np.transpose(x, perm).view(np.uint16)
    )
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    y = run("ConcatV2D", x, x, x, attrs={"concat_dim": dim})
    np.testing.assert_array_equal(y.view(np.uint16), np.concatenate([x, x, x], axis=dim).view(np.uint16))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@EXAMPLES
@given(x=arrays_of(F16, hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4)), data=st.data())
def test_pad_v3d_is_numpy_pad(mode: str, x: np.ndarray, data: st.DataObject) -> None:
    limit = [d - 1 if mode == "reflect" else 3 for d in x.shape]
    pairs = [(data.draw(st.integers(0, n)), data.draw(st.integers(0, n))) for n in limit]
    contiguous = data.draw(st.booleans())
    flat = [p for pair in pairs for p in pair] if contiguous else [lo for lo, _ in pairs] + [hi for _, hi in pairs]
    attrs = {"paddings": tuple(flat), "mode": mode, "constant_values": -2.5, "paddings_contiguous": contiguous}
    y = run("PadV3D", x, attrs=attrs)
    kw: dict[str, Any] = {"constant_values": -2.5} if mode == "constant" else {}
    np.testing.assert_array_equal(f64(y), np.pad(f64(x), pairs, mode=mode, **kw))


def _resize64(x: np.ndarray, size: tuple[int, int], mode: str, coords: str, nearest: str) -> np.ndarray:
    """ONNX Resize on the last two dimensions, element by element in float64 (the operator's spec)."""

    def coord(o: int, n_in: int, n_out: int) -> float:
        s = n_out / n_in
        return {
            "half_pixel": (o + 0.5) / s - 0.5,
            "align_corners": o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0,
            "asymmetric": o / s,
        }[coords]

    def pick(c: float, n: int) -> int:
        f = math.floor(c)
        i = {
            "floor": f,
            "round_prefer_floor": f if c - f <= 0.5 else f + 1,
            "round_prefer_ceil": f if c - f < 0.5 else f + 1,
        }[nearest]
        return min(max(i, 0), n - 1)

    (h, w), y = x.shape[2:], np.zeros(x.shape[:2] + size)
    for i in range(size[0]):
        for j in range(size[1]):
            u, v = coord(i, h, size[0]), coord(j, w, size[1])
            if mode == "nearest":
                y[:, :, i, j] = x[:, :, pick(u, h), pick(v, w)]
                continue
            u, v = min(max(u, 0.0), h - 1.0), min(max(v, 0.0), w - 1.0)
            i0, j0 = int(u), int(v)
            i1, j1 = min(i0 + 1, h - 1), min(j0 + 1, w - 1)
            a, b = u - i0, v - j0
            y[:, :, i, j] = (
                x[:, :, i0, j0] * (1 - a) * (1 - b)
                + x[:, :, i1, j0] * a * (1 - b)
                + x[:, :, i0, j1] * (1 - a) * b
                + x[:, :, i1, j1] * a * b
            )
    return y


@pytest.mark.parametrize(
    ("mode", "coords", "nearest", "hw", "size"),
    [
        ("nearest", "asymmetric", "floor", (3, 4), (6, 8)),
        ("nearest", "half_pixel", "round_prefer_floor", (4, 4), (8, 2)),
        ("nearest", "half_pixel", "round_prefer_ceil", (4, 4), (8, 2)),
        ("nearest", "align_corners", "round_prefer_floor", (3, 5), (5, 3)),
        ("linear", "half_pixel", "round_prefer_floor", (3, 4), (5, 9)),
        ("linear", "align_corners", "round_prefer_floor", (4, 3), (7, 2)),
        ("linear", "asymmetric", "round_prefer_floor", (2, 5), (4, 3)),
    ],
)
@pytest.mark.parametrize("dtype", [F32, F16], ids=str)
def test_resize_matches_the_onnx_formulas(
    mode: str, coords: str, nearest: str, hw: tuple[int, int], size: tuple[int, int], dtype: np.dtype
) -> None:
    x = rng(3).standard_normal((2, 3, *hw)).astype(dtype)
    attrs = {"mode": mode, "coordinate_transformation_mode": coords, "nearest_mode": nearest}
    y = run("ResizeD", x, attrs=attrs, out_shapes=[(2, 3, *size)])
    ref = _resize64(f64(x), size, mode, coords, nearest)
    if mode == "nearest":
        np.testing.assert_array_equal(f64(y), ref)
    else:
        assert_close(y, ref, scale=np.abs(f64(x)).max(), k=4)


@pytest.mark.parametrize(("var", "idx"), [((5, 3), (2, 1)), ((4, 3, 2), (2, 2, 2)), ((3, 4), (2,)), ((6,), (4, 1))])
def test_scatter_nd_update_loops(var: tuple[int, ...], idx: tuple[int, ...]) -> None:
    """Against a Python loop over the index rows (distinct rows, some negative)."""
    g = rng(5)
    k = idx[-1]
    n_rows = int(np.prod(idx[:-1]))
    flat = g.choice(int(np.prod(var[:k])), size=n_rows, replace=False)
    rows = np.stack(np.unravel_index(flat, var[:k]), axis=-1) - np.array(var[:k]) * g.integers(0, 2, (n_rows, k))
    indices = rows.reshape(idx).astype(np.int32)
    x = g.standard_normal(var).astype(F16)
    updates = g.standard_normal(idx[:-1] + var[k:]).astype(F16)
    want = f64(x).copy()
    for r, u in zip(rows, f64(updates).reshape((n_rows, *var[k:]))):
        want[tuple(int(c) % n for c, n in zip(r, var))] = u
    np.testing.assert_array_equal(f64(run("ScatterNdUpdate", x, indices, updates)), want)


def test_unsorted_segment_sum_against_a_loop() -> None:
    """Repeated ids add up, ids outside [0, n) drop out; fp16 rows summed in fp32, rounded once."""
    g = rng(6)
    x = g.standard_normal((2, 5, 3)).astype(F16)
    ids = np.array([[0, 3, 3, -1, 2], [3, 5, 0, 0, 1]], np.int64)
    want = np.zeros((4, 3))
    for i, row in zip(ids.reshape(-1), f64(x).reshape(-1, 3)):
        if 0 <= i < 4:
            want[i] += row
    got = run("UnsortedSegmentSumD", x, ids, attrs={"num_segments": 4}, out_shapes=[(4, 3)])
    assert got.dtype == F16
    np.testing.assert_array_equal(f64(got), f64(want.astype(F16)))


def test_resize_of_dynamic_sizes_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match=r"ResizeD needs static spatial sizes"):
        run("ResizeD", np.zeros((1, 2, 3, 4), F32), out_shapes=[(1, 2, -1, 8)])


def test_scatter_nd_update_out_of_range_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match=r"index \[4\] is out of range for shape \(4, 2\)"):
        run("ScatterNdUpdate", np.zeros((4, 2), F32), np.array([[1], [4]], np.int32), np.zeros((2, 2), F32))


def test_reshape_with_one_dynamic_dimension() -> None:
    assert run("Reshape", np.zeros((2, 6), F32), out_shapes=[(-1, 3)]).shape == (4, 3)


@EXAMPLES
@given(x=hnp.arrays(np.float64, SHAPES, elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_cast_rounds_to_nearest_even(x: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        x32 = x.astype(np.float32)
    for dst in (F16, BF16):
        y = run("Cast", x32, out=dst)
        np.testing.assert_array_equal(y.view(np.uint16), rne(x32, dst).view(np.uint16))
    half = rne(x32, F16)
    np.testing.assert_array_equal(run("Cast", half, out=F32), half.astype(np.float64).astype(np.float32))


def test_cast_boundaries() -> None:
    x = np.array([65519.0, 65520.0, 2.0**-25, 2.0**-25 * 1.5, 1 + 2.0**-11, 1 + 3 * 2.0**-11, -1e9], np.float32)
    assert run("Cast", x, out=F16).tolist() == [65504.0, np.inf, 0.0, 2.0**-24, 1.0, 1 + 2.0**-9, -np.inf]
    assert run("Cast", np.array([-2.7, 2.7, 0.0], F32), out=np.int32).tolist() == [-2, 2, 0]
    assert run("Cast", np.array([-2.7, 0.0, np.nan], F32), out=np.bool_).tolist() == [True, False, True]
    assert run("Cast", np.array([True, False]), out=F16).tolist() == [1.0, 0.0]


def f16_rounding_cases() -> np.ndarray:
    """float32 inputs around every float16 value: the value, the ties between neighbours
    and one float32 ulp either side of them, plus random bit patterns and the limits."""
    h = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(F16).astype(np.float64)
    h = np.sort(h[np.isfinite(h)])
    ties = (h[:-1] + h[1:]) / 2
    top = np.array([65504.0 + 16.0, 65504.0 + 15.99, 2.0**16, 1e30, 3.4e38])  # the tie above 65504 overflows
    values = np.concatenate([h, ties, top]).astype(F32)
    near = [np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(-np.inf))]
    random = rng(11).integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 2.0**-25, -(2.0**-25), 2.0**-26], F32)
    return np.concatenate([values, -values, *near, random, specials])


def test_round_f16_is_float16_rounding_bit_for_bit() -> None:
    """The carried float16 rounding against the format's definition (`rne`) and numpy's
    conversion: every float16 value, every tie and its neighbours, a million random
    bit patterns (an exhaustive run over all 2^32 float32 inputs also agreed)."""
    x = f16_rounding_cases()
    with np.errstate(all="ignore"):
        ours = round_f16(x)
        want = rne(x, F16).astype(F32)
        assert ours.dtype == F32 and x.size > 2048
        nan = np.isnan(want)
        assert (np.isnan(ours) == nan).all()
        np.testing.assert_array_equal(ours.view(np.uint32)[~nan], want.view(np.uint32)[~nan])  # signed zeros included
        np.testing.assert_array_equal(ours.view(np.uint32)[~nan], x.astype(F16).astype(F32).view(np.uint32)[~nan])
        for small in (x[:100], x[:1], x[0].reshape(())):  # below the size where numpy's conversion is used
            np.testing.assert_array_equal(round_f16(small).view(np.uint32), rne(small, F16).astype(F32).view(np.uint32))


@pytest.mark.parametrize("op", ["Add", "Relu", "Cast", "MatMulV2", "SoftmaxV2"])
def test_carried_f16_gives_the_native_results(op: str) -> None:
    """float16 carried in float32 (how the executor holds it) against numpy float16 arrays."""
    r = rng(12)
    a = (r.standard_normal((64, 64)) * 40).astype(F16)
    a.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, -0.0]
    ins = {"Add": (a, a.T), "Relu": (a,), "Cast": (a.astype(F32) * 1000,), "MatMulV2": (a, a.T), "SoftmaxV2": (a,)}[op]
    attrs = {"axes": (-1,)} if op == "SoftmaxV2" else {}
    spec = OpSpec(op, tuple(x.dtype for x in ins), (F16,), tuple(x.shape for x in ins), ((64, 64),), attrs)
    carried = OpSpec(spec.type, spec.in_dtypes, spec.out_dtypes, spec.in_shapes, spec.out_shapes, attrs, carry_f16=True)
    native = apply(spec, *ins)
    ours = apply(carried, *(x.astype(F32) for x in ins))
    assert native.dtype == F16 and ours.dtype == F32
    np.testing.assert_array_equal(ours, native.astype(F32))
    assert (np.signbit(ours) == np.signbit(native)).all()


# --------------------------------------------------------------------------------------
# Optimizers
# --------------------------------------------------------------------------------------


def test_apply_gradient_descent() -> None:
    r = rng(4)
    var, delta = r.standard_normal((3, 4)).astype(F32), r.standard_normal((3, 4)).astype(F32)
    for alpha in (np.array(0.1, F32), np.array([0.1], F32)):
        np.testing.assert_allclose(
            run("ApplyGradientDescent", var, alpha, delta), f64(var) - 0.1 * f64(delta), rtol=1e-6, atol=1e-7
        )


@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_momentum(nesterov: bool) -> None:
    r = rng(5)
    var, accum, grad = (r.standard_normal((2, 3)).astype(F32) for _ in range(3))
    lr, mom = np.array(0.05, F32), np.array(0.9, F32)
    v, a = run("ApplyMomentumD", var, accum, lr, grad, mom, out=(F32, F32), attrs={"use_nesterov": nesterov})
    ra = f64(accum) * f64(mom) + f64(grad)
    rv = f64(var) - f64(lr) * (f64(grad) + f64(mom) * ra if nesterov else ra)
    np.testing.assert_allclose(a, ra, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(v, rv, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_adam(nesterov: bool) -> None:
    r = rng(6)
    var, m, grad = (r.standard_normal(5).astype(F32) for _ in range(3))
    v = r.random(5).astype(F32)
    b1p, b2p, lr, b1, b2, eps = (np.array(t, F32) for t in (0.9**3, 0.999**3, 1e-2, 0.9, 0.999, 1e-8))
    out = run(
        "ApplyAdamD", var, m, v, b1p, b2p, lr, b1, b2, eps, grad, out=(F32,) * 3, attrs={"use_nesterov": nesterov}
    )
    g = f64(grad)
    rm = 0.9 * f64(m) + 0.1 * g
    rv = 0.999 * f64(v) + 0.001 * g * g
    lr_t = 1e-2 * math.sqrt(1 - 0.999**3) / (1 - 0.9**3)
    direction = 0.9 * rm + 0.1 * g if nesterov else rm
    rvar = f64(var) - lr_t * direction / (np.sqrt(rv) + 1e-8)
    for ours, ref in zip(out, (rvar, rm, rv)):
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


def test_float_status_kernels_need_a_register() -> None:
    with pytest.raises(KernelError, match="needs the program's float status register"):
        make_kernel(OpSpec("NPUGetFloatStatus", (F32,), (F32,), ((8,),), ((8,),)))


def test_float_status_kernels() -> None:
    status = FloatStatus()
    spec = OpSpec("NPUGetFloatStatus", (F32,), (F32,), ((8,),), ((8,),), status=status)
    get = make_kernel(spec)
    clear = make_kernel(OpSpec("NPUClearFloatStatus", (F32,), (F32,), ((8,),), ((8,),), status=status))
    alloc = make_kernel(OpSpec("NPUAllocFloatStatus", (), (F32,), (), ((8,),), status=status))
    buf = alloc()
    assert buf.tolist() == [0.0] * 8
    assert get(buf).tolist() == [0.0] * 8
    status.flag = True
    assert get(buf).tolist() == [1.0] + [0.0] * 7
    assert clear(buf).tolist() == [0.0] * 8 and status.flag is False


def test_every_kernel_is_exercised_by_a_test() -> None:
    """Each op type is named in a kernel or gradient test (or, for Const, in the IR tests)."""
    here = Path(__file__).parent
    text = "".join(
        (here / name).read_text()
        for name in ("test_interpreter_kernels.py", "test_interpreter_grads.py", "test_interpreter.py")
    )
    untested = [t for t in KERNELS if f'"{t}"' not in text and f"ascend.{t} " not in text]
    assert not untested, f"kernels without a test: {untested}"


# --------------------------------------------------------------------------------------
# CNN-zoo ops: explicit-pad pooling, inference BatchNorm, clipping, HardSigmoid
# --------------------------------------------------------------------------------------


def onnx_pool_out(size: int, k: int, s: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """ONNX's output size (floor or ceil of (size + pads - k) / s, plus 1), with the rule that
    the last window starts inside the input or its leading pad (onnxruntime, PyTorch)."""
    q = (size + lo + hi - k) / s
    out = (math.ceil(q) if ceil_mode else math.floor(q)) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    return out


def naive_pad_pool(
    x: np.ndarray,
    k: tuple[int, int],
    s: tuple[int, int],
    pads: tuple[int, int, int, int],
    ceil_mode: bool,
    kind: str,
    exclusive: bool = True,
) -> np.ndarray:
    """NCHW pooling with explicit pads [top, bottom, left, right], looping over output pixels:
    max over the input elements of a window; the average divides by its input elements
    (exclusive) or by its elements inside the padded input."""
    n_, c_, h_, w_ = x.shape
    pt, pb, pl, pr = pads
    oh_ = onnx_pool_out(h_, k[0], s[0], pt, pb, ceil_mode)
    ow_ = onnx_pool_out(w_, k[1], s[1], pl, pr, ceil_mode)
    y = np.zeros((n_, c_, oh_, ow_))
    for oh, ow in itertools.product(range(oh_), range(ow_)):
        h0, w0 = oh * s[0] - pt, ow * s[1] - pl
        h1, w1 = h0 + k[0], w0 + k[1]
        win = x[:, :, max(h0, 0) : min(h1, h_), max(w0, 0) : min(w1, w_)]
        if kind == "max":
            y[:, :, oh, ow] = win.max(axis=(2, 3))
        else:
            count = (
                win.shape[2] * win.shape[3]
                if exclusive
                else (min(h1, h_ + pb) - max(h0, -pt)) * (min(w1, w_ + pr) - max(w0, -pl))
            )
            y[:, :, oh, ow] = win.sum(axis=(2, 3)) / count
    return y


@st.composite
def pad_pool_cases(draw: st.DrawFn) -> dict[str, Any]:
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pads = (
        draw(st.integers(0, k[0] - 1)),
        draw(st.integers(0, k[0] - 1)),
        draw(st.integers(0, k[1] - 1)),
        draw(st.integers(0, k[1] - 1)),
    )
    h, w = (
        draw(st.integers(max(k[0] - pads[0] - pads[1], 1), 8)),
        draw(st.integers(max(k[1] - pads[2] - pads[3], 1), 8)),
    )
    fmt = draw(st.sampled_from(["NCHW", "NHWC"]))
    nchw = fmt == "NCHW"
    ceil_mode, exclusive = draw(st.booleans()), draw(st.booleans())
    attrs = {
        "ksize": (1, 1, *k) if nchw else (1, *k, 1),
        "strides": (1, 1, *s) if nchw else (1, *s, 1),
        "pads": pads,
        "ceil_mode": ceil_mode,
        "exclusive": exclusive,
        "data_format": fmt,
    }
    return {
        "k": k,
        "s": s,
        "pads": pads,
        "ceil": ceil_mode,
        "exclusive": exclusive,
        "fmt": fmt,
        "attrs": attrs,
        "shape": (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w),
        "seed": draw(st.integers(0, 2**16)),
    }


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@EXAMPLES
@given(case=pad_pool_cases())
def test_max_pool_v3_and_avg_pool_v2_match_naive_loops(dtype: np.dtype, case: dict[str, Any]) -> None:
    x = rng(case["seed"]).standard_normal(case["shape"]).astype(dtype)
    xin = to_fmt(x, case["fmt"])
    args = (case["k"], case["s"], case["pads"], case["ceil"])
    y = run("MaxPoolV3", xin, attrs=case["attrs"])
    assert_close(y, to_fmt(naive_pad_pool(f64(x), *args, "max"), case["fmt"]), ulps=0)
    ref = naive_pad_pool(f64(x), *args, "avg", case["exclusive"])
    scale = naive_pad_pool(np.abs(f64(x)), *args, "max")
    assert_close(run("AvgPoolV2", xin, attrs=case["attrs"]), to_fmt(ref, case["fmt"]), scale=to_fmt(scale, case["fmt"]))


def test_pad_pooling_known_values() -> None:
    """A 3x3 window, stride 2, pads 1 on a 4x4 ramp (resnet's stem pool), by hand."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    attrs = {"ksize": (1, 1, 3, 3), "strides": (1, 1, 2, 2), "pads": (1, 1, 1, 1)}
    assert run("MaxPoolV3", x, attrs=attrs)[0, 0].tolist() == [[5.0, 7.0], [13.0, 15.0]]
    # exclusive: the top-left window holds 0, 1, 4, 5 (mean 2.5); inclusive divides by 9
    assert run("AvgPoolV2", x, attrs=attrs)[0, 0, 0, 0] == 2.5
    assert run("AvgPoolV2", x, attrs={**attrs, "exclusive": False})[0, 0, 0, 0] == np.float32(10 / 9)
    # ceil_mode: 5 wide, k 2, s 2 -> 3 outputs; the last window holds one input element
    x5 = np.arange(5, dtype=np.float32).reshape(1, 1, 1, 5)
    y = run(
        "AvgPoolV2", x5, attrs={"ksize": (1, 1, 1, 2), "strides": (1, 1, 1, 2), "ceil_mode": True, "exclusive": False}
    )
    assert y[0, 0, 0].tolist() == [0.5, 2.5, 4.0]


@pytest.mark.parametrize("mode", ["SAME", "VALID"])
def test_pad_pooling_same_and_valid_modes_follow_tf(mode: str) -> None:
    x = rng(3).standard_normal((1, 2, 7, 6)).astype(F32)
    attrs = {"ksize": (1, 1, 3, 2), "strides": (1, 1, 2, 2), "pads": (2, 2, 1, 1), "padding_mode": mode}  # pads ignored
    same = mode == "SAME"
    for op, kind in (("MaxPoolV3", "max"), ("AvgPoolV2", "avg")):
        assert_close(run(op, x, attrs=attrs), naive_pool(f64(x), (3, 2), (2, 2), same, kind), scale=3)


def test_global_pooling() -> None:
    x = rng(4).standard_normal((2, 3, 5, 4)).astype(F32)
    attrs = {"ksize": (1, 1, 1, 1), "strides": (1, 1, 1, 1), "global_pooling": True}
    y = run("AvgPoolV2", x, attrs=attrs, out_shapes=[(2, 3, 1, 1)])
    assert_close(y, f64(x).sum(axis=(2, 3), keepdims=True) / 20, scale=20)
    assert (run("MaxPoolV3", x, attrs=attrs) == x.max(axis=(2, 3), keepdims=True)).all()


@pytest.mark.parametrize("shape", [(3, 4, 5, 2), (6, 4), (2, 4, 7)])
@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
def test_bn_infer(shape: tuple[int, ...], dtype: np.dtype) -> None:
    r = rng(5)
    x = (r.standard_normal(shape) * 3 + 1).astype(dtype)
    c = shape[1]
    scale, offset, mean = (r.standard_normal(c).astype(F32) for _ in range(3))
    var = (r.random(c) + 0.1).astype(F32)
    eps = float(np.float32(1e-5))
    view = [1, c] + [1] * (len(shape) - 2)
    y = run("BNInfer", x, scale, offset, mean, var, attrs={"epsilon": eps})
    ref = np.empty(shape)
    for index in np.ndindex(*shape):  # element by element, from the definition
        ch = index[1]
        ref[index] = (float(x[index]) - float(mean[ch])) / math.sqrt(float(var[ch]) + eps) * float(scale[ch]) + float(
            offset[ch]
        )
    bound = (np.abs(f64(x)) + np.abs(f64(mean)).reshape(view)) * (np.abs(f64(scale)) / np.sqrt(f64(var) + eps)).reshape(
        view
    ) + np.abs(f64(offset)).reshape(view)
    assert_close(y, ref, scale=bound)


@pytest.mark.parametrize("dtype", [*LOW_FLOATS, np.dtype(np.int32)], ids=str)
@EXAMPLES
@given(data=st.data())
def test_clip_by_value_and_relu6(dtype: np.dtype, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    if dtype.kind == "i":
        x = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-20, 20)))
        lo, hi = (np.asarray(data.draw(st.integers(-10, 10)), dtype) for _ in range(2))
    else:
        x = data.draw(arrays_of(dtype, shape))
        lo, hi = (data.draw(arrays_of(dtype, (), bound=10)) for _ in range(2))
    hi_row = np.full(shape[-1:], hi, dtype)  # a bound that broadcasts along the last axis
    clipped = run("ClipByValue", x, lo, hi_row)
    relu6 = run("Relu6", x)
    for index in np.ndindex(*shape):
        v = float(x[index])
        if math.isnan(v):
            assert math.isnan(float(clipped[index])) and math.isnan(float(relu6[index]))
            continue
        assert float(clipped[index]) == min(max(v, float(lo)), float(hi))
        assert float(relu6[index]) == min(max(v, 0.0), 6.0)


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@pytest.mark.parametrize(("alpha", "beta"), [(0.2, 0.5), (1 / 6, 0.5), (0.16666666, 0.5), (-0.3, 0.1)])
@EXAMPLES
@given(data=st.data())
def test_hard_sigmoid(dtype: np.dtype, alpha: float, beta: float, data: st.DataObject) -> None:
    x = data.draw(arrays_of(dtype, SHAPES))
    a, b = float(np.float32(alpha)), float(np.float32(beta))  # the attributes are f32
    with np.errstate(all="ignore"):  # inf and NaN inputs are part of the draw
        ref = np.clip(a * f64(x) + b, 0.0, 1.0)
        ref = np.where(np.isnan(f64(x)), np.nan, ref)
        scale = np.abs(a * f64(x)) + abs(b)
    assert_close(run("HardSigmoid", x, attrs={"alpha": a, "beta": b}), ref, scale=scale)


def test_hard_sigmoid_defaults_are_canns() -> None:
    x = np.array([-4.0, 0.0, 1.5, 4.0], np.float32)
    ref = np.clip(f64(x) * float(np.float32(0.16666666)) + 0.5, 0, 1)
    assert_close(run("HardSigmoid", x), ref, scale=1)


# --------------------------------------------------------------------------------------
# Transformer ops: comparisons, logic, SelectV2, Erf
# --------------------------------------------------------------------------------------


def broadcast_index(index: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element of an operand of `shape` that NumPy broadcasting pairs with result `index`."""
    tail = index[len(index) - len(shape) :] if shape else ()
    return tuple(i if n > 1 else 0 for i, n in zip(tail, shape))


COMPARE = {"Less": lambda a, b: a < b, "Equal": lambda a, b: a == b, "Greater": lambda a, b: a > b}


@pytest.mark.parametrize("dtype", [*LOW_FLOATS, np.dtype(np.int32)], ids=str)
@pytest.mark.parametrize("op", ["Less", "Equal"])
@EXAMPLES
@given(data=st.data())
def test_less_and_equal(op: str, dtype: np.dtype, data: st.DataObject) -> None:
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    if dtype.kind == "i":
        a, b = (data.draw(hnp.arrays(dtype, s, elements=st.integers(-3, 3))) for s in shapes.input_shapes)
    else:
        a, b = (data.draw(arrays_of(dtype, s)) for s in shapes.input_shapes)
    y = run(op, a, b, out=np.bool_)
    assert y.shape == shapes.result_shape
    for index in np.ndindex(*shapes.result_shape):  # element by element, in Python floats (NaN compares false)
        va, vb = float(a[broadcast_index(index, a.shape)]), float(b[broadcast_index(index, b.shape)])
        assert bool(y[index]) == COMPARE[op](va, vb), (index, va, vb)


@EXAMPLES
@given(data=st.data())
def test_logical_ops(data: st.DataObject) -> None:
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    a, b = (data.draw(hnp.arrays(np.bool_, s)) for s in shapes.input_shapes)
    y_and, y_or = run("LogicalAnd", a, b, out=np.bool_), run("LogicalOr", a, b, out=np.bool_)
    y_not = run("LogicalNot", a, out=np.bool_)
    for index in np.ndindex(*shapes.result_shape):
        va, vb = bool(a[broadcast_index(index, a.shape)]), bool(b[broadcast_index(index, b.shape)])
        assert bool(y_and[index]) == (va and vb) and bool(y_or[index]) == (va or vb)
    for index in np.ndindex(*a.shape):
        assert bool(y_not[index]) == (not bool(a[index]))


@pytest.mark.parametrize("dtype", [*LOW_FLOATS, np.dtype(np.int32), np.dtype(np.bool_)], ids=str)
@EXAMPLES
@given(data=st.data())
def test_select_v2_broadcasts_bit_exactly(dtype: np.dtype, data: st.DataObject) -> None:
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=4))
    cond = data.draw(hnp.arrays(np.bool_, shapes.input_shapes[0]))
    if dtype.kind in "ib":
        x1, x2 = (data.draw(hnp.arrays(dtype, s)) for s in shapes.input_shapes[1:])
    else:
        x1, x2 = (data.draw(arrays_of(dtype, s)) for s in shapes.input_shapes[1:])
    y = run("SelectV2", cond, x1, x2, out=dtype)
    assert y.shape == shapes.result_shape
    for index in np.ndindex(*shapes.result_shape):
        chosen = (
            x1[broadcast_index(index, x1.shape)]
            if cond[broadcast_index(index, cond.shape)]
            else x2[broadcast_index(index, x2.shape)]
        )
        assert y[index].tobytes() == np.asarray(chosen, dtype).tobytes()


@pytest.mark.parametrize("dtype", LOW_FLOATS, ids=str)
@EXAMPLES
@given(data=st.data())
def test_erf(dtype: np.dtype, data: st.DataObject) -> None:
    x = data.draw(arrays_of(dtype, SHAPES))
    ref = np.array([math.erf(v) if not math.isnan(v) else math.nan for v in f64(x).reshape(-1)]).reshape(x.shape)
    assert_close(run("Erf", x), ref, scale=1, k=4, ulps=1 if dtype != F32 else 2)


def test_exact_gelu_from_erf_differs_from_the_tanh_gelu() -> None:
    """ONNX's Gelu is 0.5 x (1 + erf(x / sqrt 2)); the dialect's Gelu is CANN's tanh form."""
    x = np.linspace(-4, 4, 81)
    erf = run("Erf", (x / math.sqrt(2)).astype(F32))
    exact = 0.5 * x * (1 + f64(erf))
    ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    assert np.abs(exact - ref).max() < 1e-6
    assert np.abs(f64(run("Gelu", x.astype(F32))) - ref).max() > 1e-4


# --------------------------------------------------------------------------------------
# Transformer ops: N-d MatMul, gather, slicing, broadcasting, tiling
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((2, 5, 8), (8, 3)), ((5, 8), (2, 3, 8, 4)), ((2, 1, 5, 8), (3, 8, 4)), ((4, 6), (6, 2))]
)
@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize(("dtype", "out"), [(F16, F16), (F16, F32), (F32, F32)], ids=str)
def test_batch_matmul_v2_broadcasts_batches(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], adj: tuple[bool, bool], dtype: np.dtype, out: np.dtype
) -> None:
    r = rng(6)
    a_mat = a_shape[:-2] + ((a_shape[-1], a_shape[-2]) if adj[0] else a_shape[-2:])
    b_mat = b_shape[:-2] + ((b_shape[-1], b_shape[-2]) if adj[1] else b_shape[-2:])
    a, b = r.standard_normal(a_mat).astype(dtype), r.standard_normal(b_mat).astype(dtype)
    bias = r.standard_normal(b_shape[-1]).astype(out)
    y = run("BatchMatMulV2", a, b, bias, out=out, attrs={"adj_x1": adj[0], "adj_x2": adj[1]})
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    assert y.shape == (*batch, m, n)
    ref, bound = np.zeros(y.shape), np.zeros(y.shape)
    for index in np.ndindex(*batch, m, n):  # one dot product per element, in float64
        *bi, i, j = index
        ia = tuple(x if s > 1 else 0 for x, s in zip(bi[len(bi) - len(a_shape[:-2]) :], a_shape[:-2]))
        ib = tuple(x if s > 1 else 0 for x, s in zip(bi[len(bi) - len(b_shape[:-2]) :], b_shape[:-2]))
        row = [float(a[(*ia, p, i)] if adj[0] else a[(*ia, i, p)]) for p in range(k)]
        col = [float(b[(*ib, j, p)] if adj[1] else b[(*ib, p, j)]) for p in range(k)]
        ref[index] = sum(u * v for u, v in zip(row, col)) + float(bias[j])
        bound[index] = sum(abs(u * v) for u, v in zip(row, col)) + abs(float(bias[j]))
    assert_close(y, ref, scale=bound, k=2 * k + 2)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_gather_v2(axis: int, idx_dtype: type) -> None:
    x = rng(7).standard_normal((4, 5, 3)).astype(F16)
    n = x.shape[axis]
    indices = np.array([[0, n - 1], [-1, 1], [-n, 2 % n]], idx_dtype)
    y = run("GatherV2D", x, indices, attrs={"axis": axis})
    ax = axis % 3
    assert y.shape == x.shape[:ax] + indices.shape + x.shape[ax + 1 :]
    for index in np.ndindex(*y.shape):
        i = int(indices[index[ax : ax + 2]])
        src = index[:ax] + ((i + n) % n,) + index[ax + 2 :]
        assert y[index].tobytes() == x[src].tobytes()


def test_gather_v2_out_of_range_index_is_a_one_line_error() -> None:
    x = np.zeros((4, 2), F32)
    with pytest.raises(KernelError, match="GatherV2D: index 4 is out of range for axis 0 of size 4"):
        run("GatherV2D", x, np.array([1, 4], np.int64))
    with pytest.raises(KernelError, match="index -5 is out of range"):
        run("GatherV2D", x, np.array([-5], np.int32))


@pytest.mark.parametrize(
    ("begin", "end", "strides", "bm", "em"),
    [
        ((0, 1), (4, 7), (1, 2), 0, 0),
        ((3, -1), (0, 0), (-1, -2), 0, 0),
        ((1,), (100,), (1,), 0, 0),
        ((5, 2), (0, 6), (1, 3), 1, 2),
        ((-3, 0), (-1, 1), (1, 1), 0, 0),
    ],
)
def test_strided_slice(
    begin: tuple[int, ...], end: tuple[int, ...], strides: tuple[int, ...], bm: int, em: int
) -> None:
    x = rng(8).standard_normal((4, 8, 2)).astype(F32)
    y = run(
        "StridedSliceD", x, attrs={"begin": begin, "end": end, "strides": strides, "begin_mask": bm, "end_mask": em}
    )
    # the reference picks indices one by one from TF's rules (clamping, negative counting, masks)
    picks = []
    for d, size in enumerate(x.shape):
        if d >= len(begin):
            picks.append(list(range(size)))
            continue
        s = strides[d]
        lo, hi = (0, size) if s > 0 else (-1, size - 1)
        b = (
            (0 if s > 0 else size - 1)
            if bm >> d & 1
            else min(max(begin[d] + size if begin[d] < 0 else begin[d], lo), hi)
        )
        e = (size if s > 0 else -1) if em >> d & 1 else min(max(end[d] + size if end[d] < 0 else end[d], lo), hi)
        idx, i = [], b
        while (i < e) if s > 0 else (i > e):
            idx.append(i)
            i += s
        picks.append(idx)
    ref = x[np.ix_(*picks)]
    assert y.shape == ref.shape and (y == ref).all()


def test_broadcast_to_and_tile() -> None:
    x = rng(9).standard_normal((3, 1)).astype(F16)
    y = run("BroadcastToD", x, attrs={"shape": (2, 3, 4)})
    assert y.shape == (2, 3, 4)
    for i, j, k in np.ndindex(2, 3, 4):
        assert y[i, j, k] == x[j, 0]
    t = run("TileD", x, attrs={"multiples": (2, 3)})
    assert t.shape == (6, 3)
    for i, j in np.ndindex(6, 3):
        assert t[i, j] == x[i % 3, 0]
    mask = np.array([[True, False]])
    assert run("TileD", mask, out=np.bool_, attrs={"multiples": (2, 2)}).tolist() == [[True, False, True, False]] * 2


def test_sigmoid_of_very_negative_inputs_keeps_its_tiny_value() -> None:
    """1/(1+exp(89)) overflows to 1/inf = 0 in float32; the true value 2.2e-39 is a subnormal."""
    x = np.array([-89.0, -100.0, -104.0, 30.0, np.nan], np.float32)
    y = run("Sigmoid", x)
    ref = np.exp(f64(x[:4])) / (1 + np.exp(f64(x[:4])))
    assert_close(y[:4], ref, ulps=2)
    assert y[0] > 0 and np.isnan(y[4])


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 1, 1, 1), (0, 1, 2, 0)])
def test_conv_forward_paths_against_a_float64_tap_sum(
    k: int, stride: int, dilation: int, pads: tuple[int, int, int, int]
) -> None:
    """The ungrouped forward (channel-major patches; a 1x1 window without padding is a strided view) against
    a float64 sum over filter taps written independently here."""
    from ascend_mp.interpreter.geometry import ConvGeometry

    rng = np.random.default_rng(k * 100 + stride * 10 + dilation)
    x = rng.standard_normal((2, 5, 9, 8)).astype(np.float32)
    w = rng.standard_normal((4, 5, k, k)).astype(np.float32)
    geo = ConvGeometry(stride, stride, dilation, dilation, pads, 1)
    oh, ow = geo.out_size(9, 8, k, k)
    y = geo.forward(x, w)
    xp = np.pad(f64(x), ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    ref = np.zeros((2, 4, oh, ow))
    for a in range(k):
        for b in range(k):
            tap = xp[
                :,
                :,
                a * dilation : a * dilation + (oh - 1) * stride + 1 : stride,
                b * dilation : b * dilation + (ow - 1) * stride + 1 : stride,
            ]
            ref += np.einsum("nchw,oc->nohw", tap, f64(w[:, :, a, b]))
    assert y.shape == ref.shape and y.dtype == np.float32 and y.flags.c_contiguous
    assert np.abs(y - ref).max() <= 1e-5 * np.abs(ref).max()


def test_max_pool_takes_the_max_of_every_tap_and_keeps_nan() -> None:
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)[:, :, ::-1, :].copy()
    x[0, 1, 2, 2] = np.nan
    y = run("MaxPoolV3", x, attrs={"ksize": (1, 1, 3, 3), "strides": (1, 1, 2, 2), "pads": (1, 1, 1, 1)})
    xp = np.pad(f64(x), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    ref = np.stack(
        [
            np.stack([xp[:, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].max(axis=(2, 3)) for j in range(3)], -1)
            for i in range(3)
        ],
        -2,
    )
    np.testing.assert_array_equal(y, ref.astype(np.float32))
    assert np.isnan(y[0, 1, 1, 1]) and not np.isnan(y[1]).any()
