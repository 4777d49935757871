"""The decision: which kernel one op runs, as a function of an explicit decision key.

Under a context-free rule (every CANN mode) an op's decision depends only on its **decision key**:

    (op class, caps/list/keep_dtype properties, overrides matching its name, operand states, result dtypes)

- the op class (:class:`OpClass`: its type, operand definitions, verifier constraints, Cube unit or not);
- `extra`: None, or (the id of its `caps` property, its `list` property, whether it has `keep_dtype`): the
  properties that change a decision (the op, hence its caps, lives through the walk);
- `tag`: None, or the overrides its name and type match (:meth:`Decider.override_tag`: the customize_dtypes entry,
  whether keep_dtype lists it, its to_float scope);
- `ins`: the state of each operand (its dtype in the input, its dtype after the decisions so far, its vote);
- `outs`: its result's dtype (`?`: unmodelled), or a tuple of them for an op with several results.

:meth:`Decider.decide` computes the :class:`Effect` of a key; the walk (`walk.py`) calls it once per new key and
replays the effect for every other op with that key. The op passed along with the key (the first with it) only
names the op in errors and warnings: nothing else of it is read beyond what the key states. The framework policies
read more than the key (their rules are not context-free): the walk asks :meth:`Decider.effect` afresh for each of
their ops. The choice itself reads its inputs in this order: the overrides (customize_dtypes > keep_dtype >
to_float), then the rule's steps (`ascend_mp.policies`), each memoised per candidate set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation

from ascend_mp.config import KernelDtypes
from ascend_mp.dialects.ascend import AscendOp, CapsAttr, Kernel, ListKindAttr
from ascend_mp.dtypes import PRECISION_RANK
from ascend_mp.errors import AscendPassError
from ascend_mp.passes.precision.kernels import (
    Candidates,
    Choice,
    OpClass,
    Signature,
    candidates,
    fmt_kernels,
    fmt_sig,
    op_class,
    primary,
)
from ascend_mp.passes.precision.lattice import cann, join, rank
from ascend_mp.passes.precision.options import PrecisionConfig
from ascend_mp.passes.precision.plan import (
    Effect,
    State,
    make_effect,
    name_of,
    nones,
    op_location,
    operands_kept,
    own_states,
)
from ascend_mp.policies import AICORE, BF16, F16, LOW, OpFacts, Step, Steps, keep_steps

DecisionKey = tuple[OpClass, Any, Any, tuple[State, ...], Any]
"""(op class, extra, tag, ins, outs): see the module docstring."""


class Decider:
    """Decides ops for one configuration, with the caches that make a decision cheap: kernel sets, candidates,
    the rule's vote tests and steps, per the facts they read."""

    def __init__(self, config: PrecisionConfig, where: Callable[[], str]):
        self.config = config
        self.rule = config.the_rule
        self.where = where
        """Where the op being decided is, for messages (its `file:line:col` is preferred: :func:`op_location`)."""
        self.choices: dict[Candidates, dict[Any, Choice]] = {}
        """Per kernel fit (shared by the process), this configuration's choices, memoised per question."""
        self.keepalive: list[object] = []
        self.kinds: dict[tuple[str, str], tuple[str, str]] = {}
        self.contexts: dict[object, tuple[tuple[Kernel, ...], str, str, str | None]] = {}
        self.wants: dict[object, bool] = {}
        """(orig, list kind, modify_mixlist reason, cube) -> whether a context-free rule wants the producers' vote."""
        self.steps: dict[object, Steps] = {}
        """(orig, list kind, modify_mixlist reason, cube, vote) -> a context-free rule's steps for those facts."""
        self.overrides = (
            config.keep_dtype is not None or config.customize_dtypes is not None or config.to_float is not None
        )
        """Whether an op's name may change its decision."""

    def kernels(self, op: AscendOp, op_type: str) -> tuple[Kernel, ...]:
        caps = op.properties.get("caps")
        if isinstance(caps, CapsAttr):
            return caps.data
        return self.config.library.info(op_type).kernels

    def supports(self, op: Operation, dtype: str) -> bool:
        """Whether `op` has an AI Core kernel computing in `dtype` (for whole-graph rules)."""
        if not isinstance(op, AscendOp):
            return False
        return any(
            k.engine == AICORE and primary(k.inputs, k.outputs) == dtype for k in self.kernels(op, op_class(op).op_type)
        )

    def library_kind(self, op: AscendOp, op_type: str) -> str:
        kind = op.properties.get("list")
        if isinstance(kind, ListKindAttr):
            return kind.data.value
        return self.config.library.info(op_type).list_kind.value

    def effective_kind(self, op_type: str, library_kind: str) -> tuple[str, str | None]:
        """(list kind, modify_mixlist reason or None)."""
        mixlist = self.config.mixlist
        if mixlist is None or not self.rule.uses_mixlist:
            return library_kind, None
        key = (op_type, library_kind)
        hit = self.kinds.get(key)
        if hit is None:
            hit = self.kinds[key] = mixlist.list_kind(op_type, library_kind)
        kind, why = hit
        return kind, (None if why == "library" else why)

    def context(self, op: AscendOp, cls: OpClass) -> tuple[tuple[Kernel, ...], str, str, str | None]:
        """(kernels, library list kind, list kind after modify_mixlist, modify_mixlist's reason or None) of an op: they
        depend on its class and its `caps` and `list` properties only, so they are looked up once per such triple."""
        props = op.properties
        caps, lst = props.get("caps"), props.get("list")
        key = (
            cls,
            id(caps) if isinstance(caps, CapsAttr) else None,
            lst.data if isinstance(lst, ListKindAttr) else None,
        )
        hit = self.contexts.get(key)
        if hit is None:
            info = self.config.library.info(cls.op_type) if key[1] is None or key[2] is None else None
            kernels = caps.data if isinstance(caps, CapsAttr) else info.kernels  # pyright: ignore[reportOptionalMemberAccess]  # info is None only when caps is a CapsAttr and a list is given
            library_kind = key[2].value if key[2] is not None else info.list_kind.value  # pyright: ignore[reportOptionalMemberAccess]  # info is set when key[2] is None
            hit = self.contexts[key] = (kernels, library_kind, *self.effective_kind(cls.op_type, library_kind))
            if key[1] is not None:
                self.keepalive.append(caps)  # the id stays unique while the cache lives
        return hit

    def memo(self, cands: Candidates) -> dict[Any, Choice]:
        """This configuration's choices among `cands`."""
        found = self.choices.get(cands)
        if found is None:
            found = self.choices[cands] = {}
        return found

    @staticmethod
    def signature(
        op_cls: OpClass,
        ins: Sequence[State],
        outs: tuple[str | None, ...],
    ) -> tuple[Signature, list[range] | None] | None:
        """The op's original signature from its operands' states and its results' dtypes (None if one of them has
        an unmodelled type); with, for an op with an optional or variadic operand, its operand positions per
        definition (:meth:`OpClass.spans`)."""
        spans = None
        if op_cls.regular:
            dts = tuple([state[0] for state in ins])
            if None in dts:
                return None
        else:
            spans = op_cls.spans(len(ins))
            found: list[str | None] = []
            for span in spans:
                if not span:
                    found.append(None)
                    continue
                d = ins[span[0]][0]
                for p in span[1:]:  # a variadic group of mixed dtypes runs in the most precise
                    other = ins[p][0]
                    if d is None or other is None:
                        return None
                    if other != d:
                        d = join(d, other) if d in PRECISION_RANK and other in PRECISION_RANK else d
                if d is None:
                    return None
                found.append(d)
            dts = tuple(found)
        if None in outs:
            return None
        return Signature(dts, outs), spans

    def override_tag(self, name: str | None, op_type: str) -> object:
        """The overrides an op's name and type match (part of the decision key)."""
        config = self.config
        custom = config.customize_dtypes.lookup(name, op_type) if config.customize_dtypes is not None else None
        keep = config.keep_dtype is not None and config.keep_dtype.matches(name, op_type)
        scoped = config.to_float.lookup(name) if config.to_float is not None and name is not None else None
        return (id(custom) if custom is not None else None, keep, scoped)  # custom: an entry of the loaded file

    def decide(self, key: DecisionKey, op: AscendOp) -> Effect:
        """The effect of every op with decision `key` (see the module docstring); `op` is the first of them, which
        errors and warnings name."""
        cls, _, _, ins, outs = key
        if type(outs) is str:  # one result
            dtypes: tuple[str | None, ...] = (None if outs == "?" else outs,)
        else:
            dtypes = tuple([None if d == "?" else d for d in outs])
        return self.effect(op, cls, ins, dtypes)

    def effect(self, op: AscendOp, cls: OpClass, ins: Sequence[State], outs: tuple[str | None, ...]) -> Effect:
        """What deciding an op that may change does (changes nothing), from the states of its operands (`ins`) and
        the dtypes of its results (`outs`)."""
        op_type = cls.op_type
        name = name_of(op)
        found = self.signature(cls, ins, outs)
        kernels, kind, mix_kind, mix_reason = self.context(op, cls)
        if found is None:
            return self.kept(cls, kind, "unmodelled dtype", None, ins, outs)
        sig, groups = found
        if cls.fixed is not None:  # constants
            return self.kept(cls, kind, cls.fixed, sig, ins, outs)
        if primary(sig.inputs, sig.outputs) is None:
            return self.kept(cls, kind, "no float tensors", sig, ins, outs)
        cands = candidates(kernels, sig, cls)
        kind = mix_kind
        choice, follows, keep_failed = self.choose(op, cls, name, cands, kind, mix_reason, ins)
        kernel = choice.kernel
        warning = None if choice.warning is None else f"{choice.warning}; kernels: {fmt_kernels(cands.all)}"
        if kernel is None:
            return self.kept(cls, kind, choice.reason, sig, ins, outs, follows, warning, keep_failed)
        # Operands: cast where the value's (decided) dtype differs from the kernel's.
        wanted: list[str | None] | None = None
        operands = ins
        if groups is None:
            for i, (sd, kd, state) in enumerate(zip(sig.inputs, kernel.inputs, ins)):
                if sd not in PRECISION_RANK:
                    kd = sd
                if state[1] != kd:
                    if wanted is None:
                        wanted = nones(len(operands))
                    wanted[i] = kd
        else:
            pos = 0
            for i, g in enumerate(groups):
                sd = sig.inputs[i]
                for _ in g:
                    kd = kernel.inputs[i] if sd in PRECISION_RANK else ins[pos][0]
                    if ins[pos][1] != kd:
                        if wanted is None:
                            wanted = nones(len(operands))
                        wanted[pos] = kd
                    pos += 1
        # Results: every float result votes with its kernel dtype.
        new: list[str | None] | None = None
        states: list[State] = []
        for j, (sd, kd) in enumerate(zip(sig.outputs, kernel.outputs)):
            if sd not in PRECISION_RANK:
                states.append((sd, sd, None))
                continue
            states.append((sd, kd, kd))
            if kd != sd:
                if new is None:
                    new = nones(len(sig.outputs))
                new[j] = kd
        before, after = cands.primary, primary(kernel.inputs, kernel.outputs)
        return Effect(
            op_type,
            sig,
            kernel,
            kind,
            choice.reason,
            follows,
            None if wanted is None else tuple(wanted),
            None if new is None else tuple(new),
            tuple(states),
            warning,
            keep_failed,
            (before, after) if rank(after) < rank(before) else None,
            False,
            warning is not None or keep_failed,
        )

    @staticmethod
    def kept(
        cls: OpClass,  # pyright: ignore[reportSelfClsParameterName]  # `cls` is the op's class (OpClass), not this class
        kind: str,
        reason: str,
        sig: Signature | None,
        ins: Sequence[State],
        outs: tuple[str | None, ...],
        follows: tuple[int, ...] | None = None,
        warning: str | None = None,
        keep_failed: bool = False,
    ) -> Effect:
        """The effect of an op that keeps its dtypes (its float results vote with them; constants do not vote);
        `ins`: the states of its operands, `outs`: its results' dtypes."""
        if sig is None:
            sig = Signature(tuple([state[0] for state in ins]), outs)
        states = own_states(sig.outputs, cls.fixed != "constant")
        return make_effect(
            cls.op_type, sig, None, kind, reason, follows, operands_kept(ins), None, states, warning, keep_failed
        )

    def choose(
        self,
        op: AscendOp,
        cls: OpClass,
        name: str | None,
        cands: Candidates,
        kind: str,
        mix_reason: str | None,
        ins: Sequence[State],
    ) -> tuple[Choice, tuple[int, ...] | None, bool]:
        """The overrides (customize_dtypes > keep_dtype > to_float), else the rule's steps; with whom a gray op
        follows, and whether keep_dtype failed to keep the op's dtype."""
        config, rule, op_type = self.config, self.rule, cls.op_type
        orig = cands.primary
        assert orig is not None
        keep_failed = False
        if self.overrides or "keep_dtype" in op.properties:
            custom = config.customize_dtypes.lookup(name, op_type) if config.customize_dtypes is not None else None
            if custom is not None:
                return self.customized(op, op_type, name, cands, custom), None, False
            if "keep_dtype" in op.properties and not rule.keeps_origin:
                return self.overridden(cands, keep_steps(orig, "keep_dtype (marked)")), None, False
            keep = config.keep_dtype is not None and config.keep_dtype.matches(name, op_type)
            if keep and not rule.keeps_origin:
                choice = cands.run(keep_steps(orig, "keep_dtype", strict=True))
                if choice is not None:
                    return choice, None, False
                keep_failed = True  # the mode decides
            if config.to_float is not None and name is not None:
                scoped = config.to_float.steps(name, orig)
                if scoped is not None:
                    return self.overridden(cands, scoped), None, keep_failed
        cube = cls.cube
        if rule.context_free:  # its vote test and steps read only these facts, its choice the candidates too
            basics = (orig, kind, mix_reason, cube)
            wants = self.wants.get(basics)
            if wants is None:
                wants = self.wants[basics] = rule.wants_vote(
                    OpFacts(op, op_type, name, orig, kind, mix_reason, None, cube)
                )
            vote, follows = self.votes(cls, cands, ins) if wants else (None, None)
            key = (kind, mix_reason, vote)
            memo = self.memo(cands)
            choice = memo.get(key)
            if choice is None:
                facts_key = (*basics, vote)
                steps = self.steps.get(facts_key)
                if steps is None:
                    steps = self.steps[facts_key] = rule.steps(
                        OpFacts(op, op_type, name, orig, kind, mix_reason, vote, cube)
                    )
                choice = memo[key] = self.fallback(cands, steps, op, op_type, name)
        else:
            inputs = tuple([state[1] for state in ins if state[1] in PRECISION_RANK]) if rule.needs_inputs else ()
            facts = OpFacts(op, op_type, name, orig, kind, mix_reason, None, cube, inputs)
            follows = None
            if rule.wants_vote(facts):
                vote, follows = self.votes(cls, cands, ins)
                facts = facts._replace(vote=vote)
            steps = rule.steps(facts)
            memo = self.memo(cands)
            choice = memo.get(steps)
            if choice is None:
                choice = memo[steps] = self.fallback(cands, steps, op, op_type, name)
        if follows is not None and not choice.reason.endswith("gray"):
            follows = None
        return choice, follows, keep_failed

    def overridden(self, cands: Candidates, steps: tuple[Step, ...]) -> Choice:
        memo = self.memo(cands)
        choice = memo.get(steps)
        if choice is None:
            choice = memo[steps] = cands.run(steps) or self.any_kernel(cands)
        return choice

    def fallback(
        self, cands: Candidates, steps: tuple[Step, ...], op: AscendOp, op_type: str, name: str | None
    ) -> Choice:
        choice = cands.run(steps)
        if choice is not None:
            return choice
        if self.rule.keeps_origin:
            label = f"{op_type} '{name}'" if name else f"{op_type} (unnamed)"
            raise AscendPassError(
                f"{op_location(op, self.where())}: {label} has no kernel for its original dtype {cann(cands.primary)} "
                f"under must_keep_origin_dtype and no AI CPU fallback; kernels: {fmt_kernels(cands.all)}"
            )
        return self.any_kernel(cands)

    @staticmethod
    def any_kernel(cands: Candidates) -> Choice:
        """Nothing the rule allows: any kernel that fits, else the op stays as it is."""
        if cands.kernels:
            k = cands.kernels[0]
            return Choice(k, "no preferred kernel", f"no kernel the mode allows; using {k}")
        return Choice(None, "no kernel", f"no kernel fits {fmt_sig(*cands.sig)}; left unchanged")

    def votes(self, cls: OpClass, cands: Candidates, ins: Sequence[State]) -> tuple[str | None, tuple[int, ...] | None]:
        """The dtype a gray op (of class `cls`) gets from its producers' votes (the most precise), and whom it follows
        (`Effect.follows`); `ins`: the states of its operands."""
        if cls.regular:
            positions: Sequence[int] = cands.varying
        else:
            spans = cls.spans(len(ins))
            positions = [p for i in cands.varying for p in spans[i]]
        ballots = [(d, p) for p in positions if (d := ins[p][2]) is not None]
        if len(ballots) < 2:
            return (ballots[0][0], (ballots[0][1],)) if ballots else (None, None)
        vote = ballots[0][0]
        for d, _ in ballots[1:]:
            vote = join(vote, d)
        first = next((p for d, p in ballots if d == vote), None)
        if first is None:  # fp16 and bf16 producers: they join at fp32
            lows = {d: p for d, p in ballots if d in LOW}
            if len(lows) == 2:
                return vote, (lows[F16], lows[BF16])
            first = ballots[0][1]
        return vote, (first,)

    def customized(
        self, op: AscendOp, op_type: str, name: str | None, cands: Candidates, custom: KernelDtypes
    ) -> Choice:
        kernel = cands.find(custom.inputs, custom.outputs)
        if kernel is None:
            path = self.config.customize_dtypes.path  # pyright: ignore[reportOptionalMemberAccess]  # customized() runs only for an op the customize_dtypes file names
            label = f"{op_type} '{name}'" if name else op_type
            raise AscendPassError(
                f"{op_location(op, self.where())}: {label} has no kernel {fmt_sig(custom.inputs, custom.outputs)} "
                f"(customize_dtypes {path}:{custom.line}); kernels: {fmt_kernels(cands.all)}"
            )
        return Choice(kernel, "customize_dtypes", None)
