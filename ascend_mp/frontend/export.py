"""`export_onnx`: the decided program written back as the ONNX model it came from.

The user's ONNX graph is kept node for node (names, attributes, opset, input and output
types); what the precision pass decided is added to it:

* each node whose ascend ops (found by their `name`, the ONNX node name) run in a lower
  dtype consumes its float inputs in that dtype: a `Cast` node is inserted in front of it,
  one per (tensor, dtype), shared by every consumer, as the pass shares its casts;
* a weight the plan stores low (`ascend-store-low-weights`) becomes an fp16/bf16
  initializer;
* a graph output computed in a lower dtype is cast back to its declared type.

Per node, the dtypes are read from the decided module: the dtype in which each ascend op
of the node consumes each of its sources (a graph input, a constant, another node's result;
looking through the casts the pass inserted) and the dtype of the node's results. A node
whose inputs and outputs all share one dtype runs natively in it. A node the plan runs in
mixed dtypes (a cube op with fp16 inputs and an fp32 output under cube_fp16in_fp32out) is
*emulated*: its inputs are rounded to the planned dtype by a Cast, cast up to float32, the
node runs in float32, and its result is cast to the planned output dtype. That is exactly
the Cube unit's numerics (products of fp16 values are exact in fp32, the sum accumulates
in fp32, one rounding at the end; docs/design.md §6).

Targets. onnxruntime's CPU provider has almost no fp16 or bf16 compute kernels: for an fp16
node without one it inserts casts to float32 around the whole run of such nodes, so a chain
of fp16 MatMul, Add, Relu runs in float32 without rounding in between (an fp16 overflow that
Ascend would hit does not happen), and bf16 compute nodes do not load at all. With
`target="ort-cpu"` (the default) every low-precision node whose op type is not in
:data:`ORT_CPU_KERNELS` is therefore emulated as above, in float32 between explicit Casts:
onnxruntime then reproduces the rounding of every input and output to fp16/bf16 (the
interpreter's numerics), though not a low-precision kernel's internal arithmetic, and the
nodes are float32 nodes in the file. With `target="native"` the nodes stay in their low
dtype (for runtimes with fp16/bf16 kernels: onnxruntime on a GPU, ATC); only what ONNX cannot
express is emulated: mixed-dtype nodes, and ops whose ONNX schema lacks the dtype (Conv has no
bf16 in any opset). Nodes folded at import (constant subgraphs) and nodes
without ascend ops keep their original dtypes.

Errors (bf16 in a model whose opset has no bf16 Cast, a result the checker rejects) are one
line :class:`~ascend_mp.errors.AscendError`s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.ir import BlockArgument, SSAValue

from ascend_mp.dialects.ascend import AscendOp, CastOp, ConstOp
from ascend_mp.dtypes import LOW_FLOATS, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.frontend.fold import SMALL
from ascend_mp.resources import cached_array

FLOAT_TO_ONNX: dict[str, int] = {
    "f16": TensorProto.FLOAT16,
    "bf16": TensorProto.BFLOAT16,
    "f32": TensorProto.FLOAT,
    "f64": TensorProto.DOUBLE,
}
ONNX_TO_FLOAT = {v: k for k, v in FLOAT_TO_ONNX.items()}

ORT_CPU_KERNELS = {
    "f16": frozenset({"Identity", "Transpose", "Flatten", "Concat", "Cast", "Max", "Min", "Clip"}),
    "bf16": frozenset({"Identity", "Transpose", "Flatten", "Concat", "Cast"}),
}
"""Op types onnxruntime's CPU provider runs in fp16 / bf16 itself (data movement and selection; every
other op it computes in float32 or refuses; checked by test_emit_onnx against the installed onnxruntime)."""

TARGETS = ("ort-cpu", "native")

PASS_THROUGH = frozenset({"Identity", "Dropout"})
"""Op types the importer binds to their input without an ascend op: their output is their input."""

BF16_MIN_OPSET = 13
"""The first opset whose Cast (and most ops) take bfloat16."""

_Key = tuple[str, str, int]
"""A value of the decided module: ("t", tensor name, 0) for a graph input or constant, ("o", node, result index)."""


@dataclass
class DecidedDtypes:
    """What the decided module says about each ONNX node and tensor."""

    consumed: dict[tuple[str, _Key], str] = field(default_factory=dict[tuple[str, _Key], str])
    """(node name, source) -> the float dtype the node's ops consume the source in."""
    produced: dict[_Key, str] = field(default_factory=dict[_Key, str])
    """("o", node, index) -> the float dtype of the node's index-th result."""
    constants: dict[str, str] = field(default_factory=dict[str, str])
    """Constant (initializer) name -> the float dtype it is stored in."""
    low_arrays: dict[str, np.ndarray[Any, Any]] = field(default_factory=dict[str, np.ndarray[Any, Any]])
    """Constant name -> its value already rounded to the low dtype it is stored in, where the precision pass
    stored it as a blob in this process: the export writes those bytes instead of rounding the weight again."""
    nodes: set[str] = field(default_factory=set[str])
    """Nodes that have ascend ops."""


