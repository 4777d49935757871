"""Mixed-precision training runtime: compile (autodiff -> precision -> loss scaling) and train on digits.

```python
from ascend_mp.train import TrainConfig, train

result = train(TrainConfig(model="mlp", precision_mode="allow_mix_precision", loss_scale="dynamic"), out_dir="run")
print(result.summary())
```

:func:`demo` is `make demo`'s training part; :func:`accuracy_comparison` is the benchmark's
fp32-versus-mixed check.
"""

from __future__ import annotations

import time
from typing import Any

from ascend_mp.train.data import Dataset, load_digits
from ascend_mp.train.trainer import (
    MODELS,
    Compiled,
    TrainConfig,
    TrainResult,
    compile_training,
    evaluate,
    report_summary,
    train,
    underflow_stats,
)

__all__ = [
    "MODELS",
    "Compiled",
    "Dataset",
    "TrainConfig",
    "TrainResult",
    "accuracy_comparison",
    "compile_training",
    "demo",
    "evaluate",
    "load_digits",
    "report_summary",
    "train",
    "underflow_stats",
]


def accuracy_comparison(seeds: tuple[int, ...] = (0, 1, 2), epochs: int = 30, model: str = "mlp") -> dict[str, Any]:
    """Train the model in fp32 and under allow_mix_precision with dynamic loss scaling, for each
    seed, on the same data and initialisation; returns mean test accuracies (fractions) and their
    difference in percentage points."""
    data = load_digits(image=model == "cnn")
    runs: dict[str, list[TrainResult]] = {"fp32": [], "mixed": []}
    for seed in seeds:
        for label, mode in (("fp32", None), ("mixed", "allow_mix_precision")):
            cfg = TrainConfig(
                model=model, precision_mode=mode, loss_scale="dynamic" if mode else "none", epochs=epochs, seed=seed
            )
            runs[label].append(train(cfg, progress=False, data=data))

    def mean(label: str, attr: str) -> float:
        return sum(getattr(r, attr) for r in runs[label]) / len(runs[label])

    fp32, mixed = mean("fp32", "test_accuracy"), mean("mixed", "test_accuracy")
    return {
        "model": model,
        "seeds": list(seeds),
        "epochs": epochs,
        "fp32_accuracy": fp32,
        "mixed_accuracy": mixed,
        "difference_pt": 100 * (fp32 - mixed),
        "per_seed": {label: [r.test_accuracy for r in rs] for label, rs in runs.items()},
        "mixed_skipped_steps": [r.skipped for r in runs["mixed"]],
        "mixed_final_scale": [r.final_scale for r in runs["mixed"]],
        "step_ms": {label: 1000 * mean(label, "step_seconds") for label in runs},
    }


def demo(epochs: int = 20, out_dir: str | None = None) -> dict[str, Any]:
    """`make demo`: compile the example MLP under allow_mix_precision, print the precision report
    summary, train it on digits with dynamic loss scaling next to an fp32 run, print both accuracies."""
    t0 = time.perf_counter()
    data = load_digits()
    mixed_cfg = TrainConfig(model="mlp", precision_mode="allow_mix_precision", loss_scale="dynamic", epochs=epochs)
    compiled = compile_training(mixed_cfg)
    print("== ascend-train demo: the digits MLP (64-128-10), allow_mix_precision + dynamic loss scaling")
    print(report_summary(compiled.report))
    step = compiled.step_fn
    print(
        f"@train_step: {len(step.args)} arguments, {len(list(step.body.ops))} ops (forward, backward, loss scale, update)"
    )
    mixed = train(mixed_cfg, out_dir=out_dir, progress=False, data=data, compiled=compiled)
    fp32 = train(
        TrainConfig(model="mlp", precision_mode=None, loss_scale="none", epochs=epochs), progress=False, data=data
    )
    print(mixed.summary())
    print(
        f"test accuracy: fp32 {100 * fp32.test_accuracy:.2f}%, mixed precision {100 * mixed.test_accuracy:.2f}% "
        f"(difference {100 * (fp32.test_accuracy - mixed.test_accuracy):+.2f} pt); "
        f"step {1000 * fp32.step_seconds:.2f} ms fp32 vs {1000 * mixed.step_seconds:.2f} ms mixed; "
        f"demo took {time.perf_counter() - t0:.1f} s"
    )
    return {
        "fp32": fp32.test_accuracy,
        "mixed": mixed.test_accuracy,
        "skipped": mixed.skipped,
        "final_scale": mixed.final_scale,
    }
