"""Small ONNX classifiers with random weights and synthetic labelled data, for the user's-day tools' tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Array = np.ndarray[Any, Any]
CLASSES = 5


def cnn(batch: int | str = "N", seed: int = 0, opset: int = 17) -> onnx.ModelProto:
    """x[batch,1,8,8] -> Conv 3x3 -> Relu -> MaxPool 2 -> Flatten -> Gemm 64x16 -> Relu -> Gemm 16x5 -> Softmax: probs."""
    rng = np.random.default_rng(seed)
    inits = {
        "conv_w": rng.normal(0, 0.5, (4, 1, 3, 3)),
        "conv_b": rng.normal(0, 0.1, (4,)),
        "fc1_w": rng.normal(0, 0.2, (64, 16)),
        "fc1_b": rng.normal(0, 0.1, (16,)),
        "fc2_w": rng.normal(0, 0.4, (16, CLASSES)),
        "fc2_b": rng.normal(0, 0.1, (CLASSES,)),
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc1_w", "fc1_b"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["hr"], name="relu2"),
        helper.make_node("Gemm", ["hr", "fc2_w", "fc2_b"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    return _model(nodes, {"x": [batch, 1, 8, 8]}, ["probs"], inits, opset)


def mlp(batch: int | str = "N", seed: int = 0, hot: float = 1.0, opset: int = 17) -> onnx.ModelProto:
    """x[batch,16] -> MatMul 16x32 (+b) -> Relu -> MatMul 32x5 (+b): logits.

    `hot` scales the first layer's weights and the second's down by the same factor: the fp32
    logits are unchanged, but with hot ~ 1e3 the hidden layer passes fp16's largest finite value
    (65504), so allow_mix_precision's fp16 MatMul overflows to inf and the argmax is lost."""
    rng = np.random.default_rng(seed)
    inits = {
        "w1": rng.normal(0, 0.5, (16, 32)) * hot,
        "b1": rng.normal(0, 0.1, (32,)) * hot,
        "w2": rng.normal(0, 0.4, (32, CLASSES)) / hot,
        "b2": rng.normal(0, 0.1, (CLASSES,)),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"], name="add1"),
        helper.make_node("Relu", ["a1"], ["h"], name="relu"),
        helper.make_node("MatMul", ["h", "w2"], ["m2"], name="mm2"),
        helper.make_node("Add", ["m2", "b2"], ["logits"], name="add2"),
    ]
    return _model(nodes, {"x": [batch, 16]}, ["logits"], inits, opset)


def _model(
    nodes: list[onnx.NodeProto], inputs: dict[str, list[Any]], outputs: list[str], inits: dict[str, Array], opset: int
) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [inputs["x"][0], CLASSES]) for n in outputs]
    init = [numpy_helper.from_array(np.asarray(a, np.float32), n) for n, a in inits.items()]
    model = helper.make_model(
        helper.make_graph(nodes, "classifier", ins, outs, init), opset_imports=[helper.make_opsetid("", opset)]
    )
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def dataset(model: onnx.ModelProto, count: int, seed: int = 1, label_noise: float = 0.2) -> dict[str, Array]:
    """`count` random inputs for `model` and labels: its fp32 prediction (onnxruntime), a fraction
    `label_noise` of them replaced by another class, so accuracy is neither 0 nor 1."""
    rng = np.random.default_rng(seed)
    vi = model.graph.input[0]
    shape = [count] + [d.dim_value for d in vi.type.tensor_type.shape.dim][1:]
    x = rng.normal(0, 1, shape).astype(np.float32)
    pred = ort_run(model, {vi.name: x})[0].argmax(axis=-1)
    flip = rng.random(count) < label_noise
    labels = np.where(flip, (pred + 1 + rng.integers(0, CLASSES - 1, count)) % CLASSES, pred)
    return {vi.name: x, "labels": labels.astype(np.int64)}


def ort_run(model: onnx.ModelProto | bytes, feeds: dict[str, Array]) -> list[Array]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    data = model if isinstance(model, bytes) else model.SerializeToString()
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)  # pyright: ignore[reportReturnType]


def deep_hot(batch: int | str = "N", seed: int = 0, hot: float = 3e4, opset: int = 17) -> onnx.ModelProto:
    """x[batch,16] -> MatMul 16x16 -> Relu -> MatMul 16x32 (x hot) + b -> Relu -> MatMul 32x5 (/ hot) + b: logits.

    The first layer is harmless in fp16; the second passes fp16's largest finite value, so the
    third's fp16 input is inf: allow_mix_precision loses the argmax unless `mm1` and `mm2` stay fp32."""
    rng = np.random.default_rng(seed)
    inits = {
        "w0": rng.normal(0, 0.3, (16, 16)),
        "w1": rng.normal(0, 0.5, (16, 32)) * hot,
        "b1": rng.normal(0, 0.1, (32,)) * hot,
        "w2": rng.normal(0, 0.4, (32, CLASSES)) / hot,
        "b2": rng.normal(0, 0.1, (CLASSES,)),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["m0"], name="mm0"),
        helper.make_node("Relu", ["m0"], ["h0"], name="relu0"),
        helper.make_node("MatMul", ["h0", "w1"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"], name="add1"),
        helper.make_node("Relu", ["a1"], ["h"], name="relu"),
        helper.make_node("MatMul", ["h", "w2"], ["m2"], name="mm2"),
        helper.make_node("Add", ["m2", "b2"], ["logits"], name="add2"),
    ]
    return _model(nodes, {"x": [batch, 16]}, ["logits"], inits, opset)
