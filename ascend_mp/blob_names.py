"""Names of dense_resource blobs in printed text: the same module prints the same text.

The builtin dialect's blob store is process-wide, so a handle asked for twice with different bytes
is renamed by xDSL (`w`, then `w_0`, `w_1`, ...: an accident of what ran before in the process).
`storage()` records, for every handle the store hands out (parsed or stored), the name it was
asked for; :class:`ModulePrinter` prints each handle under that name, made unique within the one
module being printed (`w`, `w_1`, ... in order of first use), with the dialect_resources section
to match. No numpy here: `ascend-opt` prints with it on every run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin
from xdsl.printer import Printer

_REQUESTED: dict[str, str] = {}
"""store handle -> the name it was declared as (before the store made it unique)."""


class LazyBlob:
    """A blob whose hex text (`0x` + alignment + element bytes, MLIR's format) is made when first read: a weight
    stored by a run that never prints the module (`--emit-onnx`) is never hex-encoded. `len()` is the text's
    length (what `resources.resource_problem` checks) without making it."""

    __slots__ = ("_make", "_text", "size")

    def __init__(self, size: int, make: Callable[[], str]):
        self.size = size
        self._make: Callable[[], str] | None = make
        self._text: str | None = None

    def __len__(self) -> int:
        return self.size

    @property
    def text(self) -> str:
        if self._text is None:
            assert self._make is not None
            self._text = self._make()
            self._make = None  # the array it was made from is no longer held here
        return self._text


_LAZY: dict[int, tuple[str, LazyBlob]] = {}
"""id(placeholder) -> (the placeholder string the store holds for a lazy blob, the blob). A placeholder is a string
object of its own, recognised by identity: no parsed text is ever taken for one."""


def storage() -> OpAsmDialectInterface:
    """The builtin dialect's resource storage (shared by every context of the process), its
    `declare_resource` recording the name each handle was asked for (what `ModulePrinter` prints), and its
    `lookup` and `build_resources` giving a lazy blob's text (`put_lazy_blob`)."""
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    if "declare_resource" not in vars(interface):
        declare = interface.declare_resource

        def declare_recording(key: str) -> str:
            handle = declare(key)
            _REQUESTED[handle] = key
            return handle

        def lookup(key: str) -> str | None:
            entry = raw_blob(interface, key)
            return entry.text if isinstance(entry, LazyBlob) else entry

        def build_resources(keys: Iterable[str]) -> dict[str, str]:
            found = {key: lookup(key) for key in keys}
            return {key: blob for key, blob in found.items() if blob}

        interface.declare_resource = declare_recording  # the parser declares through it too
        interface.lookup = lookup
        interface.build_resources = build_resources  # what the printer writes the resources section from
    return interface


def raw_blob(store: OpAsmDialectInterface, handle: str) -> str | LazyBlob | None:
    """`store.lookup(handle)` without making a lazy blob's text: the string, or the LazyBlob itself."""
    entry = OpAsmDialectInterface.lookup(store, handle)  # the store's own entry (the class's lookup, unwrapped)
    hit = _LAZY.get(id(entry)) if entry else None
    return hit[1] if hit is not None and hit[0] is entry else entry


def put_lazy_blob(store: OpAsmDialectInterface, handle: str, blob: LazyBlob) -> None:
    """Fill a declared handle with a lazily made blob: what `parse_resource(handle, blob.text)` does, the text made
    only when something reads it."""
    placeholder = "".join(("0x", "lazy"))  # a new string object: its identity marks this blob
    store.parse_resource(handle, placeholder)
    _LAZY[id(placeholder)] = (placeholder, blob)


def requested_name(handle: str) -> str:
    """The name a store handle was asked for (itself if it was never renamed)."""
    return _REQUESTED.get(handle, handle)


def note_derived(handle: str, name: str) -> None:
    """Record `handle`'s name when `name` was derived from another handle (`w_0` + `_f16`, by a pass that
    stores a converted blob): the name derived from what that handle was asked for (`w_f16`)."""
    i = len(name)
    while (i := name.rfind("_", 0, i)) > 0:
        base = _REQUESTED.get(name[:i])
        if base is not None and base != name[:i]:
            _REQUESTED[handle] = base + name[i:]
            return


class ModulePrinter(Printer):
    """xDSL's printer, with dense_resource handles printed under the names they were asked for, made
    unique in this print only (`w`, `w_1`, ...), and the dialect_resources section written to match."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._printed_as: dict[str, str] = {}  # store handle -> printed name
        self._handles: dict[str, str] = {}  # printed name -> store handle

    def print_resource_handle(self, dialect: str, handle: str) -> None:
        name = self._printed_as.get(handle)
        if name is None:
            base = requested_name(handle)
            name, n = base, 0
            while name in self._handles:
                n += 1
                name = f"{base}_{n}"
            self._printed_as[handle] = name
            self._handles[name] = handle
        super().print_resource_handle(dialect, name)

    def print_metadata(self, dialects: Iterable[Any]) -> None:
        super().print_metadata([_PrintedBlobs(self._handles)])  # pyright: ignore[reportArgumentType]  # duck-typed Dialect: print_metadata reads only name, has_interface, get_interface


class _PrintedBlobs:
    """Stands for the builtin dialect in `Printer.print_metadata`: its blobs under their printed names."""

    name = "builtin"

    def __init__(self, handles: dict[str, str]):
        self.handles = handles

    def has_interface(self, cls: type) -> bool:
        return True

    def get_interface(self, cls: type) -> _PrintedBlobs:
        return self

    def build_resources(self, keys: Iterable[str]) -> dict[str, str]:
        store = storage()
        blobs = {key: store.lookup(self.handles.get(key, key)) for key in keys}
        return {key: blob for key, blob in blobs.items() if blob}


def print_module_text(module: Any) -> str:
    """`module` as MLIR text with its blobs (`ModulePrinter`): the same module, the same text."""
    import io

    out = io.StringIO()
    printer = ModulePrinter(stream=out)
    printer.print_op(module)
    printer.print_metadata([])
    out.write("\n")
    return out.getvalue()


storage()  # recording from the first import on (import this module before parsing blobs)
