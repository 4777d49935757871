"""The configuration of one training run: the model, the options of the passes it compiles with, the loop.

:class:`TrainConfig` holds a :class:`PrecisionOptions` (the `ascend-precision` pass's options, shared with
`ascend-opt`'s ATC flags) and a :class:`LossScaleOptions` (the `ascend-loss-scale` pass's); :func:`training_passes`
builds the pipeline from the registered passes, in the order `ascend-opt` gives them (`order_training_passes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from xdsl.passes import ModulePass

from ascend_mp.builder import Sequential, mlp, small_cnn
from ascend_mp.dtypes import BF16, F32, mode_low, short
from ascend_mp.errors import AscendError
from ascend_mp.modes import DEFAULT_MODE as DEFAULT_PASS_MODE
from ascend_mp.modes import V1_MODES, V2_TO_V1
from ascend_mp.passes.loss_scale import (
    MANAGERS,
    OPTIMIZERS,
    PRESETS,
    LossScaleConfig,
    LossScaleOptions,
    order_training_passes,
)
from ascend_mp.precision_options import PrecisionOptions, option_flags

MODELS: dict[str, Callable[[], Sequential]] = {"mlp": mlp, "cnn": small_cnn}
"""Built-in models: the digits MLP (64-128-10) and the small CNN (1x8x8 input)."""

DEFAULT_MODE = "allow_fp32_to_fp16"
"""CANN's default precision mode for training (docs/design.md §5)."""

FP16_MODES = frozenset({"allow_mix_precision", "allow_mix_precision_fp16", "force_fp16", "allow_fp32_to_fp16"})
"""Modes that run ops in fp16, where gradients need loss scaling."""

INT32_MAX = 2**31 - 1


def reduced_dtype(mode: str | None) -> str:
    """The low-precision dtype a mode reduces to: `bf16`, `fp16`, or `fp32` (no precision pass)."""
    if mode is None:
        return short(F32.name)
    return short(BF16.name if mode.endswith(" bf16") else mode_low(mode))  # a policy's label: `torch bf16`


_UNSET = object()


def _default_precision() -> PrecisionOptions:
    return PrecisionOptions(mode=DEFAULT_MODE)


def _default_scaling() -> LossScaleOptions:
    return LossScaleOptions(optimizer="momentum", lr=0.02)