def decided_dtypes(module: ModuleOp, function: str = "main") -> DecidedDtypes:
    """Read the dtypes of the decided `function` (see the module docstring)."""
    from ascend_mp.frontend.tools import io_names

    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == function), None)
    if fn is None or not fn.body.blocks:
        raise AscendError(f"--emit-onnx: the module has no function @{function}")
    arg_names, _ = io_names(module, function)
    out = DecidedDtypes()

    def source(v: SSAValue) -> _Key | None:
        while isinstance(v.owner, CastOp) and v.owner.node_name is None:  # a cast the pass inserted
            v = v.owner.operands[0]
        if isinstance(v, BlockArgument):
            name = arg_names[v.index] if v.index < len(arg_names) else None
            return None if name is None else ("t", name, 0)
        owner = v.owner
        if not isinstance(owner, AscendOp) or owner.node_name is None:
            return None
        if isinstance(owner, ConstOp):
            return ("t", owner.node_name.data, 0)
        return ("o", owner.node_name.data, owner.results.index(v))

    for op in fn.body.block.ops:
        if not isinstance(op, AscendOp) or op.node_name is None:
            continue
        name = op.node_name.data
        if isinstance(op, ConstOp):
            dtype = tensor_dtype(op.results[0].type)
            if dtype in FLOAT_TO_ONNX:
                out.constants[name] = dtype
            if dtype in LOW_FLOATS and isinstance(op.value, DenseResourceAttr):
                low = cached_array(op.value)
                if low is not None:
                    out.low_arrays[name] = low
            continue
        out.nodes.add(name)
        for operand in op.operands:
            dtype, key = tensor_dtype(operand.type), source(operand)
            if dtype in FLOAT_TO_ONNX and key is not None and key[:2] != ("o", name):
                previous = out.consumed.get((name, key))
                out.consumed[(name, key)] = dtype if previous in (None, dtype) else "f32"
        for i, result in enumerate(op.results):
            dtype = tensor_dtype(result.type)
            if dtype in FLOAT_TO_ONNX:
                out.produced[("o", name, i)] = dtype  # the node's last op defines its outputs
    return out


def node_name(node: onnx.NodeProto) -> str:
    """The name the importer gives a node (ascend_mp.frontend.onnx_import.Node)."""
    return node.name or f"{node.op_type}_{node.output[0]}"


# --------------------------------------------------------------------------------------
# The rewrite of the ONNX graph
# --------------------------------------------------------------------------------------


