"""Helpers of the lowering tests: run a module through IREE, the interpreter and the float64 reference."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.backend.iree import IreeProgram
from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context
from ascend_mp.passes import PASSES

Array = np.ndarray[Any, Any]
FP32_TOL = 1e-5
"""fp32 through IREE vs a float64 reference: max relative error."""
ENVELOPE = 2.0
"""Under a low-precision mode IREE's error vs float64 may be at most this times the interpreter's."""
FLOOR = 1e-6
"""An absolute floor for the envelope (a mode that leaves a graph in fp32 has an interpreter error near 0)."""


def rel_err(y: Array, r: Array) -> float:
    """max|y - r| / max|r|, in float64."""
    y64, r64 = np.asarray(y, np.float64), np.asarray(r, np.float64)
    scale = float(np.abs(r64).max()) or 1.0
    return float(np.abs(y64 - r64).max()) / scale


def with_mode(module: ModuleOp, mode: str | None) -> ModuleOp:
    """A copy of `module` after `ascend-precision{mode=...}` (None: unchanged)."""
    m = module.clone()
    if mode is not None:
        PASSES["ascend-precision"]()(mode=mode).apply(make_context(), m)
    return m


def iree_run(module: ModuleOp, name: str, *inputs: Array) -> list[Array]:
    return IreeProgram.from_module(module, "cpu").run(name, *inputs)


def interpret(module: ModuleOp, name: str, *inputs: Array, reference: bool = False) -> list[Array]:
    return Program.from_module(module, reference=reference).run(name, *inputs)


def envelope_errors(module: ModuleOp, name: str, inputs: list[Array], mode: str) -> list[tuple[float, float]]:
    """Per output: (IREE's error, the interpreter's error), both vs the float64 run of the original graph."""
    ref = interpret(module, name, *inputs, reference=True)
    decided = with_mode(module, mode)
    ours = iree_run(decided, name, *inputs)
    theirs = interpret(decided, name, *inputs)
    return [(rel_err(a, r), rel_err(b, r)) for a, b, r in zip(ours, theirs, ref)]
