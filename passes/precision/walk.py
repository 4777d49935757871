"""The walk: every op in program order, its decision looked up or computed, its effect recorded in the plan.

:class:`Planner` walks the module once (producers come before consumers within a block) and keeps the **state** of
every value it meets: (its dtype in the input, its dtype after the decisions so far, its vote or None). For each
ascend op it builds the decision key from those states (`decide.py`), asks :class:`Decider` for the effect of a new
key, and records the effect: the results' states, the change the rewrite makes (casts, retyped results), and, when
a report is asked for, a record per op (names, locations and reasons are resolved only when the report is built).
User casts are decided here (retargeted, folded when they became identities, or reused), and non-ascend ops keep
their operands' dtypes (casts back are inserted before `func.return`).

Where deciding cannot fail (a context-free rule without must_keep_origin_dtype or customize_dtypes), the pass asks
the walk to retype results in place as it decides them (`retype`), and to retype a one-use constant that its use
casts to a lower float dtype instead of casting it (`store_low`): the plan then holds only the casts and folds left
to `rewrite.apply_plan`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import ConstantLike

from ascend_mp.config import CustomizeDtypes, KeepDtype
from ascend_mp.dialects.ascend import AscendOp, CapsAttr, ConstOp, ListKindAttr
from ascend_mp.dtypes import LOW_FLOATS, PRECISION_RANK
from ascend_mp.ir.fast import has_one_use, next_op, operands_of, set_type, type_of
from ascend_mp.passes.precision.decide import Decider, DecisionKey
from ascend_mp.passes.precision.kernels import OpClass, Signature, candidates, op_class, primary
from ascend_mp.passes.precision.lattice import EXACT_WIDENING, cann
from ascend_mp.passes.precision.options import PrecisionConfig
from ascend_mp.passes.precision.plan import (
    Effect,
    PrecisionPlan,
    Record,
    State,
    dtype_key,
    follows_text,
    key_owner,
    make_effect,
    name_of,
    op_location,
    operands_kept,
    own_states,
    position_of,
    value_dtype,
)

logger = logging.getLogger("ascend_mp")

_CLASSIFIED: dict[bool, dict[type[Operation], tuple[int, OpClass | None]]] = {}
"""What :meth:`Planner.classify` said of op classes, per rule kind (context-free or not)."""

_DECIDING = frozenset({"caps", "list", "keep_dtype"})
"""The properties that change an op's decision (part of the decision key)."""

_FAST, _CONST, _ASCEND, _FUNC, _OTHER = range(5)
"""How the walk handles an op class: an ascend op decided through the memo (`_CONST`: an `ascend.Const`, which the
plan also lists), one decided afresh each time (user casts, every op under a rule that reads more than the decision
key), a function (names the positions), any other op."""


def _nowhere() -> str:
    """`Planner.here` once the walk is over: no op is being decided."""
    return position_of(None, 0)


UNMATCHED_SHOWN = 5
"""Unmatched keep_dtype/customize_dtypes entries listed one warning each; more are summarised in one."""


