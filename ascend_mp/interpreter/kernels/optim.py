"""Optimizer kernels: functional (they return the updated state), with in-place variants
that write the new state into the old one's buffers (CANN's ref outputs)."""

from __future__ import annotations

import numpy as np

from ascend_mp.interpreter.kernels.base import KernelFn, in_place, kernel, scalar
from ascend_mp.interpreter.numerics import Array
from ascend_mp.interpreter.spec import OpSpec


@kernel("ApplyGradientDescent", propagates=(0, 1, 2))
def _apply_gradient_descent(spec: OpSpec) -> KernelFn:
    if spec.in_shapes[1] == ():
        return lambda var, alpha, delta: var - alpha * delta
    return lambda var, alpha, delta: var - scalar(alpha) * delta


@kernel("ApplyMomentumD", propagates=(0, 1, 2, 3, 4))
def _apply_momentum(spec: OpSpec) -> KernelFn:
    nesterov = bool(spec.attr("use_nesterov"))

    def momentum(var: Array, accum: Array, lr: Array, grad: Array, mom: Array) -> tuple[Array, Array]:
        lr, mom = scalar(lr), scalar(mom)
        accum = accum * mom + grad
        step = grad + mom * accum if nesterov else accum
        return var - lr * step, accum

    return momentum


@kernel("ApplyAdamD")
def _apply_adam(spec: OpSpec) -> KernelFn:
    nesterov = bool(spec.attr("use_nesterov"))

    def adam(
        var: Array, m: Array, v: Array, b1p: Array, b2p: Array, lr: Array, b1: Array, b2: Array, eps: Array, grad: Array
    ):
        b1p, b2p, lr, b1, b2, eps = (scalar(t) for t in (b1p, b2p, lr, b1, b2, eps))
        m = m + (grad - m) * (1 - b1)
        v = v + (grad * grad - v) * (1 - b2)
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        direction = m * b1 + grad * (1 - b1) if nesterov else m
        return var - lr_t * direction / (np.sqrt(v) + eps), m, v

    return adam


@in_place("ApplyGradientDescent", (0,))
def _in_place_gradient_descent(spec: OpSpec) -> KernelFn | None:
    def sgd(var: Array, alpha: Array, delta: Array) -> Array:
        return np.subtract(var, scalar(alpha) * delta, out=var)

    return sgd if spec.in_shapes[0] == spec.in_shapes[2] else None


@in_place("ApplyMomentumD", (0, 1))
def _in_place_momentum(spec: OpSpec) -> KernelFn | None:
    nesterov = bool(spec.attr("use_nesterov"))

    def momentum(var: Array, accum: Array, lr: Array, grad: Array, mom: Array) -> tuple[Array, Array]:
        lr, mom = scalar(lr), scalar(mom)
        np.multiply(accum, mom, out=accum)
        np.add(accum, grad, out=accum)
        step = grad + mom * accum if nesterov else accum
        return np.subtract(var, lr * step, out=var), accum

    return momentum


@in_place("ApplyAdamD", (0, 1, 2))
def _in_place_adam(spec: OpSpec) -> KernelFn | None:
    nesterov = bool(spec.attr("use_nesterov"))

    def adam(
        var: Array, m: Array, v: Array, b1p: Array, b2p: Array, lr: Array, b1: Array, b2: Array, eps: Array, grad: Array
    ):
        b1p, b2p, lr, b1, b2, eps = (scalar(t) for t in (b1p, b2p, lr, b1, b2, eps))
        np.add(m, (grad - m) * (1 - b1), out=m)
        np.add(v, (grad * grad - v) * (1 - b2), out=v)
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        direction = m * b1 + grad * (1 - b1) if nesterov else m
        return np.subtract(var, lr_t * direction / (np.sqrt(v) + eps), out=var), m, v

    return adam
