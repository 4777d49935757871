"""Small ONNX graphs (a conv block, an attention block) imported with `import_onnx`, lowered and compiled
by IREE: fp32 against onnxruntime, and under the low-precision modes within twice the interpreter's
error against the float64 run of the imported graph."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # test/onnx_util.py
from lowering_util import ENVELOPE, FLOOR, FP32_TOL, envelope_errors, iree_run, rel_err  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from onnx_util import graph_model, run_ort  # noqa: E402

from ascend_mp.frontend import import_onnx  # noqa: E402

Array = np.ndarray[Any, Any]
MODES = ["force_fp16", "allow_mix_precision", "allow_mix_precision_bf16"]


def conv_block() -> tuple[Any, dict[str, Array]]:
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


def attention_block() -> tuple[Any, dict[str, Array]]:
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


BLOCKS = {"conv": conv_block, "attention": attention_block}


@pytest.mark.parametrize("block", list(BLOCKS))
def test_fp32_matches_onnxruntime(block: str) -> None:
    model, inputs = BLOCKS[block]()
    module = import_onnx(model)
    (want,) = run_ort(model, inputs)
    (y,) = iree_run(module, "main", *inputs.values())
    assert rel_err(y, want) <= FP32_TOL


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("block", list(BLOCKS))
def test_low_precision_within_interpreter_envelope(block: str, mode: str) -> None:
    model, inputs = BLOCKS[block]()
    module = import_onnx(model)
    for e_iree, e_interp in envelope_errors(module, "main", list(inputs.values()), mode):
        assert e_iree <= ENVELOPE * e_interp + FLOOR, f"IREE {e_iree:.3g} vs interpreter {e_interp:.3g}"
