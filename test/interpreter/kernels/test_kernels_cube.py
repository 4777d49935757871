"""The kernels of ascend_mp/interpreter/kernels/cube.py (MatMul, BatchMatMul, Conv2D, DepthwiseConv2D) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_util import (
    BF16,
    EXAMPLES,
    F16,
    F32,
    F64,
    arrays_of,
    assert_close,
    conv_attrs,
    conv_cases,
    f64,
    filter_to_fmt,
    frozen,
    naive_conv,
    rng,
    run,
    to_fmt,
)

from ascend_mp.interpreter.kernels import FloatStatus, OpSpec, make_kernel


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
