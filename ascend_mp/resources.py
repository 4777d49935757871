"""Tensor payloads as MLIR `dense_resource<...>` blobs.

Weights are not printed as decimal literals: an `ascend.Const` holds
`dense_resource<conv1.weight> : tensor<64x3x7x7xf32>`, and the bytes live in the
file's trailing metadata section, exactly as MLIR writes them:

```mlir
{-#
  dialect_resources: {
    builtin: {
      conv1.weight: "0x04000000..."
    }
  }
#-}
```

A blob is `0x`, the alignment as a little-endian uint32, then the raw little-endian
element bytes (MLIR's format), so printing and parsing are bit-exact. xDSL 0.74
keeps the blobs (hex strings) in the builtin dialect's `OpAsmDialectInterface`,
which its parser fills from that section and its printer writes back; this module
adds a decoded-array cache so that a model imported in-process is not decoded again.

The store is process-wide, so a handle asked for twice with different bytes is renamed by
xDSL (`w`, then `w_0`, `w_1`, ...: an accident of what ran before). Printed text must not
depend on that: :class:`ModulePrinter` prints each handle under the name it was asked for,
made unique within the one module being printed (`w`, `w_1`, ... in order of first use), so
the same module prints the same text however often it is built or parsed in one process.
"""

from __future__ import annotations

import contextlib
import re
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import DenseResourceAttr, StringAttr, TensorType

from ascend_mp import blob_names
from ascend_mp.blob_names import LazyBlob, ModulePrinter, print_module_text, put_lazy_blob, raw_blob, requested_name
from ascend_mp.dtypes import NUMPY, tensor_dtype

_BAD_CHARS = re.compile(r"[^\w.$]")
_CACHE: dict[str, tuple[Any, np.ndarray[Any, Any]]] = {}
"""handle -> (the store's entry it was decoded from or stored as: a string or a LazyBlob, the read-only array)."""


def storage() -> OpAsmDialectInterface:
    """The builtin dialect's resource storage (shared by every context of the process), recording the
    name each handle was asked for (`blob_names`, what `ModulePrinter` prints)."""
    return blob_names.storage()


def handle_for(name: str) -> str:
    """A valid resource handle (an MLIR bare identifier) made from a tensor name."""
    if name.isascii() and name.isidentifier():  # [A-Za-z_][A-Za-z0-9_]*: a handle already (a stored one + `_f16`)
        return name
    handle = _BAD_CHARS.sub("_", name) or "blob"
    return handle if handle[0].isalpha() or handle[0] == "_" else "_" + handle


def numpy_dtype(type_: TensorType) -> np.dtype[Any]:
    dtype = tensor_dtype(type_)
    if dtype is None:
        raise ValueError(f"no numpy dtype for {type_}")
    return NUMPY[dtype]


def resource_attr(name: str, array: np.ndarray[Any, Any], type_: TensorType) -> DenseResourceAttr:
    """A new `dense_resource` attribute holding `array` (converted to `type_`'s dtype)."""
    return blob_attr(store_blob(name, array, type_), type_)


def blob_attr(handle: str, type_: TensorType) -> DenseResourceAttr:
    """`dense_resource<handle> : type_`, built as `DenseResourceAttr.from_params` builds it but without
    re-verifying its parameters, which hold by construction (a string, and a tensor type that was verified when it
    was built): a fifth of the cost, for every weight a pass re-stores."""
    name = object.__new__(StringAttr)
    object.__setattr__(name, "data", handle)  # how xDSL sets a frozen attribute's fields
    attr = object.__new__(DenseResourceAttr)
    object.__setattr__(attr, "resource_handle", name)
    object.__setattr__(attr, "type", type_)
    return attr


def store_blob(name: str, array: np.ndarray[Any, Any], type_: TensorType) -> str:
    """Store `array` (converted to `type_`'s dtype) as a blob; its handle: `name` made a handle, or, when
    that handle holds other bytes, a fresh one (`name_0`, ...: handles are process-wide).

    The blob is a `LazyBlob`: its hex text is made from the array when something first reads it (the printer);
    a run that never prints the module never encodes its weights."""
    dtype = numpy_dtype(type_)
    data = np.ascontiguousarray(array, dtype=dtype)  # hosts are little-endian, as the blob format is
    if array.flags.writeable and np.may_share_memory(data, array):  # the caller may write to it later: a snapshot
        data = data.copy()
    data.setflags(write=False)  # the blob's bytes: the cached array below and the text made later share them
    interface = storage()
    handle = handle_for(name)
    align = max(dtype.itemsize, 1)
    entry = raw_blob(interface, handle)
    if not (entry and _holds(handle, entry, data, align)):  # the same bytes under the same name share the handle
        handle = interface.declare_resource(handle)
        entry = LazyBlob(10 + 2 * data.nbytes, lambda: _hex(data, align))
        put_lazy_blob(interface, handle, entry)
        blob_names.note_derived(handle, handle_for(name))
    cached = data.view().reshape(type_.get_shape())
    cached.setflags(write=False)
    _CACHE[handle] = (entry, cached)
    return handle


