"""The gradient and optimizer families compiled by IREE for the CPU (one module per family), in fp32 against
float64 references written here (the gradients by central differences of numpy forward formulas, the
optimizer updates by their textbook formulas), and the gradients under force_fp16 within twice the
interpreter's error against float64."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from lowering_util import ENVELOPE, FLOOR, FP32_TOL, Array, interpret, rel_err, with_mode
from test_lowering_ops import GELU_C, Case, _inputs, _module, _wide

from ascend_mp.backend.iree import IreeProgram
from ascend_mp.ir import make_context, parse_module

T = "tensor<3x5xf32>"
H = 1e-6


def _vjp(f: Callable[[Array], Array], x: Array, dy: Array) -> Array:
    """sum_j dy_j * d f_j / d x_i by central differences in float64."""
    dx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = H
        dx[i] = (dy * (f(x + e) - f(x - e))).sum() / (2 * H)
    return dx


def _sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def _gelu(x: Array) -> Array:
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x**3)))


def _softmax(x: Array) -> Array:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _xent(z: Array, t: Array) -> Array:
    return -(t * np.log(_softmax(z))).sum(axis=-1)


def _unary_grad(name: str, forward: str, grad: str, ref: Callable[[Array], Array], attrs: str = "") -> Case:
    """`%y = forward(%a0)`, `%r = grad(%y, %a1)` with `%a1` the incoming gradient; reference: the VJP of `ref`."""
    return Case(
        name,
        [((3, 5), "f32"), ((3, 5), "f32")],
        f"  %y = ascend.{forward} %a0 {attrs}: ({T}) -> {T}\n  %r = ascend.{grad} %y, %a1 : ({T}, {T}) -> {T}",
        T,
        lambda x, dy: _vjp(ref, x, dy),
    )


GRAD = [
    _unary_grad("sigmoid_grad", "Sigmoid", "SigmoidGrad", _sigmoid),
    _unary_grad("tanh_grad", "Tanh", "TanhGrad", np.tanh),
    _unary_grad("softmax_grad", "SoftmaxV2", "SoftmaxGrad", _softmax, attrs="{axes = array<i64: -1>} "),
    Case(
        "gelu_grad",
        [((3, 5), "f32"), ((3, 5), "f32")],
        f"  %y = ascend.Gelu %a0 : ({T}) -> {T}\n  %r = ascend.GeluGrad %a1, %a0, %y : ({T}, {T}, {T}) -> {T}",
        T,
        lambda x, dy: _vjp(_gelu, x, dy),
    ),
    Case(
        "relu_grad",
        [((3, 5), "f32"), ((3, 5), "f32")],
        f"  %r = ascend.ReluGrad %a1, %a0 : ({T}, {T}) -> {T}",
        T,
        lambda x, dy: _vjp(lambda v: np.maximum(v, 0), x, dy),
    ),
    Case(
        "leaky_relu_grad",
        [((3, 5), "f32"), ((3, 5), "f32")],
        f"  %r = ascend.LeakyReluGrad %a1, %a0 {{negative_slope = 1.000000e-01 : f32}} : ({T}, {T}) -> {T}",
        T,
        lambda x, dy: _vjp(lambda v: np.where(v > 0, v, 0.1 * v), x, dy),
    ),
    Case(
        "bias_add_grad",
        [((2, 3, 2, 2), "f32")],
        "  %r = ascend.BiasAddGrad %a0 : (tensor<2x3x2x2xf32>) -> tensor<3xf32>",
        "tensor<3xf32>",
        lambda dy: dy.sum(axis=(0, 2, 3)),
    ),
    Case(
        "softmax_xent_loss",
        [((3, 5), "f32"), ((3, 5), "f32")],
        f"  %t = ascend.SoftmaxV2 %a1 {{axes = array<i64: -1>}} : ({T}) -> {T}\n"
        f"  %r, %g = ascend.SoftmaxCrossEntropyWithLogits %a0, %t : ({T}, {T}) -> (tensor<3xf32>, {T})",
        "tensor<3xf32>",
        lambda z, u: _xent(z, _softmax(u)),
    ),
    Case(
        "softmax_xent_backprop",
        [((3, 5), "f32"), ((3, 5), "f32")],
        f"  %t = ascend.SoftmaxV2 %a1 {{axes = array<i64: -1>}} : ({T}) -> {T}\n"
        f"  %l, %r = ascend.SoftmaxCrossEntropyWithLogits %a0, %t : ({T}, {T}) -> (tensor<3xf32>, {T})",
        T,
        lambda z, u: _vjp(lambda v: _xent(v, _softmax(u)), z, np.ones(3)),
    ),
]

S = "tensor<f32>"
V = "tensor<6xf32>"
LR, MOM, B1, B2, EPS, B1P, B2P = 0.1, 0.9, 0.9, 0.999, 1e-8, 0.9**3, 0.999**3


def _scalar(name: str, value: float) -> str:
    return f"  %{name} = ascend.Const dense<{value:.17e}> : {S}\n"


_ADAM = (
    "".join(_scalar(n, v) for n, v in (("lr", LR), ("b1", B1), ("b2", B2), ("eps", EPS), ("b1p", B1P), ("b2p", B2P)))
    + f"  %sq = ascend.Square %a2 : ({V}) -> {V}\n"
    + f"  %w, %m, %v = ascend.ApplyAdamD %a0, %a1, %sq, %b1p, %b2p, %lr, %b1, %b2, %eps, %a3 : "
    f"({V}, {V}, {V}, {S}, {S}, {S}, {S}, {S}, {S}, {V}) -> ({V}, {V}, {V})\n"
)


def _adam64(var: Array, m: Array, root_v: Array, g: Array) -> tuple[Array, Array, Array]:
    m2 = B1 * m + (1 - B1) * g
    v2 = B2 * root_v**2 + (1 - B2) * g**2
    lr_t = LR * np.sqrt(1 - B2P) / (1 - B1P)
    return var - lr_t * m2 / (np.sqrt(v2) + EPS), m2, v2


_ADAM_ARGS = [((6,), "f32")] * 4
_MOMENTUM = (
    _scalar("lr", LR)
    + _scalar("mom", MOM)
    + f"  %w, %acc = ascend.ApplyMomentumD %a0, %a1, %lr, %a2, %mom{{nesterov}} : ({V}, {V}, {S}, {V}, {S}) -> ({V}, {V})\n"
)


def _momentum(nesterov: bool) -> str:
    return _MOMENTUM.replace("{nesterov}", " {use_nesterov = true}" if nesterov else "")


OPTIM = [
    Case(
        "sgd",
        [((6,), "f32"), ((6,), "f32")],
        _scalar("lr", LR) + f"  %r = ascend.ApplyGradientDescent %a0, %lr, %a1 : ({V}, {S}, {V}) -> {V}",
        V,
        lambda w, g: w - LR * g,
    ),
    Case(
        "momentum_var",
        [((6,), "f32")] * 3,
        _momentum(False) + f"  %r = ascend.Add %w, %acc : ({V}, {V}) -> {V}",
        V,
        lambda w, a, g: (w - LR * (MOM * a + g)) + (MOM * a + g),
    ),
    Case(
        "momentum_nesterov",
        [((6,), "f32")] * 3,
        _momentum(True) + f"  %r = ascend.Add %w, %acc : ({V}, {V}) -> {V}",
        V,
        lambda w, a, g: (w - LR * (g + MOM * (MOM * a + g))) + (MOM * a + g),
    ),
    Case("adam_var", _ADAM_ARGS, _ADAM + f"  %r = ascend.Neg %w : ({V}) -> {V}", V, lambda *a: -_adam64(*a)[0]),
    Case("adam_m", _ADAM_ARGS, _ADAM + f"  %r = ascend.Neg %m : ({V}) -> {V}", V, lambda *a: -_adam64(*a)[1]),
    Case("adam_v", _ADAM_ARGS, _ADAM + f"  %r = ascend.Neg %v : ({V}) -> {V}", V, lambda *a: -_adam64(*a)[2]),
]

FAMILIES = {"grad": GRAD, "optim": OPTIM}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_fp32_family_matches_float64(family: str) -> None:
    cases = FAMILIES[family]
    program = IreeProgram.from_module(parse_module(_module(cases), f"<{family}>", make_context()))
    bad = []
    for c in cases:
        inputs = _inputs(c, 0)
        (y,) = program.run(c.name, *inputs)[:1]
        want = np.asarray(c.ref(*_wide(inputs)), np.float64)
        assert y.shape == want.shape, c.name
        if rel_err(y, want) > FP32_TOL:
            bad.append(f"{c.name}: {rel_err(y, want):.3g}")
    assert not bad, bad


def test_force_fp16_grad_family_within_interpreter_envelope() -> None:
    module = parse_module(_module(GRAD), "<grad>", make_context())
    decided = with_mode(module, "force_fp16")
    program = IreeProgram.from_module(decided)
    bad = []
    for c in GRAD:
        inputs = _inputs(c, 1)
        want = np.asarray(c.ref(*_wide(inputs)), np.float64)
        e_iree = rel_err(program.run(c.name, *inputs)[0], want)
        e_interp = rel_err(interpret(decided, c.name, *inputs)[0], want)
        if e_iree > ENVELOPE * e_interp + FLOOR:
            bad.append(f"{c.name}: IREE {e_iree:.3g} vs interpreter {e_interp:.3g}")
    assert not bad, bad
