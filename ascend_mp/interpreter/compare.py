"""Run one graph under each CANN precision mode and measure its error against float64.

For every mode, :func:`compare_modes` copies the module, runs the
`ascend-precision` pass with that mode, executes the result on the same inputs
and compares its outputs with the *reference*: the original graph executed with
every float op in float64 (:meth:`Program.from_module` with `reference=True`).

Errors are normwise over all float outputs together, so that elements near zero
do not dominate: each element's error is ``|y - r| / max|r|``, ``max_rel_err`` the
largest and ``mean_rel_err`` the mean of them (one scale: the mean never exceeds the
max; inf when an output holds inf/NaN that the reference does not). A mode whose pass fails (must_keep_origin_dtype
with an fp16-only Conv2D in an fp32 graph) gives ``ok=False`` and the pass's
one-line error.

Over several input samples (``ascend-run --compare-modes --samples N``: seeds
s, s+1, ..., s+N-1) a mode's ``max_rel_err`` is the largest of the samples' max
errors, ``mean_max_rel_err`` the mean of them, and ``mean_rel_err`` the mean of the
samples' mean errors, so a ranking is not one sample's noise.

:func:`attribute_errors` says where a mode's error comes from: it runs the
precision-rewritten graph and the float64 reference of the original graph op by
op, pairs each rewritten op with its original (in program order; casts the pass
inserted have no original and are skipped) and reports the error of each op's
output against the reference's, in program order, with the first op whose error
exceeds a threshold: where the mode first diverges, as CANN's accuracy
comparison against a golden model shows it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from ascend_mp.dialects.ascend import AscendOp, op_type
from ascend_mp.dtypes import LOW_FLOATS, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.interpreter.numerics import DIVERGENCE_THRESHOLD
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
    samples: int = 1
    """Input samples the errors are taken over."""
    mean_max_rel_err: float = math.nan
    """The mean over the samples of each sample's max error (equals `max_rel_err` for one sample)."""


def relative_errors(
    outputs: Sequence[np.ndarray[Any, Any]], reference: Sequence[np.ndarray[Any, Any]]
) -> tuple[float, float]:
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
    scale = max(float(r.max()), np.finfo(np.float64).tiny)  # one scale for both: mean <= max
    return float(d.max() / scale), float(d.mean() / scale)


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
    *,
    more_samples: Sequence[Sequence[np.ndarray[Any, Any]]] = (),
    **pass_options: Any,
) -> list[ModeResult]:
    """Run `func_name` under each precision mode on `inputs` (and on each of `more_samples`:
    the errors are then taken over all samples); `pass_options` go to the precision pass
    (soc, op_info, modify_mixlist, keep_dtype, customize_dtypes)."""
    from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

    samples = [inputs, *more_samples]
    reference = Program.from_module(module, reference=True)
    references = [reference.run(func_name, *x) for x in samples]
    _, original_casts = _count(module)
    results: list[ModeResult] = []
    for mode in modes:
        try:
            clone = precision_rewritten(module, mode, **pass_options)
            program = Program.from_module(clone)
            errors = [
                relative_errors(program.run(func_name, *x, track_memory=True), r) for x, r in zip(samples, references)
            ]
        except (AscendError, PassFailedException, DiagnosticException, VerifyException) as e:
            message = " ".join(str(e).split())
            results.append(ModeResult(mode, False, message, math.nan, math.nan, 0, 0, 0, len(samples)))
            continue
        low, casts = _count(clone)
        maxes = [e[0] for e in errors]
        results.append(
            ModeResult(
                mode,
                True,
                None,
                max(maxes),
                float(np.mean([e[1] for e in errors])),
                program.peak_bytes,
                low,
                casts - original_casts,
                len(samples),
                float(np.mean(maxes)),
            )
        )
    return results


