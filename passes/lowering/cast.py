"""Constants and casts: `ascend.Const` is an `arith.constant` holding the same elements attribute (a
`dense_resource` blob stays a blob); `ascend.Cast` is one `arith` conversion per element (extf/truncf
round to nearest even, fptosi truncates toward zero, a bool is `!= 0`)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import Emitter, elem
from ascend_mp.passes.lowering.registry import lowers


@lowers("Const")
def _const(em: Emitter, op: AscendOp) -> list[SSAValue]:
    value = op.properties["value"]
    return [em.add(arith.ConstantOp(value, op.results[0].type))]  # pyright: ignore[reportArgumentType]  # a Const's value is a dense or dense_resource attr (ConstOp's constraint)


@lowers("Cast")
def _cast(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return [em.convert(op.operands[0], elem(op.results[0]))]
