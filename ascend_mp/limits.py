"""Size and depth limits checked before work starts, so a huge or cyclic input is a one-line error
instead of an out-of-memory kill, a numpy `ValueError` or a `RecursionError`.

- :func:`check_alloc` refuses a tensor whose bytes exceed :func:`max_tensor_bytes` (the machine's
  physical memory, or `ASCEND_MP_MAX_TENSOR_BYTES`), saying how much it would need.
- :func:`check_module_sizes` applies it to every statically shaped value of a module. A value of
  dynamic shape is checked by the interpreter as soon as the op making it returns, before any later
  op allocates, and a kernel's `MemoryError` names its op (see `interpreter.runner`).
- :func:`check_no_recursion` refuses a `func.call` cycle (the interpreter does not support recursion).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ascend_mp.errors import AscendError

ENV_MAX_BYTES = "ASCEND_MP_MAX_TENSOR_BYTES"
ENV_PIPE_WAIT = "ASCEND_MP_PIPE_WAIT"
PIPE_WAIT_S = 10.0
"""How long a tool waits for the other end of a named pipe (a writer for an input, a reader for an output)."""


def max_tensor_bytes() -> int:
    """The largest tensor (bytes) the tools allocate: `$ASCEND_MP_MAX_TENSOR_BYTES`, else physical memory."""
    text = os.environ.get(ENV_MAX_BYTES)
    if text is not None:
        try:
            return max(0, int(text))
        except ValueError:
            raise AscendError(f"{ENV_MAX_BYTES}: expected a number of bytes, got '{text}'") from None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 34


def max_input_bytes() -> int:
    """The largest input file the tools read: the tensor limit (no input can hold a bigger useful tensor)."""
    return max_tensor_bytes()


def pipe_wait_seconds() -> float:
    """`$ASCEND_MP_PIPE_WAIT` seconds, else PIPE_WAIT_S: the bounded wait for the other end of a named pipe."""
    text = os.environ.get(ENV_PIPE_WAIT)
    if text is None:
        return PIPE_WAIT_S
    try:
        value = float(text)
    except ValueError:
        raise AscendError(f"{ENV_PIPE_WAIT}: expected a number of seconds, got '{text}'") from None
    if not 0 <= value < 1e6:
        raise AscendError(f"{ENV_PIPE_WAIT}: expected a number of seconds from 0 to 1e6, got '{text}'")
    return value


def human_bytes(n: int) -> str:
    """`n` bytes in a readable unit (`40.0 TB`)."""
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB", "EB"):
        if value < 1000 or unit == "EB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def tensor_bytes(shape: Sequence[int], itemsize: int) -> int:
    """Exact bytes of a tensor (Python integers: no overflow for any dimension)."""
    return math.prod(int(d) for d in shape) * itemsize


def check_alloc(shape: Sequence[int], itemsize: int, what: str) -> None:
    """Refuse allocating a tensor of `shape` (elements of `itemsize` bytes) larger than the limit."""
    need = tensor_bytes(shape, itemsize)
    limit = max_tensor_bytes()
    if need > limit:
        elements = math.prod(int(d) for d in shape)
        raise AscendError(
            f"{what} needs {human_bytes(need)} ({elements} elements of {itemsize} bytes); the limit is "
            f"{human_bytes(limit)} (physical memory, or ${ENV_MAX_BYTES})"
        )


def _static_shape(t: Any) -> tuple[tuple[int, ...], int] | None:
    from xdsl.dialects.builtin import TensorType

    if not isinstance(t, TensorType):
        return None
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        return None
    width = getattr(t.element_type, "bitwidth", None)
    itemsize = max(1, (width or 32) // 8)
    return shape, itemsize


def check_module_sizes(values: Iterable[tuple[str, Any]]) -> None:
    """`check_alloc` for each (where, type) of statically shaped tensors."""
    for where, t in values:
        found = _static_shape(t)
        if found is not None:
            shape, itemsize = found
            check_alloc(shape, itemsize, f"{where} ({t})")


def module_values(module: Any, location_of: Callable[[Any], str]) -> Iterable[tuple[str, Any]]:
    """(location, type) of every block argument and op result of a module's functions (`location_of(op)`: where
    an op is, e.g. `ascend_mp.ir.location_of`)."""
    from xdsl.dialects import func

    for op in module.walk():
        if isinstance(op, func.FuncOp):
            if op.is_declaration:
                continue
            for i, arg in enumerate(op.args):
                yield f"{location_of(op)}: argument {i} of @{op.sym_name.data}", arg.type
            continue
        for r in op.results:
            yield location_of(op), r.type


def check_no_recursion(module: Any, location_of: Callable[[Any], str]) -> None:
    """Refuse a module whose functions call each other in a cycle (`@f` -> `@g` -> `@f`); `location_of(op)` says
    where the offending call is."""
    from xdsl.dialects import func

    calls: dict[str, list[tuple[str, Any]]] = {}
    for f in module.walk():
        if isinstance(f, func.FuncOp):
            calls[f.sym_name.data] = [
                (op.callee.root_reference.data, op) for op in f.walk() if isinstance(op, func.CallOp)
            ]
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for root in calls:
        if state.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path = [root]
        state[root] = 1
        while stack:
            name, i = stack.pop()
            edges = calls.get(name, [])
            if i < len(edges):
                stack.append((name, i + 1))
                callee, op = edges[i]
                if state.get(callee) == 1:
                    cycle = path[path.index(callee) :] + [callee]
                    chain = " -> ".join(f"@{n}" for n in cycle)
                    raise AscendError(f"{location_of(op)}: recursive call ({chain}): recursion is not supported")
                if callee in calls and not state.get(callee):
                    state[callee] = 1
                    path.append(callee)
                    stack.append((callee, 0))
            else:
                state[name] = 2
                path.pop()
