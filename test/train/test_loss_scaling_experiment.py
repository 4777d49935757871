"""The loss-scaling experiment's model (examples/loss_scaling_experiment.py): its loss is the usual
one divided by the divisor, kept fp32; the accuracy figures themselves are measured by running the
example, not here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ascend_mp.builder import mlp
from ascend_mp.examples.loss_scaling_experiment import SmallLossMLP
from ascend_mp.interpreter import Program


def test_the_loss_is_divided_and_kept_fp32() -> None:
    model = SmallLossMLP(2.0**16)
    params = model.init_params(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 64)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[[0, 3, 5, 9]]
    small = Program.from_module(model.forward_module(4), reference=True).run("forward", *params, x, labels)[0]
    usual = Program.from_module(mlp().forward_module(4), reference=True).run("forward", *params, x, labels)[0]
    assert float(small) == float(usual) / 2.0**16
    text = str(model.forward_module(4))
    assert (
        "ascend.RealDiv" in text and text.count("keep_dtype") >= 4
    )  # the loss, its mean, the division and its constant


def test_the_experiment_plots_its_curves(tmp_path: Path) -> None:
    """One epoch at D = 2^20: unscaled fp16 flushes most gradient values, dynamic scaling few; the plot is a PNG
    with a column per divisor."""
    from ascend_mp.examples.loss_scaling_experiment import RUNS, experiment, plot

    curves: dict[str, Any] = {}
    means = experiment(2.0**20, (0,), 1, curves)
    assert set(curves) == set(RUNS) == set(means)
    assert means["mixed, no scaling"]["flushed_scaled"] > 0.5
    assert means["mixed, dynamic scaling"]["flushed_scaled"] < 0.05
    assert means["fp32"]["flushed_unscaled"] > 0.5  # what fp16 would flush, unscaled
    png = tmp_path / "curves.png"
    plot({"2^20": curves}, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
