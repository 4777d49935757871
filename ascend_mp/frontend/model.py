"""Reading an ONNX model: the file, its external data, opsets and `--input_shape` (ATC syntax).

Everything here fails with a one-line :class:`AscendError` naming the file (and the
tensor, input or node) and what was expected.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascend_mp.errors import AscendError

if TYPE_CHECKING:
    import onnx

NAME_ATTR = "onnx.name"
"""The arg/result attribute holding a function argument's or result's ONNX name (the importer writes it, the tools
read it)."""

SUPPORTED_DOMAINS = ("", "ai.onnx")
MIN_OPSET, MAX_OPSET = 7, 23

Dim = int | str
"""A static size, or a string for a dimension that stays dynamic (`-1`, `1~10`, `?`, a symbol)."""


# --------------------------------------------------------------------------------------
# --input_shape
# --------------------------------------------------------------------------------------

_DIM = re.compile(r"^(-1|\d+|\d+~\d+|\d+~-1)$")


@dataclass(frozen=True)
class InputShapes:
    """Parsed `--input_shape`: by input name, or by position when no entry names an input."""

    by_name: Mapping[str, tuple[Dim, ...]]
    by_index: tuple[tuple[Dim, ...], ...] = ()

    def for_input(self, name: str, index: int) -> tuple[Dim, ...] | None:
        if name in self.by_name:
            return self.by_name[name]
        if index < len(self.by_index):
            return self.by_index[index]
        return None


def parse_input_shape(text: str | Mapping[str, object] | None) -> InputShapes:
    """ATC's `--input_shape`: `"input:1,3,224,224;mask:1,128"`.

    A dimension is a size, `-1` (dynamic) or a range `1~10` (dynamic, ATC's shape range);
    `name:` with nothing after the colon is a scalar. Without names, entries go to the
    inputs in order (`"1,3,224,224;1,128"`). A name may itself contain `:` (the last
    colon separates it). A dict `{name: (1, 3, 224, 224)}` is accepted from Python.
    """
    if text is None:
        return InputShapes({})
    if isinstance(text, Mapping):
        return InputShapes({str(k): tuple(int(d) for d in v) for k, v in text.items()})  # pyright: ignore[reportGeneralTypeIssues]  # a Python caller's dict maps names to dim sequences (the docstring's contract)
    entries = [e.strip() for e in text.strip().strip('"').split(";")]
    entries = [e for e in entries if e] if len(entries) > 1 else entries
    if not entries or not entries[0]:
        raise AscendError('--input_shape: empty value; expected "name:d1,d2,...;name2:..." (e.g. "input:1,3,224,224")')
    named = [":" in e for e in entries]
    if any(named) and not all(named):
        raise AscendError(
            f"--input_shape: '{text}' mixes named and unnamed entries; expected \"name:d1,d2,...;name2:...\""
        )
    by_name: dict[str, tuple[Dim, ...]] = {}
    by_index: list[tuple[Dim, ...]] = []
    for entry in entries:
        name, _, dims_text = entry.rpartition(":") if ":" in entry else ("", "", entry)
        name = name.strip()
        if ":" in entry and not name:
            raise AscendError(f"--input_shape: entry '{entry}' has no input name before ':'")
        dims = _parse_dims(dims_text, entry)
        if name:
            if name in by_name:
                raise AscendError(f"--input_shape: input '{name}' is given twice")
            by_name[name] = dims
        else:
            by_index.append(dims)
    return InputShapes(by_name, tuple(by_index))


def _parse_dims(text: str, entry: str) -> tuple[Dim, ...]:
    text = text.strip()
    if not text:
        return ()  # a scalar, as ATC writes it ("name:")
    dims: list[Dim] = []
    for part in text.split(","):
        part = part.strip()
        if not _DIM.match(part):
            raise AscendError(
                f"--input_shape: bad dimension '{part}' in '{entry}'; expected a size, -1 or a range like 1~10"
            )
        dims.append(int(part) if part.isdigit() else part)
    return tuple(dims)


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------


def load_model(
    source: str | os.PathLike[str] | bytes | onnx.ModelProto, name: str | None = None
) -> tuple[onnx.ModelProto, str]:
    """The model with its external data loaded, and the name used in error messages."""
    import onnx
    from google.protobuf.message import DecodeError

    if isinstance(source, onnx.ModelProto):
        return source, name or source.graph.name or "<model>"
    base = None
    if isinstance(source, bytes):
        data, label = source, name or "<model>"
    else:
        label = name or os.fspath(source)
        base = os.path.dirname(os.path.abspath(os.fspath(source)))
        from ascend_mp.fileio import read_input

        data = read_input(source, stdin=False)  # bounded; a device refused, a named pipe waited for
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise AscendError(f"{label}: not an ONNX model (the protobuf does not decode: {_one_line(e)})") from None
    if model.ir_version <= 0 or not model.HasField("graph") or not model.graph.output:
        raise AscendError(
            f"{label}: not an ONNX model (no ir_version or no graph with outputs; is the file truncated?)"
        )
    _load_external(model, base, label)
    return model, label


def _load_external(model: onnx.ModelProto, base: str | None, label: str) -> None:
    """Read every tensor's external data, each checked (onnx's own checks: a location inside the model's
    folder, not a symlink; then the offset, the length and the size) with one-line errors."""
    from onnx import external_data_helper as ext

    tensors = [t for t in ext._get_all_tensors(model) if ext.uses_external_data(t)]
    if not tensors:
        return
    if base is None:
        raise AscendError(
            f"{label}: tensor '{tensors[0].name}' has external data, but the model was given without its folder"
        )
    for tensor in tensors:
        _load_one_external(tensor, base, label)


EXTERNAL_KEYS = frozenset({"location", "offset", "length", "checksum", "basepath"})
"""The keys of an ONNX tensor's `external_data` entries (onnx.external_data_helper.ExternalDataInfo)."""


