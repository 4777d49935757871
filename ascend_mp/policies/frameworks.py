"""The `mindspore` and `torch` policies (docs/design.md §11); their lists are data (`*.json` here).

**mindspore** (`level` O0-O3, MindSpore's `amp.py` lists). Cells are name scopes written as
MindSpore writes full names: `Default/fc1-Dense/BiasAdd-op0` is the op BiasAdd inside the cell
`fc1` of class Dense. The innermost listed cell around an op decides it; an op in no listed cell
is decided by its primitive (its CANN op type, through the lists' mapping):

* O0: nothing changes;
* O1: the white list (cells and primitives) runs in the low dtype, the rest in fp32;
* O2: everything in the low dtype except the black list (cells BatchNorm*, LayerNorm) and the
  loss (SoftmaxCrossEntropyWithLogits and the ops computing on its loss value, e.g. the mean),
  which stay fp32;
* O3: everything in the low dtype.

**torch** (autocast, CUDA lists; checked op by op against PyTorch's own autocast kernels, docs/conformance.md):
lower-precision ops (mm, matmul and bmm, i.e. MatMulV2 and BatchMatMulV2, conv, linear, ...) run in the low dtype;
fp32 ops (softmax, log_softmax, layer_norm, exp, log, pow and square, sum, the losses, ...) in fp32; promote ops
(cat, stack, ...) and every unlisted op in the widest dtype of their float inputs, as PyTorch's type promotion does:
function arguments count (they are the module's parameters), a 0-d operand only when every operand is 0-d (a
dimensioned tensor wins over a 0-d one of the same kind). batch_norm's result takes its input's dtype (its fp32
weight and statistics do not promote it). A BiasAdd, or an Add of a 1-d parameter, whose other input is the only
use of a MatMulV2 / BatchMatMulV2 / Conv2D (directly or through one Reshape) is the bias of linear / conv2d, as
`torch.onnx.export` writes them (lower precision); any other is an unlisted add.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from xdsl.ir import BlockArgument, Operation

from ascend_mp.dtypes import PRECISION_RANK
from ascend_mp.errors import AscendError
from ascend_mp.policies.base import F16, F32, LOW, OpFacts, PolicyOptions, Rule, Steps, keep_steps, short
from ascend_mp.policies.scopes import to_steps

LEVELS = ("O0", "O1", "O2", "O3")


def load(name: str) -> dict[str, Any]:
    return json.loads(resources.files("ascend_mp.policies").joinpath(f"{name}.json").read_text(encoding="utf-8"))


def cells(name: str | None) -> list[tuple[str, str]]:
    """(instance, class) of the cells around an op with MindSpore full name `name`, outermost first."""
    if not name:
        return []
    parts = [p for p in name.split("/") if p][:-1]  # the last component is the op itself
    found = []
    for p in parts:
        inst, dash, cls = p.partition("-")
        if dash and cls:
            found.append((inst, cls))
    return found


def _widest(dtypes: tuple[str, ...]) -> str | None:
    best: str | None = None
    for d in dtypes:
        if best is None or PRECISION_RANK[d] > PRECISION_RANK[best]:
            best = d
        elif d != best and PRECISION_RANK[d] == PRECISION_RANK[best]:
            best = F32  # fp16 with bf16 promotes to fp32
    return best


@dataclass
class MindSporeRule(Rule):
    """MindSpore's amp levels with its white and black lists of cells and primitives (module docstring)."""

    label: str
    level: str
    low: str
    white_cells: frozenset[str]
    black_cells: frozenset[str]
    white_types: frozenset[str]
    black_types: frozenset[str]
    loss_types: frozenset[str]
    loss: set[Operation] = field(default_factory=set[Operation])

    def prepare(self, module: Operation, supports: Callable[[Operation, str], bool]) -> None:
        """The loss (kept fp32 under O2): the loss primitives and the ops computing on the loss value (their
        first result, e.g. its ReduceMean), not on the gradient they also return."""
        from ascend_mp.dialects.ascend import AscendOp

        self.loss = set()
        if self.level != "O2":
            return
        values: set[object] = set()
        for op in module.walk():
            if not isinstance(op, AscendOp):
                continue
            if op.name.removeprefix("ascend.") in self.loss_types:
                self.loss.add(op)
                values.add(op.results[0])
            elif any(v in values for v in op.operands):
                self.loss.add(op)
                values.update(op.results)

    def listed_cell(self, name: str | None) -> tuple[str, str, str] | None:
        """(white/black, instance, class) of the innermost listed cell around the op."""
        for inst, cls in reversed(cells(name)):
            if cls in self.white_cells:
                return "white", inst, cls
            if cls in self.black_cells:
                return "black", inst, cls
        return None

    def steps(self, f: OpFacts) -> Steps:
        tag = f"mindspore {self.level}"
        if self.level == "O0":
            return keep_steps(f.orig, f"{tag}: no change")
        if self.level == "O3":
            return to_steps(self.low, f"{tag}: {short(self.low)}")
        cell = self.listed_cell(f.name)
        if cell is not None:
            kind = cell[0]
            where = f"{kind} list ({cell[2]} cell {cell[1]})"
        else:
            kind = "white" if f.op_type in self.white_types else "black" if f.op_type in self.black_types else ""
            where = f"{kind} list"
        if self.level == "O1":
            if kind == "white":
                return to_steps(self.low, f"{tag}: {where}")
            return to_steps(F32, f"{tag}: not on the white list")
        if kind == "black":
            return to_steps(F32, f"{tag}: {where}")
        if f.op in self.loss:
            return to_steps(F32, f"{tag}: the loss")
        return to_steps(self.low, f"{tag}: {short(self.low)}")


