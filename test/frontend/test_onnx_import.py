"""The ONNX frontend beyond single ops: --input_shape, folding, names, weights as blobs, tools, errors."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_util import check, graph_model, rel_err, run_ort
from xdsl.printer import Printer

from ascend_mp.dialects.ascend import ConstOp
from ascend_mp.errors import AscendError
from ascend_mp.frontend import import_onnx, parse_input_shape
from ascend_mp.interpreter.runner import Program
from ascend_mp.ir import make_context, parse_module, print_module

pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(1)


def small_cnn(batch: int | str = 1, opset: int = 17) -> onnx.ModelProto:
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm, with a dynamic batch when `batch` is a name."""
    w = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b = RNG.standard_normal(8).astype(np.float32)
    fc = RNG.standard_normal((10, 8)).astype(np.float32)
    fb = RNG.standard_normal(10).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "conv.weight", "conv.bias"], ["c"], name="/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="/relu/Relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["g"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["g"], ["f"], name="/Flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm", transB=1),
    ]
    inits = [
        numpy_helper.from_array(a, n)
        for n, a in (("conv.weight", w), ("conv.bias", b), ("fc.weight", fc), ("fc.bias", fb))
    ]
    g = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


# --------------------------------------------------------------------------------------
# --input_shape
# --------------------------------------------------------------------------------------


def test_input_shape_syntax() -> None:
    s = parse_input_shape("input:1,3,224,224;mask:1,128")
    assert s.by_name == {"input": (1, 3, 224, 224), "mask": (1, 128)}
    assert parse_input_shape("x:-1,3;y:1~8,2").by_name == {"x": ("-1", 3), "y": ("1~8", 2)}
    assert parse_input_shape("onnx::input:2,3").by_name == {"onnx::input": (2, 3)}  # the last colon separates
    assert parse_input_shape("scalar:;x:4").by_name == {"scalar": (), "x": (4,)}
    assert parse_input_shape("1,3,8,8;2,5").by_index == ((1, 3, 8, 8), (2, 5))


@pytest.mark.parametrize(
    "text,says",
    [
        ("x:1,a", "bad dimension 'a'"),
        ("x:1,,2", "bad dimension ''"),
        ("x:1;1,2", "mixes named and unnamed"),
        ("x:1;x:2", "'x' is given twice"),
        (":1,2", "no input name"),
        ("", "empty value"),
    ],
)
def test_input_shape_malformed(text: str, says: str) -> None:
    with pytest.raises(AscendError, match="--input_shape") as e:
        parse_input_shape(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_input_shape_fixes_dynamic_batch() -> None:
    m = small_cnn("N")
    with pytest.raises(
        AscendError,
        match=r"input 'input' has a dynamic shape \[N, 3, 8, 8\], so the shape of node '/conv/Conv' is unknown",
    ):
        import_onnx(m)
    x = RNG.standard_normal((3, 3, 8, 8)).astype(np.float32)
    fixed = import_onnx(m, "input:3,3,8,8")
    (y,) = Program.from_module(fixed).run("main", x)
    ref = run_ort(m, {"input": x})[0]
    assert rel_err(y, ref) < 1e-5
    by_index = import_onnx(m, "3,3,8,8")
    strip = lambda module: re.sub(r"dense_resource<[\w.]+>", "blob", str(module))  # noqa: E731 - handles are unique per process
    assert strip(by_index) == strip(fixed)


def test_input_shape_conflicts_with_static_dim() -> None:
    with pytest.raises(AscendError, match=r"input 'input' dimension 1 is 3 in .*, got 4"):
        import_onnx(small_cnn(1), "input:1,4,8,8")


def test_graph_that_stays_dynamic_names_the_node() -> None:
    """A Reshape whose target is computed at run time leaves its output shape unknown."""
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"], name="runtime_reshape")]
    g = helper.make_graph(
        nodes,
        "d",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(AscendError, match="output of node 'runtime_reshape'.* stays dynamic") as e:
        import_onnx(m)
    assert "\n" not in str(e.value)
    del x


# --------------------------------------------------------------------------------------
# Folding
# --------------------------------------------------------------------------------------


def test_shape_subgraph_folds_away() -> None:
    """The legacy exporter's flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape."""
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
        helper.make_node("Identity", ["target"], ["target2"]),
        helper.make_node("Reshape", ["x", "target2"], ["y"], name="flatten"),
    ]
    inits = {"axes": np.array([0], np.int64), "minus1": np.array([-1], np.int64)}
    model = graph_model(nodes, {"x": x}, ["y"], inits, opset=13)
    check(model, {"x": x})
    ops = [op.name for op in import_onnx(model).walk() if op.name.startswith("ascend.")]
    assert ops == ["ascend.Reshape"]


def test_constant_of_shape_range_where_expand_fold() -> None:
    """The dynamo exporter's mask/position patterns on constants fold to one Const."""
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node(
            "ConstantOfShape", ["s"], ["ones"], value=numpy_helper.from_array(np.array([1.0], np.float32))
        ),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Equal", ["r", "two"], ["eq"]),
        helper.make_node("Where", ["eq", "ones", "rf"], ["w"]),
        helper.make_node("Expand", ["w", "s"], ["e"]),
        helper.make_node("Add", ["x", "e"], ["y"], name="add"),
    ]
    inits = {
        "start": np.array(0, np.int64),
        "limit": np.array(4, np.int64),
        "delta": np.array(1, np.int64),
        "two": np.array(2, np.int64),
    }
    model = graph_model(nodes, {"x": x}, ["y"], inits, opset=17)
    check(model, {"x": x})
    ops = [op.name for op in import_onnx(model).walk() if op.name.startswith("ascend.")]
    assert ops == ["ascend.Const", "ascend.Add"]


