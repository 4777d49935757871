"""A torch entry point: `from_torch(module, example_inputs)` exports a `torch.nn.Module` to ONNX in memory
with one of torch's two exporters and imports the result as `import_onnx` does.

torch is optional (the `models` extra, or `pip install torch==2.13.0` for the CPU build): it is imported
here, on the first call, and a missing torch is one line naming how to install it.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ascend_mp.errors import AscendError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

EXPORTERS = ("dynamo", "legacy")
OPSETS = {"dynamo": 18, "legacy": 17}
"""The opset each exporter writes (the dynamo exporter's default; the TorchScript exporter's newest stable)."""


def from_torch(
    module: Any,
    example_inputs: Any,
    exporter: str = "dynamo",
    input_names: Sequence[str] | None = None,
    input_shape: str | Mapping[str, Sequence[int]] | None = None,
    name: str | None = None,
) -> ModuleOp:
    """Export `module` (a `torch.nn.Module`, put in eval mode) called on `example_inputs` (a tensor or a
    tuple of tensors) to ONNX in memory and import it: one `func.func @main` whose arguments are the
    inputs, named `input_names` (default: torch's names), as `import_onnx` builds it (`input_shape` and
    `name` as there). `exporter`: `"dynamo"` (torch.export, needs onnxscript) or `"legacy"` (TorchScript).
    Export failures are one-line `AscendError`s naming the exporter."""
    if exporter not in EXPORTERS:
        raise AscendError(f"from_torch: unknown exporter '{exporter}'; expected one of {', '.join(EXPORTERS)}")
    try:  # by name: torch is optional, and present or not the type checker sees the same module (Any)
        torch: Any = importlib.import_module("torch")
    except ImportError:
        raise AscendError(
            "from_torch needs torch: pip install 'ascend-mp[models]' (or torch==2.13.0, the CPU build)"
        ) from None
    from ascend_mp.frontend.onnx_import import import_onnx

    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    kwargs: dict[str, Any] = {"opset_version": OPSETS[exporter]}
    if input_names is not None:
        kwargs["input_names"] = list(input_names)
    label = name or f"<torch {type(module).__name__}>"
    module.eval()
    try:
        with torch.no_grad():
            if exporter == "dynamo":
                program = torch.onnx.export(module, args, dynamo=True, verbose=False, **kwargs)
                assert program is not None
                model: Any = program.model_proto
            else:
                buffer = io.BytesIO()
                torch.onnx.export(module, args, buffer, dynamo=False, **kwargs)
                model = buffer.getvalue()
    except Exception as e:  # noqa: BLE001 - torch's refusal, in one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise AscendError(f"{label}: the {exporter} exporter failed: {type(e).__name__}: {first[:200]}") from None
    return import_onnx(model, input_shape, label)
