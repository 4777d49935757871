"""The ONNX ops the transformer and RNN exports add: import + interpreter vs onnxruntime, 1e-5 relative."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_util import check, graph_model, rel_err

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(10)


def f32(*shape: int) -> np.ndarray[Any, Any]:
    return RNG.standard_normal(shape).astype(np.float32)


def one_node(
    op: str, inputs: dict[str, Any], inits: dict[str, Any] | None = None, opset: int = 17, n_out: int = 1, **attrs: Any
):
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


@pytest.mark.parametrize(
    "batch_dims,idx",
    [
        (0, np.array([[1, 0], [2, 3], [-1, -2]], np.int64)),
        (0, np.array([[[2], [0]]], np.int64)),
        (1, np.array([[3], [0], [1]], np.int64)),
    ],
)
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


def _rnn_model(op: str, direction: str, layout: int, with_state: bool, **attrs: Any):
    seq, batch, feat, hid = 5, 3, 4, 6
    gates = 4 if op == "LSTM" else 3
    nd = 2 if direction == "bidirectional" else 1
    x = f32(batch, seq, feat) if layout else f32(seq, batch, feat)
    inits: dict[str, Any] = {
        "W": f32(nd, gates * hid, feat) * 0.5,
        "R": f32(nd, gates * hid, hid) * 0.5,
        "B": f32(nd, 2 * gates * hid) * 0.5,
    }
    names = ["x", "W", "R", "B"]
    state = (batch, nd, hid) if layout else (nd, batch, hid)
    if with_state:
        inits["lens"] = np.full(batch, seq, np.int32)
        inits["h0"] = f32(*state)
        names += ["lens", "h0"]
        if op == "LSTM":
            inits["c0"] = f32(*state)
            names.append("c0")
    outs = ["y0", "y1", "y2"][: 3 if op == "LSTM" else 2]
    node = helper.make_node(
        op, names, outs, name=f"{op.lower()}_node", hidden_size=hid, direction=direction, layout=layout, **attrs
    )
    return graph_model([node], {"x": x}, outs, inits, 14), {"x": x}


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout,with_state", [(0, False), (0, True)])
def test_lstm(direction: str, layout: int, with_state: bool) -> None:
    model, inputs = _rnn_model("LSTM", direction, layout, with_state)
    assert len(check(model, inputs)) == 3


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("linear_before_reset", [0, 1])
@pytest.mark.parametrize("layout,with_state", [(0, False), (0, True)])
def test_gru(direction: str, linear_before_reset: int, layout: int, with_state: bool) -> None:
    model, inputs = _rnn_model("GRU", direction, layout, with_state, linear_before_reset=linear_before_reset)
    assert len(check(model, inputs)) == 2


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_rnn_batch_first_layout(op: str) -> None:
    """layout=1 (batch first): onnxruntime's CPU kernels refuse it, so the reference is its
    layout=0 run of the same weights on the transposed input and states, transposed back."""
    from onnx import numpy_helper
    from onnx_util import run_ort, run_ours

    model, inputs = _rnn_model(op, "bidirectional", 1, True)
    ours = run_ours(model, inputs)
    ref_model, _ = _rnn_model(op, "bidirectional", 0, True)
    g = ref_model.graph
    g.node[0].attribute.remove(next(a for a in g.node[0].attribute if a.name == "layout"))
    for init in g.initializer:  # same weights; states transposed to [num_dir, batch, hidden]
        src = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == init.name))
        init.CopyFrom(numpy_helper.from_array(src.transpose(1, 0, 2) if init.name in ("h0", "c0") else src, init.name))
    ref = run_ort(ref_model, {"x": inputs["x"].transpose(1, 0, 2)})
    want = [ref[0].transpose(2, 0, 1, 3)] + [r.transpose(1, 0, 2) for r in ref[1:]]
    assert len(ours) == len(want) == (3 if op == "LSTM" else 2)
    for y, r in zip(ours, want):
        assert y.shape == r.shape
        assert rel_err(y, r) <= 1e-5


def test_rnn_unsupported_attribute_is_one_line() -> None:
    from ascend_mp.errors import AscendError
    from ascend_mp.frontend import import_onnx

    model, _ = _rnn_model("LSTM", "forward", 0, False, clip=3.0)
    with pytest.raises(AscendError, match=r"^test: node 'lstm_node' \(LSTM\): the clip attribute is not supported$"):
        import_onnx(model)


def test_scalar_constants_store_in_fp16() -> None:
    """The 0-d constants converters emit (exact Gelu's 1/sqrt 2, 1/2, 1) survive
    ascend-store-low-weights after a mixed mode: same outputs, bit for bit."""
    from ascend_mp.frontend import import_onnx
    from ascend_mp.interpreter.runner import Program
    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES
    from ascend_mp.passes.precision import apply_plan, decide_precision, load_config
    from ascend_mp.passes.store_weights import store_low_weights

    x = f32(4, 8)
    w = f32(8, 8)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Gelu", ["m"], ["y0"])]
    model = graph_model(nodes, {"x": x}, ["y0"], {"w": w}, 20)
    module, plain = import_onnx(model), import_onnx(model)
    assert any(op.name == "ascend.Const" and not op.results[0].type.get_shape() for op in module.walk())
    PASSES["ascend-precision"]()(mode="force_fp16").apply(make_context(), module)  # pyright: ignore[reportCallIssue]
    apply_plan(plain, decide_precision(plain, load_config(mode="force_fp16")))  # the casts stay
    (stored,) = Program.from_module(module).run("main", x)
    (cast_at_run_time,) = Program.from_module(plain).run("main", x)
    np.testing.assert_array_equal(stored, cast_at_run_time)
    scalars = [op for op in module.walk() if op.name == "ascend.Const" and not op.results[0].type.get_shape()]
    assert scalars and all(str(op.results[0].type) == "tensor<f16>" for op in scalars)  # stored by the pass
    assert store_low_weights(plain).narrowed  # the standalone pass does the same to the unstored module


@pytest.mark.parametrize(
    "axis,idx",
    [
        (0, np.array([[2, 0, 1, -1], [0, 0, 2, 1]], np.int64)),
        (1, np.array([[3, 3], [0, 1], [-4, 2]], np.int64)),
    ],
)
def test_gather_elements(axis: int, idx: np.ndarray[Any, Any]) -> None:
    x = f32(3, 4)
    check(one_node("GatherElements", {"x": x}, {"i": idx}, axis=axis), {"x": x})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements_with_indices_computed_in_the_graph(axis: int) -> None:
    """RoBERTa's embeddings gather token-type ids at position ids computed from input_ids: the flat positions
    are computed in the graph (negative indices wrapped), checked against onnxruntime."""
    x = f32(3, 4)
    rows = np.array([[2, 0, 1, -1], [0, -3, 2, 1]], np.int64)
    idx = rows if axis == 0 else np.array([[3, 0, -1], [1, 1, -4], [0, 2, 3]], np.int64)
    nodes = [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)]  # i: an input, not a constant
    check(graph_model(nodes, {"x": x, "i": idx}, ["y"]), {"x": x, "i": idx})


def test_gather_elements_index_out_of_range_is_one_line() -> None:
    from ascend_mp.errors import AscendError
    from ascend_mp.frontend import import_onnx

    x = f32(3, 4)
    model = one_node("GatherElements", {"x": x}, {"i": np.array([[5, 0, 0, 0]], np.int64)}, axis=0)
    with pytest.raises(
        AscendError,
        match=r"^test: node 'gatherelements_node' \(GatherElements\): indices must lie in \[-3, 2\] on axis 0$",
    ):
        import_onnx(model)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2])
def test_trilu(upper: int, k: int | None) -> None:
    x = f32(2, 4, 5)
    x[(0, 3, 0) if upper else (0, 0, 4)] = np.inf  # in the zeroed triangle: must come out 0, not NaN
    inits = {"k": np.array(k, np.int64)} if k is not None else None
    check(one_node("Trilu", {"x": x}, inits, opset=14, upper=upper), {"x": x})


def test_trilu_on_constants_folds() -> None:
    """A causal mask built from constants (Trilu of ones) folds at import."""
    x = f32(4, 4)
    nodes = [helper.make_node("Trilu", ["ones"], ["m"], upper=0), helper.make_node("Mul", ["x", "m"], ["y0"])]
    check(graph_model(nodes, {"x": x}, ["y0"], {"ones": np.ones((4, 4), np.float32)}, 14), {"x": x})


def test_gather_nd_index_out_of_range_is_one_line() -> None:
    from ascend_mp.errors import AscendError
    from ascend_mp.frontend import import_onnx

    model = one_node("GatherND", {"x": f32(3, 4)}, {"i": np.array([[1, 0], [5, 0]], np.int64)})
    with pytest.raises(
        AscendError,
        match=r"^test: node 'gathernd_node' \(GatherND\): indices must lie in \[-d, d-1\] for the indexed dimensions \[3, 4\]$",
    ):
        import_onnx(model)


def test_split_sizes_not_summing_to_the_axis_is_one_line() -> None:
    from ascend_mp.errors import AscendError
    from ascend_mp.frontend import import_onnx

    x = f32(2, 6)
    node = helper.make_node("Split", ["x", "s"], ["y0", "y1"], name="split_node", axis=1)
    with pytest.raises(AscendError) as info:
        import_onnx(_unchecked([node], {"x": x}, ["y0", "y1"], {"s": np.array([2, 3], np.int64)}))
    assert "\n" not in str(info.value) and "node 'split_node'" in str(info.value)


def _unchecked(nodes: list[Any], inputs: dict[str, Any], outputs: list[str], inits: dict[str, Any]):
    """graph_model without onnx's shape inference (which would reject the model itself)."""
    import onnx
    from onnx import TensorProto, numpy_helper

    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs.items()]
    outs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs]
    g = helper.make_graph(nodes, "test", ins, outs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 10)
    return onnx.ModelProto.FromString(model.SerializeToString())


@pytest.mark.parametrize(
    "src,to",
    [
        ("f32", 6),
        ("f32", 7),
        ("f32", 9),
        ("i64", 1),
        ("bool", 1),
        ("bool", 7),
        ("i64", 9),
        ("i32", 7),
    ],
)
def test_cast_integer_and_bool(src: str, to: int) -> None:
    """Casts exporters put around masks and ids (to: 1 float, 6 int32, 7 int64, 9 bool)."""
    x = {
        "f32": f32(3, 5) * 4,
        "i64": RNG.integers(-3, 4, (3, 5)),
        "i32": RNG.integers(-3, 4, (3, 5)).astype(np.int32),
        "bool": RNG.integers(0, 2, (3, 5)).astype(np.bool_),
    }[src]
    if src == "f32":
        x[0, 0] = 0.0
    check(one_node("Cast", {"x": x}, to=to), {"x": x})
