"""The model zoo (`models/out/*.onnx`, `make models`) for the conformance harnesses: each model imported with the
project's ONNX frontend, its ascend ops renamed `n0`, `n1`, ... (ONNX node names repeat: a 3-d linear's Reshape,
MatMulV2 and Reshape share one) and described op for op in the graph description of `conformance/graphs.py`, so
each framework side builds the same graph from its own ops.

* a float `ascend.Const` (a weight, a bias, a 0-d scale) and a function argument become `arg` nodes (the frameworks'
  parameters and inputs, fp32 as amp sees them; integer inputs keep their dtype);
* any other `ascend.Const` (indices, masks) becomes a `const` node carrying its values when small;
* every other ascend op becomes a node of its type with its properties as plain values, its first result's shape
  and dtype, and its ONNX node name as the label.

Only the ops whose first result is a float are compared (a comparison or a logical op has no precision choice).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue

from conformance.graphs import Graph, Node

ROOT = Path(__file__).resolve().parent.parent
ZOO = Path(os.environ.get("ASCEND_MP_ZOO", ROOT / "models" / "out"))
"""The exported models (`make models`); ASCEND_MP_ZOO names another folder."""
MODELS = (
    "lenet",
    "mlp",
    "resnet18",
    "resnet50",
    "vgg11",
    "mobilenet_v2",
    "efficientnet_b0",
    "bert_eager",
    "bert_sdpa",
    "gpt2",
    "vit",
    "lstm",
    "gru",
)
EXPORTS = ("dynamo", "legacy")
SMALL = 64
"""A non-float constant of at most this many elements carries its values (indices, shapes)."""


@dataclass
class ZooModel:
    graph: Graph
    module: ModuleOp
    """The imported module, its ascend ops renamed after the graph's nodes (for the policy)."""


def files(names: tuple[str, ...] | None = None) -> list[Path]:
    """The zoo's ONNX files present, in the order of MODELS then EXPORTS."""
    wanted = names or MODELS
    return [ZOO / f"{m}.{e}.onnx" for m in wanted for e in EXPORTS if (ZOO / f"{m}.{e}.onnx").is_file()]


def plain(a: Attribute) -> Any:
    """A property as a plain JSON value."""
    if isinstance(a, IntegerAttr):
        value = int(a.value.data)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        return bool(value) if str(a.type) == "i1" else value  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if isinstance(a, FloatAttr):
        return float(a.value.data)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if isinstance(a, StringAttr):
        return a.data
    if isinstance(a, DenseArrayBase):
        return list(a.get_values())  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if isinstance(a, ArrayAttr):
        return [plain(x) for x in a.data]  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if isinstance(a, UnitAttr):
        return True
    return str(a)


def load(path: Path) -> ZooModel:
    from ascend_mp.dialects import ascend
    from ascend_mp.dtypes import is_float, tensor_dtype
    from ascend_mp.emit import shape
    from ascend_mp.frontend import import_onnx

    module = import_onnx(str(path))
    nodes: list[Node] = []
    names: dict[SSAValue, str] = {}
    count = 0
    for op in module.walk():
        if op.name == "func.func":
            for i, arg in enumerate(op.regions[0].blocks[0].args):
                name = f"in{i}"
                names[arg] = name
                nodes.append(Node(name, "arg", [], shape(arg), dtype=tensor_dtype(arg.type) or "?"))
            continue
        if not isinstance(op, ascend.AscendOp):
            continue
        res = op.results[0]
        dtype = tensor_dtype(res.type) or "?"
        if isinstance(op, ascend.ConstOp):
            name = f"c{len(names)}"
            if is_float(dtype):
                nodes.append(Node(name, "arg", [], shape(res), dtype=dtype))
            else:
                value = op.properties.get("value")
                data: list[Any] = []
                if isinstance(value, DenseIntOrFPElementsAttr) and np.prod(shape(res), dtype=int) <= SMALL:
                    data = [int(x) for x in value.get_values()]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, reportUnknownArgumentType]
                nodes.append(Node(name, "const", [], shape(res), {"values": data}, dtype=dtype))
            names[res] = name
            continue
        name = f"n{count}"
        count += 1
        label = op.properties.get("name")
        props = {k: plain(v) for k, v in op.properties.items() if k != "name"}
        inputs = [names[v] for v in op.operands]
        nodes.append(
            Node(name, op.name.removeprefix("ascend."), inputs, shape(res), props, dtype, plain(label) if label else "")
        )
        op.properties["name"] = StringAttr(name)
        for k, r in enumerate(op.results):
            names[r] = name if k == 0 else f"{name}:{k}"
    ret = next(op for op in module.walk() if op.name == "func.return")
    outputs = [names[v] for v in ret.operands]
    return ZooModel(Graph(path.name.removesuffix(".onnx"), nodes, outputs), module)


def compared(n: Node) -> bool:
    """Whether the harness compares `n`: an op whose result is a float (a Const is a parameter, not an op)."""
    from ascend_mp.dtypes import is_float

    return n.op not in ("arg", "const") and is_float(n.dtype)
