"""Compile a model for training and run it with the interpreter.

Compilation is the pass pipeline of DESIGN section 7:

    builder @forward -> ascend-autodiff -> ascend-precision{mode} -> ascend-loss-scale

and the loop only threads the state through `@train_step` (the loss scale, the overflow
skip and the optimizer are in the IR). Outputs are written atomically (temporary file,
then `os.replace`), so an existing history, plot or checkpoint is never half-written.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.builder import Sequential, mlp, small_cnn
from ascend_mp.errors import AscendError
from ascend_mp.ir import make_context
from ascend_mp.modes import V1_MODES
from ascend_mp.passes.autodiff import differentiate
from ascend_mp.passes.loss_scale import LossScalePass, TrainState, initial_state, step_layout
from ascend_mp.train.data import Dataset, load_digits

logger = logging.getLogger("ascend_mp.train")
"""Warnings, and one INFO line per epoch."""

MODELS: dict[str, Callable[[], Sequential]] = {"mlp": mlp, "cnn": small_cnn}
"""Built-in models: the digits MLP (64-128-10) and the small CNN (1x8x8 input)."""

LOSS_OPS = ("loss/SoftmaxCrossEntropyWithLogits", "loss/ReduceMean")
"""Op names of the builder's loss, kept in their original dtype (the loss is computed in fp32)."""

FP16_MODES = frozenset({"allow_mix_precision", "allow_mix_precision_fp16", "force_fp16", "allow_fp32_to_fp16"})
"""Modes that run ops in fp16, where gradients need loss scaling."""


@dataclass
class TrainConfig:
    """One training run. `precision_mode=None` trains the fp32 graph as built (no precision pass)."""

    model: str = "mlp"
    precision_mode: str | None = "allow_mix_precision"
    loss_scale: str = "dynamic"
    """Loss-scale manager: `dynamic`, `fixed` or `none`."""
    preset: str | None = None
    init_scale: float | None = None
    growth_factor: float | None = None
    backoff_factor: float | None = None
    growth_interval: int | None = None
    min_scale: float | None = None
    scale: float | None = None
    drop_overflow_update: bool | None = None
    optimizer: str = "momentum"
    lr: float = 0.02
    momentum: float = 0.9
    epochs: int = 30
    batch: int = 32
    seed: int = 0
    subset: int | None = None
    keep_loss_fp32: bool = True
    modify_mixlist: str | None = None
    keep_dtype: str | None = None
    soc: str = "ascend910"
    stats_every: int = 0
    """Steps between underflow samples (0: one per epoch)."""

    def validate(self) -> None:
        if self.model not in MODELS:
            raise AscendError(f"unknown model '{self.model}' (models: {', '.join(MODELS)})")
        if self.precision_mode is not None and self.precision_mode not in V1_MODES:
            raise AscendError(f"unknown precision mode '{self.precision_mode}' (modes: {', '.join(V1_MODES)})")
        for name in ("epochs", "batch"):
            if getattr(self, name) < 1:
                raise AscendError(f"{name} must be positive, got {getattr(self, name)}")
        if self.stats_every < 0:
            raise AscendError(f"stats-every must be >= 0, got {self.stats_every}")

    def loss_scale_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"manager": self.loss_scale, "optimizer": self.optimizer, "lr": self.lr, "momentum": self.momentum}
        for name in ("preset", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "min_scale", "scale", "drop_overflow_update"):
            if getattr(self, name) is not None:
                opts[name] = getattr(self, name)
        return opts

    def mode_label(self) -> str:
        return self.precision_mode or "fp32"


# --------------------------------------------------------------------------------------
# Compilation
# --------------------------------------------------------------------------------------


@dataclass
class Compiled:
    """The compiled training module, its interpreter programs and the precision report."""

    model: Sequential
    module: ModuleOp
    step_fn: func.FuncOp
    program: Any
    grad_program: Any
    """The fp32 `@forward_grad` (no precision pass), for the underflow statistics."""
    report: Any = None


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


