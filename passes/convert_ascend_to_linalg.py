"""`convert-ascend-to-linalg`: lower every ascend op to upstream `linalg`/`arith`/`math`/`tensor`.

Run after any precision mode or policy: the lowering keeps each decided dtype exactly. Cube ops
accumulate float16/bfloat16 products in float32 and round once; other float16/bfloat16 ops compute in
float32 and round once to their dtype; Cast is one `arith` conversion; `ascend.Const` becomes an
`arith.constant` with the same (possibly `dense_resource`) elements. The output, printed in generic
form, is what `iree-compile` reads (docs/usage/lowering.md). An op without a lowering is a one-line
diagnostic naming the op and its location; nothing is dropped. The float status ops become an explicit
overflow flag (`ascend_mp.passes.lowering.status`): the OR of "any inf/NaN" over the float results
computed since the last NPUClearFloatStatus, in each function's program order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ascend_mp.errors import AscendPassError
from ascend_mp.ir import location_of

HIGH_PRECISION = "high_precision"
GET_STATUS = "ascend.NPUGetFloatStatus"


def _is_ascend(op: Operation) -> bool:
    return op.name.startswith("ascend.")


def _problem(op: Operation) -> str | None:
    """Why `op` cannot be lowered, or None."""
    from ascend_mp.passes.lowering import LOWERINGS

    if op.name not in LOWERINGS:
        return "has no lowering to linalg"
    impl = op.properties.get("impl_mode")
    mode = getattr(impl, "data", HIGH_PRECISION)
    if mode != HIGH_PRECISION:
        return f"with impl_mode '{mode}' has no lowering (only high_precision numerics are lowered)"
    return None


def check_lowerable(module: Operation, pass_name: str = "convert-ascend-to-linalg") -> None:
    """Raise the one-line diagnostic of the first op that has no lowering (checked before anything is rewritten)."""
    for o in module.walk():
        if _is_ascend(o) and (problem := _problem(o)) is not None:
            raise AscendPassError(f"{location_of(o)}: {pass_name}: {o.name} {problem}")


@dataclass(frozen=True)
class ConvertAscendToLinalgPass(ModulePass):
    """Lower the ascend ops of every function to upstream linalg/arith/math/tensor, dtypes kept."""

    name = "convert-ascend-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ascend_mp.passes.lowering import LOWERINGS, Emitter, LoweringError, StatusTracker

        check_lowerable(op, self.name)  # a failure leaves the module untouched
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            ops = [o for o in fn.walk() if _is_ascend(o)]  # program order
            # the float status register, threaded through the function only where something reads it
            status = StatusTracker() if any(o.name == GET_STATUS for o in ops) else None
            for o in ops:
                em = Emitter(status)
                try:
                    values = list(LOWERINGS[o.name](em, o))  # pyright: ignore[reportArgumentType]  # LOWERINGS holds ascend op names only, so o is an AscendOp
                    if status is not None:
                        status.observe(em, o.name, values)
                except LoweringError as e:
                    raise AscendPassError(f"{location_of(o)}: {self.name}: {o.name} {e}") from None
                Rewriter.replace_op(o, em.ops, values)
