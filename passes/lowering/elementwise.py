"""Elementwise ops (BiasAdd, arithmetic, comparisons, logic, Select, activations) as one `linalg.generic`
each: operands broadcast through the indexing maps, float16/bfloat16 widened to float32, one rounding."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import i1
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import (
    Emitter,
    LoweringError,
    Scalar,
    amap,
    attr,
    broadcast_map,
    compute_type,
    dim,
    elem,
    is_float,
    shape,
)
from ascend_mp.passes.lowering.registry import lowers

Fn = Callable[[Scalar, list[SSAValue]], SSAValue]


def _elementwise(em: Emitter, op: AscendOp, fn: Fn, float_only: bool = False) -> list[SSAValue]:
    y = op.results[0]
    types = [elem(v) for v in op.operands] + [elem(y)]
    compute = compute_type(*types)
    if compute is None and float_only:
        raise LoweringError("lowers float tensors only")
    return [em.map(list(op.operands), shape(y), elem(y), fn, compute)]


def _int_or_float(fop: type, iop: type) -> Fn:
    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        return s.add((fop if is_float(a[0].type) else iop)(a[0], a[1]))

    return fn


_BINARY: dict[str, Fn] = {
    "Add": _int_or_float(arith.AddfOp, arith.AddiOp),
    "Sub": _int_or_float(arith.SubfOp, arith.SubiOp),
    "Mul": _int_or_float(arith.MulfOp, arith.MuliOp),
    "Maximum": _int_or_float(arith.MaximumfOp, arith.MaxSIOp),
    "Minimum": _int_or_float(arith.MinimumfOp, arith.MinSIOp),
}


def _binary(fn: Fn) -> Callable[[Emitter, AscendOp], list[SSAValue]]:
    return lambda em, op: _elementwise(em, op, fn)


for _name, _fn in _BINARY.items():
    lowers(_name)(_binary(_fn))


def _float_binary(fn: Fn) -> Callable[[Emitter, AscendOp], list[SSAValue]]:
    return lambda em, op: _elementwise(em, op, fn, float_only=True)


lowers("RealDiv")(_float_binary(lambda s, a: s.divf(a[0], a[1])))
lowers("Pow")(_float_binary(lambda s, a: s.add(math.PowFOp(a[0], a[1]))))


def _compare(fpred: str, ipred: str) -> Callable[[Emitter, AscendOp], list[SSAValue]]:
    def lower(em: Emitter, op: AscendOp) -> list[SSAValue]:
        types = [elem(v) for v in op.operands]
        compute = compute_type(*types)  # float16 compared widened (exact)

        def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
            if is_float(a[0].type):
                return s.cmpf(a[0], a[1], fpred)
            return s.add(arith.CmpiOp(a[0], a[1], ipred))

        return [em.map(list(op.operands), shape(op.results[0]), elem(op.results[0]), fn, compute)]

    return lower


lowers("Greater")(_compare("ogt", "sgt"))
lowers("Less")(_compare("olt", "slt"))
lowers("Equal")(_compare("oeq", "eq"))


def _logical(make: Callable[[Scalar, list[SSAValue]], SSAValue]) -> Callable[[Emitter, AscendOp], list[SSAValue]]:
    def lower(em: Emitter, op: AscendOp) -> list[SSAValue]:
        return [em.map(list(op.operands), shape(op.results[0]), i1, make)]

    return lower


lowers("LogicalAnd")(_logical(lambda s, a: s.add(arith.AndIOp(a[0], a[1]))))
lowers("LogicalOr")(_logical(lambda s, a: s.add(arith.OrIOp(a[0], a[1]))))
lowers("LogicalNot")(_logical(lambda s, a: s.add(arith.XOrIOp(a[0], s.const(1, i1)))))


@lowers("Select", "SelectV2")
def _select(em: Emitter, op: AscendOp) -> list[SSAValue]:
    cond, x1, x2 = op.operands
    y = op.results[0]
    out = shape(y)
    maps = None
    if op.name == "ascend.Select" and len(shape(cond)) == 1 and len(out) > 1:  # TF Select: a vector picks rows
        maps = [amap(len(out), [dim(0)]), broadcast_map(shape(x1), out), broadcast_map(shape(x2), out)]
    return [em.map([cond, x1, x2], out, elem(y), lambda s, a: s.select(a[0], a[1], a[2]), None, maps)]


@lowers("BiasAdd")
def _bias_add(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, b = op.operands
    y = op.results[0]
    out = shape(y)
    rank = len(out)
    fmt = str(attr(op, "data_format"))
    axis = 1 if fmt.startswith("NC") and rank > 2 else rank - 1
    maps = [amap(rank, [dim(i) for i in range(rank)]), amap(rank, [dim(axis)])]
    compute = compute_type(elem(x), elem(b), elem(y))
    return [em.map([x, b], out, elem(y), lambda s, a: _add(s, a[0], a[1]), compute, maps)]


def _add(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    return s.addf(a, b) if is_float(a.type) else s.add(arith.AddiOp(a, b))


def _unary(fn: Fn, float_only: bool = True) -> Callable[[Emitter, AscendOp], list[SSAValue]]:
    return lambda em, op: _elementwise(em, op, fn, float_only)


def _zero_like(s: Scalar, v: SSAValue) -> SSAValue:
    return s.const(0, v.type)


def _neg(s: Scalar, a: list[SSAValue]) -> SSAValue:
    if is_float(a[0].type):
        return s.add(arith.NegfOp(a[0]))
    return s.add(arith.SubiOp(_zero_like(s, a[0]), a[0]))


def _relu(s: Scalar, a: list[SSAValue]) -> SSAValue:
    x = a[0]
    return s.maxf(x, _zero_like(s, x)) if is_float(x.type) else s.add(arith.MaxSIOp(x, _zero_like(s, x)))


def _sigmoid(s: Scalar, a: list[SSAValue]) -> SSAValue:
    # as the interpreter: e = exp(-|x|), r = 1/(1+e); x >= 0: r, else e*r (nothing overflows)
    x = a[0]
    t = x.type
    e = s.exp(s.add(arith.NegfOp(s.add(math.AbsFOp(x)))))
    r = s.divf(s.const(1.0, t), s.addf(e, s.const(1.0, t)))
    return s.select(s.cmpf(x, s.const(0.0, t), "oge"), r, s.mulf(e, r))


_GELU_C = pymath.sqrt(2.0 / pymath.pi)
_GELU_A = 0.044715


def _gelu(s: Scalar, a: list[SSAValue]) -> SSAValue:
    # CANN's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    x = a[0]
    t = x.type
    x3 = s.mulf(s.mulf(x, x), x)
    inner = s.mulf(s.const(_GELU_C, t), s.addf(x, s.mulf(s.const(_GELU_A, t), x3)))
    return s.mulf(s.mulf(s.const(0.5, t), x), s.addf(s.const(1.0, t), s.tanh(inner)))


lowers("Neg")(_unary(_neg, float_only=False))
lowers("Relu")(_unary(_relu, float_only=False))
lowers("Square")(
    _unary(
        lambda s, a: s.mulf(a[0], a[0]) if is_float(a[0].type) else s.add(arith.MuliOp(a[0], a[0])), float_only=False
    )
)
lowers("Relu6")(_unary(lambda s, a: s.minf(s.maxf(a[0], s.const(0, a[0].type)), s.const(6, a[0].type))))
lowers("Erf")(_unary(lambda s, a: s.add(math.ErfOp(a[0]))))
lowers("Gelu")(_unary(_gelu))
lowers("Sigmoid")(_unary(_sigmoid))
lowers("Tanh")(_unary(lambda s, a: s.tanh(a[0])))
lowers("Exp")(_unary(lambda s, a: s.exp(a[0])))
lowers("Log")(_unary(lambda s, a: s.log(a[0])))
lowers("Sqrt")(_unary(lambda s, a: s.sqrt(a[0])))
lowers("Rsqrt")(_unary(lambda s, a: s.divf(s.const(1.0, a[0].type), s.sqrt(a[0]))))
lowers("Floor")(_unary(lambda s, a: s.add(math.FloorOp(a[0]))))


@lowers("LeakyRelu")
def _leaky_relu(em: Emitter, op: AscendOp) -> list[SSAValue]:
    slope = float(attr(op, "negative_slope"))

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        x = a[0]
        return s.select(s.cmpf(x, s.const(0, x.type), "ogt"), x, s.mulf(x, s.const(slope, x.type)))

    return _elementwise(em, op, fn, float_only=True)


@lowers("HardSigmoid")
def _hard_sigmoid(em: Emitter, op: AscendOp) -> list[SSAValue]:
    alpha, beta = float(attr(op, "alpha")), float(attr(op, "beta"))

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        x = a[0]
        t = x.type
        v = s.addf(s.mulf(x, s.const(alpha, t)), s.const(beta, t))
        return s.minf(s.maxf(v, s.const(0, t)), s.const(1, t))

    return _elementwise(em, op, fn, float_only=True)


@lowers("ClipByValue")
def _clip(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return _elementwise(em, op, lambda s, a: s.minf(s.maxf(a[0], a[1]), a[2]), float_only=True)
