"""`ascend-precision`: CANN's precision modes and the framework policies as an xDSL pass (DESIGN.md 5, 11).

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

It works in two steps, both linear in the number of ops:

1. :func:`decide_precision` walks the module once in program order (producers
   come before consumers within a block) and picks each op's kernel from its
   `caps` (or the operator library), the mode, its list kind and the overrides
   (`customize_dtypes` > `keep_dtype` > `modify_mixlist` > library lists > mode).
   Gray ops in the mix modes follow the dtypes their producers were given.
   Under the CANN modes an op's decision depends only on its class, its `caps`, `list` and
   `keep_dtype` properties, the overrides its name matches, what the walk knows of its operands
   (input dtype, decided dtype, vote) and its results' dtypes: it is computed once per such key
   and replayed for every other op with the key (the report's reasons and locations are built
   only when a report is asked for).
2. :func:`apply_plan` applies the resulting :class:`PrecisionPlan` in one loop over the ops it
   changes, in program order (the patterns of :func:`populate_precision_patterns` do the same
   inside other pipelines; no DCE), retyping results in place (the pass itself retypes them
   as it decides them where deciding cannot fail, and leaves the loop only the casts): at most one cast per
   (value, dtype), shared by every consumer; an exact round trip through a user
   cast (f16->f32->f16, bf16->f32->bf16) is folded instead of adding a cast, and a user's
   f32->f16 (f32->bf16) cast of a value retyped to f16 (bf16) is an identity: it is erased and its
   uses read the value (no f16->f32 cast is inserted to feed it).

Cast placement: a cast goes right before its first consumer in program order
(so a function argument is not cast at the top, and a cast back to the result
dtype sits right before `func.return`); the consumers after it share it. When
that consumer is nested in a region, the cast goes right before the op of the
value's block that contains it; when it is in another block of a multi-block
region, right after the value's definition. Either point dominates every use.

Weights: ATC stores a weight that only feeds low-precision kernels in that dtype (DESIGN 10), and so does the
pass: a Const every use of which the plan casts to one lower float dtype is retyped to it instead of cast
(no Cast is built only to be folded away; a Const with one use is retyped as that use is decided, the others
by :func:`apply_plan`), and `store_low_weights` converts its payload; the report counts the cast it stands for,
as before. The payloads are converted last, in one go.

Running the pass twice gives the same IR as running it once.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import weakref
from operator import attrgetter, itemgetter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue, SSAValues
from xdsl.irdl import OptionalDef, VariadicDef
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike

from ascend_mp.config import (
    CustomizeDtypes,
    KeepDtype,
    KernelDtypes,
    Mixlist,
    load_customize_dtypes,
    load_keep_dtype,
    load_mixlist,
)
from ascend_mp.dialects.ascend import (
    OPS_BY_TYPE,
    AscendOp,
    CapsAttr,
    CastOp,
    ConstOp,
    Kernel,
    ListKindAttr,
    Unit,
)
from ascend_mp.dtypes import LOW_FLOATS, PRECISION_RANK, TO_CANN, dtype_name, with_dtype
from ascend_mp.errors import AscendError, AscendPassError
from ascend_mp.fileio import write_output
from ascend_mp.ir import quick_op
from ascend_mp.passes.store_weights import WeightBytes, store_low_weights
from ascend_mp.modes import DEFAULT_MODE, V1_MODES, V2_MODES, V2_TO_V1
from ascend_mp.opinfo import OpLibrary, load_library
from ascend_mp.policies import (
    AICORE,
    BF16,
    F16,
    F32,
    LOW,
    OpFacts,
    PolicyOptions,
    Rule,
    Step,
    Steps,
    amp_dtype,
    keep_steps,
    policy_rule,
)
from ascend_mp.policies.scopes import ToFloat, load_to_float

logger = logging.getLogger("ascend_mp")

EXACT_WIDENING = frozenset({(F16, F32), (BF16, F32), (F16, "f64"), (BF16, "f64"), (F32, "f64")})
"""(narrow, wide) pairs whose round trip narrow -> wide -> narrow is the identity."""

MIX_MODES = ("allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16")

def _cann(dtype: str | None) -> str | None:
    return None if dtype is None else TO_CANN.get(dtype, dtype)


def _rank(dtype: str | None) -> int:
    return PRECISION_RANK.get(dtype, 0) if dtype is not None else 0


def _join(a: str, b: str) -> str:
    """The more precise of two float dtypes; f16 and bf16 (neither holds the other) join at f32."""
    if a == b:
        return a
    ra, rb = _rank(a), _rank(b)
    if ra == rb:
        return F32
    return a if ra > rb else b


# ======================================================================================
# Options
# ======================================================================================


@dataclass(frozen=True)
class PrecisionConfig:
    """Validated options of the pass: the mode resolved to v1 and the loaded override files."""

    mode: str
    library: OpLibrary
    mixlist: Mixlist | None = None
    keep_dtype: KeepDtype | None = None
    customize_dtypes: CustomizeDtypes | None = None
    warnings: tuple[str, ...] = ()
    """What loading the options warned about (already logged)."""
    rule: Rule | None = None
    """The rule deciding each op (`ascend_mp.policies`); None: the CANN mode's."""
    policy: str = "cann"
    to_float: ToFloat | None = None
    """`to_float` scopes (node-name prefixes -> dtype), applied before the rule."""

    def __post_init__(self) -> None:
        if self.rule is None:
            object.__setattr__(self, "rule", policy_rule("cann", PolicyOptions(self.mode)))

    @property
    def the_rule(self) -> Rule:
        assert self.rule is not None
        return self.rule

    @property
    def label(self) -> str:
        """The mode or policy as the report names it."""
        return self.the_rule.label


def resolve_mode(mode: str | None, mode_v2: str | None) -> str:
    """The v1 mode name for `precision_mode` / `precision_mode_v2` (mutually exclusive)."""
    if mode is not None and mode_v2 is not None:
        raise AscendError(
            f"precision_mode '{mode}' and precision_mode_v2 '{mode_v2}' are mutually exclusive; give one of them"
        )
    if mode_v2 is not None:
        if mode_v2 not in V2_TO_V1:
            raise AscendError(f"unknown precision_mode_v2 '{mode_v2}'; expected one of {', '.join(V2_MODES)}")
        return V2_TO_V1[mode_v2]
    if mode is None:
        return DEFAULT_MODE
    if mode not in V1_MODES:
        raise AscendError(f"unknown precision_mode '{mode}'; expected one of {', '.join(V1_MODES)}")
    return mode


