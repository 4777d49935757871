"""`ascend-impl-mode`: record CANN's operator implementation mode on each op (`impl_mode`).

The options are ATC's `--op_select_implmode`, `--optypelist_for_implmode` and
`--op_precision_mode` (an ini file; see `ascend_mp.implmode`). An op an option speaks about
gets `impl_mode = "<mode>"`; high_precision (the default) is not written (an `impl_mode` the
op had is removed); ops no option names keep what they have. The interpreter runs
high_performance ops with their intermediate steps in the op's dtype (docs/design.md §6).

```mlir
// -p 'ascend-impl-mode{op-select-implmode=high_performance}'
%0 = ascend.Exp %x : (tensor<4xf16>) -> tensor<4xf16>
// after
%0 = ascend.Exp %x {impl_mode = "high_performance"} : (tensor<4xf16>) -> tensor<4xf16>
```

Running the pass twice gives the same IR as running it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ascend_mp.dialects.ascend import OPS_BY_TYPE, AscendOp, op_type
from ascend_mp.errors import AscendPassError
from ascend_mp.implmode import DEFAULT_MODE, ImplModeConfig, load_impl_modes


@dataclass(frozen=True)
class ImplModePass(ModulePass):
    """Set each op's `impl_mode` from ATC's implementation-mode options."""

    name = "ascend-impl-mode"

    op_select_implmode: str | None = None
    """high_precision, high_performance, high_precision_for_all or high_performance_for_all."""
    optypelist_for_implmode: str | None = None
    """A comma list of op types `op_select_implmode` applies to."""
    op_precision_mode: str | None = None
    """An ini file: `OpType=mode` lines, `[ByOpType]` / `[ByNodeName]` sections."""
    _config: list[ImplModeConfig] = field(default_factory=list[ImplModeConfig], init=False, repr=False, compare=False)

    def config(self) -> ImplModeConfig:
        """The loaded options (read once per pass object)."""
        if not self._config:
            self._config.append(
                load_impl_modes(
                    self.op_select_implmode,
                    self.optypelist_for_implmode,
                    self.op_precision_mode,
                    OPS_BY_TYPE,
                )
            )
        return self._config[0]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ascend_mp.errors import AscendError

        try:
            config = self.config()
        except AscendError as e:
            raise AscendPassError(str(e)) from None
        names: set[str] = set()
        for child in op.walk():
            if not isinstance(child, AscendOp):
                continue
            name = child.node_name.data if child.node_name is not None else None
            if name is not None:
                names.add(name)
            mode = config.mode_for(op_type(child), name)
            if mode is None:
                continue
            if mode == DEFAULT_MODE:
                child.properties.pop("impl_mode", None)
            else:
                child.properties["impl_mode"] = StringAttr(mode)
        _warn_unknown_names(config, names)


def _warn_unknown_names(config: ImplModeConfig, names: set[str]) -> None:
    import logging

    if config.precision is None:
        return
    for name in config.precision.by_name:
        if name not in names:
            logging.getLogger("ascend_mp").warning(
                "%s: [ByNodeName] '%s' names no op of the module", config.precision.path, name
            )