# --------------------------------------------------------------------------------------
# Names, weights, round trips
# --------------------------------------------------------------------------------------


def test_names_and_order_are_kept() -> None:
    module = import_onnx(small_cnn(2))
    text = str(module)
    assert '%input: tensor<2x3x8x8xf32> {onnx.name = "input"}' in text
    assert '(tensor<2x10xf32> {onnx.name = "logits"})' in text
    names = {op.properties["name"].data for op in module.walk() if op.name.startswith("ascend.")}  # pyright: ignore[reportAttributeAccessIssue]
    assert {
        "/conv/Conv",
        "/relu/Relu",
        "/pool/GlobalAveragePool",
        "/Flatten",
        "/fc/Gemm",
        "conv.weight",
        "fc.weight",
    } <= names


def test_weights_are_blobs_not_decimals() -> None:
    module = import_onnx(small_cnn(1))
    text = _print_with_resources(module)
    assert re.search(r"dense_resource<conv.weight(_\d+)?> : tensor<8x3x3x3xf32>", text)
    assert re.search(r"dense_resource<fc.weight(_\d+)?> : tensor<10x8xf32>", text)
    assert re.search(r"conv.weight(_\d+)?: \"0x04000000", text)
    consts = [op for op in module.walk() if isinstance(op, ConstOp)]
    assert all(op.value.name == "dense_resource" for op in consts if op.y.type.element_count() > 16)  # pyright: ignore[reportAttributeAccessIssue]


def _print_with_resources(module: Any) -> str:
    out = io.StringIO()
    printer = Printer(stream=out)
    printer.print_op(module)
    ctx = make_context()
    printer.print_metadata(ctx.loaded_dialects)
    return out.getvalue()


