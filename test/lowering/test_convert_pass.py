"""convert-ascend-to-linalg as a pass: verifier-valid output with no ascend op left, idempotent,
deterministic; its table names only dialect ops."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_mp.dialects.ascend import OPS_BY_TYPE
from ascend_mp.errors import AscendPassError
from ascend_mp.ir import make_context, print_module, read_module
from ascend_mp.passes import PASSES
from ascend_mp.passes.lowering import LOWERINGS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _lowered(name: str, mode: str | None = None) -> str:
    module = read_module(str(EXAMPLES / name), make_context())
    if mode is not None:
        PASSES["ascend-precision"]()(mode=mode).apply(make_context(), module)
    PASSES["convert-ascend-to-linalg"]()().apply(make_context(), module)
    module.verify()
    assert not any(op.name.startswith("ascend.") for op in module.walk())
    text = print_module(module, generic=True)
    PASSES["convert-ascend-to-linalg"]()().apply(make_context(), module)  # nothing left to lower
    assert print_module(module, generic=True) == text
    return text


@pytest.mark.parametrize("name", ["mlp.mlir", "cnn.mlir", "run_mlp_train.mlir"])
@pytest.mark.parametrize("mode", [None, "allow_mix_precision"])
def test_valid_idempotent_deterministic(name: str, mode: str | None) -> None:
    assert _lowered(name, mode) == _lowered(name, mode)


def test_every_dialect_op_has_a_lowering() -> None:
    assert set(LOWERINGS) == {f"ascend.{t}" for t in OPS_BY_TYPE}
    assert PASSES["convert-ascend-to-linalg"]().name == "convert-ascend-to-linalg"


def test_missing_lowering_is_one_line_and_rewrites_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """An op added to the dialect without a lowering: the pass names it and its location."""
    monkeypatch.delitem(LOWERINGS, "ascend.SoftmaxV2")
    module = read_module(str(EXAMPLES / "mlp.mlir"), make_context())
    before = str(module)
    with pytest.raises(AscendPassError) as e:
        PASSES["convert-ascend-to-linalg"]()().apply(make_context(), module)
    assert str(e.value).endswith("mlp.mlir:8:3: convert-ascend-to-linalg: ascend.SoftmaxV2 has no lowering to linalg")
    assert str(module) == before


def test_scalar_blob_is_a_literal_iree_compiles() -> None:
    """A 0-d float16 blob (an attention mask's -inf) is lowered to a literal: iree-compile 3.13 crashes on
    the blob; the compiled module computes max(x, -inf) = x and -inf where x is -inf."""
    import numpy as np

    from ascend_mp.backend.iree import IreeProgram
    from ascend_mp.ir import parse_module

    module = parse_module(SCALAR_BLOB, "<scalar>", make_context())
    x = np.array([1.5, -np.inf, -2.0, 0.0], np.float16)
    (y,) = IreeProgram.from_module(module).run("mask", x)
    np.testing.assert_array_equal(y, x)
    assert y.dtype == np.float16


SCALAR_BLOB = """
func.func @mask(%x: tensor<4xf16>) -> tensor<4xf16> {
  %m = ascend.Const dense_resource<m> : tensor<f16> {name = "m"}
  %y = ascend.Maximum %x, %m : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}
{-#
  dialect_resources: {
    builtin: {
      m: "0x0200000000fc"
    }
  }
#-}
"""
