"""Import-time folding: constants, Identity and the shape subgraphs exporters emit.

This is its own step before conversion. The nodes are put in topological order once;
then onnx's shape inference (with the graph inputs made static by `--input_shape`)
alternates with one pass over the nodes that folds every node whose inputs are all
known, with numpy (`FOLDERS`): in topological order a whole chain of constants folds
in one pass, and another round is needed only when a fold made a shape known (a
`Shape` of a tensor whose shape is known is known). What is left is the graph to
convert: its nodes, the constants (initializers and folded values), and the static
type of every value.

Every folded result is checked against the tensor limit (`limits.check_alloc`) before
numpy allocates it, and every axis against the rank (`axis_in`); numpy's floating-point
warnings become one-line warnings of the `ascend_mp` logger naming the node.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ascend_mp.dtypes import BY_NAME, DTYPES
from ascend_mp.errors import AscendError
from ascend_mp.limits import check_alloc

Array = np.ndarray[Any, Any]
ValueType = tuple[int, tuple[int | None, ...] | None]
"""(ONNX element type, shape with None for an unknown dimension, or None if the rank is unknown)."""

ONNX_TO_DTYPE = {getattr(onnx.TensorProto, d.onnx): d.name for d in DTYPES}
"""The ONNX element types the importer supports, as ascend dtypes."""

SMALL = 4096
"""Constants with at most this many elements stay initializers during shape inference
(the ones shape inference reads: shapes, axes, pads); larger ones become typed inputs."""


@dataclass
class Graph:
    """A graph after folding: the nodes to convert, the constants, every value's type."""

    nodes: list[onnx.NodeProto]
    consts: dict[str, Array]
    types: dict[str, ValueType]
    inputs: list[str]
    outputs: list[str]
    aliases: dict[str, str] = field(default_factory=dict[str, str])


def attrs_of(node: onnx.NodeProto) -> dict[str, Any]:
    """A node's attributes as Python values (ints, floats, bytes->str, lists, tensors->arrays);
    a tensor attribute that cannot be read is a one-line AscendError naming the node."""
    out: dict[str, Any] = {}
    for a in node.attribute:
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        elif isinstance(value, onnx.TensorProto):
            value = read_tensor(value, f"node '{node.name or node.op_type}' ({node.op_type}) attribute '{a.name}'")
        out[a.name] = value
    return out


def read_tensor(tensor: onnx.TensorProto, what: str) -> Array:
    """A TensorProto as an array; an unknown or unsupported element type (UNDEFINED, 77, STRING) or
    inconsistent data is a one-line AscendError naming `what`."""
    if tensor.data_type not in ONNX_TO_DTYPE:
        name = (
            onnx.TensorProto.DataType.Name(tensor.data_type)
            if tensor.data_type in onnx.TensorProto.DataType.values()
            else str(tensor.data_type)
        )
        raise AscendError(f"{what}: element type {name} is not supported")
    check_alloc([int(d) for d in tensor.dims], 1, what)
    try:
        return numpy_helper.to_array(tensor)
    except Exception as e:  # noqa: BLE001 - onnx's reader on inconsistent data (a wrong byte count, ...)
        raise AscendError(f"{what} cannot be read: {' '.join(str(e).split()) or type(e).__name__}") from None


def axis_in(axis: Any, rank: int, what: str = "axis") -> int:
    """`axis` in [-rank, rank) made non-negative; else a ValueError saying so (never a wrap-around or a
    ZeroDivisionError on a scalar)."""
    a = int(axis)
    if not -rank <= a < rank:
        raise ValueError(f"{what} {a} is out of range for rank {rank} (expected {-rank} to {rank - 1})")
    return a % rank


def _alloc(shape: Iterable[Any], dtype: Any) -> tuple[int, ...]:
    """`shape`, after checking a folded result of it fits the tensor limit (before numpy allocates it)."""
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimension in {list(dims)}")
    check_alloc(dims, np.dtype(dtype).itemsize, "its folded result")
    return dims


# --------------------------------------------------------------------------------------
# numpy evaluators of the foldable ops
# --------------------------------------------------------------------------------------

Folder = Callable[[dict[str, Any], list[Array | None], int], list[Array]]
FOLDERS: dict[str, Folder] = {}


def folder(*names: str) -> Callable[[Folder], Folder]:
    def register(fn: Folder) -> Folder:
        for n in names:
            FOLDERS[n] = fn
        return fn

    return register


