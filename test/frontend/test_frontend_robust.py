"""The ONNX importer on models that are invalid, hostile or merely unusual: every problem is one line naming
the model and the node, tensor or name at fault; valid models (local functions, non-ASCII names, nodes
out of order) import; folding is one pass in topological order and checks sizes before it allocates."""

from __future__ import annotations

import ast
import logging
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ascend_mp.errors import AscendError
from ascend_mp.frontend import fold, import_onnx
from ascend_mp.interpreter.runner import Program

Array = np.ndarray[Any, Any]
FRONTEND = Path(__file__).resolve().parents[2] / "ascend_mp" / "frontend"


def model(
    nodes: list[onnx.NodeProto],
    inits: dict[str, Array] | None = None,
    x_shape: list[int] | None = None,
    outputs: list[str] | None = None,
    out_type: int = TensorProto.FLOAT,
    opset: int = 17,
) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape or [2, 3])],
        [helper.make_tensor_value_info(o, out_type, None) for o in (outputs or ["y"])],
        [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def refused(m: onnx.ModelProto | bytes | str, *says: str) -> str:
    with pytest.raises(AscendError) as e:
        import_onnx(m)
    message = str(e.value)
    assert "\n" not in message, message
    for text in says:
        assert text in message, message
    return message


def i64(*values: int) -> Array:
    return np.array(values, np.int64)


# --------------------------------------------------------------------------------------
# Layering
# --------------------------------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    """Modules of ascend_mp.frontend that `path` imports at run time (TYPE_CHECKING blocks excluded)."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ascend_mp.frontend."):
            found.add(node.module.rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.rsplit(".", 1)[1] for a in node.names if a.name.startswith("ascend_mp.frontend.")}
    return found


def test_frontend_modules_import_no_cycle() -> None:
    graph = {p.stem: _imports(p) for p in FRONTEND.glob("*.py")}
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(graph.get(name, ())):
            assert state.get(dep) != 1, f"import cycle: {' -> '.join([*path, name, dep])}"
            if dep not in state:
                visit(dep, [*path, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert "onnx_import" not in graph["converters"]


# --------------------------------------------------------------------------------------
# Folding: one topological pass, sizes checked first
# --------------------------------------------------------------------------------------


def _reversed_chain(n: int) -> onnx.ModelProto:
    """n foldable Add nodes on a constant, listed last-first; the result is added to x."""
    nodes = [helper.make_node("Add", [f"c{i}", "one"], [f"c{i + 1}"], name=f"add{i}") for i in range(n)]
    nodes.append(helper.make_node("Add", ["x", f"c{n}"], ["y"], name="out"))
    return model(list(reversed(nodes)), {"c0": np.zeros((2, 3), np.float32), "one": np.ones((2, 3), np.float32)})


def test_a_reversed_chain_folds_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = fold.infer_types

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(fold, "infer_types", counting)
    module = import_onnx(_reversed_chain(300))
    assert len(calls) <= 2, f"{len(calls)} rounds of shape inference for one chain"
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = Program.from_module(module).run("main", x)
    np.testing.assert_array_equal(y, x + 300)


def test_topological_order_is_stable_and_finds_cycles() -> None:
    a = helper.make_node("Relu", ["x"], ["a"], name="a")
    b = helper.make_node("Relu", ["a"], ["b"], name="b")
    c = helper.make_node("Relu", ["x"], ["c"], name="c")
    assert [n.name for n in fold.topological_order([b, c, a])] == ["a", "b", "c"]
    assert [n.name for n in fold.topological_order([a, c, b])] == ["a", "c", "b"]
    p = helper.make_node("Relu", ["q"], ["p"], name="p")
    q = helper.make_node("Relu", ["p"], ["q"], name="q")
    with pytest.raises(AscendError, match="cycle through node"):
        fold.topological_order([p, q])


@pytest.mark.parametrize(
    ("nodes", "inits", "needs"),
    [
        ([helper.make_node("ConstantOfShape", ["s"], ["y"], name="big")], {"s": i64(600_000_000)}, "2.4 GB"),
        ([helper.make_node("ConstantOfShape", ["s"], ["y"], name="big")], {"s": i64(40_000, 1_000_000)}, "160.0 GB"),
        (
            [helper.make_node("Range", ["a", "b", "c"], ["y"], name="big")],
            {"a": np.array(0, np.int64), "b": np.array(10**11, np.int64), "c": np.array(1, np.int64)},
            "800.0 GB",
        ),
        (
            [helper.make_node("Expand", ["v", "s"], ["y"], name="big")],
            {"v": np.ones(1, np.float32), "s": i64(2**20, 2**20)},
            "4.4 TB",
        ),
    ],
    ids=["constant-of-shape", "constant-of-shape-160g", "range", "expand"],
)
def test_folding_checks_the_tensor_limit_first(
    nodes: list[onnx.NodeProto], inits: dict[str, Array], needs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", "100000000")
    refused(model(nodes, inits), "node 'big'", f"needs {needs}", "the limit is 100.0 MB")


def test_folding_warnings_are_one_line_warnings(caplog: pytest.LogCaptureFixture) -> None:
    m = model(
        [
            helper.make_node("Div", ["one", "zero"], ["q"], name="div"),
            helper.make_node("Add", ["x", "q"], ["y"], name="add"),
        ],
        {"one": np.ones((2, 3), np.float32), "zero": np.zeros((2, 3), np.float32)},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw RuntimeWarning may escape
        with caplog.at_level(logging.WARNING, logger="ascend_mp"):
            import_onnx(m)
    assert any("node 'div' (Div)" in r.getMessage() and "divide by zero" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------------------
# Invalid models: one line each
# --------------------------------------------------------------------------------------


def _scalar_const(op: str, **attrs: Any) -> onnx.ModelProto:
    extra = {"Squeeze": ["ax"], "Slice": ["s", "e", "ax"], "GatherElements": ["i"]}[op]
    node = helper.make_node(op, ["k", *extra], ["y"], name="bad", **attrs)
    return model(
        [node], {"k": np.array(1.0, np.float32), "ax": i64(0), "s": i64(0), "e": i64(1), "i": np.array(0, np.int64)}
    )


@pytest.mark.parametrize("op", ["Squeeze", "Slice", "GatherElements"])
def test_axis_of_a_scalar_constant(op: str) -> None:
    refused(_scalar_const(op), "node 'bad'", "out of range for rank 0")


def test_unsqueeze_axis_out_of_range_does_not_wrap() -> None:
    m = model(
        [helper.make_node("Unsqueeze", ["k", "ax"], ["y"], name="bad")],
        {"k": np.ones((2, 3), np.float32), "ax": i64(10)},
    )
    refused(m, "node 'bad'", "axis 10 is out of range for rank 3")


def test_gather_with_constant_indices_out_of_range() -> None:
    m = model([helper.make_node("Gather", ["x", "i"], ["y"], name="bad", axis=1)], {"i": i64(0, 3)})
    refused(m, "node 'bad'", "indices must lie in [-3, 2] on axis 1")
    m = model([helper.make_node("Gather", ["k", "i"], ["y"], name="bad")], {"k": np.ones(4, np.float32), "i": i64(-5)})
    refused(m, "node 'bad'", "indices must lie in [-4, 3]")


@pytest.mark.parametrize(
    ("inputs", "says"),
    [
        (["x"], "input 1 ('B') is required"),
        (["x", ""], "input 1 ('B') is required"),
        (["x", "x", "x"], "has 3 inputs; Add takes at most 2"),
    ],
)
def test_node_with_the_wrong_inputs(inputs: list[str], says: str) -> None:
    refused(model([helper.make_node("Add", inputs, ["y"], name="bad")]), "node 'bad' (Add)", says)


def test_node_without_outputs() -> None:
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r"), helper.make_node("Relu", ["x"], [], name="bad")])
    refused(m, "node 'bad' (Relu) has no outputs")


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (
            lambda: model(
                [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Relu", ["x"], ["y"], name="b")]
            ),
            "'y' is defined twice (as an output of node 'a' (Relu) and as an output of node 'b' (Relu))",
        ),
        (
            lambda: model([helper.make_node("Relu", ["x"], ["y"], name="a")], outputs=["y", "y"]),
            "graph output 'y' is listed twice",
        ),
        (lambda: model([helper.make_node("Relu", ["w"], ["y"], name="a")], {"w": np.ones(2, np.float32)} | {}), None),
        (
            lambda: model(
                [helper.make_node("Relu", ["x"], ["w"], name="a"), helper.make_node("Relu", ["w"], ["y"], name="b")],
                {"w": np.ones((2, 3), np.float32)},
            ),
            "'w' is defined twice (as an initializer and as an output of node 'a' (Relu))",
        ),
    ],
    ids=["node-outputs", "graph-outputs", "valid", "initializer-shadows-output"],
)
def test_names_defined_once(build: Any, says: str | None) -> None:
    if says is None:
        import_onnx(build())
    else:
        refused(build(), says)


def test_duplicate_inputs_and_initializers() -> None:
    m = model([helper.make_node("Relu", ["x"], ["y"], name="a")])
    m.graph.input.append(m.graph.input[0])
    refused(m, "'x' is defined twice (as a graph input and as a graph input)")
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="a")], {"w": np.ones((2, 3), np.float32)})
    m.graph.initializer.append(m.graph.initializer[0])
    refused(m, "'w' is defined twice (as an initializer and as an initializer)")


def test_attribute_without_type() -> None:
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="bad")
    attr = node.attribute.add()
    attr.name = "alpha"
    refused(model([node]), "node 'bad' (LeakyRelu) attribute 'alpha' has no type (UNDEFINED)")


def test_tensor_attribute_of_undefined_type() -> None:
    node = helper.make_node("Constant", [], ["c"], name="bad", value=onnx.TensorProto(dims=[1]))
    refused(
        model([node, helper.make_node("Add", ["x", "c"], ["y"], name="add")]),
        "node 'bad' (Constant) attribute 'value'",
        "element type UNDEFINED is not supported",
    )


@pytest.mark.parametrize("data_type", [77, 99])
def test_initializer_of_unknown_data_type(data_type: int) -> None:
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="a")], {"w": np.ones((2, 3), np.float32)})
    m.graph.initializer[0].data_type = data_type
    refused(m, "initializer 'w'", f"element type {data_type} is not supported")


