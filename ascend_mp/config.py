"""Parsers for the user's precision overrides, in CANN/ATC file formats (docs/design.md §5).

- ``--modify_mixlist``: JSON that moves op types between the black, white and gray lists.
- ``--keep_dtype``: one op name or ``OpType::<type>`` a line; those ops keep their original dtype.
- ``--customize_dtypes``: one ``<op name>::InputDtype:<dtypes>,OutputDtype:<dtypes>`` or
  ``OpType::<type>:InputDtype:...,OutputDtype:...`` a line (``;`` is accepted before ``OutputDtype`` too).

Every problem in a file is an :class:`AscendError` with a one-line message naming the file and the line
(``path:LINE[:COL]: ...``) or JSON key path (``path: key 'white-list.to-add[2]': ...``). Warnings are logged on
the ``ascend_mp`` logger and kept in the ``warnings`` list of the result. Plain text parsing: no IR here.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from ascend_mp.dtypes import BY_CANN
from ascend_mp.errors import AscendError

logger = logging.getLogger("ascend_mp")

# ---------------------------------------------------------------------------------------------------- dtypes

CUSTOMIZE_DTYPE_NAMES = (
    "float16",
    "float",
    "float32",
    "bfloat16",
    "double",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
)
"""The CANN dtype names a ``--customize_dtypes`` file may use (in the order error messages list them)."""

CANN_DTYPES: dict[str, str] = {n: BY_CANN[n].name for n in CUSTOMIZE_DTYPE_NAMES}
"""CANN dtype name -> MLIR element type name (the names ``--customize_dtypes`` accepts)."""

_MLIR_DTYPES = frozenset(CANN_DTYPES.values())


def parse_dtype(name: str) -> str | None:
    """The MLIR element type name for a CANN (``float16``) or MLIR (``f16``) dtype name; None if unknown."""
    if name in CANN_DTYPES:
        return CANN_DTYPES[name]
    return name if name in _MLIR_DTYPES else None


# ---------------------------------------------------------------------------------------------------- helpers

_OP_TYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_OPTYPE_PREFIX = "OpType::"


def _is_op_type(text: str) -> bool:
    return _OP_TYPE.match(text) is not None


def _is_op_name(text: str) -> bool:
    return bool(text) and "::" not in text and text.isprintable() and not any(c.isspace() for c in text)


def _shown(text: str) -> str:
    """`text` for a message: invisible characters (NUL, BOM, controls) escaped."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}") for c in text
    )


def _warn(warnings: list[str], message: str) -> None:
    logger.warning("%s", message)
    warnings.append(message)


HINTS_PER_FILE = 20
"""Unknown op types of one file that get a 'did you mean' hint (each costs a fuzzy search over all op
types); later ones are reported without, so a file of 50k unknown entries is read in linear time."""


