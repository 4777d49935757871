"""Emitting ascend IR: the helpers the model builder, the frontends and the training passes share.

```python
fn, block = new_function("f", [tensor((4, 3))], ["x"])
e = Emitter(block)
y = e.one(ascend.ReluOp, block.args[0], name="relu")
finish_function(fn, block, [y])
```

:class:`Emitter` appends ascend ops to a block (or before an op) with inferred result
types; `keep_dtype=True` marks each op it emits with the unit `keep_dtype` property, so
no precision mode changes it. :func:`name_new_ops` gives unnamed ops TF-style names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, TensorType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ascend_mp.dialects import ascend
from ascend_mp.dtypes import BY_NAME, NUMPY, element_type, tensor_dtype

KEEP_DTYPE = "keep_dtype"
"""The unit property that pins an op to its original dtype under every precision mode."""


def mark_keep_dtype(op: Operation) -> None:
    """Set the `keep_dtype` unit property on an ascend op (other ops are left alone)."""
    if isinstance(op, ascend.AscendOp):
        op.properties[KEEP_DTYPE] = UnitAttr()


def is_kept(op: Operation) -> bool:
    """Whether `op` carries the `keep_dtype` unit property."""
    return KEEP_DTYPE in op.properties


def mark_all(ops: Iterable[Operation]) -> None:
    """:func:`mark_keep_dtype` on each op."""
    for op in ops:
        mark_keep_dtype(op)


Shape = tuple[int, ...]


def tensor(shape: Sequence[int], dtype: str = "f32") -> TensorType:
    """`tensor<shape x dtype>`."""
    return TensorType(element_type(dtype), list(shape))


def shape(value: SSAValue) -> Shape:
    """The static shape of a tensor value."""
    return ascend.shape_of(value)


def dtype(value: SSAValue) -> str:
    """The dtype name of a tensor value (`f32`, `f16`, `i32`, ...)."""
    name = tensor_dtype(value.type)
    assert name is not None, f"not a modelled tensor: {value.type}"
    return name


def dense(array: np.ndarray, dtype_: str) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute holding `array` as `dtype_` (splat when all values are equal)."""
    array = np.asarray(array)
    # from_list's overloads want the element kind (float or integer) statically; it is `dtype_`'s, known at run time
    type_: Any = tensor(array.shape, dtype_)
    flat = array.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        flat = flat[:1]
    values = [float(v) for v in flat] if BY_NAME[dtype_].is_float else [int(v) for v in flat]
    if flat.size == 1 and array.size != 1:
        return DenseIntOrFPElementsAttr.from_list(type_, values * array.size)
    return DenseIntOrFPElementsAttr.from_list(type_, values)