def _hex(data: np.ndarray[Any, Any], align: int) -> str:
    """A blob's text: `0x`, the alignment as a little-endian uint32, the element bytes (straight from the buffer)."""
    return "0x" + struct.pack("<I", align).hex() + data.reshape(-1).view(np.uint8).data.hex()


def _holds(handle: str, entry: Any, data: np.ndarray[Any, Any], align: int) -> bool:
    """Whether the store's `entry` for `handle` is the blob of `data` (alignment and bytes)."""
    hit = _CACHE.get(handle)
    if hit is not None and hit[0] is entry:  # decoded or stored here: compare the arrays' bytes
        known = hit[1]
        return (
            max(known.dtype.itemsize, 1) == align
            and known.nbytes == data.nbytes
            and known.reshape(-1).view(np.uint8).tobytes() == data.reshape(-1).view(np.uint8).tobytes()
        )
    text = entry.text if not isinstance(entry, str) else entry
    return len(text) == 10 + 2 * data.nbytes and text == _hex(data, align)


def resource_problem(attr: DenseResourceAttr) -> str | None:
    """Why the attribute's blob cannot be read (None if it can)."""
    handle = attr.resource_handle.data
    blob = raw_blob(storage(), handle)
    if not blob:
        return f"dense_resource '{handle}' has no blob in the dialect_resources section"
    if not isinstance(attr.type, TensorType):
        return f"dense_resource '{handle}' must have a tensor type"
    try:
        dtype = numpy_dtype(attr.type)
    except ValueError as e:
        return str(e)
    want = 2 + 8 + 2 * dtype.itemsize * attr.type.element_count()
    if len(blob) != want:
        got = max(len(blob) - 10, 0) // 2
        return f"dense_resource '{handle}' holds {got} bytes, but {attr.type} needs {want // 2 - 5} bytes"
    return None


def cached_array(attr: DenseResourceAttr) -> np.ndarray[Any, Any] | None:
    """The tensor a `dense_resource` attribute names where it is at hand as an array (stored or read before in
    this process), else None: nothing is decoded."""
    handle = attr.resource_handle.data
    hit = _CACHE.get(handle)
    return hit[1] if hit is not None and hit[0] is raw_blob(storage(), handle) else None


def resource_array(attr: DenseResourceAttr) -> np.ndarray[Any, Any]:
    """The tensor a `dense_resource` attribute names, as a read-only numpy array."""
    hit = cached_array(attr)
    if hit is not None:
        return hit
    handle = attr.resource_handle.data
    entry = raw_blob(storage(), handle)
    problem = resource_problem(attr)
    if problem is not None:
        raise ValueError(problem)
    assert isinstance(attr.type, TensorType)
    dtype = numpy_dtype(attr.type)
    blob = storage().lookup(handle) or ""
    raw = bytes.fromhex(blob[10:])
    array = np.frombuffer(raw, dtype)
    array = array.reshape(attr.type.get_shape())
    array.setflags(write=False)
    _CACHE[handle] = (entry, array)
    return array


@contextlib.contextmanager
def isolated_cache() -> Iterator[None]:
    """Run a block with an empty decoded-array cache, and restore the cache afterwards (`ascend_mp.ir.isolated_store`
    empties the blob store with it)."""
    saved = dict(_CACHE)
    _CACHE.clear()
    try:
        yield
    finally:
        _CACHE.clear()
        _CACHE.update(saved)


TINY = 16
"""Constants with at most this many elements may stay inline `dense<...>` literals."""


def fits_dense_literal(array: np.ndarray[Any, Any]) -> bool:
    """Whether `array` may be written as a `dense<...>` literal instead of a blob: it is tiny and
    finite (xDSL 0.74 prints inf/NaN as hex, e.g. `0xfc00`, and reads that back as an integer)."""
    if array.size > TINY:
        return False
    return array.dtype.kind not in "fcV" or bool(np.isfinite(array.astype(np.float64)).all())


__all__ = ["ModulePrinter", "print_module_text", "requested_name"]  # re-exported: one place to look for blobs