def _load_one_external(tensor: onnx.TensorProto, base: str, label: str) -> None:
    import logging

    from onnx import external_data_helper as ext

    where = f"{label}: external data of tensor '{tensor.name}'"
    for entry in tensor.external_data:
        if entry.key not in EXTERNAL_KEYS:  # onnx would warn (a raw UserWarning) and ignore it
            logging.getLogger("ascend_mp").warning("%s: unknown external_data key '%s' ignored", where, entry.key)
    values = {e.key: e.value for e in tensor.external_data}
    location = values.get("location", "")
    for key in ("offset", "length"):
        if key in values and not (values[key].isascii() and values[key].isdigit()):
            raise AscendError(f"{where}: '{key}' must be a non-negative integer, got '{values[key]}'")
    if not location:
        raise AscendError(f"{where}: no 'location' given")
    path = os.path.join(base, location)
    if os.path.isabs(location) or ".." in location.replace("\\", "/").split("/"):
        raise AscendError(f"{where}: location '{location}' must be a path inside the model's folder ({base})")
    if not os.path.isfile(path):
        raise AscendError(
            f"{label}: external data file '{location}' of tensor '{tensor.name}' not found (looked in {base})"
        )
    want = _expected_bytes(tensor)
    offset, length = int(values.get("offset", 0)), values.get("length")
    size = os.path.getsize(path)
    if want is not None and length is not None and int(length) != want:
        raise AscendError(f"{where}: 'length' is {length} bytes, but the tensor needs {want}")
    if want is not None:
        from ascend_mp.limits import check_alloc

        check_alloc((want,), 1, where)
    if want is not None and offset + want > size:
        raise AscendError(
            f"{where} in '{location}' has {max(size - offset, 0)} bytes, expected {want} "
            f"(from offset {offset} in a file of {size} bytes)"
        )
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the unknown keys, reported above
            ext.load_external_data_for_tensor(tensor, base)
    except Exception as e:  # noqa: BLE001 - onnx's ValidationError (a symlink, a path outside), OSError, ValueError
        raise AscendError(
            f"{label}: cannot read external data '{location}' of tensor '{tensor.name}': {_one_line(e)}"
        ) from None
    if want is not None and len(tensor.raw_data) != want:
        raise AscendError(
            f"{label}: external data of tensor '{tensor.name}' in '{location}' has {len(tensor.raw_data)} bytes, expected {want}"
        )
    del tensor.external_data[:]
    tensor.data_location = 0  # pyright: ignore[reportAttributeAccessIssue]  # onnx's stubs type the enum field as DataLocation; 0 is DEFAULT


def _expected_bytes(tensor: onnx.TensorProto) -> int | None:
    import numpy as np
    from onnx import helper

    try:
        itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    return itemsize * math.prod(int(d) for d in tensor.dims)


