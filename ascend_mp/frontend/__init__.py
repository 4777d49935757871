"""Frontends: models from other formats as ascend IR (today ONNX, as ATC's `--framework=5`).

```python
from ascend_mp.frontend import import_onnx, from_torch

module = import_onnx("resnet18.onnx", input_shape="input:1,3,224,224")
module = from_torch(torch_module, (example_input,), exporter="legacy")  # torch is optional
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ascend_mp.errors import AscendError
from ascend_mp.frontend.model import InputShapes, parse_input_shape

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp


def import_onnx(source: Any, input_shape: Any = None, name: str | None = None) -> ModuleOp:
    """Import an ONNX model as a module (see `ascend_mp.frontend.onnx_import.import_onnx`)."""
    need_onnx()
    from ascend_mp.frontend.onnx_import import import_onnx as run

    return run(source, input_shape, name)


def need_onnx() -> None:
    """A one-line AscendError when the onnx package is not installed."""
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise AscendError("reading ONNX models needs the onnx package (pip install 'ascend-mp[onnx]')") from None


__all__ = ["InputShapes", "import_onnx", "need_onnx", "parse_input_shape"]


def from_torch(module: Any, example_inputs: Any, exporter: str = "dynamo", **options: Any) -> ModuleOp:
    """A torch module exported to ONNX in memory and imported (see `ascend_mp.frontend.torch_export.from_torch`)."""
    from ascend_mp.frontend.torch_export import from_torch as run

    return run(module, example_inputs, exporter, **options)