def test_cast_of_a_constant_to_string() -> None:
    m = model(
        [helper.make_node("Cast", ["k"], ["y"], name="bad", to=TensorProto.STRING)],
        {"k": np.ones(2, np.float32)},
        out_type=TensorProto.STRING,
    )
    refused(m, "node 'bad' (Cast)", "cast to STRING is not supported")


def test_op_type_that_is_not_utf8() -> None:
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r")])
    data = m.SerializeToString().replace(b'"\x04Relu', b'"\x04R\xffu\xfe')
    refused(data, "node 0 has an op_type that is not valid UTF-8")


def test_a_model_with_local_functions_imports() -> None:
    f = helper.make_function(
        "local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 17)]
    )
    g = helper.make_graph(
        [helper.make_node("Twice", ["x"], ["y"], domain="local", name="t")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)], functions=[f]
    )
    (y,) = Program.from_module(import_onnx(m)).run("main", np.array([1.5, -2], np.float32))
    np.testing.assert_array_equal(y, [3.0, -4.0])


def test_non_ascii_names_print_and_parse_back() -> None:
    from ascend_mp.ir import parse_module, print_module

    m = model(
        [helper.make_node("Relu", ["x"], ["ü"], name="relu"), helper.make_node("Neg", ["ü"], ["выход"], name="neg")],
        outputs=["выход"],
    )
    m.graph.input[0].name = "入力"
    m.graph.node[0].input[0] = "入力"
    text = print_module(import_onnx(m))
    again = parse_module(text, "printed.mlir")
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    (y,) = Program.from_module(again).run("main", x)
    np.testing.assert_array_equal(y, -np.maximum(x, 0))
    from ascend_mp.frontend.tools import io_names

    assert io_names(again, "main") == (["入力"], ["выход"])


