"""Torch-exported models train through `ascend-train --model x.onnx --data d.npz`: a ResNet-style
CNN and an `nn.TransformerEncoderLayer` classifier, exported by torch's TorchScript exporter with
`models/train_exports.py` and committed in test/train/data (torch is not needed here).

References: onnxruntime runs the original and the saved models. The accuracy over 3 seeds (fp32
vs mixed) is `make bench --only train-torch` (benchmarks/train_archs.py), too slow for here."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from ascend_mp.interpreter import Program
from ascend_mp.tools.ascend_train import main as cli
from ascend_mp.train.data import load_digits
from ascend_mp.train.onnx_model import OnnxModel

DATA = Path(__file__).resolve().parent / "data"
MODELS = {"cnn": ("torch_resnet_cnn.onnx", (1, 8, 8)), "transformer": ("torch_transformer.onnx", (8, 8))}
"""name -> (file, example shape: a digit as a 1x8x8 image, or its 8 rows as 8 tokens)."""


def ort(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as rt

    session = rt.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]  # pyright: ignore[reportReturnType]


def digits(shape: tuple[int, ...], n_train: int, n_val: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    d = load_digits(image=True)
    return (
        d.x_train[:n_train].reshape(n_train, *shape).astype(np.float32),
        d.y_train[:n_train],
        d.x_test[:n_val].reshape(n_val, *shape).astype(np.float32),
        d.y_test[:n_val],
    )


@pytest.mark.parametrize("name", list(MODELS))
def test_torch_export_predicts_as_onnxruntime(name: str) -> None:
    """The exports as they are (BatchNorm with running statistics, Dropout off): the interpreter's
    fp32 @predict equals onnxruntime's logits."""
    file, shape = MODELS[name]
    model = OnnxModel(DATA / file, batch=8, example_shape=shape)
    x = digits(shape, 8, 1)[0]
    (ours,) = Program.from_module(model.forward_module(8)).run("predict", *model.init_params(), x)
    np.testing.assert_allclose(ours, ort(DATA / file, x), rtol=1e-4, atol=1e-4)  # pyright: ignore[reportArgumentType]
    ops = {n.op_type for n in onnx.load(str(DATA / file)).graph.node}
    assert ops >= (
        {"Conv", "BatchNormalization", "Add"} if name == "cnn" else {"LayerNormalization", "Softmax", "Dropout"}
    )


@pytest.mark.parametrize("name", list(MODELS))
def test_cli_trains_a_torch_export_and_saves_it(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ascend-train --model x.onnx --data d.npz` under allow_mix_precision with dynamic scaling
    (2 steps of 32): the saved model runs in onnxruntime as the interpreter's fp32 @predict with
    the trained weights, which differ from the exported ones."""
    file, shape = MODELS[name]
    x, y, x_val, y_val = digits(shape, 64, 32)
    data, val, saved = tmp_path / "train.npz", tmp_path / "val.npz", tmp_path / "trained.onnx"
    np.savez(data, x=x, y=y)
    np.savez(val, x=x_val, y=y_val)
    try:
        cli(["--model", str(DATA / file), "--data", str(data), "--val", str(val), "--epochs", "1",
             "--precision_mode", "allow_mix_precision", "--save-onnx", str(saved), "-q"])  # fmt: skip
    except SystemExit as e:
        pytest.fail(f"exit status {e.code}: {capsys.readouterr().err}")
    out = capsys.readouterr().out
    assert re.search(r"allow_mix_precision \(\d+ of \d+ ops in fp16\)", out)
    assert "steps 2 (0 skipped on overflow)" in out
    trained = OnnxModel(saved, batch=32, example_shape=shape)
    (ours,) = Program.from_module(trained.forward_module(32)).run("predict", *trained.init_params(), x_val)
    theirs = ort(saved, x_val)
    np.testing.assert_allclose(theirs, ours, rtol=1e-4, atol=1e-4)  # pyright: ignore[reportArgumentType]
    assert not np.allclose(ort(DATA / file, x_val), theirs, atol=1e-3)  # the saved weights are the trained ones
    reported = float(re.findall(r"test accuracy ([\d.]+)%", out)[-1])
    assert abs(reported - 100 * np.mean(theirs.argmax(1) == y_val)) <= 100 / 32 + 1e-9  # mixed vs fp32: one flip
