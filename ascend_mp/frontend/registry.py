"""The converter registry: `CONVERTERS[op_type](cx, node)`, filled by `converters.py`'s `@converter`.

Its own module so that the converters and the importer that calls them do not import each other:
`converters` registers here; `onnx_import` imports `converters` (which fills it) and reads `CONVERTERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ascend_mp.errors import AscendError
from ascend_mp.frontend.fold import attrs_of

if TYPE_CHECKING:
    import onnx

    from ascend_mp.frontend.onnx_import import Converter

Convert = Callable[["Converter", "Node"], None]
"""A converter: `convert(cx, node)` emits the node's ops through the importer `cx`."""
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


class Node:
    """An ONNX node as a converter sees it."""

    def __init__(self, proto: onnx.NodeProto):
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name or f"{proto.op_type}_{proto.output[0]}"
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = attrs_of(proto)

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def input(self, i: int) -> str | None:
        """The i-th input name, None when absent or empty (an omitted optional input)."""
        return self.inputs[i] if i < len(self.inputs) and self.inputs[i] else None