def test_round_trip_is_bit_exact() -> None:
    m = small_cnn(1)
    module = import_onnx(m)
    text = _print_with_resources(module)
    again = parse_module(text, "roundtrip.mlir")
    before = {op.properties["name"].data: np.asarray(_value(op)) for op in module.walk() if isinstance(op, ConstOp)}  # pyright: ignore[reportAttributeAccessIssue]
    after = {op.properties["name"].data: np.asarray(_value(op)) for op in again.walk() if isinstance(op, ConstOp)}  # pyright: ignore[reportAttributeAccessIssue]
    assert before.keys() == after.keys()
    for name in before:
        assert before[name].dtype == after[name].dtype
        assert before[name].tobytes() == after[name].tobytes(), name
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for name, array in inits.items():
        assert after[name].tobytes() == array.tobytes()


def _value(op: ConstOp) -> np.ndarray[Any, Any]:
    from ascend_mp.passes.store_weights import const_array

    return const_array(op)


def test_external_data(tmp_path: Path) -> None:
    m = small_cnn(1)
    path = tmp_path / "cnn.onnx"
    saved = onnx.ModelProto()
    saved.CopyFrom(m)
    onnx.save(
        saved,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="cnn.weights",
        size_threshold=0,
    )
    assert (tmp_path / "cnn.weights").exists()
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    (y,) = Program.from_module(import_onnx(str(path))).run("main", x)
    assert rel_err(y, run_ort(m, {"input": x})[0]) < 1e-5
    (tmp_path / "cnn.weights").write_bytes(b"\0" * 16)
    with pytest.raises(
        AscendError,
        match="external data of tensor 'conv.weight' in 'cnn.weights' has .* bytes|cannot read external data",
    ):
        import_onnx(str(path))


def test_unsupported_ops_are_listed_together() -> None:
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Cos", ["x"], ["a"], name="c1"),
        helper.make_node("Sin", ["a"], ["b"], name="s1"),
        helper.make_node("Cos", ["b"], ["y"], name="c2"),
    ]
    with pytest.raises(AscendError, match=r"unsupported ONNX ops: Cos x2 \(first: 'c1'\), Sin x1 \(first: 's1'\)$"):
        import_onnx(graph_model(nodes, {"x": x}, ["y"]))


