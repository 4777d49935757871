"""`quick_op` builds the op xDSL's `create` builds: the same fields, operands with their uses, results, default
properties; it prints and verifies alike, and the precision pass's casts built with it link into blocks as xDSL's
`insert_op_before` / `add_op` would."""

from __future__ import annotations

import pytest
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import TensorType, f16, f32
from xdsl.ir import Block, Operation

from ascend_mp.dialects.ascend import AddOp, CastOp, ReluOp
from ascend_mp.ir import print_module
from ascend_mp.ir.fast import quick_op

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
    assert names == [
        "ascend.Cast",
        "ascend.Cast",
        "ascend.MatMulV2",
        "ascend.SoftmaxV2",
        "ascend.MatMulV2",
        "ascend.Cast",
        "func.return",
    ]
    body = module.ops.first.body.block  # type: ignore[union-attr]
    ops = list(body.ops)
    assert body.first_op is ops[0] and body.last_op is ops[-1]
    for prev, nxt in zip(ops, ops[1:]):
        assert prev.next_op is nxt and nxt.prev_op is prev and nxt.parent is body
    assert print_module(parse_module(print_module(module))) == print_module(module)


# Each private-field helper of `ascend_mp.ir.fast` against the public xDSL API it stands for.


def _block_with_ops() -> tuple[Block, list[Operation]]:
    block = Block(arg_types=[T32, T32])
    x, y = block.args
    add = AddOp(x, y, result_types=[T32])
    relu = ReluOp(add.results[0], result_types=[T32])
    mul = AddOp(relu.results[0], x, result_types=[T32])
    block.add_ops([add, relu, mul])
    return block, [add, relu, mul]


def test_readers_equal_the_public_properties() -> None:
    from ascend_mp.ir.fast import next_op, operands_of, type_of

    block, ops = _block_with_ops()
    for op in ops:
        assert tuple(operands_of(op)) == tuple(op.operands)
        assert next_op(op) is op.next_op
        for value in (*op.operands, *op.results):
            assert type_of(value) is value.type
    assert next_op(ops[-1]) is None


def test_use_helpers_equal_the_public_use_list() -> None:
    from ascend_mp.ir.fast import has_one_use, use_sites

    block, ops = _block_with_ops()
    for value in (*block.args, *(r for op in ops for r in op.results)):
        assert has_one_use(value) == (len(list(value.uses)) == 1) == value.has_one_use()
        assert sorted((id(o), i) for o, i in use_sites(value)) == sorted((id(u.operation), u.index) for u in value.uses)
        assert len(list(use_sites(value))) == len(list(value.uses))


def test_set_type_is_what_consumers_see() -> None:
    from ascend_mp.ir.fast import set_type

    block, (add, relu, _) = _block_with_ops()
    set_type(add.results[0], T16)
    assert add.results[0].type == T16 and relu.operands[0].type == T16
    assert str(add).endswith("-> tensor<2x3xf16>")


@pytest.mark.parametrize("where", ["start", "middle", "end", "empty"])
def test_link_op_equals_insert_op_before_and_add_op(where: str) -> None:
    from ascend_mp.ir.fast import link_op

    def build() -> tuple[Block, list[Operation]]:
        if where == "empty":
            return Block(arg_types=[T32, T32]), []
        return _block_with_ops()

    fast_block, fast_ops = build()
    ref_block, ref_ops = build()
    index = {"start": 0, "middle": 1, "end": None, "empty": None}[where]
    fast_new = CastOp.create(operands=[fast_block.args[0]], result_types=[T16])
    ref_new = CastOp.create(operands=[ref_block.args[0]], result_types=[T16])
    link_op(fast_new, fast_block, None if index is None else fast_ops[index])
    if index is None:
        ref_block.add_op(ref_new)
    else:
        ref_block.insert_op_before(ref_new, ref_ops[index])
    fast_list, ref_list = list(fast_block.ops), list(ref_block.ops)
    assert [o.name for o in fast_list] == [o.name for o in ref_list]
    assert fast_new.parent is fast_block and fast_list.index(fast_new) == ref_list.index(ref_new)
    assert fast_block.first_op is fast_list[0] and fast_block.last_op is fast_list[-1]
    for prev, nxt in zip(fast_list, fast_list[1:]):
        assert prev.next_op is nxt and nxt.prev_op is prev
    assert fast_list[0].prev_op is None and fast_list[-1].next_op is None


def test_set_operands_equals_assigning_each_operand() -> None:
    from ascend_mp.ir.fast import set_operands

    fast_block, (fast_add, _, fast_mul) = _block_with_ops()
    ref_block, (ref_add, _, ref_mul) = _block_with_ops()
    x, y = fast_block.args
    set_operands(fast_mul, [y, x])
    rx, ry = ref_block.args
    ref_mul.operands[0] = ry
    ref_mul.operands[1] = rx
    assert tuple(fast_mul.operands) == (y, x)
    for fast_value, ref_value in ((x, rx), (y, ry), (fast_add.results[0], ref_add.results[0])):
        fast_uses = sorted((o.name, i) for o, i in ((u.operation, u.index) for u in fast_value.uses))
        ref_uses = sorted((o.name, i) for o, i in ((u.operation, u.index) for u in ref_value.uses))
        assert fast_uses == ref_uses
    assert str(fast_mul) == str(ref_mul)


def _declared(entries: dict[str, str]) -> OpAsmDialectInterface:
    """A new store holding `entries` through the public calls ("" : declared, never filled)."""
    store = OpAsmDialectInterface()
    for handle, blob in entries.items():
        assert store.declare_resource(handle) == handle
        if blob:
            store.parse_resource(handle, blob)
    return store


BLOBS = {"w": "0x0400000000003c00", "b": "0x0200000000", "empty": ""}


def test_blob_entries_list_what_lookup_gives() -> None:
    from ascend_mp.ir.fast import blob_entries

    store = _declared(BLOBS)
    entries = blob_entries(store)
    assert entries == BLOBS
    assert all(store.lookup(handle) == blob for handle, blob in entries.items())
    entries["w"] = "0x00"  # a copy: the store keeps its blob
    assert store.lookup("w") == BLOBS["w"]


@pytest.mark.parametrize("entries", [BLOBS, {}], ids=["some", "none"])
def test_set_blob_entries_equals_a_store_that_declared_them(entries: dict[str, str]) -> None:
    from ascend_mp.ir.fast import blob_entries, set_blob_entries

    store = _declared({"old": "0x0100000001", "w": "0x0100000002"})  # replaced, not merged
    set_blob_entries(store, entries)
    reference = _declared(entries)
    assert blob_entries(store) == blob_entries(reference) == entries
    for handle in ("w", "b", "empty", "old"):
        assert store.lookup(handle) == reference.lookup(handle)
    assert store.build_resources(["w", "b", "empty", "old"]) == reference.build_resources(["w", "b", "empty", "old"])
    # Declaring again renames a handle either store has, alike; a new one is taken as asked.
    for key in ("w", "w", "fresh"):
        assert store.declare_resource(key) == reference.declare_resource(key)