def load_config(
    mode: str | None = None,
    mode_v2: str | None = None,
    modify_mixlist: str | None = None,
    keep_dtype: str | None = None,
    customize_dtypes: str | None = None,
    soc: str = "ascend910",
    op_info: str | None = None,
    report: str | None = None,
    *,
    policy: str | None = None,
    level: str | None = None,
    amp_dtype_name: str | None = None,
    tf_lists: str | None = None,
    to_float: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> PrecisionConfig:
    """Validate every option and load every file, before anything is rewritten.

    `policy` (default `cann`) picks the rule (`ascend_mp.policies`); `level` is MindSpore's amp
    level, `amp_dtype_name` the framework policies' low dtype (fp16 or bf16), `tf_lists` TF's list
    edits (added to the `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_*` variables of `environ`, default
    `os.environ`), `to_float` a file or inline list of `scope=dtype` scopes.
    """
    resolved = resolve_mode(mode, mode_v2)
    policy = policy or "cann"
    if policy != "cann" and (mode is not None or mode_v2 is not None):
        raise AscendError(f"precision_mode applies to the cann policy only, not to amp_policy '{policy}'")
    known = set(OPS_BY_TYPE)
    keep = load_keep_dtype(keep_dtype, known) if keep_dtype is not None else None
    opts = PolicyOptions(
        resolved, level, amp_dtype(amp_dtype_name or "fp16"), tf_lists, os.environ if environ is None else environ, keep
    )
    rule = policy_rule(policy, opts)
    scopes = load_to_float(to_float) if to_float is not None else None
    library = load_library(soc, op_info)
    mixlist = load_mixlist(modify_mixlist, known) if modify_mixlist is not None else None
    custom = load_customize_dtypes(customize_dtypes, known) if customize_dtypes is not None else None
    if report is not None:
        folder = os.path.dirname(os.path.abspath(report))
        if not os.path.isdir(folder):
            raise AscendError(f"{report}: cannot write the precision report: no directory '{folder}'")
        if os.path.isdir(report):
            raise AscendError(f"{report}: cannot write the precision report: Is a directory")
    warnings = [w for cfg in (mixlist, keep, custom) if cfg is not None for w in cfg.warnings]
    useless: list[str] = []
    what = f"precision mode '{resolved}'" if policy == "cann" else f"amp_policy '{rule.label}'"
    if mixlist is not None and not rule.uses_mixlist:
        useless.append(f"{modify_mixlist}: modify_mixlist has no effect in {what} (only in the mix modes)")
    if keep is not None and rule.keeps_origin:
        useless.append(f"{keep_dtype}: keep_dtype has no effect in precision mode 'must_keep_origin_dtype'")
    for message in useless:
        logger.warning("%s", message)
    return PrecisionConfig(resolved, library, mixlist, keep, custom, (*warnings, *useless), rule, policy, scopes)


# ======================================================================================
# Kernel choice
# ======================================================================================


class Signature(NamedTuple):
    """An op's dtypes: one per operand definition (None: absent optional operand), one per result."""

    inputs: tuple[str | None, ...]
    outputs: tuple[str | None, ...]


def _primary(inputs: Sequence[str | None], outputs: Sequence[str | None]) -> str | None:
    """The dtype an op computes in: its first float operand's, else its first float result's."""
    for d in inputs:
        if d in PRECISION_RANK:
            return d
    for d in outputs:
        if d in PRECISION_RANK:
            return d
    return None


class _Choice(NamedTuple):
    kernel: Kernel | None
    reason: str
    warning: str | None


class _Candidates:
    """The kernels of one kernel set that fit one original signature, with memoised choices."""

    def __init__(self, kernels: Sequence[Kernel], sig: Signature, cls: _OpClass):
        self.sig = sig
        self.all = tuple(kernels)
        """Every kernel of the op (for messages)."""
        # A kernel can run the op when it has the op's arity and non-float dtypes, is float where the op is, and
        # keeps the op verifying: float in its FLOAT_ONLY slots, one dtype across its SAME_DTYPE slots (a hand-written
        # caps may break these). Checked on each kernel's dtypes (inputs, then outputs) at positions read in one call.
        present = sig.inputs + sig.outputs
        n_in, n_out = len(sig.inputs), len(sig.outputs)
        fixed: list[int] = []
        floats: list[int] = []
        for i, d in enumerate(present):
            if d is not None:
                (floats if d in PRECISION_RANK else fixed).append(i)
        first = floats[0] if floats else None
        self.primary = None if first is None else present[first]  # `_primary(sig.inputs, sig.outputs)`
        float_inputs = [i for i in floats if i < n_in]
        for i in cls.floats:
            if present[i] is not None and i not in floats:
                floats.append(i)
        same = [i for i in cls.same if present[i] is not None]
        get_fixed = itemgetter(*fixed, 0, 0)  # pads: always a tuple (of 3 or more)
        get_floats = itemgetter(*floats, 0, 0) if floats else None
        get_same = itemgetter(*same) if len(same) > 1 else None
        want = get_fixed(present)[:-2]
        float_ok = _FLOAT_NAMES.issuperset
        fits: list[Kernel] = []
        primaries: list[str | None] = []
        for k in kernels:
            dts = k.inputs + k.outputs
            if len(k.inputs) != n_in or len(k.outputs) != n_out or get_fixed(dts)[:-2] != want:
                continue
            if get_floats is not None and not float_ok(get_floats(dts)[:-2]):
                continue
            if get_same is not None and len(set(get_same(dts))) > 1:
                continue
            fits.append(k)
            primaries.append(None if first is None else dts[first])  # `_primary` of its present dtypes
        self.kernels = fits
        """The kernels that can run this op: same non-float dtypes, and the op still verifies."""
        self.primaries = primaries
        self._float_inputs = float_inputs
        self._varying: tuple[int, ...] | None = None
        self.memo: dict[Any, _Choice] = {}
        self._best: dict[tuple[str, str, bool, str | None], Kernel | None] = {}

    @property
    def varying(self) -> tuple[int, ...]:
        """Operand definitions whose dtype differs between the kernels: the ones producers vote on (gray ops ask)."""
        if self._varying is None:
            if len(self.kernels) > 1 and self._float_inputs:
                columns = list(zip(*[k.inputs for k in self.kernels]))
                self._varying = tuple([i for i in self._float_inputs if len(set(columns[i])) > 1])
            else:
                self._varying = ()
        return self._varying

    def best(self, dtype: str, engine: str, precise_out: bool = False, out: str | None = None) -> Kernel | None:
        """The kernel computing in `dtype` on `engine` that changes the fewest of the op's dtypes
        (with `out`: only kernels whose float results are all `out`)."""
        key = (dtype, engine, precise_out, out)
        if key in self._best:
            return self._best[key]
        sig_outputs = self.sig.outputs
        matches = [
            k for k, p in zip(self.kernels, self.primaries)
            if p == dtype and k.engine == engine
            and (out is None or all([kd == out for kd, sd in zip(k.outputs, sig_outputs) if sd in PRECISION_RANK]))
        ]
        found: Kernel | None = matches[0] if matches else None
        if len(matches) > 1:  # the first of the best rank
            best_key: tuple[int, int] | None = None
            for k in matches:
                outs = -sum(_rank(d) for d in k.outputs) if precise_out else 0
                rank = (outs, self.distance(k, dtype))
                if best_key is None or rank < best_key:
                    found, best_key = k, rank
        self._best[key] = found
        return found

    def distance(self, k: Kernel, dtype: str) -> int:
        """How many dtypes of the op `k` changes, beyond moving its compute dtype to `dtype`."""
        n = 0
        p = self.primary
        for kd, sd in zip(k.inputs, self.sig.inputs):
            if sd is not None:
                n += kd != (dtype if sd == p else sd)
        for kd, sd in zip(k.outputs, self.sig.outputs):
            n += kd != (dtype if sd == p else sd)
        return n

    def run(self, steps: Iterable[Step]) -> _Choice | None:
        for step in steps:
            kernel = self.best(step.dtype, step.engine, step.precise_out, step.out)
            if kernel is not None:
                return _Choice(kernel, step.reason, step.reason if step.warn else None)
        return None

    def find(self, inputs: Sequence[str], outputs: Sequence[str]) -> Kernel | None:
        """The kernel with exactly these dtypes (inputs per operand definition, or per present one)."""
        for k in self.kernels:
            if tuple(outputs) != k.outputs:
                continue
            if tuple(inputs) == k.inputs or tuple(inputs) == _present(k.inputs, self.sig.inputs):
                return k
        return None


_FLOAT_NAMES = frozenset(PRECISION_RANK)


def _present(kernel_inputs: Sequence[str], sig_inputs: Sequence[str | None]) -> tuple[str, ...]:
    return tuple(k for k, s in zip(kernel_inputs, sig_inputs) if s is not None)


def _fmt_kernels(kernels: Sequence[Kernel]) -> str:
    return ", ".join(str(k) for k in kernels) if kernels else "none"


def _fmt_sig(inputs: Sequence[str | None], outputs: Sequence[str | None]) -> str:
    ins = ", ".join(d or "-" for d in inputs)
    outs = ", ".join(d or "-" for d in outputs)
    return f"({ins}) -> {outs if len(outputs) == 1 else f'({outs})'}"


# ======================================================================================
# Decisions and the report
# ======================================================================================


@dataclass
class OpDecision:
    """What the pass decided for one ascend op (one entry of the precision report)."""

    name: str | None
    type: str
    location: str
    original: Signature
    chosen: Signature
    list_kind: str
    engine: str
    reason: str

    @property
    def reduced(self) -> bool:
        return _rank(_primary(*self.chosen)) < _rank(_primary(*self.original))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "location": self.location,
            "original": {"inputs": [_cann(d) for d in self.original.inputs], "outputs": [_cann(d) for d in self.original.outputs]},
            "chosen": {"inputs": [_cann(d) for d in self.chosen.inputs], "outputs": [_cann(d) for d in self.chosen.outputs]},
            "list": self.list_kind,
            "engine": self.engine,
            "reason": self.reason,
        }


@dataclass
class PrecisionReport:
    """The decisions of one run of the pass, and its totals (written by `report=FILE`)."""

    mode: str
    soc: str
    ops: list[OpDecision]
    casts_inserted: int = 0
    casts_folded: int = 0
    warnings: list[str] = field(default_factory=list[str])
    weight_bytes_before: int = 0
    """Bytes of the `ascend.Const` ops before the pass ..."""
    weight_bytes_after: int = 0
    """... and after it stored the constants used only in a low dtype in that dtype (as ATC does)."""
    constants_stored_low: int = 0

    @property
    def ops_reduced(self) -> int:
        return sum(1 for d in self.ops if d.reduced)

    def by_name(self, name: str) -> OpDecision:
        return next(d for d in self.ops if d.name == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "soc": self.soc,
            "ops": [d.to_json() for d in self.ops],
            "totals": {
                "ops": len(self.ops),
                "ops_reduced": self.ops_reduced,
                "casts_inserted": self.casts_inserted,
                "casts_folded": self.casts_folded,
                "weight_bytes_before": self.weight_bytes_before,
                "weight_bytes_after": self.weight_bytes_after,
                "constants_stored_low": self.constants_stored_low,
            },
            "warnings": list(self.warnings),
        }

    def write(self, path: str) -> None:
        """Write the JSON report (through `fileio.write_output`: atomic, deferred with the run's outputs)."""
        try:
            write_output(path, json.dumps(self.to_json(), indent=2) + "\n")
        except OSError as e:
            raise AscendError(f"{path}: cannot write the precision report: {e.strerror}") from None

    def merge(self, other: PrecisionReport) -> PrecisionReport:
        """This report followed by `other` (the chunks of one `--split-input-file` run)."""
        return PrecisionReport(
            self.mode,
            self.soc,
            [*self.ops, *other.ops],
            self.casts_inserted + other.casts_inserted,
            self.casts_folded + other.casts_folded,
            [*self.warnings, *(w for w in other.warnings if w not in self.warnings)],
            self.weight_bytes_before + other.weight_bytes_before,
            self.weight_bytes_after + other.weight_bytes_after,
            self.constants_stored_low + other.constants_stored_low,
        )


_State = tuple[str | None, str | None, str | None]
"""What the walk knows of a value: (its dtype in the input, its dtype after the decisions so far, its vote or None)."""


