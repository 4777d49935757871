"""The `tf` policy: TensorFlow grappler's AutoMixedPrecision graph rewrite on an ascend graph.

The lists are data (`tf.json`: TF's allow, infer, deny and clear lists for fp16 (the CUDA lists,
which TF's CPU mode uses too) and for bf16 (the oneDNN lists), each TF op name mapped onto the
CANN op types of the dialect). The painting follows `AutoMixedPrecisionImpl::Optimize`:

1. allow: the ops on the allow list (nothing else happens when there are none);
2. deny: from each deny op, forward through the infer/clear ops that lie upstream of a deny or
   infer op (a clear op at the end of such a path is not painted);
3. infer and clear fp32 ops that are both downstream and upstream of allow ops (through
   infer/clear, non-deny fp32 ops with a low-precision kernel) become allow;
4. clear fp32 ops connected to an allow op through clear ops (both directions) become allow;
5. allow-list ops without a low-precision kernel leave the allow set;
6. a user's Cast to fp32 whose consumers are all allow is retargeted to the low dtype.

Allow ops run in the low dtype; the rest keep their dtype. Only fp32 ops change. Ops marked
`keep_dtype` and the ops of a keep_dtype file act as TF's preserved (fetched) nodes: never painted,
never entered (deny still propagates through them, as in TF). Edges are the
float tensors between ascend ops; function arguments and results are TF's Placeholder/_Retval.
List edits come from `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{ALLOW,INFER,DENY,CLEAR}LIST_{ADD,REMOVE}`
(comma separated TF op names or CANN op types) and the pass option `tf_lists`.

`TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL` (case-insensitive, as TF reads it) selects TF's variants:
`TENSOR_CORES_ONLY` empties the fp16 infer, deny and clear lists (TF's CUDA lists, `IsPseudoFastMath`:
only allow-list ops change; the bf16 oneDNN lists ignore it); `TREAT_INFER_AS_DENY` moves the infer list
onto the deny list; `UNSAFE_FORCE_ALL` paints every fp32 op allow that TF's `CanForceFP16` admits (not a
constant, stateful or variable-updating op; here also not a user's Cast, and only with a low-precision kernel)
and skips the deny propagation; TF refuses it with bf16 (oneDNN), and so does this policy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from ascend_mp.config import KeepDtype
from ascend_mp.errors import AscendError
from ascend_mp.policies.base import F32, OpFacts, PolicyOptions, Rule, Steps, keep_steps, low_steps, short

LISTS = ("ALLOWLIST", "INFERLIST", "DENYLIST", "CLEARLIST")
KINDS = {"ALLOWLIST": "allow", "INFERLIST": "infer", "DENYLIST": "deny", "CLEARLIST": "clear"}
ALIASES = {"WHITELIST": "ALLOWLIST", "GRAYLIST": "INFERLIST", "BLACKLIST": "DENYLIST"}
"""TF's older variable names, still read for backwards compatibility."""
ENV_PREFIX = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"


def load_data() -> dict[str, Any]:
    return json.loads(resources.files("ascend_mp.policies").joinpath("tf.json").read_text(encoding="utf-8"))


def _known_cann_types() -> frozenset[str]:
    from ascend_mp.dialects.ascend import OPS_BY_TYPE

    return frozenset(OPS_BY_TYPE)


NOT_LIST_EDITS = frozenset({"LEVEL", "IGNORE_PERFORMANCE", "EMULATE_FP16", "LOG_PATH"})
LEVELS = ("TENSOR_CORES_ONLY", "TREAT_INFER_AS_DENY", "UNSAFE_FORCE_ALL")
"""The values of `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL` TF acts on (unset or empty: the default)."""


def tf_level(opts: PolicyOptions) -> str:
    """`TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL`, upper-cased ('' when unset); another value is an error
    (TF would silently run the default rewrite)."""
    var = ENV_PREFIX + "LEVEL"
    level = (opts.environ or {}).get(var, "").strip().upper()
    if level and level not in LEVELS:
        raise AscendError(f"environment variable {var}: unknown level '{level}'; expected {', '.join(LEVELS)} or unset")
    return level


