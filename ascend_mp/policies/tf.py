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
`keep_dtype` act as TF's preserved (fetched) nodes: never painted, never entered. Edges are the
float tensors between ascend ops; function arguments and results are TF's Placeholder/_Retval.
List edits come from `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{ALLOW,INFER,DENY,CLEAR}LIST_{ADD,REMOVE}`
(comma separated TF op names or CANN op types) and the pass option `tf_lists`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from xdsl.ir import Operation

from ascend_mp.errors import AscendError
from ascend_mp.policies import F32, OpFacts, PolicyOptions, Rule, Steps, keep_steps, low_steps, short

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


def _edits(opts: PolicyOptions) -> list[tuple[str, str, str, str]]:
    """(list, ADD/REMOVE, op name, where) for every edit of the environment, then of `tf_lists`."""
    edits: list[tuple[str, str, str, str]] = []
    env = opts.environ or {}
    for var in sorted(env):
        if not var.startswith(ENV_PREFIX) or var == ENV_PREFIX + "LEVEL":
            continue
        rest = var[len(ENV_PREFIX) :]
        name, _, action = rest.rpartition("_")
        name = ALIASES.get(name, name)
        if name not in LISTS or action not in ("ADD", "REMOVE"):
            raise AscendError(
                f"environment variable {var}: unknown list edit; expected {ENV_PREFIX}"
                "{ALLOW,INFER,DENY,CLEAR}LIST_{ADD,REMOVE}"
            )
        edits += [(name, action, op.strip(), var) for op in env[var].split(",") if op.strip()]
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
    """CANN op type -> TF list kind (allow, infer, deny, clear) after the list edits."""
    data = load_data()
    lists: dict[str, set[str]] = {KINDS[n]: set(data["lists"][low_name][KINDS[n]]) for n in LISTS}
    mapping: dict[str, list[str]] = data["cann"]
    known = _known_cann_types()
    for name, action, op, where in _edits(opts):
        if op not in mapping and op not in known:
            raise AscendError(f"{where}: unknown op '{op}'; expected a TensorFlow op name or a CANN op type")
        if action == "ADD":
            lists[KINDS[name]].add(op)
        else:
            lists[KINDS[name]].discard(op)
    by_type: dict[str, str] = {}
    for kind in ("clear", "infer", "deny", "allow"):  # TF checks allow first, so allow wins a clash
        for op in lists[kind]:
            for cann in mapping.get(op, [op] if op in known else []):
                by_type[cann] = kind
    return by_type


@dataclass
class _Graph:
    """The ops to paint and the float edges between them."""

    ops: list[Operation] = field(default_factory=list[Operation])
    index: dict[Operation, int] = field(default_factory=dict[Operation, int])
    inputs: list[list[int]] = field(default_factory=list[list[int]])
    outputs: list[list[int]] = field(default_factory=list[list[int]])


def _dfs(roots: Iterable[int], follow: Callable[[int], Iterable[int]], enter: Callable[[int], bool], visit: Callable[[int], None]) -> None:
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
    follow_allow: bool = False
    """oneDNN (bf16) mode: infer ops directly after an allow op become allow (TF's pass 4)."""
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
        process = [op.keep_dtype is None for op in g.ops]  # type: ignore[attr-defined]
        f32 = [_compute_dtype(op) == F32 for op in g.ops]
        low_ok = [supports(op, self.low) for op in g.ops]
        n = len(g.ops)
        allow = {i for i in range(n) if process[i] and kind[i] == "allow"}
        why: dict[int, str] = {i: "tf: allow" for i in allow}
        if allow:
            # 2) deny forward through infer/clear ops upstream of deny or infer ops.
            upstream: set[int] = set()
            for r in range(n):
                if kind[r] in ("deny", "infer"):
                    _dfs([r], lambda i: g.inputs[i], lambda j: j not in upstream and kind[j] == "clear", upstream.add)
            deny: set[int] = set()
            for r in range(n):
                if kind[r] == "deny" and r not in deny:
                    _dfs([r], lambda i: g.outputs[i], lambda j: j not in deny and j in upstream, deny.add)
            # 3) infer/clear between allow ops.
            down: set[int] = set()
            for r in range(n):
                if process[r] and kind[r] == "allow":
                    _dfs(
                        [r], lambda i: g.outputs[i],
                        lambda j: j not in down and kind[j] in ("clear", "infer") and j not in deny
                        and process[j] and f32[j] and low_ok[j],
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
            # 4) (oneDNN/bf16 mode only) infer ops right after an allow op, with no deny producer.
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
                    [r], lambda i: [*g.inputs[i], *g.outputs[i]],
                    lambda j: j not in allow and j not in deny and process[j] and f32[j] and low_ok[j] and kind[j] == "clear",
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
    low_name = "fp16" if opts.amp_dtype == "f16" else "bf16"
    return TfRule(
        "tf" if low_name == "fp16" else "tf bf16", opts.amp_dtype, tf_lists(low_name, opts), follow_allow=low_name == "bf16"
    )
