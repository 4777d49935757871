"""The ascend interpreter: numpy kernels for every op, compiled into straight-line code.

* :class:`Program` / :func:`run_function`: execute functions of a module
  (optionally in float64, tracking peak memory, profiling per op type).
* :func:`compare_modes`: run a graph under each CANN precision mode and compare
  it with its float64 reference (over one or several input samples);
  :func:`attribute_errors`: each op's error under one mode, in program order.
* :mod:`ascend_mp.interpreter.ascend`: the kernel table and the numerics model.
"""

from ascend_mp.interpreter.compare import ALL_V1_MODES, Attribution, ModeResult, OpError, attribute_errors, compare_modes
from ascend_mp.interpreter.runner import Program, TensorSpec, run_function

__all__ = [
    "ALL_V1_MODES", "Attribution", "ModeResult", "OpError", "Program", "TensorSpec", "attribute_errors", "compare_modes", "run_function",
]