"""TF's other `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_*` variables (auto_mixed_precision.cc): not list edits."""


def _edits(opts: PolicyOptions) -> list[tuple[str, str, str, str]]:
    """(list, ADD/REMOVE, op name, where) for every edit, in the order TF applies them.

    TF 2.x (`auto_mixed_precision_lists.h`): each list getter calls `UpdateList(NAME)` and then, for
    the old name, `UpdateList(OLD)` (`AllowList`: ALLOWLIST then WHITELIST, `InferList`: INFERLIST then
    GRAYLIST, `DenyList`: DENYLIST then BLACKLIST); `UpdateList` inserts every `_ADD` entry, then erases
    every `_REMOVE` entry, of that one list only. The `tf_lists` option's entries follow, in order.
    """
    env = opts.environ or {}
    for var in sorted(env):
        if not var.startswith(ENV_PREFIX) or var[len(ENV_PREFIX) :] in NOT_LIST_EDITS:
            continue
        name, _, action = var[len(ENV_PREFIX) :].rpartition("_")
        if ALIASES.get(name, name) not in LISTS or action not in ("ADD", "REMOVE"):
            raise AscendError(
                f"environment variable {var}: unknown list edit; expected {ENV_PREFIX}"
                "{ALLOW,INFER,DENY,CLEAR}LIST_{ADD,REMOVE}"
            )
    edits: list[tuple[str, str, str, str]] = []
    for name in LISTS:
        for var_name in (name, *(old for old, new in ALIASES.items() if new == name)):
            for action in ("ADD", "REMOVE"):
                var = f"{ENV_PREFIX}{var_name}_{action}"
                edits += [(name, action, op.strip(), var) for op in env.get(var, "").split(",") if op.strip()]
    if opts.tf_lists:
        for i, entry in enumerate(opts.tf_lists.split(";"), 1):
            if not entry.strip():
                continue
            key, eq, value = entry.partition("=")
            key = key.strip().upper().removeprefix(ENV_PREFIX)
            name, _, action = key.rpartition("_")
            name = ALIASES.get(name, name)
            if not eq or name not in LISTS or action not in ("ADD", "REMOVE"):
                raise AscendError(
                    f"tf_lists entry {i} '{entry.strip()}': expected {{ALLOW,INFER,DENY,CLEAR}}LIST_{{ADD,REMOVE}}=Op,Op"
                )
            edits += [(name, action, op.strip(), f"tf_lists entry {i}") for op in value.split(",") if op.strip()]
    return edits


def tf_lists(low_name: str, opts: PolicyOptions) -> dict[str, str]:
    """CANN op type -> TF list kind (allow, infer, deny, clear) after the list edits.

    As TF, an edit changes one list only (adding an op to the deny list leaves it on the allow list),
    and an op left on two lists is an error (TF's `ValidateLists`: "Op lists have conflicting
    entries", the rewrite does not run); so is a CANN op type that two lists reach through their TF
    names. Moving an op takes both edits: `DENYLIST_ADD=MatMul;ALLOWLIST_REMOVE=MatMul`.
    """
    data = load_data()
    lists: dict[str, set[str]] = {n: set(data["lists"][low_name][KINDS[n]]) for n in LISTS}
    mapping: dict[str, list[str]] = data["cann"]
    known = _known_cann_types()
    level = tf_level(opts)
    tensor_cores_only = level == "TENSOR_CORES_ONLY" and low_name == "fp16"  # TF's getters return before editing
    for name, action, op, source in _edits(opts):
        if op not in mapping and op not in known:
            raise AscendError(f"{source}: unknown op '{op}'; expected a TensorFlow op name or a CANN op type")
        if action == "ADD":
            lists[name].add(op)
        else:
            lists[name].discard(op)
    if tensor_cores_only:
        for name in ("INFERLIST", "DENYLIST", "CLEARLIST"):
            lists[name] = set()
    if level == "TREAT_INFER_AS_DENY":
        lists["DENYLIST"] |= lists["INFERLIST"]
        lists["INFERLIST"] = set()
    where: dict[str, str] = {}  # op name -> its list
    owner: dict[str, tuple[str, str]] = {}  # CANN op type -> (list, the op name that reaches it)
    for name in LISTS:
        for op in sorted(lists[name]):
            if where.setdefault(op, name) != name:
                raise AscendError(_conflict(op, (where[op], op), (name, op)))
            for cann in mapping.get(op, [op] if op in known else []):
                if owner.setdefault(cann, (name, op))[0] != name:
                    raise AscendError(_conflict(cann, owner[cann], (name, op)))
    return {cann: KINDS[name] for cann, (name, _) in owner.items()}


