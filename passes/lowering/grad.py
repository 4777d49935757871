"""Gradient ops used by training steps: elementwise gradients (ReluGrad, LeakyReluGrad, SigmoidGrad,
TanhGrad, GeluGrad), SoftmaxGrad, BiasAddGrad and the loss SoftmaxCrossEntropyWithLogits; each computes
float16/bfloat16 in float32 and rounds every result once, as the interpreter's vector unit."""

from __future__ import annotations

import math as pymath

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import Emitter, Scalar, attr, compute_type, elem, shape
from ascend_mp.passes.lowering.reduce import add_values, shifted
from ascend_mp.passes.lowering.registry import lowers

_GELU_C = pymath.sqrt(2.0 / pymath.pi)
_GELU_A = 0.044715


def _map(em: Emitter, op: AscendOp, fn, operands: list[SSAValue] | None = None) -> list[SSAValue]:  # noqa: ANN001
    y = op.results[0]
    ins = list(op.operands) if operands is None else operands
    compute = compute_type(*(elem(v) for v in ins), elem(y))
    return [em.map(ins, shape(y), elem(y), fn, compute)]


@lowers("ReluGrad")
def _relu_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        g, f = a
        return s.select(s.cmpf(f, s.const(0, f.type), "ogt"), g, s.const(0, g.type))

    return _map(em, op, fn)


@lowers("LeakyReluGrad")
def _leaky_relu_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    slope = float(attr(op, "negative_slope"))  # pyright: ignore[reportArgumentType]

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        g, f = a
        return s.select(s.cmpf(f, s.const(0, f.type), "ogt"), g, s.mulf(g, s.const(slope, g.type)))

    return _map(em, op, fn)


@lowers("SigmoidGrad")
def _sigmoid_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return _map(em, op, lambda s, a: s.mulf(s.mulf(a[1], a[0]), s.subf(s.const(1, a[0].type), a[0])))


@lowers("TanhGrad")
def _tanh_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return _map(em, op, lambda s, a: s.mulf(a[1], s.subf(s.const(1, a[0].type), s.mulf(a[0], a[0]))))


@lowers("GeluGrad")
def _gelu_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        dy, x = a[0], a[1]
        t_ = x.type
        x2 = s.mulf(x, x)
        t = s.tanh(s.mulf(s.const(_GELU_C, t_), s.addf(x, s.mulf(s.mulf(s.const(_GELU_A, t_), x2), x))))
        half = s.const(0.5, t_)
        one = s.const(1.0, t_)
        left = s.mulf(half, s.addf(one, t))
        slope = s.mulf(s.const(_GELU_C, t_), s.addf(one, s.mulf(s.const(3 * _GELU_A, t_), x2)))
        right = s.mulf(s.mulf(s.mulf(half, x), s.subf(one, s.mulf(t, t))), slope)
        return s.mulf(dy, s.addf(left, right))

    return _map(em, op, fn)


@lowers("SoftmaxGrad")
def _softmax_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    sm, g = op.operands
    y = op.results[0]
    acc = compute_type(elem(sm), elem(g))
    assert acc is not None
    rank = len(shape(y))
    dot = em.reduce(em.map([g, sm], shape(y), acc, lambda s, a: s.mulf(a[0], a[1]), acc), [rank - 1], 0.0, add_values, acc, keep_dims=True)
    return [em.map([g, dot, sm], shape(y), elem(y), lambda s, a: s.mulf(s.subf(a[0], a[1]), a[2]), acc)]


@lowers("BiasAddGrad")
def _bias_add_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, y = op.operands[0], op.results[0]
    rank = len(shape(x))
    fmt = str(attr(op, "data_format"))
    channel = 1 if fmt.startswith("NC") and rank > 2 else rank - 1
    acc = compute_type(elem(x))
    assert acc is not None
    total = em.reduce(x, [i for i in range(rank) if i != channel], 0.0, add_values, acc)
    return [em.convert(total, elem(y))]


@lowers("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(em: Emitter, op: AscendOp) -> list[SSAValue]:
    features, labels = op.operands
    loss_r, back_r = op.results
    acc = compute_type(elem(features), elem(labels))
    assert acc is not None
    sh = shifted(em, features, [1], acc)
    total = em.reduce(sh, [1], 0.0, add_values, acc, keep_dims=True, pre=lambda s, v: s.exp(v))
    logp = em.map([sh, total], shape(features), acc, lambda s, a: s.subf(a[0], s.log(a[1])))
    prod = em.map([labels, logp], shape(features), acc, lambda s, a: s.mulf(a[0], a[1]), acc)
    loss = em.reduce(prod, [1], 0.0, add_values, acc)
    loss = em.map([loss], shape(loss_r), elem(loss_r), lambda s, a: s.add(arith.NegfOp(a[0])))
    back = em.map([logp, labels], shape(back_r), elem(back_r), lambda s, a: s.subf(s.exp(a[0]), a[1]), acc)
    return [loss, back]
