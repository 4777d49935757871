"""Dropout in an imported model: on in training (a fresh inverted-dropout mask per step, drawn from
the run's seed), off in `@predict`; the gradient flows through the mask.

References: onnxruntime (inference mode) for `@predict`, float64 central differences of `@forward`
with a fixed mask for the gradient, binomial bounds for the mask statistics."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import onnx_models
import pytest
from test_onnx_training import ort

from ascend_mp.interpreter import Program
from ascend_mp.passes.autodiff import differentiate
from ascend_mp.train import TrainConfig, compile_training, train
from ascend_mp.train.data import Dataset, load_digits
from ascend_mp.train.onnx_model import OnnxModel


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("dropout") / "drop.onnx"
    onnx.save(onnx_models.dropout_mlp(ratio=0.25), p)
    return p


def test_masks_keep_the_right_fraction_scaled_and_are_seeded(path: Path) -> None:
    model = OnnxModel(path, batch=64)
    assert [(s, k) for _, s, k in model.dropouts] == [((64, 16), 0.75)]
    assert model.frozen == [] and [p.initializer for p in model.params] == ["w1", "b1", "w2", "b2"]
    x = np.zeros((64, 64), np.float32)
    masks = [model.step_inputs(x, np.random.default_rng(s))[1] for s in (0, 0, 1)]
    np.testing.assert_array_equal(masks[0], masks[1])
    assert not np.array_equal(masks[0], masks[2])
    m = np.concatenate([model.step_inputs(x, np.random.default_rng(s))[1].reshape(-1) for s in range(10)])
    assert set(np.unique(m).tolist()) == {0.0, np.float32(1 / 0.75)}
    n, kept = m.size, float((m > 0).mean())
    assert abs(kept - 0.75) < 4 * math.sqrt(0.75 * 0.25 / n)  # 4 sigma of a binomial fraction
    assert abs(float(m.mean()) - 1.0) < 4 * math.sqrt(0.25 / 0.75 / n)  # inverted dropout keeps the mean


def test_predict_has_no_dropout_and_matches_onnxruntime(path: Path) -> None:
    model = OnnxModel(path, batch=8)
    x = np.random.default_rng(0).normal(size=(8, 64)).astype(np.float32)
    prog = Program.from_module(model.forward_module(8))
    (logits,) = prog.run("predict", *model.init_params(), x)
    np.testing.assert_allclose(logits, ort(path, x)[0], rtol=1e-5, atol=1e-5)


def test_gradient_through_a_fixed_mask_matches_finite_differences(path: Path) -> None:
    model = OnnxModel(path, batch=4)
    module = model.forward_module(4)
    differentiate(module, wrt=model.wrt)
    prog = Program.from_module(module, reference=True)
    rng = np.random.default_rng(1)
    params = [p.astype(np.float64) + rng.normal(0, 0.1, p.shape) for p in model.init_params()]
    x, mask = model.step_inputs(rng.normal(size=(4, 64)), rng)
    mask = mask.astype(np.float64)
    assert 0 < (mask == 0).sum() < mask.size
    labels = np.eye(10)[[1, 4, 7, 2]]
    loss, *grads = prog.run("forward_grad", *params, x, mask, labels)
    (unmasked,) = prog.run("forward", *params, x, np.ones_like(mask), labels)
    assert loss != pytest.approx(unmasked)  # the mask is applied
    eps = 1e-6
    for i, p in enumerate(params):
        for k in rng.choice(p.size, size=min(4, p.size), replace=False):
            hi, lo = [a.copy() for a in params], [a.copy() for a in params]
            hi[i].reshape(-1)[k] += eps
            lo[i].reshape(-1)[k] -= eps
            fd = (prog.run("forward", *hi, x, mask, labels)[0] - prog.run("forward", *lo, x, mask, labels)[0]) / (
                2 * eps
            )
            assert grads[i].reshape(-1)[k] == pytest.approx(float(fd), rel=1e-5, abs=1e-9)


def test_training_with_dropout_is_deterministic_by_seed_and_learns(path: Path) -> None:
    digits = load_digits()
    data = Dataset(digits.x_train[:256], digits.y_train[:256], digits.x_test, digits.y_test)
    cfg = TrainConfig(precision_mode="allow_mix_precision", loss_scale="dynamic", epochs=3, batch=32, lr=0.1)
    step = compile_training(cfg, OnnxModel(path, batch=32)).step_fn  # pyright: ignore[reportArgumentType]  # an OnnxModel stands in for a Sequential
    assert [a.name_hint for a in step.args].count("dropout0_mask") == 1  # the step takes the mask
    runs = [train(cfg, progress=False, data=data, model=OnnxModel(path, batch=32)) for _ in range(2)]  # pyright: ignore[reportArgumentType]  # an OnnxModel stands in for a Sequential
    assert runs[0].history["steps"]["loss"] == runs[1].history["steps"]["loss"]
    assert runs[0].test_accuracy > 0.7
    other = train(
        TrainConfig(precision_mode="allow_mix_precision", loss_scale="dynamic", epochs=3, batch=32, lr=0.1, seed=1),
        progress=False,
        data=data,
        model=OnnxModel(path, batch=32),  # pyright: ignore[reportArgumentType]  # as above
    )
    assert other.history["steps"]["loss"] != runs[0].history["steps"]["loss"]
