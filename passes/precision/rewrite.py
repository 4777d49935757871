"""The rewrite: a decided :class:`PrecisionPlan` applied to the IR, in one loop over the ops it changes.

:func:`apply_plan` is the one apply path: it visits the plan's changes in program order, casts operands to the
dtypes their kernels want and retypes results in place, without the generic driver's worklist and without dead-code
elimination. The patterns of :func:`populate_precision_patterns` apply the same changes (through the same
:func:`_apply_change`) for other pipelines that run the plan under xDSL's walker.

Casts (:func:`cast_value`): at most one per (value, dtype), shared by every consumer; an exact round trip through a
user cast (f16->f32->f16, bf16->f32->bf16) is folded instead of adding a cast; a user's earlier cast of the value to
the dtype is reused. A cast goes right before its first consumer in program order (so a function argument is not
cast at the top, and a cast back to the result dtype sits right before `func.return`); the consumers after it share
it. When that consumer is nested in a region, the cast goes right before the op of the value's block that contains
it; when it is in another block of a multi-block region, right after the value's definition. Either point dominates
every use.

Weights: a constant every use of which the plan casts to one lower float dtype is retyped to it instead of cast
(`store_low`), and `store_low_weights` converts its payload, as ATC stores such weights (docs/design.md §10).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from ascend_mp.dialects.ascend import AscendOp, CastOp, ConstOp
from ascend_mp.dtypes import LOW_FLOATS, PRECISION_RANK, dtype_name, with_dtype
from ascend_mp.ir.compat import bulk_ir
from ascend_mp.ir.fast import link_op, operands_of, quick_op, set_operands, set_type, type_of, use_sites
from ascend_mp.passes.precision.lattice import EXACT_WIDENING
from ascend_mp.passes.precision.options import PrecisionConfig
from ascend_mp.passes.precision.plan import Change, PrecisionPlan, dtype_key
from ascend_mp.passes.precision.walk import decide_and_retype
from ascend_mp.passes.store_weights import store_low_weights
from ascend_mp.policies import F32, LOW


class _DirectRewriter:
    """What the plan's rewrite needs of a rewriter (insert a cast, hear of modified ops), without the
    generic driver's worklist: :func:`apply_plan` visits each changed op once, in program order."""

    def insert(self, op: Operation, point: InsertPoint) -> None:
        link_op(op, point.block, point.insert_before)

    def notify_op_modified(self, op: Operation) -> None:
        pass

    def handle_operation_modification(self, op: Operation) -> None:
        pass

    def replace_all_uses_with(self, old: SSAValue, new: SSAValue) -> None:
        old.replace_all_uses_with(new)

    def erase(self, op: Operation) -> None:
        Rewriter.erase_op(op)


def cast_value(
    plan: PrecisionPlan,
    value: SSAValue,
    dtype: str,
    rewriter: PatternRewriter | _DirectRewriter,
    user: Operation | None = None,
    seq: int | None = None,
) -> SSAValue:
    """`value` converted to `dtype` for `user`: one shared cast per (value, dtype), exact round trips folded.

    A cast of `value` to `dtype` that the user wrote earlier in `user`'s block is reused (`seq`: `user`'s
    program-order index, looked up when not given); a new one is placed right before `user`, its first
    consumer (see :func:`_place`).
    """
    key = (id(value), dtype)
    hit = plan.casts.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    if user is not None and plan.user_casts:
        written = plan.user_casts.get((value, dtype))
        if written is not None and written.parent is user.parent:
            if seq is None:
                change = plan.change(user)
                seq = change[1] if change is not None else 0
            if plan.user_order.get(written, 0) < seq:
                plan.casts[key] = (value, written.results[0])
                return written.results[0]
    src = plan.dtype(value)
    owner = value.owner
    if type(owner) is CastOp and owner not in plan.inserted:
        inner = dtype_name(owner.x.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]  # ascend ops' operands are tensors (their verified constraints); Attribute has no element_type
        if inner == dtype and (inner, src) in EXACT_WIDENING:
            plan.casts_folded += 1
            plan.casts[key] = (value, owner.x)
            return owner.x
    if src != dtype and src in LOW and dtype in LOW:
        # No direct fp16 <-> bf16 kernel: go through fp32 (exact first step). The fp32 value may be
        # a user cast, so the second step is looked up (and shared) under its own key too.
        result = cast_value(plan, cast_value(plan, value, F32, rewriter, user, seq), dtype, rewriter, user, seq)
        plan.casts[key] = (value, result)
        return result
    cast = quick_op(CastOp, (value,), (with_dtype(value.type, dtype),))  # CastOp(...) at a fraction of the cost  # pyright: ignore[reportArgumentType]  # casts go on the dialect's values, which are tensors
    block, before, anchor = _place(plan, value, user)
    if type(rewriter) is _DirectRewriter:
        link_op(cast, block, before)
    else:
        rewriter.insert(cast, InsertPoint(block, before))
    if anchor is not None:
        plan.last_cast[anchor] = cast
    plan.inserted.add(cast)
    plan.casts_inserted += 1
    (result,) = cast.results
    plan.casts[key] = (value, result)
    return result


