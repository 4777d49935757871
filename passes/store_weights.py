"""`ascend-store-low-weights`: store constants in the low dtype they are only used in.

After `ascend-precision`, a weight that feeds fp16 kernels is an fp32 `ascend.Const`
followed by `ascend.Cast`s to f16. ATC stores such weights in fp16; so does this pass:
a Const whose every use is a Cast to the same lower-precision float dtype becomes a
Const of that dtype (rounded to nearest even, exactly as the Cast would), and the
Casts go. Values are unchanged bit for bit; the stored bytes shrink.

```mlir
%w = ascend.Const dense_resource<w> : tensor<64x3x7x7xf32> {name = "w"}
%0 = ascend.Cast %w : (tensor<64x3x7x7xf32>) -> tensor<64x3x7x7xf16>
// becomes
%w = ascend.Const dense_resource<w_f16> : tensor<64x3x7x7xf16> {name = "w"}
```

:func:`store_low_weights` returns the weight bytes before and after (for reports). The precision
pass does not build the Casts it would erase here: it retypes such a Const itself and leaves only
its payload to convert (`retyped`), which gives the same IR.
The pass is idempotent and leaves every other op alone.
"""

from __future__ import annotations

import time
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass

from ascend_mp.dialects.ascend import CastOp, ConstOp
from ascend_mp.dtypes import LOW_FLOATS, PRECISION_RANK, tensor_dtype, with_dtype

if TYPE_CHECKING:
    import numpy as np


@dataclass
class WeightBytes:
    """Bytes held by `ascend.Const` ops before and after narrowing, and the constants narrowed. The byte counts
    are computed when asked (a report asks; a pass run without one does not pay for sizing every constant)."""

    narrowed: list[str] = field(default_factory=list[str])
    seconds: float = 0.0
    """The CPU seconds converting the narrowed payloads cost (reading, rounding and encoding them; not in the JSON)."""
    types: list[tuple[Attribute, Attribute]] = field(default_factory=list[tuple[Attribute, Attribute]])
    """(type before, type after) of every constant, narrowed ones first."""

    @property
    def before(self) -> int:
        return sum(type_bytes(old) for old, _ in self.types)

    @property
    def after(self) -> int:
        return sum(type_bytes(new) for _, new in self.types)

    @property
    def converted(self) -> int:
        """Bytes of the narrowed constants' payloads before conversion (the benchmark's MB/s)."""
        return sum(type_bytes(old) for old, _ in self.types[: len(self.narrowed)])

    def as_json(self) -> dict[str, Any]:
        return {
            "weight_bytes_before": self.before,
            "weight_bytes_after": self.after,
            "narrowed_constants": len(self.narrowed),
        }


def const_array(op: ConstOp) -> np.ndarray[Any, Any]:
    """The value of a Const as a numpy array."""
    assert isinstance(op.y.type, TensorType)
    return value_array(op.value, op.y.type)


def value_array(value: Attribute, type_: TensorType) -> np.ndarray[Any, Any]:
    """A Const's value attribute (of tensor type `type_`) as a numpy array."""
    import numpy as np

    from ascend_mp.dtypes import NUMPY

    if isinstance(value, DenseResourceAttr):
        from ascend_mp.resources import resource_array

        return resource_array(value)
    assert isinstance(value, DenseIntOrFPElementsAttr)
    dtype = NUMPY[tensor_dtype(type_) or "f32"]
    shape = tuple(type_.get_shape())
    values = np.asarray(value.get_values(), dtype)
    return np.broadcast_to(values.reshape(()), shape) if values.size == 1 else values.reshape(shape)


def const_bytes(op: ConstOp) -> int:
    """Bytes a Const holds (numpy is not needed to count them)."""
    return type_bytes(op.y.type)


def type_bytes(type_: Attribute) -> int:
    """Bytes a tensor of this type holds (0 for a non-tensor)."""
    if not isinstance(type_, TensorType):
        return 0
    return type_.element_count() * _itemsize(type_)


