"""Constants and casts: `ascend.Const` is an `arith.constant` holding the same elements attribute (a
`dense_resource` blob stays a blob, except a 0-d one: iree-compile 3.13 crashes on a 0-d float16 blob such
as an attention mask's -inf, so a scalar becomes a `dense<...>` literal, inf/NaN printed as their bits);
`ascend.Cast` is one `arith` conversion per element (extf/truncf
round to nearest even, fptosi truncates toward zero, a bool is `!= 0`)."""

from __future__ import annotations

from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, TensorType
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import Emitter, elem
from ascend_mp.passes.lowering.registry import lowers
from ascend_mp.resources import resource_array


@lowers("Const")
def _const(em: Emitter, op: AscendOp) -> list[SSAValue]:
    value = op.properties["value"]
    if isinstance(value, DenseResourceAttr) and isinstance(value.type, TensorType):
        if not value.type.get_shape():
            v = resource_array(value).item()
            values: list[Any] = [int(v) if isinstance(v, (int, bool)) else float(v)]
            value = DenseIntOrFPElementsAttr.from_list(value.type, values)
    return [em.add(arith.ConstantOp(value, op.results[0].type))]  # pyright: ignore[reportArgumentType]  # a Const's value is a dense or dense_resource attr (ConstOp's constraint)


@lowers("Cast")
def _cast(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return [em.convert(op.operands[0], elem(op.results[0]))]