def _place(
    plan: PrecisionPlan, value: SSAValue, user: Operation | None
) -> tuple[Block, Operation | None, Operation | Block | None]:
    """Where the first cast of `value` goes (its block, and the op it goes before: None for the block's end), and
    the definition it follows (None: before a consumer).

    The rewrite walks in program order, so `user` is the cast's first consumer: the cast goes right
    before the op of `value`'s block that is or contains `user`. That point dominates every later
    consumer: the ones in the block (or nested in its ops) come after it, and any other block using
    `value` is dominated by the block that defines it. A `user` that is not in (or nested in) that
    block, e.g. in a sibling block of a multi-block region, puts the cast right after the definition.
    """
    anchor: Operation | Block
    if isinstance(value, OpResult):
        anchor = value.op
        block = anchor.parent
    else:
        assert isinstance(value, BlockArgument)
        anchor = block = value.block
    assert block is not None
    op = user
    while op is not None and op.parent is not block:
        op = op.parent_op()
    if op is not None:
        return block, op, None
    # After the definition, after the casts already placed there (they keep consumer order).
    last = plan.last_cast.get(anchor)
    if last is not None:
        return block, last.next_op, anchor
    if isinstance(anchor, Block):
        return block, anchor.first_op, anchor
    return block, anchor.next_op, anchor


def _apply_change(change: Change, plan: PrecisionPlan, rewriter: PatternRewriter | _DirectRewriter) -> None:
    op, seq, wanted, new, folded = change
    if folded:  # an identity user cast: its uses read its (retyped) input
        rewriter.replace_all_uses_with(op.results[0], op.operands[0])
        rewriter.erase(op)
        return
    if wanted is not None:
        _cast_operands(op, seq, wanted, plan, rewriter)
    if new is None:
        return
    results = op.results
    for j, dtype in enumerate(new):
        if dtype is not None:
            # Retype in place (the uses see the new type; xDSL's replace_value_with_new_type would build a
            # new result and move every use, about 10x the cost): the plan already decided every consumer.
            result = results[j]
            set_type(result, plan.retyped(result.type, dtype))
    rewriter.handle_operation_modification(op)


def _cast_operands(
    op: Operation,
    seq: int,
    wanted: tuple[str | None, ...],
    plan: PrecisionPlan,
    rewriter: PatternRewriter | _DirectRewriter,
) -> None:
    operands = op.operands
    changed = False
    for i, dtype in enumerate(wanted):
        if dtype is None:
            continue
        value = operands[i]
        if plan.dtype(value) == dtype:
            continue
        operands[i] = cast_value(plan, value, dtype, rewriter, op, seq)
        changed = True
    if changed:
        rewriter.notify_op_modified(op)


@dataclass(eq=False)
class ApplyAscendDecision(RewritePattern):
    """Casts an ascend op's operands to its chosen kernel's dtypes and retypes its results."""

    plan: PrecisionPlan

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AscendOp, rewriter: PatternRewriter) -> None:
        change = self.plan.change(op)
        if change is not None:
            _apply_change(change, self.plan, rewriter)


@dataclass(eq=False)
class KeepForeignOperands(RewritePattern):
    """Casts the operands of non-ascend ops (func.return, calls, ...) back to their original dtypes."""

    plan: PrecisionPlan

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, AscendOp):
            change = self.plan.change(op)
            if change is not None:
                _apply_change(change, self.plan, rewriter)


def populate_precision_patterns(plan: PrecisionPlan) -> list[RewritePattern]:
    """The patterns that apply a decided plan (for reuse by other pipelines)."""
    return [ApplyAscendDecision(plan), KeepForeignOperands(plan)]


