"""`ascend-precision`: CANN's precision modes and the framework policies as an xDSL pass (docs/design.md §5, §11).

What to try for each op comes from a rule object (`ascend_mp.policies`: one per CANN mode in
`CANN_MODES`, the `tf`, `mindspore` and `torch` policies in `POLICIES`); everything else is here,
once: signatures, kernel choice, gray-op voting, the overrides (customize_dtypes, the `keep_dtype`
unit property, keep_dtype, to_float), casts and the report.

The pass decides, for every ascend op, which of its kernels runs (a dtype per
operand definition and per result, an engine), then rewrites the IR to match:
results are retyped in place and `ascend.Cast` ops are inserted where a value
arrives in another dtype than its consumer runs in. Only float tensors change;
the user's ops are never deleted, merged or reordered, and the function's
signature is kept (casts back are inserted before `func.return`).

```mlir
// before, -p 'ascend-precision{mode=allow_mix_precision}'
func.func @f(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}
// after: MatMulV2 is white (fp16), Relu is gray and follows it
  %0 = ascend.Cast %x : (tensor<8x16xf32>) -> tensor<8x16xf16>
  %1 = ascend.Cast %w : (tensor<16x4xf32>) -> tensor<16x4xf16>
  %y = ascend.MatMulV2 %0, %1 : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %r = ascend.Relu %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %2 = ascend.Cast %r : (tensor<8x4xf16>) -> tensor<8x4xf32>
  func.return %2 : tensor<8x4xf32>
```

It works in two steps, both linear in the number of ops, decide then rewrite. The package reads in order:

1. `options.py`: :class:`PrecisionOptions` (defined in `ascend_mp.precision_options`, so tools read the flags
   without loading a pass), the one dataclass of the pass's options (the pass, :func:`run_precision`, the ATC
   flags and the trainer all read it), validated once into a :class:`PrecisionConfig` (:func:`resolve_options`).
2. `kernels.py`: an op's signature, the kernels that fit it, the best kernel for a step of the rule.
3. `decide.py`: the decision of one op as a function of an explicit decision key (op class, deciding
   properties, matching overrides, operand states, result dtypes), computed once per key.
4. `walk.py`: :func:`decide_precision` walks the module once in program order, keeps every value's state, looks
   each op's key up (or decides it) and records the effects in a :class:`PrecisionPlan` (`plan.py`, with the
   report types).
5. `rewrite.py`: :func:`apply_plan` applies the plan in one loop over the ops it changes (the patterns of
   :func:`populate_precision_patterns` do the same inside other pipelines; no DCE): casts shared per (value,
   dtype), exact round trips folded, results retyped in place, low-only constants stored low.
6. `pass_.py`: the `AscendPrecisionPass` ModulePass and :func:`run_precision`.

Running the pass twice gives the same IR as running it once.

The names below are imported on first use, so that tools reading only the options start fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ascend_mp.passes.precision.decide import Decider
    from ascend_mp.passes.precision.kernels import Signature
    from ascend_mp.passes.precision.options import (
        PrecisionConfig,
        PrecisionOptions,
        load_config,
        resolve_mode,
        resolve_options,
    )
    from ascend_mp.passes.precision.pass_ import AscendPrecisionPass, run_precision
    from ascend_mp.passes.precision.plan import OpDecision, PrecisionPlan, PrecisionReport
    from ascend_mp.passes.precision.rewrite import (
        ApplyAscendDecision,
        KeepForeignOperands,
        apply_plan,
        populate_precision_patterns,
        precision_rewrite,
    )
    from ascend_mp.passes.precision.walk import decide_precision

_HOMES = {
    "PrecisionOptions": "options",
    "PrecisionConfig": "options",
    "load_config": "options",
    "resolve_options": "options",
    "resolve_mode": "options",
    "Signature": "kernels",
    "Decider": "decide",
    "OpDecision": "plan",
    "PrecisionPlan": "plan",
    "PrecisionReport": "plan",
    "decide_precision": "walk",
    "ApplyAscendDecision": "rewrite",
    "KeepForeignOperands": "rewrite",
    "apply_plan": "rewrite",
    "populate_precision_patterns": "rewrite",
    "precision_rewrite": "rewrite",
    "AscendPrecisionPass": "pass_",
    "run_precision": "pass_",
}
"""Each exported name -> the module of this package that defines it."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ApplyAscendDecision",
    "AscendPrecisionPass",
    "Decider",
    "KeepForeignOperands",
    "OpDecision",
    "PrecisionConfig",
    "PrecisionOptions",
    "PrecisionPlan",
    "PrecisionReport",
    "Signature",
    "apply_plan",
    "decide_precision",
    "load_config",
    "populate_precision_patterns",
    "precision_rewrite",
    "resolve_mode",
    "resolve_options",
    "run_precision",
]
