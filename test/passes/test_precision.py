"""The ascend-precision pass: modes, overrides, casts, report, diagnostics, properties (docs/design.md §5)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest
from cli_util import run_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import MODES, SOCS, check_invariants, graphs
from xdsl.dialects import cf, func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.parser import Parser
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from ascend_mp.dialects import ascend
from ascend_mp.dialects.ascend import AscendOp, CastOp
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context, parse_module, print_module
from ascend_mp.modes import V1_MODES, V2_TO_V1
from ascend_mp.passes import PASSES
from ascend_mp.passes.precision import (
    AscendPrecisionPass,
    PrecisionReport,
    apply_plan,
    decide_precision,
    load_config,
    populate_precision_patterns,
    resolve_mode,
    run_precision,
    walk,
)
from ascend_mp.tools.ascend_opt import main
from benchmarks.graphs import chain_module

# ---------------------------------------------------------------------------------------------------- helpers

MLP = """func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b {name = "bias1"} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l = ascend.Log %r {name = "log"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %l {name = "softmax"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}
"""

CNN = """func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, name = "conv1"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c {name = "relu1"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, name = "pool1"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}
"""

MATMULS = """func.func @matmuls(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = ascend.MatMul %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = ascend.MatMulV2 %p, %w {name = "follows"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = ascend.MatMulV2 %x, %w {name = "alone"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def parse(text: str) -> ModuleOp:
    return parse_module(text, "test.mlir")


def run(text: str, **options: object) -> tuple[ModuleOp, PrecisionReport]:
    module = parse(text)
    report = run_precision(module, **options)  # pyright: ignore[reportArgumentType]
    module.verify()
    return module, report


def named(module: Operation, name: str) -> AscendOp:
    for op in module.walk():
        if isinstance(op, AscendOp) and op.properties.get("name") is not None and op.properties["name"].data == name:  # pyright: ignore[reportAttributeAccessIssue]
            return op
    raise KeyError(name)


def dtypes(op: Operation) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    """(dtype per operand, dtype per result) of an op."""
    return tuple(tensor_dtype(v.type) for v in op.operands), tuple(tensor_dtype(r.type) for r in op.results)


def casts(module: Operation) -> list[CastOp]:
    return [op for op in module.walk() if isinstance(op, CastOp)]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def opt(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ascend-opt in-process: (exit code, stdout, stderr)."""
    return run_main(main, args, capsys)


def one_line_error(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("ascend-opt: error: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0].removeprefix("ascend-opt: error: ")


# ---------------------------------------------------------------------------------------------------- options


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


# ---------------------------------------------------------------------------------------------------- modes


def test_mlp_in_every_mode() -> None:
    expected = {
        # mode: (MatMulV2, BiasAdd, Log (black), SoftmaxV2) result dtypes
        "force_fp16": ("f16", "f16", "f16", "f16"),
        "force_fp32": ("f32", "f32", "f32", "f32"),
        "cube_fp16in_fp32out": ("f32", "f32", "f32", "f32"),
        "allow_fp32_to_fp16": ("f32", "f32", "f32", "f32"),
        "must_keep_origin_dtype": ("f32", "f32", "f32", "f32"),
        "allow_mix_precision": ("f16", "f16", "f32", "f32"),
        "allow_mix_precision_fp16": ("f16", "f16", "f32", "f32"),
    }
    for mode, want in expected.items():
        module, _ = run(MLP, mode=mode)
        got = tuple(dtypes(named(module, n))[1][0] for n in ("fc1", "bias1", "log", "softmax"))
        assert got == want, mode


def test_cnn_fp16_only_ops() -> None:
    # force_fp32: Conv2D has no fp32 kernel (fp16); MaxPool is gray, its fp32 kernel is AI CPU only (fp16).
    _, report = run(CNN, mode="force_fp32")
    assert report.by_name("conv1").reason == "no fp32 kernel"
    assert report.by_name("pool1").chosen.outputs == ("f16",)
    assert report.by_name("relu1").chosen.outputs == ("f32",)
    # A black MaxPool takes the AI CPU kernel.
    _, report = run(CNN.replace('name = "pool1"', 'name = "pool1", list = #ascend.list<black>'), mode="force_fp32")
    pool = report.by_name("pool1")
    assert (pool.chosen.outputs, pool.engine, pool.reason) == (("f32",), "aicpu", "aicpu fallback")
    # must_keep_origin_dtype: the fp32 MaxPool runs on the AI CPU when Conv2D is fp16 already.
    text = CNN.replace(
        "%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>", "%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>"
    )
    text = text.replace("(tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)", "(tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>)")
    _, report = run(text, mode="must_keep_origin_dtype")
    conv, pool = report.by_name("conv1"), report.by_name("pool1")
    assert (conv.original.outputs, conv.chosen.outputs) == (("f32",), ("f16",))  # the only kernel
    assert (pool.engine, pool.reason, pool.chosen.outputs) == ("aicpu", "aicpu fallback", ("f32",))


def test_fp16_graph_is_not_raised_in_mix_modes() -> None:
    text = MLP.replace("f32", "f16")
    for mode in (
        "allow_mix_precision",
        "allow_mix_precision_bf16",
        "allow_fp32_to_fp16",
        "force_fp16",
        "must_keep_origin_dtype",
    ):
        module, report = run(text, mode=mode, soc="ascend910b")
        assert not casts(module), mode
        assert report.ops_reduced == 0
    module, report = run(text, mode="force_fp32")
    assert dtypes(named(module, "log"))[1] == ("f32",)
    assert len(casts(module)) == 4  # three arguments in, one result out


def test_gray_votes_and_reasons() -> None:
    text = """func.func @g(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %h: tensor<8x8xf16>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true, name = "sum"} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %a = ascend.Add %m, %s {name = "both"} : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %b = ascend.Mul %m, %x {name = "one"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.Sub %x, %w {name = "none"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %h {name = "user"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %d = ascend.Relu %u {name = "cast_vote"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %a, %b, %c, %d : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    assert report.by_name("both").reason == "gray: follows ReduceSum/sum"
    assert report.by_name("both").chosen.outputs == ("f32",)
    assert report.by_name("one").reason == "gray: follows MatMulV2/mm"
    assert report.by_name("one").chosen.outputs == ("f16",)
    assert report.by_name("none").reason == "gray: no voting producer"
    assert report.by_name("cast_vote").reason == "gray: follows Cast/user"
    assert report.by_name("cast_vote").chosen.outputs == ("f32",)
    assert report.by_name("user").reason == "user cast"
    assert report.by_name("mm").reason == "white" and report.by_name("sum").reason == "black"


def test_constants_do_not_vote() -> None:
    text = """func.func @c(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c = ascend.Const dense<2.0> : tensor<4x4xf32>
  %m = ascend.MatMulV2 %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = ascend.Add %c, %c {name = "consts"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = ascend.Add %c, %m {name = "mixed"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = ascend.Add %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    assert report.by_name("consts").chosen.outputs == ("f32",)
    assert report.by_name("mixed").chosen.outputs == ("f16",)
    const = next(op for op in module.walk() if isinstance(op, ascend.ConstOp))
    assert dtypes(const)[1] == ("f32",)


def test_allow_fp32_to_bf16_keeps_fp32_where_supported() -> None:
    module, report = run(CNN, mode="allow_fp32_to_bf16", soc="ascend910b")
    assert report.by_name("conv1").chosen.outputs == ("bf16",)
    assert report.by_name("relu1").chosen.outputs == ("f32",)
    assert report.by_name("pool1").chosen.outputs == ("bf16",)
    assert report.by_name("conv1").reason == "no fp32 kernel"


def test_mixed_dtype_kernels() -> None:
    text = """func.func @k(%x: tensor<2x4x8x8xf32>, %st: tensor<4xf32>, %a: tensor<4x10xf32>, %i: tensor<4xi32>, %on: tensor<f32>, %off: tensor<f32>, %dy: tensor<2x4x6x6xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xi32>, tensor<4x10xf32>, tensor<4x4x3x3xf32>) {
  %y, %m, %v = ascend.BatchNorm %x, %st, %st, %st, %st {name = "bn"} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %am = ascend.ArgMaxV2 %a {name = "argmax"} : (tensor<4x10xf32>) -> tensor<4xi32>
  %oh = ascend.OneHot %i, %on, %off {depth = 10 : i64, name = "onehot"} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x10xf32>
  %dw = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 4, 3, 3>, strides = array<i64: 1, 1, 1, 1>, name = "dw"} : (tensor<2x4x8x8xf32>, tensor<2x4x6x6xf32>) -> tensor<4x4x3x3xf32>
  func.return %y, %am, %oh, %dw : tensor<2x4x8x8xf32>, tensor<4xi32>, tensor<4x10xf32>, tensor<4x4x3x3xf32>
}
"""
    module, _ = run(text, mode="force_fp16")
    assert dtypes(named(module, "bn")) == (("f16", "f32", "f32", "f32", "f32"), ("f16", "f32", "f32"))
    assert dtypes(named(module, "argmax")) == (("f16",), ("i32",))
    assert dtypes(named(module, "onehot")) == (("i32", "f16", "f16"), ("f16",))
    assert dtypes(named(module, "dw")) == (("f16", "f16"), ("f32",))
    module, _ = run(text, mode="force_fp32")
    assert dtypes(named(module, "dw")) == (("f16", "f16"), ("f32",))
    assert dtypes(named(module, "onehot")) == (("i32", "f32", "f32"), ("f32",))


def test_optional_and_variadic_operands() -> None:
    text = """func.func @v(%x: tensor<4x4xf32>, %b: tensor<4xf32>, %h: tensor<4x4xf16>) -> (tensor<4x4xf32>, tensor<4x12xf32>) {
  %m = ascend.MatMulV2 %x, %x, %b {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %hf = ascend.Cast %h : (tensor<4x4xf16>) -> tensor<4x4xf32>
  %c = ascend.ConcatV2D %m, %x, %hf {concat_dim = 1 : i64, name = "cat"} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  func.return %m, %c : tensor<4x4xf32>, tensor<4x12xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    assert dtypes(named(module, "mm")) == (("f16", "f16", "f16"), ("f16",))
    # The variadic Concat: fp16 (MatMulV2) and fp32 (user Cast) votes -> fp32, one dtype for all its values.
    assert dtypes(named(module, "cat")) == (("f32", "f32", "f32"), ("f32",))
    assert report.by_name("cat").chosen.inputs == ("f32",)
    module, _ = run(text, mode="force_fp16")
    assert dtypes(named(module, "cat")) == (("f16", "f16", "f16"), ("f16",))
    # The fp16 -> fp32 user cast is folded away for the fp16 Concat: it reads %h directly.
    assert named(module, "cat").operands[2] is module.body.block.first_op.body.block.args[2]  # pyright: ignore[reportAttributeAccessIssue]


def test_integer_ops_never_change() -> None:
    text = """func.func @i(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %s = ascend.Add %a, %b {name = "add"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
"""
    for mode in V1_MODES:
        module, report = run(text, mode=mode)
        assert dtypes(named(module, "add")) == (("i32", "i32"), ("i32",))
        assert report.by_name("add").reason == "no float tensors"


def test_function_calls_keep_their_operand_dtypes() -> None:
    text = """func.func @callee(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  func.return %x : tensor<4x4xf32>
}
func.func @caller(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = ascend.MatMulV2 %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = func.call @callee(%m) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = ascend.Relu %c {name = "after_call"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    call = next(op for op in module.walk() if isinstance(op, func.CallOp))
    assert dtypes(call) == (("f32",), ("f32",))
    assert report.by_name("after_call").reason == "gray: follows func.call"


# ---------------------------------------------------------------------------------------------------- overrides


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


# ---------------------------------------------------------------------------------------------------- casts


def test_one_cast_per_value_and_dtype_and_exact_folding() -> None:
    text = """func.func @c(%h: tensor<8x8xf16>, %x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>) {
  %up = ascend.Cast %h {name = "up"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %a = ascend.MatMulV2 %up, %x {name = "a"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.MatMulV2 %x, %up {name = "b"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %down = ascend.Cast %x {name = "down"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %back = ascend.Cast %down {name = "back"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %c = ascend.Log %back {name = "c"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %a, %b, %c, %down : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    a, b = named(module, "a"), named(module, "b")
    h = module.body.block.first_op.body.block.args[0]  # pyright: ignore[reportAttributeAccessIssue]
    assert a.operands[0] is h and b.operands[1] is h  # f16 -> f32 -> f16 folded
    assert a.operands[1] is b.operands[0]  # one cast of %x to f16, shared
    # f32 -> f16 -> f32 is never folded: Log (black) reads the user's round trip.
    assert named(module, "c").operands[0] is named(module, "back").results[0]
    # User casts are all kept.
    assert {op.properties["name"].data for op in casts(module) if "name" in op.properties} == {"up", "down", "back"}  # pyright: ignore[reportAttributeAccessIssue]
    assert report.casts_folded == 1  # one (value, dtype) pair folded, for both consumers
    assert report.casts_inserted == len(casts(module)) - 3


def test_user_cast_before_a_consumer_is_reused() -> None:
    text = """func.func @r(%x: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>) {
  %d = ascend.Cast %x {name = "mine"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %m = ascend.MatMulV2 %x, %x {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %d, %m : tensor<8x8xf16>, tensor<8x8xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    mine = named(module, "mine")
    assert named(module, "mm").operands[0] is mine.results[0]
    assert report.casts_inserted == 1  # only the cast of the result back to fp32


IDENTITY_CASTS = """func.func @g(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xLOW>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %m {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xLOW>
  %r = ascend.Relu %u {name = "relu"} : (tensor<8x8xLOW>) -> tensor<8x8xLOW>
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = ascend.Cast %l {name = "kept"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %t = ascend.Cast %k {name = "trip"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  func.return %r, %l, %k, %t : tensor<8x8xLOW>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>
}
"""
"""MatMulV2 (white) goes low; the user's f32 -> LOW cast of it is then an identity. Log is black: its
f32 input is cast to f16 by `kept` and back by `trip` (f32 -> f16 -> f32: never folded)."""

IDENTITY_RUNS = (
    ("f16", {"mode": "allow_mix_precision"}),
    ("bf16", {"mode": "allow_mix_precision_bf16", "soc": "ascend910b"}),
)


@pytest.mark.parametrize(("low", "options"), IDENTITY_RUNS, ids=["f16", "bf16"])
def test_a_user_cast_made_an_identity_by_retyping_is_folded(low: str, options: dict[str, str]) -> None:
    """f16 -> f32 -> f16 (bf16 -> f32 -> bf16) vanishes (docs/design.md §5): no cast of MatMulV2's result back to f32
    is inserted for the user's cast, which is erased; its consumers read MatMulV2 directly."""
    module, report = run(IDENTITY_CASTS.replace("LOW", low), **options)
    mm, relu, log = named(module, "mm"), named(module, "relu"), named(module, "log")
    assert dtypes(mm)[1] == (low,)
    assert relu.operands[0] is mm.results[0]
    ret = module.body.block.first_op.body.block.last_op  # pyright: ignore[reportAttributeAccessIssue]
    assert ret.operands[0] is relu.results[0]  # pyright: ignore[reportOptionalMemberAccess]
    assert "user" not in {op.properties["name"].data for op in casts(module) if "name" in op.properties}  # pyright: ignore[reportAttributeAccessIssue]
    # The only cast of MatMulV2's result is the one Log (black, fp32) needs.
    of_mm = [c for c in casts(module) if c.x is mm.results[0]]
    assert of_mm == [log.operands[0].owner] and dtypes(of_mm[0])[1] == ("f32",)
    # f32 -> f16 -> f32 with the input still f32: both user casts kept, the round trip read as written.
    kept, trip = named(module, "kept"), named(module, "trip")
    assert kept.x is log.results[0] and trip.x is kept.results[0] and ret.operands[3] is trip.results[0]  # pyright: ignore[reportOptionalMemberAccess]
    # One report entry per input op; the folded cast says why.
    assert [d.name for d in report.ops] == ["mm", "user", "relu", "log", "kept", "trip"]
    assert report.by_name("user").reason == "user cast: identity after retyping, folded"
    assert report.by_name("relu").chosen.outputs == (low,)
    assert report.casts_folded == 1
    assert report.casts_inserted == len(casts(module)) - 2 == 3  # x, w down; MatMulV2's result up for Log


def test_a_bf16_value_into_a_users_f32_to_f16_cast_still_goes_through_f32() -> None:
    """bf16 -> f32 -> f16 is not exact: the user's cast is kept, fed by an inserted bf16 -> f32 cast."""
    module, report = run(IDENTITY_CASTS.replace("LOW", "f16"), mode="allow_mix_precision_bf16", soc="ascend910b")
    mm, user = named(module, "mm"), named(module, "user")
    assert dtypes(mm)[1] == ("bf16",)
    up = user.x.owner
    assert isinstance(up, CastOp) and up.x is mm.results[0] and dtypes(up) == (("bf16",), ("f32",))
    assert dtypes(user) == (("f32",), ("f16",)) and named(module, "relu").operands[0] is user.results[0]
    assert report.by_name("user").reason == "user cast" and report.casts_folded == 0


def test_a_user_cast_whose_input_stays_fp32_is_kept() -> None:
    module, report = run(IDENTITY_CASTS.replace("LOW", "f16"), mode="force_fp32")
    mm, user = named(module, "mm"), named(module, "user")
    assert dtypes(mm)[1] == ("f32",) and user.x is mm.results[0]
    up = named(module, "relu").operands[0].owner  # force_fp32 runs Relu in fp32: the user's f16 result is cast up
    assert isinstance(up, CastOp) and up.x is user.results[0]
    assert report.by_name("user").reason == "user cast" and report.casts_folded == 0


@pytest.mark.parametrize(("low", "options"), IDENTITY_RUNS, ids=["f16", "bf16"])
def test_the_rewrite_patterns_fold_an_identity_cast_too(low: str, options: dict[str, str]) -> None:
    """Under xDSL's walker (another pipeline's driver) the patterns erase the identity cast as apply_plan does."""
    text = IDENTITY_CASTS.replace("LOW", low)
    walked = parse(text)
    plan = decide_precision(walked, load_config(**options))  # pyright: ignore[reportArgumentType]
    PatternRewriteWalker(
        GreedyRewritePatternApplier(populate_precision_patterns(plan)), apply_recursively=False
    ).rewrite_module(walked)
    walked.verify()
    looped, _ = run(text, **options)
    assert "user" not in print_module(walked)
    assert print_module(walked) == print_module(looped)


def _unfolded(text: str, **options: object) -> ModuleOp:
    """The pass as it was before the fold (the user's cast kept, fed by an inserted cast back to f32)."""
    saved = walk.Planner.fold_identity_cast  # pyright: ignore[reportPrivateUsage]
    walk.Planner.fold_identity_cast = lambda *_: False  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    try:
        module, _ = run(text, **options)
    finally:
        walk.Planner.fold_identity_cast = saved  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
    return module


@pytest.mark.parametrize(("low", "options"), IDENTITY_RUNS, ids=["f16", "bf16"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from((1.0, 300.0, 1e5)))
def test_folding_an_identity_cast_changes_no_bit(low: str, options: dict[str, str], seed: int, scale: float) -> None:
    """The interpreter's outputs with the fold are bit-identical to the unfolded IR's (which has the round trip
    MatMulV2 -> f32 -> user's cast), on random inputs, overflowing ones included."""
    text = IDENTITY_CASTS.replace("LOW", low)
    folded, _ = run(text, **options)
    unfolded = _unfolded(text, **options)
    assert named(unfolded, "user").x.owner is not named(unfolded, "mm")  # the round trip is there
    rng = np.random.default_rng(seed)
    inputs = [(rng.standard_normal((8, 8)) * scale).astype(np.float32) for _ in range(2)]
    want = Program.from_module(unfolded).run("g", *inputs)
    got = Program.from_module(folded).run("g", *inputs)
    assert len(want) == len(got) == 4
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_inserted_casts_have_no_name_or_marker() -> None:
    module, _ = run(MLP, mode="allow_mix_precision")
    for cast in casts(module):
        assert set(cast.properties) | set(cast.attributes) == set()


def uses(op: Operation, value: SSAValue) -> bool:
    """Whether `op` or an op nested in it reads `value`."""
    return any(value in o.operands for o in op.walk())


def assert_dominance(module: Operation) -> None:
    """Every operand is defined before its use (xDSL's verifier does not check SSA dominance): earlier in
    the use's block or in a block enclosing it, or in a block that dominates the use's block."""
    position = {o: i for op in module.walk() for r in op.regions for b in r.blocks for i, o in enumerate(b.ops)}
    for op in module.walk():
        for v in op.operands:
            block = v.block if isinstance(v, BlockArgument) else v.owner.parent
            assert isinstance(block, Block) and block.parent is not None
            holder: Operation | None = op  # the op holding the use, in the defining block's region
            while holder is not None and (holder.parent is None or holder.parent.parent is not block.parent):
                holder = holder.parent_op()
            assert holder is not None and holder.parent is not None, f"{v} used outside its region by {op.name}"
            if holder.parent is block:
                assert isinstance(v, BlockArgument) or position[v.owner] < position[holder], (
                    f"{v} used before it is defined"
                )  # pyright: ignore[reportArgumentType]
            else:
                assert DominanceInfo(block.parent).strictly_dominates(block, holder.parent), (
                    f"{v} does not dominate {op.name}"
                )


def assert_right_before_first_consumer(casts_: Iterable[Operation], inserted: set[Operation]) -> None:
    """Each cast is followed by its first consumer, with at most other inserted casts in between."""
    for cast in casts_:
        after = cast.next_op
        while after is not None and not uses(after, cast.results[0]):
            assert after in inserted, f"{print_module(cast)} is not right before its first consumer"
            after = after.next_op
        assert after is not None, "a cast without a consumer"


def parse_with_control_flow(text: str) -> ModuleOp:
    ctx = make_context()
    ctx.load_dialect(scf.Scf)
    ctx.load_dialect(cf.Cf)
    return Parser(ctx, text).parse_module()


def test_casts_sit_right_before_their_first_consumer() -> None:
    """Arguments are not cast at the top: each cast is made where it is first needed, so the fp16 copy
    does not live before that and the fp32 value it was made from can die sooner."""
    module, report = run(MLP, mode="allow_mix_precision")
    body = list(module.body.block.first_op.body.block.ops)  # pyright: ignore[reportAttributeAccessIssue]
    inserted = [op for op in body if isinstance(op, CastOp)]
    assert report.casts_inserted == len(inserted) == 4  # x, w, b to fp16; Relu's fp16 result to fp32 for the black Log
    assert_right_before_first_consumer(inserted, set(inserted))
    fc1, bias, log = named(module, "fc1"), named(module, "bias1"), named(module, "log")
    assert body.index(bias) - body.index(fc1) == 2  # the cast of %b waits for BiasAdd
    assert body.index(log) - body.index(bias) == 3  # Relu, its fp32 copy, Log


def test_fp16_to_bf16_goes_through_fp32_right_before_its_consumer() -> None:
    text = """func.func @chain(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %h = ascend.MatMul %x, %w {caps = #ascend.caps<(f16, f16, f16) -> f16>, name = "h"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %h, %w {name = "n"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %e, %n : tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module, _ = run(text, mode="allow_mix_precision_bf16", soc="ascend910b")
    n = named(module, "n")
    to_f32, to_bf16, w_bf16 = n.prev_op.prev_op.prev_op, n.prev_op.prev_op, n.prev_op  # pyright: ignore[reportOptionalMemberAccess]
    assert isinstance(to_f32, CastOp) and to_f32.x is named(module, "h").results[0] and dtypes(to_f32)[1] == ("f32",)
    assert isinstance(to_bf16, CastOp) and to_bf16.x is to_f32.y and n.operands[0] is to_bf16.y
    assert isinstance(w_bf16, CastOp) and n.operands[1] is w_bf16.y
    assert to_f32.prev_op is named(module, "log")


def test_fp16_to_bf16_through_a_user_cast_shares_the_second_step() -> None:
    """bf16 -> f16 goes through fp32, here the user's own bf16 -> f32 cast; the f32 -> f16 step is then
    the one cast of that value to fp16, shared with a consumer of the user cast (found by fuzzing)."""
    text = """func.func @via(%x: tensor<1x4x4x4xf32>, %k: tensor<4x4x1x1xbf16>, %k2: tensor<4x4x1x1xf32>) -> (tensor<1x4x4x4xbf16>, tensor<1x4x4x4xf32>) {
  %b = ascend.Cast %x {name = "down"} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xbf16>
  %f = ascend.Cast %b {name = "up"} : (tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xf32>
  %c = ascend.Conv2D %b, %k {strides = array<i64: 1, 1, 1, 1>, name = "c"} : (tensor<1x4x4x4xbf16>, tensor<4x4x1x1xbf16>) -> tensor<1x4x4x4xbf16>
  %d = ascend.Conv2D %f, %k2 {strides = array<i64: 1, 1, 1, 1>, name = "d"} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  func.return %c, %d : tensor<1x4x4x4xbf16>, tensor<1x4x4x4xf32>
}
"""
    module, _ = run(text, mode="force_fp32", soc="ascend910b")
    c, d, up = named(module, "c"), named(module, "d"), named(module, "up")
    assert dtypes(c)[0][0] == dtypes(d)[0][0] == "f16"
    assert c.operands[0] is d.operands[0]
    assert [op for op in casts(module) if op.x is up.results[0]] == [c.operands[0].owner]


def test_a_consumer_in_a_nested_region_gets_the_cast_before_the_op_holding_it() -> None:
    text = """func.func @nested(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %p: i1) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %l = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = scf.if %p -> (tensor<8x8xf32>) {
    %m = ascend.MatMulV2 %x, %w {name = "inner"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    scf.yield %m : tensor<8x8xf32>
  } else {
    scf.yield %l : tensor<8x8xf32>
  }
  %n = ascend.MatMulV2 %x, %w {name = "outer"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y, %n : tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module = parse_with_control_flow(text)
    report = run_precision(module, mode="allow_mix_precision")
    module.verify()
    assert_dominance(module)
    inner, outer = named(module, "inner"), named(module, "outer")
    if_op = next(op for op in module.walk() if isinstance(op, scf.IfOp))
    # One cast per argument, made in the function body right before scf.if, shared with the later MatMulV2.
    assert inner.operands[0] is outer.operands[0] and inner.operands[1] is outer.operands[1]
    assert [op.y for op in (if_op.prev_op.prev_op, if_op.prev_op)] == list(inner.operands)  # pyright: ignore[reportOptionalMemberAccess, reportAttributeAccessIssue]
    # The fp16 result goes back to fp32 inside the region, right before scf.yield.
    yield_ = inner.next_op.next_op  # pyright: ignore[reportOptionalMemberAccess]
    assert (
        isinstance(inner.next_op, CastOp) and isinstance(yield_, scf.YieldOp) and yield_.operands[0] is inner.next_op.y
    )
    assert report.casts_inserted == 4
    once = print_module(module)
    run_precision(module, mode="allow_mix_precision")
    assert print_module(module) == once


def test_a_consumer_in_another_block_gets_the_cast_right_after_the_definition() -> None:
    text = """func.func @blocks(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %v: tensor<8x8xf32>, %u: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = ascend.Exp %x {name = "exp"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  cf.br ^bb1(%x : tensor<8x8xf32>)
^bb1(%a: tensor<8x8xf32>):
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %a, %w {name = "mm2"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = ascend.MatMulV2 %v, %u {name = "mm3"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.Add %n, %q {name = "add"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %l, %s, %e : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module = parse_with_control_flow(text)
    run_precision(module, mode="allow_mix_precision")
    module.verify()
    assert_dominance(module)
    entry, bb1 = module.body.block.first_op.body.blocks  # pyright: ignore[reportAttributeAccessIssue]
    mm, log, mm2, mm3 = (named(module, n) for n in ("mm", "log", "mm2", "mm3"))
    # Arguments first used in ^bb1: cast at the start of the entry block, in consumer order.
    first, second = entry.first_op, entry.first_op.next_op
    assert [first.operands[0], second.operands[0]] == [entry.args[2], entry.args[3]]
    assert list(mm3.operands) == [first.results[0], second.results[0]]
    # A result first used in ^bb1: cast right after its definition.
    assert isinstance(mm.next_op, CastOp) and log.operands[0] is mm.next_op.y
    # A block argument used in its own block: cast right before the consumer; %w's cast is shared.
    assert isinstance(mm2.prev_op, CastOp) and mm2.prev_op.x is bb1.args[0] and mm2.operands[1] is mm.operands[1]
    once = print_module(module)
    run_precision(module, mode="allow_mix_precision")
    assert print_module(module) == once


# ---------------------------------------------------------------------------------------------------- report


def test_report_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "report.json"
    with caplog.at_level(logging.INFO, logger="ascend_mp"):
        _, report = run(MLP, mode="allow_mix_precision", report=str(path))
    data = json.loads(path.read_text())
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left
    assert data["mode"] == "allow_mix_precision" and data["soc"] == "ascend910"
    assert data["totals"] == {
        "ops": 5,
        "ops_reduced": 3,
        "casts_inserted": 4,
        "casts_folded": 0,
        "weight_bytes_before": 0,
        "weight_bytes_after": 0,
        "constants_stored_low": 0,  # weights are arguments here
    }
    fc1 = data["ops"][0]
    assert fc1 == {
        "name": "fc1",
        "type": "MatMulV2",
        "location": "test.mlir:2:3",
        "original": {"inputs": ["float32", "float32", None], "outputs": ["float32"]},
        "chosen": {"inputs": ["float16", "float16", None], "outputs": ["float16"]},
        "list": "white",
        "engine": "aicore",
        "reason": "white",
    }
    assert [o["reason"] for o in data["ops"]] == [
        "white",
        "gray: follows MatMulV2/fc1",
        "gray: follows BiasAdd/bias1",
        "black",
        "gray: follows Log/log",
    ]
    assert data["ops"][2]["name"] is None
    assert report.to_json() == data
    infos = [r.message for r in caplog.records if r.levelno == logging.INFO]
    assert "Reduce precision: fc1 float32 -> float16 (white)" in infos
    assert "Reduce precision: Relu float32 -> float16 (gray: follows BiasAdd/bias1)" in infos


def test_report_from_ascend_opt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path, "m.mlir", CNN)
    path = tmp_path / "r.json"
    code, _, _ = opt([src, "--precision_mode=force_fp32", f"--precision-report={path}"], capsys)
    assert code == 0
    ops = {o["name"]: o for o in json.loads(path.read_text())["ops"]}
    assert ops["conv1"]["reason"] == "no fp32 kernel"
    assert ops["conv1"]["location"] == f"{src}:2:3"


def test_report_of_built_ops_names_their_position() -> None:
    module = chain_module(8)
    report = run_precision(module, mode="allow_mix_precision")
    assert report.ops[0].location == "@chain, op #1"
    assert report.ops[3].location == "@chain, op #4"


# ---------------------------------------------------------------------------------------------------- API


def test_populate_patterns_apply_a_plan() -> None:
    a, b = parse(MLP), parse(MLP)
    config = load_config(mode="allow_mix_precision")
    plan = decide_precision(a, config)
    assert len(populate_precision_patterns(plan)) == 2
    apply_plan(a, plan)
    run_precision(b, mode="allow_mix_precision")
    assert print_module(a) == print_module(b)


# ---------------------------------------------------------------------------------------------------- diagnostics (ascend-opt)


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


# ---------------------------------------------------------------------------------------------------- properties


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graphs_in_every_mode(graph: tuple[str, ModuleOp]) -> None:
    soc, module = graph
    for mode in MODES:
        check_invariants(soc, module.clone(), mode)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graphs_casts_sit_right_before_their_first_consumer(graph: tuple[str, ModuleOp]) -> None:
    soc, module = graph
    for mode in MODES:
        m = module.clone()
        written = {op for op in m.walk() if isinstance(op, CastOp)}
        try:
            run_precision(m, mode=mode, soc=soc)
        except AscendError:
            continue
        assert_dominance(m)
        inserted = {op for op in m.walk() if isinstance(op, CastOp)} - written
        assert_right_before_first_consumer(inserted, inserted)


FILECHECK = Path(__file__).parents[1] / "filecheck"


@pytest.mark.parametrize("path", sorted(FILECHECK.glob("ascend-precision*.mlir")), ids=lambda p: p.name)
def test_filecheck_inputs_idempotent_in_every_mode(path: Path) -> None:
    """Every FileCheck input, in every mode on both SoCs: output verifies, a second run changes nothing."""
    for chunk in path.read_text().split("// -----"):
        for soc in SOCS:
            for mode in MODES:
                module = parse(chunk)
                try:
                    run_precision(module, mode=mode, soc=soc)
                except AscendError as e:
                    assert mode == "must_keep_origin_dtype", str(e)
                    continue
                module.verify()
                once = print_module(module)
                run_precision(module, mode=mode, soc=soc)
                assert print_module(module) == once, (path.name, mode, soc)


def test_a_large_keep_dtype_file_that_matches_nothing_gives_one_summary_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """20,000 unmatched names are one warning line naming the count and the first few."""
    names = [f"ghost_{i:05d}" for i in range(20_000)]
    write(tmp_path, "keep.txt", "\n".join(names) + "\nOpType::Conv2D\n")
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        _, report = run(MLP, mode="force_fp16", keep_dtype=str(tmp_path / "keep.txt"))
    unmatched = [w for w in report.warnings if "match no op" in w or "matches no op" in w]
    assert len(unmatched) == 1, unmatched[:3]
    assert "20001 keep_dtype entries match no op: 'ghost_00000', 'ghost_00001'" in unmatched[0]
    assert unmatched[0].endswith("and 19996 more")


def test_reduce_precision_is_logged_when_only_the_inputs_are_reduced(caplog: pytest.LogCaptureFixture) -> None:
    """ops whose outputs keep their dtype (bool/int results, fp16-in/fp32-out kernels) but whose
    inputs go to fp16 get their `Reduce precision` line too."""
    text = """
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>, %m: tensor<4x8xf32>) -> (tensor<4xi1>, tensor<4xi32>) {
      %g = ascend.Greater %x, %y {name = "gt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %a = ascend.ArgMaxV2 %m {name = "argmax", dimension = 1 : i64} : (tensor<4x8xf32>) -> tensor<4xi32>
      func.return %g, %a : tensor<4xi1>, tensor<4xi32>
    }
    """
    with caplog.at_level(logging.INFO, logger="ascend_mp"):
        _, report = run(text, mode="force_fp16")
    lines = [r.message for r in caplog.records if r.message.startswith("Reduce precision")]
    for name in ("gt", "argmax"):
        assert report.by_name(name).reduced, name
        assert f"Reduce precision: {name} float32 -> float16 (mode)" in lines, lines
