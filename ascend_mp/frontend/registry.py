"""The converter registry: `CONVERTERS[op_type](cx, node)`, filled by `converters.py`'s `@converter`.

Its own module so that the converters and the importer that calls them do not import each other:
`converters` registers here; `onnx_import` imports `converters` (which fills it) and reads `CONVERTERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ascend_mp.errors import AscendError

if TYPE_CHECKING:
    from ascend_mp.frontend.onnx_import import Converter, Node

Convert = Callable[["Converter", "Node"], None]
CONVERTERS: dict[str, Convert] = {}


class Unsupported(AscendError):
    """A node a converter cannot express (an attribute combination, a non-constant operand)."""


def converter(*op_types: str) -> Callable[[Convert], Convert]:
    """Register the decorated function as the converter of these ONNX op types."""

    def register(fn: Convert) -> Convert:
        for t in op_types:
            CONVERTERS[t] = fn
        return fn

    return register


__all__ = ["CONVERTERS", "Convert", "Unsupported", "converter"]

