"""The kernels of ascend_mp/interpreter/kernels/grad.py (gradient ops) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given
from kernel_util import (
    EXAMPLES,
    F16,
    F32,
    F64,
    conv_attrs,
    conv_cases,
    f64,
    filter_to_fmt,
    naive_conv,
    rng,
    run,
    to_fmt,
)


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
