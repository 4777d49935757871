"""`ascend-attach-caps`: write each op's dtype capabilities and list kind into the IR.

Ops that already carry `caps` or `list` (written by hand) keep them; the others
get the operator library's, so the printed IR states what every op can run.

```mlir
// before
%0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
// after -p 'ascend-attach-caps{soc=ascend910}'
%0 = ascend.Relu %x {caps = #ascend.caps<(f16) -> f16, (f32) -> f32, (i32) -> i32, (i8) -> i8>, list = #ascend.list<gray>} : ...
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ascend_mp.dialects.ascend import AscendOp, op_type
from ascend_mp.errors import AscendError, AscendPassError
from ascend_mp.ir import location_of
from ascend_mp.opinfo import load_library


@dataclass(frozen=True)
class AttachCapsPass(ModulePass):
    """Materialise `caps` and `list` on every ascend op from the operator library."""

    name = "ascend-attach-caps"

    soc: str = "ascend910"
    """SoC whose built-in operator library is used."""
    op_info: str | None = None
    """A CANN `aic-<soc>-ops-info.json` table overriding the built-in entries."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:  # a bad SoC or table: an xDSL diagnostic too (plain xdsl-opt --verify-diagnostics prints it)
            library = load_library(self.soc, self.op_info)
        except AscendError as e:
            raise AscendPassError(str(e)) from None
        for child in op.walk():
            if isinstance(child, AscendOp):
                try:
                    info = library.info(op_type(child))
                except AscendError as e:  # a user's table without this op
                    raise AscendPassError(f"{location_of(child)}: {e}") from None
                child.properties.setdefault("caps", info.caps)
                child.properties.setdefault("list", info.list_attr)
