"""The float status ops as an explicit overflow flag. Ascend's register is set when an AI Core kernel
(every op but Const and the status ops) writes inf/NaN into a float result, NPUClearFloatStatus clears
it and NPUGetFloatStatus returns a tensor<8xf32> whose element 0 is 1.0 when it is set. Lowered, the
register is a 0-d i1 tensor threaded through the function in program order: the OR of "any
non-finite" over the float results computed since the last clear (a :class:`StatusTracker` per
function, kept by the pass and handed to each op's :class:`Emitter`)."""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IndexType, TensorType, i1
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringError,
    Scalar,
    amap,
    elem,
    identity,
    is_float,
    shape,
)
from ascend_mp.passes.lowering.registry import lowers

UNWATCHED = frozenset(
    {"ascend.Const", "ascend.NPUAllocFloatStatus", "ascend.NPUClearFloatStatus", "ascend.NPUGetFloatStatus"}
)
"""Ops whose results never set the register."""


def any_nonfinite(em: Emitter, x: SSAValue) -> SSAValue:
    """A 0-d i1 tensor: whether `x` holds an inf or a NaN."""
    rank = len(shape(x))
    acc = em.fill([], i1, 0)

    def body(s: Scalar) -> list[SSAValue]:
        v = s.arg(0)
        nan = s.cmpf(v, v, "uno")
        inf = s.cmpf(s.add(math.AbsFOp(v)), s.const(float("inf"), v.type), "oeq")
        return [s.add(arith.OrIOp(s.arg(1), s.add(arith.OrIOp(nan, inf))))]

    return em.generic([(x, identity(rank))], [(acc, amap(rank, []))], [REDUCTION] * rank, body)[0]


class StatusTracker:
    """The register of one function while the pass lowers its ops in order."""

    def __init__(self) -> None:
        self.flag: SSAValue | None = None
        """0-d i1 tensor, or None while clear."""

    def observe(self, em: Emitter, op_name: str, values: list[SSAValue]) -> None:
        """Fold the float results of an op just lowered into the flag."""
        if op_name in UNWATCHED:
            return
        for v in values:
            if isinstance(v.type, TensorType) and is_float(elem(v)):
                check = any_nonfinite(em, v)
                self.flag = (
                    check
                    if self.flag is None
                    else em.map([self.flag, check], [], i1, lambda s, a: s.add(arith.OrIOp(a[0], a[1])))
                )

    def clear(self) -> None:
        self.flag = None

    def buffer(self, em: Emitter, result: SSAValue) -> SSAValue:
        """The NPUGetFloatStatus buffer: element 0 is 1.0 when the flag is set."""
        t = elem(result)
        if self.flag is None:
            return em.fill(shape(result), t, 0.0)
        flag = self.flag

        def body(s: Scalar) -> list[SSAValue]:
            first = s.add(arith.CmpiOp(s.index(0), s.add(arith.ConstantOp.from_int_and_width(0, IndexType())), "eq"))
            on = s.add(arith.AndIOp(first, s.arg(0)))
            return [s.select(on, s.const(1.0, t), s.const(0.0, t))]

        init = em.empty(shape(result), t)
        n = len(shape(result))
        return em.generic([(flag, amap(n, []))], [(init, identity(n))], [PARALLEL] * n, body)[0]


def _tracker(em: Emitter, op: AscendOp) -> StatusTracker:
    if em.status is None:
        raise LoweringError("needs the function's float status (lowered only by convert-ascend-to-linalg)")
    return em.status  # pyright: ignore[reportReturnType]  # Emitter.status is typed object (emit.py does not import this module); it holds a StatusTracker


@lowers("NPUAllocFloatStatus")
def _alloc(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return [em.fill(shape(op.results[0]), elem(op.results[0]), 0.0)]


@lowers("NPUClearFloatStatus")
def _clear(em: Emitter, op: AscendOp) -> list[SSAValue]:
    if em.status is not None:
        _tracker(em, op).clear()
    return [em.fill(shape(op.results[0]), elem(op.results[0]), 0.0)]


@lowers("NPUGetFloatStatus")
def _get(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return [_tracker(em, op).buffer(em, op.results[0])]