class _Effect(NamedTuple):
    """What deciding one op does: what the report says of it and what the rewrite changes. Every op with the same
    memo key (:meth:`_Planner.visit_block`) has the same effect, so it is computed once per key."""

    op_type: str
    sig: Signature
    """The op's original signature."""
    kernel: Kernel | None
    kind: str
    """The list kind (after modify_mixlist)."""
    reason: str
    follows: tuple[int, ...] | None
    """Whom a gray op follows (the reason names them): (i,) the producer of operand i; (i, j) the fp16/bf16
    join of the producers of operands i and j."""
    wanted: tuple[str | None, ...] | None
    """The dtype each operand must arrive in (None: as it is); None when no operand needs a cast."""
    new: tuple[str | None, ...] | None
    """The new dtype of each result (None: unchanged); None when no result changes."""
    states: tuple[_State, ...]
    """The state of each result."""
    warning: str | None
    """What the op warns about (the message after its location and label)."""
    keep_failed: bool
    """keep_dtype could not keep the original dtype: a warning, and the mode decided."""
    reduced: tuple[str | None, str | None] | None
    """(before, after) compute dtypes when the kernel reduces precision (the info line)."""
    folded: bool
    """An identity user cast: erased, its uses read its input."""
    loud: bool
    """Whether the op warns (warning or keep_failed)."""


def _effect(
    op_type: str,
    sig: Signature,
    kernel: Kernel | None,
    kind: str,
    reason: str,
    follows: tuple[int, ...] | None,
    wanted: tuple[str | None, ...] | None,
    new: tuple[str | None, ...] | None,
    states: tuple[_State, ...],
    warning: str | None = None,
    keep_failed: bool = False,
    reduced: tuple[str | None, str | None] | None = None,
    folded: bool = False,
) -> _Effect:
    loud = warning is not None or keep_failed
    return _Effect(op_type, sig, kernel, kind, reason, follows, wanted, new, states, warning, keep_failed, reduced, folded, loud)


_Record = tuple[Operation, _Effect, Sequence[SSAValue], "str | None", int]
"""A decision as the walk records it: (op, effect, its operands when decided, its function's name, its index in the
function's walk). Names, locations and reasons are resolved only when a report is built."""

_Change = tuple[Operation, int, "tuple[str | None, ...] | None", "tuple[str | None, ...] | None", bool]
"""An op the rewrite changes: (op, program-order index, wanted operand dtypes, new result dtypes, folded)."""


def _name_of(op: Operation) -> str | None:
    name = op.properties.get("name")
    return name.data if isinstance(name, StringAttr) else None


def _position(function: str | None, count: int) -> str:
    """What location_of says of an op it did not parse: its index in the function's walk."""
    return f"@{function}, op #{count}" if function is not None else "<unknown location>"


def _follows(spec: tuple[int, ...] | None, operands: Sequence[SSAValue]) -> str:
    """The end of a gray op's reason: whom it follows (see `_Effect.follows`)."""
    if spec is None:
        return ""
    if len(spec) == 2:
        return f": follows the fp16/bf16 join of {_producer(operands[spec[0]].owner)} and {_producer(operands[spec[1]].owner)}"
    owner = operands[spec[0]].owner
    return f": follows {_producer(owner)}" if isinstance(owner, Operation) else ""


@dataclass(eq=False)
class PrecisionPlan:
    """The decided dtypes, as the rewrite consumes them.

    `changes` lists, in program order, the ops the rewrite touches: the dtype each operand must have
    (None: leave it), for the ops that need a cast, and the new dtype of each result (None: unchanged),
    or a user cast to erase. The patterns look an op up with :meth:`change`.
    """

    config: PrecisionConfig
    changes: list[_Change] = field(default_factory=list[_Change])
    records: list[_Record] = field(default_factory=list[_Record])
    """Every ascend op's decision, in program order (empty when the planner was asked for no report)."""
    warnings: list[str] = field(default_factory=list[str])
    inserted: set[Operation] = field(default_factory=set[Operation])
    """Casts this plan inserted (tracked here, nothing marks them in the IR); a fold looks through user casts only."""
    casts: dict[tuple[int, str], tuple[SSAValue, SSAValue]] = field(default_factory=dict[tuple[int, str], tuple[SSAValue, SSAValue]])
    """(id of a value, dtype) -> (the value, its cast): one cast per (value, dtype). The value is kept to check the
    id's owner (a value erased with a folded cast may leave its id to a new one)."""
    last_cast: dict[Operation | Block, Operation] = field(default_factory=dict[Operation | Block, Operation])
    """The last cast placed right after an op or at the start of a block (where no consumer could host it)."""
    user_casts: dict[tuple[SSAValue, str], Operation] = field(default_factory=dict[tuple[SSAValue, str], Operation])
    """Casts in the input, by (source value, destination dtype), for reuse."""
    user_order: dict[Operation, int] = field(default_factory=dict[Operation, int])
    """Program-order index of the user casts (one is reused only by a later consumer in its block)."""
    consts: list[ConstOp] = field(default_factory=list[ConstOp])
    """Every `ascend.Const`, in program order (storing low weights needs no walk)."""
    casts_inserted: int = 0
    casts_folded: int = 0
    _types: dict[tuple[int, str], tuple[Attribute, TensorType]] = field(default_factory=dict[tuple[int, str], tuple[Attribute, TensorType]])
    distinct: int = 0
    """How many distinct decisions the walk computed (the rest were looked up: see `_Planner.visit_block`)."""
    stored: WeightBytes | None = None
    """What storing the constants low did (with the bytes it converted and the time that took), once done."""
    retyped_consts: list[tuple[ConstOp, TensorType]] = field(default_factory=list[tuple[ConstOp, TensorType]])
    """Constants retyped to the low dtype instead of cast (by :func:`apply_plan`, or by the walk for a one-use
    constant: `_Planner.lone`), with their type before; their payload is left to `store_low_weights`."""
    _dtypes: dict[int, tuple[Attribute, str | None]] = field(default_factory=dict[int, tuple[Attribute, str | None]])
    """:func:`_type_key` of a type -> (what keeps the key's object alive, its dtype)."""
    _by_op: dict[Operation, _Change] | None = None

    def change(self, op: Operation) -> _Change | None:
        """What the plan changes of `op` (None: nothing)."""
        if self._by_op is None:  # built once, when the patterns first ask (the direct loop reads `changes`)
            self._by_op = {c[0]: c for c in self.changes}
        return self._by_op.get(op)

    # -- casts --------------------------------------------------------------------------
    def retyped(self, type_: Attribute, dtype: str) -> TensorType:
        """`type_` (a tensor type) with element type `dtype` (:func:`with_dtype`), cached per type object: a module
        built in Python shares its type objects (a chain of 50k ops: 20% of the pass); a parsed or imported one
        has one per value, and building one costs little more than a lookup."""
        key = (id(type_), dtype)
        hit = self._types.get(key)
        if hit is None:
            assert isinstance(type_, TensorType)
            hit = self._types[key] = (type_, with_dtype(type_, dtype))  # keep type_ alive so its id stays unique
        return hit[1]

    def dtype(self, value: SSAValue) -> str | None:
        """A value's dtype now (cached per :func:`_type_key`)."""
        type_ = value.type
        key = _type_key(type_)
        hit = self._dtypes.get(key)
        if hit is None:
            hit = self._dtypes[key] = (_key_owner(type_), _dtype_of(value))  # keeps the key's object alive
        return hit[1]

    def cast(
        self, value: SSAValue, dtype: str, rewriter: PatternRewriter, user: Operation | None = None, seq: int | None = None
    ) -> SSAValue:
        """`value` converted to `dtype` for `user`: one shared cast per (value, dtype), exact round trips folded.

        A cast of `value` to `dtype` that the user wrote earlier in `user`'s block is reused (`seq`: `user`'s
        program-order index, looked up when not given); a new one is placed right before `user`, its first
        consumer (see :meth:`_place`).
        """
        key = (id(value), dtype)
        hit = self.casts.get(key)
        if hit is not None and hit[0] is value:
            return hit[1]
        if user is not None and self.user_casts:
            written = self.user_casts.get((value, dtype))
            if written is not None and written.parent is user.parent:
                if seq is None:
                    change = self.change(user)
                    seq = change[1] if change is not None else 0
                if self.user_order.get(written, 0) < seq:
                    self.casts[key] = (value, written.results[0])
                    return written.results[0]
        src = self.dtype(value)
        owner = value.owner
        if type(owner) is CastOp and owner not in self.inserted:
            inner = dtype_name(owner.x.type.element_type)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]
            if inner == dtype and (inner, src) in EXACT_WIDENING:
                self.casts_folded += 1
                self.casts[key] = (value, owner.x)
                return owner.x
        if src != dtype and src in LOW and dtype in LOW:
            # No direct fp16 <-> bf16 kernel: go through fp32 (exact first step). The fp32 value may be
            # a user cast, so the second step is looked up (and shared) under its own key too.
            result = self.cast(self.cast(value, F32, rewriter, user, seq), dtype, rewriter, user, seq)
            self.casts[key] = (value, result)
            return result
        cast = quick_op(CastOp, (value,), (with_dtype(value.type, dtype),))  # CastOp(...) at a fraction of the cost
        block, before, anchor = self._place(value, user)
        if type(rewriter) is _DirectRewriter:
            _link(cast, block, before)
        else:
            rewriter.insert(cast, InsertPoint(block, before))
        if anchor is not None:
            self.last_cast[anchor] = cast
        self.inserted.add(cast)
        self.casts_inserted += 1
        (result,) = cast.results
        self.casts[key] = (value, result)
        return result

    def _place(self, value: SSAValue, user: Operation | None) -> tuple[Block, Operation | None, Operation | Block | None]:
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
        last = self.last_cast.get(anchor)
        if last is not None:
            return block, last._next_op, anchor  # pyright: ignore[reportPrivateUsage]
        if isinstance(anchor, Block):
            return block, anchor.first_op, anchor
        return block, anchor._next_op, anchor  # pyright: ignore[reportPrivateUsage]

    # -- reporting ------------------------------------------------------------------------
    def report(self) -> PrecisionReport:
        ops: list[OpDecision] = []
        for op, effect, operands, function, count in self.records:
            sig, kernel = effect.sig, effect.kernel
            chosen = sig if kernel is None else Signature(
                tuple(None if s is None else k for k, s in zip(kernel.inputs, sig.inputs)), kernel.outputs
            )
            engine = AICORE if kernel is None else kernel.engine
            reason = effect.reason + _follows(effect.follows, operands)
            location = _location(op, _position(function, count))
            ops.append(OpDecision(_name_of(op), effect.op_type, location, sig, chosen, effect.kind, engine, reason))
        return PrecisionReport(
            self.config.label, self.config.library.soc, ops, self.casts_inserted, self.casts_folded, list(self.warnings),
            *self.weights,
        )

    @property
    def weights(self) -> tuple[int, int, int]:
        """Weight bytes before and after storing low-precision constants, and how many were stored low."""
        stored = self.stored
        return (0, 0, 0) if stored is None else (stored.before, stored.after, len(stored.narrowed))


