"""`import_onnx`: an ONNX model as one `func.func @main` of ascend ops.

Steps: read the model (`model.py`: file, external data, opsets), fix the input
shapes (`--input_shape`, ATC syntax), fold constants and shape subgraphs
(`fold.py`), check every op type has a converter (all unsupported ops reported in
one line), then convert node by node (`converters.py`, one small converter per
ONNX op type).

The function's arguments and results are the graph's inputs and outputs in order;
their ONNX names are kept as SSA name hints (where valid) and, exactly, as the
`onnx.name` argument/result attribute. Every op carries `name` = its ONNX node name.
Initializers become `ascend.Const` ops named after the initializer, holding a
`dense_resource` blob (tiny ones stay `dense<...>`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from ascend_mp.dialects import ascend
from ascend_mp.dtypes import BY_NAME, DTYPES, element_type, tensor_dtype
from ascend_mp.emit import set_name_hint
from ascend_mp.errors import AscendError
from ascend_mp.frontend import converters as _converters  # noqa: F401  (registers every converter)
from ascend_mp.frontend import converters_rnn as _converters_rnn  # noqa: F401  (registers LSTM and GRU)
from ascend_mp.frontend.fold import ONNX_TO_DTYPE, Graph, ValueType, fold_graph, is_static, read_tensor
from ascend_mp.frontend.model import (
    NAME_ATTR,
    InputShapes,
    check_arity,
    check_graph,
    check_opsets,
    load_model,
    parse_input_shape,
)
from ascend_mp.frontend.registry import CONVERTERS, Node, Unsupported

__all__ = ["Converter", "Node", "Unsupported", "import_onnx"]

_INTEGER_ONNX_TYPES = frozenset(getattr(onnx.TensorProto, d.onnx) for d in DTYPES if d.kind in ("int", "uint"))
"""SSA name hints are ASCII (MLIR's suffix-id grammar): any other character of an ONNX name becomes `_`."""


def import_onnx(
    source: str | os.PathLike[str] | bytes | onnx.ModelProto,
    input_shape: str | Mapping[str, Sequence[int]] | InputShapes | None = None,
    name: str | None = None,
) -> ModuleOp:
    """Import an ONNX model (a path, the file's bytes or a `ModelProto`) as a module.

    `input_shape` fixes dynamic input dimensions, in ATC's syntax
    (`"input:1,3,224,224;mask:1,128"`) or as a dict. Errors are :class:`AscendError`s
    with one line naming the file and the input or node at fault.
    """
    model, label = load_model(source, name)
    check_graph(model, label)
    opset = check_opsets(model, label)
    if model.functions:
        from onnx import inliner  # a submodule `import onnx` does not load

        try:
            model = inliner.inline_local_functions(model)
        except Exception as e:  # noqa: BLE001 - onnx's inliner on an inconsistent function: one line
            raise AscendError(f"{label}: its local functions cannot be inlined: {' '.join(str(e).split())}") from None
        check_graph(model, label)
    check_arity(model, opset, label)
    shapes = input_shape if isinstance(input_shape, InputShapes) else parse_input_shape(input_shape)
    graph = _initial_graph(model, shapes, label)
    try:
        graph = fold_graph(model, graph, opset)
    except AscendError as e:
        raise AscendError(f"{label}: {e}") from None
    _check_supported(graph, label)
    from ascend_mp.ir.compat import bulk_ir

    with bulk_ir():
        return Converter(graph, opset, label).convert()


# --------------------------------------------------------------------------------------
# Inputs and their shapes
# --------------------------------------------------------------------------------------


def _initial_graph(model: onnx.ModelProto, shapes: InputShapes, label: str) -> Graph:
    g = model.graph
    consts: dict[str, np.ndarray[Any, Any]] = {}
    for init in g.initializer:
        array = read_tensor(init, f"{label}: initializer '{init.name}'")
        array.setflags(write=False)  # the importer's own copy, never written: blobs share it (resources.store_blob)
        consts[init.name] = array
    for init in g.sparse_initializer:
        raise AscendError(f"{label}: sparse initializer '{init.values.name}' is not supported")
    inputs = [i for i in g.input if i.name not in consts]
    names = [i.name for i in inputs]
    for given in shapes.by_name:
        if given not in names:
            listed = ", ".join(names) or "none"
            raise AscendError(f"--input_shape: '{given}' is not an input of {label} (inputs: {listed})")
    if len(shapes.by_index) > len(inputs):
        raise AscendError(f"--input_shape: {len(shapes.by_index)} shapes given, but {label} has {len(inputs)} inputs")
    types: dict[str, ValueType] = {}
    for index, vi in enumerate(inputs):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or t.elem_type not in ONNX_TO_DTYPE:
            raise AscendError(f"{label}: input '{vi.name}' is not a tensor of a supported element type")
        declared: list[int | str | None] = []
        if t.HasField("shape"):
            for d in t.shape.dim:
                declared.append(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?"))
        given = shapes.for_input(vi.name, index)
        if given is not None:
            if t.HasField("shape") and len(given) != len(declared):
                raise AscendError(
                    f"--input_shape: input '{vi.name}' has rank {len(declared)} in {label} {_shape_str(declared)}, "
                    f"got {len(given)} dimensions {_shape_str(list(given))}"
                )
            for i, (g_dim, d_dim) in enumerate(zip(given, declared)):
                if isinstance(g_dim, int) and isinstance(d_dim, int) and g_dim != d_dim:
                    raise AscendError(
                        f"--input_shape: input '{vi.name}' dimension {i} is {d_dim} in {label}, got {g_dim}"
                    )
            declared = list(given)
        elif not t.HasField("shape"):
            raise AscendError(
                f"{label}: input '{vi.name}' has no shape; give it with --input_shape=\"{vi.name}:d1,d2,...\""
            )
        dims = tuple(d if isinstance(d, int) else None for d in declared)
        if None in dims:
            user = _first_user(g.node, vi.name)
            fixed = ",".join(str(d) if isinstance(d, int) else "<size>" for d in declared)
            raise AscendError(
                f"{label}: input '{vi.name}' has a dynamic shape {_shape_str(declared)}, so the shape of node "
                f"'{user}' is unknown; fix it with --input_shape=\"{vi.name}:{fixed}\""
            )
        types[vi.name] = (t.elem_type, dims)
    outputs = [o.name for o in g.output]
    return Graph(list(g.node), consts, types, names, outputs)


def _first_user(nodes: Sequence[onnx.NodeProto], name: str) -> str:
    for node in nodes:
        if name in node.input:
            return node.name or node.op_type
    return "(none)"


def _shape_str(dims: Sequence[object]) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


FOLD_ONLY = frozenset({"Shape", "Size", "ConstantOfShape", "Range"}) - CONVERTERS.keys()
"""Shape ops that only ever fold (no converter): left in a graph only downstream of a value that did not fold."""


def _check_supported(graph: Graph, label: str) -> None:
    missing: Counter[str] = Counter()
    first: dict[str, str] = {}
    for node in graph.nodes:
        if node.op_type not in CONVERTERS or node.domain not in ("", "ai.onnx"):
            missing[node.op_type] += 1
            first.setdefault(node.op_type, node.name or "(unnamed)")
    if missing:
        # ops that only ever fold (Shape, Range, ConstantOfShape, ...) are left only because a real blocker
        # feeds them: list the blockers alone when there are any
        blockers = {op: n for op, n in missing.items() if op not in FOLD_ONLY} or dict(missing)
        listed = ", ".join(f"{op} x{n} (first: '{first[op]}')" for op, n in sorted(blockers.items()))
        raise AscendError(f"{label}: unsupported ONNX ops: {listed}")


# --------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------


class Converter:
    """Builds `@main` from a folded graph; converters call back into it (`value`, `emit`, ...)."""

    def __init__(self, graph: Graph, opset: int, label: str):
        self.graph, self.opset, self.label = graph, opset, label
        self.values: dict[str, SSAValue] = {}
        self.types: dict[tuple[tuple[int, ...], str], TensorType] = {}
        self.block: Block | None = None
        self.node: Node | None = None

    # -- types -------------------------------------------------------------------------
    def type_of(self, name: str) -> TensorType:
        t = self.graph.types.get(name)
        if t is None and name in self.graph.consts:
            c = self.graph.consts[name]
            return self.tensor(c.shape, _dtype_of_numpy(c.dtype, name, self))
        if not is_static(t):
            node = self.node.name if self.node is not None else "?"
            if (
                self.node is not None
                and all(self._known(i) for i in self.node.inputs if i)
                and not any(self._runtime_integer(i) for i in self.node.inputs if i)
            ):
                # Every input of the node is static, so no --input_shape can help: the node itself is invalid.
                shapes = ", ".join(f"'{i}': {list(self.shape(i))}" for i in self.node.inputs if i)
                raise AscendError(
                    f"{self.label}: node '{node}' ({self.node.op_type}): the shape of its output '{name}' cannot be "
                    f"inferred from its static inputs ({shapes}); check its attributes and input shapes "
                    f"(an axis or permutation out of range, shapes that do not broadcast, ...)"
                )
            dyn = ", ".join(f"'{n}'" for n in self.graph.inputs if not is_static(self.graph.types.get(n))) or "none"
            raise AscendError(
                f"{self.label}: the shape of '{name}' (output of node '{node}') is unknown after folding; "
                f"the graph stays dynamic (inputs: {dyn}; fix them with --input_shape)"
            )
        assert t is not None and t[1] is not None
        if t[0] not in ONNX_TO_DTYPE:
            raise AscendError(
                f"{self.label}: value '{name}' has an unsupported element type ({onnx.TensorProto.DataType.Name(t[0])})"
            )
        return self.tensor([int(d) for d in t[1]], ONNX_TO_DTYPE[t[0]])  # pyright: ignore[reportArgumentType]  # the dims are all known here (the unknown case raised above)

    def _runtime_integer(self, name: str) -> bool:
        """An integer value computed at run time: a shape, axes or indices whose value can decide shapes."""
        if name in self.graph.consts:
            return False
        if name in self.values:  # converted already: its element type tells
            dtype = tensor_dtype(self.values[name].type)
            return dtype is not None and BY_NAME[dtype].kind in ("int", "uint")
        t = self.graph.types.get(name)
        return t is not None and t[0] in _INTEGER_ONNX_TYPES

    def _known(self, name: str) -> bool:
        """Whether a value's shape is static (a constant, or a static inferred type)."""
        return name in self.values or name in self.graph.consts or is_static(self.graph.types.get(name))

    def tensor(self, shape: Sequence[int], dtype: str) -> TensorType:
        """The tensor type of this shape and dtype: one object per distinct type, as MLIR uniques types in its
        context (values of one type share it, and passes that cache per type object hit their caches)."""
        key = (tuple([int(d) for d in shape]), dtype)
        type_ = self.types.get(key)
        if type_ is None:
            type_ = self.types[key] = TensorType(element_type(dtype), key[0])
        return type_

    def shape(self, name: str) -> tuple[int, ...]:
        if name in self.values:
            return ascend.shape_of(self.values[name])
        return tuple(self.type_of(name).get_shape())

    # -- values --------------------------------------------------------------------------
    def const(self, name: str | None) -> np.ndarray[Any, Any] | None:
        """The value of a constant input (None if it is computed at run time, or absent)."""
        if name is None:
            return None
        name = self.graph.aliases.get(name, name)
        return self.graph.consts.get(name)

    def value(self, name: str) -> SSAValue:
        """The SSA value of an ONNX tensor (a constant becomes an `ascend.Const` at first use)."""
        if name in self.values:
            return self.values[name]
        if name in self.graph.consts:
            v = self.new_const(self.graph.consts[name], name)
            self.values[name] = v
            return v
        raise AscendError(
            f"{self.label}: value '{name}' used by node '{self.node.name if self.node else '?'}' is not defined"
        )

    def new_const(self, array: np.ndarray[Any, Any], name: str, dtype: str | None = None) -> SSAValue:
        """An `ascend.Const` holding `array` (dense_resource blob unless tiny)."""
        from ascend_mp.resources import fits_dense_literal, resource_attr

        dtype = dtype or _dtype_of_numpy(array.dtype, name, self)
        type_ = self.tensor(array.shape, dtype)
        value: Attribute
        if fits_dense_literal(np.asarray(array)):
            value = _dense(np.asarray(array), type_)
        else:
            value = resource_attr(name, array, type_)
        op = ascend.ConstOp(value, name=name)
        assert self.block is not None
        self.block.add_op(op)
        set_name_hint(op.results[0], name)
        return op.results[0]

    def bind(self, name: str, value: SSAValue) -> None:
        self.values[name] = value

    def emit(
        self,
        cls: type[ascend.AscendOp],
        operands: Sequence[SSAValue | Sequence[SSAValue] | None],
        out: str | TensorType | Sequence[TensorType],
        **props: Any,
    ) -> SSAValue:
        """Append an op named after the current node; `out` is the ONNX output it defines, or its type."""
        if isinstance(out, str):
            types: list[Attribute] = [self.type_of(out)]
        elif isinstance(out, TensorType):
            types = [out]
        else:
            types = list(out)
        assert self.node is not None
        props = {k: v for k, v in props.items() if v is not None}
        slots: list[Any] = list(operands) + [None] * (len(cls.get_irdl_definition().operands) - len(operands))
        op = cls(*[[] if o is None else o for o in slots], result_types=types, name=self.node.name, **props)
        assert self.block is not None
        self.block.add_op(op)
        if isinstance(out, str):
            self.bind(out, op.results[0])
            set_name_hint(op.results[0], out)
        return op.results[0]

    # -- driver --------------------------------------------------------------------------
    def convert(self) -> ModuleOp:
        g = self.graph
        in_types = [self.type_of(n) for n in g.inputs]
        block = Block(arg_types=in_types)
        self.block = block
        for name, arg in zip(g.inputs, block.args):
            set_name_hint(arg, name)
            self.values[name] = arg
        for proto in g.nodes:
            node = Node(proto)
            self.node = node
            try:
                CONVERTERS[node.op_type](self, node)
            except AscendError:
                raise
            except (
                ValueError,
                TypeError,
                KeyError,
                IndexError,
                AttributeError,
                AssertionError,
                ArithmeticError,
                VerifyException,
            ) as e:
                # a malformed node (a missing attribute, a wrong input count): one line, no traceback
                raise AscendError(
                    f"{self.label}: node '{node.name}' ({node.op_type}) cannot be converted: {type(e).__name__}: "
                    f"{' '.join(str(e).split())}"
                ) from None
        self.node = None
        results = [self.value(o) for o in g.outputs]
        block.add_op(func.ReturnOp(*results))
        fn = func.FuncOp(
            "main",
            (in_types, [r.type for r in results]),
            Region(block),
            arg_attrs=_name_attrs(g.inputs),
            res_attrs=_name_attrs(g.outputs),
        )
        module = ModuleOp([fn])
        try:
            module.verify()
        except Exception as e:  # noqa: BLE001 - a converter bug or an inconsistent model: one line
            from ascend_mp.ir import first_invalid_op

            found = first_invalid_op(module)
            where = (
                f"node '{found[0].attributes.get('name') or getattr(found[0], 'node_name', None)}'"
                if found
                else "the module"
            )
            msg = found[1] if found else e
            raise AscendError(f"{self.label}: {where}: {' '.join(str(msg).split())}") from None
        return module


def _name_attrs(names: Sequence[str]) -> Any:
    from xdsl.dialects.builtin import ArrayAttr

    return ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in names])


def _dtype_of_numpy(dtype: np.dtype[Any], name: str, cx: Converter) -> str:
    from onnx import helper

    try:
        elem = helper.np_dtype_to_tensor_dtype(dtype)
    except (KeyError, TypeError, ValueError):
        elem = -1
    if elem not in ONNX_TO_DTYPE:
        raise AscendError(f"{cx.label}: constant '{name}' has an unsupported dtype {dtype}")
    return ONNX_TO_DTYPE[elem]


def _dense(array: np.ndarray[Any, Any], type_: TensorType) -> DenseIntOrFPElementsAttr:
    flat = array.reshape(-1)
    if flat.dtype.kind in "iub":
        values: list[Any] = [int(v) for v in flat]
    else:
        values = [float(v) for v in flat]
    return DenseIntOrFPElementsAttr.from_list(type_, values)  # pyright: ignore[reportCallIssue, reportArgumentType]  # xDSL's from_list overloads want a TensorType of a float/int type statically; this one is only known at run time
