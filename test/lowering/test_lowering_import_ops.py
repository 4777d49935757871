"""A small segmentation head built from the ops added for imported models (InstanceNormalization, Pad,
Resize, ReduceL2, CumSum, ScatterND, a 1-d Conv), imported, lowered and compiled by IREE: fp32 against
onnxruntime, and under the low-precision modes within twice the interpreter's error against float64."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # test/onnx_util.py
from lowering_util import ENVELOPE, FLOOR, FP32_TOL, envelope_errors, iree_run, rel_err  # noqa: E402
from onnx_util import graph_model, run_ort  # noqa: E402

from ascend_mp.frontend import import_onnx  # noqa: E402

Array = np.ndarray[Any, Any]


def seg_head() -> tuple[Any, dict[str, Array]]:
    g = np.random.default_rng(11)

    def w(*s: int) -> Array:
        return (g.standard_normal(s) * 0.5).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("InstanceNormalization", ["c1", "s1", "o1"], ["n1"], name="inorm", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu"),
        helper.make_node("Pad", ["r1", "pads"], ["p1"], name="pad", mode="reflect"),
        helper.make_node("MaxPool", ["p1"], ["m1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node(
            "Resize",
            ["m1", "", "", "sizes"],
            ["u1"],
            name="up",
            mode="linear",
            coordinate_transformation_mode="pytorch_half_pixel",
        ),
        helper.make_node("ReduceL2", ["u1"], ["l2"], name="l2", axes=[1], keepdims=1),
        helper.make_node("Div", ["u1", "l2"], ["d1"], name="div"),
        helper.make_node("Reshape", ["d1", "flat"], ["f1"], name="flat"),
        helper.make_node("Conv", ["f1", "w2"], ["c2"], name="conv1d", kernel_shape=[3], pads=[1, 1]),
        helper.make_node("CumSum", ["c2", "axis"], ["s2"], name="cumsum"),
        helper.make_node("ScatterND", ["s2", "rows", "upd"], ["y"], name="scatter"),
    ]
    inits = {
        "w1": w(4, 3, 3, 3),
        "b1": w(4),
        "s1": w(4) + 1,
        "o1": w(4),
        "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64),
        "sizes": np.array([1, 4, 9, 9], np.int64),
        "flat": np.array([1, 4, 81], np.int64),
        "w2": w(2, 4, 3),
        "axis": np.array(2, np.int64),
        "rows": np.array([[0, 1], [0, 0]], np.int64),
        "upd": w(2, 81),
    }
    x = g.standard_normal((1, 3, 8, 8)).astype(np.float32)
    return graph_model(nodes, {"x": x}, ["y"], inits, opset=17), {"x": x}


def test_fp32_matches_onnxruntime() -> None:
    model, inputs = seg_head()
    (want,) = run_ort(model, inputs)
    (y,) = iree_run(import_onnx(model), "main", *inputs.values())
    assert rel_err(y, want) <= FP32_TOL


@pytest.mark.parametrize("mode", ["force_fp16", "allow_mix_precision"])
def test_low_precision_within_interpreter_envelope(mode: str) -> None:
    model, inputs = seg_head()
    for e_iree, e_interp in envelope_errors(import_onnx(model), "main", list(inputs.values()), mode):
        assert e_iree <= ENVELOPE * e_interp + FLOOR, f"IREE {e_iree:.3g} vs interpreter {e_interp:.3g}"
