"""Small ONNX graphs (a conv block, an attention block) imported with `import_onnx`, lowered and compiled
by IREE: fp32 against onnxruntime, and under the low-precision modes within twice the interpreter's
error against the float64 run of the imported graph."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # test/onnx_util.py
from lowering_util import ENVELOPE, FLOOR, FP32_TOL, envelope_errors, iree_run, rel_err  # noqa: E402
from onnx_util import run_ort  # noqa: E402

from ascend_mp.frontend import import_onnx  # noqa: E402
from benchmarks.onnx_blocks import attention_block, conv_block  # noqa: E402

Array = np.ndarray[Any, Any]
MODES = ["force_fp16", "allow_mix_precision", "allow_mix_precision_bf16"]


BLOCKS = {"conv": conv_block, "attention": attention_block}


@pytest.mark.parametrize("block", list(BLOCKS))
def test_fp32_matches_onnxruntime(block: str) -> None:
    model, inputs = BLOCKS[block]()
    module = import_onnx(model)
    (want,) = run_ort(model, inputs)
    (y,) = iree_run(module, "main", *inputs.values())
    assert rel_err(y, want) <= FP32_TOL


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("block", list(BLOCKS))
def test_low_precision_within_interpreter_envelope(block: str, mode: str) -> None:
    model, inputs = BLOCKS[block]()
    module = import_onnx(model)
    for e_iree, e_interp in envelope_errors(module, "main", list(inputs.values()), mode):
        assert e_iree <= ENVELOPE * e_interp + FLOOR, f"IREE {e_iree:.3g} vs interpreter {e_interp:.3g}"