def _location(op: Operation, position: str) -> str:
    """The op's `file:line:col` when it was parsed, else its position in the input (`@f, op #k`)."""
    from ascend_mp.ir import source_location

    return source_location(op) or position


# ======================================================================================
# The forward walk
# ======================================================================================


@dataclass(frozen=True, eq=False)
class _OpClass:
    """Per-op-class facts, computed once."""

    op_type: str
    regular: bool
    """Every operand definition is a single operand (no optional / variadic ones)."""
    fixed: str | None
    """Why ops of this class are never changed (user casts, constants), else None."""
    variadic: int
    """Index of the optional or variadic operand definition (ascend ops have at most one), else -1."""
    optional: bool
    defs: int
    same: tuple[int, ...]
    """Slots (operand definitions, then results) the verifier wants of one dtype."""
    floats: tuple[int, ...]
    """Slots the verifier wants to be float."""
    cube: bool
    """Whether the op runs on the Cube unit (`OpFacts.cube`)."""

    def spans(self, n: int) -> list[range]:
        """The operand positions of each operand definition of an op with `n` operands."""
        if self.regular:
            return [range(i, i + 1) for i in range(n)]
        v = self.variadic
        take = n - (self.defs - 1)
        if self.optional:
            take = min(take, 1)
        return [range(i, i + 1) for i in range(v)] + [range(v, v + take)] + [range(i, i + 1) for i in range(v + take, n)]

    def groups(self, op: Operation) -> list[list[SSAValue]]:
        """`operand_groups(op)` without re-reading the op definition."""
        operands = op.operands
        return [[operands[i] for i in span] for span in self.spans(len(operands))]


_CLASSES: dict[type[Operation], _OpClass] = {}


def _op_class(op: AscendOp) -> _OpClass:
    cls = type(op)
    info = _CLASSES.get(cls)
    if info is None:
        defs = [d for _, d in op.get_irdl_definition().operands]
        odd = [i for i, d in enumerate(defs) if isinstance(d, VariadicDef)]
        fixed = "user cast" if isinstance(op, CastOp) else "constant" if op.has_trait(ConstantLike) else None
        if len(odd) > 1:
            raise AscendError(f"{op.name}: more than one optional or variadic operand is not supported")
        variadic = odd[0] if odd else -1
        optional = bool(odd) and isinstance(defs[variadic], OptionalDef)
        irdl = op.get_irdl_definition()
        slots = [n for n, _ in irdl.operands] + [n for n, _ in irdl.results]
        same = tuple(i for i, n in enumerate(slots) if n in op.SAME_DTYPE)
        floats = tuple(i for i, n in enumerate(slots) if n in op.FLOAT_ONLY)
        info = _OpClass(
            op.name.removeprefix("ascend."), not odd, fixed, variadic, optional, len(defs), same, floats,
            type(op).UNIT == Unit.CUBE,
        )
        _CLASSES[cls] = info
    return info


def _producer(owner: Operation | Block) -> str:
    """`MatMulV2/fc1` (the op type and name attribute of a producer), as reasons name it."""
    if not isinstance(owner, Operation):
        return "a block argument"
    label = owner.name.removeprefix("ascend.")
    wname = owner.properties.get("name")
    if isinstance(wname, StringAttr):
        label += f"/{wname.data}"
    return label


def _type_key(type_: Attribute) -> int:
    """What a value's dtype is cached under: the id of its element type for a tensor (an imported module has a
    type object per value, but a handful of element types), else of its type."""
    return id(type_.element_type) if type(type_) is TensorType else id(type_)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportAttributeAccessIssue]


def _key_owner(type_: Attribute) -> object:
    """The object whose id :func:`_type_key` is (kept alive with the cache entry, so the id stays unique)."""
    return type_.element_type if type(type_) is TensorType else type_  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]


