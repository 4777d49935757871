"""Runs inside the MindSpore venv (CPU wheel, numpy<2): build each described graph as a MindSpore `Cell`, apply
`mindspore.amp.auto_mixed_precision(net, level, dtype)`, run it on the CPU and print the dtype every op computed in
(JSON on stdout).

How the dtypes are read. The graph becomes the source of a `Cell` (one primitive instance per op, called in
`construct`), written to a temporary module and imported, since O1 rewrites the network from its source
(`mindspore.rewrite`: a cast pair around each white-list primitive or cell, duplicated pairs removed) and O2 / O3
wrap cells (`to_float`, black-list cells back to fp32). O1 runs in PyNative mode with every primitive class's
`__call__` wrapped to note the dtype of what each instance returns (each instance carries its node's name); O2 and
O3 are compiled (GRAPH_MODE) returning every op's value (`run`). Either way the dtype is the one the op really ran
in, casts inserted by amp included, not a list lookup; a failure (an op whose CPU kernel lacks the low dtype) is
reported as it is.

Input (stdin, JSON): {"level": "O1"|"O2"|"O3", "dtype": "f16"|"bf16", "graphs": [graph...]}
(`conformance/graphs.py`). Output: {"mindspore": version, "graphs": {name: {node: dtype}}}.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile

os.environ.setdefault("GLOG_v", "3")

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
from mindspore import Tensor  # noqa: E402
from mindspore.ops import Primitive  # noqa: E402
from mindspore.train import amp  # noqa: E402

DTYPES = {ms.float16: "f16", ms.bfloat16: "bf16", ms.float32: "f32"}
PRIMS = {
    "Relu": "ops.ReLU()",
    "Sigmoid": "ops.Sigmoid()",
    "Tanh": "ops.Tanh()",
    "Exp": "ops.Exp()",
    "Log": "ops.Log()",
    "Sqrt": "ops.Sqrt()",
    "Rsqrt": "ops.Rsqrt()",
    "Square": "ops.Square()",
    "Neg": "ops.Neg()",
    "Floor": "ops.Floor()",
    "Erf": "ops.Erf()",
    "SoftmaxV2": "ops.Softmax(axis=-1)",
    "LogSoftmaxV2": "ops.LogSoftmax(axis=-1)",
    "Add": "ops.Add()",
    "Sub": "ops.Sub()",
    "Mul": "ops.Mul()",
    "RealDiv": "ops.RealDiv()",
    "Maximum": "ops.Maximum()",
    "Minimum": "ops.Minimum()",
    "Pow": "ops.Pow()",
    "MatMulV2": "ops.MatMul()",
    "BatchMatMulV2": "ops.BatchMatMul()",
    "BiasAdd": "ops.BiasAdd()",
    "Transpose": "ops.Transpose()",
    "ReduceSum": "ops.ReduceSum(keep_dims=True)",
    "ReduceMean": "ops.ReduceMean(keep_dims=True)",
    "ReduceMax": "ops.ReduceMax(keep_dims=True)",
}
OPS = tuple(PRIMS)
"""The ascend ops this side builds (run.py draws the random graphs from them)."""
SEEN: dict[str, str] = {}


def _record(cls: type) -> None:
    call = cls.__dict__["__call__"]

    def recorded(self, *args, **kwargs):  # noqa: ANN001, ANN202
        out = call(self, *args, **kwargs)
        node = getattr(self, "ascend_node", None)
        first = out[0] if isinstance(out, tuple) else out  # BatchNorm: (y, mean, variance)
        if node is not None and hasattr(first, "dtype"):
            SEEN[node] = DTYPES.get(first.dtype, str(first.dtype))
        return out

    cls.__call__ = recorded


def _subclasses(c: type):  # noqa: ANN202
    for s in c.__subclasses__():
        yield s
        yield from _subclasses(s)


for _cls in {Primitive, *_subclasses(Primitive)}:
    if "__call__" in _cls.__dict__:
        _record(_cls)


def source(g: dict, every: bool) -> str:
    """The Python source of a Cell computing `g`, returning `g`'s outputs or (`every`) every op's value."""
    args = [n["name"] for n in g["nodes"] if n["op"] == "arg"]
    init, body = [], []
    for n in g["nodes"]:
        op, name = n["op"], n["name"]
        if op == "arg":
            continue
        if op not in PRIMS:
            raise SystemExit(f"mindspore_side: no MindSpore construction for ascend op {op}")
        init.append(f"        self.{name} = {PRIMS[op].format(**n['props'])}")
        init.append(f"        self.{name}.ascend_node = {name!r}")
        ins = ", ".join(n["inputs"])
        if op == "Transpose":
            ins += f", {tuple(n['props']['perm'])!r}"
        elif op.startswith("Reduce"):
            ins += f", {tuple(n['props']['axes'])!r}"
        body.append(f"        {name} = self.{name}({ins})")
    outs = ", ".join(n["name"] for n in g["nodes"] if n["op"] != "arg") if every else ", ".join(g["outputs"])
    return _net_source(init, args, body, outs)


def _net_source(init: list[str], args: list[str], body: list[str], outs: str) -> str:
    """The source of a `Net` cell: `init` lines in `__init__`, `body` lines in `construct(args)`, returning `outs`."""
    return "\n".join(
        [
            "import mindspore.nn as nn",
            "from mindspore import ops",
            "from mindspore import dtype as mstype",
            "",
            "",
            "class Net(nn.Cell):",
            "    def __init__(self):",
            "        super().__init__()",
            *init,
            "",
            f"    def construct(self, {', '.join(args)}):",
            *body,
            f"        return ({outs},)",
            "",
        ]
    )


CONV_BLOCK = """import mindspore.nn as nn
from mindspore import ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.reshape = ops.Reshape()
        self.fc = nn.Dense(256, 10)

    def construct(self, x):
        return self.fc(self.reshape(self.relu(self.bn(self.conv(x))), (2, 256)))
