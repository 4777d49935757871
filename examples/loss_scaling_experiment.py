"""Why loss scaling: fp16 training loses accuracy when gradients underflow, dynamic scaling recovers it.

    python examples/loss_scaling_experiment.py            # 3 divisors x 3 seeds x 4 runs on digits (minutes)
    python examples/loss_scaling_experiment.py --quick    # 1 seed, 5 epochs
    python examples/loss_scaling_experiment.py --plot docs/usage/loss-scaling.png   # and the curves (seed 0)

The configuration: the digits MLP (64-128-10) trained with momentum SGD, its loss (softmax
cross-entropy, mean over the batch) divided by D (2^16, 2^18, 2^20), as a loss averaged over many
elements per example would be (a per-pixel loss on a 256x256 map: 2^16), and the learning rate
multiplied by D. In exact arithmetic the updates are those of the usual loss and learning rate
(0.02), so fp32 learns as usual; in fp16 the gradients, D times smaller, fall below fp16's smallest
subnormal (2^-24, about 6e-8) and flush to zero.

Four runs per divisor and seed, same data, initialisation and shuffling:

- fp32 (no precision pass);
- allow_mix_precision, no loss scaling: matrix products and their gradients in fp16;
- allow_mix_precision, dynamic loss scaling (PyTorch's defaults: 2^16, x2 every 2000 clean
  steps, x0.5 on overflow);
- force_fp16, no loss scaling: every op that has an fp16 kernel in fp16.

It prints the validation accuracy of each and the fraction of nonzero fp32 gradient values that
fp16 flushes to zero without scaling and with the run's scale (`ascend_mp.train.underflow_stats`,
sampled once per epoch). docs/usage/ascend-train.md records the figures.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.builder import Dense, Relu, Sequential
from ascend_mp.dialects import ascend
from ascend_mp.emit import Emitter, mark_keep_dtype
from ascend_mp.train import TrainConfig, load_digits, train

DIVISORS = (2.0**16, 2.0**18, 2.0**20)
LR = 0.02
"""The learning rate of the usual loss (multiplied by the divisor)."""


class SmallLossMLP(Sequential):
    """The digits MLP whose training loss is divided by `divisor` (the division kept fp32)."""

    def __init__(self, divisor: float):
        super().__init__([Dense(64, 128), Relu(), Dense(128, 10)], name="mlp-small-loss")
        self.divisor = divisor

    def forward_module(self, batch: int, dtype: str = "f32", keep_loss: bool = True) -> ModuleOp:
        module = super().forward_module(batch, dtype, keep_loss)
        fwd = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "forward")
        ret = fwd.body.blocks[0].last_op
        assert isinstance(ret, func.ReturnOp)
        e = Emitter(fwd.body.blocks[0], before=ret)
        small = e.div(ret.arguments[0], e.const(self.divisor))
        for op in (small.owner, small.owner.operands[1].owner):  # pyright: ignore[reportAttributeAccessIssue]  # `small` and its operand are op results (owners are Operations)
            mark_keep_dtype(op)  # pyright: ignore[reportArgumentType]  # as above: op results' owners are Operations
        ret.operands = [small]
        assert isinstance(small.owner, ascend.RealDivOp)
        return module


RUNS = {
    "fp32": {"precision_mode": None, "loss_scale": "none"},
    "mixed, no scaling": {"precision_mode": "allow_mix_precision", "loss_scale": "none"},
    "mixed, dynamic scaling": {"precision_mode": "allow_mix_precision", "loss_scale": "dynamic"},
    "force_fp16, no scaling": {"precision_mode": "force_fp16", "loss_scale": "none"},
}


def experiment(
    divisor: float, seeds: tuple[int, ...], epochs: int, curves: dict[str, Any] | None = None
) -> dict[str, dict[str, float]]:
    """Mean accuracy and flushed fractions of each run over `seeds`; the first seed's histories go into `curves`
    (run name -> history) when given."""
    data = load_digits()
    out: dict[str, dict[str, list[float]]] = {
        name: {"accuracy": [], "flushed_unscaled": [], "flushed_scaled": []} for name in RUNS
    }
    for seed in seeds:
        for name, opts in RUNS.items():
            model = SmallLossMLP(divisor)
            cfg = TrainConfig(optimizer="momentum", lr=LR * divisor, epochs=epochs, seed=seed, **opts)
            result = train(cfg, progress=False, model=model, data=data)
            under = result.history["underflow"]
            if curves is not None and seed == seeds[0]:
                curves[name] = result.history
            out[name]["accuracy"].append(result.test_accuracy)
            out[name]["flushed_unscaled"].append(under["mean_unscaled"])
            out[name]["flushed_scaled"].append(under["mean_scaled"])
            print(f"D=2^{int(np.log2(divisor))} seed {seed} {name:<24} {result.precision:<52} accuracy {100 * result.test_accuracy:6.2f}%  "
                  f"flushed to zero: {100 * under['mean_unscaled']:5.1f}% unscaled, {100 * under['mean_scaled']:5.1f}% at the run's scale", flush=True)  # fmt: skip
    return {name: {k: float(np.mean(v)) for k, v in cols.items()} for name, cols in out.items()}


def plot(curves: dict[str, dict[str, Any]], path: str) -> None:
    """Per divisor (a column): the training loss per epoch, times the divisor (the usual cross-entropy), of each
    run; below it the fraction of nonzero fp32 gradient values fp16 flushes to zero at the run's scale (for
    fp32: unscaled, what fp16 would flush)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(curves), figsize=(4.2 * len(curves), 6.4), sharex=True, squeeze=False)
    for col, (d, runs) in enumerate(curves.items()):
        divisor = 2.0 ** int(d.removeprefix("2^"))
        top, bottom = axes[0][col], axes[1][col]
        for name, history in runs.items():
            epochs = [e["epoch"] for e in history["epochs"]]
            loss = [
                divisor * float(e["train_loss"]) if e["train_loss"] is not None else np.nan for e in history["epochs"]
            ]
            top.plot(epochs, loss, marker=".", label=name)
            samples = history["underflow"]["samples"]
            key = "unscaled" if RUNS[name]["precision_mode"] is None else "scaled"
            steps_per_epoch = history["epochs"][0]["step"] if history["epochs"] else 1
            bottom.plot([s["step"] / steps_per_epoch for s in samples], [100 * s[key] for s in samples], marker=".")
        top.set_yscale("log")
        top.set_title(f"loss divided by D = {d} (seed 0)")
        bottom.set_xlabel("epoch")
        bottom.set_ylim(-3, 103)
    axes[0][0].set_ylabel("training loss x D (cross-entropy)")
    axes[1][0].set_ylabel("% of gradient values flushed to 0 in fp16")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])  # pyright: ignore[reportOptionalMemberAccess]  # this module has a docstring
    p.add_argument("--quick", action="store_true", help="one seed, 5 epochs")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--plot", metavar="PNG", help="write the loss curves and flushed fractions (the first seed) there")
    args = p.parse_args()
    seeds, epochs = ((0,), 5) if args.quick else ((0, 1, 2), args.epochs)
    curves: dict[str, dict[str, Any]] = {f"2^{int(np.log2(d))}": {} for d in DIVISORS}
    results = {f"2^{int(np.log2(d))}": experiment(d, seeds, epochs, curves[f"2^{int(np.log2(d))}"]) for d in DIVISORS}
    if args.plot:
        plot(curves, args.plot)
    print(json.dumps({"seeds": list(seeds), "epochs": epochs, "mean_by_divisor": results}, indent=1))
    print("\n| divisor | " + " | ".join(RUNS) + " |\n|---|" + "---|" * len(RUNS))
    for d, runs in results.items():
        cells = [
            f"{100 * r['accuracy']:.2f}% (fp16 would flush {100 * r['flushed_unscaled']:.1f}%)" if name == "fp32"
            else f"{100 * r['accuracy']:.2f}% ({100 * r['flushed_scaled']:.1f}% flushed)"
            for name, r in runs.items()
        ]  # fmt: skip
        print(f"| {d} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