def mindspore_rule(opts: PolicyOptions) -> Rule:
    level = (opts.level or "O2").upper()
    if level not in LEVELS:
        raise AscendError(
            f"unknown amp_level '{opts.level}' for amp_policy mindspore; expected one of {', '.join(LEVELS)}"
        )
    data = load("mindspore")
    cann: Mapping[str, list[str]] = data["cann"]

    def types(names: list[str]) -> frozenset[str]:
        return frozenset(t for n in names for t in cann[n])

    label = f"mindspore {level}" + ("" if opts.amp_dtype == F16 else " bf16")
    return MindSporeRule(
        label,
        level,
        opts.amp_dtype,
        frozenset(data["white_cells"]),
        frozenset(data["black_cells"]),
        types(data["white_cells"] + data["white_primitives"]),
        types(data["black_cells"]),
        types(data["loss_primitives"]),
    )


def _promoted(op: Operation, inputs: tuple[str, ...]) -> str | None:
    """PyTorch's result dtype over the float operands of `op` arriving in `inputs`: the widest of the dimensioned
    ones (a 0-d tensor does not promote a dimensioned one), of all when every one is 0-d."""
    from ascend_mp.dialects.ascend import shape_of
    from ascend_mp.dtypes import tensor_dtype

    floats = [v for v in op.operands if tensor_dtype(v.type) in PRECISION_RANK]
    if len(floats) != len(inputs):  # not one arrival dtype per float operand: promote over all
        return _widest(inputs)
    dimensioned = tuple(d for v, d in zip(floats, inputs) if shape_of(v))
    return _widest(dimensioned or inputs)


def _biased(op: Operation, of: frozenset[str]) -> str | None:
    """The op type of `of` whose bias `op` (a BiasAdd, or an Add of a 1-d parameter) is: that op's result, directly
    or through one Reshape, reaches `op` only (torch.json's `bias_note`); None when it is a plain add."""
    from ascend_mp.dialects.ascend import BiasAddOp, ConstOp, ReshapeOp, shape_of

    if isinstance(op, BiasAddOp):
        x = op.operands[0]
    else:
        params = [
            v
            for v in op.operands
            if len(shape_of(v)) == 1 and (isinstance(v, BlockArgument) or isinstance(v.owner, ConstOp))
        ]
        others = [v for v in op.operands if v not in params]
        if len(params) != 1 or len(others) != 1:
            return None
        x = others[0]
    owner = x.owner
    if isinstance(owner, ReshapeOp) and x.has_one_use():
        x = owner.operands[0]
        owner = x.owner
    if isinstance(owner, Operation) and x.has_one_use():
        op_type = owner.name.removeprefix("ascend.")
        if op_type in of:
            return op_type
    return None


@dataclass(frozen=True)
class TorchRule(Rule):
    """PyTorch autocast's CUDA lists (module docstring)."""

    label: str
    low: str
    kinds: Mapping[str, str]
    """CANN op type -> lower_precision, fp32, promote or input_dtype."""
    bias_of: Mapping[str, frozenset[str]]
    """A bias op (BiasAdd, Add) -> the op types it is the bias of when it is their result's only use (`_biased`)."""
    needs_inputs: bool = True

    def kind(self, f: OpFacts) -> str | None:
        of = self.bias_of.get(f.op_type)
        if of is not None:
            producer = _biased(f.op, of)
            if producer is not None:
                return self.kinds.get(producer)
        return self.kinds.get(f.op_type)

    def steps(self, f: OpFacts) -> Steps:
        kind = self.kind(f)
        if kind == "lower_precision":
            return to_steps(self.low, "torch: lower-precision op")
        if kind == "fp32":
            return to_steps(F32, "torch: fp32 op")
        if kind == "input_dtype":
            dtype = f.inputs[0] if f.inputs else f.orig
            reason = "torch: unlisted, runs in its input's dtype"
        else:
            dtype = _promoted(f.op, f.inputs) or f.orig
            reason = (
                "torch: promote op, widest input" if kind == "promote" else "torch: unlisted, runs in its inputs' dtype"
            )
        if dtype in LOW:
            return to_steps(dtype, f"{reason} {short(dtype)}")
        return keep_steps(dtype, f"{reason} {short(dtype)}")


def torch_rule(opts: PolicyOptions) -> Rule:
    if opts.level is not None:
        raise AscendError(f"amp_level '{opts.level}' applies to the mindspore policy only")
    data = load("torch")
    kinds: dict[str, str] = {}
    for kind in ("input_dtype", "promote", "fp32", "lower_precision"):
        for name in data[kind]:
            for t in data["cann"][name]:
                kinds[t] = kind
    bias_of = {op: frozenset(of) for op, of in data["bias"].items()}
    return TorchRule("torch" if opts.amp_dtype == F16 else "torch bf16", opts.amp_dtype, kinds, bias_of)
