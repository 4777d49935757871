"""The CANN precision modes as rules (ATC `--precision_mode`; docs/design.md §5), one small class per mode
and :data:`CANN_MODES`, every v1 mode name -> its rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ascend_mp.dtypes import TO_CANN, mode_low, short
from ascend_mp.errors import AscendError
from ascend_mp.modes import V1_MODES
from ascend_mp.policies.base import AICORE, AICPU, BF16, F16, F32, LOW, OpFacts, Rule, Step, Steps, other_low


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
    """force_fp32: the most precise kernel: fp32 in/out; a black op without an fp32
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
            return ForceFp32(label=self.label).steps(f)
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