class _Exporter:
    def __init__(self, model: onnx.ModelProto, decided: DecidedDtypes, label: str, target: str = "ort-cpu"):
        self.model, self.decided, self.label, self.target = model, decided, label, target
        g = model.graph
        inferred = _inferred_types(model)
        self.orig: dict[str, int] = inferred
        self.now: dict[str, int] = {}
        """The exported dtype of each tensor so far."""
        self.producer: dict[str, tuple[onnx.NodeProto, int]] = {}
        for node in g.node:
            for k, o in enumerate(node.output):
                if o:
                    self.producer[o] = (node, k)
        self.casts: dict[tuple[str, int], str] = {}
        self.nodes: list[onnx.NodeProto] = []
        self.used_names = (
            {n for node in g.node for n in (*node.input, *node.output, node.name)}
            | {i.name for i in g.input}
            | {i.name for i in g.initializer}
        )
        self.outputs = {o.name for o in g.output}
        self.emulated: list[str] = []
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)

    # -- names and casts ------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used_names:
            name, k = f"{base}_{k}", k + 1
        self.used_names.add(name)
        return name

    def as_dtype(self, tensor: str, dtype: int) -> str:
        """`tensor` in `dtype`: itself, or the output of the (shared) Cast to it."""
        if self.now.get(tensor, self.orig.get(tensor)) == dtype:
            return tensor
        key = (tensor, dtype)
        if key not in self.casts:
            out = self.fresh(f"{tensor}__{_short(dtype)}")
            self.nodes.append(
                helper.make_node("Cast", [tensor], [out], name=self.fresh(f"{tensor}__cast_{_short(dtype)}"), to=dtype)
            )
            self.now[out] = dtype
            self.casts[key] = out
        return self.casts[key]

    def is_float(self, tensor: str) -> bool:
        return self.orig.get(tensor) in ONNX_TO_FLOAT

    # -- what the plan says of a node's input -------------------------------------------
    def wanted(self, node: str, tensor: str) -> str | None:
        """The dtype node `node` consumes `tensor` in (through pass-through nodes), None if unknown."""
        seen: set[str] = set()
        while tensor not in seen:
            seen.add(tensor)
            for key in self._keys(tensor):
                found = self.decided.consumed.get((node, key))
                if found is not None:
                    return found
            made = self.producer.get(tensor)
            if made is None or made[0].op_type not in PASS_THROUGH or node_name(made[0]) in self.decided.nodes:
                return None
            tensor = made[0].input[0]
        return None

    def _keys(self, tensor: str) -> Iterable[_Key]:
        yield ("t", tensor, 0)
        made = self.producer.get(tensor)
        if made is not None:
            yield ("o", node_name(made[0]), made[1])

    # -- nodes ----------------------------------------------------------------------------
    def node(self, node: onnx.NodeProto) -> None:
        name = node_name(node)
        float_in = [t for t in node.input if t and self.is_float(t)]
        float_out = [(k, t) for k, t in enumerate(node.output) if t and self.is_float(t)]
        if name not in self.decided.nodes:
            if node.op_type in PASS_THROUGH and node.input and node.input[0] in self.now:
                self.nodes.append(node)  # the importer bound the output to the input: it keeps the input's dtype
                for _, t in float_out[:1]:
                    self.now[t] = self.now[node.input[0]]
                return
            self.plain(node, {t: self.orig[t] for t in float_in}, None)
            return
        want = {t: self.wanted(name, t) for t in float_in}
        outs = {t: self.decided.produced.get(("o", name, k)) for k, t in float_out}
        known = [d for d in (*want.values(), *outs.values()) if d is not None]
        if not known:
            self.plain(node, {t: self.orig[t] for t in float_in}, None)
            return
        if node.op_type == "Cast":  # takes any input dtype; its output dtype is its `to` attribute
            self.nodes.append(node)
            for _, t in float_out:
                self.now[t] = self.orig[t]
            return
        run = _most_precise(known)
        # an input the plan does not mention (a converter read it as a constant: Clip's bounds, Resize's scales)
        # follows the node's dtype where the schema ties it to the output (type "T"), else keeps its own
        in_types = {
            t: FLOAT_TO_ONNX[d] if d is not None else FLOAT_TO_ONNX[run] if self.tied(node, i) else self.orig[t]
            for i, (t, d) in enumerate((t, want.get(t)) for t in node.input)
            if t in want
        }
        out_types = {t: FLOAT_TO_ONNX[d or run] for t, d in outs.items()}
        single = len(set(known)) == 1
        native = self.target == "native" and self.accepts(node, FLOAT_TO_ONNX[run])
        if single and (run not in ORT_CPU_KERNELS or native or node.op_type in ORT_CPU_KERNELS[run]):
            self.plain(node, in_types, out_types)
            return
        self.emulate(node, in_types, out_types)

    def tied(self, node: onnx.NodeProto, index: int) -> bool:
        """Whether the schema gives input `index` of `node` the type of its first output."""
        schema = _schema(node, self.opset)
        if schema is None or not schema.inputs or not schema.outputs:
            return True
        formal = schema.inputs[min(index, len(schema.inputs) - 1)]
        return formal.type_str == schema.outputs[0].type_str

    def accepts(self, node: onnx.NodeProto, dtype: int) -> bool:
        """Whether the op's schema allows `dtype` for its first output (ONNX's Conv has no bf16, for one)."""
        schema = _schema(node, self.opset)
        if schema is None or not schema.outputs:
            return True
        allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
        types = allowed.get(schema.outputs[0].type_str)
        return types is None or f"tensor({helper.tensor_dtype_to_string(dtype).split('.')[-1].lower()})" in types

    def plain(self, node: onnx.NodeProto, in_types: dict[str, int], out_types: dict[str, int] | None) -> None:
        """The node with its float inputs cast to `in_types`; its float outputs in `out_types` (None: original)."""
        new = onnx.NodeProto()
        new.CopyFrom(node)
        for i, t in enumerate(node.input):
            if t in in_types:
                new.input[i] = self.as_dtype(t, in_types[t])
        self.finish(new, node, out_types or {t: self.orig[t] for t in node.output if t and self.is_float(t)})

    def emulate(self, node: onnx.NodeProto, in_types: dict[str, int], out_types: dict[str, int]) -> None:
        """The node in float32 (float64 if it was) between casts that round its inputs and outputs as planned."""
        self.emulated.append(node_name(node))
        compute = {t: max(self.orig[t], TensorProto.FLOAT, key=_rank) for t in in_types}
        new = onnx.NodeProto()
        new.CopyFrom(node)
        for i, t in enumerate(node.input):
            if t in in_types:
                new.input[i] = self.as_dtype(self.as_dtype(t, in_types[t]), compute[t])
        wide: dict[str, int] = {}
        for i, t in enumerate(node.output):
            if t in out_types:
                wide[t] = max(self.orig[t], TensorProto.FLOAT, key=_rank)
                if wide[t] != out_types[t]:
                    new.output[i] = self.fresh(f"{t}__{_short(wide[t])}")
                    self.now[new.output[i]] = wide[t]
        self.nodes.append(new)
        for i, t in enumerate(node.output):
            if t in out_types and new.output[i] != t:
                self.nodes.append(
                    helper.make_node("Cast", [new.output[i]], [t], name=self.fresh(f"{t}__cast"), to=out_types[t])
                )
            if t in out_types:
                self.now[t] = out_types[t]
        self.restore_outputs(node)

    def finish(self, new: onnx.NodeProto, node: onnx.NodeProto, out_types: dict[str, int]) -> None:
        self.nodes.append(new)
        for t, dtype in out_types.items():
            self.now[t] = dtype
        for t in node.output:
            if t and t not in out_types and t in self.orig:
                self.now[t] = self.orig[t]
        self.restore_outputs(node)

    def restore_outputs(self, node: onnx.NodeProto) -> None:
        """A graph output computed in another dtype than declared: computed under another name, cast back."""
        for t in node.output:
            if t in self.outputs and self.now.get(t) != self.orig.get(t) and t in self.orig:
                inner = self.fresh(f"{t}__{_short(self.now[t])}")
                made = (
                    self.nodes[-1]
                    if t in self.nodes[-1].output
                    else next(n for n in reversed(self.nodes) if t in n.output)
                )
                made.output[list(made.output).index(t)] = inner
                self.now[inner] = self.now[t]
                self.nodes.append(
                    helper.make_node("Cast", [inner], [t], name=self.fresh(f"{t}__cast"), to=self.orig[t])
                )
                self.now[t] = self.orig[t]

    # -- driver ---------------------------------------------------------------------------
    def run(self) -> onnx.ModelProto:
        g = self.model.graph
        graph_inputs = {i.name for i in g.input}
        for i in g.input:
            self.now[i.name] = self.orig.get(i.name, i.type.tensor_type.elem_type)
        initializers: list[TensorProto] = []
        for init in g.initializer:
            stored = self.decided.constants.get(init.name)
            if (
                stored is not None
                and init.data_type in ONNX_TO_FLOAT
                and FLOAT_TO_ONNX[stored] != init.data_type
                and init.name not in graph_inputs
                and init.name not in self.outputs
            ):
                low = self.decided.low_arrays.get(init.name)
                reuse = low is not None and init.data_type == TensorProto.FLOAT and low.size == _elements(init)
                init = _low_tensor(init, low, stored) if reuse and low is not None else _retyped(init, stored)
            initializers.append(init)
            self.now[init.name] = init.data_type
        for node in g.node:
            self.node(node)
        # The model's fields but the graph, then the new graph built in place: the weights are copied once (a
        # CopyFrom of the whole model and then of a separately built graph copied resnet50's 100 MB three times).
        out = onnx.ModelProto()
        for fd, value in self.model.ListFields():
            if fd.name == "graph":
                continue
            if hasattr(value, "extend"):  # a repeated field
                getattr(out, fd.name).extend(value)
            elif hasattr(value, "CopyFrom"):  # a message
                getattr(out, fd.name).CopyFrom(value)
            else:
                setattr(out, fd.name, value)
        graph = out.graph
        graph.node.extend(self.nodes)
        graph.name = g.name
        graph.input.extend(g.input)
        graph.output.extend(g.output)
        graph.initializer.extend(initializers)
        if g.doc_string:
            graph.doc_string = g.doc_string
        graph.sparse_initializer.extend(g.sparse_initializer)
        return out


