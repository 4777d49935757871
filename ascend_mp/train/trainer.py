"""Compile a model for training and run it with the interpreter.

Compilation is the pass pipeline of DESIGN section 7:

    builder @forward -> ascend-autodiff -> ascend-precision{mode} -> ascend-loss-scale

and the loop only threads the state through `@train_step` (the loss scale, the overflow
skip and the optimizer are in the IR). The loss ops, the loss-scale machinery and the
optimizer update carry `keep_dtype`, so they stay fp32 whatever the mode.

Every output goes through :func:`ascend_mp.fileio.write_output` (never half-written;
devices, pipes and symlinks at the path are written through). Non-finite numbers are
recorded as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` so `history.json` stays
valid JSON. A run whose parameters stop being finite, or whose loss scale collapses
(:data:`COLLAPSE_STOP` consecutive overflows, where MindSpore raises), stops early as
*diverged* and still writes its history and plot; the checkpoint of the last finite
epoch is kept.
"""

from __future__ import annotations

import io
import json
import logging
import math
import sys
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.builder import Sequential
from ascend_mp.errors import AscendError
from ascend_mp.fileio import write_output
from ascend_mp.ir import functions, make_context
from ascend_mp.optional import available, missing_message
from ascend_mp.passes.autodiff import differentiate
from ascend_mp.passes.loss_scale import (
    LossScaleConfig,
    TrainState,
    initial_state,
    step_layout,
)
from ascend_mp.passes.precision import run_precision
from ascend_mp.precision_options import PrecisionOptions
from ascend_mp.train.config import (  # noqa: F401 - DEFAULT_MODE: re-exported for the training API
    DEFAULT_MODE,
    FP16_MODES,
    INT32_MAX,
    MODELS,
    TrainConfig,
    reduced_dtype,
    training_passes,
)
from ascend_mp.train.data import Dataset, example_shape, load_digits, pad_batch
from ascend_mp.train.labels import precision_label

logger = logging.getLogger("ascend_mp.train")
"""Warnings, and one INFO line per epoch."""

COLLAPSE_WARN = 100
"""Consecutive overflow steps after which the run warns that the loss scale collapsed."""
COLLAPSE_STOP = 1000
"""Consecutive overflow steps after which the run stops (MindSpore raises here)."""

FLOAT32_MAX = float(np.finfo(np.float32).max)


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
    """`module` compiled with `final_status=False`: the step's status ops read the float status,
    `program.float_status` after a step is not kept up to date."""
    grad_program: Any
    """The fp32 `@forward_grad` (no precision pass), for the underflow statistics."""
    report: Any = None
    loss_scale: LossScaleConfig | None = None
    """The resolved options of the loss-scale pass."""


def compile_training(cfg: TrainConfig, model: Sequential | None = None) -> Compiled:
    """Build the model's forward and run autodiff, precision and loss scaling on it."""
    from ascend_mp.interpreter import Program

    cfg.validate(custom_model=model is not None)
    model = model or MODELS[cfg.model]()
    module = model.forward_module(cfg.batch, keep_loss=cfg.keep_loss_fp32)
    report = None
    ctx = make_context()
    wrt = getattr(model, "wrt", None)  # an ONNX model's data arguments may include dropout masks
    for p in training_passes(cfg, wrt):
        if isinstance(p, PrecisionOptions):  # the precision pass: run for its report
            report = run_precision(module, p.options())
        else:
            p.apply(ctx, module)
    loss_scale = cfg.scaling.config(warn=False)
    step_fn = next(f for f in functions(module) if f.sym_name.data == "train_step")
    reference = model.forward_module(cfg.batch)
    differentiate(reference, wrt=wrt)
    # the step reads the float status with its own status ops; nothing reads it after a step
    program = Program.from_module(module, final_status=False)
    return Compiled(model, module, step_fn, program, Program.from_module(reference), report, loss_scale)


def donating_program(compiled: Compiled) -> Any:
    """`compiled.module` compiled with the parameters and optimizer state of `@train_step`
    donated: the training loop replaces them by the step's results, so the step updates
    them in place (as the optimizer ops' ref outputs do on Ascend) instead of allocating
    new ones. The arrays passed in are overwritten: pass the state, never keep it."""
    from ascend_mp.interpreter import Program

    layout = step_layout(compiled.step_fn)
    n = layout["params"] + len(layout["state"])
    return Program.from_module(compiled.module, donate={compiled.step_fn.sym_name.data: range(n)}, final_status=False)


