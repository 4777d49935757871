"""Write the malformed ONNX files of the bad-input corpus (test/errors/inputs/*.onnx).

    python models/make_error_inputs.py

Each is small and made with `onnx.helper`; the corpus manifest says what each must produce.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "errors", "inputs")


def _model(
    nodes: list[onnx.NodeProto],
    x_shape: list[int | str],
    inits: list[onnx.TensorProto],
    opsets: list[onnx.OperatorSetIdProto] | None = None,
) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    m = helper.make_model(g, opset_imports=opsets or [helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(4, 16) / 64, "w")
    gemm = helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)
    good = _model([gemm], [2, 16], [w])
    data = good.SerializeToString()
    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    dynamic = _model([gemm], ["batch", 16], [w])
    onnx.save(dynamic, os.path.join(OUT, "dynamic.onnx"))
    ext = _model([gemm], [2, 16], [numpy_helper.from_array(np.ones((4, 16), np.float32), "w")])
    ext.graph.initializer[0].ClearField("raw_data")
    ext.graph.initializer[0].ClearField("float_data")
    ext.graph.initializer[0].data_location = TensorProto.EXTERNAL
    for key, value in (("location", "absent-weights.bin"), ("offset", "0"), ("length", "256")):
        entry = ext.graph.initializer[0].external_data.add()
        entry.key, entry.value = key, value
    with open(os.path.join(OUT, "external-missing.onnx"), "wb") as f:
        f.write(ext.SerializeToString())
    custom = helper.make_node("FancyOp", ["x"], ["y"], name="fancy", domain="com.example")
    onnx.save(
        _model([custom], [2, 16], [], [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]),
        os.path.join(OUT, "unknown-domain.onnx"),
    )
    unsupported = [
        helper.make_node("Sin", ["x"], ["a"], name="sin_1"),
        helper.make_node("Sin", ["a"], ["b"], name="sin_2"),
        helper.make_node("Relu", ["b"], ["c"], name="relu"),
        helper.make_node("Cos", ["c"], ["y"], name="cos_1"),
    ]
    onnx.save(_model(unsupported, [2, 16], []), os.path.join(OUT, "unsupported.onnx"))
    onnx.save(good, os.path.join(OUT, "good.onnx"))
    _hostile(os.path.join(OUT))


def _hostile(out: str) -> None:
    """Models that once gave a traceback, a hang or a silently wrong import (one line each now)."""

    def i64(*v: int) -> np.ndarray:
        return np.array(v, np.int64)

    cases = {
        "scalar-squeeze.onnx": (
            [
                helper.make_node("Squeeze", ["k", "ax"], ["s"], name="squeeze"),
                helper.make_node("Add", ["x", "s"], ["y"], name="add"),
            ],
            {"k": np.array(1.0, np.float32), "ax": i64(0)},
        ),
        "add-one-input.onnx": ([helper.make_node("Add", ["x", ""], ["y"], name="add")], {}),
        "node-no-output.onnx": (
            [helper.make_node("Relu", ["x"], ["y"], name="relu"), helper.make_node("Relu", ["x"], [], name="dead")],
            {},
        ),
        "duplicate-output.onnx": (
            [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Neg", ["x"], ["y"], name="b")],
            {},
        ),
        "gather-range.onnx": (
            [helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=1)],
            {"i": i64(0, 16)},
        ),
        "range-huge.onnx": (
            [
                helper.make_node("Range", ["a", "b", "c"], ["r"], name="range"),
                helper.make_node("Cast", ["r"], ["y"], name="cast", to=TensorProto.FLOAT),
            ],
            {"a": np.array(0, np.int64), "b": np.array(10**14, np.int64), "c": np.array(1, np.int64)},
        ),
    }
    for name, (nodes, inits) in cases.items():
        m = _model(nodes, [2, 16], [numpy_helper.from_array(v, k) for k, v in inits.items()])
        with open(os.path.join(out, name), "wb") as f:
            f.write(m.SerializeToString())
    bad_type = _model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        [2, 16],
        [numpy_helper.from_array(np.ones((2, 16), np.float32), "w")],
    )
    bad_type.graph.initializer[0].data_type = 77
    with open(os.path.join(out, "unknown-dtype.onnx"), "wb") as f:
        f.write(bad_type.SerializeToString())


if __name__ == "__main__":
    main()
