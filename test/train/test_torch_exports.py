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


def _bn_model(path: Path, bn_inputs: list[list[str]], identities: dict[str, str] | None = None) -> None:
    """x [N, 1, 8, 8] -> Conv -> one BatchNormalization per entry of `bn_inputs` (scale, bias, mean,
    variance: initializers of ones, or zeros for names starting with zeros, b or m; `identities`
    maps a name to the initializer an Identity node copies) -> GlobalAveragePool -> 2 logits."""
    from onnx import TensorProto, helper, numpy_helper

    identities = identities or {}
    names = {identities.get(n, n) for inputs in bn_inputs for n in inputs}
    inits = [numpy_helper.from_array(np.full(2, 0.0 if n.startswith(("zeros", "b", "m")) else 1.0, np.float32), n) for n in sorted(names)]  # fmt: skip
    inits.append(numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w"))
    nodes = [helper.make_node("Identity", [src], [n]) for n, src in identities.items()]
    nodes.append(helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]))
    h = "c"
    for k, inputs in enumerate(bn_inputs):
        nodes.append(helper.make_node("BatchNormalization", [h, *inputs], [f"bn{k}_y"], name=f"bn{k}"))
        h = f"bn{k}_y"
    nodes += [helper.make_node("GlobalAveragePool", [h], ["g"]), helper.make_node("Flatten", ["g"], ["logits"])]
    graph = helper.make_graph(
        nodes,
        "merged",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 2])],
        inits,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_batch_norm_statistics_through_identity_warn(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The TorchScript exporter in eval mode gives BatchNorms their merged statistics through Identity
    nodes: those BatchNorms cannot train their statistics, which a warning names."""
    path = tmp_path / "identity.onnx"
    _bn_model(path, [["s", "b", "m", "v"]], {"m": "zeros", "v": "ones"})
    with caplog.at_level("WARNING", logger="ascend_mp.train"):
        model = OnnxModel(path, batch=4)
    assert model.batch_norms == []
    (warning,) = [r.getMessage() for r in caplog.records if "BatchNormalization" in r.getMessage()]
    assert warning.startswith(f"{path}: 1 BatchNormalization nodes keep fixed statistics in training")
    assert warning.endswith(": bn0")


@pytest.mark.parametrize(
    ("bn_inputs", "message"),
    [
        (
            [["ones", "zeros", "zeros", "ones"]],  # an eval-mode export: scale and running variance merged
            "initializer 'ones' is the running variance of BatchNormalization 'bn0' and an input of 'bn0'",
        ),
        (
            [["s0", "b0", "m", "v"], ["s1", "b1", "m", "v"]],  # two BatchNorms sharing their statistics
            "initializer 'm' is the running mean of BatchNormalization 'bn0' and the running mean of BatchNormalization 'bn1'",
        ),
    ],
    ids=["scale_is_variance", "two_batch_norms"],
)
def test_merged_batch_norm_statistics_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bn_inputs: list[list[str]], message: str
) -> None:
    """An initializer that is a running statistic and anything else would be overwritten by the
    statistics update after each step (it trained to chance): one error line, exit status 1."""
    path, data = tmp_path / "merged.onnx", tmp_path / "d.npz"
    _bn_model(path, bn_inputs)
    np.savez(data, x=np.zeros((40, 1, 8, 8), np.float32), y=np.arange(40) % 2)
    with pytest.raises(SystemExit) as exit_:
        cli(["--model", str(path), "--data", str(data), "--epochs", "1", "-q"])
    err = capsys.readouterr().err
    assert exit_.value.code == 1
    assert err.startswith(f"ascend-train: error: {path}: {message}: training would update one with the other")
    assert err.count("\n") == 1
