"""An imported model with two inputs trains from an .npz holding each input by name plus `labels`.

References: onnxruntime runs the model (before and after training) on both inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx_models
import pytest
from test_onnx_training import run_cli

from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.train.data import Features, load_digits, load_npz
from ascend_mp.train.onnx_model import OnnxModel


def ort2(model: str | Path, pixels: np.ndarray, quadrants: np.ndarray) -> np.ndarray:
    import onnxruntime as rt

    session = rt.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return session.run(None, {"pixels": pixels, "quadrants": quadrants})[0]  # pyright: ignore[reportReturnType, reportIndexIssue]


def quadrants(x: np.ndarray) -> np.ndarray:
    """The mean of each 4x4 quadrant of 8x8 digits: the second input."""
    q = x.reshape(-1, 2, 4, 2, 4).mean(axis=(2, 4))
    return q.reshape(-1, 4).astype(np.float32)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("two_inputs")
    digits = load_digits()
    onnx.save(onnx_models.two_inputs(), d / "two.onnx")
    x, y = digits.x_train[:480], digits.y_train[:480]
    np.savez(d / "train.npz", pixels=x, quadrants=quadrants(x), labels=y)
    np.savez(d / "val.npz", pixels=digits.x_test, quadrants=quadrants(digits.x_test), labels=digits.y_test)
    np.savez(d / "short.npz", pixels=x, labels=y)
    np.savez(d / "ragged.npz", pixels=x, quadrants=quadrants(x)[:-1], labels=y)
    return {"onnx": d / "two.onnx", "train": d / "train.npz", "val": d / "val.npz", "short": d / "short.npz",
            "ragged": d / "ragged.npz", "dir": d}  # fmt: skip


def test_predict_takes_both_inputs_as_onnxruntime_does(files: dict[str, Path]) -> None:
    model = OnnxModel(files["onnx"], batch=8)
    assert model.input_names == ["pixels", "quadrants"] and model.input_shape == (
        ("pixels", (64,)),
        ("quadrants", (4,)),
    )
    r = np.random.default_rng(0)
    p, q = r.normal(size=(8, 64)).astype(np.float32), r.normal(size=(8, 4)).astype(np.float32)
    (logits,) = Program.from_module(model.forward_module(8)).run("predict", *model.init_params(), p, q)
    np.testing.assert_allclose(logits, ort2(files["onnx"], p, q), rtol=1e-5, atol=1e-5)


def test_load_npz_reads_named_inputs_as_features(files: dict[str, Path]) -> None:
    d = load_npz(str(files["train"]), input_names=["pixels", "quadrants"], val_split=0.25)
    assert isinstance(d.x_train, Features) and len(d.x_train) == 360 and len(d.x_test) == 120
    # the split keeps each example's two inputs together
    np.testing.assert_allclose(d.x_train.arrays["quadrants"], quadrants(d.x_train.arrays["pixels"]), atol=1e-6)


def test_cli_trains_a_two_input_model_and_saves_it(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    saved = files["dir"] / "trained.onnx"
    code, out, err = run_cli(capsys, "--model", str(files["onnx"]), "--data", str(files["train"]), "--val", str(files["val"]),
                             "--batch", "32", "--epochs", "4", "--lr", "0.1", "--save-onnx", str(saved), "-q")  # fmt: skip
    assert code == 0, err
    reported = float(out.split("test accuracy ")[1].split("%")[0])
    val = np.load(files["val"])
    acc = 100 * float((ort2(saved, val["pixels"], val["quadrants"]).argmax(1) == val["labels"]).mean())
    assert reported > 80 and abs(acc - reported) <= 1.0  # onnxruntime agrees with the run's mixed-precision eval


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("short", "expected arrays 'pixels', 'quadrants' and 'labels'; the file holds labels, pixels"),
        ("ragged", "the inputs hold different numbers of examples ({'pixels': 480, 'quadrants': 479})"),
    ],
)
def test_bad_multi_input_data_is_one_line(files: dict[str, Path], key: str, message: str) -> None:
    with pytest.raises(AscendError) as info:
        load_npz(str(files[key]), input_names=["pixels", "quadrants"])
    assert str(info.value) == f"{files[key]}: {message}"
