"""Runs inside the TensorFlow venv: build each described graph as a TF graph, run grappler's
auto_mixed_precision on it and print each node's dtype after the rewrite (JSON on stdout).

Input (stdin, JSON): {"mode": "cuda"|"cpu"|"bf16", "graphs": [graph...]} with the graphs of
`conformance/graphs.py`. Output: {"tf": version, "graphs": {name: {node: "f32"|"f16"|"bf16"}}}.
"""

from __future__ import annotations

import json
import os
import sys

REQUEST = json.load(sys.stdin)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if REQUEST["mode"] == "cuda":
    # grappler skips the CUDA rewrite without a GPU unless told to simulate one (its own test hook); the
    # CPU wheel registers no GPU kernels, so ops whose painting asks for a kernel are never painted then.
    os.environ["TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_SIMULATE_GPU"] = "true"

import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2  # noqa: E402
from tensorflow.python.framework import dtypes  # noqa: E402
from tensorflow.python.grappler import tf_optimizer  # noqa: E402

raw = tf.raw_ops
UNARY = {
    "Relu": raw.Relu,
    "Sigmoid": raw.Sigmoid,
    "Tanh": raw.Tanh,
    "Exp": raw.Exp,
    "Log": raw.Log,
    "Sqrt": raw.Sqrt,
    "Rsqrt": raw.Rsqrt,
    "Square": raw.Square,
    "Neg": raw.Neg,
    "Floor": raw.Floor,
    "Erf": raw.Erf,
    "SoftmaxV2": raw.Softmax,
    "LogSoftmaxV2": raw.LogSoftmax,
}
BINARY = {
    "Add": raw.AddV2,
    "Sub": raw.Sub,
    "Mul": raw.Mul,
    "RealDiv": raw.RealDiv,
    "Maximum": raw.Maximum,
    "Minimum": raw.Minimum,
    "Pow": raw.Pow,
}
REDUCE = {"ReduceSum": raw.Sum, "ReduceMean": raw.Mean, "ReduceMax": raw.Max}


def build(g: dict, graph: tf.Graph) -> dict[str, str]:
    """Build `g` in `graph`; returns ascend node name -> TF node name."""
    values: dict[str, tf.Tensor] = {}
    names: dict[str, str] = {}
    with graph.as_default():
        for n in g["nodes"]:
            op, ins, name = n["op"], [values.get(i) for i in n["inputs"]], n["name"]
            if op == "arg":
                t = tf.compat.v1.placeholder(tf.float32, n["shape"], name=name)
            elif op in UNARY:
                t = UNARY[op](features=ins[0], name=name) if op in ("Relu",) else _unary(UNARY[op], ins[0], name)
            elif op in BINARY:
                t = BINARY[op](x=ins[0], y=ins[1], name=name)
            elif op == "LeakyRelu":
                t = raw.LeakyRelu(features=ins[0], alpha=n["props"]["negative_slope"], name=name)
            elif op == "MatMulV2":
                t = raw.MatMul(a=ins[0], b=ins[1], name=name)
            elif op == "BatchMatMulV2":
                t = raw.BatchMatMulV2(x=ins[0], y=ins[1], name=name)
            elif op == "BiasAdd":
                t = raw.BiasAdd(value=ins[0], bias=ins[1], name=name)
            elif op == "Transpose":
                t = raw.Transpose(
                    x=ins[0], perm=tf.constant(n["props"]["perm"], tf.int32, name=name + "_perm"), name=name
                )
            elif op in REDUCE:
                axes = tf.constant(n["props"]["axes"], tf.int32, name=name + "_axes")
                t = REDUCE[op](input=ins[0], axis=axes, keep_dims=bool(n["props"]["keep_dims"]), name=name)
            else:
                raise SystemExit(f"tf_side: no TF construction for ascend op {op}")
            values[name] = t
            names[name] = t.op.name
        # Every op's value is fetched: a fetch node is preserved (never painted, never entered by the
        # painting), so it changes no decision, and in the CPU (emulation) mode the edge to it shows
        # whether its producer was painted: a Cast pair sits on it exactly then.
        for n in g["nodes"]:
            if n["op"] != "arg":
                out = tf.identity(values[n["name"]], name=n["name"] + FETCH)
                graph.add_to_collection("train_op", out.op)
    return names