def report_summary(report: Any) -> str:
    """One paragraph: how many ops the precision pass reduced (to fp16 or bf16), by type, and the casts it added."""
    if report is None:
        return "precision: fp32 graph (no precision pass)"
    if report.ops_reduced == 0:
        return f"precision {report.mode}: nothing reduced, all {len(report.ops)} ops keep fp32; {report.casts_inserted} casts inserted"
    reduced: dict[str, int] = {}
    for d in report.ops:
        if d.reduced:
            reduced[d.type] = reduced.get(d.type, 0) + 1
    kinds = ", ".join(f"{t} x{n}" for t, n in sorted(reduced.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"precision {report.mode}: {report.ops_reduced} of {len(report.ops)} ops reduced to {reduced_dtype(report.mode)}"
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
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (nonzero * np.float32(scale)).astype(np.float16)
        unscaled = nonzero.astype(np.float16)
    return {
        "unscaled": float(np.mean(unscaled == 0)),
        "scaled": float(np.mean(scaled == 0)),
        "overflow_scaled": float(np.mean(~np.isfinite(scaled))),
    }


# --------------------------------------------------------------------------------------
# JSON-safe numbers
# --------------------------------------------------------------------------------------


def json_number(x: float) -> float | str:
    """`x`, or `"NaN"` / `"Infinity"` / `"-Infinity"` (valid JSON; `float()` reads them back)."""
    x = float(x)
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else "Infinity" if x > 0 else "-Infinity"


def _numbers(values: list[Any]) -> np.ndarray:
    return np.array([float(v) if v is not None else math.nan for v in values], dtype=np.float64)


# --------------------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------------------


def write_plot(path: str | Path, history: dict[str, Any], title: str) -> None:
    """`loss_scale.png`: the loss per step (log axis; skipped steps marked at their loss),
    the loss scale per step (log2 axis; the initial scale and the overflow steps marked) and
    the test accuracy per epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = history["steps"]
    loss = _numbers(steps["loss"])
    scale = _numbers(steps["scale"])
    overflow = np.asarray(steps.get("overflow", steps["skipped"]), dtype=bool)
    skipped = np.asarray(steps["skipped"], dtype=bool)
    n = len(loss)
    x = np.arange(1, n + 1)
    init = float(history["config"].get("init_scale") or (scale[0] if n else 1.0))
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, sharex=True, figsize=(8, 8.5), height_ratios=[3, 2, 2])

    good = np.isfinite(loss) & (loss > 0)
    ax1.plot(x, np.where(good, loss, np.nan), lw=0.8, label="training loss")
    if skipped.any():
        top = float(loss[good].max()) if good.any() else 1.0
        at = np.where(good, loss, top)  # a non-finite loss is marked at the top of the axis
        ax1.scatter(
            x[skipped],
            at[skipped],
            marker="x",
            color="red",
            s=14,
            zorder=3,
            label=f"skipped on overflow ({int(skipped.sum())})",
        )
    if good.any():
        ax1.set_yscale("log")
    ax1.set_ylabel("loss (log)")
    ax1.legend(loc="upper right")
    ax1.set_title(title)

    used = np.concatenate([[init], scale])  # the scale each step ran with, then after the last one
    positive = np.where(used > 0, used, np.nan)
    ax2.step(np.arange(0, n + 1), positive, where="post", color="tab:orange", label="loss scale")
    exponent = math.log2(init) if init > 0 else 0.5
    shown = f"2^{int(exponent)}" if exponent == int(exponent) else f"{init:g}"
    ax2.scatter([0], [init], color="tab:orange", marker="o", zorder=3, label=f"initial scale {shown}")
    if overflow.any():
        ax2.scatter(x[overflow], positive[:-1][overflow], marker="v", color="red", s=14, zorder=3, label="overflow")
    if np.isfinite(positive).any():
        ax2.set_yscale("log", base=2)
    ax2.set_ylabel("loss scale (log2)")
    ax2.legend(loc="upper right")

    epochs = history["epochs"]
    ax3.plot(
        [e.get("step", 0) for e in epochs],
        [100 * float(e["test_accuracy"]) for e in epochs],
        marker="o",
        color="tab:green",
    )
    ax3.set_ylabel("test accuracy (%)")
    ax3.set_xlabel("step")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    write_output(path, buffer.getvalue())


def write_history(path: str | Path, history: dict[str, Any]) -> None:
    write_output(path, json.dumps(history, indent=1, allow_nan=False) + "\n")


# --------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------


def _meta(cfg: TrainConfig, compiled: Compiled) -> dict[str, Any]:
    layout = step_layout(compiled.step_fn)
    return {
        "model": compiled.model.name,
        "params": [[p.name, list(p.shape)] for p in compiled.model.params],
        "optimizer": layout["optimizer"],
        "slots": layout["state"],
        "loss_scale": layout["manager"],
        "precision_mode": cfg.precision_mode or "fp32",
    }


def save_checkpoint(
    path: str | Path, state: TrainState, meta: dict[str, Any], epoch: int, history: dict[str, Any]
) -> None:
    """fp32 master weights, optimizer slots, scale and counters, the epoch and the history."""
    arrays: dict[str, np.ndarray] = {f"param_{i}": p for i, p in enumerate(state.params)}
    arrays |= {f"slot_{i}": s for i, s in enumerate(state.slots)}
    arrays |= {
        "loss_scale": state.loss_scale,
        "good_steps": state.good_steps,
        "step": state.step,
        "epoch": np.array(epoch, np.int64),
    }
    arrays["meta"] = np.array(json.dumps(meta))
    arrays["history"] = np.array(json.dumps(history, allow_nan=False))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # pyright: ignore[reportArgumentType]  # numpy's stubs match **arrays against allow_pickle; the keys are array names
    write_output(path, buffer.getvalue())


class _Fields:
    """Checked access to a checkpoint's arrays: every error names the checkpoint field."""

    def __init__(self, path: str | Path, arrays: dict[str, np.ndarray]):
        self.path = path
        self.arrays = arrays

    def fail(self, key: str, what: str) -> AscendError:
        return AscendError(f"{self.path}: checkpoint field '{key}' {what}")

    def get(self, key: str) -> np.ndarray:
        if key not in self.arrays:
            raise AscendError(f"{self.path}: not a readable ascend-train checkpoint (field '{key}' is missing)")
        return self.arrays[key]

    def integer(self, key: str, high: int) -> int:
        a = self.get(key)
        if a.shape != () or a.dtype.kind not in "iu":
            raise self.fail(key, f"must be an integer scalar, got {a.dtype} of shape {a.shape}")
        value = int(a)
        if not 0 <= value <= high:
            raise self.fail(key, f"must be in [0, {high}], got {value}")
        return value

    def scale(self, key: str) -> float:
        a = self.get(key)
        if a.shape != () or a.dtype.kind != "f":
            raise self.fail(key, f"must be a float scalar, got {a.dtype} of shape {a.shape}")
        value = float(a)
        if not 0 < value <= FLOAT32_MAX:
            raise self.fail(key, f"must be a positive finite float32 number, got {value}")
        return value

    def tensor(self, key: str, shape: tuple[int, ...], what: str) -> np.ndarray:
        a = self.get(key)
        if a.dtype.kind != "f":
            raise self.fail(key, f"({what}) must hold floats, got {a.dtype}")
        if a.shape != shape:
            raise self.fail(key, f"({what}) has shape {a.shape}, expected {shape}")
        if not np.all(np.isfinite(a)):
            raise self.fail(key, f"({what}) holds non-finite values")
        return np.array(a, np.float32)

    def json(self, key: str) -> Any:
        a = self.get(key)
        if a.shape != () or a.dtype.kind != "U":
            raise self.fail(key, f"must be a JSON string, got {a.dtype} of shape {a.shape}")
        try:
            return json.loads(str(a))
        except (ValueError, RecursionError) as e:
            raise self.fail(key, f"is not valid JSON ({' '.join(str(e).split())})") from None


def _check_history(fields: _Fields, history: Any, epoch: int) -> dict[str, Any]:
    def bad(what: str) -> AscendError:
        return fields.fail("history", what)

    if not isinstance(history, dict):
        raise bad(f"must be a JSON object, got {type(history).__name__}")
    steps, epochs, underflow = history.get("steps"), history.get("epochs"), history.get("underflow")
    if not isinstance(steps, dict) or not all(isinstance(steps.get(k), list) for k in ("loss", "scale", "skipped")):
        raise bad("must hold 'steps' with 'loss', 'scale' and 'skipped' lists")
    lengths = {len(v) for v in steps.values() if isinstance(v, list)}
    if len(lengths) != 1:
        raise bad("has 'steps' lists of different lengths")
    for key in ("loss", "scale"):
        for v in steps[key]:
            if v is not None and not isinstance(v, (int, float)) and v not in ("NaN", "Infinity", "-Infinity"):
                raise bad(f"has a non-number in 'steps.{key}': {v!r}")
    if not all(isinstance(v, bool) for v in steps["skipped"]):
        raise bad("has a non-boolean in 'steps.skipped'")
    if not isinstance(epochs, list) or not all(
        isinstance(e, dict) and isinstance(e.get("test_accuracy"), (int, float)) for e in epochs
    ):
        raise bad("must hold 'epochs', a list of objects with a 'test_accuracy'")
    if len(epochs) != epoch:
        raise bad(f"records {len(epochs)} epochs, but the checkpoint is at epoch {epoch}")
    if not isinstance(underflow, dict) or not isinstance(underflow.get("samples"), list):
        raise bad("must hold 'underflow' with a 'samples' list")
    return history


def load_checkpoint(path: str | Path, state: TrainState, meta: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Restore `state` from a checkpoint written for the same configuration; returns (epoch, history).
    Every field is checked before anything is used."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: np.asarray(data[k]) for k in data.files}
    except FileNotFoundError:
        raise AscendError(f"{path}: no checkpoint to resume from") from None
    except IsADirectoryError:
        raise AscendError(f"{path}: not a readable ascend-train checkpoint (it is a folder)") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise AscendError(f"{path}: not a readable ascend-train checkpoint ({type(e).__name__}: {reason})") from None
    fields = _Fields(path, arrays)
    saved_meta = fields.json("meta")
    if not isinstance(saved_meta, dict):
        raise fields.fail("meta", "must be a JSON object")
    if saved_meta != meta:
        diff = sorted(k for k in set(meta) | set(saved_meta) if meta.get(k) != saved_meta.get(k))
        raise AscendError(f"{path}: checkpoint does not match this run ({', '.join(diff)} differ)")
    epoch = fields.integer("epoch", INT32_MAX)
    step = fields.integer("step", INT32_MAX)
    good_steps = fields.integer("good_steps", INT32_MAX)
    scale = fields.scale("loss_scale")
    names = [p[0] for p in meta["params"]]
    params = [fields.tensor(f"param_{i}", p.shape, names[i]) for i, p in enumerate(state.params)]
    slots = [fields.tensor(f"slot_{i}", s.shape, meta["slots"][i]) for i, s in enumerate(state.slots)]
    history = _check_history(fields, fields.json("history"), epoch)
    state.params, state.slots = params, slots
    state.loss_scale = np.array(scale, np.float32)
    state.good_steps = np.array(good_steps, np.int32)
    state.step = np.array(step, np.int32)
    return epoch, history


# --------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """What a run produced."""

    config: TrainConfig
    model_name: str
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
    diverged: str | None = None
    """Why the run stopped early (non-finite parameters, a collapsed loss scale), or None."""
    collapse: str | None = None
    """The loss-scale collapse warning, if the run had one."""
    precision: str = ""
    """What the precision pass reduced (`ascend_mp.train.labels.precision_label`); empty: the mode's name."""

    def summary(self) -> str:
        underflow = self.history.get("underflow", {})
        cfg = self.config
        lines = [
            f"model {self.model_name}, {self.precision or cfg.mode_label()}, loss scale {cfg.loss_scale}, optimizer {cfg.scaling.optimizer}",
            f"steps {self.steps} ({self.skipped} skipped on overflow), final loss scale {self.final_scale:g}",
            f"final training loss {self.train_loss:.4f}, test accuracy {100 * self.test_accuracy:.2f}%",
            f"train step {1000 * self.step_seconds:.2f} ms",
        ]
        if underflow.get("samples"):
            low = cfg.low_dtype()
            low = "fp16" if low == "fp32" else low
            lines.append(
                f"{low} underflow of nonzero gradients: {100 * underflow['mean_unscaled']:.3f}% unscaled, "
                f"{100 * underflow['mean_scaled']:.3f}% with the loss scale"
            )
        if self.collapse:
            lines.append(f"loss scale collapsed: {self.collapse}")
        if self.diverged:
            lines.append(f"diverged: {self.diverged}")
        lines += [f"wrote {path}" for path in self.outputs.values()]
        return "\n".join(lines)


def evaluate(compiled: Compiled, params: list[np.ndarray], x: Any, y: np.ndarray, batch: int) -> float:
    """Accuracy of `@predict` (compiled under the run's mode) in batches; the last one is padded.
    `x`: an array, or `Features` of a model with several inputs."""
    correct = 0
    inputs_of = getattr(compiled.model, "inputs_of", lambda a: [a])
    for start in range(0, len(x), batch):
        chunk = x[start : start + batch]
        n = len(chunk)
        (logits,) = compiled.program.run("predict", *params, *inputs_of(pad_batch(chunk, batch)))
        with np.errstate(invalid="ignore"):
            correct += int(np.sum(np.argmax(logits[:n], axis=1) == y[start : start + n]))
    return correct / len(x)


class _NoBar:
    """What `_progress` gives when there is no bar to show (tqdm not installed): does nothing."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, initial: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar on standard error (without tqdm, an optional package: none)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()

    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        disable=not enabled,
        leave=True,
        file=sys.stderr,
        dynamic_ncols=True,
        unit="step",
    )


def effective_config(cfg: TrainConfig, model_name: str, ls: LossScaleConfig) -> dict[str, Any]:
    """The run's configuration with every default resolved (what `history.json` records)."""
    out = cfg.flat()
    out["model"] = model_name
    out["precision_mode"] = cfg.precision_mode or "fp32"
    out["reduced_dtype"] = cfg.low_dtype()
    out["init_scale"] = ls.init_scale
    out["drop_overflow_update"] = ls.manager != "none" and (ls.manager == "dynamic" or ls.drop_overflow_update)
    if ls.manager == "dynamic":
        out["preset"] = cfg.scaling.preset or "pytorch"
        out |= {
            "growth_factor": ls.growth_factor,
            "backoff_factor": ls.backoff_factor,
            "growth_interval": ls.growth_interval,
            "min_scale": ls.min_scale,
        }
    elif ls.manager == "fixed":
        out["scale"] = ls.init_scale
    return {k: json_number(v) if isinstance(v, float) else v for k, v in out.items()}


def _data_for(model: Sequential, cfg: TrainConfig) -> Dataset:
    if model.input_shape == (64,):
        return load_digits(subset=cfg.subset)
    if model.input_shape == (1, 8, 8):
        return load_digits(image=True, subset=cfg.subset)
    raise AscendError(f"model '{model.name}' takes inputs of shape {model.input_shape}; digits are (64,) or (1, 8, 8)")


def _finite(state: TrainState) -> bool:
    return all(np.all(np.isfinite(a)) for a in (*state.params, *state.slots))


def train(
    cfg: TrainConfig,
    out_dir: str | Path | None = None,
    resume: str | Path | bool = False,
    progress: bool | None = None,
    data: Dataset | None = None,
    compiled: Compiled | None = None,
    model: Sequential | None = None,
) -> TrainResult:
    """Train on digits; write `history.json`, `loss_scale.png` and `checkpoint.npz` to `out_dir`.

    `model`: a builder model (`Sequential(..., name=...)`) instead of the built-in `cfg.model`.
    `resume`: True (the out dir's checkpoint) or a checkpoint path. `progress`: None shows a
    tqdm bar only when standard error is a terminal.
    """
    if compiled is not None:
        model = compiled.model
    ls = cfg.validate(custom_model=model is not None)
    model = model or MODELS[cfg.model]()
    if cfg.precision_mode in FP16_MODES and cfg.loss_scale == "none":
        logger.warning(
            "training with %s and no loss scaling: small fp16 gradients flush to zero (use --loss-scale dynamic)",
            cfg.precision_mode,
        )
    data = data or _data_for(model, cfg)
    if example_shape(data.x_train) != model.input_shape or data.num_classes != model.num_classes:
        raise AscendError(
            f"model '{model.name}' takes {model.input_shape} and gives {model.num_classes} classes; the data has {example_shape(data.x_train)} and {data.num_classes}"
        )
    n_train = len(data.x_train)
    steps_per_epoch = n_train // cfg.batch
    if steps_per_epoch == 0:
        raise AscendError(f"the batch ({cfg.batch}) is larger than the training set ({n_train} examples)")
    compiled = compiled or compile_training(cfg, model)
    ls = compiled.loss_scale or ls
    state = initial_state(compiled.step_fn, model.init_params(cfg.seed))
    program = donating_program(compiled)
    meta = _meta(cfg, compiled)
    drops = ls.manager == "dynamic" or (ls.manager == "fixed" and ls.drop_overflow_update)
    """Whether an overflow step is skipped (else the update is applied anyway)."""
    out = Path(out_dir) if out_dir is not None else None
    checkpoint = out / "checkpoint.npz" if out is not None else None
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise AscendError(f"{out}: cannot make the output folder: {e.strerror}") from None
    history: dict[str, Any] = {
        "config": {},
        "steps": {"loss": [], "scale": [], "skipped": [], "overflow": []},
        "epochs": [],
        "underflow": {"samples": []},
    }
    start_epoch = 0
    if resume:
        path = checkpoint if resume is True else Path(resume)
        if path is None:
            raise AscendError("--resume needs an output folder or a checkpoint path")
        start_epoch, history = load_checkpoint(path, state, meta)
        history["steps"].setdefault("overflow", list(history["steps"]["skipped"]))
    history["config"] = effective_config(cfg, model.name, ls)

    labels = data.onehot(data.y_train)
    show = sys.stderr.isatty() if progress is None else progress
    stats_every = cfg.stats_every or steps_per_epoch
    step_time = 0.0
    timed = 0
    steps_hist = history["steps"]
    consecutive = 0
    collapse: str | None = None
    diverged: str | None = None
    bar = _progress(
        cfg.epochs * steps_per_epoch,
        start_epoch * steps_per_epoch,
        f"{model.name} {cfg.precision_mode or 'fp32'}",
        show,
    )
    try:
        for epoch in range(start_epoch, cfg.epochs):
            order = np.random.default_rng([cfg.seed, epoch]).permutation(n_train)
            masks = np.random.default_rng([cfg.seed, epoch, 1])  # dropout masks: deterministic by seed and epoch
            t_epoch = time.perf_counter()
            losses: list[float] = []
            skipped = 0
            for b in range(steps_per_epoch):
                idx = order[b * cfg.batch : (b + 1) * cfg.batch]
                x, y = data.x_train[idx], labels[idx]
                inputs = model.step_inputs(x, masks) if hasattr(model, "step_inputs") else [x]  # pyright: ignore[reportAttributeAccessIssue]  # an ONNX model's method (dropout masks), checked by hasattr
                scale_before = float(state.loss_scale)
                stats_due = (len(steps_hist["loss"]) + 1) % stats_every == 0
                params_before = [p.copy() for p in state.params] if stats_due else []  # the step overwrites them
                t0 = time.perf_counter()
                results = program.run(
                    "train_step", *state.args(), *inputs, y, state.loss_scale, state.good_steps, state.step
                )
                step_time += time.perf_counter() - t0
                timed += 1
                loss, overflow = state.update(results)
                if hasattr(model, "after_step"):  # an ONNX model's batch-norm running statistics
                    model.after_step(state.params, x)  # pyright: ignore[reportAttributeAccessIssue]  # an ONNX model's method, checked by hasattr just above
                loss_f = float(loss)
                skip = overflow and drops
                steps_hist["loss"].append(json_number(loss_f))
                steps_hist["scale"].append(json_number(float(state.loss_scale)))
                steps_hist["skipped"].append(skip)
                steps_hist["overflow"].append(overflow)
                skipped += skip
                if math.isfinite(loss_f):
                    losses.append(loss_f)
                global_step = len(steps_hist["loss"])
                if stats_due:
                    grads = compiled.grad_program.run("forward_grad", *params_before, *inputs, y)[1:]
                    sample = {
                        "step": global_step,
                        "scale": json_number(scale_before),
                        **underflow_stats(grads, scale_before),
                    }
                    history["underflow"]["samples"].append(sample)
                bar.set_postfix(
                    epoch=epoch + 1, loss=f"{loss_f:.4f}", scale=f"{float(state.loss_scale):g}", refresh=False
                )
                bar.update(1)
                consecutive = consecutive + 1 if skip else 0
                if consecutive == COLLAPSE_WARN or (skip and float(state.loss_scale) == 0 and collapse is None):
                    collapse = (
                        f"{consecutive} consecutive overflow steps up to step {global_step}, scale now {float(state.loss_scale):g}: "
                        "every update is skipped (the gradients overflow whatever the scale, or the scale has no floor: set --min-scale)"
                    )
                    logger.warning("loss scale collapse: %s", collapse)
                if consecutive >= COLLAPSE_STOP:
                    diverged = f"the loss scale collapsed: {COLLAPSE_STOP} consecutive overflow steps up to step {global_step} (MindSpore stops here too)"
                elif not _finite(state):
                    diverged = f"the parameters are no longer finite after step {global_step} (epoch {epoch + 1}, loss {loss_f:g}); lower --lr or use loss scaling"
                if diverged:
                    break
            if diverged:
                history["diverged"] = {"step": len(steps_hist["loss"]), "epoch": epoch + 1, "reason": diverged}
                break
            accuracy = evaluate(compiled, state.params, data.x_test, data.y_test, cfg.batch)
            history["epochs"].append(
                {
                    "epoch": epoch + 1,
                    "step": len(steps_hist["loss"]),
                    "train_loss": float(np.mean(losses)) if losses else None,
                    "test_accuracy": accuracy,
                    "skipped": skipped,
                    "loss_scale": json_number(float(state.loss_scale)),
                    "seconds": time.perf_counter() - t_epoch,
                }
            )
            logger.info(
                "epoch %d/%d: loss %.4f, test accuracy %.2f%%",
                epoch + 1,
                cfg.epochs,
                history["epochs"][-1]["train_loss"] or float("nan"),
                100 * accuracy,
            )
            if checkpoint is not None:
                save_checkpoint(checkpoint, state, meta, epoch + 1, history)
    finally:
        bar.close()

    samples = history["underflow"]["samples"]
    if samples:
        history["underflow"]["mean_unscaled"] = float(np.mean([s["unscaled"] for s in samples]))
        history["underflow"]["mean_scaled"] = float(np.mean([s["scaled"] for s in samples]))
    if history["epochs"]:
        accuracy = history["epochs"][-1]["test_accuracy"]
    else:
        accuracy = evaluate(compiled, state.params, data.x_test, data.y_test, cfg.batch)
    finite = [float(v) for v in steps_hist["loss"][-steps_per_epoch:] if isinstance(v, float)]
    if collapse:
        history["collapse"] = collapse
    result = TrainResult(
        config=cfg,
        model_name=model.name,
        history=history,
        test_accuracy=accuracy,
        train_loss=float(np.mean(finite)) if finite else float("nan"),
        steps=len(steps_hist["loss"]),
        skipped=int(sum(steps_hist["skipped"])),
        final_scale=float(state.loss_scale),
        step_seconds=step_time / timed if timed else 0.0,
        params=state.params,
        diverged=diverged,
        collapse=collapse,
        precision=precision_label(cfg.mode_name(), compiled.report),
    )
    history["summary"] = {
        "test_accuracy": result.test_accuracy,
        "train_loss": json_number(result.train_loss),
        "steps": result.steps,
        "skipped": result.skipped,
        "final_scale": json_number(result.final_scale),
        "step_ms": 1000 * result.step_seconds,
        "diverged": diverged,
        "precision": result.precision,
    }
    if out is not None:
        write_history(out / "history.json", history)
        title = f"{model.name}, {result.precision}, {cfg.loss_scale} loss scale" + (" (diverged)" if diverged else "")
        result.outputs = {"history": str(out / "history.json")}
        if available("matplotlib"):
            write_plot(out / "loss_scale.png", history, title)
            result.outputs["plot"] = str(out / "loss_scale.png")
        else:
            logger.warning("%s; it is not written", missing_message("matplotlib", f"the plot {out / 'loss_scale.png'}"))
        if checkpoint is not None and checkpoint.exists():
            result.outputs["checkpoint"] = str(checkpoint)
    return result