class Emitter:
    """Appends ascend ops to the end of a block (or before an op) and returns their results."""

    def __init__(self, block: Block, before: Operation | None = None, prefix: str = "", keep_dtype: bool = False):
        self.block = block
        self.before = before
        self.prefix = prefix
        """Prepended to the `name` of every op that is given one."""
        self.keep_dtype = keep_dtype
        """Mark every ascend op emitted with the unit `keep_dtype` property (training machinery
        that no precision mode may change: the loss, loss scaling, optimizer updates)."""

    def insert(self, op: Operation) -> Operation:
        if self.keep_dtype:
            mark_keep_dtype(op)
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        return op

    def op(
        self,
        cls: type[ascend.AscendOp],
        *operands: SSAValue | Sequence[SSAValue] | None,
        types: Sequence[Attribute],
        name: str | None = None,
        **props: object,
    ) -> Operation:
        """Create and insert `cls(*operands, result_types=types, **props)`."""
        props = {k: v for k, v in props.items() if v is not None}
        if name is not None:
            props["name"] = self.prefix + name
        op = cls(*operands, result_types=list(types), **props)
        return self.insert(op)

    def one(
        self,
        cls: type[ascend.AscendOp],
        *operands: SSAValue | Sequence[SSAValue] | None,
        type_: Attribute | None = None,
        name: str | None = None,
        **props: object,
    ) -> SSAValue:
        """A single-result op; the result type defaults to the first operand's."""
        if type_ is None:
            first = operands[0]
            assert isinstance(first, SSAValue)
            type_ = first.type
        return self.op(cls, *operands, types=[type_], name=name, **props).results[0]

    # -- conveniences --------------------------------------------------------------
    def const(
        self,
        value: np.ndarray | float,
        dtype_: str = "f32",
        shape_: Sequence[int] | None = None,
        name: str | None = None,
    ) -> SSAValue:
        array = np.asarray(value, dtype=NUMPY[dtype_] if dtype_ in ("f32", "f64", "i32", "i64") else np.float64)
        if shape_ is not None:
            array = np.broadcast_to(array, tuple(shape_))
        props: dict[str, object] = {} if name is None else {"name": self.prefix + name}
        return self.insert(ascend.ConstOp(dense(array, dtype_), **props)).results[0]

    def binary(self, cls: type[ascend.AscendOp], a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        """An elementwise binary op with a NumPy-broadcast result shape."""
        out = ascend.broadcast_shape(shape(a), shape(b))
        assert out is not None, f"{shape(a)} and {shape(b)} do not broadcast"
        return self.one(cls, a, b, type_=tensor(out, dtype(a)), name=name)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ascend.AddOp, a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ascend.SubOp, a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ascend.MulOp, a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ascend.RealDivOp, a, b)

    def neg(self, a: SSAValue) -> SSAValue:
        return self.one(ascend.NegOp, a)

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s dtype."""
        return self.const(value, dtype(like))

    def reshape(self, a: SSAValue, shape_: Sequence[int]) -> SSAValue:
        if tuple(shape_) == shape(a):
            return a
        return self.one(ascend.ReshapeOp, a, type_=tensor(shape_, dtype(a)))

    def cast(self, a: SSAValue, dtype_: str) -> SSAValue:
        if dtype(a) == dtype_:
            return a
        return self.one(ascend.CastOp, a, type_=tensor(shape(a), dtype_))

    def reduce_sum(self, a: SSAValue, axes: Sequence[int], keep_dims: bool = False) -> SSAValue:
        rank = len(shape(a))
        axes = sorted({ax % rank for ax in axes}) if rank else []
        if not axes:
            return a
        out = (
            [1 if i in axes else d for i, d in enumerate(shape(a))]
            if keep_dims
            else [d for i, d in enumerate(shape(a)) if i not in axes]
        )
        return self.one(ascend.ReduceSumOp, a, type_=tensor(out, dtype(a)), axes=list(axes), keep_dims=keep_dims)


def classification_loss(e: Emitter, logits: SSAValue, labels: SSAValue, keep_loss: bool = True) -> SSAValue:
    """The training loss of a classifier: softmax cross-entropy of `logits` (batch x classes) against one-hot
    `labels`, averaged over the batch. With `keep_loss` its ops are marked `keep_dtype` (the loss stays fp32
    under every precision mode, docs/design.md §7)."""
    batch = shape(logits)[0]
    sce = e.op(
        ascend.SoftmaxCrossEntropyWithLogitsOp,
        logits,
        labels,
        types=[tensor((batch,)), logits.type],
        name="loss/SoftmaxCrossEntropyWithLogits",
    )
    loss = e.one(ascend.ReduceMeanOp, sce.results[0], type_=tensor(()), name="loss/ReduceMean", axes=[0])
    if keep_loss:
        mark_all([sce, loss.owner])  # pyright: ignore[reportArgumentType]  # the loss is an op's result, so its owner is an Operation (not a Block)
    return loss


_VALID_HINT = re.compile(r"[A-Za-z_$.-][\w$.-]*", re.ASCII)
_HINT_BAD = re.compile(r"[^\w$.-]", re.ASCII)


def set_name_hint(value: SSAValue, name: str) -> None:
    """Name `value` after `name` (an ONNX name such as `onnx::Conv_40`), made a valid MLIR name: other
    characters become `_`, and a name that would start with a digit gets a `v` in front."""
    hint = _HINT_BAD.sub("_", name)
    if not _VALID_HINT.fullmatch(hint):
        hint = "v" + hint
    try:
        value.name_hint = hint
    except ValueError:
        pass


def new_function(
    name: str, inputs: Sequence[Attribute], arg_names: Sequence[str] | None = None
) -> tuple[func.FuncOp, Block]:
    """An empty `func.func` whose results are set by :func:`finish_function`."""
    block = Block(arg_types=list(inputs))
    for arg, hint in zip(block.args, arg_names or ()):
        set_name_hint(arg, hint)
    fn = func.FuncOp(name, (list(inputs), []), Region(block))
    return fn, block


def finish_function(fn: func.FuncOp, block: Block, results: Sequence[SSAValue]) -> func.FuncOp:
    """Append the `func.return` and fix the function type."""
    block.add_op(func.ReturnOp(*results))
    fn.function_type = FunctionType.from_lists(list(block.arg_types), [r.type for r in results])
    return fn


def name_new_ops(block: Block, after: Operation | None, scope: str) -> None:
    """Give the unnamed ascend ops after `after` (all, if None) TF-style names: `<scope>/<OpType>[_k]`."""
    op = block.first_op if after is None else after.next_op
    seen: dict[str, int] = {}
    while op is not None:
        if isinstance(op, ascend.AscendOp) and "name" not in op.properties:
            kind = op.name.removeprefix("ascend.")
            k = seen.get(kind, 0)
            seen[kind] = k + 1
            op.properties["name"] = ascend.to_attr(f"{scope}/{kind}" + (f"_{k}" if k else ""))
        op = op.next_op


def ops_after(block: Block, after: Operation | None) -> list[Operation]:
    """The ops of `block` after `after` (all of them, if None)."""
    op = block.first_op if after is None else after.next_op
    out: list[Operation] = []
    while op is not None:
        out.append(op)
        op = op.next_op
    return out
