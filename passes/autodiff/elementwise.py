"""Gradient rules of the elementwise ops."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, dtype, shape
from ascend_mp.passes.autodiff.base import GradContext, Grads, binary_operands, broadcast_to, rule, unary, unbroadcast


@rule(A.BiasAddOp)
def _bias_add(c: GradContext) -> Grads:
    op, e = c.op, c.e
    assert isinstance(op, A.BiasAddOp)
    dy = c.dy()
    db = (
        e.one(A.BiasAddGradOp, e.cast(dy, dtype(op.bias)), type_=op.bias.type, data_format=op.data_format)
        if c.needs[1]
        else None
    )
    return [dy, db]


@rule(A.AddOp)
def _add(c: GradContext) -> Grads:
    x1, x2, dy = binary_operands(c)
    return [
        unbroadcast(c.e, dy, shape(x1)) if c.needs[0] else None,
        unbroadcast(c.e, dy, shape(x2)) if c.needs[1] else None,
    ]


@rule(A.SubOp)
def _sub(c: GradContext) -> Grads:
    x1, x2, dy = binary_operands(c)
    return [
        unbroadcast(c.e, dy, shape(x1)) if c.needs[0] else None,
        unbroadcast(c.e, c.e.neg(dy), shape(x2)) if c.needs[1] else None,
    ]


@rule(A.MulOp)
def _mul(c: GradContext) -> Grads:
    x1, x2, dy = binary_operands(c)
    e = c.e
    return [
        unbroadcast(e, e.mul(dy, x2), shape(x1)) if c.needs[0] else None,
        unbroadcast(e, e.mul(dy, x1), shape(x2)) if c.needs[1] else None,
    ]


@rule(A.RealDivOp)
def _real_div(c: GradContext) -> Grads:
    x1, x2, dy = binary_operands(c)
    e, y = c.e, c.op.results[0]
    d1 = unbroadcast(e, e.div(dy, x2), shape(x1)) if c.needs[0] else None
    d2 = unbroadcast(e, e.neg(e.div(e.mul(dy, y), x2)), shape(x2)) if c.needs[1] else None
    return [d1, d2]


@rule(A.MaximumOp, A.MinimumOp)
def _max_min(c: GradContext) -> Grads:
    """The gradient goes to the larger (smaller) operand, to x1 on ties, as in TF: a ReluGrad mask."""
    x1, x2, dy = binary_operands(c)
    e = c.e
    dy = broadcast_to(e, dy, shape(c.op.results[0]))
    # x2 wins strictly where (x2 - x1) > 0 for Maximum, (x1 - x2) > 0 for Minimum.
    margin = e.sub(x2, x1) if isinstance(c.op, A.MaximumOp) else e.sub(x1, x2)
    d2 = e.one(A.ReluGradOp, dy, margin)
    d1 = e.sub(dy, d2)
    return [
        unbroadcast(e, d1, shape(x1)) if c.needs[0] else None,
        unbroadcast(e, d2, shape(x2)) if c.needs[1] else None,
    ]


@rule(A.SelectOp)
def _select(c: GradContext) -> Grads:
    """The gradient goes to the chosen operand: d x1 = Select(c, dy, 0), d x2 = Select(c, 0, dy); none to the bool condition."""
    op, e = c.op, c.e
    assert isinstance(op, A.SelectOp)
    dy = e.cast(c.dy(), dtype(op.x1))
    zero = e.const(0.0, dtype(dy), shape(dy))
    d1 = e.one(A.SelectOp, op.condition, dy, zero, type_=dy.type) if c.needs[1] else None
    d2 = e.one(A.SelectOp, op.condition, zero, dy, type_=dy.type) if c.needs[2] else None
    return [None, d1, d2]


@rule(A.PowOp)
def _pow(c: GradContext) -> Grads:
    x1, x2, dy = binary_operands(c)
    e, y = c.e, c.op.results[0]
    d1 = d2 = None
    if c.needs[0]:
        lower = e.binary(A.PowOp, x1, e.sub(x2, e.scalar(1.0, x2)))
        d1 = unbroadcast(e, e.mul(e.mul(dy, x2), lower), shape(x1))
    if c.needs[1]:
        d2 = unbroadcast(e, e.mul(e.mul(dy, y), e.one(A.LogOp, x1)), shape(x2))
    return [d1, d2]


@rule(A.NegOp)
def _neg(c: GradContext) -> Grads:
    _, _, dy = unary(c)
    return [c.e.neg(dy)]


@rule(A.ReluOp)
def _relu(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [c.e.one(A.ReluGradOp, dy, x)]


@rule(A.LeakyReluOp)
def _leaky_relu(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [c.e.one(A.LeakyReluGradOp, dy, x, negative_slope=c.op.properties["negative_slope"])]


@rule(A.GeluOp)
def _gelu(c: GradContext) -> Grads:
    x, y, dy = unary(c)
    return [c.e.one(A.GeluGradOp, dy, x, y)]


@rule(A.SigmoidOp)
def _sigmoid(c: GradContext) -> Grads:
    _, y, dy = unary(c)
    return [c.e.one(A.SigmoidGradOp, y, dy)]


@rule(A.TanhOp)
def _tanh(c: GradContext) -> Grads:
    _, y, dy = unary(c)
    return [c.e.one(A.TanhGradOp, y, dy)]


@rule(A.ExpOp)
def _exp(c: GradContext) -> Grads:
    _, y, dy = unary(c)
    return [c.e.mul(dy, y)]


@rule(A.LogOp)
def _log(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [c.e.div(dy, x)]


@rule(A.SqrtOp)
def _sqrt(c: GradContext) -> Grads:
    _, y, dy = unary(c)
    return [c.e.div(dy, c.e.mul(y, c.e.scalar(2.0, y)))]


@rule(A.RsqrtOp)
def _rsqrt(c: GradContext) -> Grads:
    """d(x^-1/2) = -1/2 y^3."""
    _, y, dy = unary(c)
    e = c.e
    cube = e.mul(e.one(A.SquareOp, y), y)
    return [e.mul(e.mul(dy, cube), e.scalar(-0.5, y))]


@rule(A.SquareOp)
def _square(c: GradContext) -> Grads:
    x, _, dy = unary(c)
    return [c.e.mul(dy, c.e.mul(x, c.e.scalar(2.0, x)))]


# Rules composed from forward ops (CANN has no gradient op for them). A ReluGrad(g, m) keeps g
# where m > 0: the masks below are ReluGrads of margins, so a tie at a kink gets no gradient
# for the bound and all of it for x, as TF's ClipByValue gradient.


def _inside(e: Emitter, dy: SSAValue, above_low: SSAValue, below_high: SSAValue) -> SSAValue:
    """dy where both margins are positive, else 0."""
    return e.one(A.ReluGradOp, e.one(A.ReluGradOp, dy, above_low), below_high)


@rule(A.ErfOp)
def _erf(c: GradContext) -> Grads:
    """d erf(x) = 2/sqrt(pi) exp(-x^2)."""
    x, _, dy = unary(c)
    e = c.e
    gauss = e.one(A.ExpOp, e.neg(e.one(A.SquareOp, x)))
    return [e.mul(e.mul(dy, gauss), e.scalar(2.0 / math.sqrt(math.pi), x))]


@rule(A.Relu6Op)
def _relu6(c: GradContext) -> Grads:
    """dy where 0 < x < 6."""
    x, _, dy = unary(c)
    e = c.e
    return [_inside(e, dy, x, e.sub(e.scalar(6.0, x), x))]


@rule(A.ClipByValueOp)
def _clip_by_value(c: GradContext) -> Grads:
    """x gets dy where min <= x <= max; min (max) gets the sum of dy where x < min (x > max)."""
    op, e = c.op, c.e
    assert isinstance(op, A.ClipByValueOp)
    x, lo, hi = op.x, op.clip_value_min, op.clip_value_max
    dy = e.cast(c.dy(), dtype(x))
    below = e.one(A.ReluGradOp, dy, broadcast_to(e, e.sub(lo, x), shape(x)))
    above = e.one(A.ReluGradOp, dy, broadcast_to(e, e.sub(x, hi), shape(x)))
    dx = e.sub(e.sub(dy, below), above) if c.needs[0] else None
    dlo = unbroadcast(e, below, shape(lo)) if c.needs[1] else None
    dhi = unbroadcast(e, above, shape(hi)) if c.needs[2] else None
    return [dx, dlo, dhi]


@rule(A.HardSigmoidOp)
def _hard_sigmoid(c: GradContext) -> Grads:
    """alpha * dy where 0 < alpha x + beta < 1."""
    x, _, dy = unary(c)
    e = c.e
    assert isinstance(c.op, A.HardSigmoidOp)
    alpha = c.op.alpha
    t = e.add(e.mul(x, e.scalar(alpha, x)), e.scalar(c.op.beta, x))
    return [e.mul(_inside(e, dy, t, e.sub(e.scalar(1.0, x), t)), e.scalar(alpha, x))]


@rule(A.SelectV2Op)
def _select_v2(c: GradContext) -> Grads:
    """As Select, with the broadcast dimensions summed back: d then = SelectV2(c, dy, 0),
    d else = SelectV2(c, 0, dy); none to the bool condition."""
    op, e = c.op, c.e
    assert isinstance(op, A.SelectV2Op)
    dy = e.cast(c.dy(), dtype(op.x1))
    zero = e.scalar(0.0, dy)
    d1 = (
        unbroadcast(e, e.one(A.SelectV2Op, op.condition, dy, zero, type_=dy.type), shape(op.x1)) if c.needs[1] else None
    )
    d2 = (
        unbroadcast(e, e.one(A.SelectV2Op, op.condition, zero, dy, type_=dy.type), shape(op.x2)) if c.needs[2] else None
    )
    return [None, d1, d2]
