"""Run one graph under each CANN precision mode and measure its error against float64.

For every mode, :func:`compare_modes` copies the module, runs the
`ascend-precision` pass with that mode, executes the result on the same inputs
and compares its outputs with the *reference*: the original graph executed with
every float op in float64 (:meth:`Program.from_module` with `reference=True`).

Errors are normwise over all float outputs together, so that elements near zero
do not dominate: ``max_rel_err = max|y - r| / max|r|`` and
``mean_rel_err = mean|y - r| / mean|r|`` (inf when an output holds inf/NaN
that the reference does not). A mode whose pass fails (must_keep_origin_dtype
with an fp16-only Conv2D in an fp32 graph) gives ``ok=False`` and the pass's
one-line error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.dialects.ascend import AscendOp, op_type
from ascend_mp.dtypes import LOW_FLOATS, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.interpreter.runner import Program
from ascend_mp.modes import V1_MODES

ALL_V1_MODES: tuple[str, ...] = V1_MODES
"""Every `precision_mode` value (aliases included: they must agree)."""


@dataclass(frozen=True)
class ModeResult:
    """One mode's outcome. The numbers are NaN / 0 when `ok` is False."""

    mode: str
    ok: bool
    error: str | None
    max_rel_err: float
    mean_rel_err: float
    peak_bytes: int
    low_precision_ops: int
    """Ops (Cast and Const aside) with an f16/bf16 operand or result."""
    casts: int
    """Casts the pass inserted."""


def relative_errors(outputs: Sequence[np.ndarray[Any, Any]], reference: Sequence[np.ndarray[Any, Any]]) -> tuple[float, float]:
    """(max, mean) normwise relative error of the float outputs against the reference."""
    diffs: list[np.ndarray[Any, Any]] = []
    refs: list[np.ndarray[Any, Any]] = []
    for y, r in zip(outputs, reference):
        if r.dtype.kind != "f":
            continue
        r64 = r.astype(np.float64).reshape(-1)
        y64 = y.astype(np.float64).reshape(-1)
        with np.errstate(all="ignore"):
            d = np.abs(y64 - r64)
        same = (y64 == r64) | (np.isnan(y64) & np.isnan(r64))  # inf == inf and NaN vs NaN are no error
        diffs.append(np.where(same, 0.0, np.where(np.isnan(d), np.inf, d)))
        refs.append(np.abs(np.where(np.isfinite(r64), r64, 0.0)))
    if not diffs:
        return 0.0, 0.0
    d, r = np.concatenate(diffs), np.concatenate(refs)
    if d.size == 0:
        return 0.0, 0.0
    tiny = np.finfo(np.float64).tiny
    return float(d.max() / max(float(r.max()), tiny)), float(d.mean() / max(float(r.mean()), tiny))


def _count(module: ModuleOp) -> tuple[int, int]:
    """(low-precision ops, casts) of a module."""
    low = casts = 0
    for op in module.walk():
        if not isinstance(op, AscendOp):
            continue
        kind = op_type(op)
        if kind == "Cast":
            casts += 1
        elif kind != "Const" and any(tensor_dtype(v.type) in LOW_FLOATS for v in (*op.operands, *op.results)):
            low += 1
    return low, casts


def _clone(module: ModuleOp) -> ModuleOp:
    """A copy of `module` whose ops keep their source locations (for the pass's error messages)."""
    from ascend_mp import ir

    clone = module.clone()
    locations = getattr(ir, "_LOCATIONS", None)  # ascend_mp.ir has no public way to copy them yet
    if locations is not None:
        for original, copy in zip(module.walk(), clone.walk()):
            if original in locations:
                locations[copy] = locations[original]
    return clone


def compare_modes(
    module: ModuleOp,
    func_name: str,
    inputs: Sequence[np.ndarray[Any, Any]],
    modes: Sequence[str] = ALL_V1_MODES,
    **pass_options: Any,
) -> list[ModeResult]:
    """Run `func_name` under each precision mode; `pass_options` go to the precision pass
    (soc, op_info, modify_mixlist, keep_dtype, customize_dtypes)."""
    from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES

    if "ascend-precision" not in PASSES:
        raise AscendError("the ascend-precision pass is not available in this build")
    precision = PASSES["ascend-precision"]()
    reference = Program.from_module(module, reference=True).run(func_name, *inputs)
    _, original_casts = _count(module)
    results: list[ModeResult] = []
    for mode in modes:
        clone = _clone(module)
        try:
            precision(mode=mode, **pass_options).apply(make_context(), clone)
            program = Program.from_module(clone)
            outputs = program.run(func_name, *inputs, track_memory=True)
        except (AscendError, PassFailedException, DiagnosticException, VerifyException) as e:
            message = " ".join(str(e).split())
            results.append(ModeResult(mode, False, message, math.nan, math.nan, 0, 0, 0))
            continue
        max_err, mean_err = relative_errors(outputs, reference)
        low, casts = _count(clone)
        results.append(ModeResult(mode, True, None, max_err, mean_err, program.peak_bytes, low, casts - original_casts))
    return results


def format_table(results: Sequence[ModeResult]) -> str:
    """The comparison as a fixed-width text table (failed modes show their error)."""
    header = f"{'mode':<26} {'max_rel_err':>11} {'mean_rel_err':>12} {'peak_bytes':>10} {'low_ops':>7} {'casts':>5}"
    lines = [header, "-" * len(header)]
    for r in results:
        if r.ok:
            lines.append(
                f"{r.mode:<26} {r.max_rel_err:>11.3e} {r.mean_rel_err:>12.3e} {r.peak_bytes:>10d} {r.low_precision_ops:>7d} {r.casts:>5d}"
            )
        else:
            lines.append(f"{r.mode:<26} error: {r.error}")
    return "\n".join(lines)
