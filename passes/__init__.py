"""ascend-mp passes (installed as `ascend_mp.passes`), one pass per module.

`PASSES` maps each pass name to a factory that imports its module on first use,
so that tools start fast. Adding a pass is one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass


def _lazy(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        return getattr(import_module(f"ascend_mp.passes.{module}"), cls)

    return load


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "ascend-attach-caps": _lazy("attach_caps", "AttachCapsPass"),
    "ascend-precision": _lazy("precision", "AscendPrecisionPass"),
    "ascend-autodiff": _lazy("autodiff", "AutodiffPass"),
    "ascend-loss-scale": _lazy("loss_scale", "LossScalePass"),
    "ascend-store-low-weights": _lazy("store_weights", "StoreLowWeightsPass"),
    "ascend-impl-mode": _lazy("impl_mode", "ImplModePass"),
    "convert-ascend-to-linalg": _lazy("convert_ascend_to_linalg", "ConvertAscendToLinalgPass"),
}
