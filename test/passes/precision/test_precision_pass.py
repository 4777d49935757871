"""The ascend-precision pass (docs/design.md §5): the pass under its name, its options and pipelines (passes/precision/pass_.py, options.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from precision_util import MLP, opt, parse, write

from ascend_mp.errors import AscendError
from ascend_mp.ir import print_module
from ascend_mp.modes import V2_TO_V1
from ascend_mp.passes import PASSES
from ascend_mp.passes.precision import (
    AscendPrecisionPass,
    resolve_mode,
    run_precision,
)


def test_registered_under_its_name() -> None:
    assert PASSES["ascend-precision"]() is AscendPrecisionPass
    assert AscendPrecisionPass.name == "ascend-precision"


@pytest.mark.parametrize(
    ("mode", "mode_v2", "expected"),
    [
        (None, None, "force_fp16"),
        ("allow_mix_precision", None, "allow_mix_precision"),
        *[(None, v2, v1) for v2, v1 in V2_TO_V1.items()],
    ],
)
def test_resolve_mode(mode: str | None, mode_v2: str | None, expected: str) -> None:
    assert resolve_mode(mode, mode_v2) == expected


def test_mode_errors_quote_the_value() -> None:
    with pytest.raises(AscendError, match="unknown precision_mode 'fp17'"):
        resolve_mode("fp17", None)
    with pytest.raises(AscendError, match="unknown precision_mode_v2 'mixed_float8'"):
        resolve_mode(None, "mixed_float8")
    with pytest.raises(AscendError, match="'force_fp16' and precision_mode_v2 'fp16' are mutually exclusive"):
        resolve_mode("force_fp16", "fp16")


def test_options_are_validated_before_rewriting(tmp_path: Path) -> None:
    module = parse(MLP)
    before = print_module(module)
    with pytest.raises(AscendError, match="no-such.json"):
        run_precision(module, mode="allow_mix_precision", modify_mixlist=str(tmp_path / "no-such.json"))
    with pytest.raises(AscendError, match="unknown soc_version 'ascend310'"):
        run_precision(module, soc="ascend310")
    with pytest.raises(AscendError, match="cannot write the precision report"):
        run_precision(module, report=str(tmp_path / "no" / "dir" / "r.json"))
    assert print_module(module) == before


def test_pass_options_from_a_pipeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path, "m.mlir", MLP)
    mixlist = write(tmp_path, "ops.json", json.dumps({"black-list": {"to-add": ["MatMulV2"]}}))
    code, out, _ = opt([src, "-p", f'ascend-precision{{mode=allow_mix_precision modify-mixlist="{mixlist}"}}'], capsys)
    assert code == 0
    assert 'ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>' in out