def _unknown_op_type(where: str, op_type: str, known: Collection[str], warnings: list[str] | None = None) -> str:
    hint = ""
    if warnings is None or len(warnings) < HINTS_PER_FILE:
        close = difflib.get_close_matches(op_type, list(known), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"{where}: unknown op type '{op_type}'{hint}"


def _read_text(path: str) -> str:
    from ascend_mp.fileio import read_input

    data = read_input(path, stdin=False)  # bounded; a device refused, a named pipe waited for
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise AscendError(f"{path}: cannot read file: {e}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as text-mode open() reads


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(line number, 1-based column, stripped entry) for each line that is not blank or a ``#`` comment.

    Lines end at ``\\n`` only (``\\r\\n`` too): a form feed, vertical tab or U+2028 inside a line is not a
    line break, so line numbers are those of every editor and of ``grep -n``."""
    for lineno, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        entry = raw.strip()
        if entry and not entry.startswith("#"):
            yield lineno, len(raw) - len(raw.lstrip()) + 1, entry


# ---------------------------------------------------------------------------------------------------- modify_mixlist

_KINDS = ("black", "gray", "white")  # to-add precedence when lists conflict: the more precise list wins
_LIST_KEYS = {f"{kind}-list": kind for kind in ("black", "white", "gray")}
_ACTIONS = ("to-add", "to-remove")


@dataclass(frozen=True)
class Mixlist:
    """A parsed ``--modify_mixlist`` file.

    ``adds`` maps an op type to the list it is added to (black beats gray beats white when several add it);
    ``removes`` maps an op type to the lists it is removed from. An op that is added somewhere ignores removals.
    """

    adds: dict[str, str]
    removes: dict[str, frozenset[str]]
    path: str
    warnings: list[str]
    _warned: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    def list_kind(self, op_type: str, library_kind: str) -> tuple[str, str]:
        """(effective kind, reason) given the op library's kind ("white"/"black"/"gray").

        ``to-remove`` only acts when the op is on that list in the library; otherwise it warns (once per op).
        """
        if library_kind not in _KINDS:
            raise ValueError(f"library kind must be one of {_KINDS}, got {library_kind!r}")
        if op_type in self.adds:
            kind = self.adds[op_type]
            return kind, f"modify_mixlist: to-add {kind}-list"
        removed_from = self.removes.get(op_type, frozenset())
        if op_type not in self._warned:
            self._warned.add(op_type)
            for kind in sorted(removed_from - {library_kind}):
                _warn(self.warnings, f"{self.path}: '{op_type}' is not on the {kind}-list; to-remove has no effect")
        if library_kind in removed_from:
            return "gray", f"modify_mixlist: to-remove {library_kind}-list"
        return library_kind, "library"


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value)


class _DuplicateKey(Exception):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _load_json(path: str) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as e:
        raise AscendError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except _DuplicateKey as e:
        raise AscendError(f"{path}: invalid JSON: duplicate key '{e.args[0]}'") from None
    except RecursionError:
        raise AscendError(f"{path}: invalid JSON: nested too deeply") from None


def load_mixlist(path: str | os.PathLike[str], known_op_types: Collection[str] | None = None) -> Mixlist:
    """Parse a CANN ``--modify_mixlist`` JSON file; unknown op types (if ``known_op_types``) are warnings."""
    path = os.fspath(path)
    data = _load_json(path)
    if not isinstance(data, dict):
        raise AscendError(f"{path}: expected a JSON object at top level, got {_describe(data)}")

    def fail(key: str, message: str) -> AscendError:
        return AscendError(f"{path}: key '{key}': {message}")

    warnings: list[str] = []
    # (kind, action) -> op type -> key path of its first occurrence
    entries: dict[tuple[str, str], dict[str, str]] = {}
    for list_key, body in data.items():
        if list_key not in _LIST_KEYS:
            raise fail(list_key, "unknown key; expected 'black-list', 'white-list' or 'gray-list'")
        if not isinstance(body, dict):
            raise fail(list_key, f"expected an object with 'to-add' and/or 'to-remove', got {_describe(body)}")
        for action, ops in body.items():
            action_key = f"{list_key}.{action}"
            if action not in _ACTIONS:
                raise fail(action_key, "unknown key; expected 'to-add' or 'to-remove'")
            if not isinstance(ops, list):
                raise fail(action_key, f"expected an array of op types, got {_describe(ops)}")
            for i, op in enumerate(ops):
                key = f"{action_key}[{i}]"
                if not isinstance(op, str):
                    raise fail(key, f"expected a string op type, got {_describe(op)}")
                if not _is_op_type(op):
                    raise fail(key, f"expected an op type (letters, digits, '_'), got {_describe(op)}")
                if known_op_types is not None and op not in known_op_types:
                    _warn(warnings, _unknown_op_type(f"{path}: key '{key}'", op, known_op_types, warnings))
                entries.setdefault((_LIST_KEYS[list_key], action), {}).setdefault(op, key)

    adds: dict[str, str] = {}
    added_at: dict[str, str] = {}
    removes: dict[str, set[str]] = {}
    for kind in _KINDS:
        to_add = entries.get((kind, "to-add"), {})
        to_remove = entries.get((kind, "to-remove"), {})
        for op, key in to_add.items():
            if op in to_remove:
                raise AscendError(f"{path}: '{op}' is in both '{key}' and '{to_remove[op]}'")
            if op in adds:
                _warn(warnings, f"{path}: '{op}' is in both '{added_at[op]}' and '{key}'; {adds[op]}-list wins")
                continue
            adds[op], added_at[op] = kind, key
        for op in to_remove:
            removes.setdefault(op, set()).add(kind)
    return Mixlist(adds, {op: frozenset(kinds) for op, kinds in removes.items()}, path, warnings)


# ---------------------------------------------------------------------------------------------------- keep_dtype


@dataclass(frozen=True)
class KeepDtype:
    """A parsed ``--keep_dtype`` file: ops (by ``name`` attribute or by type) that keep their original dtype."""

    names: frozenset[str]
    op_types: frozenset[str]
    path: str
    warnings: list[str]

    def matches(self, op_name: str | None, op_type: str) -> bool:
        return (op_name is not None and op_name in self.names) or op_type in self.op_types


def load_keep_dtype(path: str | os.PathLike[str], known_op_types: Collection[str] | None = None) -> KeepDtype:
    """Parse a CANN ``--keep_dtype`` file; unknown ``OpType::`` types (if ``known_op_types``) are warnings."""
    path = os.fspath(path)
    names: set[str] = set()
    op_types: set[str] = set()
    warnings: list[str] = []
    for lineno, _, entry in _lines(_read_text(path)):
        if entry.startswith(_OPTYPE_PREFIX):
            op_type = entry[len(_OPTYPE_PREFIX) :]
            if not _is_op_type(op_type):
                raise AscendError(f"{path}:{lineno}: expected an op name or OpType::<type>, got '{_shown(entry)}'")
            if known_op_types is not None and op_type not in known_op_types:
                _warn(warnings, _unknown_op_type(f"{path}:{lineno}", op_type, known_op_types, warnings))
            op_types.add(op_type)
        elif _is_op_name(entry):
            names.add(entry)
        else:
            raise AscendError(f"{path}:{lineno}: expected an op name or OpType::<type>, got '{_shown(entry)}'")
    return KeepDtype(frozenset(names), frozenset(op_types), path, warnings)


# ---------------------------------------------------------------------------------------------------- customize_dtypes

_SECTIONS = ("InputDtype", "OutputDtype")
_DTYPE_CHOICES = ", ".join(CANN_DTYPES)


@dataclass(frozen=True)
class KernelDtypes:
    """The kernel dtypes (MLIR names) that one ``--customize_dtypes`` line asks for."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class CustomizeDtypes:
    """A parsed ``--customize_dtypes`` file; an entry by op name beats one by op type."""

    by_name: dict[str, KernelDtypes]
    by_type: dict[str, KernelDtypes]
    path: str
    warnings: list[str]

    def lookup(self, op_name: str | None, op_type: str) -> KernelDtypes | None:
        if op_name is not None and op_name in self.by_name:
            return self.by_name[op_name]
        return self.by_type.get(op_type)


def _parse_sections(where: str, lineno: int, spec: str, column: int) -> KernelDtypes:
    """Parse ``InputDtype:a,b,OutputDtype:c`` (``;`` or ``,`` between items); ``column`` is where spec starts."""
    dtypes: dict[str, list[str]] = {}
    current: list[str] | None = None
    for piece in re.split(r"[;,]", spec):
        start, column = column, column + len(piece) + 1
        col = start + len(piece) - len(piece.lstrip())
        token = piece.strip()
        if ":" in token:
            section, _, token = (part.strip() for part in token.partition(":"))
            if section not in _SECTIONS:
                raise AscendError(
                    f"{where}:{col}: expected InputDtype:<dtypes> or OutputDtype:<dtypes>, got '{piece.strip()}'"
                )
            if section in dtypes:
                raise AscendError(f"{where}:{col}: {section} given twice")
            current = dtypes[section] = []
        elif current is None:
            raise AscendError(f"{where}:{col}: expected InputDtype:<dtypes> or OutputDtype:<dtypes>, got '{token}'")
        dtype = parse_dtype(token)
        if dtype is None:
            col = start + len(piece.rstrip()) - len(token)
            raise AscendError(f"{where}:{col}: expected a dtype (one of {_DTYPE_CHOICES}), got '{token}'")
        current.append(dtype)
    for section in _SECTIONS:
        if section not in dtypes:
            raise AscendError(f"{where}: missing {section}:<dtypes>")
    return KernelDtypes(tuple(dtypes["InputDtype"]), tuple(dtypes["OutputDtype"]), lineno)


def load_customize_dtypes(
    path: str | os.PathLike[str], known_op_types: Collection[str] | None = None
) -> CustomizeDtypes:
    """Parse a CANN ``--customize_dtypes`` file; unknown ``OpType::`` types (if ``known_op_types``) are warnings."""
    path = os.fspath(path)
    by_name: dict[str, KernelDtypes] = {}
    by_type: dict[str, KernelDtypes] = {}
    warnings: list[str] = []
    for lineno, column, entry in _lines(_read_text(path)):
        where = f"{path}:{lineno}"
        if entry.startswith(_OPTYPE_PREFIX):
            key, sep, spec = entry[len(_OPTYPE_PREFIX) :].partition(":")
            table, valid, label = by_type, _is_op_type(key), f"{_OPTYPE_PREFIX}{key}"
            spec_column = column + len(_OPTYPE_PREFIX) + len(key) + 1
        else:
            key, sep, spec = entry.partition("::")
            table, valid, label = by_name, _is_op_name(key), key
            spec_column = column + len(key) + 2
        if not sep:
            raise AscendError(
                f"{where}: expected '<op name>::InputDtype:<dtypes>,OutputDtype:<dtypes>' or "
                f"'OpType::<type>:InputDtype:<dtypes>,OutputDtype:<dtypes>', got '{_shown(entry)}'"
            )
        if not valid:
            raise AscendError(
                f"{where}: expected an op name or OpType::<type> before the dtypes, got '{_shown(label)}'"
            )
        if key in table:
            raise AscendError(f"{where}: '{label}' is already given on line {table[key].line}")
        if table is by_type and known_op_types is not None and key not in known_op_types:
            _warn(warnings, _unknown_op_type(where, key, known_op_types, warnings))
        table[key] = _parse_sections(where, lineno, spec, spec_column)
    return CustomizeDtypes(by_name, by_type, path, warnings)