def _unary(fn, x, name):
    for key in ("x", "features", "logits"):
        try:
            return fn(**{key: x}, name=name)
        except TypeError:
            continue
    raise SystemExit(f"tf_side: cannot call {fn}")


FETCH = "__fetch"


def painted_emulated(graph_def, node: str) -> str:
    """CPU mode (grappler's FP16_CPU emulation: painted ops compute in fp32 with a Cast pair fp32->fp16->fp32
    after each of their outputs): whether the fetch of `node` reads it through such a pair."""
    by_name = {n.name: n for n in graph_def.node}
    fetch = by_name.get(node + FETCH)
    if fetch is None:
        raise SystemExit(f"tf_side: fetch node of {node} vanished in the rewrite")
    src = fetch.input[0].split(":")[0]
    if src == node:
        return "f32"
    back = by_name[src]
    if back.op == "Cast" and back.input[0].split(":")[0] in by_name:
        first = by_name[back.input[0].split(":")[0]]
        if first.op == "Cast" and first.input[0].split(":")[0] == node:
            return "f16" if first.attr["DstT"].type == dtypes.float16.as_datatype_enum else "bf16"
    raise SystemExit(f"tf_side: unexpected rewrite between {node} and its fetch: {src}")


def painted(graph_def, node: str) -> str:
    for n in graph_def.node:
        if n.name != node:
            continue
        for key in ("T", "Tidx"):
            if key in n.attr and n.attr[key].type in (
                dtypes.float16.as_datatype_enum,
                dtypes.bfloat16.as_datatype_enum,
                dtypes.float32.as_datatype_enum,
            ):
                return {dtypes.float16.as_datatype_enum: "f16", dtypes.bfloat16.as_datatype_enum: "bf16"}.get(
                    n.attr[key].type, "f32"
                )
        return "f32"
    raise SystemExit(f"tf_side: node {node} vanished in the rewrite")


def optimize(graph: tf.Graph, mode: str):
    with graph.as_default():
        meta = tf.compat.v1.train.export_meta_graph(graph=graph)
    config = config_pb2.ConfigProto()
    rw = config.graph_options.rewrite_options
    rw.optimizers[:] = []
    off = rewriter_config_pb2.RewriterConfig.OFF
    for field in (
        "constant_folding",
        "arithmetic_optimization",
        "layout_optimizer",
        "dependency_optimization",
        "loop_optimization",
        "function_optimization",
        "debug_stripper",
        "remapping",
        "shape_optimization",
        "memory_optimization",
        "pin_to_host_optimization",
        "implementation_selector",
        "common_subgraph_elimination",
    ):
        setattr(rw, field, off)
    rw.disable_meta_optimizer = False
    rw.min_graph_nodes = -1
    on = rewriter_config_pb2.RewriterConfig.ON
    if mode == "cuda":
        rw.auto_mixed_precision = on
    elif mode == "cpu":
        rw.auto_mixed_precision_cpu = on
        rw.optimizers[:] = ["auto_mixed_precision_cpu"]
    elif mode == "bf16":
        rw.auto_mixed_precision_onednn_bfloat16 = on
        rw.optimizers[:] = ["auto_mixed_precision_onednn_bfloat16"]
    else:
        raise SystemExit(f"tf_side: unknown mode {mode}")
    return tf_optimizer.OptimizeGraph(config, meta)


def main() -> None:
    request = REQUEST
    out: dict[str, dict[str, str]] = {}
    for g in request["graphs"]:
        graph = tf.Graph()
        names = build(g, graph)
        optimized = optimize(graph, request["mode"])
        read = painted_emulated if request["mode"] == "cpu" else painted
        out[g["name"]] = {n["name"]: read(optimized, names[n["name"]]) for n in g["nodes"] if n["op"] != "arg"}
    json.dump({"tf": tf.__version__, "graphs": out}, sys.stdout)


if __name__ == "__main__":
    main()
