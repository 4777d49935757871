"""Execution backends besides the numpy interpreter.

:func:`run_function` runs one function of an ascend module on a chosen backend: `interpreter` (the
numpy interpreter, `ascend_mp.interpreter`) or `iree` (lowered with `convert-ascend-to-linalg`,
compiled by IREE for `device` cpu or cuda, see :mod:`ascend_mp.backend.iree`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

BACKENDS = ("interpreter", "iree")


def run_function(
    module: ModuleOp, func_name: str, *args: Any, backend: str = "interpreter", device: str = "cpu"
) -> list[np.ndarray[Any, Any]]:
    """Run `func_name` of `module` on `args` with `backend` (`device` is IREE's: cpu or cuda)."""
    from ascend_mp.errors import AscendError

    if backend == "interpreter":
        if device != "cpu":
            raise AscendError(f"the interpreter runs on the cpu only, got device '{device}'")
        from ascend_mp.interpreter import run_function as interpret

        return interpret(module, func_name, *args)
    if backend == "iree":
        from ascend_mp.backend.iree import run_module

        return run_module(module, func_name, list(args), device)
    raise AscendError(f"unknown backend '{backend}'; expected one of {', '.join(BACKENDS)}")
