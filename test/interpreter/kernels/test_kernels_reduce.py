"""The kernels of ascend_mp/interpreter/kernels/reduce.py (reductions, normalisations, pooling, softmax, losses) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_util import (
    EXAMPLES,
    F16,
    F32,
    LOW_FLOATS,
    SHAPES,
    arrays_of,
    assert_close,
    bn_reference,
    f64,
    naive_pad_pool,
    naive_pool,
    pad_pool_cases,
    pool_cases,
    rng,
    run,
    to_fmt,
)

from ascend_mp.interpreter.kernels import KernelError, OpSpec, make_kernel


def test_pooling_over_channels_is_rejected() -> None:
    with pytest.raises(KernelError, match="pools only over H and W"):
        make_kernel(
            OpSpec("MaxPool", (F32,), (F32,), ((1, 2, 4, 4),), (), {"ksize": (1, 2, 2, 2), "strides": (1, 1, 2, 2)})
        )


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
    # Each float32 step rounds relatively (2^-24 |partial|) or, among subnormals, absolutely (half of 2^-149), and the
    # later factors scale that error up by at most prod(max(1, |x|)): 2^-126 * that product in the scale is the
    # absolute part of the bound (k * 2^-23 * 2^-126 = k * 2^-149).
    scale = np.prod(np.abs(x64), axis=reduced, keepdims=keep) + 2.0**-126 * np.prod(
        np.maximum(1.0, np.abs(x64)), axis=reduced, keepdims=keep
    )
    assert_close(y[finite], ref[finite], scale=scale[finite], k=2 * x.size)


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
