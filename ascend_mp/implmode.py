"""CANN's operator implementation modes: `--op_precision_mode`, `--op_select_implmode`,
`--optypelist_for_implmode` (ATC), as data and parsers (docs/design.md §5).

- ``--op_precision_mode FILE``: an ini file of ``OpType=mode`` lines, optionally under
  ``[ByOpType]`` and ``[ByNodeName]`` sections (``node name=mode``); a node name entry beats
  an op type entry. Modes: :data:`IMPL_MODES`.
- ``--op_select_implmode MODE``: ``high_precision`` / ``high_performance`` apply to the ops that
  have both implementations (:data:`DUAL_IMPL_OPS`, CANN's ``high_*.ini`` lists); the
  ``_for_all`` forms apply to every op.
- ``--optypelist_for_implmode A,B``: the op types `--op_select_implmode` (high_precision or
  high_performance) applies to, instead of its built-in list; it needs `--op_select_implmode`.

As in CANN, `--op_precision_mode` excludes the other two: given together, only the ini file
takes effect (a warning says so). Errors are one line naming the file and line (``path:LINE: ...``);
unknown op types are warnings (logged on ``ascend_mp`` and kept in ``warnings``). Pure Python.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field

from ascend_mp.config import _is_op_name, _is_op_type, _lines, _read_text, _shown, _unknown_op_type, _warn
from ascend_mp.errors import AscendError

DEFAULT_MODE = "high_precision"
"""What an op without an `impl_mode` runs (today's fp32-internals kernels)."""

IMPL_MODES = (
    "high_precision",
    "high_performance",
    "super_performance",
    "keep_fp16",
    "support_out_of_bound_index",
    "enable_float_32_execution",
    "enable_hi_float_32_execution",
)
"""The modes an `--op_precision_mode` ini file may give (CANN's documented values)."""

LOW_INTERNAL_MODES = frozenset({"high_performance", "super_performance", "keep_fp16"})
"""Modes the interpreter models as computing the intermediate steps in the op's (fp16/bf16) dtype;
the other modes are recorded but compute as high_precision."""

SELECT_IMPLMODES = ("high_precision", "high_performance", "high_precision_for_all", "high_performance_for_all")
"""`--op_select_implmode` values."""

DUAL_IMPL_OPS = frozenset({"Exp", "Gelu", "Log", "LayerNorm", "Sigmoid", "SoftmaxV2", "Sqrt", "Tanh"})
"""The op types with both a high-precision and a high-performance kernel (the ones whose
high_performance form the interpreter models); `--op_select_implmode` without `_for_all` applies to these."""

SECTIONS = {"ByOpType": "type", "ByNodeName": "name"}


@dataclass(frozen=True)
class OpPrecisionMode:
    """A parsed `--op_precision_mode` ini file: mode per op type and per node name."""

    by_type: dict[str, str]
    by_name: dict[str, str]
    path: str
    warnings: list[str] = field(default_factory=list[str])


def load_op_precision_mode(
    path: str | os.PathLike[str], known_op_types: Collection[str] | None = None
) -> OpPrecisionMode:
    """Parse an `--op_precision_mode` ini file (lines before any section are `[ByOpType]` entries)."""
    path = os.fspath(path)
    text = _read_text(path)
    tables: dict[str, dict[str, str]] = {"type": {}, "name": {}}
    seen: dict[tuple[str, str], int] = {}
    warnings: list[str] = []
    section = "type"
    for lineno, _, entry in _lines(text):
        where = f"{path}:{lineno}"
        if entry.startswith(";"):
            continue
        if entry.startswith("["):
            name = entry[1:-1].strip() if entry.endswith("]") else None
            if name not in SECTIONS:
                raise AscendError(f"{where}: unknown section '{_shown(entry)}' (expected [ByOpType] or [ByNodeName])")
            section = SECTIONS[name]
            continue
        key, sep, value = (part.strip() for part in entry.partition("="))
        if not sep or not key or not value:
            what = "OpType=mode" if section == "type" else "node name=mode"
            raise AscendError(f"{where}: malformed line '{_shown(entry)}' (expected {what})")
        valid = _is_op_type(key) if section == "type" else _is_op_name(key)
        if not valid:
            raise AscendError(
                f"{where}: '{_shown(key)}' is not a valid {'op type' if section == 'type' else 'node name'}"
            )
        if value not in IMPL_MODES:
            raise AscendError(f"{where}: unknown mode '{_shown(value)}' for '{key}' (modes: {', '.join(IMPL_MODES)})")
        if (section, key) in seen:
            raise AscendError(f"{where}: duplicate key '{key}' (first given on line {seen[section, key]})")
        seen[section, key] = lineno
        tables[section][key] = value
        if section == "type" and known_op_types is not None and key not in known_op_types:
            _warn(warnings, _unknown_op_type(where, key, known_op_types, warnings))
    return OpPrecisionMode(tables["type"], tables["name"], path, warnings)


def parse_optypelist(text: str, known_op_types: Collection[str] | None = None) -> tuple[frozenset[str], list[str]]:
    """The op types of `--optypelist_for_implmode` (a comma list) and warnings for unknown ones."""
    types: list[str] = []
    warnings: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if not _is_op_type(item):
            raise AscendError(
                f"--optypelist_for_implmode: '{_shown(item)}' is not an op type (expected a comma list like Exp,Sqrt)"
            )
        types.append(item)
        if known_op_types is not None and item not in known_op_types:
            _warn(warnings, _unknown_op_type("--optypelist_for_implmode", item, known_op_types, warnings))
    return frozenset(types), warnings


@dataclass(frozen=True)
class ImplModeConfig:
    """Which implementation mode each op gets (:meth:`mode_for`)."""

    select: str | None = None
    optypes: frozenset[str] | None = None
    precision: OpPrecisionMode | None = None
    warnings: list[str] = field(default_factory=list[str])

    def mode_for(self, op_type: str, name: str | None) -> str | None:
        """The op's mode, or None where no option speaks about it (the op keeps what it has)."""
        if self.precision is not None:
            if name is not None and name in self.precision.by_name:
                return self.precision.by_name[name]
            return self.precision.by_type.get(op_type)
        if self.select is None:
            return None
        base = self.select.removesuffix("_for_all")
        if self.optypes is not None:
            return base if op_type in self.optypes else None
        if self.select.endswith("_for_all") or op_type in DUAL_IMPL_OPS:
            return base
        return None


def load_impl_modes(
    select: str | None = None,
    optypelist: str | None = None,
    precision_file: str | None = None,
    known_op_types: Collection[str] | None = None,
) -> ImplModeConfig:
    """Check and load the three options (the ATC flags' rules; errors are one line)."""
    if select is not None and select not in SELECT_IMPLMODES:
        raise AscendError(
            f"--op_select_implmode: unknown mode '{_shown(select)}' (modes: {', '.join(SELECT_IMPLMODES)})"
        )
    if optypelist is not None and select is None:
        raise AscendError("--optypelist_for_implmode needs --op_select_implmode (high_precision or high_performance)")
    if optypelist is not None and select is not None and select.endswith("_for_all"):
        raise AscendError(
            f"--optypelist_for_implmode goes with --op_select_implmode high_precision or high_performance, not {select}"
        )
    warnings: list[str] = []
    optypes = None
    if optypelist is not None:
        optypes, warnings = parse_optypelist(optypelist, known_op_types)
    precision = None
    if precision_file is not None:
        precision = load_op_precision_mode(precision_file, known_op_types)
        warnings += precision.warnings
        if select is not None:
            _warn(
                warnings,
                f"{precision_file}: --op_precision_mode is given, so --op_select_implmode and "
                "--optypelist_for_implmode take no effect (as in CANN)",
            )
    return ImplModeConfig(select, optypes, precision, warnings)