# --------------------------------------------------------------------------------------
# External data
# --------------------------------------------------------------------------------------


def _external(tmp_path: Path, **entries: str) -> Path:
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="a")], {"w": np.ones((2, 3), np.float32)})
    (tmp_path / "w.bin").write_bytes(np.ones((2, 3), np.float32).tobytes())
    init = m.graph.initializer[0]
    init.ClearField("raw_data")
    init.data_location = TensorProto.EXTERNAL
    for key, value in ({"location": "w.bin"} | entries).items():
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    return path


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        ({"location": "../w.bin"}, "must be a path inside the model's folder"),
        ({"location": "/etc/passwd"}, "must be a path inside the model's folder"),
        ({"offset": "-5"}, "'offset' must be a non-negative integer, got '-5'"),
        ({"offset": "abc"}, "'offset' must be a non-negative integer, got 'abc'"),
        ({"length": "4"}, "'length' is 4 bytes, but the tensor needs 24"),
    ],
    ids=["dotdot", "absolute", "negative-offset", "text-offset", "length"],
)
def test_bad_external_data(entries: dict[str, str], says: str, tmp_path: Path) -> None:
    refused(str(_external(tmp_path, **entries)), "tensor 'w'", says)


def test_external_data_through_a_symlink_is_refused(tmp_path: Path) -> None:
    path = _external(tmp_path, location="link.bin")
    (tmp_path / "link.bin").symlink_to(tmp_path / "w.bin")
    refused(str(path), "cannot read external data 'link.bin' of tensor 'w'")


def test_valid_external_data_and_an_unknown_key(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _external(tmp_path, flavour="sweet")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # onnx's own UserWarning must not escape
        with caplog.at_level(logging.WARNING, logger="ascend_mp"):
            module = import_onnx(str(path))
    assert any("unknown external_data key 'flavour'" in r.getMessage() for r in caplog.records)
    (y,) = Program.from_module(module).run("main", np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(y, np.ones((2, 3), np.float32))


# --------------------------------------------------------------------------------------
# ir.compat.bulk_ir: the collector paused for bulk IR work, always resumed
# --------------------------------------------------------------------------------------


def test_bulk_ir_pauses_and_resumes_the_collector() -> None:
    import gc

    from ascend_mp.ir.compat import bulk_ir

    assert gc.isenabled()
    with bulk_ir():
        assert not gc.isenabled()
        with bulk_ir():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost block resumes it
    assert gc.isenabled()
    with pytest.raises(ValueError), bulk_ir():
        raise ValueError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk_ir():
            pass
        assert not gc.isenabled()  # a collector paused by the caller stays paused
    finally:
        gc.enable()
