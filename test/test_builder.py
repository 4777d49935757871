"""ascend_mp.builder: models emit verified ascend IR of the right shapes; initialisation; errors; examples."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_mp.builder import (
    AvgPool,
    Conv2D,
    Dense,
    Flatten,
    Gelu,
    LayerNorm,
    LeakyRelu,
    MaxPool,
    Relu,
    Sequential,
    Sigmoid,
    Tanh,
    mlp,
    small_cnn,
)
from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.ir import parse_module, print_module, verify

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def signature(module, name: str) -> tuple[list[str], list[str]]:
    fn = next(op for op in module.ops if op.sym_name.data == name)
    return [str(t) for t in fn.function_type.inputs.data], [str(t) for t in fn.function_type.outputs.data]


def test_mlp_forward_and_predict() -> None:
    module = mlp().forward_module(batch=16)
    verify(module)
    ins, outs = signature(module, "forward")
    assert ins == [
        "tensor<64x128xf32>", "tensor<128xf32>", "tensor<128x10xf32>", "tensor<10xf32>",
        "tensor<16x64xf32>", "tensor<16x10xf32>",
    ]  # fmt: skip
    assert outs == ["tensor<f32>"]
    assert signature(module, "predict") == (ins[:-1], ["tensor<16x10xf32>"])
    text = print_module(module)
    for name in (
        "dense_0/MatMulV2",
        "dense_0/BiasAdd",
        "relu_0",
        "loss/SoftmaxCrossEntropyWithLogits",
        "loss/ReduceMean",
    ):
        assert f'name = "{name}"' in text
    assert parse_module(text) is not None  # round trip


def test_forward_computes_mean_cross_entropy() -> None:
    model = mlp((4, 3))
    module = model.forward_module(batch=5)
    w, b = model.init_params(0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[[0, 1, 2, 1, 0]]
    prog = Program.from_module(module)
    (loss,) = prog.run("forward", w, b, x, labels)
    (logits,) = prog.run("predict", w, b, x)
    z = x @ w + b
    logp = z - np.log(np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True)) - z.max(1, keepdims=True)
    np.testing.assert_allclose(logits, z, rtol=1e-5)
    np.testing.assert_allclose(loss, -(labels * logp).sum(1).mean(), rtol=1e-5)


def test_cnn_shapes_and_ops() -> None:
    model = small_cnn()
    module = model.forward_module(batch=4)
    verify(module)
    text = print_module(module)
    assert "ascend.Conv2D" in text and "ascend.MaxPool" in text and "ascend.Reshape" in text
    assert [p.shape for p in model.params] == [(8, 1, 3, 3), (8,), (128, 10), (10,)]
    assert "total params 1370" in model.summary()


def test_every_layer_kind_builds() -> None:
    model = Sequential(
        [
            Conv2D(2, 4, (3, 3), stride=1, pad=1), LeakyRelu(0.1), AvgPool(2), Conv2D(4, 4, 2, stride=2),
            Sigmoid(), MaxPool(1), Flatten(), Dense(16, 6), LayerNorm(6), Tanh(), Dense(6, 5, bias=False), Gelu(), Dense(5, 3),
        ],
        input_shape=(2, 8, 8),
    )  # fmt: skip
    module = model.forward_module(batch=2)
    verify(module)
    text = print_module(module)
    for op in ("LeakyRelu", "AvgPool", "Sigmoid", "LayerNorm", "Tanh", "Gelu"):
        assert f"ascend.{op} " in text
    assert "negative_slope = 1.000000e-01" in text
    params = model.init_params(3)
    assert [p.shape for p in params] == [p.shape for p in model.params]
    assert all(p.dtype == np.float32 for p in params)


def test_init_is_seeded_he_or_glorot() -> None:
    model = Sequential([Dense(200, 300), Relu(), Dense(300, 100)])
    a, b = model.init_params(7), model.init_params(7)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], model.init_params(8)[0])
    he, zeros, glorot, _ = a
    assert abs(he.std() - np.sqrt(2 / 200)) < 0.005  # He-normal before ReLU
    assert np.all(zeros == 0)
    limit = np.sqrt(6 / 400)
    assert np.abs(glorot).max() <= limit and abs(glorot.std() - limit / np.sqrt(3)) < 0.005  # Glorot-uniform


def test_fp16_model_keeps_the_loss_in_fp32() -> None:
    module = mlp((4, 3)).forward_module(batch=2, dtype="f16")
    verify(module)
    text = print_module(module)
    assert "tensor<4x3xf16>" in text
    assert "ascend.Cast" in text and signature(module, "forward")[1] == ["tensor<f32>"]
    assert "(tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)" in text


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Sequential([Dense(4, 3), Dense(5, 2)]), r"Dense\(5, 2\) expects inputs of shape \(5,\), got \(3,\)"),
        (lambda: Sequential([Conv2D(1, 2, 3)]), "give input_shape= when the first layer is not Dense"),
        (lambda: Sequential([Conv2D(1, 2, 3)], input_shape=(1, 8, 8)), "the last layer must give logits"),
        (lambda: Sequential([Conv2D(3, 2, 3)], input_shape=(1, 8, 8)), r"expects inputs of shape \(3, H, W\)"),
        (lambda: Sequential([Conv2D(1, 2, 9)], input_shape=(1, 8, 8)), "does not fit"),
        (lambda: Sequential([]), "at least one layer"),
        (lambda: mlp().forward_module(0), "batch must be positive"),
        (lambda: mlp().forward_module(4, dtype="f64"), "dtype must be f32, f16 or bf16"),
        (lambda: Sequential([Dense(4, 3)], num_classes=10), "gives 3 logits, expected 10"),
    ],
)
def test_errors(make, message: str) -> None:
    with pytest.raises(AscendError, match=message):
        make()


@pytest.mark.parametrize("example", ["mlp.py", "cnn.py"])
def test_examples_print_their_ir(example: str) -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / example), "--batch", "4", "--train"], capture_output=True, text=True, check=True
    ).stdout
    module = parse_module(out)
    names = [op.sym_name.data for op in module.ops]
    assert names == ["forward", "forward_grad", "train_step", "predict"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Sequential([LayerNorm(5), Dense(4, 2)]).forward_module(1),
            r"Dense\(4, 2\) expects inputs of shape \(4,\), got \(5,\)",
        ),
        (lambda: Sequential([Dense(4, 3), LayerNorm(2)]), r"LayerNorm\(2\) expects inputs of shape \(2,\), got \(3,\)"),
        (
            lambda: Sequential([MaxPool(2), Flatten(), Dense(4, 2)], input_shape=(16,)),
            r"MaxPool expects \(C, H, W\) inputs, got \(16,\)",
        ),
        (
            lambda: Sequential([AvgPool(3), Flatten(), Dense(4, 2)], input_shape=(1, 2, 2)),
            r"AvgPool window 3 does not fit an input of shape \(1, 2, 2\)",
        ),
    ],
)
def test_layer_shape_errors(make, message: str) -> None:
    with pytest.raises(AscendError, match=message):
        make()


def test_passes_do_not_import_the_builder() -> None:
    """The IR emitter lives in ascend_mp.emit (with the IR helpers); passes/ must not depend on
    the user-facing model builder."""
    from pathlib import Path

    passes = Path(__file__).resolve().parent.parent / "passes"
    offenders = [p.name for p in passes.glob("*.py") if "ascend_mp.builder" in p.read_text()]
    assert offenders == []
    import ascend_mp.builder as builder
    import ascend_mp.emit as emit

    assert builder.Emitter is emit.Emitter and builder.tensor is emit.tensor  # still importable from the builder


def test_emitter_keep_dtype_marks_every_op() -> None:
    from ascend_mp.dialects import ascend as A
    from ascend_mp.emit import Emitter, is_kept, new_function, tensor

    fn, block = new_function("f", [tensor((2,))], ["x"])
    e = Emitter(block, keep_dtype=True)
    y = e.one(A.ReluOp, block.args[0], name="r")
    z = e.mul(y, e.const(2.0))
    assert all(is_kept(op) for op in block.ops) and len(list(block.ops)) == 3
    plain = Emitter(block)
    plain.neg(z)
    assert not is_kept(block.last_op)  # pyright: ignore[reportArgumentType]