"""
CELL_MODELS = {"ms_conv_block": CONV_BLOCK}
"""Models built from MindSpore's own cells (their parameters are the cells'; the graph's other arguments unused)."""
CELL_PRIMITIVES = {
    "conv.conv2d": "Default/conv-Conv2d/Conv2D-op0",
    "conv.bias_add": "Default/conv-Conv2d/BiasAdd-op1",
    "bn.bn_infer": "Default/bn-BatchNorm2d/BatchNorm-op2",
    "relu.relu": "Default/relu-ReLU/ReLU-op3",
    "reshape": "Default/Reshape-op4",
    "fc.matmul": "Default/fc-Dense/MatMul-op5",
    "fc.bias_add": "Default/fc-Dense/BiasAdd-op6",
}
"""The primitive instance (attribute path in the network) each node of a cell model is."""


def run_cells(g: dict, level: str, low: object, where: str) -> dict[str, str]:
    """A cell model, in PyNative mode with every primitive's result noted (no view op reads a cell input here)."""
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    module = _load(g["name"], CELL_MODELS[g["name"]], where)
    net = module.Net()
    net.set_train(False)
    for path, node in CELL_PRIMITIVES.items():
        obj = net
        for part in path.split("."):
            obj = getattr(obj, part)
        obj.ascend_node = node
    amp_net = amp.auto_mixed_precision(net, level, dtype=low)
    x = next(n for n in g["nodes"] if n["op"] == "arg")
    SEEN.clear()
    amp_net(Tensor(np.random.default_rng(0).uniform(0.5, 1.5, x["shape"]).astype(np.float32)))
    return {n["name"]: SEEN[n["name"]] for n in g["nodes"] if n["op"] != "arg"}


def _load(name: str, text: str, where: str):  # noqa: ANN202
    path = os.path.join(where, f"{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(f"conformance_ms_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MSTYPE_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "i1": "bool_", "i32": "int32", "i64": "int64"}