def apply_plan(module: ModuleOp | Operation, plan: PrecisionPlan, *, store_low: bool = False) -> None:
    """Apply a plan to the module it was decided on: one program-order loop over the ops it changes, without
    dead-code elimination (what the patterns of :func:`populate_precision_patterns` do under xDSL's walker,
    without its worklist's cost). The casts it inserts are not visited (they need nothing).

    `store_low`: a constant every use of which the plan casts to one lower float dtype is not cast: its result
    is retyped to that dtype (listed in `plan.retyped_consts`; the cast is still counted as inserted) and
    `store_low_weights(..., retyped=plan.retyped_consts)` must then convert its payload. That is the IR of
    casting it and storing it low, without the cast built and erased again."""
    rewriter = _DirectRewriter()
    casts, dtypes = plan.casts, plan.dtype_cache
    low = _low_consts(plan) if store_low else {}
    for change in plan.changes:  # what _apply_change does, with the caches' hits first (the rewrite's hot path)
        op, seq, wanted, new, folded = change
        if folded:
            _apply_change(change, plan, rewriter)
            continue
        if wanted is not None:
            operands = operands_of(op)
            replaced: list[SSAValue] | None = None
            for i, (value, dtype) in enumerate(zip(operands, wanted)):
                if dtype is None:
                    continue
                hit = dtypes.get(dtype_key(type_of(value)))
                if (hit[1] if hit is not None else plan.dtype(value)) == dtype:
                    continue
                cast = casts.get((id(value), dtype))
                if cast is None and low:
                    const = low.get(id(value))
                    if const is not None:  # the first use of a constant stored low: retyped, its uses read it
                        plan.retyped_consts.append((const, value.type))
                        set_type(value, plan.retyped(value.type, dtype))
                        plan.casts_inserted += 1  # the cast it stands for (the report counts it, as before)
                        plan.casts[(id(value), dtype)] = (value, value)
                        continue
                if replaced is None:
                    replaced = list(operands)
                replaced[i] = (
                    cast[1]
                    if cast is not None and cast[0] is value
                    else cast_value(plan, value, dtype, rewriter, op, seq)
                )
            if replaced is not None:
                set_operands(op, replaced)
        if new is not None:
            for result, dtype in zip(op.results, new):
                if dtype is not None:
                    set_type(result, plan.retyped(result.type, dtype))


def _low_consts(plan: PrecisionPlan) -> dict[int, ConstOp]:
    """id of the result -> the constant, for the constants `store_low_weights` would store low after the plan's
    casts: every use is an operand the plan casts (a cast it inserts: no user cast reads the constant, so none is
    reused) to one float dtype of lower precision than the constant's."""
    found: dict[int, ConstOp] = {}
    if not plan.consts:
        return found
    by_op = {id(c[0]): c for c in plan.changes}  # ids: an op's __hash__ is a Python call
    dtypes = plan.dtype_cache
    for const in plan.consts:
        (value,) = const.results
        if value.first_use is None:
            continue
        hit = dtypes.get(dtype_key(type_of(value)))
        src = hit[1] if hit is not None else plan.dtype(value)
        if src not in PRECISION_RANK:
            continue
        target: str | None = None
        for user, index in use_sites(value):
            change = by_op.get(id(user))
            wanted = None if change is None or change[4] else change[2]
            dtype = None if wanted is None else wanted[index]
            if dtype is None or (target is not None and dtype != target):
                target = None
                break
            target = dtype
        if target in LOW_FLOATS and PRECISION_RANK[target] < PRECISION_RANK[src]:
            found[id(value)] = const
    return found


BULK_OPS = 5000
"""Modules with at least this many ops are rewritten with the garbage collector paused (`precision_rewrite`)."""


def precision_rewrite(module: ModuleOp | Operation, config: PrecisionConfig, *, records: bool = True) -> PrecisionPlan:
    """Decide and apply. `records=False` when no report is wanted (the plan then reports no ops).

    On a module of `BULK_OPS` ops or more the cyclic garbage collector is paused for the walk and the rewrite
    (`ascend_mp.ir.compat.bulk_ir`): they allocate per op into a heap that holds the whole module, and the
    collector's rescans of it made the pass grow faster than the module (`make bench`'s precision scaling row:
    exponent 1.07-1.14 with it running, 1.01-1.02 paused, on 10k and 50k-op chains). A smaller module (an imported
    resnet50: 234 ops) gains nothing and would pay the collection that ends the pause."""
    big = next(itertools.islice(module.walk(), BULK_OPS, None), None) is not None
    with bulk_ir() if big else contextlib.nullcontext():
        start = time.process_time()
        plan = decide_and_retype(module, config, records)
        apply_plan(module, plan, store_low=True)
        plan.seconds = time.process_time() - start
        # ATC stores a weight that only feeds low-precision kernels in that dtype (docs/design.md §10).
        plan.stored = store_low_weights(module, plan.inserted, plan.consts, plan.retyped_consts, others=False)
    return plan
