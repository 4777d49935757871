"""convert-ascend-to-linalg as a pass: verifier-valid output with no ascend op left, idempotent,
deterministic; its table names only dialect ops."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_mp.dialects.ascend import OPS_BY_TYPE
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


def test_table_names_dialect_ops() -> None:
    dialect = {f"ascend.{t}" for t in OPS_BY_TYPE}
    assert set(LOWERINGS) <= dialect
    assert PASSES["convert-ascend-to-linalg"]().name == "convert-ascend-to-linalg"
