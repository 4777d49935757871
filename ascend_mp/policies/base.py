"""What every precision rule is made of: the kernels to try (:class:`Step`), the facts a rule reads
(:class:`OpFacts`), the rule interface (:class:`Rule`), the options a policy reads (:class:`PolicyOptions`),
and the step sequences the CANN modes and the framework policies share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ascend_mp import dtypes
from ascend_mp.dtypes import short
from ascend_mp.errors import AscendError

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

    def prepare(self, module: Operation, supports: Callable[[Operation, str], bool]) -> None:  # noqa: B027 - optional hook
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
        rest = (
            Step(F32, AICORE, no_orig, warn=True),
            Step(F16, AICORE, no_orig, warn=True),
            Step(BF16, AICORE, no_orig, warn=True),
        )
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


AMP_DTYPES = {n: d.name for d in (dtypes.F16, dtypes.BF16) for n in (d.name, d.short, d.cann)}
"""The spellings of the framework policies' low dtypes (`fp16`, `float16`, `f16`; `bf16`, `bfloat16`)."""


def amp_dtype(name: str) -> str:
    dtype = AMP_DTYPES.get(name)
    if dtype is None:
        raise AscendError(f"unknown amp_dtype '{name}'; expected fp16 or bf16")
    return dtype