def _export(
    model: str | os.PathLike[str] | bytes | onnx.ModelProto,
    decided: ModuleOp,
    function: str,
    target: str,
    name: str | None = None,
) -> tuple[onnx.ModelProto, str]:
    """The exported model (unchecked) and the model's name for messages."""
    from ascend_mp.frontend.model import load_model

    if target not in TARGETS:
        raise AscendError(f"--emit-onnx-target: unknown target '{target}' (expected {' or '.join(TARGETS)})")
    proto, label = load_model(model, name)
    dtypes = decided_dtypes(decided, function)
    if "bf16" in (*dtypes.consumed.values(), *dtypes.produced.values(), *dtypes.constants.values()):
        opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
        if opset < BF16_MIN_OPSET:
            raise AscendError(
                f"--emit-onnx: {label} has opset {opset}, but its plan uses bf16, which ONNX casts to only "
                f"from opset {BF16_MIN_OPSET}; convert the model to a newer opset or use an fp16 mode"
            )
    if proto.functions:
        raise AscendError(f"--emit-onnx: {label} has local functions; exporting them is not supported")
    exporter = _Exporter(proto, dtypes, label, target)
    exported = exporter.run()
    if exporter.emulated:
        import logging

        logging.getLogger("ascend_mp").info(
            "emit-onnx: %d node(s) run in float32 between Casts (target %s): %s",
            len(exporter.emulated),
            target,
            ", ".join(exporter.emulated[:8]) + (", ..." if len(exporter.emulated) > 8 else ""),
        )
    return exported, label


