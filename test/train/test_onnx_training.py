"""Training imported ONNX models and one's own data: `OnnxModel`, `load_npz`, and ascend-train's
`--model FILE.onnx`, `--data`, `--val`, `--val-split`, `--output`, `--save-onnx`.

References are independent of the code under test: onnxruntime runs the saved models, numpy
computes batch statistics from onnxruntime's intermediate values, and float64 central
differences check the gradients of a whole imported model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_models
import pytest
from onnx import TensorProto, helper

from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.passes.autodiff import differentiate
from ascend_mp.tools.ascend_train import main as cli
from ascend_mp.train import TrainConfig, train
from ascend_mp.train.data import load_digits, load_npz
from ascend_mp.train.onnx_model import OnnxModel


def ort(model: onnx.ModelProto | str | Path, x: np.ndarray, outputs: list[str] | None = None) -> list[np.ndarray]:
    import onnxruntime as rt

    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    if outputs:
        model = onnx.ModelProto.FromString(model.SerializeToString())
        model.graph.output.extend(helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs)
    options = rt.SessionOptions()
    options.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = rt.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})  # pyright: ignore[reportReturnType]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("onnx_training")
    digits = load_digits(image=True)
    out = {
        "cnn": d / "cnn.onnx",
        "att": d / "att.onnx",
        "img": d / "img.npz",
        "img_val": d / "img_val.npz",
        "flat": d / "flat.npz",
    }
    onnx.save(onnx_models.cnn(), out["cnn"])
    onnx.save(onnx_models.attention_mlp(), out["att"])
    np.savez(out["img"], x=digits.x_train[:96], y=digits.y_train[:96])
    np.savez(out["img_val"], x=digits.x_test[:40], y=digits.y_test[:40])
    np.savez(out["flat"], x=digits.x_train[:96].reshape(96, 64), y=digits.y_train[:96])
    return out


def cfg(**kw: Any) -> TrainConfig:
    base: dict[str, Any] = {"precision_mode": None, "loss_scale": "none", "epochs": 1, "batch": 16, "lr": 0.05}
    return TrainConfig(**(base | kw))


# --------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------


def test_parameters_are_the_float_initializers(files: dict[str, Path]) -> None:
    model = OnnxModel(files["cnn"], batch=4)
    assert model.input_shape == (1, 8, 8) and model.num_classes == 10 and model.output == "logits"
    roles = {p.initializer: p.role for p in model.params}
    assert roles == {"conv_w": "weight", "conv_b": "weight", "bn_scale": "weight", "bn_bias": "weight", "bn_mean": "running_mean",
                     "bn_var": "running_var", "dw_w": "weight", "fc_w": "weight", "fc_b": "weight"}  # fmt: skip
    dw = next(p for p in model.params if p.initializer == "dw_w")
    assert dw.shape == (3, 3, 4, 1)  # trained in the depthwise layout, written back as ONNX's [C*M, 1, KH, KW]
    assert model.frozen == []
    text = str(model.forward_module(4))
    assert (
        "ascend.BatchNorm " in text and "ascend.BNInfer" in text
    )  # batch statistics in @forward, running ones in @predict


def test_gradient_of_an_imported_model_matches_finite_differences(files: dict[str, Path]) -> None:
    """@forward_grad of the whole imported CNN (conv, batch norm in training, depthwise conv,
    padded max pool, global average pool, Gemm, the appended loss) against float64 central
    differences at a few entries of every trained parameter."""
    model = OnnxModel(files["cnn"], batch=3)
    module = model.forward_module(3)
    differentiate(module)
    prog = Program.from_module(module, reference=True)
    rng = np.random.default_rng(0)
    params = [
        p.astype(np.float64) + (rng.normal(0, 0.1, p.shape) if q.role == "weight" else 0)
        for p, q in zip(model.init_params(), model.params)
    ]
    x = rng.normal(size=(3, 1, 8, 8))
    labels = np.eye(10)[[1, 4, 7]]
    _, *grads = prog.run("forward_grad", *params, x, labels)
    eps = 1e-6
    for i, (p, q) in enumerate(zip(params, model.params)):
        if q.role != "weight":
            assert not grads[i].any()  # running statistics get no gradient
            continue
        for k in rng.choice(p.size, size=min(3, p.size), replace=False):
            hi, lo = [a.copy() for a in params], [a.copy() for a in params]
            hi[i].reshape(-1)[k] += eps
            lo[i].reshape(-1)[k] -= eps
            fd = (prog.run("forward", *hi, x, labels)[0] - prog.run("forward", *lo, x, labels)[0]) / (2 * eps)
            assert grads[i].reshape(-1)[k] == pytest.approx(float(fd), rel=1e-5, abs=1e-8), f"{q.name}[{k}]"


@pytest.mark.parametrize("name", ["cnn", "att"])
def test_saved_model_runs_in_onnxruntime_as_the_interpreter_predicts(
    files: dict[str, Path], tmp_path: Path, name: str
) -> None:
    """Train under allow_mix_precision with dynamic scaling, write the ONNX model back: onnxruntime's
    logits equal the interpreter's fp32 @predict with the trained parameters within 1e-4."""
    model = OnnxModel(files[name], batch=16)
    digits = load_digits(image=name == "cnn")
    x_val = digits.x_test[:16] if name == "cnn" else digits.x_test[:16].reshape(16, 64)
    data = load_npz(str(files["img" if name == "cnn" else "flat"]), val_split=0.25, num_classes=10)
    if name == "att":
        data = type(data)(data.x_train.reshape(-1, 64), data.y_train, data.x_test.reshape(-1, 64), data.y_test, 10)
    config = cfg(precision_mode="allow_mix_precision", loss_scale="dynamic", init_scale=1024.0, epochs=2)
    result = train(config, progress=False, model=model, data=data)  # pyright: ignore[reportArgumentType]
    assert result.steps == 2 * (len(data.x_train) // 16)
    before = model.init_params()
    assert any(not np.array_equal(a, b) for a, b in zip(before, result.params))
    out = tmp_path / f"{name}.onnx"
    model.save_onnx(result.params, out)
    ours = Program.from_module(model.forward_module(16)).run("predict", *result.params, x_val)[0]
    theirs = ort(out, x_val)[0]
    np.testing.assert_allclose(theirs, ours, rtol=1e-4, atol=1e-4)
    assert not np.allclose(ort(files[name], x_val)[0], theirs, atol=1e-3)  # the saved model is the trained one
    saved = onnx.load(str(out))
    assert [t.name for t in saved.graph.initializer] == [t.name for t in onnx.load(str(files[name])).graph.initializer]
    assert [n.op_type for n in saved.graph.node] == [n.op_type for n in onnx.load(str(files[name])).graph.node]


def test_batch_norm_updates_its_running_statistics(files: dict[str, Path], tmp_path: Path) -> None:
    """One step on one batch of 16: running = 0.8 (the node's momentum) * initial + 0.2 * batch
    statistics of the BatchNormalization input (unbiased variance), which onnxruntime computes
    from the saved model's updated weights."""
    model = OnnxModel(files["cnn"], batch=16)
    data = load_npz(str(files["img"]), val=str(files["img_val"]), num_classes=10)
    data = type(data)(data.x_train[:16], data.y_train[:16], data.x_test, data.y_test, 10)
    result = train(cfg(), progress=False, model=model, data=data)  # pyright: ignore[reportArgumentType]
    assert result.steps == 1
    out = tmp_path / "one_step.onnx"
    model.save_onnx(result.params, out)
    c1 = ort(out, data.x_train, outputs=["c1"])[-1].astype(np.float64)
    saved = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(str(out)).graph.initializer}
    np.testing.assert_allclose(saved["bn_mean"], 0.2 * c1.mean(axis=(0, 2, 3)), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(saved["bn_var"], 0.8 + 0.2 * c1.var(axis=(0, 2, 3), ddof=1), rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


def test_load_npz_splits_and_reads_named_inputs(tmp_path: Path) -> None:
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    y = np.arange(20) % 3
    np.savez(tmp_path / "a.npz", x=x, y=y)
    d = load_npz(str(tmp_path / "a.npz"), val_split=0.25, seed=1)
    assert (len(d.x_train), len(d.x_test), d.num_classes) == (15, 5, 3)
    assert sorted(np.concatenate([d.x_train[:, 0], d.x_test[:, 0]]).tolist()) == x[:, 0].tolist()
    np.testing.assert_array_equal(d.y_train, d.x_train[:, 0].astype(int) // 2 % 3)  # labels stay with their examples
    assert len(load_npz(str(tmp_path / "a.npz")).x_test) == 2  # 0.1 by default
    np.savez(tmp_path / "b.npz", image=x, labels=y)
    assert (
        load_npz(str(tmp_path / "b.npz"), val=str(tmp_path / "a.npz"), input_names=["image"], num_classes=4).num_classes
        == 4
    )


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"a": np.zeros((4, 2))}, "expected arrays 'x' and 'y'; the file holds a"),
        (
            {"x": np.zeros((4, 2)), "y": np.zeros(4)},
            "'y' must hold one integer class per example (shape (4,)), got float64 of shape (4,)",
        ),
        ({"x": np.zeros((4, 2)), "y": np.zeros(3, int)}, "'y' must hold one integer class per example (shape (4,))"),
        ({"x": np.zeros(4), "y": np.zeros(4, int)}, "'x' must be a numeric array of examples (rank >= 2)"),
        ({"x": np.full((4, 2), np.nan), "y": np.zeros(4, int)}, "'x' holds non-finite values"),
        ({"x": np.zeros((4, 2)), "y": -np.ones(4, int)}, "'y' holds a negative class (-1)"),
    ],
)
def test_bad_data_files_are_one_line_errors(tmp_path: Path, arrays: dict[str, np.ndarray], message: str) -> None:
    np.savez(tmp_path / "d.npz", **arrays)  # pyright: ignore[reportArgumentType]
    with pytest.raises(AscendError) as info:
        load_npz(str(tmp_path / "d.npz"))
    assert str(info.value).startswith(f"{tmp_path / 'd.npz'}: {message}") and "\n" not in str(info.value)


