"""What `ascend-opt` loads and verifies: no onnx for text input, verification where IR may have changed."""

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ascend_mp.errors import AscendError
from ascend_mp.tools.ascend_opt import AscendOptMain, main

GOOD = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

_NO_ONNX = """
import contextlib, io, sys
import ascend_mp.tools.ascend_opt as tool
assert "onnx" not in sys.modules, "importing ascend_mp.tools.ascend_opt imported onnx"
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        tool.main([sys.argv[1]])
    except SystemExit as e:
        assert not e.code, e.code
assert "ascend.Relu" in out.getvalue(), out.getvalue()
assert "onnx" not in sys.modules, "running ascend-opt on an .mlir file imported onnx"
"""


@pytest.mark.parametrize(("tool", "shows"), [("ascend_opt", "ascend.Relu"), ("ascend_run", "result0")])
def test_mlir_input_does_not_import_onnx(tmp_path: Path, tool: str, shows: str) -> None:
    # A fresh interpreter: the test process itself may have imported onnx already.
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    script = (
        _NO_ONNX.replace("ascend_opt", tool).replace("ascend-opt", tool.replace("_", "-")).replace("ascend.Relu", shows)
    )
    done = subprocess.run([sys.executable, "-c", script, str(src)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_onnx_input_without_onnx_package_is_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` now raises ImportError
    src = tmp_path / "model.onnx"
    src.write_bytes(b"\x08\x07")
    with pytest.raises(SystemExit) as exit_info:
        main([str(src)])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == "ascend-opt: error: reading ONNX models needs the onnx package (pip install 'ascend-mp[onnx]')"


# --------------------------------------------------------------------------------------
# Verification between passes
# --------------------------------------------------------------------------------------


class _BreakRelu(ModulePass):
    """A pass from outside the project that leaves invalid IR (a property Relu does not define)."""

    name = "test-break-relu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if inner.name == "ascend.Relu":
                inner.properties["padding"] = StringAttr("SAME")


class _Main(AscendOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.available_passes[_BreakRelu.name] = lambda: _BreakRelu


def _count_verifies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = ModuleOp.verify

    def counting(self: ModuleOp, verify_nested_ops: bool = True) -> None:
        calls[0] += 1
        original(self, verify_nested_ops)

    monkeypatch.setattr(ModuleOp, "verify", counting)
    return calls


@pytest.mark.parametrize(
    ("passes", "verifies"),
    [
        ([], 1),  # the input only
        (["--precision_mode=force_fp16"], 1),  # the project's own pass: the input only
        (["-p", "ascend-attach-caps,ascend-precision{mode=force_fp16}"], 1),
        (["-p", "canonicalize"], 2),  # another pass: the input and its output
        (["-p", "ascend-precision{mode=force_fp16},canonicalize"], 2),  # the output of canonicalize
        (["-p", "canonicalize", "--disable-verify"], 0),
    ],
)
def test_verifies_input_and_after_passes_from_outside_the_project(
    passes: list[str], verifies: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    calls = _count_verifies(monkeypatch)
    _Main(args=[str(src), "-o", str(tmp_path / "out.mlir"), *passes]).run()
    assert calls[0] == verifies
    assert "ascend.Relu" in (tmp_path / "out.mlir").read_text()


def test_invalid_ir_from_a_foreign_pass_is_reported(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    with pytest.raises(AscendError, match=r"m\.mlir:2:\d+: .*property 'padding' is not defined"):
        _Main(
            args=[str(src), "-p", "ascend-precision{mode=force_fp16},test-break-relu", "-o", str(tmp_path / "o.mlir")]
        ).run()
    assert not (tmp_path / "o.mlir").exists()


# --------------------------------------------------------------------------------------
# The parser's fast path for plain ascend op lines
# --------------------------------------------------------------------------------------

FAST = """func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %v: tensor<4x16xf16>) -> tensor<8x16xf32> {
  %0 = ascend.MatMulV2 %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = ascend.MatMulV2 %x, %w, %b : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = ascend.Add %0, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = ascend.Relu %2 {name = "relu"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = ascend.ConcatV2D %3, %2 {concat_dim = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %5 = ascend.Relu %v {keep_dtype} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %6 = ascend.Relu %5 : (tensor<4x16xf16>) -> tensor<4x16xf16>  // a comment
  %7 = ascend.Add %4, %4 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return %7 : tensor<8x16xf32>
}
"""


def _parse(text: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    from ascend_mp.ir import LocatingParser, location_of, make_context, parse_module, print_module

    with monkeypatch.context() as m:
        if not fast:
            m.setattr(LocatingParser, "_parse_plain_ascend_op", lambda self: None)
        module = parse_module(text, "fast.mlir", make_context())
    ops = [op for op in module.walk() if op.name.startswith("ascend.")]
    return print_module(module, generic=True) + "\n".join(location_of(op) for op in ops)


def test_fast_path_builds_what_the_general_parser_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    from ascend_mp import ir
    from ascend_mp.ir import LocatingParser

    taken: list[str] = []
    original = LocatingParser._parse_plain_ascend_op  # pyright: ignore[reportPrivateUsage]

    def spy(self: LocatingParser):  # noqa: ANN202
        op = original(self)
        if op is not None:
            taken.append(op.name)
        return op

    monkeypatch.setattr(LocatingParser, "_parse_plain_ascend_op", spy)
    monkeypatch.setattr(ir, "_TYPE_CACHE", {})  # a type's first appearance goes through the general parser
    fast = _parse(FAST, True, monkeypatch)
    # Not the first op (its result type is new) nor the ones with attributes.
    assert taken == ["ascend.MatMulV2", "ascend.Add", "ascend.Relu", "ascend.Add"]
    assert fast == _parse(FAST, False, monkeypatch)
    assert "fast.mlir:8:3" in fast  # locations of fast-parsed ops


@pytest.mark.parametrize(
    "line",
    [
        "%1 = ascend.Relu %0 : (tensor<4xf16>) -> tensor<4xf32>",  # operand type differs from its definition
        "%1 = ascend.Relu %9 : (tensor<4xf32>) -> tensor<4xf32>",  # undefined value
        "%0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>",  # redefinition
        "%1 = ascend.Relu %0, %0 : (tensor<4xf32>) -> tensor<4xf32>",  # counts differ
        "%1 = ascend.Relu %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",  # too many operands
        "%1 = ascend.MatMulV2 %0 : (tensor<4xf32>) -> tensor<4xf32>",  # too few
        "%1 = ascend.Nope %0 : (tensor<4xf32>) -> tensor<4xf32>",  # unknown op
    ],
)
def test_fast_path_errors_are_the_general_parsers(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"""func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  {line}
  func.return %x : tensor<4xf32>
}}
"""
    messages = []
    for fast in (True, False):
        with pytest.raises(AscendError) as info:
            _parse(text, fast, monkeypatch)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("fast.mlir:")
