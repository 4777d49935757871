"""Helpers for the ONNX frontend tests: build one-node graphs, run them with onnxruntime and the interpreter."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ascend_mp.frontend import import_onnx
from ascend_mp.interpreter.runner import Program

Array = np.ndarray[Any, Any]
TOL = 1e-5


def graph_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Mapping[str, Array],
    outputs: Sequence[str],
    inits: Mapping[str, Array] | None = None,
    opset: int = 17,
) -> onnx.ModelProto:
    """A model whose inputs have the given arrays' shapes; output types are left to shape inference."""
    ins = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
        for n, a in inputs.items()
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in (inits or {}).items()]
    g = helper.make_graph(list(nodes), "test", ins, outs, init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)
    return onnx.shape_inference.infer_shapes(model)


def run_ort(model: onnx.ModelProto, inputs: Mapping[str, Array]) -> list[Array]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, dict(inputs))  # pyright: ignore[reportReturnType]


def run_ours(model: onnx.ModelProto | str, inputs: Mapping[str, Array], input_shape: str | None = None) -> list[Array]:
    module = import_onnx(model, input_shape)
    return Program.from_module(module).run("main", *inputs.values())


def rel_err(y: Array, r: Array) -> float:
    """`max|y - r| / max|r|` (the issue's measure)."""
    y64, r64 = np.asarray(y, np.float64), np.asarray(r, np.float64)
    scale = float(np.abs(r64).max()) if r64.size else 0.0
    return float(np.abs(y64 - r64).max()) / (scale or 1.0) if r64.size else 0.0


def check(model: onnx.ModelProto, inputs: Mapping[str, Array], tol: float = TOL) -> list[float]:
    """Import + interpret `model` and compare every output with onnxruntime; returns the errors."""
    want = run_ort(model, inputs)
    got = run_ours(model, inputs)
    assert len(got) == len(want)
    errors = []
    for y, r in zip(got, want):
        assert y.shape == r.shape, (y.shape, r.shape)
        assert y.dtype == r.dtype, (y.dtype, r.dtype)
        err = rel_err(y, r)
        assert err <= tol, f"relative error {err:.3g} > {tol}"
        errors.append(err)
    return errors


def resize64(x: Array, size: tuple[int, int], mode: str, coords: str, nearest: str = "floor") -> Array:
    """ONNX Resize on the last two dimensions (`mode` nearest or linear), element by element in float64 (the
    operator's spec): the reference of the interpreter's kernel and of its lowering."""

    def coord(o: int, n_in: int, n_out: int) -> float:
        s = n_out / n_in
        return {
            "half_pixel": (o + 0.5) / s - 0.5,
            "align_corners": o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0,
            "asymmetric": o / s,
        }[coords]

    def pick(c: float, n: int) -> int:
        f = math.floor(c)
        i = {
            "floor": f,
            "round_prefer_floor": f if c - f <= 0.5 else f + 1,
            "round_prefer_ceil": f if c - f < 0.5 else f + 1,
        }[nearest]
        return min(max(i, 0), n - 1)

    (h, w), y = x.shape[2:], np.zeros(x.shape[:2] + size)
    for i in range(size[0]):
        for j in range(size[1]):
            u, v = coord(i, h, size[0]), coord(j, w, size[1])
            if mode == "nearest":
                y[:, :, i, j] = x[:, :, pick(u, h), pick(v, w)]
                continue
            u, v = min(max(u, 0.0), h - 1.0), min(max(v, 0.0), w - 1.0)
            i0, j0 = int(u), int(v)
            i1, j1 = min(i0 + 1, h - 1), min(j0 + 1, w - 1)
            a, b = u - i0, v - j0
            y[:, :, i, j] = (
                x[:, :, i0, j0] * (1 - a) * (1 - b)
                + x[:, :, i1, j0] * a * (1 - b)
                + x[:, :, i0, j1] * (1 - a) * b
                + x[:, :, i1, j1] * a * b
            )
    return y