def _conflict(key: str, first: tuple[str, str], second: tuple[str, str]) -> str:
    (list1, op1), (list2, op2) = first, second
    what = f"'{key}'" if op1 == op2 == key else f"CANN op type {key} ('{op1}' and '{op2}')"
    return (
        f"TF mixed-precision lists: {what} is on both the {KINDS[list1]} and the {KINDS[list2]} list after the edits; "
        f"TensorFlow rejects this (ValidateLists: Op lists have conflicting entries); remove it from one, "
        f"e.g. {list1}_REMOVE={op1}"
    )


@dataclass
class _Graph:
    """The ops to paint and the float edges between them."""

    ops: list[Operation] = field(default_factory=list[Operation])
    index: dict[Operation, int] = field(default_factory=dict[Operation, int])
    inputs: list[list[int]] = field(default_factory=list[list[int]])
    outputs: list[list[int]] = field(default_factory=list[list[int]])


def _dfs(
    roots: Iterable[int],
    follow: Callable[[int], Iterable[int]],
    enter: Callable[[int], bool],
    visit: Callable[[int], None],
) -> None:
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        visit(i)
        stack.extend(j for j in follow(i) if j not in seen and enter(j))


@dataclass
class TfRule(Rule):
    """grappler's AutoMixedPrecision (see the module docstring): allow ops and the infer/clear ops
    painted allow run in the low dtype; deny, unpainted infer/clear and unlisted ops keep theirs."""

    label: str
    low: str
    lists: Mapping[str, str]
    follow_allow: bool = True
    """Infer ops directly after an allow op become allow (TF's pass 4, in every mode since TF 2.x)."""
    preserve: KeepDtype | None = None
    """The keep_dtype file: its ops (by name or `OpType::`) are TF's preserved nodes, as the marked ones."""
    force_all: bool = False
    """`..._LEVEL=UNSAFE_FORCE_ALL`: every op :func:`_can_force` admits is allow; no deny propagation."""
    paint: dict[Operation, str] = field(default_factory=dict[Operation, str])
    cast_targets: dict[Operation, str] = field(default_factory=dict[Operation, str])

    def prepare(self, module: Operation, supports: Callable[[Operation, str], bool]) -> None:
        from ascend_mp.dialects.ascend import AscendOp, CastOp
        from ascend_mp.dtypes import PRECISION_RANK, tensor_dtype

        self.paint, self.cast_targets = {}, {}
        g = _Graph()
        for op in module.walk():
            if isinstance(op, AscendOp):
                g.index[op] = len(g.ops)
                g.ops.append(op)
                g.inputs.append([])
                g.outputs.append([])
        consumers: dict[int, list[Operation]] = {}
        for i, op in enumerate(g.ops):
            for v in op.operands:
                if tensor_dtype(v.type) not in PRECISION_RANK:
                    continue
                j = g.index.get(v.owner) if isinstance(v.owner, Operation) else None
                if j is not None and j not in g.inputs[i]:
                    g.inputs[i].append(j)
                    g.outputs[j].append(i)
        for op in g.ops:
            for r in op.results:
                for use in r.uses:
                    consumers.setdefault(g.index[op], []).append(use.operation)
        kind = [self.lists.get(op.name.removeprefix("ascend."), "") for op in g.ops]
        process = [not self._preserved(op) for op in g.ops]
        f32 = [_compute_dtype(op) == F32 for op in g.ops]
        low_ok = [supports(op, self.low) for op in g.ops]
        n = len(g.ops)
        allow = {i for i in range(n) if process[i] and kind[i] == "allow"}
        why: dict[int, str] = {i: "tf: allow" for i in allow}
        if self.force_all:
            for i, op in enumerate(g.ops):
                if process[i] and i not in allow and f32[i] and low_ok[i] and _can_force(op):
                    allow.add(i)
                    why[i] = "tf: forced (UNSAFE_FORCE_ALL)"
        if allow:
            # 2) deny forward through infer/clear ops upstream of deny or infer ops (not when forcing all).
            upstream: set[int] = set()
            deny: set[int] = set()
            for r in range(n) if not self.force_all else ():
                if kind[r] in ("deny", "infer"):
                    _dfs([r], lambda i: g.inputs[i], lambda j: j not in upstream and kind[j] == "clear", upstream.add)
            for r in range(n) if not self.force_all else ():
                if kind[r] == "deny" and r not in deny:
                    _dfs([r], lambda i: g.outputs[i], lambda j: j not in deny and j in upstream, deny.add)
            # 3) infer/clear between allow ops.
            down: set[int] = set()
            for r in range(n):
                if process[r] and kind[r] == "allow":
                    _dfs(
                        [r],
                        lambda i: g.outputs[i],
                        lambda j: (
                            j not in down
                            and kind[j] in ("clear", "infer")
                            and j not in deny
                            and process[j]
                            and f32[j]
                            and low_ok[j]
                        ),
                        down.add,
                    )
            up: set[int] = set()
            for r in range(n):
                if process[r] and kind[r] == "allow" and r not in up:

                    def between(i: int) -> None:
                        up.add(i)
                        if i not in allow:
                            allow.add(i)
                            why[i] = f"tf: {kind[i]}, between allow ops"

                    _dfs([r], lambda i: g.inputs[i], lambda j: j not in up and j in down, between)
            # 4) infer ops right after an allow op, with no deny producer, in program order (so a chain of infer
            #    ops after an allow op is painted). TF 2.21 runs this step with the fp16 lists too (measured against
            #    grappler in conformance/).
            if self.follow_allow:
                for i in range(n):
                    if not process[i] or i in deny or i in allow or kind[i] != "infer" or not f32[i] or not low_ok[i]:
                        continue
                    fanin = g.inputs[i]
                    if any(j in allow for j in fanin) and not any(j in deny for j in fanin):
                        allow.add(i)
                        why[i] = "tf: infer, follows an allow op"
            # 5) clear ops connected to allow ops through clear ops.
            done: set[int] = set()
            for r in sorted(allow):
                if not process[r] or r in done:
                    continue

                def through_clear(i: int) -> None:
                    done.add(i)
                    if i not in allow:
                        allow.add(i)
                        why[i] = "tf: clear, connected to allow ops"

                _dfs(
                    [r],
                    lambda i: [*g.inputs[i], *g.outputs[i]],
                    lambda j: (
                        j not in allow and j not in deny and process[j] and f32[j] and low_ok[j] and kind[j] == "clear"
                    ),
                    through_clear,
                )
            # 6) allow-list ops that cannot run in the low dtype.
            for i in list(allow):
                if kind[i] == "allow" and not low_ok[i]:
                    allow.discard(i)
                    why[i] = f"tf: allow, but no {short(self.low)} kernel"
            for i in range(n):
                if i not in why:
                    why[i] = _idle_reason(kind[i], i in deny)
            # 7) user casts to fp32 whose consumers are all allow, or that a list edit put on a list and the
            #    painting made allow (Cast is on TF's lists like any op).
            for i, op in enumerate(g.ops):
                if not isinstance(op, CastOp) or tensor_dtype(op.results[0].type) != F32 or not process[i]:
                    continue
                users = consumers.get(i, [])
                if i in allow or (users and all(u in g.index and g.index[u] in allow for u in users)):
                    self.cast_targets[op] = self.low
        for i, op in enumerate(g.ops):
            self.paint[op] = why.get(i) or _idle_reason(kind[i], False)
            if i in allow:
                self.paint[op] = "allow:" + self.paint[op]

    def _preserved(self, op: Operation) -> bool:
        """TF's `MustPreserve` (nodes_to_preserve, the fetch nodes): marked `keep_dtype` or in the keep_dtype
        file. TF leaves such a node out of `should_process_nodes_`: never painted allow nor entered by the
        allow passes (1, 3, 4, 5); deny still propagates through it (pass 2 does not ask ShouldProcess)."""
        if op.keep_dtype is not None:  # pyright: ignore[reportAttributeAccessIssue]  # prepare() puts only AscendOps in the graph
            return True
        if self.preserve is None:
            return False
        name = op.properties.get("name")
        return self.preserve.matches(
            name.data if isinstance(name, StringAttr) else None, op.name.removeprefix("ascend.")
        )

    def cast_target(self, op: Operation) -> tuple[str, str] | None:
        d = self.cast_targets.get(op)
        return None if d is None else (d, "tf: Cast whose consumers are all allow")

    def steps(self, f: OpFacts) -> Steps:
        reason = self.paint.get(f.op, "tf: not on any list")
        if reason.startswith("allow:"):
            reason = reason.removeprefix("allow:")
            if f.orig == F32:
                return low_steps(self.low, reason)
        return keep_steps(f.orig, reason)