NP_DTYPES = {"f32": np.float32, "f16": np.float16, "i1": np.bool_, "i32": np.int32, "i64": np.int64}
UNBUILT: dict[str, str] = {}
"""Ascend ops with no MindSpore construction here (none for the zoo)."""


def _pads(n: dict) -> tuple[int, ...]:
    return tuple(int(p) for p in n["props"].get("pads", [0, 0, 0, 0]))


def zoo_call(n: dict, by_name: dict) -> tuple[list[str], str, str]:
    """A zoo node as MindSpore: (its primitives' constructors, the call in `construct`, the primitive noted).
    The constructors are `self.<node>` (noted) and `self.<node>_<k>` (helpers such as a conv's bias add)."""
    op, props, name, ins = n["op"], n["props"], n["name"], n["inputs"]
    a = ", ".join(ins)
    if op in ("Conv2D", "DepthwiseConv2D"):
        w = by_name[ins[1]]["shape"]
        o, kh, kw = (w[0], w[2], w[3]) if op == "Conv2D" else (w[2] * w[3], w[0], w[1])
        group = props.get("groups", 1) if op == "Conv2D" else w[2]
        init = [
            f"ops.Conv2D({o}, ({kh}, {kw}), pad_mode='pad', pad={_pads(n)!r}, "
            f"stride={tuple(props['strides'][2:])!r}, dilation={tuple(props['dilations'][2:])!r}, group={group})"
        ]
        call = f"self.{name}({ins[0]}, {ins[1]})"
        if len(ins) == 3:  # nn.Conv2d with a bias: Conv2D then BiasAdd; the Conv2D primitive is the op noted
            init.append("ops.BiasAdd()")
            call = f"self.{name}_1({call}, {ins[2]})"
        return init, call, name
    if op == "AvgPool":
        k, st = tuple(props["ksize"][2:]), tuple(props["strides"][2:])
        return (
            [f"ops.AvgPool(kernel_size={k!r}, strides={st!r}, pad_mode={props['padding'].lower()!r})"],
            f"self.{name}({a})",
            name,
        )
    if op == "MaxPool":
        k, st = tuple(props["ksize"][2:]), tuple(props["strides"][2:])
        pad = props["padding"].lower()
        return [f"ops.MaxPool(kernel_size={k!r}, strides={st!r}, pad_mode={pad!r})"], f"self.{name}({a})", name
    if op == "MaxPoolV3":  # explicit pads as a Pad before a valid MaxPool (MindSpore's MaxPool pads only 'same')
        k, st = tuple(props["ksize"][2:]), tuple(props["strides"][2:])
        top, bottom, left, right = _pads(n)
        init = [
            f"ops.MaxPool(kernel_size={k!r}, strides={st!r}, pad_mode='valid')",
            f"ops.Pad(((0, 0), (0, 0), ({top}, {bottom}), ({left}, {right})))",
        ]
        return init, f"self.{name}(self.{name}_1({a}))", name
    if op == "Relu6":
        return ["ops.ReLU6()"], f"self.{name}({a})", name
    if op == "Reshape":
        return ["ops.Reshape()"], f"self.{name}({a}, {tuple(n['shape'])!r})", name
    if op == "StridedSliceD":
        masks = ", ".join(
            f"{m}={int(props.get(m, 0))}"
            for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
        )
        b, e, st = (tuple(props[k]) for k in ("begin", "end", "strides"))
        return [f"ops.StridedSlice({masks})"], f"self.{name}({a}, {b!r}, {e!r}, {st!r})", name
    if op == "ConcatV2D":
        return [f"ops.Concat({props['concat_dim']})"], f"self.{name}(({a},))", name
    if op == "GatherV2D":
        return ["ops.Gather()"], f"self.{name}({a}, {props['axis']})", name
    if op == "LayerNorm":  # MindSpore's nn.LayerNorm cell (its gamma and beta its own parameters), as a model holds it
        x = by_name[ins[0]]["shape"]
        axis = props["begin_norm_axis"] % len(x)
        init = (
            f"nn.LayerNorm({tuple(x[axis:])!r}, {axis}, {props['begin_params_axis']}, "
            f"epsilon={props.get('epsilon', 1e-5)})"
        )
        return [init], f"self.{name}({ins[0]})", f"{name}.layer_norm"
    if op == "Cast":
        return ["ops.Cast()"], f"self.{name}({a}, mstype.{MSTYPE_NAMES[n['dtype']]})", name
    if op in ("SelectV2", "Select"):
        return ["ops.Select()"], f"self.{name}({a})", name
    if op == "BroadcastToD":
        return [f"ops.BroadcastTo({tuple(props['shape'])!r})"], f"self.{name}({a})", name
    if op in ("LogicalAnd", "LogicalNot", "Equal"):
        return [f"ops.{op}()"], f"self.{name}({a})", name
    if op == "MatMulV2":
        ta, tb = bool(props.get("transpose_x1")), bool(props.get("transpose_x2"))
        return [f"ops.MatMul(transpose_a={ta}, transpose_b={tb})"], f"self.{name}({a})", name
    if op == "BatchMatMulV2":
        ta, tb = bool(props.get("adj_x1")), bool(props.get("adj_x2"))
        return [f"ops.BatchMatMul(transpose_a={ta}, transpose_b={tb})"], f"self.{name}({a})", name
    if op in ("SoftmaxV2", "LogSoftmaxV2"):
        prim = "Softmax" if op == "SoftmaxV2" else "LogSoftmax"
        return [f"ops.{prim}(axis={props.get('axes', [-1])[0]})"], f"self.{name}({a})", name
    if op.startswith("Reduce"):
        return (
            [PRIMS[op].replace("True", str(bool(props.get("keep_dims"))))],
            f"self.{name}({a}, {tuple(props['axes'])!r})",
            name,
        )
    if op == "Transpose":
        return ["ops.Transpose()"], f"self.{name}({a}, {tuple(props['perm'])!r})", name
    if op in PRIMS:
        return [PRIMS[op]], f"self.{name}({a})", name
    raise SystemExit(f"mindspore_side: no MindSpore construction for ascend op {op}")


