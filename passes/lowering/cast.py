"""Constants and casts: `ascend.Const` is an `arith.constant` holding the same elements attribute (a
`dense_resource` blob stays a blob, except a scalar, which becomes a literal); `ascend.Cast` is one `arith` conversion per element (extf/truncf
round to nearest even, fptosi truncates toward zero, a bool is `!= 0`)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseResourceAttr
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.emit import dense, dtype
from ascend_mp.passes.lowering.emit import Emitter, elem
from ascend_mp.passes.lowering.registry import lowers
from ascend_mp.resources import resource_array


@lowers("Const")
def _const(em: Emitter, op: AscendOp) -> list[SSAValue]:
    value = op.properties["value"]
    if isinstance(value, DenseResourceAttr) and (array := resource_array(value)).ndim == 0:
        # a scalar blob becomes a literal: IREE 3.13's CUDA pipeline aborts on a scalar dense_resource operand
        # of linalg.generic. Non-finite values print as hex bit patterns (`0xfc00`), which upstream MLIR
        # reads exactly (xDSL 0.74 does not: this output is for upstream tools).
        value = dense(array, dtype(op.results[0]))
    return [em.add(arith.ConstantOp(value, op.results[0].type))]  # pyright: ignore[reportArgumentType]  # a Const's value is a dense or dense_resource attr (ConstOp's constraint)


@lowers("Cast")
def _cast(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return [em.convert(op.operands[0], elem(op.results[0]))]
