"""The ascend -> upstream MLIR lowering, one module per op family (as the dialect and the interpreter's
kernels): importing this package fills :data:`LOWERINGS`; :func:`lower_op` replaces one op."""

from __future__ import annotations

from ascend_mp.passes.lowering import cast, cube, elementwise, grad, optim, reduce, shape, status  # noqa: F401  (they register)
from ascend_mp.passes.lowering.emit import Emitter, LoweringError
from ascend_mp.passes.lowering.registry import LOWERINGS, lowers
from ascend_mp.passes.lowering.status import StatusTracker

__all__ = ["LOWERINGS", "Emitter", "LoweringError", "StatusTracker", "lowers"]
