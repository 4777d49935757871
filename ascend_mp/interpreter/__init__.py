"""The ascend interpreter: numpy kernels for every op, compiled into straight-line code.

* :class:`Program` / :func:`run_function`: execute functions of a module
  (optionally in float64, tracking peak memory, profiling per op type).
* :func:`compare_modes`: run a graph under each CANN precision mode and compare
  it with its float64 reference.
* :mod:`ascend_mp.interpreter.ascend`: the kernel table and the numerics model.
"""

from ascend_mp.interpreter.compare import ALL_V1_MODES, ModeResult, compare_modes
from ascend_mp.interpreter.runner import Program, TensorSpec, run_function

__all__ = ["ALL_V1_MODES", "ModeResult", "Program", "TensorSpec", "compare_modes", "run_function"]
