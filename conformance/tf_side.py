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
TF_DTYPES = {
    "f16": tf.float16,
    "bf16": tf.bfloat16,
    "f32": tf.float32,
    "i1": tf.bool,
    "i32": tf.int32,
    "i64": tf.int64,
}
UNBUILT = {"LayerNorm": "TensorFlow has no layer-norm op: Keras composes it from moments and arithmetic"}
"""Ascend ops with no TF op: not compared; the value is a placeholder in the dtype the policy chose (`GIVEN`)."""
GIVEN: dict[str, str] = dict(REQUEST.get("given", {}))
LOGICAL = {"LogicalAnd": raw.LogicalAnd, "Equal": raw.Equal}


def _const(values: list[int], shape: list[int], dtype: str, name: str) -> tf.Tensor:
    import numpy as np

    data = np.array(values).reshape(shape) if values else np.zeros(shape)
    return tf.constant(data, TF_DTYPES[dtype], name=name)


def _nchw(n: dict, key: str) -> list[int]:
    return [int(v) for v in n["props"][key]]


def _padding(n: dict) -> dict:
    """The padding arguments of a conv or pool: explicit pads [top, bottom, left, right] on NCHW."""
    pads = n["props"].get("pads", [0, 0, 0, 0])
    if not any(pads):
        return {"padding": "VALID"}
    return {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 0, 0, *pads]}


def _zoo_op(n: dict, ins: list, by_name: dict, name: str):  # noqa: ANN202, C901
    """The ops of the zoo models (conformance/zoo.py); None when `n` is not one of them."""
    op, props = n["op"], n["props"]
    if op in ("Conv2D", "DepthwiseConv2D"):
        w = ins[1]
        src = by_name[n["inputs"][1]]
        if op == "Conv2D":  # the dialect's filter is OIHW, TF's HWIO: the parameter made in TF's layout
            if src["op"] != "arg":
                raise SystemExit("tf_side: a Conv2D filter that is not a parameter")
            o, i, kh, kw = src["shape"]
            w = tf.compat.v1.placeholder(tf.float32, [kh, kw, i, o], name=n["inputs"][1] + "_hwio")
            fn = raw.Conv2D
        else:  # HWCM, TF's depthwise layout
            fn = raw.DepthwiseConv2dNative
        kwargs = dict(strides=_nchw(n, "strides"), data_format="NCHW", dilations=_nchw(n, "dilations"), **_padding(n))
        t = fn(input=ins[0], filter=w, **kwargs, name=name if len(ins) == 2 else name + "_conv")
        if len(ins) == 3:  # with its bias: Conv2D + BiasAdd, the op's result is the BiasAdd's
            t = raw.BiasAdd(value=t, bias=ins[2], data_format="NCHW", name=name)
        return t
    if op == "AvgPool":
        return raw.AvgPool(
            value=ins[0],
            ksize=_nchw(n, "ksize"),
            strides=_nchw(n, "strides"),
            padding=props["padding"],
            data_format="NCHW",
            name=name,
        )
    if op in ("MaxPool", "MaxPoolV3"):  # V3: explicit pads
        padding = {"padding": props["padding"]} if op == "MaxPool" else _padding(n)
        return raw.MaxPool(
            input=ins[0], ksize=_nchw(n, "ksize"), strides=_nchw(n, "strides"), data_format="NCHW", name=name, **padding
        )
    if op == "Relu6":
        return raw.Relu6(features=ins[0], name=name)
    if op == "Reshape":
        return raw.Reshape(tensor=ins[0], shape=tf.constant(n["shape"], tf.int64, name=name + "_shape"), name=name)
    if op == "StridedSliceD":
        k = {
            m: int(props.get(m, 0))
            for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
        }
        c = [tf.constant(props[key], tf.int64, name=f"{name}_{key}") for key in ("begin", "end", "strides")]
        return raw.StridedSlice(input=ins[0], begin=c[0], end=c[1], strides=c[2], **k, name=name)
    if op == "ConcatV2D":
        return raw.ConcatV2(values=ins, axis=tf.constant(props["concat_dim"], tf.int32, name=name + "_axis"), name=name)
    if op == "GatherV2D":
        axis = tf.constant(props["axis"], tf.int64, name=name + "_axis")
        return raw.GatherV2(params=ins[0], indices=ins[1], axis=axis, name=name)
    if op in ("SelectV2", "Select"):
        return raw.SelectV2(condition=ins[0], t=ins[1], e=ins[2], name=name)
    if op == "Cast":
        return raw.Cast(x=ins[0], DstT=TF_DTYPES[n["dtype"]], name=name)
    if op == "BroadcastToD":
        return raw.BroadcastTo(input=ins[0], shape=tf.constant(props["shape"], tf.int64, name=name + "_to"), name=name)
    if op == "LogicalNot":
        return raw.LogicalNot(x=ins[0], name=name)
    if op in LOGICAL:
        return LOGICAL[op](x=ins[0], y=ins[1], name=name)
    return None


