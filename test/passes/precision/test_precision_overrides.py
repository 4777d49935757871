"""The ascend-precision pass (docs/design.md §5): modify_mixlist, keep_dtype, customize_dtypes (passes/precision/decide.py, ascend_mp/config.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from precision_util import CNN, MATMULS, MLP, dtypes, named, run, write


def test_customize_beats_keep_beats_mixlist(tmp_path: Path) -> None:
    mixlist = write(tmp_path, "ops.json", json.dumps({"white-list": {"to-add": ["Log", "SoftmaxV2"]}}))
    keep = write(tmp_path, "keep.txt", "log\nsoftmax\n")
    custom = write(tmp_path, "custom.cfg", "softmax::InputDtype:float16,OutputDtype:float16\n")
    _, report = run(MLP, mode="allow_mix_precision", modify_mixlist=mixlist, keep_dtype=keep, customize_dtypes=custom)
    assert (report.by_name("softmax").reason, report.by_name("softmax").chosen.outputs) == (
        "customize_dtypes",
        ("f16",),
    )
    assert (report.by_name("log").reason, report.by_name("log").chosen.outputs) == ("keep_dtype", ("f32",))
    _, report = run(MLP, mode="allow_mix_precision", modify_mixlist=mixlist)
    assert (report.by_name("log").reason, report.by_name("log").chosen.outputs) == (
        "modify_mixlist: to-add white-list",
        ("f16",),
    )


def test_customize_by_op_type_and_present_operands(tmp_path: Path) -> None:
    custom = write(tmp_path, "custom.cfg", "OpType::MatMulV2:InputDtype:float16,float16,OutputDtype:float32\n")
    module, report = run(MLP, mode="force_fp32", customize_dtypes=custom)
    assert dtypes(named(module, "fc1")) == (("f16", "f16"), ("f32",))
    assert report.by_name("fc1").reason == "customize_dtypes"


def test_keep_dtype_by_type_in_force_fp16(tmp_path: Path) -> None:
    keep = write(tmp_path, "keep.txt", "OpType::SoftmaxV2\n")
    module, report = run(MLP, mode="force_fp16", keep_dtype=keep)
    assert dtypes(named(module, "softmax")) == (("f32",), ("f32",))
    assert dtypes(named(module, "log")) == (("f16",), ("f16",))


def test_keep_dtype_of_an_unsupported_dtype_falls_back_to_the_mode(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keep = write(tmp_path, "keep.txt", "conv1\n")
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        _, report = run(CNN, mode="allow_mix_precision", keep_dtype=keep)
    assert report.by_name("conv1").chosen.outputs == ("f16",)
    assert any("keep_dtype cannot keep float32" in r.message for r in caplog.records)


def test_cann_guide_mixlist_examples(tmp_path: Path) -> None:
    """The guide's three ways to change a white-list op (MatMulV2 here); only the third makes it gray."""
    examples = {
        "black-list to-add": (
            {"black-list": {"to-add": ["MatMulV2"]}},
            "black",
            "f32",
            "modify_mixlist: to-add black-list",
        ),
        "black-list to-add, white-list to-remove": (
            {"black-list": {"to-add": ["MatMulV2"]}, "white-list": {"to-remove": ["MatMulV2"]}},
            "black",
            "f32",
            "modify_mixlist: to-add black-list",
        ),
        "white-list to-remove": (
            {"white-list": {"to-remove": ["MatMulV2"]}},
            "gray",
            "f16",
            "modify_mixlist: to-remove white-list; gray: follows MatMul/mm",
        ),
    }
    for label, (data, kind, dtype, reason) in examples.items():
        path = write(tmp_path, "ops.json", json.dumps(data))
        module, report = run(MATMULS, mode="allow_mix_precision", modify_mixlist=path)
        follows = report.by_name("follows")
        assert (follows.list_kind, follows.chosen.outputs, follows.reason) == (kind, (dtype,), reason), label
        assert report.by_name("alone").chosen.outputs == ("f32",), label
        assert report.by_name("mm").chosen.outputs == ("f16",), label


def test_mixlist_to_remove_of_an_op_not_on_the_list_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path, "ops.json", json.dumps({"black-list": {"to-remove": ["MatMulV2"]}}))
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        _, report = run(MATMULS, mode="allow_mix_precision", modify_mixlist=path)
    assert report.by_name("alone").reason == "white"
    assert any("'MatMulV2' is not on the black-list" in r.message for r in caplog.records)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"mode": "force_fp16", "modify_mixlist": "ops.json"},
            "modify_mixlist has no effect in precision mode 'force_fp16'",
        ),
        (
            {"mode": "must_keep_origin_dtype", "keep_dtype": "keep.txt"},
            "keep_dtype has no effect in precision mode 'must_keep_origin_dtype'",
        ),
        ({"mode": "force_fp16", "keep_dtype": "keep.txt"}, "keep_dtype entry 'nosuchop' matches no op"),
        ({"mode": "force_fp16", "keep_dtype": "keep.txt"}, "keep_dtype entry 'OpType::Conv2D' matches no op"),
        ({"mode": "force_fp16", "customize_dtypes": "custom.cfg"}, "customize_dtypes entry 'ghost' matches no op"),
        ({"mode": "allow_mix_precision_bf16"}, "MatMulV2 'fc1' under allow_mix_precision_bf16: no bf16 kernel"),
    ],
)
def test_warnings_for_configurations_that_do_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, options: dict[str, str], message: str
) -> None:
    write(tmp_path, "ops.json", json.dumps({"white-list": {"to-add": ["Relu"]}}))
    write(tmp_path, "keep.txt", "nosuchop\nOpType::Conv2D\nfc1\n")
    write(tmp_path, "custom.cfg", "ghost::InputDtype:float32,OutputDtype:float32\n")
    resolved = {
        k: (str(tmp_path / v) if k in ("modify_mixlist", "keep_dtype", "customize_dtypes") else v)
        for k, v in options.items()
    }
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        _, report = run(MLP, **resolved)
    warnings = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    assert any(message in w for w in warnings), warnings
