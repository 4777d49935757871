"""Helpers of the ascend-precision tests (test_precision_<part>.py): programs, running the pass, reading casts."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from cli_util import run_main
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.parser import Parser

from ascend_mp.dialects.ascend import AscendOp, CastOp
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.ir import make_context, parse_module, print_module
from ascend_mp.passes.precision import (
    PrecisionReport,
    run_precision,
    walk,
)
from ascend_mp.tools.ascend_opt import main

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


def _unfolded(text: str, **options: object) -> ModuleOp:
    """The pass as it was before the fold (the user's cast kept, fed by an inserted cast back to f32)."""
    saved = walk.Planner.fold_identity_cast  # pyright: ignore[reportPrivateUsage]
    walk.Planner.fold_identity_cast = lambda *_: False  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
    try:
        module, _ = run(text, **options)
    finally:
        walk.Planner.fold_identity_cast = saved  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
    return module


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


FILECHECK = Path(__file__).parents[2] / "filecheck"