def export_onnx(
    model: str | os.PathLike[str] | bytes | onnx.ModelProto,
    decided: ModuleOp,
    function: str = "main",
    target: str = "ort-cpu",
) -> onnx.ModelProto:
    """The ONNX model `model` carrying the precision decisions of `decided` (its module after the
    precision pass, imported from `model`), for `target` ("ort-cpu" or "native"), as the module
    docstring describes; checked by onnx's full checker."""
    exported, label = _export(model, decided, function, target)
    _check(exported, label)
    return exported


def export_onnx_bytes(
    model: str | os.PathLike[str] | bytes | onnx.ModelProto,
    decided: ModuleOp,
    function: str = "main",
    target: str = "ort-cpu",
    name: str | None = None,
) -> bytes:
    """:func:`export_onnx`'s model serialized, as `--emit-onnx` writes it: serialized once, and the checker
    given those bytes (given a ModelProto, it serializes the model itself: resnet50's 100 MB twice). `name`:
    the model's name in error messages (its path, where `model` is the ModelProto read from it)."""
    exported, label = _export(model, decided, function, target, name)
    data = serialize(exported)
    _check(data, label)
    return data


def _check(model: onnx.ModelProto | bytes, label: str) -> None:
    """onnx's full checker (with strict shape inference); what it rejects is a one-line AscendError."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "invalid model")
        raise AscendError(f"--emit-onnx: the precision plan of {label} cannot be expressed in ONNX: {first}") from None


def emulated_nodes(model: onnx.ModelProto, decided: ModuleOp, target: str = "ort-cpu") -> list[str]:
    """The nodes :func:`export_onnx` runs in float32 between casts (for reports and tests)."""
    exporter = _Exporter(model, decided_dtypes(decided), "", target)
    exporter.run()
    return exporter.emulated


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def _inferred_types(model: onnx.ModelProto) -> dict[str, int]:
    """The element type of every tensor of the graph (ONNX shape inference; declared types first).

    Inference runs on a copy of the graph whose large initializers are inputs of the same type and shape:
    `infer_shapes` serializes the model it is given, which for resnet50 cost more than the whole rest of the
    export; element types do not depend on the weights' values (small initializers, shapes, stay data)."""
    g = model.graph
    named = {vi.name for vi in g.input}
    inits = [i for i in g.initializer if _elements(i) <= SMALL]
    inputs = [*g.input]
    inputs += [
        helper.make_tensor_value_info(i.name, i.data_type, list(i.dims))
        for i in g.initializer
        if _elements(i) > SMALL and i.name not in named
    ]
    light = helper.make_graph(g.node, g.name, inputs, g.output, inits, value_info=g.value_info)
    light_model = helper.make_model(light, opset_imports=model.opset_import, ir_version=model.ir_version)
    light_model.functions.extend(model.functions)
    try:
        inferred = onnx.shape_inference.infer_shapes(light_model)
    except Exception:  # noqa: BLE001 - inference is best effort; declared types remain
        inferred = model
    types: dict[str, int] = {}
    for vi in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = vi.type.tensor_type.elem_type
    for init in model.graph.initializer:
        types[init.name] = init.data_type
    return types


