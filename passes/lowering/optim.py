"""Optimizers (ApplyGradientDescent, ApplyMomentumD, ApplyAdamD) as elementwise `linalg.generic`s that
return the updated state (CANN's ref outputs, functional here); scalar hyper-parameters (shape () or
(1,)) are read broadcast."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import Emitter, Scalar, attr, compute_type, elem, shape
from ascend_mp.passes.lowering.registry import lowers

Fn = Callable[[Scalar, list[SSAValue]], SSAValue]


def _update(em: Emitter, ins: list[SSAValue], result: SSAValue, fn: Fn) -> SSAValue:
    compute = compute_type(*(elem(v) for v in ins), elem(result))
    return em.map(ins, shape(result), elem(result), fn, compute)


@lowers("ApplyGradientDescent")
def _sgd(em: Emitter, op: AscendOp) -> list[SSAValue]:
    var, alpha, delta = op.operands
    return [_update(em, [var, alpha, delta], op.results[0], lambda s, a: s.subf(a[0], s.mulf(a[1], a[2])))]


@lowers("ApplyMomentumD")
def _momentum(em: Emitter, op: AscendOp) -> list[SSAValue]:
    var, accum, lr, grad, mom = op.operands
    var_r, accum_r = op.results
    nesterov = bool(attr(op, "use_nesterov"))

    def new_accum(s: Scalar, a: list[SSAValue]) -> SSAValue:
        return s.addf(s.mulf(a[0], a[1]), a[2])  # accum * momentum + grad

    def new_var(s: Scalar, a: list[SSAValue]) -> SSAValue:
        v, lr_, g, m, acc = a
        step = s.addf(g, s.mulf(m, acc)) if nesterov else acc
        return s.subf(v, s.mulf(lr_, step))

    acc = _update(em, [accum, mom, grad], accum_r, new_accum)
    return [_update(em, [var, lr, grad, mom, acc], var_r, new_var), acc]


@lowers("ApplyAdamD")
def _adam(em: Emitter, op: AscendOp) -> list[SSAValue]:
    var, m, v, b1p, b2p, lr, b1, b2, eps, grad = op.operands
    var_r, m_r, v_r = op.results
    nesterov = bool(attr(op, "use_nesterov"))

    def one(s: Scalar, x: SSAValue) -> SSAValue:
        return s.const(1.0, x.type)

    def new_m(s: Scalar, a: list[SSAValue]) -> SSAValue:
        m_, g, b1_ = a
        return s.addf(m_, s.mulf(s.subf(g, m_), s.subf(one(s, b1_), b1_)))

    def new_v(s: Scalar, a: list[SSAValue]) -> SSAValue:
        v_, g, b2_ = a
        return s.addf(v_, s.mulf(s.subf(s.mulf(g, g), v_), s.subf(one(s, b2_), b2_)))

    def new_var(s: Scalar, a: list[SSAValue]) -> SSAValue:
        x, m_, v_, b1p_, b2p_, lr_, b1_, eps_, g = a
        lr_t = s.divf(s.mulf(lr_, s.sqrt(s.subf(one(s, b2p_), b2p_))), s.subf(one(s, b1p_), b1p_))
        direction = s.addf(s.mulf(m_, b1_), s.mulf(g, s.subf(one(s, b1_), b1_))) if nesterov else m_
        return s.subf(x, s.divf(s.mulf(lr_t, direction), s.addf(s.sqrt(v_), eps_)))

    m_new = _update(em, [m, grad, b1], m_r, new_m)
    v_new = _update(em, [v, grad, b2], v_r, new_v)
    return [_update(em, [var, m_new, v_new, b1p, b2p, lr, b1, eps, grad], var_r, new_var), m_new, v_new]