def test_not_onnx_and_truncated(tmp_path: Path) -> None:
    bad = tmp_path / "m.onnx"
    bad.write_text("hello")
    with pytest.raises(AscendError, match="m.onnx: not an ONNX model"):
        import_onnx(str(bad))
    data = small_cnn(1).SerializeToString()
    bad.write_bytes(data[: len(data) // 3])
    with pytest.raises(AscendError, match="m.onnx: not an ONNX model"):
        import_onnx(str(bad))


# --------------------------------------------------------------------------------------
# Precision modes and stored weights
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", ["allow_fp32_to_fp16", "force_fp16", "allow_mix_precision", "force_fp32", "must_keep_origin_dtype"]
)
def test_precision_modes_on_an_imported_cnn(mode: str) -> None:
    from ascend_mp.passes import PASSES

    model = small_cnn(1)
    module = import_onnx(model)
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    precision = PASSES["ascend-precision"]()(mode=mode)  # pyright: ignore[reportCallIssue]
    if mode == "must_keep_origin_dtype":
        with pytest.raises(AscendError, match="Conv2D '/conv/Conv'.*no kernel for its original dtype float32"):
            precision.apply(make_context(), module)
        return
    precision.apply(make_context(), module)
    (y,) = Program.from_module(module).run("main", x)
    err = rel_err(y, run_ort(model, {"input": x})[0])
    assert err < 1e-2, err  # Conv2D is fp16-only: every mode runs it in fp16
    assert "tensor<8x3x3x3xf16>" in str(module)


def test_store_low_weights_halves_weight_bytes_and_keeps_results() -> None:
    """ascend-precision stores weights used only in fp16 as fp16 (ATC does) and reports the bytes;
    the values are the same bits as casting at run time (the rewrite without storing, apply_plan)."""
    from ascend_mp.passes.precision import apply_plan, decide_precision, load_config, run_precision
    from ascend_mp.passes.store_weights import store_low_weights

    model = small_cnn(1)
    module, plain = import_onnx(model), import_onnx(model)
    report = run_precision(module, mode="allow_mix_precision")
    apply_plan(plain, decide_precision(plain, load_config(mode="allow_mix_precision")))
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    (stored,) = Program.from_module(module).run("main", x)
    (cast_at_run_time,) = Program.from_module(plain).run("main", x)
    assert stored.tobytes() == cast_at_run_time.tobytes()
    assert report.constants_stored_low >= 1 and report.weight_bytes_after < report.weight_bytes_before
    assert report.to_json()["totals"]["weight_bytes_before"] == report.weight_bytes_before
    assert 'tensor<8x3x3x3xf16> {name = "conv.weight"}' in str(module)
    assert store_low_weights(module).narrowed == []  # nothing left to store: idempotent
    standalone = store_low_weights(plain)  # the pass on its own does the same
    assert "conv.weight" in standalone.narrowed and standalone.after == report.weight_bytes_after


# --------------------------------------------------------------------------------------
# The tools
# --------------------------------------------------------------------------------------


def test_ascend_run_takes_and_saves_onnx_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.ascend_run import main

    m = small_cnn("batch")
    path = tmp_path / "cnn.onnx"
    onnx.save(m, str(path))
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npz"
    main([str(path), "--input_shape", "input:2,3,8,8", "--input", f"input={tmp_path / 'x.npy'}", "-o", str(out)])
    printed = capsys.readouterr().out
    assert "input %input: tensor<2x3x8x8xf32>" in printed
    with np.load(out) as got:
        assert set(got.files) == {"logits", "result0"}
        assert rel_err(got["logits"], run_ort(m, {"input": x})[0]) < 1e-5
        assert got["logits"].tobytes() == got["result0"].tobytes()


def test_ascend_opt_reads_onnx_with_atc_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from ascend_mp.tools.ascend_opt import main

    path = tmp_path / "cnn.onnx"
    onnx.save(small_cnn("N"), str(path))
    report = tmp_path / "r.json"
    main(
        [
            str(path),
            "--input_shape=input:1,3,8,8",
            "--precision_mode=allow_mix_precision",
            "--precision-report",
            str(report),
        ]
    )
    out = capsys.readouterr().out
    assert "ascend.Conv2D" in out and "tensor<1x3x8x8xf16>" in out and "dialect_resources" in out
    ops = json.loads(report.read_text())["ops"]
    assert any(o["name"] == "/conv/Conv" for o in ops)
    again = parse_module(out, "printed.mlir")
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    (y,) = Program.from_module(again).run("main", x)
    assert np.isfinite(y).all()


def test_malformed_node_is_one_line_error() -> None:
    """A node the ONNX checker would reject (MaxPool without kernel_shape) fails in one line."""
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool")],
        "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 2])],
    )
    with pytest.raises(AscendError, match=r"node 'pool' \(MaxPool\) cannot be converted") as e:
        import_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert "\n" not in str(e.value)
    del x


