"""The kernels of ascend_mp/interpreter/kernels/optim.py (optimizers) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_util import F32, f64, rng, run


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
