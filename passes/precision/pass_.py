"""The `ascend-precision` ModulePass and :func:`run_precision`, its Python entry point."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ascend_mp.errors import AscendError, AscendPassError
from ascend_mp.passes.precision.options import PrecisionOptions, resolve_options
from ascend_mp.passes.precision.plan import PrecisionReport
from ascend_mp.passes.precision.rewrite import precision_rewrite


def run_precision(module: ModuleOp, options: PrecisionOptions | None = None, **fields: Any) -> PrecisionReport:
    """Run the precision pass on `module` in place and return what it decided. The options are a
    :class:`PrecisionOptions`, or its fields as keywords (`mode="allow_mix_precision", report="r.json"`)."""
    if options is None:
        options = PrecisionOptions(**fields)
    elif fields:
        raise TypeError("run_precision takes a PrecisionOptions or its fields as keywords, not both")
    result = precision_rewrite(module, resolve_options(options)).report()
    if options.report is not None:
        result.write(options.report)
    return result


@dataclass(frozen=True)
class AscendPrecisionPass(PrecisionOptions, ModulePass):
    """CANN precision modes and framework policies: choose each op's kernel dtypes and insert the casts.

    Options are ATC's (:class:`PrecisionOptions`): `mode` (`precision_mode`) or `mode_v2` (`precision_mode_v2`),
    the override files `modify_mixlist`, `keep_dtype`, `customize_dtypes`, the SoC and an optional op-info table,
    and `report`, a JSON file of the per-op decisions; and the policy options `policy`, `level`, `amp_dtype`,
    `tf_lists`, `to_float` (docs/design.md §11). One pass object writes one report covering every module it ran
    on (the chunks of `--split-input-file`).
    """

    name = "ascend-precision"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:  # a bad option, file or environment variable: an xDSL diagnostic too (plain xdsl-opt prints it)
            config = resolve_options(self)
        except AscendPassError:
            raise
        except AscendError as e:
            raise AscendPassError(str(e)) from None
        plan = precision_rewrite(op, config, records=self.report is not None)
        if self.report is not None:
            done = _REPORTS.get(id(self))
            if done is not None and done[0]() is self:
                report = done[1].merge(plan.report())
            else:
                report = plan.report()
                weakref.finalize(self, _REPORTS.pop, id(self), None)
            _REPORTS[id(self)] = (weakref.ref(self), report)
            report.write(self.report)


_REPORTS: dict[int, tuple[weakref.ref[AscendPrecisionPass], PrecisionReport]] = {}
"""The report each live pass object has written so far (dropped with the object)."""