def _elements(init: TensorProto) -> int:
    return int(np.prod(init.dims, dtype=np.int64)) if init.dims else 1


def _retyped(init: TensorProto, dtype: str) -> TensorProto:
    """The initializer stored in `dtype` (rounded to nearest even, as the Cast it replaces)."""
    from ascend_mp.dtypes import NUMPY

    source = _RAW_SOURCE.get(init.data_type)
    if source is not None and init.raw_data and len(init.raw_data) == _elements(init) * source.itemsize:
        # raw little-endian bytes (as exporters write weights): converted straight from the buffer, no copy first
        return _low_tensor(init, np.frombuffer(init.raw_data, source).astype(NUMPY[dtype]), dtype)
    array = numpy_helper.to_array(init).astype(NUMPY[dtype])
    if dtype == "bf16":
        return _low_tensor(init, array, dtype)
    return numpy_helper.from_array(array, init.name)


def _low_tensor(init: TensorProto, array: np.ndarray[Any, Any], dtype: str) -> TensorProto:
    """`init` (name, dims) holding `array`, whose elements are already in float dtype `dtype`, as raw little-endian
    bytes: what numpy_helper.from_array builds for an fp16 array, byte for byte; bf16 as its bits."""
    out = TensorProto(name=init.name, dims=init.dims, data_type=FLOAT_TO_ONNX[dtype])
    data = np.ascontiguousarray(array)
    data = data.view(np.uint16) if dtype == "bf16" else data
    out.raw_data = (data if np.little_endian else data.byteswap()).tobytes()
    return out


_RAW_SOURCE: dict[int, np.dtype[Any]] = (
    {TensorProto.FLOAT: np.dtype("<f4"), TensorProto.DOUBLE: np.dtype("<f8"), TensorProto.FLOAT16: np.dtype("<f2")}
    if np.little_endian
    else {}
)
"""Initializer types whose raw_data `_retyped` reads as an array directly (ONNX's raw_data is little-endian)."""


def _schema(node: onnx.NodeProto, opset: int) -> Any:
    try:
        return onnx.defs.get_schema(node.op_type, opset, node.domain)
    except Exception:  # noqa: BLE001 - onnx.defs.SchemaError: an op type onnx does not know
        return None


def _rank(onnx_type: int) -> int:
    from ascend_mp.dtypes import PRECISION_RANK

    name = ONNX_TO_FLOAT.get(onnx_type)
    return PRECISION_RANK[name] if name is not None else 0


def _most_precise(dtypes: Iterable[str]) -> str:
    from ascend_mp.dtypes import PRECISION_RANK

    return max(dtypes, key=lambda d: (PRECISION_RANK[d], d != "bf16"))


def _short(onnx_type: int) -> str:
    return ONNX_TO_FLOAT.get(onnx_type, str(onnx_type))


def serialize(model: onnx.ModelProto) -> bytes:
    """The model's bytes (a model over 2 GiB needs external data, which this writer does not produce)."""
    try:
        return model.SerializeToString()
    except ValueError as e:
        raise AscendError(f"--emit-onnx: the model cannot be serialised in one file: {e}") from None


__all__ = ["DecidedDtypes", "decided_dtypes", "emulated_nodes", "export_onnx", "export_onnx_bytes", "serialize"]
