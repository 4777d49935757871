"""A loss-scaled training step (the digits MLP and CNN under allow_mix_precision, dynamic loss scaling, momentum)
lowered and compiled by IREE follows the interpreter's trajectory for 100 steps: the same overflow steps (the
float status ops lower to an explicit flag), the same loss scales, losses within fp16 rounding and the final
parameters close. A huge initial scale and a short growth interval force overflow steps early and late."""

from __future__ import annotations

import numpy as np
import pytest

from ascend_mp.backend.iree import IreeProgram
from ascend_mp.passes.loss_scale import initial_state
from ascend_mp.train.data import load_digits
from ascend_mp.train.trainer import TrainConfig, compile_training

STEPS = 100
BATCH = 32
LOSS_RTOL = 4e-3
"""fp16 tolerance: four float16 epsilons (2**-10) of relative difference between the two losses (measured at
most 9.7e-4 for the MLP, 1.8e-3 for the CNN over the 100 steps)."""
PARAM_TOL = 2e-2
"""The final parameters, max|ours - theirs| / max|theirs| per tensor (measured at most 4.7e-5 MLP, 6.1e-3 CNN)."""


def trajectories(
    model: str, steps: int = STEPS
) -> tuple[list[tuple[float, bool, float]], list[tuple[float, bool, float]], list[np.ndarray], list[np.ndarray]]:
    """(loss, overflow, loss scale) per step through IREE and through the interpreter, and the final parameters."""
    cfg = TrainConfig(
        model=model,
        precision_mode="allow_mix_precision",
        loss_scale="dynamic",
        batch=BATCH,
        init_scale=2.0**20,
        growth_interval=10,
        optimizer="momentum",
    )
    compiled = compile_training(cfg)
    program = IreeProgram.from_module(compiled.module)
    data = load_digits(image=model == "cnn")
    labels = data.onehot(data.y_train)
    batches = len(data.x_train) // BATCH
    ours = initial_state(compiled.step_fn, compiled.model.init_params(0))
    theirs = initial_state(compiled.step_fn, compiled.model.init_params(0))
    a, b = [], []
    for step in range(steps):
        i = (step % batches) * BATCH
        x, y = data.x_train[i : i + BATCH], labels[i : i + BATCH]
        loss, over = ours.update(
            program.run("train_step", *ours.args(), x, y, ours.loss_scale, ours.good_steps, ours.step)
        )
        a.append((float(loss), bool(over), float(ours.loss_scale)))
        loss, over = theirs.update(
            compiled.program.run("train_step", *theirs.args(), x, y, theirs.loss_scale, theirs.good_steps, theirs.step)
        )
        b.append((float(loss), bool(over), float(theirs.loss_scale)))
    return a, b, list(ours.params), list(theirs.params)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_loss_scaled_trajectory_follows_the_interpreter(model: str) -> None:
    ours, theirs, p_ours, p_theirs = trajectories(model)
    skipped = [s for s, (_, over, _) in enumerate(theirs) if over]
    assert [s for s, (_, over, _) in enumerate(ours) if over] == skipped
    assert [scale for _, _, scale in ours] == [scale for _, _, scale in theirs]
    assert skipped[0] == 0 and max(skipped) > 20, skipped  # overflows early (the huge scale) and late (growth)
    assert len(skipped) < STEPS // 2  # most steps update the parameters
    for step, ((la, _, _), (lb, _, _)) in enumerate(zip(ours, theirs)):
        assert abs(la - lb) <= LOSS_RTOL * abs(lb), f"step {step}: loss {la} vs the interpreter's {lb}"
    assert theirs[-1][0] < theirs[0][0]  # it trained
    for p, q in zip(p_ours, p_theirs):
        assert float(np.abs(p.astype(np.float64) - q).max() / np.abs(q).max()) <= PARAM_TOL
