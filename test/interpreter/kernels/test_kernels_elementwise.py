"""The kernels of ascend_mp/interpreter/kernels/elementwise.py (elementwise ops) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_util import (
    BINARY,
    COMPARE,
    EXAMPLES,
    F16,
    F32,
    LOW_FLOATS,
    SHAPES,
    UNARY,
    arrays_of,
    assert_close,
    broadcast_index,
    f64,
    rng,
    run,
)

from ascend_mp.interpreter.kernels import OpSpec, apply


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


def test_sigmoid_of_very_negative_inputs_keeps_its_tiny_value() -> None:
    """1/(1+exp(89)) overflows to 1/inf = 0 in float32; the true value 2.2e-39 is a subnormal."""
    x = np.array([-89.0, -100.0, -104.0, 30.0, np.nan], np.float32)
    y = run("Sigmoid", x)
    ref = np.exp(f64(x[:4])) / (1 + np.exp(f64(x[:4])))
    assert_close(y[:4], ref, ulps=2)
    assert y[0] > 0 and np.isnan(y[4])
