"""The ascend-precision pass (docs/design.md §5): one-line errors of the pass and its files, through ascend-opt."""

from __future__ import annotations

from pathlib import Path

import pytest
from precision_util import CNN, one_line_error, opt, write


@pytest.fixture
def src(tmp_path: Path) -> str:
    return write(tmp_path, "m.mlir", CNN)


def test_must_keep_violation(src: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = opt([src, "--precision_mode=must_keep_origin_dtype"], capsys)
    assert code == 1 and out == ""
    msg = one_line_error(err)
    assert msg.startswith(f"{src}:2:3: Conv2D 'conv1' has no kernel for its original dtype float32")
    assert msg.endswith("kernels: (f16, f16, f16) -> f16")


def test_both_modes(src: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = opt([src, "--precision_mode=allow_mix_precision", "--precision_mode_v2=origin"], capsys)
    assert code == 1
    assert (
        "precision_mode 'allow_mix_precision' and precision_mode_v2 'origin' are mutually exclusive"
        in one_line_error(err)
    )


def test_unknown_mode_in_pipeline(src: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = opt([src, "-p", "ascend-precision{mode=mixed}"], capsys)
    assert code == 1
    assert "unknown precision_mode 'mixed'" in one_line_error(err)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "ops.json:1:2: invalid JSON"),
        ('{"grey-list": {}}', "key 'grey-list': unknown key"),
        ('{"white-list": {"to-add": "Relu"}}', "key 'white-list.to-add': expected an array of op types"),
        ('{"white-list": {"to-add": [3]}}', "key 'white-list.to-add[0]': expected a string op type"),
        ('{"white-list": {"to-append": []}}', "key 'white-list.to-append': unknown key"),
    ],
)
def test_bad_mixlist(tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str], text: str, expected: str) -> None:
    path = write(tmp_path, "ops.json", text)
    code, _, err = opt([src, "--precision_mode=allow_mix_precision", f"--modify_mixlist={path}"], capsys)
    assert code == 1
    assert expected in one_line_error(err)


def test_bad_keep_dtype_line(tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "keep.txt", "conv1\nOpType::\n")
    code, _, err = opt([src, f"--keep_dtype={path}"], capsys)
    assert code == 1
    assert "keep.txt:2: expected an op name or OpType::<type>, got 'OpType::'" in one_line_error(err)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("conv1::InputDtype:float16\n", "custom.cfg:1: missing OutputDtype:<dtypes>"),
        ("conv1::InputDtype:float17,OutputDtype:float16\n", "expected a dtype"),
        ("conv1 InputDtype:float16\n", "custom.cfg:1: expected '<op name>::InputDtype"),
    ],
)
def test_bad_customize_line(
    tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = write(tmp_path, "custom.cfg", text)
    code, _, err = opt([src, f"--customize_dtypes={path}"], capsys)
    assert code == 1
    assert expected in one_line_error(err)


def test_unsupported_customize_combination(tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "custom.cfg", "# conv in fp32\nconv1::InputDtype:float32,float32,OutputDtype:float32\n")
    code, _, err = opt([src, "--precision_mode=force_fp16", f"--customize_dtypes={path}"], capsys)
    assert code == 1
    msg = one_line_error(err)
    assert (
        msg
        == f"{src}:2:3: Conv2D 'conv1' has no kernel (f32, f32) -> f32 (customize_dtypes {path}:2); kernels: (f16, f16, f16) -> f16"
    )


@pytest.mark.parametrize("flag", ["modify_mixlist", "keep_dtype", "customize_dtypes", "op_info"])
def test_missing_files(tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    missing = tmp_path / "missing.txt"
    code, _, err = opt([src, "--precision_mode=allow_mix_precision", f"--{flag}={missing}"], capsys)
    assert code == 1
    assert f"{missing}: cannot read" in one_line_error(err)


def test_report_into_a_missing_directory(tmp_path: Path, src: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = opt([src, "--precision_mode=force_fp16", f"--precision-report={tmp_path}/nope/r.json"], capsys)
    assert code == 1 and out == ""
    assert "cannot write the precision report" in one_line_error(err)
