"""The zoo's skeletons (models/skeleton.py): a skeleton keeps an export's graph, its integer and small tensors and
its inputs exactly, and materialising it redraws each large weight with the recorded statistics, the same way every
time; the committed skeletons (models/zoo) are complete and, where `make models` ran, describe its exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from zoo_util import EXPORTS, SKELETONS

from models.skeleton import (
    KEEP,
    MARK,
    materialise,
    materialise_inputs,
    skeleton_inputs,
    skeletonize,
)

Array = np.ndarray[Any, Any]


def _model() -> onnx.ModelProto:
    """x[1, 16] -> MatMul(w[16, 256]) + b -> + a Constant row -> Gather; beside them unused initializers: a positive
    1-D tensor (a BatchNorm variance), constant rows, a mask with -inf."""
    rng = np.random.default_rng(1)
    inits = {
        "w": (rng.standard_normal((16, 256)) * np.linspace(0.1, 2.0, 16)[:, None]).astype(np.float32),  # rows differ
        "b": rng.standard_normal(256).astype(np.float32),  # small (KEEP elements): exact
        "var": rng.uniform(0.5, 3.0, 512).astype(np.float32),  # 1-D (a BatchNorm variance): exact
        "idx": np.arange(300, dtype=np.int64) % 32,  # integer: exact
        "mask": np.where(np.arange(400) % 2 == 0, 0.0, -np.inf).astype(np.float32),  # non-finite: exact
        "ones": np.ones((20, 20), np.float32),  # constant rows stay constant
    }
    const = rng.uniform(-1, 1, (1, 256)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm", doc_string="a doc string", domain=""),
        helper.make_node("Add", ["h", "b"], ["y0"]),
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.tile(const, (20, 1)), "c_value")),
        helper.make_node("Slice", ["c", "zero", "one"], ["c0"]),
        helper.make_node("Add", ["y0", "c0"], ["y1"]),
        helper.make_node("Gather", ["y1", "idx"], ["y"], axis=1),
    ]
    entry = nodes[0].metadata_props.add()
    entry.key, entry.value = "pkg.torch.onnx.stack_trace", "File /home/someone/model.py, line 1"
    tensors = [numpy_helper.from_array(a, n) for n, a in inits.items()]
    tensors += [numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(np.array([1]), "one")]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 300])],
        tensors,
    )
    assert all(a.size > KEEP for k, a in inits.items() if k not in ("b",))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _tensors(model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    out = {t.name: t for t in model.graph.initializer}
    out.update({n.attribute[0].t.name: n.attribute[0].t for n in model.graph.node if n.op_type == "Constant"})
    return out


def _write(tmp: Path, model: onnx.ModelProto, inputs: dict[str, Array]) -> Path:
    path = tmp / "toy.dynamo.onnx"
    path.write_bytes(model.SerializeToString())
    np.savez(tmp / "toy.inputs.npz", **skeleton_inputs(inputs))  # pyright: ignore[reportArgumentType]
    return path


def test_skeleton_keeps_the_graph_and_small_tensors_and_redraws_the_rest(tmp_path: Path) -> None:
    model = _model()
    original = _tensors(model)
    before = {k: numpy_helper.to_array(t) for k, t in original.items()}
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    assert skeletonize(skeleton) == 3
    marked = {k for k, t in _tensors(skeleton).items() if t.doc_string.startswith(MARK)}
    assert marked == {"w", "c_value", "ones"}  # float, at least 2-D, over KEEP elements, finite (var: 1-D, exact)
    assert [(n.op_type, list(n.input), list(n.output)) for n in skeleton.graph.node] == [
        (n.op_type, list(n.input), list(n.output)) for n in model.graph.node
    ]
    assert not skeleton.graph.node[0].metadata_props and not skeleton.graph.node[0].doc_string
    assert len(skeleton.SerializeToString()) < len(model.SerializeToString()) / 2

    x = {"x": np.random.default_rng(2).standard_normal((1, 16)).astype(np.float32)}
    (tmp_path / "src").mkdir()
    path = _write(tmp_path / "src", skeleton, x)
    out = materialise(path, tmp_path / "cache")
    again = materialise(path, tmp_path / "cache2")
    assert out.read_bytes() == again.read_bytes()  # the same weights every time
    redrawn = onnx.load(str(out))
    onnx.checker.check_model(redrawn)
    after = {k: numpy_helper.to_array(t) for k, t in _tensors(redrawn).items()}
    for k, a in before.items():
        b = after[k]
        assert b.shape == a.shape and b.dtype == a.dtype, k
        if k in marked:
            assert not np.array_equal(a, b) or np.ptp(a) == 0, k
            assert a.min() <= b.min() and b.max() <= a.max(), k
            assert abs(b.mean() - a.mean()) <= 0.1 * a.std() + 1e-6, k
            assert abs(b.std() - a.std()) <= 0.1 * a.std() + 1e-6, k
        else:
            assert a.tobytes() == b.tobytes(), k
    # per row: the row scales of w (0.1 .. 2.0) come back
    ratio = after["w"].std(1) / before["w"].std(1)
    assert np.all((ratio > 0.8) & (ratio < 1.25)), ratio
    assert np.array_equal(after["ones"], before["ones"])

    import onnxruntime as ort

    (y,) = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, x)
    assert y.shape == (1, 300) and np.isfinite(y).all()


def test_inputs_small_exactly_large_as_statistics() -> None:
    rng = np.random.default_rng(3)
    arrays = {
        "ids": rng.integers(0, 1000, (2, 16)),
        "small": rng.standard_normal((2, 16, 16)).astype(np.float32),
        "image": rng.standard_normal((1, 3, 224, 224)).astype(np.float32),
    }
    saved = skeleton_inputs(arrays)
    assert "image" not in saved and saved["image__stats"].nbytes == 16
    back = materialise_inputs(saved)
    assert back["ids"].tobytes() == arrays["ids"].tobytes() and back["small"].tobytes() == arrays["small"].tobytes()
    assert back["image"].shape == (1, 3, 224, 224) and back["image"].dtype == np.float32
    assert abs(back["image"].std() - 1.0) < 0.01 and np.array_equal(back["image"], materialise_inputs(saved)["image"])


SKELETON_FILES = sorted(SKELETONS.glob("*.onnx"))


def test_the_committed_zoo_is_complete() -> None:
    """Thirteen models, both exporters, each with its inputs; every statistic is finite and every range ordered."""
    names = {p.name.split(".")[0] for p in SKELETON_FILES}
    assert len(names) == 13 and len(SKELETON_FILES) == 26, sorted(names)
    for name in names:
        assert (SKELETONS / f"{name}.inputs.npz").is_file(), name
    total = sum(p.stat().st_size for p in SKELETONS.iterdir())
    assert total < 8e6, f"models/zoo is {total / 1e6:.1f} MB"
    for path in SKELETON_FILES:
        model = onnx.load(str(path))
        for t in _tensors(model).values():
            if t.doc_string.startswith(MARK):
                record = json.loads(t.doc_string[len(MARK) :])
                data = np.frombuffer(t.raw_data, np.float32)
                assert data.size == 4 * record["rows"] + 2 * record.get("out", 0), (path, t.name)
                s = data[: 4 * record["rows"]].reshape(-1, 4)
                assert np.isfinite(s).all() and (s[:, 1] >= 0).all() and (s[:, 2] <= s[:, 3]).all(), (path, t.name)


@pytest.mark.skipif(not any(EXPORTS.glob("*.onnx")), reason="no exports in models/out to compare the skeletons with")
@pytest.mark.parametrize("path", SKELETON_FILES, ids=lambda p: p.stem)
def test_skeletons_describe_the_exports(path: Path) -> None:
    """Where `make models` ran: each skeleton has its export's nodes and tensor shapes (`make models` rewrites them)."""
    export = EXPORTS / path.name
    if not export.exists():
        pytest.skip(f"no {export.name} in models/out")
    a, b = onnx.load(str(export), load_external_data=False), onnx.load(str(path))
    assert [(n.op_type, list(n.input), list(n.output)) for n in a.graph.node] == [
        (n.op_type, list(n.input), list(n.output)) for n in b.graph.node
    ]
    assert {k: list(t.dims) for k, t in _tensors(a).items()} == {k: list(t.dims) for k, t in _tensors(b).items()}


