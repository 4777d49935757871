"""`ascend-opt --emit-onnx`: the decided program as an ONNX model that onnxruntime runs.

The reference for the numerics is the interpreter's float64 run of the original graph: the
exported model, run by onnxruntime, must be within twice the interpreter's own error (the
precision mode's error) of the interpreter's result for the same mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from classifiers import cnn, dataset, deep_hot, mlp, ort_run
from cli_util import run_main
from onnx import TensorProto, helper

from ascend_mp.frontend import import_onnx
from ascend_mp.frontend.export import ORT_CPU_KERNELS, export_onnx
from ascend_mp.interpreter.compare import precision_rewritten, relative_errors
from ascend_mp.interpreter.runner import Program
from ascend_mp.tools.ascend_opt import main as opt_main

FP32_SPREAD = 1e-6
"""Where a mode runs everything in fp32, onnxruntime and the interpreter differ by float32 summation order only."""

CASES = [
    ("force_fp16", "ascend910"),
    ("allow_mix_precision", "ascend910"),
    ("cube_fp16in_fp32out", "ascend910"),
    ("force_fp32", "ascend910"),
    ("allow_mix_precision_bf16", "ascend910b"),
    ("allow_fp32_to_bf16", "ascend910b"),
]


@pytest.fixture(scope="module")
def models() -> dict[str, onnx.ModelProto]:
    return {"cnn": cnn(batch=8), "mlp": mlp(batch=8)}


@pytest.mark.parametrize("mode,soc", CASES)
@pytest.mark.parametrize("which", ["cnn", "mlp"])
def test_emitted_model_matches_interpreter(models: dict[str, onnx.ModelProto], which: str, mode: str, soc: str) -> None:
    model = models[which]
    x = dataset(model, 8)["x"]
    module = import_onnx(model)
    reference = Program.from_module(module, reference=True).run("main", x)
    decided = precision_rewritten(module, mode, soc=soc)
    ours = Program.from_module(decided).run("main", x)
    exported = export_onnx(model, decided)
    theirs = ort_run(exported, {"x": x})
    envelope = relative_errors(ours, reference)[0]
    assert relative_errors(theirs, ours)[0] <= max(2 * envelope, FP32_SPREAD)
    # the user's graph, kept: every node (by name), the opset, the input and output types
    names = {n.name for n in exported.graph.node}
    assert {n.name for n in model.graph.node} <= names
    assert exported.opset_import == model.opset_import
    assert [i.type for i in exported.graph.input] == [i.type for i in model.graph.input]
    assert [o.type for o in exported.graph.output] == [o.type for o in model.graph.output]
    assert {n.op_type for n in exported.graph.node} - {n.op_type for n in model.graph.node} <= {"Cast"}


def _consts(decided: object) -> dict[str, str]:
    from ascend_mp.dialects.ascend import ConstOp
    from ascend_mp.dtypes import tensor_dtype

    return {
        op.node_name.data: str(tensor_dtype(op.results[0].type))
        for op in decided.walk()  # pyright: ignore
        if isinstance(op, ConstOp) and op.node_name is not None
    }


@pytest.mark.parametrize(
    "mode,soc",
    [("force_fp16", "ascend910"), ("cube_fp16in_fp32out", "ascend910"), ("allow_mix_precision_bf16", "ascend910b")],
)
def test_initializers_stored_in_the_decided_dtype(models: dict[str, onnx.ModelProto], mode: str, soc: str) -> None:
    model = models["cnn"]
    decided = precision_rewritten(import_onnx(model), mode, soc=soc)
    exported = export_onnx(model, decided)
    names = {"f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16, "f32": TensorProto.FLOAT}
    stored = _consts(decided)
    original = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    for init in exported.graph.initializer:
        assert init.data_type == names[stored[init.name]], init.name
        value = onnx.numpy_helper.to_array(init).astype(np.float64)
        # rounded once to nearest from the user's fp32 weight: within half an ulp of the low dtype
        ulp = {TensorProto.FLOAT16: 2.0**-11, TensorProto.BFLOAT16: 2.0**-8, TensorProto.FLOAT: 0.0}[init.data_type]
        assert np.all(np.abs(value - original[init.name]) <= np.abs(original[init.name]) * ulp + 1e-30)
    # the weights the plan stores low are low: fp16 conv weights on ascend910 whatever the mode
    assert names[stored["conv_w"]] != TensorProto.FLOAT


@pytest.mark.parametrize(
    "mode,soc,low", [("force_fp16", "ascend910", np.float16), ("allow_mix_precision_bf16", "ascend910b", None)]
)
def test_stored_weights_are_written_as_the_pass_rounded_them(
    mode: str, soc: str, low: type | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A weight the pass stored low as a blob is written from those bytes (not rounded a second time), and they are
    the user's fp32 weight rounded once to nearest even (numpy for fp16; for bf16 from the bits, here)."""
    import ascend_mp.frontend.export as export

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((64, 64)) * 3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64])],
        [onnx.numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rounded_again: list[str] = []
    real = export._retyped
    monkeypatch.setattr(export, "_retyped", lambda init, dtype: rounded_again.append(init.name) or real(init, dtype))
    exported = export_onnx(model, precision_rewritten(import_onnx(model), mode, soc=soc))
    (init,) = exported.graph.initializer
    assert rounded_again == []
    if low is not None:
        assert init.data_type == TensorProto.FLOAT16 and init.raw_data == w.astype(low).tobytes()
    else:  # bf16 by hand: round the fp32 bits to nearest even at bit 16
        bits = w.view(np.uint32).astype(np.uint64)
        expected = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        assert init.data_type == TensorProto.BFLOAT16 and init.raw_data == expected.tobytes()


def test_cube_fp16in_fp32out_is_emulated_in_fp32(models: dict[str, onnx.ModelProto]) -> None:
    """ONNX has no fp16-in fp32-out MatMul: the Gemm runs in fp32 on inputs rounded to fp16 by Casts."""
    model = models["mlp"]
    decided = precision_rewritten(import_onnx(model), "cube_fp16in_fp32out")
    exported = export_onnx(model, decided)
    mm = next(n for n in exported.graph.node if n.name == "mm1")
    producers = {o: n for n in exported.graph.node for o in n.output}
    up = producers[mm.input[0]]
    assert up.op_type == "Cast" and up.attribute[0].i == TensorProto.FLOAT
    assert producers[up.input[0]].op_type == "Cast" and producers[up.input[0]].attribute[0].i == TensorProto.FLOAT16


@pytest.mark.parametrize("dtype,op_type", [(d, o) for d, ops in sorted(ORT_CPU_KERNELS.items()) for o in sorted(ops)])
def test_ort_cpu_kernel_table(dtype: str, op_type: str, tmp_path: Path) -> None:
    """The ops the exporter leaves in fp16/bf16 are ones onnxruntime's CPU provider runs in that dtype itself
    (it adds no Cast of its own around them) and computes right."""
    import onnxruntime as ort

    low = {"f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}[dtype]
    n_in = 2 if op_type in ("Concat", "Max", "Min") else 1
    attrs = {"axis": 0} if op_type == "Concat" else {"to": low} if op_type == "Cast" else {}
    nodes = [
        helper.make_node("Cast", ["x"], ["b"], to=low),
        helper.make_node(op_type, ["b"] * n_in, ["y"], **attrs),
        helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.optimized_model_filepath = str(tmp_path / "seen.onnx")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    assert sum(n.op_type == "Cast" for n in onnx.load(tmp_path / "seen.onnx").graph.node) <= sum(
        n.op_type == "Cast" for n in nodes
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (z,) = session.run(None, {"x": x})
    expected = {"Transpose": x.T, "Flatten": x, "Concat": np.concatenate([x, x])}.get(op_type, x)
    assert np.array_equal(np.asarray(z).reshape(expected.shape), expected)


def test_ort_reproduces_fp16_overflow() -> None:
    """Emulated between Casts, the fp16 plan overflows in onnxruntime exactly where the interpreter does
    (left to onnxruntime's own fp16 handling, the chain would run in float32 and never overflow)."""
    model = deep_hot(batch=48)
    x = dataset(model, 48)["x"]
    decided = precision_rewritten(import_onnx(model), "allow_mix_precision")
    ours = Program.from_module(decided).run("main", x)[0]
    with np.errstate(all="ignore"):
        theirs = ort_run(export_onnx(model, decided), {"x": x})[0]
    broken = ~np.isfinite(ours).all(axis=1)
    assert 0 < broken.sum() < len(x)
    assert np.array_equal(broken, ~np.isfinite(theirs).all(axis=1))
    native = export_onnx(model, decided, target="native")
    mm = next(n for n in native.graph.node if n.name == "mm1")
    assert all(
        n.op_type != "Cast" or n.output[0] not in mm.input for n in native.graph.node
    )  # fp16 MatMul, no emulation


# --------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------


def test_cli_writes_the_model(
    tmp_path: Path, models: dict[str, onnx.ModelProto], capsys: pytest.CaptureFixture[str]
) -> None:
    src, out, mlir = tmp_path / "m.onnx", tmp_path / "out.onnx", tmp_path / "out.mlir"
    onnx.save(models["cnn"], src)
    code, _, err = run_main(
        opt_main, [str(src), "--precision_mode=allow_mix_precision", "--emit-onnx", str(out), "-o", str(mlir)], capsys
    )
    assert code == 0, err
    assert mlir.read_text().startswith("builtin.module") or "func.func" in mlir.read_text()
    x = dataset(models["cnn"], 8)["x"]
    decided = precision_rewritten(import_onnx(models["cnn"]), "allow_mix_precision")
    ours = Program.from_module(decided).run("main", x)
    reference = Program.from_module(import_onnx(models["cnn"]), reference=True).run("main", x)
    theirs = ort_run(out.read_bytes(), {"x": x})
    assert relative_errors(theirs, ours)[0] <= 2 * relative_errors(ours, reference)[0]


def test_cli_text_only_with_o(
    tmp_path: Path, models: dict[str, onnx.ModelProto], capsys: pytest.CaptureFixture[str]
) -> None:
    """With --emit-onnx the ONNX file is the output: no MLIR text on stdout; `-o FILE` still writes the text,
    the same text a run without --emit-onnx prints, and the ONNX bytes do not depend on it."""
    src = tmp_path / "m.onnx"
    onnx.save(models["mlp"], src)
    flags = [str(src), "--precision_mode=allow_mix_precision"]
    code, plain, err = run_main(opt_main, flags, capsys)
    assert code == 0, err
    code, out, err = run_main(opt_main, [*flags, "--emit-onnx", str(tmp_path / "a.onnx")], capsys)
    assert code == 0 and out == "" and err == ""
    code, out, err = run_main(
        opt_main, [*flags, "--emit-onnx", str(tmp_path / "b.onnx"), "-o", str(tmp_path / "b.mlir")], capsys
    )
    assert code == 0 and out == "", err
    assert "ascend.MatMul" in plain and (tmp_path / "b.mlir").read_text() == plain
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()


def test_cli_refuses_mlir_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n")
    code, _, err = run_main(opt_main, [str(src), "--emit-onnx", str(tmp_path / "o.onnx")], capsys)
    assert code == 2 and err.count("\n") == 1 and "--emit-onnx: the input must be an ONNX model" in err
    assert not (tmp_path / "o.onnx").exists()


def test_cli_bf16_needs_opset_13(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bf16 Casts do not exist before opset 13: one line, exit 1, nothing written."""
    src, out, mlir = tmp_path / "m.onnx", tmp_path / "out.onnx", tmp_path / "out.mlir"
    onnx.save(mlp(batch=4, opset=11), src)
    code, _, err = run_main(
        opt_main,
        [
            str(src),
            "--precision_mode=allow_mix_precision_bf16",
            "--soc_version=ascend910b",
            "--emit-onnx",
            str(out),
            "-o",
            str(mlir),
        ],
        capsys,
    )
    assert code == 1 and err.count("\n") == 1
    assert "opset 11" in err and "bf16" in err and str(src) in err
    assert not out.exists() and not mlir.exists()


def test_cli_missing_output_folder(
    tmp_path: Path, models: dict[str, onnx.ModelProto], capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "m.onnx"
    onnx.save(models["mlp"], src)
    code, _, err = run_main(
        opt_main, [str(src), "--precision_mode=force_fp16", "--emit-onnx", str(tmp_path / "no" / "o.onnx")], capsys
    )
    assert code == 1 and err.count("\n") == 1 and "no such directory" in err


def test_local_functions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model with local functions imports (they are inlined) but cannot be written back node for node."""
    fn = helper.make_function(
        "local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 17)]
    )
    graph = helper.make_graph(
        [helper.make_node("Twice", ["x"], ["y"], name="twice", domain="local")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(
        graph, functions=[fn], opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    )
    model.ir_version = 9
    src, out = tmp_path / "f.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    code, _, err = run_main(opt_main, [str(src), "--precision_mode=force_fp16", "--emit-onnx", str(out)], capsys)
    assert code == 1 and err.count("\n") == 1 and "local functions" in err and str(src) in err
    assert not out.exists()


def test_inputs_the_plan_does_not_mention() -> None:
    """Clip's bounds are read as constants by the importer (no ascend operand): they follow the node's dtype,
    which the schema ties to the output's (type T); Reshape's int64 shape is left alone."""
    rng = np.random.default_rng(0)
    inits = {
        "w": rng.normal(0, 1, (8, 8)).astype(np.float32),
        "lo": np.array(-0.5, np.float32),
        "hi": np.array(0.5, np.float32),
        "shape": np.array([1, 1, 4, 16], np.int64),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
        helper.make_node("Clip", ["m", "lo", "hi"], ["c"], name="clip"),
        helper.make_node("Reshape", ["c", "shape"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4, 16])],
        [onnx.numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    x = rng.normal(0, 1, (8, 8)).astype(np.float32)
    module = import_onnx(model)
    reference = Program.from_module(module, reference=True).run("main", x)
    decided = precision_rewritten(module, "force_fp16")
    ours = Program.from_module(decided).run("main", x)
    envelope = relative_errors(ours, reference)[0]
    for target in ("ort-cpu", "native"):
        exported = export_onnx(model, decided, target=target)
        assert relative_errors(ort_run(exported, {"x": x}), ours)[0] <= 2 * envelope
    clip = next(n for n in exported.graph.node if n.name == "clip")
    assert {i.name: i.data_type for i in exported.graph.initializer}["lo"] == TensorProto.FLOAT16 or clip.input[
        1
    ] != "lo"


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "onnx"


@pytest.mark.parametrize(
    "mode,soc",
    [
        ("allow_mix_precision", "ascend910"),
        ("cube_fp16in_fp32out", "ascend910"),
        ("allow_mix_precision_bf16", "ascend910b"),
    ],
)
@pytest.mark.parametrize("name", ["mlp.dynamo", "lenet.legacy"])
def test_torch_exports(name: str, mode: str, soc: str) -> None:
    """The committed torch exports (both exporters' styles: Constant nodes, Gemm, Conv, Tanh, pooling)."""
    path = FIXTURES / f"{name}.onnx"
    x = np.load(FIXTURES / f"{name.split('.')[0]}.npz")["input"]
    module = import_onnx(str(path))
    reference = Program.from_module(module, reference=True).run("main", x)
    decided = precision_rewritten(module, mode, soc=soc)
    ours = Program.from_module(decided).run("main", x)
    model = onnx.load(path)
    theirs = ort_run(export_onnx(str(path), decided), {model.graph.input[0].name: x})
    assert relative_errors(theirs, ours)[0] <= 2 * relative_errors(ours, reference)[0]


def test_native_target_emulates_what_onnx_lacks() -> None:
    """ONNX's Conv has no bf16: with target native it runs in float32 between Casts, the rest stays bf16."""
    from ascend_mp.frontend.export import emulated_nodes

    path = FIXTURES / "lenet.legacy.onnx"
    decided = precision_rewritten(import_onnx(str(path)), "allow_mix_precision_bf16", soc="ascend910b")
    exported = export_onnx(str(path), decided, target="native")  # passes the ONNX checker
    model = onnx.load(path)
    convs = {n.name for n in model.graph.node if n.op_type == "Conv"}
    emulated = set(emulated_nodes(model, decided, target="native"))
    assert convs and convs <= emulated
    assert any(n.op_type == "Tanh" and n.name not in emulated for n in exported.graph.node)