# --------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        cli(list(args))
        code = 0
    except SystemExit as e:
        code = int(e.code or 0) if not isinstance(e.code, str) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_trains_an_onnx_model_and_saves_it(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "trained.onnx"
    code, out, err = run_cli(capsys, "--model", str(files["cnn"]), "--data", str(files["img"]), "--val", str(files["img_val"]),
                             "--batch", "16", "--epochs", "1", "--precision_mode", "allow_mix_precision", "--save-onnx", str(saved), "-q")  # fmt: skip
    assert code == 0, err
    assert re.search(r"model cnn, allow_mix_precision \(\d+ of \d+ ops in fp16\)", out)
    assert f"wrote {saved}" in out and saved.is_file()
    assert ort(saved, np.zeros((2, 1, 8, 8), np.float32))[0].shape == (2, 10)


def test_cli_trains_builder_models_on_npz_data(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "--model", "mlp", "--data", str(files["img"]), "--batch", "16", "--epochs", "1", "-q"
    )  # images, flattened
    assert code == 0, err
    assert "model mlp, " in out
    code, out, err = run_cli(
        capsys,
        "--model",
        "cnn",
        "--data",
        str(files["img"]),
        "--val-split",
        "0.2",
        "--batch",
        "16",
        "--epochs",
        "1",
        "-q",
    )
    assert code == 0, err
    assert "model cnn, " in out


@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (
            ["--model", "net.pb"],
            "argument --model: expected mlp, cnn or an ONNX model file (.onnx, or a file that reads as one), got 'net.pb'",
            2,
        ),
        (["--model", "{cnn}"], "--model {cnn} needs --data NPZ (its training data)", 2),
        (["--val-split", "0.2"], "--val-split needs --data", 2),
        (
            ["--data", "{img}", "--val", "{img_val}", "--val-split", "0.2"],
            "--val and --val-split exclude each other",
            2,
        ),
        (["--val-split", "1.5", "--data", "{img}"], "argument --val-split: must be in (0, 1), got 1.5", 2),
        (["--save-onnx", "out.onnx"], "--save-onnx needs --model FILE.onnx", 2),
        (["--output", "logits"], "--output needs --model FILE.onnx", 2),
        (
            ["--model", "{cnn}", "--data", "{img}", "--output", "nope"],
            "--output: 'nope' is not an output of {cnn} (outputs: logits, probs)",
            1,
        ),
        (
            ["--model", "{cnn}", "--data", "{flat}"],
            "{cnn}: input 'image' takes examples of shape (1, 8, 8), the data has (64,)",
            1,
        ),
        (["--model", "{missing}", "--data", "{img}"], "{missing}: no such file", 1),
        (
            ["--model", "cnn", "--data", "{flat}"],
            "--model cnn takes (C, H, W) examples with H, W >= 2, the data has (64,)",
            1,
        ),
        (["--data", "{missing}"], "{missing}: no such file", 1),
    ],
)
def test_cli_errors_are_one_line(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
    status: int,
) -> None:
    names = {k: str(v) for k, v in files.items()} | {"missing": str(tmp_path / "missing.onnx")}
    code, _, err = run_cli(capsys, *(a.format(**names) for a in args), "--epochs", "1", "-q")
    assert code == status
    assert err == f"ascend-train: error: {message.format(**names)}\n"