def zoo_source(g: dict, every: bool) -> str:
    """A zoo model as a Cell: every parameter and constant a `construct` argument, one primitive per op."""
    by_name = {n["name"]: n for n in g["nodes"]}
    args = [n["name"] for n in g["nodes"] if n["op"] in ("arg", "const")]
    init, body, outs = [], [], []
    for n in g["nodes"]:
        if n["op"] in ("arg", "const"):
            continue
        prims, call, noted = zoo_call(n, by_name)
        for k, p in enumerate(prims):
            attr = n["name"] if k == 0 else f"{n['name']}_{k}"
            init.append(f"        self.{attr} = {p}")
        init.append(f"        self.{noted}.ascend_node = {n['name']!r}")
        body.append(f"        {n['name']} = {call}")
        outs.append(n["name"])
    return _net_source(init, args, body, ", ".join(outs if every else g["outputs"]))


def zoo_inputs(g: dict) -> list[Tensor]:
    """Values for the parameters and constants: floats uniform in [0.5, 1.5), the given integer values or zeros;
    a Conv2D / DepthwiseConv2D filter in MindSpore's OIHW layout."""
    rng = np.random.default_rng(0)
    layout: dict[str, list[int]] = {}
    for n in g["nodes"]:
        if n["op"] == "DepthwiseConv2D":
            kh, kw, c, m = next(x["shape"] for x in g["nodes"] if x["name"] == n["inputs"][1])
            layout[n["inputs"][1]] = [c * m, 1, kh, kw]
    out = []
    for n in g["nodes"]:
        if n["op"] not in ("arg", "const"):
            continue
        shape = layout.get(n["name"], n["shape"])
        dtype = n.get("dtype", "f32")
        if dtype in ("f32", "f16", "bf16"):
            value = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        elif n["props"].get("values"):
            value = np.array(n["props"]["values"], NP_DTYPES[dtype]).reshape(shape)
        else:
            value = np.zeros(shape, NP_DTYPES[dtype])
        out.append(Tensor(value))
    return out