def _cnn() -> onnx.ModelProto:
    """Conv(+bias) -> Relu -> Conv(no bias) -> BatchNormalization -> Relu -> Conv(+bias): the two ways a torch
    export holds a BatchNorm (folded into a Conv's weights and bias, or its own node)."""
    rng = np.random.default_rng(4)
    scale = np.linspace(0.2, 3.0, 16, dtype=np.float32)
    inits = {
        "w1": rng.uniform(-0.3, 0.3, (16, 3, 3, 3)).astype(np.float32) * scale[:, None, None, None],
        "b1": rng.standard_normal(16).astype(np.float32),
        "w2": rng.uniform(-0.1, 0.1, (16, 16, 3, 3)).astype(np.float32),
        "gamma": np.ones(16, np.float32),
        "beta": np.zeros(16, np.float32),
        "mean": rng.standard_normal(16).astype(np.float32) * 0.1,
        "var": rng.uniform(0.5, 2.0, 16).astype(np.float32),
        "w3": rng.uniform(-0.1, 0.1, (8, 16, 3, 3)).astype(np.float32),
        "b3": rng.standard_normal(8).astype(np.float32) * 0.1,
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "gamma", "beta", "mean", "var"], ["n2"]),
        helper.make_node("Relu", ["n2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 14, 14])],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _values(model: onnx.ModelProto, x: Array, names: list[str]) -> list[Array]:
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in names)
    return ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"]).run(names, {"x": x})


def test_redrawn_convolutions_get_the_exports_channel_statistics_back(tmp_path: Path) -> None:
    """Each Conv's output channels have the export's mean and std again on the model's input (the BatchNorm'd one:
    its std, and the BatchNorm's output its mean), so a deep CNN's activations keep their scale."""
    model = _cnn()
    x = np.random.default_rng(5).standard_normal((2, 3, 16, 16)).astype(np.float32)
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    assert skeletonize(skeleton, {"x": x}) == 3
    path = _write(tmp_path, skeleton, {"x": x})
    redrawn = onnx.load(str(materialise(path, tmp_path / "cache")))
    assert not np.array_equal(
        numpy_helper.to_array(redrawn.graph.initializer[0]), numpy_helper.to_array(model.graph.initializer[0])
    )
    names = ["c1", "c2", "n2", "y"]
    want = dict(zip(names, _values(model, x, names)))
    got = dict(zip(names, _values(redrawn, x, names)))

    def per_channel(a: Array) -> tuple[Array, Array]:
        return a.mean((0, 2, 3)), a.std((0, 2, 3))

    (m1, s1), (w1, v1) = per_channel(got["c1"]), per_channel(want["c1"])
    np.testing.assert_allclose(m1, w1, atol=1e-4 * float(np.abs(v1).max()))
    np.testing.assert_allclose(s1, v1, rtol=1e-4)
    np.testing.assert_allclose(per_channel(got["c2"])[1], per_channel(want["c2"])[1], rtol=1e-4)
    np.testing.assert_allclose(per_channel(got["n2"])[0], per_channel(want["n2"])[0], atol=1e-4)
    ratio = np.abs(got["y"]).max() / np.abs(want["y"]).max()
    assert 0.3 < ratio < 3, ratio
