"""Frontends: models from other formats as ascend IR (today: ONNX, as ATC's `--framework=5`)."""

from ascend_mp.frontend.model import InputShapes, parse_input_shape
from ascend_mp.frontend.onnx_import import import_onnx

__all__ = ["InputShapes", "import_onnx", "parse_input_shape"]