def _axes(attrs: dict[str, Any], ins: list[Array | None], index: int) -> list[int] | None:
    if len(ins) > index and ins[index] is not None:
        return [int(a) for a in np.asarray(ins[index]).reshape(-1)]
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    return None


@folder("Identity", "Dropout")
def _identity(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = ins[0]
    assert x is not None
    return [x]


@folder("Cast")
def _cast(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    to = int(attrs["to"])
    if to not in ONNX_TO_DTYPE:
        name = onnx.TensorProto.DataType.Name(to) if to in onnx.TensorProto.DataType.values() else str(to)
        raise ValueError(f"cast to {name} is not supported")
    return [np.asarray(ins[0]).astype(helper.tensor_dtype_to_np_dtype(to))]


def check_indices(idx: Array, size: int, axis: int) -> Array:
    """Indices into a dimension of `size`, negative ones made positive; out of [-size, size) is a ValueError."""
    if idx.size and (idx.min() < -size or idx.max() >= size):
        raise ValueError(
            f"indices must lie in [{-size}, {size - 1}] on axis {axis}, got {int(idx.min())} to {int(idx.max())}"
        )
    return np.where(idx < 0, idx + size, idx)


@folder("Gather")
def _gather(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    data, idx = np.asarray(ins[0]), np.asarray(ins[1]).astype(np.int64)
    axis = axis_in(attrs.get("axis", 0), data.ndim)
    idx = check_indices(idx, data.shape[axis], axis)
    _alloc((*data.shape[:axis], *idx.shape, *data.shape[axis + 1 :]), data.dtype)
    return [np.take(data, idx, axis=axis)]


@folder("Unsqueeze")
def _unsqueeze(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    axes = _axes(attrs, ins, 1) or []
    rank = x.ndim + len(axes)
    positions = sorted(axis_in(a, rank) for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"axes {axes} repeat an axis")
    shape = list(x.shape)
    for a in positions:
        shape.insert(a, 1)
    return [x.reshape(shape)]


@folder("Squeeze")
def _squeeze(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    axes = _axes(attrs, ins, 1)
    if axes is None:
        return [np.squeeze(x)]
    return [np.squeeze(x, axis=tuple(axis_in(a, x.ndim) for a in axes))]


@folder("Concat")
def _concat(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    return [np.concatenate([np.asarray(x) for x in ins], axis=int(attrs["axis"]))]


@folder("ConstantOfShape")
def _constant_of_shape(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    value = np.asarray(attrs.get("value", np.zeros(1, np.float32)))
    if value.size != 1:
        raise ValueError(f"'value' must hold one element, got {value.size}")
    shape = _alloc(np.asarray(ins[0]).reshape(-1), value.dtype)
    return [np.full(shape, value.reshape(-1)[0], value.dtype)]


@folder("Range")
def _range(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    start, limit, delta = (np.asarray(x) for x in ins)
    if any(v.size != 1 for v in (start, limit, delta)):
        raise ValueError("start, limit and delta must be scalars")
    if float(delta) == 0:
        raise ValueError("delta must not be 0")
    count = max(math.ceil((float(limit) - float(start)) / float(delta)), 0)
    _alloc((count,), start.dtype)
    return [np.arange(start, limit, delta).astype(start.dtype)]  # pyright: ignore[reportCallIssue, reportArgumentType]  # one-element arrays (checked above), which numpy takes as scalars


def _broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


@folder("Equal")
def _equal(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    a, b = np.asarray(ins[0]), np.asarray(ins[1])
    _alloc(_broadcast(a.shape, b.shape), np.bool_)
    return [np.equal(a, b)]


@folder("Where")
def _where(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    c, a, b = (np.asarray(x) for x in ins)
    _alloc(_broadcast(c.shape, a.shape, b.shape), np.result_type(a, b))
    return [np.where(c, a, b)]


@folder("Expand")
def _expand(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    shape = tuple(int(d) for d in np.asarray(ins[1]).reshape(-1))
    out = _alloc(_broadcast(x.shape, shape), x.dtype)
    return [np.broadcast_to(x, out).copy()]


@folder("Reshape")
def _reshape(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    return [x.reshape(reshape_target(x.shape, np.asarray(ins[1]), int(attrs.get("allowzero", 0))))]


def reshape_target(shape: Sequence[int], target: Array, allowzero: int = 0) -> tuple[int, ...]:
    """ONNX Reshape's output shape (0 copies the input dimension unless allowzero, -1 is inferred)."""
    dims = [int(d) for d in target.reshape(-1)]
    if not allowzero:
        dims = [shape[i] if d == 0 else d for i, d in enumerate(dims)]
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
        total = int(np.prod(shape, dtype=np.int64))
        dims[dims.index(-1)] = total // known if known else 0
    return tuple(dims)


@folder("Slice")
def _slice(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    if opset < 10:
        starts, ends = attrs["starts"], attrs["ends"]
        axes = attrs.get("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = (np.asarray(v).reshape(-1).tolist() for v in ins[1:3])
        axes = (
            np.asarray(ins[3]).reshape(-1).tolist() if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
        )
        steps = np.asarray(ins[4]).reshape(-1).tolist() if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    index: list[slice] = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        if int(st) == 0:
            raise ValueError("steps must not be 0")
        index[axis_in(a, x.ndim)] = slice(int(s), int(e), int(st))
    return [x[tuple(index)]]


@folder("Transpose")
def _transpose(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    perm = attrs.get("perm")
    return [np.transpose(x, perm).copy()]


_BINARY = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Max": np.maximum,
    "Min": np.minimum,
}


def _make_binary(fn: Callable[..., Any]) -> Folder:
    def fold(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
        a, b = np.asarray(ins[0]), np.asarray(ins[1])
        _alloc(_broadcast(a.shape, b.shape), np.result_type(a, b))
        out = np.asarray(fn(a, b))
        return [out.astype(a.dtype) if out.dtype.kind == a.dtype.kind else out]

    return fold


for _name, _fn in _BINARY.items():
    FOLDERS[_name] = _make_binary(_fn)


@folder("Div")
def _div(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    a, b = np.asarray(ins[0]), np.asarray(ins[1])
    _alloc(_broadcast(a.shape, b.shape), np.result_type(a, b))
    if a.dtype.kind in "iu":
        if b.size and not np.all(b):
            raise ValueError("integer division by zero")
        return [np.trunc(a / b).astype(a.dtype)]
    return [(a / b).astype(a.dtype)]


@folder("GatherElements")
def _gather_elements(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    data, idx = np.asarray(ins[0]), np.asarray(ins[1]).astype(np.int64)
    axis = axis_in(attrs.get("axis", 0), data.ndim)
    if idx.ndim != data.ndim:
        raise ValueError(f"indices of rank {idx.ndim} for data of rank {data.ndim}")
    idx = check_indices(idx, data.shape[axis], axis)
    return [np.take_along_axis(data, idx, axis=axis)]


@folder("GatherND")
def _gather_nd(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    data, idx = np.asarray(ins[0]), np.asarray(ins[1])
    return [
        np.take(
            data.reshape(-1, *data.shape[int(attrs.get("batch_dims", 0)) + idx.shape[-1] :]),
            gather_nd_rows(data.shape, idx, int(attrs.get("batch_dims", 0))),
            axis=0,
        )
    ]


def gather_nd_rows(shape: Sequence[int], idx: Array, batch_dims: int) -> Array:
    """GatherND as a Gather: the row of each index tuple in `data` flattened over its first
    `batch_dims + k` dimensions (shape `idx.shape[:-1]`); negative indices wrap."""
    k = idx.shape[-1]
    lead = tuple(int(d) for d in shape[: batch_dims + k])
    idx = np.where(idx < 0, idx + np.array(lead[batch_dims:], np.int64), idx).astype(np.int64)
    batch = np.indices(idx.shape[:batch_dims]).reshape(
        batch_dims, *idx.shape[:batch_dims], *([1] * (idx.ndim - 1 - batch_dims))
    )
    coords = [np.broadcast_to(b, idx.shape[:-1]) for b in batch] + [idx[..., i] for i in range(k)]
    return np.ravel_multi_index(tuple(coords), lead) if lead else np.zeros(idx.shape[:-1], np.int64)


@folder("Trilu")
def _trilu(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    x = np.asarray(ins[0])
    k = int(np.asarray(ins[1]).reshape(-1)[0]) if len(ins) > 1 and ins[1] is not None else 0
    return [(np.triu if int(attrs.get("upper", 1)) else np.tril)(x, k)]


@folder("IsNaN")
def _isnan(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    return [np.isnan(np.asarray(ins[0]))]


@folder("Not")
def _not(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
    return [np.logical_not(ins[0])]  # pyright: ignore[reportCallIssue, reportArgumentType]  # Not's one input is required, so never None


def _make_unary(fn: Callable[..., Any]) -> Folder:
    def fold(attrs: dict[str, Any], ins: list[Array | None], opset: int) -> list[Array]:
        x = np.asarray(ins[0])
        return [np.asarray(fn(x)).astype(x.dtype)]

    return fold


for _name, _fn in {"Sqrt": np.sqrt, "Neg": np.negative, "Floor": np.floor, "Ceil": np.ceil, "Abs": np.abs}.items():
    FOLDERS[_name] = _make_unary(_fn)


# --------------------------------------------------------------------------------------
# Shape inference
# --------------------------------------------------------------------------------------


def _value_type(vi: onnx.ValueInfoProto) -> ValueType:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return (t.elem_type, None)
    dims: list[int | None] = []
    for d in t.shape.dim:
        dims.append(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None)
    return (t.elem_type, tuple(dims))


def infer_types(
    model: onnx.ModelProto, graph: Graph, opset_imports: Sequence[onnx.OperatorSetIdProto]
) -> dict[str, ValueType]:
    """Types of every value: the inputs', the constants', and onnx's shape inference for the rest."""
    types: dict[str, ValueType] = {n: graph.types[n] for n in graph.inputs}
    inputs = [
        helper.make_tensor_value_info(n, t[0], list(t[1]) if t[1] is not None else None) for n, t in types.items()
    ]
    inits = []
    for name, value in graph.consts.items():
        elem = helper.np_dtype_to_tensor_dtype(value.dtype)
        types[name] = (elem, tuple(value.shape))
        if value.size <= SMALL:
            inits.append(numpy_helper.from_array(value, name))
        else:
            inputs.append(helper.make_tensor_value_info(name, elem, list(value.shape)))
    g = helper.make_graph(
        graph.nodes, "fold", inputs, [helper.make_empty_tensor_value_info(o) for o in graph.outputs], inits
    )
    m = helper.make_model(g, opset_imports=list(opset_imports), ir_version=model.ir_version)
    try:
        inferred = onnx.shape_inference.infer_shapes(m, data_prop=True)
    except Exception:  # noqa: BLE001 - shape inference is a help, not a requirement: fall back to what we know
        inferred = m
    for vi in (*inferred.graph.value_info, *inferred.graph.output):
        t = _value_type(vi)
        if t[0] != 0 and vi.name not in types:
            types[vi.name] = t
    return types


def is_static(t: ValueType | None) -> bool:
    return t is not None and t[1] is not None and all(d is not None for d in t[1])


# --------------------------------------------------------------------------------------
# The folding loop
# --------------------------------------------------------------------------------------


def fold_graph(model: onnx.ModelProto, graph: Graph, opset: int) -> Graph:
    """Fold constants, Identity and shape subgraphs (see the module doc): the nodes in topological order,
    then one folding pass per round of shape inference, until a round folds nothing."""
    opsets = list(model.opset_import)
    graph.nodes = topological_order(graph.nodes)
    # Fold first, with the types known before inference (inputs, constants): what folds on constants alone
    # is folded (or refused by the tensor limit) before onnx's data propagation could materialise it.
    graph.types = {
        **graph.types,
        **{n: (helper.np_dtype_to_tensor_dtype(v.dtype), tuple(v.shape)) for n, v in graph.consts.items()},
    }
    _fold_pass(graph, opset)
    while True:
        graph.types = infer_types(model, graph, opsets)
        if not _fold_pass(graph, opset):
            return graph


def _fold_pass(graph: Graph, opset: int) -> bool:
    """Fold every node that can be, in one pass in topological order; whether any was."""
    remaining = [node for node in graph.nodes if not _fold_node(node, graph, opset)]
    changed = len(remaining) != len(graph.nodes)
    graph.nodes = remaining
    return changed


def topological_order(nodes: Sequence[onnx.NodeProto]) -> list[onnx.NodeProto]:
    """`nodes` with every producer before its consumers, otherwise in their given order (a stable depth-first
    order, without recursion); a cycle is an AscendError naming a node on it."""
    producer: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for name in node.output:
            if name:
                producer[name] = i
    state = [0] * len(nodes)  # 0 not visited, 1 on the current path, 2 placed
    order: list[onnx.NodeProto] = []
    for root in range(len(nodes)):
        if state[root]:
            continue
        state[root] = 1
        stack: list[tuple[int, int]] = [(root, 0)]
        while stack:
            i, k = stack.pop()
            inputs = nodes[i].input
            while k < len(inputs):
                j = producer.get(inputs[k], -1) if inputs[k] else -1
                k += 1
                if j < 0 or state[j] == 2:
                    continue
                if state[j] == 1:
                    n = nodes[j]
                    raise AscendError(f"the graph has a cycle through node '{n.name or n.op_type}' ({n.op_type})")
                stack.append((i, k))
                state[j] = 1
                stack.append((j, 0))
                break
            else:
                state[i] = 2
                order.append(nodes[i])
    return order


def _fold_node(node: onnx.NodeProto, graph: Graph, opset: int) -> bool:
    consts = graph.consts
    if node.op_type == "Constant":
        consts[node.output[0]] = _constant_value(node, attrs_of(node))
        return True
    if node.op_type in ("Shape", "Size"):
        t = graph.types.get(node.input[0]) if node.input else None
        if not is_static(t):
            return False
        assert t is not None and t[1] is not None
        shape = np.array(t[1], np.int64)
        if node.op_type == "Size":
            consts[node.output[0]] = np.array(np.prod(shape), np.int64)
        else:
            attrs = attrs_of(node)
            start, end = int(attrs.get("start", 0)), attrs.get("end")
            consts[node.output[0]] = shape[start : None if end is None else int(end)]
        return True
    if node.domain not in ("", "ai.onnx"):
        return False
    ins: list[Array | None] = []
    for name in node.input:
        if not name:
            ins.append(None)
        elif name in consts:
            ins.append(consts[name])
        else:
            return False
    fn = FOLDERS.get(node.op_type)
    if fn is None:
        return _fold_by_reference(node, graph, ins, opset)
    where = f"node '{node.name or node.op_type}' ({node.op_type}) on constants"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(all="warn"):
                outs = fn(attrs_of(node), ins, opset)
    except AscendError as e:  # the tensor limit (check_alloc)
        raise AscendError(f"{where}: {e}") from None
    except (ValueError, TypeError, KeyError, IndexError, ArithmeticError) as e:
        raise AscendError(f"{where} cannot be folded: {' '.join(str(e).split()) or type(e).__name__}") from None
    for message in dict.fromkeys(str(w.message) for w in caught):  # numpy's RuntimeWarnings, once each
        logging.getLogger("ascend_mp").warning("%s: folding it: %s", where, " ".join(message.split()))
    for name, value in zip(node.output, outs):
        if name:
            consts[name] = np.asarray(value)
    if node.op_type == "Dropout" and len(node.output) > 1 and node.output[1]:
        consts[node.output[1]] = np.ones(np.asarray(ins[0]).shape, np.bool_)
    return True


NOT_FOLDED = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
    | {"If", "Loop", "Scan"}
)
"""Never folded by the reference evaluator: a random op (folding would freeze one draw) or one with subgraphs."""


def _fold_by_reference(node: onnx.NodeProto, graph: Graph, ins: list[Array | None], opset: int) -> bool:
    """Any other node whose inputs are all constants (Cos and Sin of rotary tables, Mod, ScatterND, CumSum, ...):
    evaluated with onnx's reference implementation, as onnxruntime's and onnx-simplifier's folding would. Outputs
    are checked against the tensor limit before (when their shapes are inferred) and after evaluation; an op
    the reference evaluator does not know, or an output of a dtype the importer does not read, stays unfolded
    (the converter, or the unsupported-op error, decides)."""
    if node.op_type in NOT_FOLDED or not node.input:
        return False
    where = f"node '{node.name or node.op_type}' ({node.op_type}) on constants"
    try:
        for name in node.output:
            t = graph.types.get(name)
            if name and t is not None and is_static(t) and t[0] in ONNX_TO_DTYPE:
                assert t[1] is not None
                _alloc(t[1], BY_NAME[ONNX_TO_DTYPE[t[0]]].numpy)
        from onnx.reference import ReferenceEvaluator

        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            feeds = {name: value for name, value in zip(node.input, ins, strict=True) if name}
            outs = [np.asarray(o) for o in ReferenceEvaluator(node, opsets={"": opset}).run(None, feeds)]
        for o in outs:
            _alloc(o.shape, o.dtype)
    except AscendError as e:  # the tensor limit
        raise AscendError(f"{where}: {e}") from None
    except Exception:  # noqa: BLE001 - not known to (or refused by) the reference evaluator: left to the converter
        return False
    if any(o.dtype.kind not in "biuf" for o in outs):
        return False
    for name, value in zip(node.output, outs):
        if name:
            graph.consts[name] = value
    return True


def _constant_value(node: onnx.NodeProto, attrs: dict[str, Any]) -> Array:
    for key, kind in (
        ("value", None),
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if key in attrs:
            return np.asarray(attrs[key], kind) if kind is not None else np.asarray(attrs[key])
    raise AscendError(f"node '{node.name}' (Constant): unsupported value attribute {sorted(attrs)}")
