"""A loss-scaled training step (the digits MLP and CNN under allow_mix_precision, dynamic loss scaling, momentum)
lowered and compiled by IREE follows the interpreter's trajectory: the same overflow steps (the float
status ops lower to an explicit flag), the same loss scales, and losses within float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest

from ascend_mp.backend.iree import IreeProgram
from ascend_mp.passes.loss_scale import initial_state
from ascend_mp.train.data import load_digits
from ascend_mp.train.trainer import TrainConfig, compile_training

STEPS = 10
BATCH = 32


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_loss_scaled_step_follows_the_interpreter(model: str) -> None:
    # a huge initial scale: the first steps overflow in fp16 and the dynamic manager backs off
    cfg = TrainConfig(
        model=model, precision_mode="allow_mix_precision", loss_scale="dynamic", batch=BATCH, init_scale=2.0**20
    )
    compiled = compile_training(cfg)
    program = IreeProgram.from_module(compiled.module)
    data = load_digits(image=model == "cnn")
    labels = data.onehot(data.y_train)
    ours = initial_state(compiled.step_fn, compiled.model.init_params(0))
    theirs = initial_state(compiled.step_fn, compiled.model.init_params(0))
    overflows = []
    for step in range(STEPS):
        x, y = data.x_train[step * BATCH : (step + 1) * BATCH], labels[step * BATCH : (step + 1) * BATCH]
        loss_a, over_a = ours.update(
            program.run("train_step", *ours.args(), x, y, ours.loss_scale, ours.good_steps, ours.step)
        )
        loss_b, over_b = theirs.update(
            compiled.program.run("train_step", *theirs.args(), x, y, theirs.loss_scale, theirs.good_steps, theirs.step)
        )
        assert over_a == over_b, f"step {step}: overflow {over_a} vs the interpreter's {over_b}"
        assert float(ours.loss_scale) == float(theirs.loss_scale)
        np.testing.assert_allclose(float(loss_a), float(loss_b), rtol=1e-5)
        overflows.append(over_a)
    assert any(overflows) and not all(overflows)  # both paths of the step ran
    for p, q in zip(ours.params, theirs.params):
        np.testing.assert_allclose(p, q, rtol=1e-3, atol=1e-5)