def _itemsize(type_: TensorType) -> int:
    return max(1, (int(getattr(type_.element_type, "bitwidth", 32)) + 7) // 8)


def weight_bytes(module: Operation) -> int:
    """Bytes of every `ascend.Const` result in the module."""
    return sum(const_bytes(op) for op in module.walk() if isinstance(op, ConstOp))


def _narrow_target(op: ConstOp, casts: Container[Operation] | None) -> str | None:
    """The low dtype every use of the Const casts it to, if narrowing applies."""
    src = tensor_dtype(op.y.type)
    uses = list(op.y.uses)
    if src not in PRECISION_RANK or not uses:
        return None
    targets = set()
    for use in uses:
        cast = use.operation
        if not isinstance(cast, CastOp) or cast.keep_dtype is not None or (casts is not None and cast not in casts):
            return None
        targets.add(tensor_dtype(cast.y.type))
    if len(targets) != 1:
        return None
    (low,) = targets
    if low not in LOW_FLOATS or PRECISION_RANK[low] >= PRECISION_RANK[src]:
        return None
    return low


def store_low_weights(
    module: ModuleOp | Operation,
    casts: Container[Operation] | None = None,
    consts: Iterable[ConstOp] | None = None,
    retyped: Iterable[tuple[ConstOp, TensorType]] | None = None,
    others: bool = True,
) -> WeightBytes:
    """Narrow every constant used only through casts to one low float dtype (see the module doc).

    With `casts`, only those casts count (the precision pass passes the casts it inserted, so a
    cast the user wrote is kept); with `consts`, those are the module's constants (no walk).
    `retyped`: constants whose result the precision pass already retyped to the low dtype instead
    of casting it at every use, with their type before, so only their payload is left to convert:
    the result is what narrowing them here would give, without the casts built and erased again.
    `others=False`: no other constant can be narrowed (the precision pass knows: it retyped every one it could
    store low, `test_store_low_direct.py`), so they are only counted."""
    from ascend_mp.resources import blob_attr, handle_for

    todo = [o for o in module.walk() if isinstance(o, ConstOp)] if consts is None else consts
    before = {id(op): type_ for op, type_ in retyped or ()}  # ids: an op's __hash__ is a Python call
    jobs: list[tuple[TensorType, TensorType, str]] = []  # (old type, new type, low) of each constant narrowed
    done: list[tuple[ConstOp, bool]] = []  # (the constant, whether the pass retyped it)
    kept: list[tuple[Attribute, Attribute]] = []
    sources: list[tuple[Attribute, str]] = []  # (its value, its node name)
    targets: list[tuple[ConstOp, str] | None] = []  # (the Const holding the blob, the blob's expected handle)
    # The IR first, a blob under the handle it will get unless that handle holds other bytes (fixed below), and
    # the payloads last, in one go: streaming the weights through the caches slows any IR work after it.
    for op in todo:
        (result,) = op.results
        old_type = before.get(id(op))
        if old_type is not None:
            new_type = result.type
            in_place = True
        else:
            low = _narrow_target(op, casts) if others else None
            if low is None:
                kept.append((result.type, result.type))
                continue
            old_type = result.type
            assert isinstance(old_type, TensorType)
            new_type, in_place = with_dtype(old_type, low), False
        low = tensor_dtype(new_type) or ""
        jobs.append((old_type, new_type, low))  # pyright: ignore[reportArgumentType]  # a Const's result is a tensor (ConstOp's result constraint)
        done.append((op, in_place))
        props = op.properties
        value, name = props["value"], props.get("name")
        sources.append((value, name.data if isinstance(name, StringAttr) else "const"))
        if isinstance(value, DenseResourceAttr):
            handle = handle_for(f"{value.resource_handle.data}_{low}")
            targets.append((_narrow(op, blob_attr(handle, new_type), in_place), handle))  # pyright: ignore[reportArgumentType]  # a Const's result is a tensor (ConstOp's result constraint)
        else:
            targets.append(None)  # a literal, or a blob named after the op: after its payload
    report = WeightBytes(types=[(old, new) for old, new, _ in jobs] + kept)
    start = time.process_time()
    values = [_low_value(*source, *job) for source, job in zip(sources, jobs)]
    report.seconds = time.process_time() - start
    for (op, in_place), (_, new_type, _), value, target in zip(done, jobs, values, targets):
        if target is None:
            _narrow(op, value if isinstance(value, Attribute) else blob_attr(value, new_type), in_place)
        elif value != target[1]:  # the expected handle held other bytes: the blob got a fresh one
            target[0].properties["value"] = value if isinstance(value, Attribute) else blob_attr(value, new_type)
    report.narrowed = [name for _, name in sources]
    return report


def _narrow(op: ConstOp, attr: Attribute, in_place: bool) -> ConstOp:
    """Make the Const hold `attr`: in place when the pass retyped it already, else as a new Const replacing it and
    the casts of it. Returns the Const that holds it."""
    if in_place:
        op.properties["value"] = attr
        return op
    new = ConstOp(attr)  # pyright: ignore[reportArgumentType]  # attr is a dense_resource or the dense attr _low_value built
    new.y.name_hint = op.y.name_hint
    new.properties.update(_other_properties(op))
    new.attributes.update(op.attributes)
    assert op.parent is not None
    op.parent.insert_op_before(new, op)
    for use in list(op.y.uses):
        cast = use.operation
        cast.results[0].replace_all_uses_with(new.y)
        cast.detach()
        cast.erase()
    op.detach()
    op.erase()
    return new


def _other_properties(op: ConstOp) -> dict[str, Attribute]:
    return {k: v for k, v in op.properties.items() if k != "value"}


def _low_value(value: Attribute, name: str, old_type: TensorType, new_type: TensorType, low: str) -> Attribute | str:
    """A Const's value (of type `old_type`; `name`: its node name) rounded to `low` (nearest even, as the Cast it
    replaces) for a value of `new_type`: the handle of its blob for a blob, else a literal when it fits one."""
    import numpy as np

    from ascend_mp.dtypes import NUMPY
    from ascend_mp.resources import fits_dense_literal, store_blob

    with np.errstate(over="ignore"):  # overflow gives inf, as the Cast it replaces would
        array = np.asarray(value_array(value, old_type)).astype(NUMPY[low])
    if fits_dense_literal(array) and not isinstance(value, DenseResourceAttr):
        return DenseIntOrFPElementsAttr.from_list(new_type, [float(v) for v in array.reshape(-1)])  # pyright: ignore[reportCallIssue, reportArgumentType]  # xDSL's from_list overloads want a TensorType of a float/int type statically; this one is only known at run time
    prefix = value.resource_handle.data if isinstance(value, DenseResourceAttr) else name
    return store_blob(f"{prefix}_{low}", array, new_type)


@dataclass(frozen=True)
class StoreLowWeightsPass(ModulePass):
    """Store constants in the low float dtype their only uses cast them to (ATC's fp16 weights)."""

    name = "ascend-store-low-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        store_low_weights(op)