@contextmanager
def _keep_dtype_file(cfg: TrainConfig) -> Iterator[str | None]:
    """The keep_dtype file the precision pass gets: the user's entries plus the loss ops."""
    if not cfg.keep_loss_fp32:
        yield cfg.keep_dtype
        return
    lines: list[str] = []
    if cfg.keep_dtype is not None:
        try:
            lines = Path(cfg.keep_dtype).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise AscendError(f"{cfg.keep_dtype}: cannot read file: {e.strerror}") from None
    fd, path = tempfile.mkstemp(prefix="ascend-train-keep-", suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join([*lines, *LOSS_OPS]) + "\n")
        yield path
    finally:
        os.unlink(path)


def compile_training(cfg: TrainConfig, model: Sequential | None = None) -> Compiled:
    """Build the model's forward and run autodiff, precision and loss scaling on it."""
    from ascend_mp.interpreter import Program

    cfg.validate()
    model = model or MODELS[cfg.model]()
    module = model.forward_module(cfg.batch)
    differentiate(module)
    report = None
    if cfg.precision_mode is not None:
        from ascend_mp.passes.precision import run_precision

        with _keep_dtype_file(cfg) as keep:
            report = run_precision(module, mode=cfg.precision_mode, keep_dtype=keep, modify_mixlist=cfg.modify_mixlist, soc=cfg.soc)
    LossScalePass(**cfg.loss_scale_options()).apply(make_context(), module)
    reference = model.forward_module(cfg.batch)
    differentiate(reference)
    return Compiled(model, module, _function(module, "train_step"), Program.from_module(module), Program.from_module(reference), report)