def check_opsets(model: onnx.ModelProto, label: str) -> int:
    """The default-domain opset version; unknown domains used by nodes are an error."""
    versions = {o.domain: o.version for o in model.opset_import}
    opset = versions.get("", versions.get("ai.onnx"))
    local = {f.domain for f in model.functions}
    for node in model.graph.node:
        if node.domain not in SUPPORTED_DOMAINS and node.domain not in local:
            raise AscendError(
                f"{label}: node '{node.name or node.op_type}' ({node.op_type}) uses unknown opset domain '{node.domain}' "
                f"(supported: the default ONNX domain)"
            )
    if opset is None:
        raise AscendError(f"{label}: the model imports no version of the default ONNX opset")
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise AscendError(f"{label}: ONNX opset {opset} is not supported (supported: {MIN_OPSET} to {MAX_OPSET})")
    return opset


def check_graph(model: onnx.ModelProto, label: str) -> None:
    """Refuse a graph that names things ambiguously or not at all (onnx's checker rules that the importer
    relies on): every name valid UTF-8, every node with an output, every value defined once (graph inputs,
    initializers, node outputs), every graph output listed once, every attribute typed."""
    g = model.graph
    where = f"{label}: graph '{_text(g.name)}'" if g.name else label
    defined: dict[str, str] = {}

    def define(name: object, what: str) -> None:
        text = _text(name)
        if not isinstance(name, str):
            raise AscendError(f"{where}: {what} has a name that is not valid UTF-8 ({text})")
        if not name:
            return
        if name in defined:
            raise AscendError(f"{where}: '{name}' is defined twice (as {defined[name]} and as {what})")
        defined[name] = what

    initializers = {i.name for i in g.initializer}
    for init in g.initializer:
        define(init.name, "an initializer")
    for vi in g.input:
        if vi.name not in initializers:  # an input may repeat its initializer (a default value)
            define(vi.name, "a graph input")
    for i, node in enumerate(g.node):
        for field in ("op_type", "name", "domain"):
            if not isinstance(getattr(node, field), str):
                raise AscendError(
                    f"{where}: node {i} has an {field} that is not valid UTF-8 ({_text(getattr(node, field))})"
                )
        shown = f"node '{node.name or node.op_type}' ({node.op_type})"
        if not any(node.output):
            raise AscendError(f"{where}: {shown} has no outputs")
        for name in node.input:
            if not isinstance(name, str):
                raise AscendError(f"{where}: {shown} has an input name that is not valid UTF-8 ({_text(name)})")
        for name in node.output:
            define(name, f"an output of {shown}")
        for attr in node.attribute:
            if attr.type == 0:  # AttributeProto.UNDEFINED
                raise AscendError(f"{where}: {shown} attribute '{_text(attr.name)}' has no type (UNDEFINED)")
    seen: set[str] = set()
    for out in g.output:
        if not isinstance(out.name, str) or not out.name:
            raise AscendError(f"{where}: a graph output has no valid name ({_text(out.name)})")
        if out.name in seen:
            raise AscendError(f"{where}: graph output '{out.name}' is listed twice")
        seen.add(out.name)


def check_arity(model: onnx.ModelProto, opset: int, label: str) -> None:
    """Every default-domain node has the inputs and outputs its ONNX schema requires (an `Add` with one input,
    or `''` for a required input, would otherwise pass as something else), and no more than it allows."""
    from onnx import defs

    option = defs.OpSchema.FormalParameterOption
    schemas: dict[str, defs.OpSchema | None] = {}
    for node in model.graph.node:
        if node.domain not in SUPPORTED_DOMAINS:
            continue
        if node.op_type not in schemas:
            try:
                schemas[node.op_type] = defs.get_schema(node.op_type, opset, "")
            except Exception:  # noqa: BLE001 - an op onnx does not know: reported as unsupported later
                schemas[node.op_type] = None
        schema = schemas[node.op_type]
        if schema is None:
            continue
        shown = f"{label}: node '{node.name or node.op_type}' ({node.op_type})"
        given = list(node.input)
        if len(given) > schema.max_input:
            raise AscendError(f"{shown} has {len(given)} inputs; {node.op_type} takes at most {schema.max_input}")
        for i, formal in enumerate(schema.inputs):
            if formal.option == option.Single and (i >= len(given) or not given[i]):
                raise AscendError(f"{shown}: input {i} ('{formal.name}') is required but not given")
            if formal.option == option.Variadic and not any(given[i:]):
                raise AscendError(f"{shown}: needs at least one '{formal.name}' input")
        if len(node.output) > schema.max_output:
            raise AscendError(
                f"{shown} has {len(node.output)} outputs; {node.op_type} gives at most {schema.max_output}"
            )


def _text(value: object) -> str:
    """A name for a message: text as is, bytes that are not UTF-8 as a Python literal."""
    return value if isinstance(value, str) else repr(value)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
