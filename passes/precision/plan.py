"""What the decisions produce: the per-op effects, the plan the rewrite consumes, and the report.

An :class:`Effect` is what deciding one op does (its kernel, the dtype each operand must arrive in, its results'
new dtypes and states, its reason and warning); every op with the same decision key has the same effect
(`decide.py`). The walk (`walk.py`) turns effects into the :class:`PrecisionPlan`: the ops the rewrite changes, in
program order, and (when a report is asked for) a record per op, resolved into a :class:`PrecisionReport` only when
the report is built.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ascend_mp.dialects.ascend import ConstOp, Kernel
from ascend_mp.dtypes import PRECISION_RANK, dtype_name, with_dtype
from ascend_mp.errors import AscendError
from ascend_mp.fileio import write_output
from ascend_mp.passes.precision.kernels import Signature, primary
from ascend_mp.passes.precision.lattice import cann, rank
from ascend_mp.passes.precision.options import PrecisionConfig
from ascend_mp.passes.store_weights import WeightBytes
from ascend_mp.policies import AICORE


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
        return rank(primary(*self.chosen)) < rank(primary(*self.original))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "location": self.location,
            "original": {
                "inputs": [cann(d) for d in self.original.inputs],
                "outputs": [cann(d) for d in self.original.outputs],
            },
            "chosen": {
                "inputs": [cann(d) for d in self.chosen.inputs],
                "outputs": [cann(d) for d in self.chosen.outputs],
            },
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


State = tuple[str | None, str | None, str | None]
"""What the walk knows of a value: (its dtype in the input, its dtype after the decisions so far, its vote or None)."""


class Effect(NamedTuple):
    """What deciding one op does: what the report says of it and what the rewrite changes. Every op with the same
    decision key (`decide.py`) has the same effect, so it is computed once per key."""

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
    states: tuple[State, ...]
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


def make_effect(
    op_type: str,
    sig: Signature,
    kernel: Kernel | None,
    kind: str,
    reason: str,
    follows: tuple[int, ...] | None,
    wanted: tuple[str | None, ...] | None,
    new: tuple[str | None, ...] | None,
    states: tuple[State, ...],
    warning: str | None = None,
    keep_failed: bool = False,
    reduced: tuple[str | None, str | None] | None = None,
    folded: bool = False,
) -> Effect:
    loud = warning is not None or keep_failed
    return Effect(
        op_type, sig, kernel, kind, reason, follows, wanted, new, states, warning, keep_failed, reduced, folded, loud
    )


Record = tuple[Operation, Effect, Sequence[SSAValue], "str | None", int]
"""A decision as the walk records it: (op, effect, its operands when decided, its function's name, its index in the
function's walk). Names, locations and reasons are resolved only when a report is built."""

Change = tuple[Operation, int, "tuple[str | None, ...] | None", "tuple[str | None, ...] | None", bool]
"""An op the rewrite changes: (op, program-order index, wanted operand dtypes, new result dtypes, folded)."""


def name_of(op: Operation) -> str | None:
    name = op.properties.get("name")
    return name.data if isinstance(name, StringAttr) else None


def position_of(function: str | None, count: int) -> str:
    """What location_of says of an op it did not parse: its index in the function's walk."""
    return f"@{function}, op #{count}" if function is not None else "<unknown location>"


def follows_text(spec: tuple[int, ...] | None, operands: Sequence[SSAValue]) -> str:
    """The end of a gray op's reason: whom it follows (see `Effect.follows`)."""
    if spec is None:
        return ""
    if len(spec) == 2:
        return f": follows the fp16/bf16 join of {producer_label(operands[spec[0]].owner)} and {producer_label(operands[spec[1]].owner)}"
    owner = operands[spec[0]].owner
    return f": follows {producer_label(owner)}" if isinstance(owner, Operation) else ""


@dataclass(eq=False)
class PrecisionPlan:
    """The decided dtypes, as the rewrite consumes them.

    `changes` lists, in program order, the ops the rewrite touches: the dtype each operand must have
    (None: leave it), for the ops that need a cast, and the new dtype of each result (None: unchanged),
    or a user cast to erase. The patterns look an op up with :meth:`change`.
    """

    config: PrecisionConfig
    changes: list[Change] = field(default_factory=list[Change])
    records: list[Record] = field(default_factory=list[Record])
    """Every ascend op's decision, in program order (empty when the planner was asked for no report)."""
    warnings: list[str] = field(default_factory=list[str])
    inserted: set[Operation] = field(default_factory=set[Operation])
    """Casts this plan inserted (tracked here, nothing marks them in the IR); a fold looks through user casts only."""
    casts: dict[tuple[int, str], tuple[SSAValue, SSAValue]] = field(
        default_factory=dict[tuple[int, str], tuple[SSAValue, SSAValue]]
    )
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
    type_cache: dict[tuple[int, str], tuple[Attribute, TensorType]] = field(
        default_factory=dict[tuple[int, str], tuple[Attribute, TensorType]]
    )
    distinct: int = 0
    """How many distinct decisions the walk computed (the rest were looked up: see `Planner.visit_block`)."""
    stored: WeightBytes | None = None
    """What storing the constants low did (with the bytes it converted and the time that took), once done."""
    seconds: float = 0.0
    """CPU seconds :func:`precision_rewrite` spent deciding and rewriting, storing the weights low apart (that part
    grows with the weight bytes, not the ops: `stored.seconds`)."""
    retyped_consts: list[tuple[ConstOp, TensorType]] = field(default_factory=list[tuple[ConstOp, TensorType]])
    """Constants retyped to the low dtype instead of cast (by :func:`apply_plan`, or by the walk for a one-use
    constant: `Planner.lone`), with their type before; their payload is left to `store_low_weights`."""
    dtype_cache: dict[int, tuple[Attribute, str | None]] = field(
        default_factory=dict[int, tuple[Attribute, str | None]]
    )
    """:func:`dtype_key` of a type -> (what keeps the key's object alive, its dtype)."""
    _by_op: dict[Operation, Change] | None = None

    def change(self, op: Operation) -> Change | None:
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
        hit = self.type_cache.get(key)
        if hit is None:
            assert isinstance(type_, TensorType)
            hit = self.type_cache[key] = (type_, with_dtype(type_, dtype))  # keep type_ alive so its id stays unique
        return hit[1]

    def dtype(self, value: SSAValue) -> str | None:
        """A value's dtype now (cached per :func:`dtype_key`)."""
        type_ = value.type
        key = dtype_key(type_)
        hit = self.dtype_cache.get(key)
        if hit is None:
            hit = self.dtype_cache[key] = (key_owner(type_), value_dtype(value))  # keeps the key's object alive
        return hit[1]

    # -- reporting ------------------------------------------------------------------------
    def report(self) -> PrecisionReport:
        ops: list[OpDecision] = []
        for op, effect, operands, function, count in self.records:
            sig, kernel = effect.sig, effect.kernel
            chosen = (
                sig
                if kernel is None
                else Signature(
                    tuple(None if s is None else k for k, s in zip(kernel.inputs, sig.inputs)), kernel.outputs
                )
            )
            engine = AICORE if kernel is None else kernel.engine
            reason = effect.reason + follows_text(effect.follows, operands)
            location = op_location(op, position_of(function, count))
            ops.append(OpDecision(name_of(op), effect.op_type, location, sig, chosen, effect.kind, engine, reason))
        return PrecisionReport(
            self.config.label,
            self.config.library.soc,
            ops,
            self.casts_inserted,
            self.casts_folded,
            list(self.warnings),
            *self.weights,
        )

    @property
    def weights(self) -> tuple[int, int, int]:
        """Weight bytes before and after storing low-precision constants, and how many were stored low."""
        stored = self.stored
        return (0, 0, 0) if stored is None else (stored.before, stored.after, len(stored.narrowed))


def op_location(op: Operation, position: str) -> str:
    """The op's `file:line:col` when it was parsed, else its position in the input (`@f, op #k`)."""
    from ascend_mp.ir import source_location

    return source_location(op) or position


def producer_label(owner: Operation | Block) -> str:
    """`MatMulV2/fc1` (the op type and name attribute of a producer), as reasons name it."""
    if not isinstance(owner, Operation):
        return "a block argument"
    label = owner.name.removeprefix("ascend.")
    wname = owner.properties.get("name")
    if isinstance(wname, StringAttr):
        label += f"/{wname.data}"
    return label


def dtype_key(type_: Attribute) -> int:
    """What a value's dtype is cached under: the id of its element type for a tensor (an imported module has a
    type object per value, but a handful of element types), else of its type."""
    return id(type_.element_type) if type(type_) is TensorType else id(type_)


def key_owner(type_: Attribute) -> Attribute:
    """The object whose id :func:`dtype_key` is (kept alive with the cache entry, so the id stays unique)."""
    return type_.element_type if type(type_) is TensorType else type_


def value_dtype(value: SSAValue) -> str | None:
    type_ = value.type
    if isinstance(type_, TensorType):
        return dtype_name(type_.element_type)
    return None


def own_states(dtypes: Sequence[str | None], votes: bool) -> tuple[State, ...]:
    """The states of the results (of these dtypes) of an op that keeps its dtypes: float results vote with them
    (if `votes`: constants do not)."""
    return tuple([(d, d, d) if votes and d in PRECISION_RANK else (d, d, None) for d in dtypes])


def nones(n: int) -> list[str | None]:
    """`n` Nones: a list of dtypes to fill in."""
    return [None] * n


def operands_kept(states: Sequence[State | None]) -> tuple[str | None, ...] | None:
    """The operand dtypes of an op that keeps its dtypes, from its operands' states (None: a value the walk has not
    met): the input dtype of every operand the decisions changed, else None (nothing to cast)."""
    wanted: list[str | None] | None = None
    for i, state in enumerate(states):
        if state is not None and state[1] != state[0]:
            if wanted is None:
                wanted = nones(len(states))
            wanted[i] = state[0]
    return None if wanted is None else tuple(wanted)
