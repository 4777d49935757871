"""Precision rules as data: each CANN mode and each framework policy is a small object.

A *rule* answers one question for one op: in which order should the pass try kernels
(a compute dtype on an engine, and the reason to report when that kernel is taken)?
The pass (`passes/precision.py`) owns everything else, once, for every rule: signatures,
kernel choice among the op's `caps`, gray-op voting, overrides (`customize_dtypes`,
`keep_dtype`), casts and the report.

* :data:`CANN_MODES` maps each v1 `precision_mode` to its rule (DESIGN.md section 5).
* :data:`POLICIES` maps each `policy` name to a factory building its rule from the
  options (DESIGN.md section 11): `cann`, `tf`, `mindspore`, `torch`.

An unknown mode, policy or level is an :class:`AscendError`; there is no default branch.

Idempotence: a rule sees an op's *current* dtype as its original one, so its answer for
the dtype it chose must be that same dtype. Every rule here keeps that: an op whose
original low dtype has no kernel is decided as the fp32 op it becomes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ascend_mp import dtypes
from ascend_mp.dtypes import TO_CANN, mode_low, short
from ascend_mp.errors import AscendError
from ascend_mp.modes import V1_MODES

if TYPE_CHECKING:
    from xdsl.ir import Operation

    from ascend_mp.config import KeepDtype

F16, BF16, F32 = dtypes.F16.name, dtypes.BF16.name, dtypes.F32.name
"""The names of the dtypes the rules speak of (their records: `ascend_mp.dtypes.F16`, ...)."""
LOW = dtypes.LOW_FLOATS
AICORE, AICPU = "aicore", "aicpu"


def other_low(low: str) -> str:
    """The other low float (f16 <-> bf16)."""
    return next(d for d in LOW if d != low)


class Step(NamedTuple):
    """One kernel to try: the op computing in `dtype` on `engine`, reported with `reason`."""

    dtype: str
    engine: str
    reason: str
    precise_out: bool = False
    """Among the kernels computing in `dtype`, prefer the most precise outputs."""
    warn: bool = False
    """Taking this step is worth a warning (a white op that stays fp32, ...)."""
    out: str | None = None
    """Only kernels whose float outputs are all this dtype (cube ops' fp16-in/fp32-out)."""


Steps = tuple[Step, ...]


class OpFacts(NamedTuple):
    """What a rule may look at for one op (the pass gathers it)."""

    op: Operation
    op_type: str
    """CANN op type (`MatMulV2`)."""
    name: str | None
    """The op's `name` attribute (a TF/ONNX/MindSpore node name)."""
    orig: str
    """The dtype the op computes in, in the input (its first float operand's)."""
    kind: str
    """CANN list kind after modify_mixlist: white, black or gray."""
    list_reason: str | None
    """Why modify_mixlist moved the op (None: the library's list)."""
    vote: str | None
    """What the op's data producers voted for (only when the rule asked, see `Rule.wants_vote`)."""
    cube: bool
    """Whether the op runs on the Cube unit (MatMul*, Conv2D*, ...)."""
    inputs: tuple[str, ...] = ()
    """The float dtypes its operands arrive in (only when the rule has `needs_inputs`)."""


class Rule(ABC):
    """A precision rule: the kernels to try, in order, for one op."""

    label: str
    """The name written in the report (`allow_mix_precision`, `tf`, `mindspore O2`, ...)."""
    uses_mixlist: bool = False
    """Whether `modify_mixlist` (CANN's list edits) applies."""
    keeps_origin: bool = False
    """must_keep_origin_dtype: no kernel for the original dtype is an error, keep_dtype is moot."""
    needs_inputs: bool = False
    """Whether the rule reads `OpFacts.inputs` (torch's type promotion)."""
    context_free: bool = False
    """Whether `steps` and `wants_vote` read only `orig`, `kind`, `list_reason`, `vote` and `cube` (the CANN
    modes): the pass then memoises them per those facts, and the choice per candidate set, list kind, reason and
    vote."""

    def wants_vote(self, f: OpFacts) -> bool:
        """Whether the pass should collect the producers' vote for this op (gray ops)."""
        return False

    def prepare(self, module: Operation, supports: Callable[[Operation, str], bool]) -> None:
        """Whole-graph analysis before the forward walk (TF's painting); most rules need none.
        `supports(op, dtype)`: whether the op has an AI Core kernel computing in `dtype`."""

    def cast_target(self, op: Operation) -> tuple[str, str] | None:
        """(new destination dtype, reason) for a user's Cast the rule retargets (TF does), else None."""
        return None

    @abstractmethod
    def steps(self, f: OpFacts) -> Steps:
        """The kernels to try for `f`, best first (the pass takes the first that exists)."""


def keep_steps(orig: str, reason: str, strict: bool = False) -> Steps:
    """Keep the original dtype (keep_dtype, a framework's fp32 op): an unsupported low dtype
    rises to fp32, an unsupported fp32 runs on the AI CPU; then (unless `strict`) what exists."""
    no_orig = f"{reason}: no {short(orig)} kernel"
    if orig in LOW:
        steps = (Step(orig, AICORE, reason), Step(F32, AICORE, no_orig), Step(F32, AICPU, f"{reason}: aicpu fallback"))
        rest = (Step(other_low(orig), AICORE, no_orig, warn=True),)
    else:
        steps = (Step(orig, AICORE, reason), Step(orig, AICPU, f"{reason}: aicpu fallback"))
        rest = (Step(F32, AICORE, no_orig, warn=True), Step(F16, AICORE, no_orig, warn=True), Step(BF16, AICORE, no_orig, warn=True))
    return steps if strict else steps + rest


def low_steps(low: str, reason: str, warn: bool = True) -> Steps:
    """Run in `low` (a framework's low-precision op); fp32 where no low kernel exists."""
    no_low = f"{reason}: no {short(low)} kernel"
    return (
        Step(low, AICORE, reason),
        Step(F32, AICORE, no_low, warn=warn),
        Step(F32, AICPU, f"{no_low}; aicpu fallback", warn=warn),
        Step(other_low(low), AICORE, no_low, warn=warn),
    )


def fp32_steps(orig: str, reason: str) -> Steps:
    """Run in fp32 (a framework's fp32 op, from an fp32 original); else what exists."""
    if orig != F32:
        return keep_steps(orig, reason)
    return (
        Step(F32, AICORE, reason),
        Step(F32, AICPU, f"{reason}: aicpu fallback"),
        Step(F16, AICORE, f"{reason}: no fp32 kernel", warn=True),
        Step(BF16, AICORE, f"{reason}: no fp32 kernel", warn=True),
    )


# ======================================================================================
# CANN precision modes (DESIGN.md section 5)
# ======================================================================================


@dataclass(frozen=True)
class ForceFp16(Rule):
    """force_fp16 (ATC's default): fp16 wherever an fp16 kernel exists; otherwise the
    original dtype if supported, else fp32 (then bf16, then fp32 on the AI CPU)."""

    context_free: bool = True
    label: str = "force_fp16"

    def steps(self, f: OpFacts) -> Steps:
        return (
            Step(F16, AICORE, "mode"),
            Step(f.orig, AICORE, "no fp16 kernel"),
            Step(F32, AICORE, "no fp16 kernel"),
            Step(BF16, AICORE, "no fp16 kernel"),
            Step(F32, AICPU, "aicpu fallback"),
        )


@dataclass(frozen=True)
class ForceFp32(Rule):
    """force_fp32 (seed 001): the most precise kernel: fp32 in/out; a black op without an fp32
    AI Core kernel takes the AI CPU's fp32 one; else fp16 in with the most precise outputs."""

    context_free: bool = True
    label: str = "force_fp32"

    def steps(self, f: OpFacts) -> Steps:
        black = (Step(F32, AICPU, "aicpu fallback"),) if f.kind == "black" else ()
        return (
            Step(F32, AICORE, "mode"),
            *black,
            Step(F16, AICORE, "no fp32 kernel", precise_out=True),
            Step(BF16, AICORE, "no fp32 kernel", precise_out=True),
            Step(F32, AICPU, "aicpu fallback"),
        )


@dataclass(frozen=True)
class CubeFp16InFp32Out(Rule):
    """cube_fp16in_fp32out (current CANN): cube ops prefer fp16 inputs with fp32 outputs, then
    fp32/fp32, then fp16/fp16; every other op as force_fp32 (fp32 where supported)."""

    context_free: bool = True
    label: str = "cube_fp16in_fp32out"

    def steps(self, f: OpFacts) -> Steps:
        if not f.cube:
            return ForceFp32(self.label).steps(f)
        return (
            Step(F16, AICORE, "mode: fp16 in, fp32 out", out=F32),
            Step(F32, AICORE, "no fp16-in/fp32-out kernel"),
            Step(F16, AICORE, "no fp32 kernel"),
            Step(BF16, AICORE, "no fp32 kernel", precise_out=True),
            Step(F32, AICPU, "aicpu fallback"),
        )


@dataclass(frozen=True)
class AllowFp32ToLow(Rule):
    """allow_fp32_to_fp16 / allow_fp32_to_bf16: keep the original dtype where a kernel supports
    it; otherwise the low dtype (then fp32, the other low dtype, the AI CPU)."""

    label: str
    low: str
    context_free: bool = True

    def steps(self, f: OpFacts) -> Steps:
        low, orig = self.low, f.orig
        no_orig = f"no {short(orig)} kernel"
        return (
            Step(orig, AICORE, "mode"),
            Step(low, AICORE, no_orig),
            Step(F32, AICORE, no_orig),
            Step(other_low(low), AICORE, no_orig),
            Step(orig, AICPU, "aicpu fallback"),
            Step(F32, AICPU, "aicpu fallback"),
        )


@dataclass(frozen=True)
class KeepOrigin(Rule):
    """must_keep_origin_dtype: the original dtype; unsupported fp16 rises to fp32, unsupported
    fp32 runs on the AI CPU, else the pass fails (keep_dtype has no effect)."""

    context_free: bool = True
    label: str = "must_keep_origin_dtype"
    keeps_origin: bool = True

    def steps(self, f: OpFacts) -> Steps:
        orig = f.orig
        if orig in LOW:
            return (
                Step(orig, AICORE, "mode"),
                Step(F32, AICORE, f"no {short(orig)} kernel"),
                Step(F32, AICPU, "aicpu fallback"),
            )
        return (Step(orig, AICORE, "mode"), Step(orig, AICPU, "aicpu fallback"))


@dataclass(frozen=True)
class Mix(Rule):
    """allow_mix_precision (fp16 / bf16): fp32 ops by list: white -> low, black -> fp32, gray ->
    the dtype its producers voted for (the most precise), fp32 with no voting producer. An op
    already in a low dtype keeps it; one whose low dtype has no kernel is decided as fp32."""

    label: str
    low: str
    context_free: bool = True
    uses_mixlist: bool = True

    def wants_vote(self, f: OpFacts) -> bool:
        return f.kind == "gray" and f.orig in (F32, *LOW)

    def steps(self, f: OpFacts) -> Steps:
        orig = f.orig
        if orig == F32:
            return self.fp32_steps(f)
        if orig in LOW:
            return (Step(orig, AICORE, f"original {TO_CANN[orig]}"), *self.fp32_steps(f))
        return (  # f64
            Step(orig, AICORE, f"original {TO_CANN.get(orig, orig)}"),
            Step(F32, AICORE, f"no {short(orig)} kernel"),
            Step(F32, AICPU, "aicpu fallback"),
            Step(self.low, AICORE, f"no {short(orig)} kernel"),
        )

    def fp32_steps(self, f: OpFacts) -> Steps:
        low, other = self.low, other_low(self.low)
        no_low = f"no {short(low)} kernel"
        label = f.list_reason if f.list_reason is not None else f.kind
        if f.kind == "white":
            return (
                Step(low, AICORE, label),
                Step(F32, AICORE, no_low, warn=True),
                Step(F32, AICPU, "aicpu fallback", warn=True),
                Step(other, AICORE, no_low, warn=True),
            )
        if f.kind == "black":
            return (
                Step(F32, AICORE, label),
                Step(F32, AICPU, "aicpu fallback"),
                Step(low, AICORE, "no fp32 kernel", warn=True),
                Step(other, AICORE, "no fp32 kernel", warn=True),
            )
        gray = "gray" if f.list_reason is None else f"{f.list_reason}; gray"
        vote = f.vote
        if vote is None:
            return (
                Step(F32, AICORE, f"{gray}: no voting producer"),
                Step(low, AICORE, "no fp32 kernel"),
                Step(F32, AICPU, "aicpu fallback"),
                Step(other, AICORE, "no fp32 kernel"),
            )
        if vote not in LOW:
            return (
                Step(vote, AICORE, gray),
                Step(F32, AICORE, gray),
                Step(low, AICORE, "no fp32 kernel"),
                Step(F32, AICPU, "aicpu fallback"),
                Step(other, AICORE, "no fp32 kernel"),
            )
        # The same fallback order as a vote for fp32 (low AI Core before fp32 AI CPU): the casts a
        # first run inserts vote fp32 in a second run, which must then choose the same kernel.
        no_vote = f"no {short(vote)} kernel"
        return (
            Step(vote, AICORE, gray),
            Step(F32, AICORE, no_vote),
            Step(low, AICORE, no_vote),
            Step(F32, AICPU, "aicpu fallback"),
            Step(other, AICORE, no_vote),
        )


CANN_MODES: Mapping[str, Rule] = {
    "force_fp16": ForceFp16(),
    "force_fp32": ForceFp32(),
    "cube_fp16in_fp32out": CubeFp16InFp32Out(),
    **{m: AllowFp32ToLow(m, mode_low(m)) for m in ("allow_fp32_to_fp16", "allow_fp32_to_bf16")},
    "must_keep_origin_dtype": KeepOrigin(),
    **{m: Mix(m, mode_low(m)) for m in ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16")},
}
"""Every v1 precision mode -> its rule."""
assert set(CANN_MODES) == set(V1_MODES)


def cann_mode(mode: str) -> Rule:
    rule = CANN_MODES.get(mode)
    if rule is None:
        raise AscendError(f"unknown precision_mode '{mode}'; expected one of {', '.join(V1_MODES)}")
    return rule


# ======================================================================================
# Framework policies (DESIGN.md section 11)
# ======================================================================================


@dataclass(frozen=True)
class PolicyOptions:
    """The options a policy may read (validated by each policy's factory)."""

    mode: str
    """The resolved CANN mode (the `cann` policy's rule)."""
    level: str | None = None
    amp_dtype: str = F16
    tf_lists: str | None = None
    """TF list edits as a pass option: `ALLOWLIST_ADD=A,B;DENYLIST_REMOVE=C` (added to the environment's)."""
    environ: Mapping[str, str] | None = None
    keep_dtype: KeepDtype | None = None
    """The `keep_dtype` file's entries (`tf`: TF's preserved nodes, never painted nor entered)."""


def _cann_policy(opts: PolicyOptions) -> Rule:
    if opts.level is not None:
        raise AscendError(f"amp_level '{opts.level}' applies to the mindspore policy only")
    return cann_mode(opts.mode)


def _tf_policy(opts: PolicyOptions) -> Rule:
    from ascend_mp.policies.tf import tf_rule

    return tf_rule(opts)


def _mindspore_policy(opts: PolicyOptions) -> Rule:
    from ascend_mp.policies.frameworks import mindspore_rule

    return mindspore_rule(opts)


def _torch_policy(opts: PolicyOptions) -> Rule:
    from ascend_mp.policies.frameworks import torch_rule

    return torch_rule(opts)


POLICIES: Mapping[str, Callable[[PolicyOptions], Rule]] = {
    "cann": _cann_policy,
    "tf": _tf_policy,
    "mindspore": _mindspore_policy,
    "torch": _torch_policy,
}
"""Every policy name -> the factory of its rule."""

AMP_DTYPES = {n: d.name for d in (dtypes.F16, dtypes.BF16) for n in (d.name, d.short, d.cann)}
"""The spellings of the framework policies' low dtypes (`fp16`, `float16`, `f16`; `bf16`, `bfloat16`)."""


def policy_rule(policy: str, opts: PolicyOptions) -> Rule:
    """The rule of `policy` with `opts`; an unknown policy is an error."""
    factory = POLICIES.get(policy)
    if factory is None:
        raise AscendError(f"unknown amp_policy '{policy}'; expected one of {', '.join(POLICIES)}")
    return factory(opts)


def amp_dtype(name: str) -> str:
    dtype = AMP_DTYPES.get(name)
    if dtype is None:
        raise AscendError(f"unknown amp_dtype '{name}'; expected fp16 or bf16")
    return dtype
