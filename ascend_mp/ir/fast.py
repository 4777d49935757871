"""Fast paths through xDSL 0.74's private fields, in one module (docs/design.md §9).

Every private field the project touches (`_operands`, `_type`, `_next_op`, the use-list links, the resource
store's blobs, ...) is read or written here and nowhere else. Each helper does what a public xDSL call does, without
its property calls, checks or generic constructor, for the precision pass's hot loops; the resource-store helpers
do what xDSL has no public call for (list or reset the handles of the process-wide blob store).
`test/ir/test_fast_ir.py` checks that each builds exactly what the public API builds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue, SSAValues, Use

type_of: Any = attrgetter("_type")
"""`value.type`, without the property call."""

operands_of: Any = attrgetter("_operands")
"""`tuple(op.operands)`: the op's operand tuple itself (read it, never change it)."""

next_op: Any = attrgetter("_next_op")
"""`op.next_op`, without the property call."""


def set_type(value: SSAValue, type_: Attribute) -> None:
    """Retype `value` in place: its uses see the new type. xDSL's public way, `replace_value_with_new_type`,
    builds a new value and moves every use to it (about 10x the cost); callers retype only values whose every
    consumer they have already decided."""
    value._type = type_


def has_one_use(value: SSAValue) -> bool:
    """`len(value.uses) == 1`, without building the use set."""
    use = value.first_use
    return use is not None and use._next_use is None


def use_sites(value: SSAValue) -> Iterator[tuple[Operation, int]]:
    """(operation, operand index) of each use of `value`, in use-list order: what `value.uses` yields, without its
    property calls."""
    use = value.first_use
    while use is not None:
        yield use._operation, use._index
        use = use._next_use


def link_op(op: Operation, block: Block, before: Operation | None) -> None:
    """Put a new, detached op without regions into `block` before `before` (None: at the end): what
    `Block.insert_op_before` and `Block.add_op` do, without their checks (which walk the op's parents)."""
    op.parent = block
    if before is None:
        last = block._last_op
        op._prev_op = last
        if last is None:
            block._first_op = op
        else:
            last._next_op = op
        block._last_op = op
        return
    prev = before._prev_op
    op._prev_op, op._next_op, before._prev_op = prev, before, op
    if prev is None:
        block._first_op = op
    else:
        prev._next_op = op


def set_operands(op: Operation, values: Sequence[SSAValue]) -> None:
    """`op.operands[i] = values[i]` for every position that changes, at once: what xDSL's `OpOperands.__setitem__`
    does (move the use to the new value, replace the operand tuple), once per op instead of once per operand."""
    uses = op._operand_uses
    for old, new, use in zip(op._operands, values, uses):
        if old is not new:
            old.remove_use(use)
            new.add_use(use)
    op._operands = SSAValues(values)


_SHELLS: dict[type[Operation], tuple[dict[str, Any], dict[str, Any]]] = {}
"""Op class -> (the fields every fresh op of it starts with, its default properties), from one op it built."""


def quick_op(cls: type[Operation], operands: tuple[SSAValue, ...], result_types: tuple[Attribute, ...]) -> Operation:
    """`cls.create(operands=operands, result_types=result_types)` (no properties, attributes, regions or
    successors), without xDSL's generic constructor: its fields are copied from an op the class built once and only
    the operands, results and property dicts are new. A fifth of the cost, for every cast a pass inserts; the op is
    the one `create` builds (`test_fast_ir.py`)."""
    shell = _SHELLS.get(cls)
    if shell is None:
        model = cls.create()
        fields = {k: v for k, v in model.__dict__.items() if k not in ("_operands", "_operand_uses", "results")}
        shell = _SHELLS[cls] = (fields, dict(model.properties))
    fields, properties = shell
    op = object.__new__(cls)
    new = object.__new__
    uses = []
    for i, value in enumerate(operands):  # a Use each, put first in the value's use list (what `add_use` does)
        use = new(Use)
        first = value.first_use
        use.__dict__.update(_operation=op, _index=i, _prev_use=None, _next_use=first)
        if first is not None:
            first._prev_use = use
        value.first_use = use
        uses.append(use)
    results = []
    for i, type_ in enumerate(result_types):
        result = new(OpResult)
        result.__dict__.update(_type=type_, op=op, index=i)  # pyright: ignore[reportAttributeAccessIssue]  # `new` is object.__new__, typed as returning the class; this is an instance, whose __dict__ is a dict
        results.append(result)
    op.__dict__.update(  # pyright: ignore[reportAttributeAccessIssue]  # `new` is object.__new__, typed as returning the class; this is an instance, whose __dict__ is a dict
        fields,
        _operands=SSAValues(operands),
        _operand_uses=tuple(uses),
        results=SSAValues(results),
        properties=dict(properties),
        attributes={},
    )
    return op


def blob_entries(store: OpAsmDialectInterface) -> dict[str, str]:
    """Every handle `store` has declared -> its blob ("" for one declared but not filled yet), as a new dict: what
    `store.lookup(handle)` gives for each handle (the store lists its handles to no public call)."""
    return dict(store._blob_storage)


def set_blob_entries(store: OpAsmDialectInterface, entries: Mapping[str, str]) -> None:
    """Make `store` hold exactly `entries` (handle -> blob, as :func:`blob_entries` gives them): what a new store
    holds after `declare_resource(handle)` and `parse_resource(handle, blob)` of each (a store forgets a handle to
    no public call)."""
    blobs = store._blob_storage
    blobs.clear()
    blobs.update(entries)


__all__ = [
    "blob_entries",
    "has_one_use",
    "link_op",
    "next_op",
    "operands_of",
    "quick_op",
    "set_blob_entries",
    "set_operands",
    "set_type",
    "type_of",
    "use_sites",
]
