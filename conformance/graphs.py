"""Random ascend graphs for the differential conformance harnesses, and their framework-neutral description.

A graph is a list of nodes over 2-D float tensors: function arguments (`arg`), and ops drawn (seeded) from the
ops a framework shares with the dialect. The same graph is emitted twice: as an ascend module (to run a policy
of `ascend-precision` on) and as a JSON description (to build the equivalent graph in the framework).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from ascend_mp.dialects import ascend
from ascend_mp.emit import Emitter, finish_function, new_function, tensor

N = 8
"""Every tensor is N x N, or N x 1 after a reduction (keep_dims), or a bias of N."""


@dataclass(frozen=True)
class OpKind:
    cann: str
    arity: int
    props: tuple[tuple[str, object], ...] = ()
    square: bool = False
    """Both operands must be N x N (matrix products)."""
    reduces: bool = False


UNARY = ("Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Neg", "Floor", "Erf")
BINARY = ("Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow")
KINDS: dict[str, OpKind] = {
    **{u: OpKind(u, 1) for u in UNARY},
    **{b: OpKind(b, 2) for b in BINARY},
    "LeakyRelu": OpKind("LeakyRelu", 1, (("negative_slope", 0.1),)),
    "SoftmaxV2": OpKind("SoftmaxV2", 1),
    "LogSoftmaxV2": OpKind("LogSoftmaxV2", 1),
    "MatMulV2": OpKind("MatMulV2", 2, square=True),
    "BatchMatMulV2": OpKind("BatchMatMulV2", 2, square=True),
    "BiasAdd": OpKind("BiasAdd", 1),
    "Transpose": OpKind("Transpose", 1, (("perm", (1, 0)),), square=True),
    "ReduceSum": OpKind("ReduceSum", 1, (("axes", (1,)), ("keep_dims", True)), reduces=True),
    "ReduceMean": OpKind("ReduceMean", 1, (("axes", (1,)), ("keep_dims", True)), reduces=True),
    "ReduceMax": OpKind("ReduceMax", 1, (("axes", (1,)), ("keep_dims", True)), reduces=True),
}


@dataclass
class Node:
    name: str
    op: str
    inputs: list[str]
    shape: tuple[int, ...]
    props: dict[str, object] = field(default_factory=dict[str, object])
    dtype: str = "f32"
    """The dtype of the op's (first) result, or of the argument."""
    label: str = ""
    """Where the op came from (a zoo model's ONNX node name), for the report."""


@dataclass
class Graph:
    name: str
    nodes: list[Node]
    outputs: list[str]

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "nodes": [
                {
                    "name": n.name,
                    "op": n.op,
                    "inputs": n.inputs,
                    "shape": list(n.shape),
                    "props": n.props,
                    "dtype": n.dtype,
                }
                for n in self.nodes
            ],
            "outputs": self.outputs,
        }


def random_graph(seed: int, ops: tuple[str, ...], size: int = 10) -> Graph:
    """A connected random DAG of `size` ops drawn from `ops` (seeded)."""
    rng = random.Random(seed)
    nodes = [Node(f"arg{i}", "arg", [], (N, N)) for i in range(2)]
    for k in range(size):
        kind = KINDS[rng.choice(ops)]
        square = [n for n in nodes if n.shape == (N, N)]
        pool = square if kind.square or kind.cann in ("BiasAdd",) else [n for n in nodes if len(n.shape) == 2]

        # prefer recent values so the graph is a chain with branches rather than a fan
        def pick(candidates: list[Node]) -> Node:
            return candidates[-1 - min(int(rng.expovariate(0.7)), len(candidates) - 1)]

        a = pick(pool)
        inputs = [a.name]
        shape = a.shape
        if kind.cann == "BiasAdd":
            bias = Node(f"bias{k}", "arg", [], (N,))
            nodes.append(bias)
            inputs.append(bias.name)
        elif kind.arity == 2:
            b = pick(pool)
            inputs.append(b.name)
            shape = (N, N) if (N, N) in (a.shape, b.shape) else a.shape
        if kind.reduces:
            shape = (N, 1)
        nodes.append(Node(f"n{k}", kind.cann, inputs, shape, dict(kind.props)))
    used = {i for n in nodes for i in n.inputs}
    outputs = [n.name for n in nodes if n.op != "arg" and n.name not in used] or [nodes[-1].name]
    return Graph(f"g{seed}", nodes, outputs)


def to_module(g: Graph) -> ModuleOp:
    """The ascend module of `g`: one `func.func` named after it, each op named after its node."""
    args = [n for n in g.nodes if n.op == "arg"]
    fn, block = new_function(g.name, [tensor(n.shape) for n in args], [n.name for n in args])
    values = {n.name: v for n, v in zip(args, block.args)}
    e = Emitter(block)
    for n in g.nodes:
        if n.op == "arg":
            continue
        cls = ascend.OPS_BY_TYPE[n.op]
        operands: list[object] = [values[i] for i in n.inputs]
        operands += [[]] * (len(cls.get_irdl_definition().operands) - len(operands))  # absent optional operands
        values[n.name] = e.one(cls, *operands, type_=tensor(n.shape), name=n.name, **n.props)
    finish_function(fn, block, [values[o] for o in g.outputs])
    return ModuleOp([fn])