def _idle_reason(kind: str, denied: bool) -> str:
    if kind == "deny":
        return "tf: deny"
    if denied:
        return f"tf: {kind}, downstream of a deny op"
    if kind == "infer":
        return "tf: infer, not between allow ops"
    if kind == "clear":
        return "tf: clear, not connected to allow ops"
    if kind == "allow":
        return "tf: allow"
    return "tf: not on any list"


def _can_force(op: Operation) -> bool:
    """TF's `CanForceFP16`: not a constant, not stateful (the float status ops have effects), not an op updating
    variables (TF's ref/resource optimizers: `VARIABLE_UPDATE`); a user's Cast keeps its target (step 7 may
    retarget it)."""
    from xdsl.traits import Pure

    from ascend_mp.dialects.ascend import AscendOp, CastOp, ConstOp

    assert isinstance(op, AscendOp)  # the painting's graph holds ascend ops only
    return not isinstance(op, (ConstOp, CastOp)) and op.has_trait(Pure) and not op.VARIABLE_UPDATE


def _compute_dtype(op: Operation) -> str | None:
    from ascend_mp.dtypes import PRECISION_RANK, tensor_dtype

    for v in (*op.operands, *op.results):
        d = tensor_dtype(v.type)
        if d in PRECISION_RANK:
            return d
    return None


def tf_rule(opts: PolicyOptions) -> Rule:
    if opts.level is not None:
        raise AscendError(f"amp_level '{opts.level}' applies to the mindspore policy only")
    low_name = short(opts.amp_dtype)
    force_all = tf_level(opts) == "UNSAFE_FORCE_ALL"
    if force_all and low_name == "bf16":
        raise AscendError(
            f"environment variable {ENV_PREFIX}LEVEL: UNSAFE_FORCE_ALL cannot be used with amp_dtype bf16 "
            "(TensorFlow refuses it when oneDNN is used)"
        )
    return TfRule(
        "tf" if low_name == "fp16" else "tf bf16",
        opts.amp_dtype,
        tf_lists(low_name, opts),
        preserve=opts.keep_dtype,
        force_all=force_all,
    )
