"""The table of lowerings: ascend op name -> a function that emits the op's upstream replacement."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import Emitter

Lowering = Callable[[Emitter, AscendOp], Sequence[SSAValue]]

LOWERINGS: dict[str, Lowering] = {}
"""`ascend.<Type>` -> its lowering (one value per result of the op)."""


def lowers(*types: str) -> Callable[[Lowering], Lowering]:
    """Register a lowering for CANN op types (`"Add"` registers `ascend.Add`)."""

    def register(fn: Lowering) -> Lowering:
        for t in types:
            name = f"ascend.{t}"
            assert name not in LOWERINGS, f"two lowerings for {name}"
            LOWERINGS[name] = fn
        return fn

    return register