def precision_rewritten(module: ModuleOp, mode: str, **pass_options: Any) -> ModuleOp:
    """A copy of `module` after the precision pass in `mode` (the pass's errors propagate)."""
    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES

    if "ascend-precision" not in PASSES:
        raise AscendError("the ascend-precision pass is not available in this build")
    clone = _clone(module)
    PASSES["ascend-precision"]()(mode=mode, **pass_options).apply(make_context(), clone)  # pyright: ignore[reportCallIssue]  # PASSES is typed type[ModulePass]; this one is AscendPrecisionPass, which has `mode`
    return clone


def format_table(results: Sequence[ModeResult]) -> str:
    """The comparison as a fixed-width text table (failed modes show their error); over several
    samples a `mean_max_err` column (the mean of the samples' max errors) follows `max_rel_err`."""
    many = any(r.samples > 1 for r in results)
    extra = f" {'mean_max_err':>12}" if many else ""
    header = (
        f"{'mode':<26} {'max_rel_err':>11}{extra} {'mean_rel_err':>12} {'peak_bytes':>10} {'low_ops':>7} {'casts':>5}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        if r.ok:
            cell = f" {r.mean_max_rel_err:>12.3e}" if many else ""
            lines.append(
                f"{r.mode:<26} {r.max_rel_err:>11.3e}{cell} {r.mean_rel_err:>12.3e} {r.peak_bytes:>10d} {r.low_precision_ops:>7d} {r.casts:>5d}"
            )
        else:
            lines.append(f"{r.mode:<26} error: {r.error}")
    if many:
        lines.append(
            f"errors over {max(r.samples for r in results)} samples: max_rel_err the largest of the samples' max "
            "errors, mean_max_err their mean, mean_rel_err the mean of the samples' mean errors"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Per-op error attribution
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpError:
    """One op of the rewritten graph against its original in the float64 reference run."""

    index: int
    """Position of the original op in the function body (0 = first op)."""
    op: str
    """CANN op type (or `func.call`)."""
    name: str
    """The op's node name, else its first result's SSA name (`%h`), else ''."""
    location: str
    dtypes: tuple[str, ...]
    """The rewritten op's result dtypes (what the mode computed it in)."""
    max_rel_err: float
    mean_rel_err: float


@dataclass(frozen=True)
class Attribution:
    """Per-op errors of one mode, in program order."""

    mode: str
    threshold: float
    ops: list[OpError] = field(default_factory=list[OpError])

    @property
    def first_divergent(self) -> OpError | None:
        """The first op (program order) whose max error exceeds the threshold (NaN counts)."""
        return next((e for e in self.ops if not e.max_rel_err <= self.threshold), None)


def _body_ops(module: ModuleOp, func_name: str) -> list[Operation]:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == func_name and op.body.blocks:
            return [o for o in op.body.block.ops if not isinstance(o, func.ReturnOp)]
    raise AscendError(f"unknown function @{func_name}")


def _kind(op: Operation) -> str:
    return op_type(op) if isinstance(op, AscendOp) else op.name


def _property_name(op: Operation) -> str | None:
    return op.node_name.data if isinstance(op, AscendOp) and op.node_name is not None else None


def _node_name(op: Operation) -> str:
    if isinstance(op, AscendOp) and op.node_name is not None:
        return op.node_name.data
    hint = op.results[0].name_hint if op.results else None
    return f"%{hint}" if hint else ""


def pair_ops(original: Sequence[Operation], rewritten: Sequence[Operation], n_args: int) -> list[tuple[int, int]]:
    """(original index, rewritten index) of each op the precision pass kept, in program order.

    The pass inserts casts (and may fold away a cast) and keeps every other op, in order,
    with its type: ops pair in order by type; a Cast pairs only with the cast of the same
    node name or, unnamed, of the same value (looking through the casts the pass inserted,
    which have no name), so a rewritten Cast with no counterpart is one the pass inserted,
    an original Cast with none one it folded."""
    from ascend_mp.dialects.ascend import CastOp

    values: dict[SSAValue, SSAValue] = {}
    if original and rewritten:
        for a, b in zip(_args(original[0])[:n_args], _args(rewritten[0])[:n_args]):
            values[a] = b
    inserted: set[Operation] = set()

    def root(v: SSAValue | None) -> SSAValue | None:
        while v is not None and isinstance(v.owner, CastOp) and v.owner in inserted:
            v = v.owner.operands[0]
        return v

    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < len(original) and j < len(rewritten):
        o, r = original[i], rewritten[j]
        same = _kind(o) == _kind(r)
        if same and _kind(o) == "Cast":  # by node name; unnamed: by the value it casts
            on, rn = _property_name(o), _property_name(r)
            same = on == rn if on is not None else rn is None and root(values.get(o.operands[0])) is root(r.operands[0])
        if same:
            pairs.append((i, j))
            values.update(zip(o.results, r.results))
            i, j = i + 1, j + 1
        elif _kind(r) == "Cast":
            inserted.add(r)
            j += 1
        elif _kind(o) == "Cast":
            i += 1
        else:
            raise AscendError(
                f"cannot pair the rewritten {_kind(r)} with the original {_kind(o)} (op #{i}): "
                "the pass changed more than casts"
            )
    return pairs


def _args(op: Operation) -> Sequence[SSAValue]:
    block = op.parent_block()
    return block.args if block is not None else ()


def attribute_errors(
    module: ModuleOp,
    func_name: str,
    inputs: Sequence[np.ndarray[Any, Any]],
    mode: str,
    threshold: float = DIVERGENCE_THRESHOLD,
    **pass_options: Any,
) -> Attribution:
    """Each op's output error under `mode` against the float64 reference run of the original
    graph (normwise, as :func:`relative_errors`), in program order; Const ops are left out."""
    from ascend_mp.ir import location_of

    rewritten = precision_rewritten(module, mode, **pass_options)
    _, ref_steps = Program.from_module(module, reference=True).trace(func_name, *inputs)
    _, steps = Program.from_module(rewritten).trace(func_name, *inputs)
    original_ops, new_ops = _body_ops(module, func_name), _body_ops(rewritten, func_name)
    ops: list[OpError] = []
    n_args = len(_args(original_ops[0])) if original_ops else 0
    for i, j in pair_ops(original_ops, new_ops, n_args):
        o, r = original_ops[i], new_ops[j]
        if _kind(o) == "Const":
            continue
        max_err, mean_err = relative_errors(list(steps[j]), list(ref_steps[i]))
        dtypes = tuple(str(tensor_dtype(v.type)) for v in r.results)
        ops.append(OpError(i, _kind(o), _node_name(o), location_of(o), dtypes, max_err, mean_err))
    return Attribution(mode, threshold, ops)


def format_attribution(a: Attribution) -> str:
    """The attribution as a fixed-width table in program order, the first divergent op marked `>>`."""
    header = f"   {'#':>4} {'op':<26} {'name':<28} {'dtype':<9} {'max_rel_err':>11} {'mean_rel_err':>12}"
    lines = [f"per-op error against the float64 reference, mode {a.mode}:", header, "-" * len(header)]
    first = a.first_divergent
    for e in a.ops:
        mark = ">> " if e is first else "   "
        lines.append(
            f"{mark}{e.index:>4} {e.op:<26} {e.name[:28]:<28} {','.join(e.dtypes):<9} "
            f"{e.max_rel_err:>11.3e} {e.mean_rel_err:>12.3e}"
        )
    if first is None:
        lines.append(f"no op's max_rel_err exceeds {a.threshold:g}")
    else:
        label = f" {first.name}" if first.name else ""
        lines.append(
            f"first divergent op (max_rel_err > {a.threshold:g}): #{first.index} {first.op}{label} at {first.location}"
        )
    return "\n".join(lines)