def _dtype_of(value: SSAValue) -> str | None:
    type_ = value.type
    if isinstance(type_, TensorType):
        return dtype_name(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    return None


_CLASSIFIED: dict[bool, dict[type[Operation], tuple[int, _OpClass | None]]] = {}
"""What :meth:`_Planner.classify` said of op classes, per rule kind (context-free or not)."""

_DECIDING = frozenset({"caps", "list", "keep_dtype"})
"""The properties that change an op's decision (part of the memo key)."""

_TYPE = attrgetter("_type")
"""A value's type (`SSAValue.type` without the property call, for the hot loop)."""

_FAST, _CONST, _ASCEND, _FUNC, _OTHER = range(5)
"""How the walk handles an op class: an ascend op decided through the memo (`_CONST`: an `ascend.Const`, which the
plan also lists), one decided afresh each time (user casts, every op under a rule that reads more than the memo key),
a function (names the positions), any other op."""


class _Planner:
    """Decides every op in one forward walk (see :func:`decide_precision`)."""

    def __init__(self, config: PrecisionConfig, records: bool = True, retype: bool = False, store_low: bool = False):
        self.config = config
        self.plan = PrecisionPlan(config, warnings=list(config.warnings))
        self.rule = config.the_rule
        self.states: dict[int, _State] = {}
        """id of a value -> its state, for every value the walk has met (block arguments and results)."""
        self.type_states: dict[int, tuple[object, _State]] = {}
        """:func:`_type_key` of a type -> (the key's object, the state of a value of that type the walk knows nothing of)."""
        self.type_keys: dict[int, str] = {}
        """:func:`_type_key` of a type (kept alive by `type_states`) -> its dtype, `?` if unmodelled (the memo key's
        result part)."""
        self.candidates: dict[tuple[int, _OpClass, Signature], _Candidates] = {}
        self.keepalive: list[object] = []
        self.kinds: dict[tuple[str, str], tuple[str, str]] = {}
        self.contexts: dict[object, tuple[tuple[Kernel, ...], str, str, str | None]] = {}
        self.wants: dict[object, bool] = {}
        """(orig, list kind, modify_mixlist reason, cube) -> whether a context-free rule wants the producers' vote."""
        self.steps: dict[object, Steps] = {}
        """(orig, list kind, modify_mixlist reason, cube, vote) -> a context-free rule's steps for those facts."""
        self.classes = _CLASSIFIED.setdefault(self.rule.context_free, {})
        """Op class -> how the walk handles it (:meth:`classify`: it reads the class and the rule's context_free)."""
        self.memo: dict[object, _Effect] = {}
        """Memo key (see :meth:`visit_block`) -> the effect every op with that key has."""
        self.warned: set[str] = set()
        self.used_names: set[str] = set()
        self.used_types: set[str] = set()
        self.info = logger.isEnabledFor(logging.INFO)
        self.seq = 0
        self.function: str | None = None
        self.count = 0
        """The current op's function and its index in the function's walk (its position without a location)."""
        self.track = config.keep_dtype is not None or config.customize_dtypes is not None
        self.overrides = self.track or config.to_float is not None
        """Whether an op's name may change its decision."""
        self.records: list[_Record] | None = self.plan.records if records else None
        self.retype = retype and self.rule.context_free and not self.rule.keeps_origin and config.customize_dtypes is None
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
        return _position(self.function, self.count)

    def type_state(self, value: SSAValue) -> _State:
        """The state of a value the walk knows nothing of: its input dtype, no vote (cached per :func:`_type_key`)."""
        type_ = value.type
        key = _type_key(type_)
        hit = self.type_states.get(key)
        if hit is None:
            d = _dtype_of(value)
            hit = self.type_states[key] = (_key_owner(type_), (d, d, None))  # keeps the key's object alive
            self.type_keys[key] = "?" if d is None else d
        return hit[1]

    def state(self, value: SSAValue) -> _State:
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
            k.engine == AICORE and _primary(k.inputs, k.outputs) == dtype
            for k in self.kernels(op, _op_class(op).op_type)
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

    def context(self, op: AscendOp, cls: _OpClass) -> tuple[tuple[Kernel, ...], str, str, str | None]:
        """(kernels, library list kind, list kind after modify_mixlist, modify_mixlist's reason or None) of an op: they
        depend on its class and its `caps` and `list` properties only, so they are looked up once per such triple."""
        props = op.properties
        caps, lst = props.get("caps"), props.get("list")
        key = (cls, id(caps) if isinstance(caps, CapsAttr) else None, lst.data if isinstance(lst, ListKindAttr) else None)
        hit = self.contexts.get(key)
        if hit is None:
            info = self.config.library.info(cls.op_type) if key[1] is None or key[2] is None else None
            kernels = caps.data if isinstance(caps, CapsAttr) else info.kernels  # pyright: ignore[reportOptionalMemberAccess]
            library_kind = key[2].value if key[2] is not None else info.list_kind.value  # pyright: ignore[reportOptionalMemberAccess]
            hit = self.contexts[key] = (kernels, library_kind, *self.effective_kind(cls.op_type, library_kind))
            if key[1] is not None:
                self.keepalive.append(caps)  # the id stays unique while the cache lives
        return hit

    def candidates_for(self, kernels: tuple[Kernel, ...], sig: Signature, cls: _OpClass) -> _Candidates:
        key = (id(kernels), cls, sig)
        cands = self.candidates.get(key)
        if cands is None:
            cands = self.candidates[key] = _Candidates(kernels, sig, cls)
            self.keepalive.append(kernels)  # the id stays unique while the cache lives
        return cands

    # -- the walk --------------------------------------------------------------------------
    def run(self, module: Operation) -> PrecisionPlan:
        self.rule.prepare(module, self.supports)
        self.visit(module, module)
        self.plan.distinct = len(self.memo)
        self.check_unused()
        if self.config.mixlist is not None:  # to-remove warnings come while the lists are read
            self.plan.warnings += [w for w in self.config.mixlist.warnings if w not in self.plan.warnings]
        return self.plan

    def visit(self, op: Operation, module: Operation) -> None:
        """Decide `op` and every op nested in it, in program order (the order of `op.walk()`)."""
        self.handle(op, module)
        for region in op.regions:
            for block in region.blocks:
                self.visit_block(block, module)

    def visit_block(self, block: Block, module: Operation) -> None:
        """Decide the ops of a block (and those nested in them). Ops of a class decided through the memo are
        handled here, inline (this loop is the pass's hot path): with a context-free rule, an op's effect depends
        only on its class, its `caps`, `list` and `keep_dtype` properties, the overrides its name and type match,
        its operands' states and its results' dtypes, so it is computed once per such key."""
        states, type_state = self.states, self.type_state
        for arg in block.args:
            states[id(arg)] = type_state(arg)
        get_state, type_key, type_states = states.get, self.type_keys.get, self.type_states
        classes, memo, changes, records = self.classes, self.memo, self.plan.changes, self.records
        overrides, info, retype = self.overrides, self.info, self.retype
        retyped, types, consts = self.plan.retyped, self.plan._types, self.plan.consts  # pyright: ignore[reportPrivateUsage]
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
                    rtype = result._type  # pyright: ignore[reportPrivateUsage]
                    hit = type_states.get(id(rtype.element_type) if type(rtype) is TensorType else id(rtype))  # _type_key
                    states[id(result)] = hit[1] if hit is not None else type_state(result)
                    if lone is not None and (use := result.first_use) is not None and use._next_use is None:  # pyright: ignore[reportPrivateUsage]
                        lone[id(result)] = op  # pyright: ignore[reportArgumentType]
                consts.append(op)  # pyright: ignore[reportArgumentType]
                op = op._next_op  # pyright: ignore[reportPrivateUsage]
                continue
            if what > _CONST or op.regions:
                self.seq, self.count = seq, count
                if op.regions:
                    self.visit(op, module)
                else:
                    self.handle(op, module)
                seq, count = self.seq, self.count
                op = op._next_op  # pyright: ignore[reportPrivateUsage]
                continue
            seq += 1
            count += 1
            cls: _OpClass = entry[1]  # pyright: ignore[reportAssignmentType]
            props = op.properties
            extra: object = None
            if props and not _DECIDING.isdisjoint(props):
                caps, lst = props.get("caps"), props.get("list")
                extra = (
                    id(caps) if isinstance(caps, CapsAttr) else None,  # the op (hence its caps) lives through the walk
                    lst.data if isinstance(lst, ListKindAttr) else None,
                    "keep_dtype" in props,
                )
            tag = self.override_tag(_name_of(op), cls.op_type) if overrides else None
            operands = op._operands  # pyright: ignore[reportPrivateUsage]
            ins = tuple(map(get_state, map(id, operands)))
            if None in ins:  # a value the walk has not met (defined in a later block)
                ins = tuple([get_state(id(v)) or type_state(v) for v in operands])
            results = op.results
            single = len(results) == 1
            if single:  # most ops: the result's dtype, not a tuple of them
                (result,) = results
                rtype = result._type  # pyright: ignore[reportPrivateUsage]
                outs: object = type_key(id(rtype.element_type) if type(rtype) is TensorType else id(rtype))  # _type_key
                if outs is None:  # a type not met yet
                    outs = type_state(result)[0] or "?"
            else:
                outs = tuple(map(type_key, map(_type_key, map(_TYPE, results))))
                if None in outs:  # pyright: ignore[reportOperatorIssue]
                    outs = tuple([type_state(r)[0] or "?" for r in results])
            key = (cls, extra, tag, ins, outs)
            effect = memo.get(key)
            if effect is None:
                self.seq, self.count = seq, count  # where an error or a warning says the op is
                dtypes = (None if outs == "?" else outs,) if single else tuple([None if d == "?" else d for d in outs])  # pyright: ignore[reportGeneralTypeIssues]
                effect = memo[key] = self.effect(op, cls, ins, dtypes)  # pyright: ignore[reportArgumentType]
            # What `commit` does, inline.
            new = effect.new
            if single:
                states[id(result)] = effect.states[0]  # pyright: ignore[reportPossiblyUnboundVariable]
                if retype and new is not None:
                    hit = types.get((id(rtype), new[0]))  # what `retyped` does, inline  # pyright: ignore[reportPossiblyUnboundVariable]
                    result._type = hit[1] if hit is not None else retyped(rtype, new[0])  # pyright: ignore[reportPrivateUsage, reportPossiblyUnboundVariable, reportArgumentType]
                    new = None
            else:
                for r, state in zip(results, effect.states):
                    states[id(r)] = state
                if retype and new is not None:
                    for r, dtype in zip(results, new):
                        if dtype is not None:
                            r._type = retyped(r._type, dtype)  # pyright: ignore[reportPrivateUsage]
                    new = None
            wanted = effect.wanted
            if wanted is not None and lone:
                wanted = self.store_lone(operands, wanted)
            if wanted is not None or new is not None or effect.folded:
                changes.append((op, seq, wanted, new, effect.folded))
            if records is not None:
                records.append((op, effect, operands, self.function, count))
            if what == _CONST:
                consts.append(op)  # pyright: ignore[reportArgumentType]
                if lone is not None and (use := result.first_use) is not None and use._next_use is None:  # pyright: ignore[reportPossiblyUnboundVariable, reportPrivateUsage]
                    lone[id(result)] = op  # pyright: ignore[reportPossiblyUnboundVariable, reportArgumentType]
            if effect.loud or (info and effect.reduced is not None):
                self.seq, self.count = seq, count
                self.notes(op, effect)
            op = op._next_op  # pyright: ignore[reportPrivateUsage]
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
            plan.retyped_consts.append((const, value._type))  # pyright: ignore[reportPrivateUsage, reportArgumentType]
            value._type = plan.retyped(value._type, dtype)  # pyright: ignore[reportPrivateUsage]
            plan.casts_inserted += 1  # the cast it stands for
            plan.casts[(id(value), dtype)] = (value, value)
            if left is None:
                left = list(wanted)
            left[i] = None
        if left is None:
            return wanted
        return None if left.count(None) == len(left) else tuple(left)

    def classify(self, op: Operation) -> tuple[int, _OpClass | None]:
        if isinstance(op, func.FuncOp):
            return _FUNC, None
        if isinstance(op, AscendOp):
            cls = _op_class(op)
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
            self.function, self.count = op.sym_name.data, 0  # pyright: ignore[reportAttributeAccessIssue]
            return
        self.count += 1
        assert what > _CONST, "visit_block decides these"
        if what == _ASCEND:
            self.decide(op, cls)  # pyright: ignore[reportArgumentType]
        elif op is not module:
            self.foreign(op)

    def commit(self, op: Operation, effect: _Effect) -> None:
        """Record the effect of deciding `op`: its changes, its results' states, its record, its warnings."""
        states = self.states
        for r, state in zip(op.results, effect.states):
            states[id(r)] = state
        new = effect.new
        if self.retype and new is not None:
            for r, dtype in zip(op.results, new):
                if dtype is not None:
                    r._type = self.plan.retyped(r._type, dtype)  # pyright: ignore[reportPrivateUsage]
            new = None
        if effect.wanted is not None or new is not None or effect.folded:
            self.plan.changes.append((op, self.seq, effect.wanted, new, effect.folded))
        if self.records is not None:
            self.records.append((op, effect, op._operands, self.function, self.count))  # pyright: ignore[reportPrivateUsage]
        if effect.loud or (self.info and effect.reduced is not None):
            self.notes(op, effect)

    def notes(self, op: Operation, effect: _Effect) -> None:
        """The warnings and the info line of one op."""
        name, op_type = _name_of(op), effect.op_type
        if effect.keep_failed:
            self.warn(
                f"{_location(op, self.here())}: {op_type} '{name or op_type}': keep_dtype cannot keep "
                f"{_cann(_primary(*effect.sig))} (no kernel for it); the mode decides"
            )
        if effect.warning is not None:
            label = f"{op_type} '{name}'" if name else op_type
            self.warn(f"{_location(op, self.here())}: {label}: {effect.warning}")
        if self.info and effect.reduced is not None:  # inputs or outputs: an fp32->fp16 Greater keeps its outputs
            before, after = effect.reduced
            reason = effect.reason + _follows(effect.follows, op._operands)  # pyright: ignore[reportPrivateUsage]
            logger.info("Reduce precision: %s %s -> %s (%s)", name or op_type, _cann(before), _cann(after), reason)

    def foreign(self, op: Operation) -> None:
        """A non-ascend op (func.return, calls, ...): its operands keep their dtypes."""
        wanted = self.kept_operands(op)
        if wanted is not None:
            self.plan.changes.append((op, self.seq, wanted, None, False))
        votes = not op.has_trait(ConstantLike, value_if_unregistered=False)
        for r, state in zip(op.results, _own_states([self.dtype_of(r) for r in op.results], votes)):
            self.states[id(r)] = state

    def signature(
        self, op: AscendOp, cls: _OpClass, states: Sequence[_State] | None = None, outs: tuple[str | None, ...] | None = None
    ) -> tuple[Signature, list[list[SSAValue]] | None] | None:
        """The op's original signature (None if an operand or result has an unmodelled type); `states`: its operands',
        `outs`: its results' dtypes, when the caller has them."""
        dtype_of = self.dtype_of
        groups = None
        if cls.regular:
            if states is None:
                ins = tuple([dtype_of(v) for v in op._operands])  # pyright: ignore[reportPrivateUsage]
            else:
                ins = tuple([state[0] for state in states])
            if None in ins:
                return None
        else:
            groups = cls.groups(op)
            dts: list[str | None] = []
            for g in groups:
                if not g:
                    dts.append(None)
                    continue
                d = dtype_of(g[0])
                for v in g[1:]:  # a variadic group of mixed dtypes runs in the most precise
                    other = dtype_of(v)
                    if d is None or other is None:
                        return None
                    if other != d:
                        d = _join(d, other) if d in PRECISION_RANK and other in PRECISION_RANK else d
                if d is None:
                    return None
                dts.append(d)
            ins = tuple(dts)
        if outs is None:
            outs = tuple([dtype_of(r) for r in op.results])
        if None in outs:
            return None
        return Signature(ins, outs), groups

    # -- deciding an op ----------------------------------------------------------------------
    def override_tag(self, name: str | None, op_type: str) -> object:
        """The overrides an op's name and type match (part of the memo key)."""
        config = self.config
        if self.track:
            self.used_types.add(op_type)
            if name is not None:
                self.used_names.add(name)
        custom = config.customize_dtypes.lookup(name, op_type) if config.customize_dtypes is not None else None
        keep = config.keep_dtype is not None and config.keep_dtype.matches(name, op_type)
        scoped = config.to_float.lookup(name) if config.to_float is not None and name is not None else None
        return (id(custom) if custom is not None else None, keep, scoped)  # custom: an entry of the loaded file

    def decide(self, op: AscendOp, cls: _OpClass) -> None:
        """Decide an op afresh: user casts (retargeted, folded or reused), and every op under a rule that reads
        more than the memo key (the framework policies)."""
        op_type = cls.op_type
        name = _name_of(op)
        if self.track:
            self.used_types.add(op_type)
            if name is not None:
                self.used_names.add(name)
        if isinstance(op, ConstOp):
            self.plan.consts.append(op)
        if cls.fixed is None:
            self.commit(op, self.effect(op, cls))
            return
        found = self.signature(op, cls)
        kind = self.library_kind(op, op_type)
        if found is None:
            self.commit(op, self.kept(op, cls, kind, "unmodelled dtype", None, [self.state(v) for v in op.operands]))
            return
        sig, _ = found
        if cls.fixed == "user cast":
            if self.retarget_cast(op, cls, kind, sig) or self.fold_identity_cast(op, cls, kind, sig):
                return
            source = op.operands[0]
            if not self.changed(source):
                source = self.aliases.get(source, source)  # a folded cast's uses read its input
                self.plan.user_casts.setdefault((source, sig.outputs[0]), op)  # pyright: ignore[reportArgumentType]
                self.plan.user_order[op] = self.seq
        self.commit(op, self.kept(op, cls, kind, cls.fixed, sig, [self.state(v) for v in op.operands]))

    def effect(
        self, op: AscendOp, cls: _OpClass, ins: Sequence[_State] | None = None, outs: tuple[str | None, ...] | None = None
    ) -> _Effect:
        """What deciding an op that may change does (changes nothing). It reads the states of its operands and the
        dtypes of its results: `ins` and `outs` when the caller has them."""
        op_type = cls.op_type
        name = _name_of(op)
        if ins is None:
            ins = tuple([self.state(v) for v in op._operands])  # pyright: ignore[reportPrivateUsage]
        found = self.signature(op, cls, ins, outs)
        kernels, kind, mix_kind, mix_reason = self.context(op, cls)
        if found is None:
            return self.kept(op, cls, kind, "unmodelled dtype", None, ins)
        sig, groups = found
        if cls.fixed is not None:  # constants
            return self.kept(op, cls, kind, cls.fixed, sig, ins)
        if _primary(sig.inputs, sig.outputs) is None:
            return self.kept(op, cls, kind, "no float tensors", sig, ins)
        cands = self.candidates_for(kernels, sig, cls)
        kind = mix_kind
        choice, follows, keep_failed = self.choose(op, cls, name, cands, kind, mix_reason, ins)
        kernel = choice.kernel
        warning = None if choice.warning is None else f"{choice.warning}; kernels: {_fmt_kernels(cands.all)}"
        if kernel is None:
            return self.kept(op, cls, kind, choice.reason, sig, ins, follows, warning, keep_failed)
        # Operands: cast where the value's (decided) dtype differs from the kernel's.
        wanted: list[str | None] | None = None
        operands = op.operands
        if groups is None:
            for i, (sd, kd, state) in enumerate(zip(sig.inputs, kernel.inputs, ins)):
                if sd not in PRECISION_RANK:
                    kd = sd
                if state[1] != kd:
                    if wanted is None:
                        wanted = [None] * len(operands)
                    wanted[i] = kd
        else:
            pos = 0
            for i, g in enumerate(groups):
                sd = sig.inputs[i]
                for _ in g:
                    kd = kernel.inputs[i] if sd in PRECISION_RANK else ins[pos][0]
                    if ins[pos][1] != kd:
                        if wanted is None:
                            wanted = [None] * len(operands)
                        wanted[pos] = kd
                    pos += 1
        # Results: every float result votes with its kernel dtype.
        new: list[str | None] | None = None
        states: list[_State] = []
        for j, (sd, kd) in enumerate(zip(sig.outputs, kernel.outputs)):
            if sd not in PRECISION_RANK:
                states.append((sd, sd, None))
                continue
            states.append((sd, kd, kd))
            if kd != sd:
                if new is None:
                    new = [None] * len(sig.outputs)
                new[j] = kd
        before, after = cands.primary, _primary(kernel.inputs, kernel.outputs)
        return _Effect(
            op_type, sig, kernel, kind, choice.reason, follows,
            None if wanted is None else tuple(wanted), None if new is None else tuple(new), tuple(states),
            warning, keep_failed, (before, after) if _rank(after) < _rank(before) else None, False,
            warning is not None or keep_failed,
        )

    def kept_operands(self, op: Operation) -> tuple[str | None, ...] | None:
        """The operand dtypes of an op that keeps its dtypes: the input dtype of every operand the decisions changed."""
        return _kept_operands([self.states.get(id(v)) for v in op.operands])

    def kept(
        self,
        op: AscendOp,
        cls: _OpClass,
        kind: str,
        reason: str,
        sig: Signature | None,
        ins: Sequence[_State],
        follows: tuple[int, ...] | None = None,
        warning: str | None = None,
        keep_failed: bool = False,
    ) -> _Effect:
        """The effect of an op that keeps its dtypes (its float results vote with them; constants do not vote);
        `ins`: the states of its operands."""
        outs = tuple([self.dtype_of(r) for r in op.results]) if sig is None else sig.outputs
        if sig is None:
            sig = Signature(tuple([state[0] for state in ins]), outs)
        states = _own_states(outs, cls.fixed != "constant")
        return _effect(cls.op_type, sig, None, kind, reason, follows, _kept_operands(ins), None, states, warning, keep_failed)

    def retarget_cast(self, op: AscendOp, cls: _OpClass, kind: str, sig: Signature) -> bool:
        """A user's Cast the rule sends to another dtype (TF: a Cast to fp32 feeding only allow ops)."""
        target = self.rule.cast_target(op)
        if target is None or target[0] == sig.outputs[0]:
            return False
        dst, reason = target
        src = self.dtype(op.operands[0])
        if src is None:
            return False
        kernel = self.candidates_for(self.kernels(op, cls.op_type), sig, cls).find((src,), (dst,))
        if kernel is None:
            return False
        self.commit(op, _effect(cls.op_type, sig, kernel, kind, reason, None, None, (dst,), ((sig.outputs[0], dst, dst),)))
        return True

    def fold_identity_cast(self, op: AscendOp, cls: _OpClass, kind: str, sig: Signature) -> bool:
        """A user's cast to a lower dtype whose input the decisions retyped to that dtype (f32 -> f16 of a value
        now f16) is an identity: DESIGN 5's exact round trip (f16 -> f32 -> f16, bf16 -> f32 -> bf16) vanishes,
        so no cast back to the cast's input dtype is inserted and the user's cast is erased (its uses read the
        input). A cast that still changes the dtype (bf16 into an f32 -> f16 cast) is kept."""
        source = op.operands[0]
        dst = sig.outputs[0]
        if op.keep_dtype is not None:  # a marked cast (training machinery) is kept as written
            return False
        if not self.changed(source) or self.dtype(source) != dst or (dst, sig.inputs[0]) not in EXACT_WIDENING:
            return False
        result = op.results[0]
        if self.plan.retyped(source.type, dst) != result.type:  # pyright: ignore[reportArgumentType]
            return False
        reason = "user cast: identity after retyping, folded"
        # A user cast votes with its output dtype.
        self.commit(op, _effect(cls.op_type, sig, None, kind, reason, None, None, None, ((dst, dst, dst),), folded=True))
        self.plan.casts_folded += 1
        self.aliases[result] = self.aliases.get(source, source)
        return True

    # -- the rules ---------------------------------------------------------------------------
    def choose(
        self, op: AscendOp, cls: _OpClass, name: str | None, cands: _Candidates, kind: str, mix_reason: str | None,
        ins: Sequence[_State],
    ) -> tuple[_Choice, tuple[int, ...] | None, bool]:
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
                wants = self.wants[basics] = rule.wants_vote(OpFacts(op, op_type, name, orig, kind, mix_reason, None, cube))
            vote, follows = self.votes(cls, cands, ins) if wants else (None, None)
            key = (kind, mix_reason, vote)
            choice = cands.memo.get(key)
            if choice is None:
                facts_key = (*basics, vote)
                steps = self.steps.get(facts_key)
                if steps is None:
                    steps = self.steps[facts_key] = rule.steps(OpFacts(op, op_type, name, orig, kind, mix_reason, vote, cube))
                choice = cands.memo[key] = self.fallback(cands, steps, op, op_type, name)
        else:
            inputs = tuple([state[1] for state in ins if state[1] in PRECISION_RANK]) if rule.needs_inputs else ()
            facts = OpFacts(op, op_type, name, orig, kind, mix_reason, None, cube, inputs)
            follows = None
            if rule.wants_vote(facts):
                vote, follows = self.votes(cls, cands, ins)
                facts = facts._replace(vote=vote)
            steps = rule.steps(facts)
            choice = cands.memo.get(steps)
            if choice is None:
                choice = cands.memo[steps] = self.fallback(cands, steps, op, op_type, name)
        if follows is not None and not choice.reason.endswith("gray"):
            follows = None
        return choice, follows, keep_failed

    def overridden(self, cands: _Candidates, steps: tuple[Step, ...]) -> _Choice:
        choice = cands.memo.get(steps)
        if choice is None:
            choice = cands.memo[steps] = cands.run(steps) or self.any_kernel(cands)
        return choice

    def fallback(self, cands: _Candidates, steps: tuple[Step, ...], op: AscendOp, op_type: str, name: str | None) -> _Choice:
        choice = cands.run(steps)
        if choice is not None:
            return choice
        if self.rule.keeps_origin:
            label = f"{op_type} '{name}'" if name else f"{op_type} (unnamed)"
            raise AscendPassError(
                f"{_location(op, self.here())}: {label} has no kernel for its original dtype {_cann(cands.primary)} "
                f"under must_keep_origin_dtype and no AI CPU fallback; kernels: {_fmt_kernels(cands.all)}"
            )
        return self.any_kernel(cands)

    @staticmethod
    def any_kernel(cands: _Candidates) -> _Choice:
        """Nothing the rule allows: any kernel that fits, else the op stays as it is."""
        if cands.kernels:
            k = cands.kernels[0]
            return _Choice(k, "no preferred kernel", f"no kernel the mode allows; using {k}")
        return _Choice(None, "no kernel", f"no kernel fits {_fmt_sig(*cands.sig)}; left unchanged")

    def votes(self, cls: _OpClass, cands: _Candidates, ins: Sequence[_State]) -> tuple[str | None, tuple[int, ...] | None]:
        """The dtype a gray op (of class `cls`) gets from its producers' votes (the most precise), and whom it follows
        (`_Effect.follows`); `ins`: the states of its operands."""
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
            vote = _join(vote, d)
        first = next((p for d, p in ballots if d == vote), None)
        if first is None:  # fp16 and bf16 producers: they join at fp32
            lows = {d: p for d, p in ballots if d in LOW}
            if len(lows) == 2:
                return vote, (lows[F16], lows[BF16])
            first = ballots[0][1]
        return vote, (first,)

    def customized(self, op: AscendOp, op_type: str, name: str | None, cands: _Candidates, custom: KernelDtypes) -> _Choice:
        kernel = cands.find(custom.inputs, custom.outputs)
        if kernel is None:
            path = self.config.customize_dtypes.path  # pyright: ignore[reportOptionalMemberAccess]
            label = f"{op_type} '{name}'" if name else op_type
            raise AscendPassError(
                f"{_location(op, self.here())}: {label} has no kernel {_fmt_sig(custom.inputs, custom.outputs)} "
                f"(customize_dtypes {path}:{custom.line}); kernels: {_fmt_kernels(cands.all)}"
            )
        return _Choice(kernel, "customize_dtypes", None)
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
                self.warn(f"{path}: {len(unmatched)} {what} entries match no op: {shown} and {len(unmatched) - UNMATCHED_SHOWN} more")


UNMATCHED_SHOWN = 5
"""Unmatched keep_dtype/customize_dtypes entries listed one warning each; more are summarised in one."""


def _own_states(dtypes: Sequence[str | None], votes: bool) -> tuple[_State, ...]:
    """The states of the results (of these dtypes) of an op that keeps its dtypes: float results vote with them
    (if `votes`: constants do not)."""
    return tuple([(d, d, d) if votes and d in PRECISION_RANK else (d, d, None) for d in dtypes])


def _kept_operands(states: Sequence[_State | None]) -> tuple[str | None, ...] | None:
    """The operand dtypes of an op that keeps its dtypes, from its operands' states (None: a value the walk has not
    met): the input dtype of every operand the decisions changed, else None (nothing to cast)."""
    wanted: list[str | None] | None = None
    for i, state in enumerate(states):
        if state is not None and state[1] != state[0]:
            if wanted is None:
                wanted = [None] * len(states)
            wanted[i] = state[0]
    return None if wanted is None else tuple(wanted)


def _entries(cfg: KeepDtype | CustomizeDtypes | None) -> tuple[set[str], set[str], str]:
    if cfg is None:
        return set(), set(), ""
    if isinstance(cfg, KeepDtype):
        return set(cfg.names), set(cfg.op_types), cfg.path
    return set(cfg.by_name), set(cfg.by_type), cfg.path


def decide_precision(module: Operation, config: PrecisionConfig, *, records: bool = True) -> PrecisionPlan:
    """Decide every op's kernel in one forward walk; raises AscendError before anything changes.
    `records=False`: keep no per-op records (the plan then reports no ops; the rewrite does not need them)."""
    return _Planner(config, records).run(module)


def _decide_and_retype(module: Operation, config: PrecisionConfig, records: bool) -> PrecisionPlan:
    """:func:`decide_precision` that retypes results as it decides them where that is safe (see `_Planner.retype`),
    and the one-use constants it would store low (`_Planner.lone`): the plan's changes then hold only the casts and
    folds left to :func:`apply_plan`, which must be called with `store_low=True`."""
    return _Planner(config, records, retype=True, store_low=True).run(module)


# ======================================================================================
# Rewrite patterns
# ======================================================================================


class _DirectRewriter:
    """What the plan's rewrite needs of a rewriter (insert a cast, hear of modified ops), without the
    generic driver's worklist: :func:`apply_plan` visits each changed op once, in program order."""

    def insert(self, op: Operation, point: InsertPoint) -> None:
        _link(op, point.block, point.insert_before)

    def notify_op_modified(self, op: Operation) -> None:
        pass

    def handle_operation_modification(self, op: Operation) -> None:
        pass

    def replace_all_uses_with(self, old: SSAValue, new: SSAValue) -> None:
        old.replace_all_uses_with(new)

    def erase(self, op: Operation) -> None:
        Rewriter.erase_op(op)


def _link(op: Operation, block: Block, before: Operation | None) -> None:
    """Put a new, detached op without regions into `block` before `before` (None: at the end): what
    `Block.insert_op_before` and `Block.add_op` do, without their checks (which walk the op's parents)."""
    op.parent = block
    if before is None:
        last = block._last_op  # pyright: ignore[reportPrivateUsage]
        op._prev_op = last  # pyright: ignore[reportPrivateUsage]
        if last is None:
            block._first_op = op  # pyright: ignore[reportPrivateUsage]
        else:
            last._next_op = op  # pyright: ignore[reportPrivateUsage]
        block._last_op = op  # pyright: ignore[reportPrivateUsage]
        return
    prev = before._prev_op  # pyright: ignore[reportPrivateUsage]
    op._prev_op, op._next_op, before._prev_op = prev, before, op  # pyright: ignore[reportPrivateUsage]
    if prev is None:
        block._first_op = op  # pyright: ignore[reportPrivateUsage]
    else:
        prev._next_op = op  # pyright: ignore[reportPrivateUsage]


def _apply_change(change: _Change, plan: PrecisionPlan, rewriter: PatternRewriter | _DirectRewriter) -> None:
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
            result._type = plan.retyped(result.type, dtype)  # pyright: ignore[reportPrivateUsage]
    rewriter.handle_operation_modification(op)


def _cast_operands(
    op: Operation, seq: int, wanted: tuple[str | None, ...], plan: PrecisionPlan, rewriter: PatternRewriter | _DirectRewriter
) -> None:
    operands = op.operands
    changed = False
    for i, dtype in enumerate(wanted):
        if dtype is None:
            continue
        value = operands[i]
        if plan.dtype(value) == dtype:
            continue
        operands[i] = plan.cast(value, dtype, rewriter, op, seq)  # pyright: ignore[reportArgumentType]
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
    casts, dtypes = plan.casts, plan._dtypes  # pyright: ignore[reportPrivateUsage]
    low = _low_consts(plan) if store_low else {}
    for change in plan.changes:  # what _apply_change does, inline with the caches' hits (the rewrite's hot path)
        op, seq, wanted, new, folded = change
        if folded:
            _apply_change(change, plan, rewriter)
            continue
        if wanted is not None:
            operands = op._operands  # pyright: ignore[reportPrivateUsage]
            replaced: list[SSAValue] | None = None
            for i, (value, dtype) in enumerate(zip(operands, wanted)):
                if dtype is None:
                    continue
                type_ = value._type  # pyright: ignore[reportPrivateUsage]
                hit = dtypes.get(id(type_.element_type) if type(type_) is TensorType else id(type_))  # _type_key
                if (hit[1] if hit is not None else plan.dtype(value)) == dtype:
                    continue
                cast = casts.get((id(value), dtype))
                if cast is None and low:
                    const = low.get(id(value))
                    if const is not None:  # the first use of a constant stored low: retyped, its uses read it
                        plan.retyped_consts.append((const, value._type))  # pyright: ignore[reportArgumentType, reportPrivateUsage]
                        value._type = plan.retyped(value._type, dtype)  # pyright: ignore[reportPrivateUsage]
                        plan.casts_inserted += 1  # the cast it stands for (the report counts it, as before)
                        plan.casts[(id(value), dtype)] = (value, value)
                        continue
                if replaced is None:
                    replaced = list(operands)
                replaced[i] = cast[1] if cast is not None and cast[0] is value else plan.cast(value, dtype, rewriter, op, seq)  # pyright: ignore[reportArgumentType]
            if replaced is not None:
                _set_operands(op, replaced)
        if new is not None:
            for result, dtype in zip(op.results, new):
                if dtype is not None:
                    result._type = plan.retyped(result._type, dtype)  # pyright: ignore[reportPrivateUsage]


def _low_consts(plan: PrecisionPlan) -> dict[int, ConstOp]:
    """id of the result -> the constant, for the constants `store_low_weights` would store low after the plan's
    casts: every use is an operand the plan casts (a cast it inserts: no user cast reads the constant, so none is
    reused) to one float dtype of lower precision than the constant's."""
    found: dict[int, ConstOp] = {}
    if not plan.consts:
        return found
    by_op = {id(c[0]): c for c in plan.changes}  # ids: an op's __hash__ is a Python call
    dtypes = plan._dtypes  # pyright: ignore[reportPrivateUsage]
    for const in plan.consts:
        (value,) = const.results
        use = value.first_use
        if use is None:
            continue
        type_ = value._type  # pyright: ignore[reportPrivateUsage]
        hit = dtypes.get(id(type_.element_type) if type(type_) is TensorType else id(type_))  # _type_key
        src = hit[1] if hit is not None else plan.dtype(value)
        if src not in PRECISION_RANK:
            continue
        target: str | None = None
        while use is not None:  # the use list, walked as xDSL's `uses` does (its fields: its properties are calls)
            change = by_op.get(id(use._operation))  # pyright: ignore[reportPrivateUsage]
            wanted = None if change is None or change[4] else change[2]
            dtype = None if wanted is None else wanted[use._index]  # pyright: ignore[reportPrivateUsage]
            if dtype is None or (target is not None and dtype != target):
                target = None
                break
            target = dtype
            use = use._next_use  # pyright: ignore[reportPrivateUsage]
        if target in LOW_FLOATS and PRECISION_RANK[target] < PRECISION_RANK[src]:  # pyright: ignore[reportArgumentType]
            found[id(value)] = const
    return found


def _set_operands(op: Operation, values: Sequence[SSAValue]) -> None:
    """`op.operands[i] = values[i]` for every position that changes, at once: what xDSL's `OpOperands.__setitem__`
    does (move the use to the new value, replace the operand tuple), once per op instead of once per operand."""
    uses = op._operand_uses  # pyright: ignore[reportPrivateUsage]
    for old, new, use in zip(op._operands, values, uses):  # pyright: ignore[reportPrivateUsage]
        if old is not new:
            old.remove_use(use)
            new.add_use(use)
    op._operands = SSAValues(values)  # pyright: ignore[reportPrivateUsage]


# ======================================================================================
# Entry points
# ======================================================================================


def precision_rewrite(module: ModuleOp | Operation, config: PrecisionConfig, *, records: bool = True) -> PrecisionPlan:
    """Decide and apply (the cyclic garbage collector paused: the walk allocates but frees nothing).
    `records=False` when no report is wanted (the plan then reports no ops)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        plan = _decide_and_retype(module, config, records)
        apply_plan(module, plan, store_low=True)
        # ATC stores a weight that only feeds low-precision kernels in that dtype (DESIGN 10).
        plan.stored = store_low_weights(module, plan.inserted, plan.consts, plan.retyped_consts, others=False)
    finally:
        if paused:
            gc.enable()
    return plan


def run_precision(
    module: ModuleOp,
    *,
    mode: str | None = None,
    mode_v2: str | None = None,
    modify_mixlist: str | None = None,
    keep_dtype: str | None = None,
    customize_dtypes: str | None = None,
    soc: str = "ascend910",
    op_info: str | None = None,
    report: str | None = None,
    policy: str | None = None,
    level: str | None = None,
    amp_dtype: str | None = None,
    tf_lists: str | None = None,
    to_float: str | None = None,
) -> PrecisionReport:
    """Run the precision pass on `module` in place and return what it decided (options as the pass's)."""
    config = load_config(
        mode, mode_v2, modify_mixlist, keep_dtype, customize_dtypes, soc, op_info, report,
        policy=policy, level=level, amp_dtype_name=amp_dtype, tf_lists=tf_lists, to_float=to_float,
    )
    result = precision_rewrite(module, config).report()
    if report is not None:
        result.write(report)
    return result


@dataclass(frozen=True)
class AscendPrecisionPass(ModulePass):
    """CANN precision modes and framework policies: choose each op's kernel dtypes and insert the casts.

    Options are ATC's: `mode` (`precision_mode`) or `mode_v2` (`precision_mode_v2`), the
    override files `modify_mixlist`, `keep_dtype`, `customize_dtypes`, the SoC and an
    optional op-info table, and `report`, a JSON file of the per-op decisions; and the
    policy options `policy`, `level`, `amp_dtype`, `tf_lists`, `to_float` (DESIGN.md section 11).
    One pass object writes one report covering every module it ran on (the chunks of
    `--split-input-file`).
    """

    name = "ascend-precision"

    mode: str | None = None
    """precision_mode (v1 name); force_fp16 when neither mode is given."""
    mode_v2: str | None = None
    """precision_mode_v2 (fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16)."""
    modify_mixlist: str | None = None
    """JSON moving op types between the black, white and gray lists (mix modes)."""
    keep_dtype: str | None = None
    """Ops (names or OpType::X, one a line) that keep their original dtype."""
    customize_dtypes: str | None = None
    """Exact kernel dtypes per op name or OpType::X."""
    soc: str = "ascend910"
    """SoC whose operator library is used."""
    op_info: str | None = None
    """A CANN aic-<soc>-ops-info.json table overriding the built-in entries."""
    report: str | None = None
    """Where to write the JSON precision report."""
    policy: str | None = None
    """cann (default), tf, mindspore or torch (CLI `--amp_policy`)."""
    level: str | None = None
    """MindSpore's amp level O0-O3 (CLI `--amp_level`; default O2)."""
    amp_dtype: str | None = None
    """The framework policies' low dtype: fp16 (default) or bf16 (CLI `--amp_dtype`)."""
    tf_lists: str | None = None
    """TF list edits, `ALLOWLIST_ADD=A,B;DENYLIST_REMOVE=C` (with the environment's)."""
    to_float: str | None = None
    """`to_float` scopes: a file, or inline `scope=dtype;scope=dtype`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:  # a bad option, file or environment variable: an xDSL diagnostic too (plain xdsl-opt prints it)
            config = load_config(
                self.mode, self.mode_v2, self.modify_mixlist, self.keep_dtype, self.customize_dtypes, self.soc,
                self.op_info, self.report, policy=self.policy, level=self.level, amp_dtype_name=self.amp_dtype,
                tf_lists=self.tf_lists, to_float=self.to_float,
            )
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


__all__ = [
    "AscendPrecisionPass",
    "ApplyAscendDecision",
    "KeepForeignOperands",
    "OpDecision",
    "PrecisionConfig",
    "PrecisionPlan",
    "PrecisionReport",
    "Signature",
    "apply_plan",
    "decide_precision",
    "load_config",
    "populate_precision_patterns",
    "precision_rewrite",
    "resolve_mode",
    "run_precision",
]