@dataclass(init=False)
class TrainConfig:
    """One training run: the model, the options of the precision and loss-scale passes, and the loop's settings.

    `precision=None` trains the fp32 graph as built (no precision pass). The pass options may also be given by
    name, flat: a :class:`PrecisionOptions` field or its ATC flag (`precision_mode`, `keep_dtype`, `soc`, ...;
    `precision_mode=None`: no precision pass), a :class:`LossScaleOptions` field (`lr`, `scale`, ...), or
    `loss_scale` for the manager (`ascend-train --loss-scale`): `TrainConfig(precision_mode="allow_mix_precision",
    loss_scale="fixed", scale=1024)`."""

    model: str = "mlp"
    precision: PrecisionOptions | None = field(default_factory=_default_precision)
    scaling: LossScaleOptions = field(default_factory=_default_scaling)
    """The loss-scale manager and the optimizer (the `ascend-loss-scale` pass's options)."""
    epochs: int = 30
    batch: int = 32
    seed: int = 0
    subset: int | None = None
    keep_loss_fp32: bool = True
    stats_every: int = 0
    """Steps between underflow samples (0: one per epoch)."""

    def __init__(
        self,
        model: str = "mlp",
        precision: PrecisionOptions | None | object = _UNSET,
        scaling: LossScaleOptions | None = None,
        epochs: int = 30,
        batch: int = 32,
        seed: int = 0,
        subset: int | None = None,
        keep_loss_fp32: bool = True,
        stats_every: int = 0,
        **options: Any,
    ) -> None:
        self.model, self.epochs, self.batch, self.seed = model, epochs, batch, seed
        self.subset, self.keep_loss_fp32, self.stats_every = subset, keep_loss_fp32, stats_every
        flags = option_flags()
        precision_fields = {f.name for f in fields(PrecisionOptions)}
        scaling_fields = {f.name for f in fields(LossScaleOptions)}
        by_precision: dict[str, Any] = {}
        by_scaling: dict[str, Any] = {}
        for key, value in options.items():
            name = flags.get(key, key)
            if name in precision_fields:
                by_precision[name] = value
            elif key == "loss_scale" or key in scaling_fields:
                by_scaling["manager" if key == "loss_scale" else key] = value
            else:
                raise TypeError(f"TrainConfig got an unexpected option '{key}'")
        if precision is _UNSET:
            precision = _default_precision()
            if "mode" not in by_precision and (
                "mode_v2" in by_precision or by_precision.get("policy") not in (None, "cann")
            ):
                by_precision["mode"] = (
                    None  # the other way of naming the mode, or a framework policy, replaces the default
                )
            elif "mode" in by_precision and by_precision["mode"] is None:
                precision = None  # precision_mode=None: the fp32 graph, no precision pass
        assert precision is None or isinstance(precision, PrecisionOptions)
        self.precision = precision if precision is None or not by_precision else replace(precision, **by_precision)
        self.scaling = replace(scaling or _default_scaling(), **by_scaling)

    @property
    def precision_mode(self) -> str | None:
        """The precision pass's v1 mode (v2 names resolved), or None when no precision pass runs."""
        if self.precision is None:
            return None
        if self.precision.mode_v2 is not None and self.precision.mode is None:
            return V2_TO_V1.get(self.precision.mode_v2, self.precision.mode_v2)
        return self.precision.mode

    @property
    def loss_scale(self) -> str:
        """The loss-scale manager: `dynamic`, `fixed` or `none`."""
        return self.scaling.manager

    def validate(self, custom_model: bool = False) -> LossScaleConfig:
        """Check every field (one-line errors); returns the resolved loss-scale configuration."""
        if not custom_model and self.model not in MODELS:
            raise AscendError(f"unknown model '{self.model}' (models: {', '.join(MODELS)})")
        mode = self.precision.mode if self.precision is not None else None
        if mode is not None and mode not in V1_MODES:
            raise AscendError(f"unknown precision mode '{mode}' (modes: {', '.join(V1_MODES)})")
        for name, value, allowed in (
            ("loss_scale", self.scaling.manager, MANAGERS),
            ("optimizer", self.scaling.optimizer, OPTIMIZERS),
        ):
            if value not in allowed:
                raise AscendError(f"{name.replace('_', '-')} must be one of {', '.join(allowed)}, got '{value}'")
        if self.scaling.preset is not None and self.scaling.preset not in PRESETS:
            raise AscendError(f"preset must be one of {', '.join(PRESETS)}, got '{self.scaling.preset}'")
        for name in ("epochs", "batch"):
            if not 1 <= getattr(self, name) <= INT32_MAX:
                raise AscendError(f"{name} must be positive, got {getattr(self, name)}")
        if self.subset is not None and self.subset < 1:
            raise AscendError(f"the training subset must be positive, got {self.subset}")
        if not 0 <= self.stats_every <= INT32_MAX:
            raise AscendError(f"stats-every must be >= 0, got {self.stats_every}")
        if not 0 <= self.seed < 2**32:
            raise AscendError(f"seed must be in [0, 2^32), got {self.seed}")
        return self.scaling.config(warn=False)

    def flat(self) -> dict[str, Any]:
        """Every option by name, flat (what `history.json` records): the loop's settings, `precision_mode` and the
        other precision options, `loss_scale` (the manager) and the other loss-scale options."""
        out: dict[str, Any] = {"model": self.model, "precision_mode": self.precision_mode}
        precision = self.precision or PrecisionOptions()
        out |= {
            f.name: getattr(precision, f.name) for f in fields(PrecisionOptions) if f.name not in ("mode", "mode_v2")
        }
        out["loss_scale"] = self.scaling.manager
        out |= {f.name: getattr(self.scaling, f.name) for f in fields(LossScaleOptions) if f.name != "manager"}
        out |= {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("model", "precision", "scaling")}
        return out

    def low_dtype(self) -> str:
        """The dtype the precision pass reduces to: `fp16`, `bf16`, or `fp32` (no precision pass)."""
        if self.precision is not None and self.precision.policy not in (None, "cann"):
            return self.precision.amp_dtype or "fp16"
        return reduced_dtype(self.precision_mode)

    def mode_name(self) -> str | None:
        """The mode or framework policy the precision pass runs (`allow_mix_precision`, `amp_policy torch`);
        None: no precision pass."""
        if self.precision is None:
            return None
        if self.precision.policy not in (None, "cann"):
            return f"amp_policy {self.precision.policy}"
        return self.precision_mode or DEFAULT_PASS_MODE

    def mode_label(self) -> str:
        """The mode (or framework policy) and the dtype it reduces to: `allow_mix_precision (fp16)`, `fp32`."""
        name = self.mode_name()
        return "fp32" if name is None else f"{name} ({self.low_dtype()})"


def training_passes(cfg: TrainConfig, wrt: int | None = None) -> tuple[ModulePass, ...]:
    """The pipeline that compiles `cfg`'s training step, built from the registered passes and ordered as
    `ascend-opt` orders it (`order_training_passes`): ascend-autodiff, ascend-precision, ascend-loss-scale.
    `wrt`: the number of trained leading arguments of `@forward` (default: all but the input and labels)."""
    from ascend_mp.passes import PASSES

    autodiff = PASSES["ascend-autodiff"]()(keep_loss=cfg.keep_loss_fp32, wrt=wrt)  # pyright: ignore[reportCallIssue]  # PASSES is typed type[ModulePass]; this one is the autodiff pass, which has keep_loss
    scaling = PASSES["ascend-loss-scale"]()(**{f.name: getattr(cfg.scaling, f.name) for f in fields(LossScaleOptions)})
    precision = None if cfg.precision is None else PASSES["ascend-precision"]()(**cfg.precision.given())
    return order_training_passes((autodiff, scaling), precision)