def run_zoo(g: dict, level: str, low: object, where: str) -> dict[str, str]:
    """A zoo model, as `run` runs the random graphs (O1 PyNative with each primitive noted, O2 / O3 compiled). A
    cell of the model (nn.LayerNorm) is read by its primitive: at O2 amp runs a black-list cell in fp32 and casts its
    output back to the low dtype (`_OutputTo16`), so the compiled network's value shows the cast, not the cell's
    computation; those are read from a PyNative run with each primitive's result noted."""
    graph = level != "O1"
    ops_ = [n["name"] for n in g["nodes"] if n["op"] not in ("arg", "const")]
    by_name = {n["name"]: n for n in g["nodes"]}
    in_cells = [name for name in ops_ if "." in zoo_call(by_name[name], by_name)[2]]
    got: dict[str, str] = {}
    for compiled in (True, False) if graph else (False,):
        if not compiled and graph and not in_cells:
            break
        ms.set_context(mode=ms.GRAPH_MODE if compiled else ms.PYNATIVE_MODE, device_target="CPU")
        tag = "_graph" if compiled else ""
        module = _load(g["name"].replace(".", "_") + tag, zoo_source(g, every=compiled), where)
        net = amp.auto_mixed_precision(module.Net(), level, dtype=low)
        inputs = zoo_inputs(g)
        if compiled:
            values = net._backbone(*inputs)
            got = {name: DTYPES.get(v.dtype, str(v.dtype)) for name, v in zip(ops_, values)}
            continue
        SEEN.clear()
        net(*inputs)
        for name in in_cells if graph else ops_:
            got[name] = SEEN.get(name, "unseen")
    return got


def run(g: dict, level: str, low: object, where: str) -> dict[str, str]:
    """O1 in PyNative mode, each primitive's result noted as it runs (the rewrite casts each white op's result back
    to fp32 at once, so only the run sees its dtype). O2 / O3 compiled (GRAPH_MODE), the network inside amp's
    final cast to fp32 returning every op's value: PyNative differs there, running Transpose / Reshape of an fp32
    cell input as views that take no mixed-precision cast, where the compiled graph casts the cell's inputs."""
    graph = level != "O1"
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE, device_target="CPU")
    module = _load(g["name"], source(g, every=graph), where)
    net = amp.auto_mixed_precision(module.Net(), level, dtype=low)
    rng = np.random.default_rng(0)
    inputs = [Tensor(rng.uniform(0.5, 1.5, n["shape"]).astype(np.float32)) for n in g["nodes"] if n["op"] == "arg"]
    ops_ = [n["name"] for n in g["nodes"] if n["op"] != "arg"]
    if graph:
        inner = net._backbone  # amp's _OutputTo32 around the network
        values = inner(*inputs)
        return {name: DTYPES.get(v.dtype, str(v.dtype)) for name, v in zip(ops_, values)}
    SEEN.clear()
    net(*inputs)
    missing = [name for name in ops_ if name not in SEEN]
    if missing:
        raise SystemExit(f"mindspore_side: {g['name']}: no dtype seen for {missing}")
    return dict(SEEN)


def main() -> None:
    request = json.load(sys.stdin)
    low = {"f16": ms.float16, "bf16": ms.bfloat16}[request["dtype"]]
    out: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as where:
        os.chdir(where)  # O1's rewrite writes each rewritten network under ./rewritten_network
        for g in request["graphs"]:
            go = run_cells if g["name"] in CELL_MODELS else run_zoo if request.get("given") is not None else run
            out[g["name"]] = go(g, request["level"], low, where)
    json.dump({"mindspore": ms.__version__, "graphs": out, "not_built": UNBUILT}, sys.stdout)


if __name__ == "__main__":
    main()
