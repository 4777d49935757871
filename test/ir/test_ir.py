"""ascend_mp.ir: SSA dominance is verified for the functions the tools read (property test over random
graphs, against an independent oracle), the lexer answers in linear time, deep nesting is one line."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import graphs
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import OpResult

from ascend_mp.errors import AscendError
from ascend_mp.ir import check_dominance, parse_module, print_module


def _body(module: ModuleOp) -> list:
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return list(f.body.block.ops)


def _dominates_oracle(ops: list) -> bool:
    """Independent rule: in one block, every operand defined by an op of the block is defined earlier."""
    position = {op: i for i, op in enumerate(ops)}
    return all(
        not isinstance(v, OpResult) or v.op not in position or position[v.op] < i
        for i, op in enumerate(ops)
        for v in op.operands
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(graph=graphs(), seed=st.integers(0, 2**32 - 1))
def test_shuffled_ir_is_rejected_and_valid_ir_accepted(graph: tuple[str, ModuleOp], seed: int) -> None:
    _, module = graph
    text = print_module(module)
    parse_module(text, "valid.mlir")  # the graph as drawn is valid: accepted
    ops = _body(module)
    body, ret = ops[:-1], ops[-1]
    order = body[:]
    random.Random(seed).shuffle(order)
    block = ret.parent_block()
    assert block is not None
    for op in body:
        op.detach()
    for op in order:
        block.insert_op_before(op, ret)
    valid = _dominates_oracle(order + [ret])
    shuffled = print_module(module)
    if valid:
        parse_module(shuffled, "shuffled.mlir")
    else:
        with pytest.raises(
            AscendError,
            match=r"^shuffled\.mlir:\d+:\d+: '[\w.]+' operand #\d+.* (is used before its definition|is the result)",
        ):
            parse_module(shuffled, "shuffled.mlir")
        with pytest.raises(AscendError):
            check_dominance(module)  # the in-memory module too (no source locations: @func, op #k)


SELF_USE = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = ascend.Add %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
"""


def test_self_use_cycle_and_use_before_def() -> None:
    with pytest.raises(
        AscendError, match=r"^m.mlir:2:3: 'ascend.Add' operand #1 \(%a\) is the result of this op itself$"
    ):
        parse_module(SELF_USE, "m.mlir")
    cycle = SELF_USE.replace("%a = ascend.Add %x, %a", "%a = ascend.Add %x, %b").replace(
        "  func.return", "  %b = ascend.Relu %a : (tensor<4xf32>) -> tensor<4xf32>\n  func.return"
    )
    with pytest.raises(AscendError, match=r"^m.mlir:2:3: .* \(%b\) is used before its definition at m.mlir:3:3$"):
        parse_module(cycle, "m.mlir")


def test_nested_regions_see_enclosing_values() -> None:
    """A value defined before an op with a region may be used inside it; one defined after may not."""
    ok = """builtin.module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
    func.return %a : tensor<4xf32>
  }
}
"""
    parse_module(ok, "m.mlir")


@pytest.mark.parametrize("length", [40, 4000])
def test_unterminated_string_fails_fast(length: int) -> None:
    """xDSL's own pattern takes time doubling per character (40 characters: hours); ours is linear."""
    text = 'func.func @f() {\n  func.return {name = "' + "a" * length + "} \n}\n"
    start = time.perf_counter()
    with pytest.raises(AscendError, match=r"^m.mlir:2:23: unterminated string literal"):
        parse_module(text, "m.mlir")
    assert time.perf_counter() - start < 30  # a hang guard, not a speed target


def test_strings_still_parse() -> None:
    text = 'func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = ascend.Relu %x {name = "a\\"b\\n\\41"} : (tensor<4xf32>) -> tensor<4xf32>\n  func.return %0 : tensor<4xf32>\n}\n'
    module = parse_module(text, "m.mlir")
    relu = _body(module)[0]
    assert relu.properties["name"].data == 'a"b\nA'


def test_deep_nesting_is_one_line() -> None:
    with pytest.raises(AscendError, match=r"^m.mlir:\d+:\d+: nesting too deep"):
        parse_module("builtin.module {\n" * 300 + "}\n" * 300, "m.mlir")
    with pytest.raises(AscendError, match=r"^m.mlir:1:\d+: nesting too deep"):
        parse_module("func.func @f() attributes {a = " + "[" * 500 + "]" * 500 + "} {\n  func.return\n}\n", "m.mlir")


def test_byte_order_mark_is_accepted_and_columns_are_kept() -> None:
    from ascend_mp.ir import decode_source

    parse_module(decode_source("\ufefffunc.func @f() {\n  func.return\n}\n".encode(), "m.mlir"), "m.mlir")
    with pytest.raises(AscendError, match=r"^m.mlir:1:3: "):
        parse_module(decode_source("\ufeff  ? = 1\n".encode(), "m.mlir"), "m.mlir")
