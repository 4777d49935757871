"""General constant folding at import (onnx's reference evaluator for the ops without a numpy folder): the
exporters' constant subgraphs fold, the result matches onnxruntime, random ops never fold, the tensor limit
holds, and the unsupported-op error names only the real blockers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_util import check, graph_model, run_ours

from ascend_mp.errors import AscendError
from ascend_mp.frontend import import_onnx

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(11)
Array = np.ndarray[Any, Any]


def f32(*shape: int) -> Array:
    return RNG.standard_normal(shape).astype(np.float32)


def ops_of(model: Any) -> list[str]:
    return [op.name for op in import_onnx(model).walk() if op.name.startswith("ascend.") and op.name != "ascend.Const"]


def test_rotary_tables_fold() -> None:
    """A legacy export of Llama/Mistral/Qwen2 computes cos and sin of constant position x frequency tables."""
    x = f32(2, 6, 8)
    inits = {
        "pos": np.arange(6, dtype=np.float32).reshape(6, 1),
        "freq": (1.0 / 10000 ** (np.arange(0, 8, 2) / 8)).astype(np.float32).reshape(1, 4),
    }
    nodes = [
        helper.make_node("MatMul", ["pos", "freq"], ["angles"]),
        helper.make_node("Concat", ["angles", "angles"], ["emb"], axis=-1),
        helper.make_node("Cos", ["emb"], ["cos"]),
        helper.make_node("Sin", ["emb"], ["sin"]),
        helper.make_node("Mul", ["x", "cos"], ["a"]),
        helper.make_node("Mul", ["x", "sin"], ["b"]),
        helper.make_node("Add", ["a", "b"], ["y"]),
    ]
    model = graph_model(nodes, {"x": x}, ["y"], inits)
    check(model, {"x": x})
    assert ops_of(model) == ["ascend.Mul", "ascend.Mul", "ascend.Add"]  # the tables are constants


@pytest.mark.parametrize(
    "op,inputs,attrs",
    [
        ("Mod", {"a": np.array([7, -7, 5], np.int64), "b": np.array([3, 3, -2], np.int64)}, {}),
        ("Mod", {"a": np.array([7.5, -7.5], np.float32), "b": np.array([2.0, 2.0], np.float32)}, {"fmod": 1}),
        (
            "ScatterND",
            {
                "a": np.zeros((4, 3), np.float32),
                "i": np.array([[1], [3]], np.int64),
                "u": np.ones((2, 3), np.float32),
            },
            {},
        ),
        ("CumSum", {"a": np.arange(6, dtype=np.float32), "axis": np.array(0, np.int64)}, {"exclusive": 1}),
        ("Tile", {"a": np.arange(3, dtype=np.float32), "r": np.array([2], np.int64)}, {}),
    ],
)
def test_constant_nodes_fold_and_match_onnxruntime(op: str, inputs: dict[str, Array], attrs: dict[str, Any]) -> None:
    folded = helper.make_node(op, list(inputs), ["c"], **attrs)
    out_dtype = next(iter(inputs.values())).dtype
    x = np.ones(np.broadcast_shapes(*[a.shape for a in inputs.values()][:1]), out_dtype)
    if op == "Tile":
        x = np.ones(6, out_dtype)
    nodes = [folded, helper.make_node("Add", ["x", "c"], ["y"])]
    model = graph_model(nodes, {"x": x}, ["y"], inputs)
    check(model, {"x": x})
    assert ops_of(model) == ["ascend.Add"]


def test_random_ops_never_fold() -> None:
    x = f32(2, 3)
    nodes = [
        helper.make_node("RandomNormalLike", ["c"], ["r"], seed=1.0),
        helper.make_node("Add", ["x", "r"], ["y"]),
    ]
    model = graph_model(nodes, {"x": x}, ["y"], {"c": np.zeros((2, 3), np.float32)})
    with pytest.raises(AscendError, match=r"unsupported ONNX ops: RandomNormalLike x1"):
        import_onnx(model)


def test_a_fold_over_the_tensor_limit_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", "4096")
    x = np.ones(4000, np.float32)
    nodes = [
        helper.make_node("Tile", ["a", "r"], ["c"], name="big_tile"),
        helper.make_node("Add", ["x", "c"], ["y"]),
    ]
    model = graph_model(nodes, {"x": x}, ["y"], {"a": np.ones(4, np.float32), "r": np.array([1000], np.int64)})
    with pytest.raises(AscendError) as e:
        import_onnx(model)
    assert "node 'big_tile' (Tile) on constants" in str(e.value) and "limit" in str(e.value)
    assert "\n" not in str(e.value)


def test_unsupported_error_lists_the_blocker_not_the_shape_ops_it_feeds() -> None:
    """NonZero's output shape depends on its data: the Shape and ConstantOfShape after it cannot fold, and
    are not blockers of their own."""
    x = f32(2, 3)
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
        helper.make_node("Shape", ["nz"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["z"]),
        helper.make_node("ReduceSum", ["z"], ["t"], keepdims=0),
        helper.make_node("Cast", ["t"], ["tf"], to=1),
        helper.make_node("Add", ["x", "tf"], ["y"]),
    ]
    model = graph_model(nodes, {"x": x}, ["y"])
    with pytest.raises(AscendError) as e:
        import_onnx(model)
    assert str(e.value).endswith("unsupported ONNX ops: NonZero x1 (first: 'nonzero')"), str(e.value)


@pytest.mark.parametrize("op", ["Abs", "Ceil"])
def test_abs_and_ceil_on_activations(op: str) -> None:
    x = (f32(3, 5) * 3).astype(np.float32)
    model = graph_model([helper.make_node(op, ["x"], ["y"])], {"x": x}, ["y"])
    check(model, {"x": x})
    specials = np.array([-0.0, 0.0, np.inf, -np.inf, -2.5, 2.5, 1e-45], np.float32)
    (y,) = run_ours(graph_model([helper.make_node(op, ["x"], ["y"])], {"x": specials}, ["y"]), {"x": specials})
    want = np.abs(specials) if op == "Abs" else np.ceil(specials)
    assert np.array_equal(y, want)  # values; the sign of a zero result is not compared
