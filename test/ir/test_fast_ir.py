"""`quick_op` builds the op xDSL's `create` builds: the same fields, operands with their uses, results, default
properties; it prints and verifies alike, and the precision pass's casts built with it link into blocks as xDSL's
`insert_op_before` / `add_op` would."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import TensorType, f16, f32
from xdsl.ir import Block, Operation

from ascend_mp.dialects.ascend import AddOp, CastOp, ReluOp
from ascend_mp.ir import print_module, quick_op

T32 = TensorType(f32, [2, 3])
T16 = TensorType(f16, [2, 3])


def _shape(op: Operation) -> dict[str, object]:
    return {
        "keys": sorted(op.__dict__),
        "operands": tuple(op.operands),
        "result types": [r.type for r in op.results],
        "result owners": [(r.op is op, r.index) for r in op.results],
        "properties": dict(op.properties),
        "attributes": dict(op.attributes),
        "regions": op.regions,
        "successors": tuple(op.successors),
        "location": op.location,
        "parent": op.parent,
    }


@pytest.mark.parametrize(("cls", "arity", "out"), [(CastOp, 1, T16), (ReluOp, 1, T32), (AddOp, 2, T32)])
def test_quick_op_equals_create(cls: type[Operation], arity: int, out: TensorType) -> None:
    block = Block(arg_types=[T32, T32])
    operands = tuple(block.args[:arity])
    fast = quick_op(cls, operands, (out,))
    reference = cls.create(operands=list(operands), result_types=[out])
    assert _shape(fast) == _shape(reference)
    fast.verify()
    assert str(fast) == str(reference)
    for i, value in enumerate(operands):  # each operand lists both ops' uses, at the right index
        uses = {(id(u.operation), u.index) for u in value.uses}
        assert (id(fast), i) in uses and (id(reference), i) in uses
    # Fresh containers: changing one op changes no other built from the same model.
    other = quick_op(cls, operands, (out,))
    fast.properties["name"] = fast.results[0].type  # any attribute
    fast.attributes["x"] = fast.results[0].type
    assert "name" not in other.properties and "x" not in other.attributes
    assert other.results[0] is not fast.results[0]


def test_the_precision_pass_casts_print_and_verify_as_before() -> None:
    """Casts inserted at the start of a block and before its last op are linked in order, verify and print."""
    from ascend_mp.ir import parse_module, verify
    from ascend_mp.passes.precision import load_config, precision_rewrite

    text = """
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = ascend.MatMulV2 %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = ascend.SoftmaxV2 %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = ascend.MatMulV2 %b, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %c : tensor<4x4xf32>
}
"""
    module = parse_module(text)
    precision_rewrite(module, load_config(mode="allow_mix_precision"))
    verify(module)
    names = [op.name for op in module.walk()][2:]
    # White MatMuls in fp16, the gray Softmax follows them: the arguments cast once each before their first use,
    # the result cast back before the return.
    assert names == ["ascend.Cast", "ascend.Cast", "ascend.MatMulV2", "ascend.SoftmaxV2", "ascend.MatMulV2", "ascend.Cast", "func.return"]
    body = module.ops.first.body.block  # type: ignore[union-attr]
    ops = list(body.ops)
    assert body.first_op is ops[0] and body.last_op is ops[-1]
    for prev, nxt in zip(ops, ops[1:]):
        assert prev.next_op is nxt and nxt.prev_op is prev and nxt.parent is body
    assert print_module(parse_module(print_module(module))) == print_module(module)
