"""What `ascend-opt` and `ascend-run` need to read ONNX models (their hooks call these)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, BytesAttr, DictionaryAttr, ModuleOp, StringAttr

from ascend_mp.frontend.model import NAME_ATTR

ONNX_EXTENSIONS = ("onnx",)


def add_frontend_arguments(parser: argparse.ArgumentParser | Any) -> None:
    """`--input_shape` (ATC syntax), used when the input is an ONNX model."""
    parser.add_argument(
        "--input_shape",
        metavar="SHAPES",
        help='ONNX input shapes, ATC syntax: "input:1,3,224,224;mask:1,128" (fixes dynamic dimensions)',
    )


def is_onnx(path: str | None) -> bool:
    """Whether `path` names an ONNX model: by its extension (`.onnx`), else by its content (`looks_like_onnx`)."""
    if path is None or path == "-":
        return False
    return path.rsplit(".", 1)[-1].lower() in ONNX_EXTENSIONS or looks_like_onnx(path)


_MODEL_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 25: 2, 26: 2}
"""The fields of ONNX's ModelProto (onnx.proto3) -> their protobuf wire type (0 varint, 2 length-delimited)."""
_GRAPH_FIELD = 7
_MAX_FIELDS = 4096


def _varint(f: IO[bytes]) -> int | None:
    value = shift = 0
    while shift < 64:
        b = f.read(1)
        if not b:
            return None
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7
    return None


def looks_like_onnx(path: str) -> bool:
    """Whether the file at `path` reads as a serialized ONNX ModelProto: a sequence of ModelProto's fields, each
    with its wire type, a graph among them, ending exactly at the end of the file (the big fields are seeked over,
    not read; onnx is not imported). False for MLIR text and for anything unreadable."""
    import os
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return False
        with open(path, "rb") as f:
            graph = False
            for _ in range(_MAX_FIELDS):
                if f.tell() == st.st_size:
                    return graph
                tag = _varint(f)
                if tag is None or _MODEL_FIELDS.get(tag >> 3) != tag & 7:
                    return False
                graph = graph or tag >> 3 == _GRAPH_FIELD
                value = _varint(f)
                if value is None:
                    return False
                if tag & 7 == 2:
                    if f.tell() + value > st.st_size:
                        return False
                    f.seek(value, os.SEEK_CUR)
    except OSError:
        return False
    return False


def onnx_frontend(
    path: str | None,
    stream: IO[bytes],
    input_shape: str | None,
    ctx: Context | None = None,
    keep: list[Any] | None = None,
) -> ModuleOp:
    """The module of an ONNX model read by a tool: from its path (so external data is found), else the stream.

    The dialects the module uses are loaded into `ctx`, so that the printer finds the
    builtin dialect's resource blobs (it prints the resources of loaded dialects). With `keep`, the model read
    (an `onnx.ModelProto`, external data loaded) is appended to it, for a tool that writes the model back
    (`--emit-onnx`) without reading the file a second time."""
    from ascend_mp.frontend import import_onnx, need_onnx

    if ctx is not None:
        for dialect in ("builtin", "func", "ascend"):
            ctx.get_optional_dialect(dialect)

    if path is not None and path != "-":
        stream.close()
        if keep is None:
            return import_onnx(path, input_shape)
        need_onnx()
        from ascend_mp.frontend.model import load_model

        model, _ = load_model(path)
        keep.append(model)
        return import_onnx(model, input_shape, name=path)
    return import_onnx(stream.read(), input_shape, name="<stdin>")


def _names(attrs: ArrayAttr[DictionaryAttr] | None, count: int) -> list[str | None]:

    if attrs is None:
        return [None] * count
    out: list[str | None] = []
    for d in attrs.data:
        name = d.data.get(NAME_ATTR)
        if isinstance(name, BytesAttr):  # xDSL prints a non-ASCII string escaped, and parses it back as bytes
            try:
                out.append(name.data.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(None)
            continue
        out.append(name.data if isinstance(name, StringAttr) else None)
    return out


def io_names(module: ModuleOp, function: str) -> tuple[list[str | None], list[str | None]]:
    """The ONNX names (`onnx.name` arg/result attributes) of a function's arguments and results."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == function:
            n_in, n_out = len(op.function_type.inputs), len(op.function_type.outputs)
            return _names(op.arg_attrs, n_in), _names(op.res_attrs, n_out)
    return [], []


def rename_specs(specs: Sequence[Any], names: Sequence[str | None]) -> list[Any]:
    """Argument specs named by their ONNX names where the function records them."""
    return [replace(s, name=n) if n else s for s, n in zip(specs, list(names) + [None] * len(specs))]