def report_summary(report: Any) -> str:
    """One paragraph: how many ops the precision pass reduced, by type, and the casts it added."""
    if report is None:
        return "precision: fp32 graph (no precision pass)"
    reduced: dict[str, int] = {}
    for d in report.ops:
        if d.reduced:
            reduced[d.type] = reduced.get(d.type, 0) + 1
    kinds = ", ".join(f"{t} x{n}" for t, n in sorted(reduced.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"precision {report.mode}: {report.ops_reduced} of {len(report.ops)} ops reduced to fp16"
        f" ({kinds or 'none'}); {report.casts_inserted} casts inserted"
    )


# --------------------------------------------------------------------------------------
# Underflow statistics (Micikevicius et al., "Mixed Precision Training")
# --------------------------------------------------------------------------------------


def underflow_stats(grads: list[np.ndarray], scale: float) -> dict[str, float]:
    """Of the nonzero fp32 gradient values: the fraction that fp16 flushes to zero unscaled,
    the fraction flushed once multiplied by `scale`, and the fraction that overflows then."""
    flat = np.concatenate([np.asarray(g, np.float32).reshape(-1) for g in grads])
    nonzero = flat[flat != 0]
    if nonzero.size == 0:
        return {"unscaled": 0.0, "scaled": 0.0, "overflow_scaled": 0.0}
    with np.errstate(over="ignore"):
        scaled = (nonzero * np.float32(scale)).astype(np.float16)
    return {
        "unscaled": float(np.mean(nonzero.astype(np.float16) == 0)),
        "scaled": float(np.mean(scaled == 0)),
        "overflow_scaled": float(np.mean(np.isinf(scaled))),
    }


# --------------------------------------------------------------------------------------
# Atomic outputs
# --------------------------------------------------------------------------------------


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write through a temporary file in the same folder, then rename over `path`."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    except OSError as e:
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise AscendError(f"{path}: cannot write file: {e.strerror or e}") from None
        raise


def write_plot(path: str | Path, history: dict[str, Any], title: str) -> None:
    """Loss per step (skipped steps marked) and the loss scale (log2) per step, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = history["steps"]
    x = np.arange(1, len(steps["loss"]) + 1)
    loss = np.asarray(steps["loss"], dtype=np.float64)
    skipped = np.asarray(steps["skipped"], dtype=bool)
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    ax1.plot(x, np.where(np.isfinite(loss), loss, np.nan), lw=0.8, label="loss")
    if skipped.any():
        ax1.scatter(x[skipped], np.zeros(int(skipped.sum())), marker="x", color="red", s=12, label="skipped (overflow)")
    ax1.set_ylabel("training loss")
    ax1.legend(loc="upper right")
    ax1.set_title(title)
    ax2.step(x, steps["scale"], where="post", color="tab:orange")
    ax2.set_yscale("log", base=2)
    ax2.set_ylabel("loss scale")
    ax2.set_xlabel("step")
    fig.tight_layout()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100))
    plt.close(fig)


# --------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------


def _meta(cfg: TrainConfig, compiled: Compiled) -> dict[str, Any]:
    layout = step_layout(compiled.step_fn)
    return {
        "model": cfg.model,
        "params": [[p.name, list(p.shape)] for p in compiled.model.params],
        "optimizer": layout["optimizer"],
        "slots": layout["state"],
        "loss_scale": layout["manager"],
        "precision_mode": cfg.mode_label(),
    }


def save_checkpoint(path: str | Path, state: TrainState, meta: dict[str, Any], epoch: int, history: dict[str, Any]) -> None:
    """fp32 master weights, optimizer slots, scale and counters, the epoch and the history."""
    arrays: dict[str, np.ndarray] = {f"param_{i}": p for i, p in enumerate(state.params)}
    arrays |= {f"slot_{i}": s for i, s in enumerate(state.slots)}
    arrays |= {"loss_scale": state.loss_scale, "good_steps": state.good_steps, "step": state.step, "epoch": np.array(epoch)}
    arrays["meta"] = np.array(json.dumps(meta))
    arrays["history"] = np.array(json.dumps(history))
    atomic_write(path, lambda f: np.savez(f, **arrays))  # pyright: ignore[reportArgumentType]


def load_checkpoint(path: str | Path, state: TrainState, meta: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Restore `state` from a checkpoint written for the same configuration; returns (epoch, history)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            saved_meta = json.loads(str(data["meta"]))
            if saved_meta != meta:
                diff = sorted(k for k in set(meta) | set(saved_meta) if meta.get(k) != saved_meta.get(k))
                raise AscendError(f"{path}: checkpoint does not match this run ({', '.join(diff)} differ)")
            state.params = [np.array(data[f"param_{i}"], np.float32) for i in range(len(state.params))]
            state.slots = [np.array(data[f"slot_{i}"], np.float32) for i in range(len(state.slots))]
            state.loss_scale = np.array(data["loss_scale"], np.float32)
            state.good_steps = np.array(data["good_steps"], np.int32)
            state.step = np.array(data["step"], np.int32)
            return int(data["epoch"]), json.loads(str(data["history"]))
    except AscendError:
        raise
    except FileNotFoundError:
        raise AscendError(f"{path}: no checkpoint to resume from") from None
    except (OSError, ValueError, KeyError) as e:
        raise AscendError(f"{path}: not a readable ascend-train checkpoint ({type(e).__name__}: {' '.join(str(e).split())})") from None


# --------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """What a run produced."""

    config: TrainConfig
    history: dict[str, Any]
    test_accuracy: float
    train_loss: float
    steps: int
    skipped: int
    final_scale: float
    step_seconds: float
    """Mean wall time of one `@train_step` run."""
    params: list[np.ndarray] = field(repr=False, default_factory=list[np.ndarray])
    outputs: dict[str, str] = field(default_factory=dict[str, str])

    def summary(self) -> str:
        underflow = self.history.get("underflow", {})
        lines = [
            f"model {self.config.model}, {self.config.mode_label()}, loss scale {self.config.loss_scale}, optimizer {self.config.optimizer}",
            f"steps {self.steps} ({self.skipped} skipped on overflow), final loss scale {self.final_scale:g}",
            f"final training loss {self.train_loss:.4f}, test accuracy {100 * self.test_accuracy:.2f}%",
            f"train step {1000 * self.step_seconds:.2f} ms",
        ]
        if underflow.get("samples"):
            lines.append(
                f"fp16 underflow of nonzero gradients: {100 * underflow['mean_unscaled']:.3f}% unscaled, "
                f"{100 * underflow['mean_scaled']:.3f}% with the loss scale"
            )
        lines += [f"wrote {path}" for path in self.outputs.values()]
        return "\n".join(lines)


def evaluate(compiled: Compiled, params: list[np.ndarray], x: np.ndarray, y: np.ndarray, batch: int) -> float:
    """Accuracy of `@predict` (compiled under the run's mode) in batches; the last one is padded."""
    correct = 0
    for start in range(0, len(x), batch):
        chunk = x[start : start + batch]
        n = len(chunk)
        if n < batch:
            chunk = np.concatenate([chunk, np.zeros((batch - n, *chunk.shape[1:]), chunk.dtype)])
        (logits,) = compiled.program.run("predict", *params, chunk)
        correct += int(np.sum(np.argmax(logits[:n], axis=1) == y[start : start + n]))
    return correct / len(x)


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False, file=sys.stderr, dynamic_ncols=True)


def train(
    cfg: TrainConfig,
    out_dir: str | Path | None = None,
    resume: str | Path | bool = False,
    progress: bool | None = None,
    data: Dataset | None = None,
    compiled: Compiled | None = None,
) -> TrainResult:
    """Train on digits; write `history.json`, `loss_scale.png` and `checkpoint.npz` to `out_dir`.

    `resume`: True (the out dir's checkpoint) or a checkpoint path. `progress`: None shows a
    tqdm bar only when standard error is a terminal.
    """
    cfg.validate()
    if cfg.precision_mode in FP16_MODES and cfg.loss_scale == "none":
        logger.warning(
            "training with %s and no loss scaling: small fp16 gradients flush to zero (use --loss-scale dynamic)",
            cfg.precision_mode,
        )
    data = data or load_digits(image=cfg.model == "cnn", subset=cfg.subset)
    n_train = len(data.x_train)
    steps_per_epoch = n_train // cfg.batch
    if steps_per_epoch == 0:
        raise AscendError(f"the batch ({cfg.batch}) is larger than the training set ({n_train} examples)")
    compiled = compiled or compile_training(cfg)
    model = compiled.model
    state = initial_state(compiled.step_fn, model.init_params(cfg.seed))
    meta = _meta(cfg, compiled)
    out = Path(out_dir) if out_dir is not None else None
    checkpoint = out / "checkpoint.npz" if out is not None else None
    history: dict[str, Any] = {
        "config": asdict(cfg),
        "steps": {"loss": [], "scale": [], "skipped": []},
        "epochs": [],
        "underflow": {"samples": []},
    }
    start_epoch = 0
    if resume:
        path = checkpoint if resume is True else Path(resume)
        if path is None:
            raise AscendError("--resume needs an output folder or a checkpoint path")
        start_epoch, history = load_checkpoint(path, state, meta)
        history["config"] = asdict(cfg)

    labels = data.onehot(data.y_train)
    show = sys.stderr.isatty() if progress is None else progress
    stats_every = cfg.stats_every or steps_per_epoch
    step_time = 0.0
    timed = 0
    steps_hist = history["steps"]
    for epoch in range(start_epoch, cfg.epochs):
        order = np.random.default_rng([cfg.seed, epoch]).permutation(n_train)
        bar = _progress(steps_per_epoch, f"epoch {epoch + 1}/{cfg.epochs}", show)
        t_epoch = time.perf_counter()
        losses: list[float] = []
        skipped = 0
        for b in range(steps_per_epoch):
            idx = order[b * cfg.batch : (b + 1) * cfg.batch]
            x, y = data.x_train[idx], labels[idx]
            scale_before = float(state.loss_scale)
            t0 = time.perf_counter()
            results = compiled.program.run("train_step", *state.args(), x, y, state.loss_scale, state.good_steps, state.step)
            step_time += time.perf_counter() - t0
            timed += 1
            params_before = state.params
            loss, overflow = state.update(results)
            loss_f = float(loss)
            steps_hist["loss"].append(loss_f if math.isfinite(loss_f) else None)
            steps_hist["scale"].append(float(state.loss_scale))
            steps_hist["skipped"].append(overflow)
            skipped += overflow
            if math.isfinite(loss_f):
                losses.append(loss_f)
            global_step = len(steps_hist["loss"])
            if global_step % stats_every == 0:
                grads = compiled.grad_program.run("forward_grad", *params_before, x, y)[1:]
                sample = {"step": global_step, "scale": scale_before, **underflow_stats(grads, scale_before)}
                history["underflow"]["samples"].append(sample)
            bar.set_postfix(loss=f"{loss_f:.4f}", scale=f"{float(state.loss_scale):g}", refresh=False)
            bar.update(1)
        bar.close()
        accuracy = evaluate(compiled, state.params, data.x_test, data.y_test, cfg.batch)
        history["epochs"].append(
            {
                "epoch": epoch + 1,
                "train_loss": float(np.mean(losses)) if losses else None,
                "test_accuracy": accuracy,
                "skipped": skipped,
                "loss_scale": float(state.loss_scale),
                "seconds": time.perf_counter() - t_epoch,
            }
        )
        logger.info("epoch %d/%d: loss %.4f, test accuracy %.2f%%", epoch + 1, cfg.epochs, history["epochs"][-1]["train_loss"] or float("nan"), 100 * accuracy)
        if checkpoint is not None:
            save_checkpoint(checkpoint, state, meta, epoch + 1, history)

    samples = history["underflow"]["samples"]
    if samples:
        history["underflow"]["mean_unscaled"] = float(np.mean([s["unscaled"] for s in samples]))
        history["underflow"]["mean_scaled"] = float(np.mean([s["scaled"] for s in samples]))
    accuracy = history["epochs"][-1]["test_accuracy"] if history["epochs"] else evaluate(compiled, state.params, data.x_test, data.y_test, cfg.batch)
    finite = [v for v in steps_hist["loss"][-steps_per_epoch:] if v is not None]
    result = TrainResult(
        config=cfg,
        history=history,
        test_accuracy=accuracy,
        train_loss=float(np.mean(finite)) if finite else float("nan"),
        steps=len(steps_hist["loss"]),
        skipped=int(sum(steps_hist["skipped"])),
        final_scale=float(state.loss_scale),
        step_seconds=step_time / timed if timed else 0.0,
        params=state.params,
    )
    history["summary"] = {
        "test_accuracy": result.test_accuracy,
        "train_loss": result.train_loss,
        "steps": result.steps,
        "skipped": result.skipped,
        "final_scale": result.final_scale,
        "step_ms": 1000 * result.step_seconds,
    }
    if out is not None:
        text = json.dumps(history, indent=1, allow_nan=False)
        atomic_write(out / "history.json", lambda f: f.write(text.encode("utf-8") + b"\n"))
        title = f"{cfg.model} on digits, {cfg.mode_label()}, {cfg.loss_scale} loss scale"
        write_plot(out / "loss_scale.png", history, title)
        result.outputs = {"history": str(out / "history.json"), "plot": str(out / "loss_scale.png")}
        if checkpoint is not None and checkpoint.exists():
            result.outputs["checkpoint"] = str(checkpoint)
    return result