def test_constant_that_cannot_fold_is_one_line_error() -> None:
    nodes = [
        helper.make_node("Reshape", ["c", "shape"], ["r"], name="bad_reshape"),
        helper.make_node("Add", ["x", "r"], ["y"]),
    ]
    inits = {"c": np.ones(6, np.float32), "shape": np.array([4, 2], np.int64)}
    g = helper.make_graph(
        nodes,
        "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    with pytest.raises(AscendError, match=r"node 'bad_reshape' \(Reshape\) on constants cannot be folded"):
        import_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def test_print_module_keeps_the_blobs() -> None:
    from ascend_mp.ir import print_module

    module = import_onnx(small_cnn(1))
    again = parse_module(print_module(module), "printed.mlir")
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    (a,) = Program.from_module(module).run("main", x)
    (b,) = Program.from_module(again).run("main", x)
    assert a.tobytes() == b.tobytes()


def test_non_finite_constants_round_trip_bit_exactly() -> None:
    """xDSL prints inf/NaN in a dense literal as hex and reads it back as an integer, so a tiny constant
    that holds one (an attention mask's -inf, an fp32 lowest value stored in fp16) goes into a blob."""
    from ascend_mp.passes.store_weights import store_low_weights

    text = """
    func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {
      %w = ascend.Const dense<[-3.4e38, 1.0, 2.0, 70000.0]> : tensor<4xf32> {name = "w"}
      %h = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
      %y = ascend.Add %x, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
      func.return %y : tensor<4xf16>
    }
    """
    module = parse_module(text)
    store_low_weights(module)
    again = parse_module(print_module(module))
    x = np.zeros(4, np.float16)
    (y,) = Program.from_module(again).run("f", x)
    assert y.tolist() == [-np.inf, 1.0, 2.0, np.inf]  # float16(-3.4e38) = -inf, float16(70000) = inf

    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["x", "m"], ["y"], name="add")],
        "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
        [onnx.numpy_helper.from_array(np.array([-np.inf, np.nan], np.float32), "m")],
    )
    imported = import_onnx(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]))
    reparsed = parse_module(print_module(imported))
    (z,) = Program.from_module(reparsed).run("main", np.ones(2, np.float32))
    assert z[0] == -np.inf and np.isnan(z[1])


def _bad_node_model(
    node: onnx.NodeProto, xshape: list[int], yshape: list[int], inits: dict[str, np.ndarray]
) -> onnx.ModelProto:
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    ("node", "inits", "inputs"),
    [
        (helper.make_node("Softmax", ["x"], ["y"], axis=3, name="bad"), {}, "'x': [2, 4]"),
        (
            helper.make_node("ReduceMean", ["x", "ax"], ["y"], name="bad"),
            {"ax": np.array([5], np.int64)},
            "'x': [2, 4], 'ax': [1]",
        ),
        (
            helper.make_node("Add", ["x", "b"], ["y"], name="bad"),
            {"b": np.ones(3, np.float32)},
            "'x': [2, 4], 'b': [3]",
        ),
        (helper.make_node("Concat", ["x", "x"], ["y"], axis=4, name="bad"), {}, "'x': [2, 4], 'x': [2, 4]"),
        (helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0], name="bad"), {}, "'x': [2, 4]"),
        (
            helper.make_node("Gather", ["x", "i"], ["y"], axis=2, name="bad"),
            {"i": np.array([0], np.int64)},
            "'x': [2, 4], 'i': [1]",
        ),
    ],
    ids=["softmax-axis", "reduce-axes", "broadcast", "concat-axis", "transpose-perm", "gather-axis"],
)
def test_an_invalid_node_with_static_inputs_is_named_not_blamed_on_dynamic_shapes(
    node: onnx.NodeProto, inits: dict[str, np.ndarray], inputs: str
) -> None:
    """Wrong axes and shapes that do not broadcast: one line naming the node and its input shapes
    (no --input_shape can help, so the message does not suggest it)."""
    with pytest.raises(AscendError) as e:
        import_onnx(_bad_node_model(node, [2, 4], [2, 4], inits))
    message = str(e.value)
    assert (
        f"node 'bad' ({node.op_type}): the shape of its output 'y' cannot be inferred from its static inputs ({inputs})"
        in message
    )
    assert "--input_shape" not in message and "\n" not in message


def test_types_are_uniqued() -> None:
    """As in an MLIR context, every value of one type holds the same type object (the pass caches per object)."""
    module = import_onnx(small_cnn())
    values = [r for op in module.walk() for r in op.results] + list(module.ops.first.body.block.args)  # type: ignore[union-attr]
    by_text: dict[str, set[int]] = {}
    for v in values:
        by_text.setdefault(str(v.type), set()).add(id(v.type))
    assert len(by_text) > 3 and len(values) > len(by_text)
    assert all(len(ids) == 1 for ids in by_text.values()), by_text