class Planner:
    """Decides every op in one forward walk (see :func:`decide_precision`)."""

    def __init__(self, config: PrecisionConfig, records: bool = True, retype: bool = False, store_low: bool = False):
        self.config = config
        self.plan = PrecisionPlan(config, warnings=list(config.warnings))
        self.rule = config.the_rule
        self.states: dict[int, State] = {}
        """id of a value -> its state, for every value the walk has met (block arguments and results)."""
        self.type_states: dict[int, tuple[object, State]] = {}
        """:func:`dtype_key` of a type -> (the key's object, the state of a value of that type the walk knows nothing of)."""
        self.type_keys: dict[int, str] = {}
        """:func:`dtype_key` of a type (kept alive by `type_states`) -> its dtype, `?` if unmodelled (the decision key's
        result part)."""
        self.decider = Decider(config, self.here)
        self.classes = _CLASSIFIED.setdefault(self.rule.context_free, {})
        """Op class -> how the walk handles it (:meth:`classify`: it reads the class and the rule's context_free)."""
        self.memo: dict[DecisionKey, Effect] = {}
        """Decision key (`decide.py`) -> the effect every op with that key has."""
        self.warned: set[str] = set()
        self.used_names: set[str] = set()
        self.used_types: set[str] = set()
        self.info = logger.isEnabledFor(logging.INFO)
        self.seq = 0
        self.function: str | None = None
        self.count = 0
        """The current op's function and its index in the function's walk (its position without a location)."""
        self.track = config.keep_dtype is not None or config.customize_dtypes is not None
        self.overrides = self.decider.overrides
        self.records: list[Record] | None = self.plan.records if records else None
        self.retype = (
            retype and self.rule.context_free and not self.rule.keeps_origin and config.customize_dtypes is None
        )
        """Retype results in place as they are decided (their ops then need nothing more of the rewrite): asked by
        the pass, which applies the plan at once, and only where deciding cannot fail (no must_keep_origin_dtype,
        no customize_dtypes: nothing may change before an error) and the rule reads no types (context-free)."""
        self.aliases: dict[SSAValue, SSAValue] = {}
        """The results of folded user casts -> the values their uses will read."""
        self.lone: dict[int, ConstOp] | None = {} if store_low and self.retype else None
        """With `store_low` (the plan is applied with `apply_plan(store_low=True)`), where results are retyped as
        decided: id of the result -> the constant, for the constants with one use not decided yet. When that use
        casts it to a lower float dtype, the constant is retyped then (`store_lone`), as `apply_plan` would."""

    # -- helpers ---------------------------------------------------------------------------
    def warn(self, message: str) -> None:
        if message not in self.warned:
            self.warned.add(message)
            logger.warning("%s", message)
            self.plan.warnings.append(message)

    def here(self) -> str:
        return position_of(self.function, self.count)

    def type_state(self, value: SSAValue) -> State:
        """The state of a value the walk knows nothing of: its input dtype, no vote (cached per :func:`dtype_key`)."""
        type_ = value.type
        key = dtype_key(type_)
        hit = self.type_states.get(key)
        if hit is None:
            d = value_dtype(value)
            hit = self.type_states[key] = (key_owner(type_), (d, d, None))  # keeps the key's object alive
            self.type_keys[key] = "?" if d is None else d
        return hit[1]

    def state(self, value: SSAValue) -> State:
        return self.states.get(id(value)) or self.type_state(value)

    def dtype_of(self, value: SSAValue) -> str | None:
        """A value's dtype in the input (its type may have been retyped since, see `retype`)."""
        state = self.states.get(id(value))
        return state[0] if state is not None else self.type_state(value)[0]

    def dtype(self, value: SSAValue) -> str | None:
        """A value's dtype after the decisions so far."""
        return self.state(value)[1]

    def changed(self, value: SSAValue) -> bool:
        """Whether the decisions so far changed the value's dtype."""
        state = self.states.get(id(value))
        return state is not None and state[1] != state[0]

    # -- the walk --------------------------------------------------------------------------
    def run(self, module: Operation) -> PrecisionPlan:
        self.rule.prepare(module, self.decider.supports)
        try:
            self.visit(module, module)
        finally:
            # The decider asks this planner where the op it decides is (`here`): a reference cycle, broken when the
            # walk ends so that the planner and its tables are freed on return, not left to the garbage collector
            # (which then finds them during whatever runs next, e.g. the next pass of `make bench`'s imported rows).
            self.decider.where = _nowhere
        self.plan.distinct = len(self.memo)
        self.check_unused()
        if self.config.mixlist is not None:  # to-remove warnings come while the lists are read
            seen = set(self.plan.warnings)  # a set: a mixlist may name 200k unknown op types
            self.plan.warnings += [w for w in dict.fromkeys(self.config.mixlist.warnings) if w not in seen]
        return self.plan

    def visit(self, op: Operation, module: Operation) -> None:
        """Decide `op` and every op nested in it, in program order (the order of `op.walk()`)."""
        self.handle(op, module)
        for region in op.regions:
            for block in region.blocks:
                self.visit_block(block, module)

    def visit_block(self, block: Block, module: Operation) -> None:
        """Decide the ops of a block (and those nested in them). Ops of a class decided through the memo are
        handled here, inline (this loop is the pass's hot path): the op's decision key (`decide.py`) is built from
        the walk's states and looked up; :meth:`Decider.decide` runs once per new key. Three lookups are written
        out here rather than called (:func:`dtype_key` twice, `PrecisionPlan.retyped`'s cache once): `make bench`'s
        precision rows are about 5% slower through the calls."""
        states, type_state, decide = self.states, self.type_state, self.decider.decide
        for arg in block.args:
            states[id(arg)] = type_state(arg)
        get_state, type_key, type_states = states.get, self.type_keys.get, self.type_states
        classes, memo, changes, records = self.classes, self.memo, self.plan.changes, self.records
        overrides, info, retype = self.overrides, self.info, self.retype
        retyped, types, consts = self.plan.retyped, self.plan.type_cache, self.plan.consts
        seq, count = self.seq, self.count
        fast_consts = records is None and not overrides
        lone = self.lone
        op = block.first_op
        while op is not None:
            entry = classes.get(type(op))
            if entry is None:
                entry = classes[type(op)] = self.classify(op)
            what = entry[0]
            if what == _CONST and fast_consts:  # keeps its dtypes and does not vote: the state of a value it made
                seq += 1  # nothing is known of (what `effect` gives it; no report, override or region to mind)
                count += 1
                for result in op.results:
                    rtype = type_of(result)
                    hit = type_states.get(
                        id(rtype.element_type) if type(rtype) is TensorType else id(rtype)
                    )  # dtype_key
                    states[id(result)] = hit[1] if hit is not None else type_state(result)
                    if lone is not None and has_one_use(result):
                        lone[id(result)] = op  # pyright: ignore[reportArgumentType]  # what == _CONST: classify() made op's entry for a ConstOp
                consts.append(op)  # pyright: ignore[reportArgumentType]  # what == _CONST: classify() made op's entry for a ConstOp
                op = next_op(op)
                continue
            if what > _CONST or op.regions:
                self.seq, self.count = seq, count
                if op.regions:
                    self.visit(op, module)
                else:
                    self.handle(op, module)
                seq, count = self.seq, self.count
                op = next_op(op)
                continue
            seq += 1
            count += 1
            cls: OpClass = entry[1]  # pyright: ignore[reportAssignmentType]  # what <= _CONST here: a _CONST or _FAST entry, which has its OpClass
            props = op.properties
            extra: object = None
            if props and not _DECIDING.isdisjoint(props):
                caps, lst = props.get("caps"), props.get("list")
                extra = (
                    id(caps) if isinstance(caps, CapsAttr) else None,  # the op (hence its caps) lives through the walk
                    lst.data if isinstance(lst, ListKindAttr) else None,
                    "keep_dtype" in props,
                )
            tag = self.override_tag(name_of(op), cls.op_type) if overrides else None
            operands = operands_of(op)
            ins = tuple(map(get_state, map(id, operands)))
            if None in ins:  # a value the walk has not met (defined in a later block)
                ins = tuple([get_state(id(v)) or type_state(v) for v in operands])
            results = op.results
            single = len(results) == 1
            if single:  # most ops: the result's dtype, not a tuple of them
                (result,) = results
                rtype = type_of(result)
                outs: object = type_key(id(rtype.element_type) if type(rtype) is TensorType else id(rtype))  # dtype_key
                if outs is None:  # a type not met yet
                    outs = type_state(result)[0] or "?"
            else:
                outs = tuple(map(type_key, map(dtype_key, map(type_of, results))))
                if None in outs:
                    outs = tuple([type_state(r)[0] or "?" for r in results])
            key = (cls, extra, tag, ins, outs)
            effect = memo.get(key)  # pyright: ignore[reportArgumentType]  # decide's key; its parts are typed loosely in this hot loop (outs: object)
            if effect is None:
                self.seq, self.count = seq, count  # where an error or a warning says the op is
                effect = memo[key] = decide(key, op)  # pyright: ignore[reportArgumentType]  # as memo.get(key) above
            # What `commit` does, inline.
            new = effect.new
            if single:
                states[id(result)] = effect.states[0]
                if retype and new is not None:
                    hit = types.get((id(rtype), new[0]))  # `retyped`'s cache, read here  # pyright: ignore[reportArgumentType]  # a single result's `new` is set only when its dtype changes, so new[0] is a dtype
                    set_type(result, hit[1] if hit is not None else retyped(rtype, new[0]))  # pyright: ignore[reportArgumentType]  # a single result's `new` is set only when its dtype changes, so new[0] is a dtype
                    new = None
            else:
                for r, state in zip(results, effect.states):
                    states[id(r)] = state
                if retype and new is not None:
                    for r, dtype in zip(results, new):
                        if dtype is not None:
                            set_type(r, retyped(type_of(r), dtype))
                    new = None
            wanted = effect.wanted
            if wanted is not None and lone:
                wanted = self.store_lone(operands, wanted)
            if wanted is not None or new is not None or effect.folded:
                changes.append((op, seq, wanted, new, effect.folded))
            if records is not None:
                records.append((op, effect, operands, self.function, count))
            if what == _CONST:
                consts.append(op)  # pyright: ignore[reportArgumentType]  # what == _CONST: classify() made op's entry for a ConstOp
                if lone is not None and has_one_use(result):
                    lone[id(result)] = op  # pyright: ignore[reportArgumentType]  # what == _CONST: classify() made op's entry for a ConstOp
            if effect.loud or (info and effect.reduced is not None):
                self.seq, self.count = seq, count
                self.notes(op, effect)
            op = next_op(op)
        self.seq, self.count = seq, count

    def store_lone(self, operands: Sequence[SSAValue], wanted: tuple[str | None, ...]) -> tuple[str | None, ...] | None:
        """The operand dtypes an op still needs cast, after retyping the one-use constants it casts to a lower float
        dtype (what `apply_plan(store_low=True)` does to them: `retyped_consts`, the cast counted, none built)."""
        lone, plan = self.lone, self.plan
        assert lone is not None
        left: list[str | None] | None = None
        for i, (value, dtype) in enumerate(zip(operands, wanted)):
            if dtype is None:
                continue
            const = lone.pop(id(value), None)
            if const is None or dtype not in LOW_FLOATS:
                continue
            src = self.states[id(value)][0]
            if src not in PRECISION_RANK or PRECISION_RANK[dtype] >= PRECISION_RANK[src]:
                continue
            plan.retyped_consts.append((const, value.type))  # pyright: ignore[reportArgumentType]  # a Const's result is a tensor (ConstOp's constraint)
            set_type(value, plan.retyped(value.type, dtype))
            plan.casts_inserted += 1  # the cast it stands for
            plan.casts[(id(value), dtype)] = (value, value)
            if left is None:
                left = list(wanted)
            left[i] = None
        if left is None:
            return wanted
        return None if left.count(None) == len(left) else tuple(left)

    def classify(self, op: Operation) -> tuple[int, OpClass | None]:
        if isinstance(op, func.FuncOp):
            return _FUNC, None
        if isinstance(op, AscendOp):
            cls = op_class(op)
            if not self.rule.context_free or cls.fixed == "user cast":
                return _ASCEND, cls
            return (_CONST if isinstance(op, ConstOp) else _FAST), cls
        return _OTHER, None

    def handle(self, op: Operation, module: Operation) -> None:
        self.seq += 1
        entry = self.classes.get(type(op))
        if entry is None:
            entry = self.classes[type(op)] = self.classify(op)
        what, cls = entry
        if what == _FUNC:
            self.function, self.count = op.sym_name.data, 0  # pyright: ignore[reportAttributeAccessIssue]  # _FUNC: classify() made this entry for a func.FuncOp
            return
        self.count += 1
        assert what > _CONST, "visit_block decides these"
        if what == _ASCEND:
            self.decide(op, cls)  # pyright: ignore[reportArgumentType]  # _ASCEND: classify() made this entry for an AscendOp, with its OpClass
        elif op is not module:
            self.foreign(op)

    def commit(self, op: Operation, effect: Effect) -> None:
        """Record the effect of deciding `op`: its changes, its results' states, its record, its warnings."""
        states = self.states
        for r, state in zip(op.results, effect.states):
            states[id(r)] = state
        new = effect.new
        if self.retype and new is not None:
            for r, dtype in zip(op.results, new):
                if dtype is not None:
                    set_type(r, self.plan.retyped(r.type, dtype))
            new = None
        if effect.wanted is not None or new is not None or effect.folded:
            self.plan.changes.append((op, self.seq, effect.wanted, new, effect.folded))
        if self.records is not None:
            self.records.append((op, effect, operands_of(op), self.function, self.count))
        if effect.loud or (self.info and effect.reduced is not None):
            self.notes(op, effect)

    def notes(self, op: Operation, effect: Effect) -> None:
        """The warnings and the info line of one op."""
        name, op_type = name_of(op), effect.op_type
        if effect.keep_failed:
            self.warn(
                f"{op_location(op, self.here())}: {op_type} '{name or op_type}': keep_dtype cannot keep "
                f"{cann(primary(*effect.sig))} (no kernel for it); the mode decides"
            )
        if effect.warning is not None:
            label = f"{op_type} '{name}'" if name else op_type
            if self.config.policy == "cann":  # which mode warned (a framework policy's warnings start with its name)
                label += f" under {self.config.label}"
            self.warn(f"{op_location(op, self.here())}: {label}: {effect.warning}")
        if self.info and effect.reduced is not None:  # inputs or outputs: an fp32->fp16 Greater keeps its outputs
            before, after = effect.reduced
            reason = effect.reason + follows_text(effect.follows, operands_of(op))
            logger.info("Reduce precision: %s %s -> %s (%s)", name or op_type, cann(before), cann(after), reason)

    def foreign(self, op: Operation) -> None:
        """A non-ascend op (func.return, calls, ...): its operands keep their dtypes."""
        wanted = self.kept_operands(op)
        if wanted is not None:
            self.plan.changes.append((op, self.seq, wanted, None, False))
        votes = not op.has_trait(ConstantLike, value_if_unregistered=False)
        for r, state in zip(op.results, own_states([self.dtype_of(r) for r in op.results], votes)):
            self.states[id(r)] = state

    def override_tag(self, name: str | None, op_type: str) -> object:
        """The overrides an op's name and type match (part of the decision key); notes the names and types met, for
        the keep_dtype / customize_dtypes entries that match no op."""
        if self.track:
            self.used_types.add(op_type)
            if name is not None:
                self.used_names.add(name)
        return self.decider.override_tag(name, op_type)

    def decide(self, op: AscendOp, cls: OpClass) -> None:
        """Decide an op afresh: user casts (retargeted, folded or reused), and every op under a rule that reads
        more than the decision key (the framework policies)."""
        op_type = cls.op_type
        name = name_of(op)
        if self.track:
            self.used_types.add(op_type)
            if name is not None:
                self.used_names.add(name)
        if isinstance(op, ConstOp):
            self.plan.consts.append(op)
        ins = tuple([self.state(v) for v in op.operands])
        outs = tuple([self.dtype_of(r) for r in op.results])
        if cls.fixed is None:
            self.commit(op, self.decider.effect(op, cls, ins, outs))
            return
        found = self.decider.signature(cls, ins, outs)
        kind = self.decider.library_kind(op, op_type)
        if found is None:
            self.commit(op, self.decider.kept(cls, kind, "unmodelled dtype", None, ins, outs))
            return
        sig, _ = found
        if cls.fixed == "user cast":
            if self.retarget_cast(op, cls, kind, sig) or self.fold_identity_cast(op, cls, kind, sig):
                return
            source = op.operands[0]
            if not self.changed(source):
                source = self.aliases.get(source, source)  # a folded cast's uses read its input
                self.plan.user_casts.setdefault((source, sig.outputs[0]), op)  # pyright: ignore[reportArgumentType]  # signature() found it, so its dtypes are all modelled (not None)
                self.plan.user_order[op] = self.seq
        self.commit(op, self.decider.kept(cls, kind, cls.fixed, sig, ins, outs))

    def kept_operands(self, op: Operation) -> tuple[str | None, ...] | None:
        """The operand dtypes of an op that keeps its dtypes: the input dtype of every operand the decisions changed."""
        return operands_kept([self.states.get(id(v)) for v in op.operands])

    def retarget_cast(self, op: AscendOp, cls: OpClass, kind: str, sig: Signature) -> bool:
        """A user's Cast the rule sends to another dtype (TF: a Cast to fp32 feeding only allow ops)."""
        target = self.rule.cast_target(op)
        if target is None or target[0] == sig.outputs[0]:
            return False
        dst, reason = target
        src = self.dtype(op.operands[0])
        if src is None:
            return False
        decider = self.decider
        kernel = candidates(decider.kernels(op, cls.op_type), sig, cls).find((src,), (dst,))
        if kernel is None:
            return False
        self.commit(
            op, make_effect(cls.op_type, sig, kernel, kind, reason, None, None, (dst,), ((sig.outputs[0], dst, dst),))
        )
        return True

    def fold_identity_cast(self, op: AscendOp, cls: OpClass, kind: str, sig: Signature) -> bool:
        """A user's cast to a lower dtype whose input the decisions retyped to that dtype (f32 -> f16 of a value
        now f16) is an identity: docs/design.md §5's exact round trip (f16 -> f32 -> f16, bf16 -> f32 -> bf16) vanishes,
        so no cast back to the cast's input dtype is inserted and the user's cast is erased (its uses read the
        input). A cast that still changes the dtype (bf16 into an f32 -> f16 cast) is kept."""
        source = op.operands[0]
        dst = sig.outputs[0]
        if op.keep_dtype is not None:  # a marked cast (training machinery) is kept as written
            return False
        if not self.changed(source) or self.dtype(source) != dst or (dst, sig.inputs[0]) not in EXACT_WIDENING:
            return False
        result = op.results[0]
        if self.plan.retyped(source.type, dst) != result.type:  # pyright: ignore[reportArgumentType]  # dst is in EXACT_WIDENING (checked above), so a dtype
            return False
        reason = "user cast: identity after retyping, folded"
        # A user cast votes with its output dtype.
        self.commit(
            op, make_effect(cls.op_type, sig, None, kind, reason, None, None, None, ((dst, dst, dst),), folded=True)
        )
        self.plan.casts_folded += 1
        self.aliases[result] = self.aliases.get(source, source)
        return True

    def check_unused(self) -> None:
        config = self.config
        for what, names, types, path in (
            ("keep_dtype", *_entries(config.keep_dtype)),
            ("customize_dtypes", *_entries(config.customize_dtypes)),
        ):
            unmatched = [f"'{n}'" for n in sorted(names - self.used_names)]
            unmatched += [f"'OpType::{t}'" for t in sorted(types - self.used_types)]
            if len(unmatched) <= UNMATCHED_SHOWN:
                for entry in unmatched:
                    self.warn(f"{path}: {what} entry {entry} matches no op")
            else:  # one summary line, however large the file (a warning per entry costs linear output)
                shown = ", ".join(unmatched[:UNMATCHED_SHOWN])
                self.warn(
                    f"{path}: {len(unmatched)} {what} entries match no op: {shown} and {len(unmatched) - UNMATCHED_SHOWN} more"
                )


def _entries(cfg: KeepDtype | CustomizeDtypes | None) -> tuple[set[str], set[str], str]:
    if cfg is None:
        return set(), set(), ""
    if isinstance(cfg, KeepDtype):
        return set(cfg.names), set(cfg.op_types), cfg.path
    return set(cfg.by_name), set(cfg.by_type), cfg.path


def decide_precision(module: Operation, config: PrecisionConfig, *, records: bool = True) -> PrecisionPlan:
    """Decide every op's kernel in one forward walk; raises AscendError before anything changes.
    `records=False`: keep no per-op records (the plan then reports no ops; the rewrite does not need them)."""
    return Planner(config, records).run(module)


def decide_and_retype(module: Operation, config: PrecisionConfig, records: bool) -> PrecisionPlan:
    """:func:`decide_precision` that retypes results as it decides them where that is safe (see `Planner.retype`),
    and the one-use constants it would store low (`Planner.lone`): the plan's changes then hold only the casts and
    folds left to :func:`apply_plan`, which must be called with `store_low=True`."""
    return Planner(config, records, retype=True, store_low=True).run(module)