def test_labels_beyond_the_models_classes_are_refused(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.savez(tmp_path / "many.npz", x=np.zeros((20, 1, 8, 8), np.float32), y=np.arange(20))
    code, _, err = run_cli(capsys, "--model", str(files["cnn"]), "--data", str(tmp_path / "many.npz"), "-q")
    assert (
        code == 1
        and err
        == f"ascend-train: error: {tmp_path / 'many.npz'}: the labels go up to class 19, {files['cnn']} gives 10 classes\n"
    )


def test_an_embedding_model_trains_on_token_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Integer inputs stay integers; the embedding (GatherV2D) learns through its scatter-add
    gradient: the class is which third of the vocabulary the tokens come from, learnt to 100%."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 120)
    ids = (4 * y[:, None] + rng.integers(0, 4, (120, 5))).astype(np.int64)
    np.savez(tmp_path / "tokens.npz", ids=ids, labels=y)
    onnx.save(onnx_models.embedding_bag(), tmp_path / "bag.onnx")
    saved = tmp_path / "bag_trained.onnx"
    code, out, err = run_cli(capsys, "--model", str(tmp_path / "bag.onnx"), "--data", str(tmp_path / "tokens.npz"), "--batch", "12",
                             "--epochs", "8", "--optimizer", "adam", "--lr", "0.05", "--precision_mode", "none", "--loss-scale", "none",
                             "--save-onnx", str(saved), "-q")  # fmt: skip
    assert code == 0, err
    assert "test accuracy 100.00%" in out
    assert (ort(saved, ids)[0].argmax(1) == y).mean() == 1.0
    before = onnx.numpy_helper.to_array(onnx.load(str(tmp_path / "bag.onnx")).graph.initializer[0])
    after = onnx.numpy_helper.to_array(onnx.load(str(saved)).graph.initializer[0])
    assert not np.allclose(before, after)
    np.savez(tmp_path / "floats.npz", ids=ids.astype(np.float32), labels=y)
    code, _, err = run_cli(capsys, "--model", str(tmp_path / "bag.onnx"), "--data", str(tmp_path / "floats.npz"), "-q")
    assert (
        code == 1
        and err
        == f"ascend-train: error: {tmp_path / 'floats.npz'}: {tmp_path / 'bag.onnx'} takes i64 inputs, the data holds float32\n"
    )


def test_torch_style_initializer_names_train(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The legacy torch exporter names initializers `onnx::Conv_40`: not valid MLIR names, so the trainer's
    parameter arguments get sanitized names (this was a traceback); the saved model keeps the ONNX names."""
    model = onnx.load(str(files["cnn"]))
    renames = {init.name: f"onnx::W_{i}" for i, init in enumerate(model.graph.initializer)}
    for init in model.graph.initializer:
        init.name = renames[init.name]
    for node in model.graph.node:
        node.input[:] = [renames.get(n, n) for n in node.input]
    path, saved = tmp_path / "torch_names.onnx", tmp_path / "trained.onnx"
    onnx.save(model, path)
    code, out, err = run_cli(capsys, "--model", str(path), "--data", str(files["img"]), "--val", str(files["img_val"]),
                             "--batch", "16", "--epochs", "1", "--save-onnx", str(saved), "-q")  # fmt: skip
    assert code == 0, err
    assert {i.name for i in onnx.load(str(saved)).graph.initializer} >= set(renames.values())
