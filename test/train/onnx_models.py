"""Small ONNX classifiers for the training tests (built with onnx.helper, random weights)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(
    nodes: list[onnx.NodeProto],
    inp: str,
    in_shape: list[object],
    inits: dict[str, np.ndarray],
    outputs: list[str],
    opset: int = 17,
) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(inp, TensorProto.FLOAT, in_shape)]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, ["N", None]) for o in outputs]
    return _assemble(nodes, "net", ins, outs, inits, opset)


def _assemble(
    nodes: list[onnx.NodeProto],
    name: str,
    ins: list[onnx.ValueInfoProto],
    outs: list[onnx.ValueInfoProto],
    inits: dict[str, np.ndarray],
    opset: int = 17,
    ir_version: int | None = None,
) -> onnx.ModelProto:
    """A checked model of `nodes` with these inputs, outputs and initializers."""
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in inits.items()]
    model = helper.make_model(
        helper.make_graph(nodes, name, ins, outs, init), opset_imports=[helper.make_opsetid("", opset)]
    )
    model.ir_version = ir_version if ir_version is not None else min(model.ir_version, 10)
    onnx.checker.check_model(model)
    return model


def cnn(seed: int = 0) -> onnx.ModelProto:
    """image [N, 1, 8, 8] -> Conv 3x3 (4) -> BatchNormalization -> Relu -> depthwise Conv 3x3
    -> MaxPool 3x3 stride 2 pads 1 -> GlobalAveragePool -> Flatten -> Gemm (transB) -> logits [N, 10]."""
    r = np.random.default_rng(seed)
    f32 = np.float32
    inits = {
        "conv_w": (r.normal(0, 0.5, (4, 1, 3, 3))).astype(f32),
        "conv_b": np.zeros(4, f32),
        "bn_scale": np.ones(4, f32),
        "bn_bias": np.zeros(4, f32),
        "bn_mean": np.zeros(4, f32),
        "bn_var": np.ones(4, f32),
        "dw_w": (r.normal(0, 0.5, (4, 1, 3, 3))).astype(f32),
        "fc_w": (r.normal(0, 0.5, (10, 4))).astype(f32),
        "fc_b": np.zeros(10, f32),
    }
    nodes = [
        helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node(
            "BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b1"], name="bn", momentum=0.8
        ),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu"),
        helper.make_node("Conv", ["r1", "dw_w"], ["d1"], name="dw", group=4, pads=[1, 1, 1, 1]),
        helper.make_node(
            "MaxPool", ["d1"], ["p1"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
        helper.make_node("GlobalAveragePool", ["p1"], ["g1"], name="gap"),
        helper.make_node("Flatten", ["g1"], ["f1"], name="flat"),
        helper.make_node("Gemm", ["f1", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax"),
    ]
    return _model(nodes, "image", ["N", 1, 8, 8], inits, ["logits", "probs"])


def attention_mlp(seed: int = 0) -> onnx.ModelProto:
    """x [N, 64] -> Reshape [N, 8, 8] -> MatMul [8, 16] -> LayerNormalization -> Gelu (Erf form)
    -> q k^T scores (MatMul with Transpose) -> Softmax -> MatMul v -> ReduceMean -> Gemm -> logits [N, 10]."""
    r = np.random.default_rng(seed)
    f32 = np.float32
    inits = {
        "shape": np.array([0, 8, 8], np.int64),
        "w_in": r.normal(0, 0.3, (8, 16)).astype(f32),
        "ln_g": np.ones(16, f32),
        "ln_b": np.zeros(16, f32),
        "rsqrt2": np.array(1 / np.sqrt(2), f32),
        "one": np.array(1.0, f32),
        "half": np.array(0.5, f32),
        "fc_w": r.normal(0, 0.3, (16, 10)).astype(f32),
        "fc_b": np.zeros(10, f32),
    }
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["t"], name="reshape"),
        helper.make_node("MatMul", ["t", "w_in"], ["h"], name="proj"),
        helper.make_node("LayerNormalization", ["h", "ln_g", "ln_b"], ["n"], name="ln", axis=-1),
        helper.make_node("Mul", ["n", "rsqrt2"], ["s"], name="gelu_scale"),
        helper.make_node("Erf", ["s"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="gelu_add"),
        helper.make_node("Mul", ["n", "half"], ["nh"], name="gelu_half"),
        helper.make_node("Mul", ["nh", "e1"], ["g"], name="gelu"),
        helper.make_node("Transpose", ["g"], ["gt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["g", "gt"], ["scores"], name="scores"),
        helper.make_node("Softmax", ["scores"], ["attn"], name="attn", axis=-1),
        helper.make_node("MatMul", ["attn", "g"], ["ctx"], name="ctx"),
        helper.make_node("ReduceMean", ["ctx"], ["pooled"], name="pool", axes=[1], keepdims=0),
        helper.make_node("Gemm", ["pooled", "fc_w", "fc_b"], ["logits"], name="fc"),
    ]
    return _model(nodes, "x", ["N", 64], inits, ["logits"], opset=17)


def embedding_bag(vocab: int = 12, dim: int = 6, classes: int = 3, seed: int = 0) -> onnx.ModelProto:
    """ids [N, 5] (int64) -> Gather (embedding [vocab, dim]) -> ReduceMean over the tokens -> Gemm -> logits."""
    r = np.random.default_rng(seed)
    inits = {"emb": r.normal(0, 0.5, (vocab, dim)).astype(np.float32), "fc_w": r.normal(0, 0.5, (dim, classes)).astype(np.float32),
             "fc_b": np.zeros(classes, np.float32)}  # fmt: skip
    nodes = [
        helper.make_node("Gather", ["emb", "ids"], ["e"], name="embed", axis=0),
        helper.make_node("ReduceMean", ["e"], ["m"], name="mean", axes=[1], keepdims=0),
        helper.make_node("Gemm", ["m", "fc_w", "fc_b"], ["logits"], name="fc"),
    ]
    ins = [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 5])]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])]
    return _assemble(nodes, "bag", ins, outs, inits, ir_version=8)


def dropout_mlp(seed: int = 0, ratio: float = 0.25) -> onnx.ModelProto:
    """x [N, 64] -> Gemm (16) -> Relu -> Dropout(ratio, an initializer input) -> Gemm -> logits [N, 10]."""
    r = np.random.default_rng(seed)
    f32 = np.float32
    inits = {
        "w1": r.normal(0, 0.3, (64, 16)).astype(f32),
        "b1": np.zeros(16, f32),
        "ratio": np.array(ratio, f32),
        "w2": r.normal(0, 0.3, (16, 10)).astype(f32),
        "b2": np.zeros(10, f32),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("Dropout", ["a", "ratio"], ["d"], name="drop"),
        helper.make_node("Gemm", ["d", "w2", "b2"], ["logits"], name="fc2"),
    ]
    return _model(nodes, "x", ["N", 64], inits, ["logits"], opset=17)


def two_inputs(seed: int = 0) -> onnx.ModelProto:
    """pixels [N, 64] and quadrants [N, 4] -> Gemm each to 16, Add, Relu -> Gemm -> logits [N, 10]."""
    r = np.random.default_rng(seed)
    f32 = np.float32
    inits = {
        "wp": r.normal(0, 0.2, (64, 16)).astype(f32),
        "wq": r.normal(0, 0.2, (4, 16)).astype(f32),
        "b": np.zeros(16, f32),
        "w2": r.normal(0, 0.3, (16, 10)).astype(f32),
        "b2": np.zeros(10, f32),
    }
    nodes = [
        helper.make_node("Gemm", ["pixels", "wp", "b"], ["hp"], name="fc_pixels"),
        helper.make_node("MatMul", ["quadrants", "wq"], ["hq"], name="fc_quadrants"),
        helper.make_node("Add", ["hp", "hq"], ["h"], name="add"),
        helper.make_node("Relu", ["h"], ["a"], name="relu"),
        helper.make_node("Gemm", ["a", "w2", "b2"], ["logits"], name="fc2"),
    ]
    ins = [
        helper.make_tensor_value_info("pixels", TensorProto.FLOAT, ["N", 64]),
        helper.make_tensor_value_info("quadrants", TensorProto.FLOAT, ["N", 4]),
    ]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])]
    return _assemble(nodes, "two", ins, outs, inits, ir_version=8)
