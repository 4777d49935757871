"""The ONNX ops the transformer and RNN exports add (issue 10): import + interpreter vs onnxruntime, 1e-5 relative."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

from onnx_util import check, graph_model

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(10)


def f32(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape).astype(np.float32)


def one_node(op: str, inputs: dict[str, Any], inits: dict[str, Any] | None = None, opset: int = 17, n_out: int = 1, **attrs: Any):
    names = list(inputs) + list(inits or {})
    node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], name=f"{op.lower()}_node", **attrs)
    return graph_model([node], inputs, [f"y{i}" for i in range(n_out)], inits, opset)


@pytest.mark.parametrize("op", ["GreaterOrEqual", "LessOrEqual"])
def test_compare_or_equal(op: str) -> None:
    a = np.round(f32(3, 4))
    b = np.round(f32(4))  # ties included: rounding makes equal values likely
    assert (a == b).any()
    check(one_node(op, {"a": a, "b": b}), {"a": a, "b": b})


def test_isnan() -> None:
    x = f32(3, 5)
    x[0, 1] = x[2, 4] = np.nan
    x[1, 2] = np.inf
    check(one_node("IsNaN", {"x": x}), {"x": x})


@pytest.mark.parametrize("batch_dims,idx", [
    (0, np.array([[1, 0], [2, 3], [-1, -2]], np.int64)),
    (0, np.array([[[2], [0]]], np.int64)),
    (1, np.array([[3], [0], [1]], np.int64)),
])
def test_gather_nd(batch_dims: int, idx: np.ndarray[Any, Any]) -> None:
    x = f32(3, 4, 5)
    check(one_node("GatherND", {"x": x}, {"i": idx}, batch_dims=batch_dims), {"x": x})


def test_gather_elements_on_constants_folds() -> None:
    """Exporters gather constant position / token-type buffers: folded at import."""
    data = f32(3, 4)
    idx = np.array([[2, 0, 1, -1], [0, 0, 2, 1]], np.int64)
    x = f32(2, 4)
    nodes = [helper.make_node("GatherElements", ["d", "i"], ["g"], axis=0), helper.make_node("Add", ["x", "g"], ["y0"])]
    check(graph_model(nodes, {"x": x}, ["y0"], {"d": data, "i": idx}), {"x": x})


@pytest.mark.parametrize("opset,sizes,axis", [(13, [2, 3, 1], 1), (13, None, -1), (18, None, 2)])
def test_split(opset: int, sizes: list[int] | None, axis: int) -> None:
    x = f32(2, 6, 4)
    inits = {"s": np.array(sizes, np.int64)} if sizes else None
    n = len(sizes) if sizes else 2
    attrs: dict[str, Any] = {"axis": axis}
    if opset >= 18 and not sizes:
        attrs["num_outputs"] = n
    check(one_node("Split", {"x": x}, inits, opset=opset, n_out=n, **attrs), {"x": x})
