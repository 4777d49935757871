"""Gradient kernels against central finite differences of their forward kernels, in float64.

Every check runs the kernels in reference mode (float64 throughout). For a forward
op f and random weights R, the gradient kernel fed with R must equal the numerical
gradient of L = sum(f(inputs) * R) with respect to each input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_mp.interpreter.kernels import FloatStatus, OpSpec, apply

F64 = np.dtype(np.float64)
FEW = settings(max_examples=12, deadline=None)


def k(op: str, *inputs: np.ndarray, n_out: int = 1, attrs: dict[str, Any] | None = None, out_shapes: Any = ()) -> Any:
    """One kernel in reference mode (every float in float64)."""
    arrays = [np.asarray(x) for x in inputs]
    spec = OpSpec(
        op,
        tuple(a.dtype for a in arrays),
        tuple(F64 if a.dtype.kind == "f" else a.dtype for a in arrays[:1]) * n_out if arrays else (F64,) * n_out,
        tuple(a.shape for a in arrays),
        tuple(out_shapes),
        attrs or {},
        reference=True,
        status=FloatStatus(),
    )
    return apply(spec, *arrays)


def numeric_grad(loss: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (loss(hi) - loss(lo)) / (2 * eps)
    return g


def assert_grad(analytic: np.ndarray, numeric: np.ndarray, rtol: float = 1e-5) -> None:
    scale = max(1.0, float(np.abs(numeric).max()))
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=rtol * scale)


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def away_from(x: np.ndarray, points: tuple[float, ...] = (0.0,), gap: float = 0.05) -> np.ndarray:
    """`x` pushed at least `gap` away from kinks (finite differences are wrong across them)."""
    for p in points:
        near = np.abs(x - p) < gap
        x = np.where(near, p + np.copysign(gap, x - p + 1e-12), x)
    return x


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("slope", [None, 0.2])
def test_relu_and_leaky_relu_grad(slope: float | None) -> None:
    x, r = away_from(rand(3, 4)), rand(3, 4, seed=1)
    if slope is None:
        numeric = numeric_grad(lambda v: float((k("Relu", v) * r).sum()), x)
        assert_grad(k("ReluGrad", r, x), numeric)
    else:
        attrs = {"negative_slope": slope}
        numeric = numeric_grad(lambda v: float((k("LeakyRelu", v, attrs=attrs) * r).sum()), x)
        assert_grad(k("LeakyReluGrad", r, x, attrs=attrs), numeric)


@pytest.mark.parametrize("op", ["Sigmoid", "Tanh"])
def test_sigmoid_and_tanh_grad(op: str) -> None:
    x, r = rand(2, 5) * 2, rand(2, 5, seed=1)
    numeric = numeric_grad(lambda v: float((k(op, v) * r).sum()), x)
    assert_grad(k(f"{op}Grad", k(op, x), r), numeric)


def test_gelu_grad() -> None:
    x, r = rand(3, 4) * 2, rand(3, 4, seed=1)
    numeric = numeric_grad(lambda v: float((k("Gelu", v) * r).sum()), x)
    assert_grad(k("GeluGrad", r, x, k("Gelu", x)), numeric)


def test_softmax_grad() -> None:
    x, r = rand(3, 5), rand(3, 5, seed=1)
    numeric = numeric_grad(lambda v: float((k("SoftmaxV2", v) * r).sum()), x)
    assert_grad(k("SoftmaxGrad", k("SoftmaxV2", x), r), numeric)


def test_softmax_cross_entropy_backprop() -> None:
    z = rand(4, 6)
    labels = np.eye(6)[[0, 3, 5, 1]]
    numeric = numeric_grad(lambda v: float(k("SoftmaxCrossEntropyWithLogits", v, labels, n_out=2)[0].sum()), z)
    assert_grad(k("SoftmaxCrossEntropyWithLogits", z, labels, n_out=2)[1], numeric)


@pytest.mark.parametrize("shape,fmt", [((4, 3), "NCHW"), ((2, 3, 4, 2), "NCHW"), ((2, 4, 2, 3), "NHWC")])
def test_bias_add_grad(shape: tuple[int, ...], fmt: str) -> None:
    x, r = rand(*shape), rand(*shape, seed=1)
    channels = shape[1] if fmt == "NCHW" else shape[-1]
    b = rand(channels, seed=2)
    attrs = {"data_format": fmt}
    numeric = numeric_grad(lambda v: float((k("BiasAdd", x, v, attrs=attrs) * r).sum()), b)
    assert_grad(k("BiasAddGrad", r, attrs=attrs), numeric)


# --------------------------------------------------------------------------------------
# Convolution and pooling
# --------------------------------------------------------------------------------------


@st.composite
def conv_configs(draw: st.DrawFn) -> dict[str, Any]:
    groups = draw(st.sampled_from([1, 2]))
    c, o = draw(st.integers(1, 2)) * groups, draw(st.integers(1, 2)) * groups
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw, dh, dw = (draw(st.integers(1, 2)) for _ in range(4))
    pads = tuple(draw(st.integers(0, 1)) for _ in range(4))
    h, w = draw(st.integers(dh * (kh - 1) + 1, 5)), draw(st.integers(dw * (kw - 1) + 1, 5))
    fmt = draw(st.sampled_from(["NCHW", "NHWC"]))
    nchw = fmt == "NCHW"
    attrs = {
        "strides": (1, 1, sh, sw) if nchw else (1, sh, sw, 1),
        "dilations": (1, 1, dh, dw) if nchw else (1, dh, dw, 1),
        "pads": pads,
        "groups": groups,
        "data_format": fmt,
    }
    x_shape = (1, c, h, w) if nchw else (1, h, w, c)
    w_shape = (o, c // groups, kh, kw) if nchw else (kh, kw, c // groups, o)
    return {"attrs": attrs, "x": x_shape, "w": w_shape, "seed": draw(st.integers(0, 1000))}


@FEW
@given(cfg=conv_configs())
def test_conv2d_backprop_input_and_filter(cfg: dict[str, Any]) -> None:
    attrs = cfg["attrs"]
    x, w = rand(*cfg["x"], seed=cfg["seed"]), rand(*cfg["w"], seed=cfg["seed"] + 1)
    y = k("Conv2D", x, w, attrs=attrs)
    r = rand(*y.shape, seed=cfg["seed"] + 2)
    dx = k("Conv2DBackpropInput", w, r, attrs=attrs | {"input_size": x.shape})
    dw = k("Conv2DBackpropFilter", x, r, attrs=attrs | {"filter_size": w.shape})
    assert_grad(dx, numeric_grad(lambda v: float((k("Conv2D", v, w, attrs=attrs) * r).sum()), x))
    assert_grad(dw, numeric_grad(lambda v: float((k("Conv2D", x, v, attrs=attrs) * r).sum()), w))


@st.composite
def pool_configs(draw: st.DrawFn) -> dict[str, Any]:
    kh, kw, sh, sw = (draw(st.integers(1, 3)) for _ in range(4))
    h, w = draw(st.integers(kh, 6)), draw(st.integers(kw, 6))
    fmt = draw(st.sampled_from(["NCHW", "NHWC"]))
    nchw = fmt == "NCHW"
    attrs = {
        "ksize": (1, 1, kh, kw) if nchw else (1, kh, kw, 1),
        "strides": (1, 1, sh, sw) if nchw else (1, sh, sw, 1),
        "padding": draw(st.sampled_from(["SAME", "VALID"])),
        "data_format": fmt,
    }
    return {"attrs": attrs, "x": (2, 2, h, w) if nchw else (2, h, w, 2), "seed": draw(st.integers(0, 1000))}


@FEW
@given(cfg=pool_configs())
def test_max_pool_grad(cfg: dict[str, Any]) -> None:
    attrs = cfg["attrs"]
    # distinct values: the maximum of every window is strict, so the function is smooth there
    x = np.random.default_rng(cfg["seed"]).permutation(math.prod(cfg["x"])).reshape(cfg["x"]) * 0.1
    y = k("MaxPool", x, attrs=attrs)
    r = rand(*y.shape, seed=cfg["seed"])
    numeric = numeric_grad(lambda v: float((k("MaxPool", v, attrs=attrs) * r).sum()), x, eps=1e-4)
    assert_grad(k("MaxPoolGrad", x, y, r, attrs=attrs), numeric)


@FEW
@given(cfg=pool_configs())
def test_avg_pool_grad(cfg: dict[str, Any]) -> None:
    attrs = cfg["attrs"]
    x = rand(*cfg["x"], seed=cfg["seed"])
    y = k("AvgPool", x, attrs=attrs)
    r = rand(*y.shape, seed=cfg["seed"] + 1)
    numeric = numeric_grad(lambda v: float((k("AvgPool", v, attrs=attrs) * r).sum()), x)
    assert_grad(k("AvgPoolGrad", r, attrs=attrs | {"orig_input_shape": x.shape}), numeric)


def test_max_pool_grad_ties_go_to_the_first_maximum() -> None:
    x = np.ones((1, 1, 2, 2))
    attrs = {"ksize": (1, 1, 2, 2), "strides": (1, 1, 2, 2)}
    g = k("MaxPoolGrad", x, k("MaxPool", x, attrs=attrs), np.full((1, 1, 1, 1), 3.0), attrs=attrs)
    assert g.reshape(-1).tolist() == [3.0, 0.0, 0.0, 0.0]


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,norm,params", [((3, 4), 1, 1), ((2, 3, 4), 1, 2), ((2, 3, 4), 2, 2), ((2, 1, 4), 1, 1)])
def test_layer_norm_grad(shape: tuple[int, ...], norm: int, params: int) -> None:
    x, r = rand(*shape) * 2 + 0.5, rand(*shape, seed=1)
    gamma, beta = rand(*shape[params:], seed=2), rand(*shape[params:], seed=3)
    attrs = {"begin_norm_axis": norm, "begin_params_axis": params, "epsilon": 1e-5}

    def loss(xv: np.ndarray, g: np.ndarray, b: np.ndarray) -> float:
        return float((k("LayerNorm", xv, g, b, n_out=3, attrs=attrs)[0] * r).sum())

    _, mean, var = k("LayerNorm", x, gamma, beta, n_out=3, attrs=attrs)
    dx, dgamma, dbeta = k("LayerNormGrad", r, x, var, mean, gamma, n_out=3, attrs={"epsilon": 1e-5})
    assert_grad(dx, numeric_grad(lambda v: loss(v, gamma, beta), x))
    assert_grad(dgamma, numeric_grad(lambda v: loss(x, v, beta), gamma))
    assert_grad(dbeta, numeric_grad(lambda v: loss(x, gamma, v), beta))


def test_bn_training_grads() -> None:
    x, r = rand(3, 2, 2, 3) * 2 + 1, rand(3, 2, 2, 3, seed=1)
    scale, offset = rand(2, seed=2), rand(2, seed=3)
    mean, var = np.zeros(2), np.ones(2)
    eps = 1e-3

    def forward(xv: np.ndarray, s: np.ndarray, o: np.ndarray) -> tuple[np.ndarray, ...]:
        total, squares = k("BNTrainingReduce", xv, n_out=2)
        return k("BNTrainingUpdate", xv, total, squares, s, o, mean, var, n_out=5, attrs={"epsilon": eps})

    def loss(xv: np.ndarray, s: np.ndarray, o: np.ndarray) -> float:
        return float((forward(xv, s, o)[0] * r).sum())

    _, _, _, bm, bv = forward(x, scale, offset)
    dscale, doffset = k("BNTrainingUpdateGrad", r, x, bm, bv, n_out=2, attrs={"epsilon": eps})
    dx = k("BNTrainingReduceGrad", r, x, dscale, doffset, scale, bm, bv, attrs={"epsilon": eps})
    assert_grad(dscale, numeric_grad(lambda v: loss(x, v, offset), scale))
    assert_grad(doffset, numeric_grad(lambda v: loss(x, scale, v), offset))
    assert_grad(dx, numeric_grad(lambda v: loss(v, scale, offset), x))
