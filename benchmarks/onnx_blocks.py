"""Small ONNX graphs for the IREE checks (test/lowering/test_lowering_onnx.py, benchmarks/gpu_check.py):
a conv block, an attention block and a ConvNeXt block (benchmarks/kernel_rows.py), and the built-in example's MLP
with its weights as initializers (the memory section), each with its inputs (seeded)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

Array = np.ndarray[Any, Any]


def graph_model(
    nodes: list[onnx.NodeProto], inputs: dict[str, Array], outputs: list[str], inits: dict[str, Array]
) -> onnx.ModelProto:
    """An opset-17 model with float32 inputs of the given arrays' shapes (output types inferred)."""
    ins = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(a.shape)) for n, a in inputs.items()]
    outs = [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in outputs]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in inits.items()]
    model = helper.make_model(
        helper.make_graph(nodes, "block", ins, outs, init), opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = min(model.ir_version, 10)
    return onnx.shape_inference.infer_shapes(model)


def mlp_model() -> tuple[onnx.ModelProto, dict[str, Array]]:
    """examples/mlp.mlir (a 64-128-10 MLP, batch 64, softmax) with its weights as initializers, as an exporter
    writes it: the importer makes them constants, which a precision mode stores in the dtype they are used in."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    inits = {
        "w1": (rng.standard_normal((64, 128)) * 0.1).astype(np.float32),
        "b1": rng.standard_normal(128).astype(np.float32),
        "w2": (rng.standard_normal((128, 10)) * 0.1).astype(np.float32),
        "b2": rng.standard_normal(10).astype(np.float32),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"], name="fc1/bias"),
        helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"], name="fc2"),
        helper.make_node("Add", ["m2", "b2"], ["a2"], name="fc2/bias"),
        helper.make_node("Softmax", ["a2"], ["y"], name="softmax"),
    ]
    return graph_model(nodes, {"x": x}, ["y"], inits), {"x": x}


def conv_block() -> tuple[onnx.ModelProto, dict[str, Array]]:
    """Conv(3x3, pad 1) + BatchNormalization + Relu + MaxPool + GlobalAveragePool + Flatten + Gemm."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    inits = {
        "w": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32),
        "b": rng.standard_normal(8).astype(np.float32),
        "scale": rng.uniform(0.5, 1.5, 8).astype(np.float32),
        "bias": rng.standard_normal(8).astype(np.float32),
        "mean": rng.standard_normal(8).astype(np.float32) * 0.1,
        "var": rng.uniform(0.5, 1.5, 8).astype(np.float32),
        "fc": rng.standard_normal((8, 5)).astype(np.float32),
        "fcb": rng.standard_normal(5).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"], epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"]),
    ]
    return graph_model(nodes, {"x": x}, ["y"], inits), {"x": x}


def attention_block() -> tuple[onnx.ModelProto, dict[str, Array]]:
    """One-head self-attention with a residual and LayerNormalization, then a Gelu-free MLP (Erf-based GELU)."""
    rng = np.random.default_rng(1)
    b, t, d = 2, 6, 16
    x = rng.standard_normal((b, t, d)).astype(np.float32)
    inits = {n: (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32) for n in ("wq", "wk", "wv", "wo")}
    inits["scale"] = np.array(1 / np.sqrt(d), np.float32)
    inits["gamma"] = rng.uniform(0.5, 1.5, d).astype(np.float32)
    inits["beta"] = rng.standard_normal(d).astype(np.float32)
    inits["half"] = np.array(0.5, np.float32)
    inits["one"] = np.array(1.0, np.float32)
    inits["rsqrt2"] = np.array(1 / np.sqrt(2), np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
        helper.make_node("Mul", ["s0", "scale"], ["s"]),
        helper.make_node("Softmax", ["s"], ["a"], axis=-1),
        helper.make_node("MatMul", ["a", "v"], ["o0"]),
        helper.make_node("MatMul", ["o0", "wo"], ["o"]),
        helper.make_node("Add", ["x", "o"], ["h"]),
        helper.make_node("LayerNormalization", ["h", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
        helper.make_node("Mul", ["ln", "rsqrt2"], ["e0"]),
        helper.make_node("Erf", ["e0"], ["e1"]),
        helper.make_node("Add", ["e1", "one"], ["e2"]),
        helper.make_node("Mul", ["ln", "e2"], ["e3"]),
        helper.make_node("Mul", ["e3", "half"], ["y"]),
    ]
    return graph_model(nodes, {"x": x}, ["y"], inits), {"x": x}


def convnext_block(size: int = 56, channels: int = 96) -> tuple[onnx.ModelProto, dict[str, Array]]:
    """A ConvNeXt block as torchvision exports it: depthwise Conv 7x7 (pad 3), channels-last LayerNormalization,
    Linear C -> 4C, exact GELU (Erf), Linear 4C -> C, layer scale, residual."""
    rng = np.random.default_rng(2)
    c = channels
    x = rng.standard_normal((1, c, size, size)).astype(np.float32)
    inits = {
        "dw": (rng.standard_normal((c, 1, 7, 7)) / 7).astype(np.float32),
        "dwb": rng.standard_normal(c).astype(np.float32) * 0.1,
        "gamma": rng.uniform(0.5, 1.5, c).astype(np.float32),
        "beta": rng.standard_normal(c).astype(np.float32) * 0.1,
        "w1": (rng.standard_normal((c, 4 * c)) / np.sqrt(c)).astype(np.float32),
        "b1": rng.standard_normal(4 * c).astype(np.float32) * 0.1,
        "w2": (rng.standard_normal((4 * c, c)) / np.sqrt(4 * c)).astype(np.float32),
        "b2": rng.standard_normal(c).astype(np.float32) * 0.1,
        "ls": np.full(c, 0.1, np.float32),
        "half": np.array(0.5, np.float32),
        "one": np.array(1.0, np.float32),
        "rsqrt2": np.array(1 / np.sqrt(2), np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "dw", "dwb"], ["d"], pads=[3, 3, 3, 3], kernel_shape=[7, 7], group=c),
        helper.make_node("Transpose", ["d"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("LayerNormalization", ["t", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-6),
        helper.make_node("MatMul", ["ln", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h"]),
        helper.make_node("Mul", ["h", "rsqrt2"], ["e0"]),
        helper.make_node("Erf", ["e0"], ["e1"]),
        helper.make_node("Add", ["e1", "one"], ["e2"]),
        helper.make_node("Mul", ["h", "e2"], ["e3"]),
        helper.make_node("Mul", ["e3", "half"], ["g"]),
        helper.make_node("MatMul", ["g", "w2"], ["o0"]),
        helper.make_node("Add", ["o0", "b2"], ["o1"]),
        helper.make_node("Mul", ["o1", "ls"], ["o2"]),
        helper.make_node("Transpose", ["o2"], ["o"], perm=[0, 3, 1, 2]),
        helper.make_node("Add", ["x", "o"], ["y"]),
    ]
    return graph_model(nodes, {"x": x}, ["y"], inits), {"x": x}