def build(g: dict, graph: tf.Graph) -> dict[str, str]:
    """Build `g` in `graph`; returns ascend node name -> TF node name."""
    values: dict[str, tf.Tensor] = {}
    names: dict[str, str] = {}
    with graph.as_default():
        by_name = {n["name"]: n for n in g["nodes"]}
        for n in g["nodes"]:
            op, ins, name = n["op"], [values.get(i) for i in n["inputs"]], n["name"]
            if op == "arg":
                t = tf.compat.v1.placeholder(TF_DTYPES[n.get("dtype", "f32")], n["shape"], name=name)
            elif op == "const":
                t = _const(n["props"]["values"], n["shape"], n["dtype"], name)
            elif op in UNBUILT:
                t = tf.compat.v1.placeholder(TF_DTYPES[GIVEN[name]], n["shape"], name=name)
            elif op in ("SoftmaxV2", "LogSoftmaxV2") and n["props"].get("axes", [-1])[0] not in (
                -1,
                len(n["shape"]) - 1,
            ):
                raise SystemExit(f"tf_side: {op} over axes {n['props']['axes']} (TF's is over the last axis)")
            elif op in UNARY:
                t = UNARY[op](features=ins[0], name=name) if op in ("Relu",) else _unary(UNARY[op], ins[0], name)
            elif op in BINARY:
                t = BINARY[op](x=ins[0], y=ins[1], name=name)
            elif op == "LeakyRelu":
                t = raw.LeakyRelu(features=ins[0], alpha=n["props"]["negative_slope"], name=name)
            elif op == "MatMulV2":
                p = n["props"]
                t = raw.MatMul(
                    a=ins[0],
                    b=ins[1],
                    transpose_a=bool(p.get("transpose_x1")),
                    transpose_b=bool(p.get("transpose_x2")),
                    name=name,
                )
            elif op == "BatchMatMulV2":
                p = n["props"]
                t = raw.BatchMatMulV2(
                    x=ins[0], y=ins[1], adj_x=bool(p.get("adj_x1")), adj_y=bool(p.get("adj_x2")), name=name
                )
            elif op == "BiasAdd":
                t = raw.BiasAdd(value=ins[0], bias=ins[1], name=name)
            elif op == "Transpose":
                t = raw.Transpose(
                    x=ins[0], perm=tf.constant(n["props"]["perm"], tf.int32, name=name + "_perm"), name=name
                )
            elif op in REDUCE:
                axes = tf.constant(n["props"]["axes"], tf.int32, name=name + "_axes")
                t = REDUCE[op](input=ins[0], axis=axes, keep_dims=bool(n["props"]["keep_dims"]), name=name)
            elif (t := _zoo_op(n, ins, by_name, name)) is None:
                raise SystemExit(f"tf_side: no TF construction for ascend op {op}")
            values[name] = t
            names[name] = t.op.name
        # Every op's value is fetched: a fetch node is preserved (never painted, never entered by the
        # painting), so it changes no decision, and in the CPU (emulation) mode the edge to it shows
        # whether its producer was painted: a Cast pair sits on it exactly then.
        for n in g["nodes"]:
            if n["op"] not in ("arg", "const"):
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
        for key in ("T", "Tparams"):  # GatherV2's data type is Tparams
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
        out[g["name"]] = {
            n["name"]: read(optimized, names[n["name"]])
            for n in g["nodes"]
            if n["op"] not in ("arg", "const", *UNBUILT) and n.get("dtype", "f32") in ("f16", "bf16", "f32")
        }
    json.dump({"tf": tf.__version__, "graphs": out, "not_built": UNBUILT}, sys.stdout)


if __name__ == "__main__":
    main()
