"""The ascend interpreter: numpy kernels for every op, compiled into straight-line code.

* :class:`Program` / :func:`run_function`: execute functions of a module
  (optionally in float64, tracking peak memory, profiling per op type).
* :func:`compare_modes`: run a graph under each CANN precision mode and compare
  it with its float64 reference (over one or several input samples);
  :func:`attribute_errors`: each op's error under one mode, in program order.
* :mod:`ascend_mp.interpreter.kernels`: the kernel table (one module per op family) and the
  numerics model (:mod:`~ascend_mp.interpreter.numerics`, :mod:`~ascend_mp.interpreter.compiled`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ascend_mp.interpreter.compare import (
        ALL_V1_MODES,
        Attribution,
        ModeResult,
        OpError,
        attribute_errors,
        compare_modes,
    )
    from ascend_mp.interpreter.numerics import DIVERGENCE_THRESHOLD
    from ascend_mp.interpreter.runner import Program, TensorSpec, run_function

__all__ = [
    "DIVERGENCE_THRESHOLD",
    "ALL_V1_MODES",
    "Attribution",
    "ModeResult",
    "OpError",
    "Program",
    "TensorSpec",
    "attribute_errors",
    "compare_modes",
    "run_function",
]

_HOME = {name: "compare" for name in __all__} | {
    "DIVERGENCE_THRESHOLD": "numerics",
    "Program": "runner",
    "TensorSpec": "runner",
    "run_function": "runner",
}
"""Which submodule defines each name: loaded on first use (running a function needs no comparison code)."""


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
