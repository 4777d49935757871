"""The operator information library: which kernels each op has, and its mixed-precision list.

Tables use CANN's `aic-<soc>-ops-info.json` format::

    "MatMulV2": {
        "input0": {"name": "x1", "dtype": "float16,float16,float,float"},
        "input1": {"name": "x2", "dtype": "float16,float16,float,float"},
        "output0": {"name": "y", "dtype": "float16,float,float,float"},
        "precision_reduce": {"flag": "true"}
    }

Column i of every input and output together is one kernel. `precision_reduce`
true puts the op on the white list, false on the black list, absent on the gray
list. Ops with `dynamicFormat` may state no dtypes.

The project ships, per SoC, an AI Core table (`data/aic-<soc>-ops-info.json`,
facts copied from CANN's real table for the dialect's ops, with the dtype columns
of `dynamicFormat` ops stated) and an AI CPU table (`data/aicpu-<soc>-ops-info.json`,
same format: the fp32 fallback kernels). A user table (`--op_info PATH`) overrides
the built-in entry of every op it names; where a user entry states no dtypes
(dynamicFormat), the built-in kernels stay and only its list kind is taken.

Kernels are mapped onto the dialect by input/output *name*: the dialect's operand
names are CANN's input names, so a table input the dialect models as an attribute
(e.g. ReduceSum's `axes`) is dropped, and duplicate columns collapse.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from xdsl.ir import Operation
from xdsl.irdl import OptionalDef

from ascend_mp.dialects.ascend import (
    OPS_BY_TYPE,
    AscendOp,
    CapsAttr,
    Kernel,
    ListKind,
    ListKindAttr,
    cann_inputs,
    cann_outputs,
    op_type,
)
from ascend_mp.dtypes import CANN_NAMES
from ascend_mp.errors import AscendError

SOCS = ("ascend910", "ascend910b")
"""SoCs with a built-in table."""

SOC_VERSIONS: dict[str, str] = {
    **{
        name: "ascend910"
        for name in (
            "Ascend910",
            "Ascend910A",
            "Ascend910B",
            "Ascend910ProA",
            "Ascend910ProB",
            "Ascend910PremiumA",
            "Ascend310P1",
            "Ascend310P3",
        )
    },
    **{
        name: "ascend910b"
        for name in (
            "Ascend910B1",
            "Ascend910B2",
            "Ascend910B2C",
            "Ascend910B3",
            "Ascend910B4",
            "Ascend910B4-1",
            "Ascend910_9391",
            "Ascend910_9392",
            "Ascend910_9381",
            "Ascend910_9382",
            "Ascend910_9372",
            "Ascend910_9362",
        )
    },
}
"""CANN `--soc_version` names -> the built-in table used. Ascend910A/B/ProA/ProB/PremiumA are the
first-generation Ascend 910 (no bf16); Ascend910B1-B4 and the Ascend910_93xx parts are the 910B
generation (bf16). Ascend310P has no table of its own: it uses the first-generation table (fp16/fp32
kernels, no bf16), an approximation."""

OTHER_CANN_DTYPES = frozenset(
    {
        "int4",
        "uint1",
        "complex32",
        "complex64",
        "complex128",
        "string",
        "resource",
        "variant",
        "qint8",
        "quint8",
        "qint16",
        "quint16",
        "qint32",
        "dual",
        "dual_sub_int8",
        "dual_sub_uint8",
        "hifloat8",
        "float8_e5m2",
        "float8_e4m3fn",
        "float8_e8m0",
        "float4_e2m1",
        "float4_e1m2",
        "int2",
        "uint2",
    }
)
"""CANN dtype names the project does not model: their kernel columns are dropped (any other name is an error)."""


def canonical_soc(name: str) -> str:
    """The built-in table (`ascend910`, `ascend910b`) for a `--soc_version` name; an unknown name lists the accepted ones."""
    if name in SOCS:
        return name
    if name in SOC_VERSIONS:
        return SOC_VERSIONS[name]
    accepted = ", ".join([*SOC_VERSIONS, *SOCS])
    return _fail_soc(name, accepted)


def _fail_soc(name: str, accepted: str) -> str:
    close = difflib.get_close_matches(name, [*SOC_VERSIONS, *SOCS], n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise AscendError(f"unknown soc_version '{name}'{hint}; accepted: {accepted}")


@dataclass(frozen=True)
class TableEntry:
    """One op of a CANN table, as read: dtype columns per input/output name."""

    inputs: dict[str, tuple[str | None, ...] | None]
    outputs: dict[str, tuple[str | None, ...] | None]
    list_kind: ListKind
    dynamic_format: bool
    problems: tuple[str, ...] = ()
    """What is wrong with the entry (duplicate port names, unknown dtype names): an error when a dialect op uses it."""

    @property
    def has_dtypes(self) -> bool:
        return any(v is not None for v in (*self.inputs.values(), *self.outputs.values()))


@dataclass(frozen=True)
class OpInfo:
    """What the library says of one dialect op."""

    op_type: str
    kernels: tuple[Kernel, ...]
    list_kind: ListKind
    caps: CapsAttr = field(compare=False)
    list_attr: ListKindAttr = field(compare=False)


# --------------------------------------------------------------------------------------
# Reading tables
# --------------------------------------------------------------------------------------


def read_table(path: str | Path) -> dict[str, TableEntry]:
    """Read and validate a CANN ops-info table (a file, or a folder whose `.json` files are read into one
    table); errors name the file, op and key."""
    if Path(path).is_dir():
        return read_table_dir(path)
    from ascend_mp.fileio import check_input_file

    check_input_file(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a UTF-8 BOM is accepted, as in every config file
    except (OSError, UnicodeDecodeError) as e:
        raise AscendError(f"{path}: cannot read op-info table: {getattr(e, 'strerror', None) or e}") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise AscendError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise AscendError(f"{path}: invalid JSON: nested too deeply") from None
    return parse_table(raw, str(path))


def read_table_dir(folder: str | Path) -> dict[str, TableEntry]:
    """Every `*.json` table of `folder` (sorted by name) as one table, as CANN reads its operator library
    folder; one op type in two files with different entries is an error naming both files."""
    files = sorted(p for p in Path(folder).iterdir() if p.suffix == ".json" and p.is_file())
    if not files:
        raise AscendError(f"{folder}: no .json op-info table in this folder")
    merged: dict[str, TableEntry] = {}
    origin: dict[str, Path] = {}
    for path in files:
        for op, entry in read_table(path).items():
            if op in merged and merged[op] != entry:
                raise AscendError(f"{path}: op '{op}' conflicts with its entry in {origin[op]}")
            merged.setdefault(op, entry)
            origin.setdefault(op, path)
    return merged


def parse_table(raw: Any, source: str) -> dict[str, TableEntry]:
    if not isinstance(raw, dict):
        raise AscendError(f"{source}: expected a JSON object mapping op types to entries")
    return {op: _parse_entry(op, entry, source) for op, entry in raw.items()}


def _parse_entry(op: str, entry: Any, source: str) -> TableEntry:
    def fail(key: str, expected: str) -> AscendError:
        return AscendError(f"{source}: op '{op}', key '{key}': {expected}")

    if not isinstance(entry, dict):
        raise fail(op, "expected an object")
    inputs: dict[str, tuple[str | None, ...] | None] = {}
    outputs: dict[str, tuple[str | None, ...] | None] = {}
    port_keys: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    width: tuple[str, int] | None = None
    for key in sorted(entry, key=_port_order):
        if not (key.startswith("input") or key.startswith("output")):
            continue
        if not key.removeprefix("input").removeprefix("output").isdigit():
            continue
        port = entry[key]
        if not isinstance(port, dict):
            raise fail(key, "expected an object with 'name' and 'dtype'")
        name = port.get("name")
        if not isinstance(name, str) or not name:
            raise fail(f"{key}.name", "expected a non-empty string")
        dtypes: tuple[str | None, ...] | None = None
        if "dtype" in port:
            text = port["dtype"]
            if not isinstance(text, str) or not text.strip():
                raise fail(f"{key}.dtype", "expected a comma-separated string of dtype names")
            names = [t.strip() for t in text.split(",")]
            for bad in (n for n in names if n not in CANN_NAMES and n not in OTHER_CANN_DTYPES):
                close = difflib.get_close_matches(bad, list(CANN_NAMES), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                problems.append(f"{source}: op '{op}', key '{key}.dtype': unknown dtype '{bad}'{hint}")
                break
            dtypes = tuple(CANN_NAMES.get(n) for n in names)
            if width is None:
                width = (key, len(dtypes))
            elif width[1] != len(dtypes):
                raise fail(f"{key}.dtype", f"has {len(dtypes)} dtype columns, but '{width[0]}.dtype' has {width[1]}")
        side = "input" if key.startswith("input") else "output"
        if (side, name) in port_keys:
            problems.append(
                f"{source}: op '{op}', key '{key}.name': {side} name '{name}' is also the name of "
                f"'{port_keys[(side, name)]}'"
            )
        port_keys[(side, name)] = key
        (inputs if side == "input" else outputs)[name] = dtypes
    kind = ListKind.GRAY
    if "precision_reduce" in entry:
        pr = entry["precision_reduce"]
        flag = pr.get("flag") if isinstance(pr, dict) else None
        if flag not in ("true", "false"):
            raise fail("precision_reduce.flag", 'expected "true" or "false"')
        kind = ListKind.WHITE if flag == "true" else ListKind.BLACK
    dyn = entry.get("dynamicFormat")
    dynamic = isinstance(dyn, dict) and dyn.get("flag") == "true"
    return TableEntry(inputs, outputs, kind, dynamic, tuple(problems))


def _port_order(key: str) -> tuple[int, int, str]:
    for i, prefix in enumerate(("input", "output")):
        rest = key.removeprefix(prefix)
        if rest != key and rest.isdigit():
            return (i, int(rest), "")
    return (2, 0, key)


# --------------------------------------------------------------------------------------
# Mapping table entries onto the dialect
# --------------------------------------------------------------------------------------


def kernels_for(cls: type[AscendOp], entry: TableEntry, engine: str, source: str) -> tuple[Kernel, ...]:
    """The kernel signatures of dialect op `cls` from a table entry (empty if it states no dtypes)."""
    op = cls.name.removeprefix("ascend.")
    if entry.problems:
        raise AscendError(entry.problems[0])
    if not entry.has_dtypes:
        return ()
    optional = {name for name, d in cls.get_irdl_definition().operands if isinstance(d, OptionalDef)}
    columns: list[list[tuple[str | None, ...] | None]] = []
    for names, ports, what in ((cann_inputs(cls), entry.inputs, "input"), (cann_outputs(cls), entry.outputs, "output")):
        col: list[tuple[str | None, ...] | None] = []
        for name in names:
            if name not in ports or ports[name] is None:
                if name in optional:
                    col.append(None)
                    continue
                raise AscendError(
                    f"{source}: op '{op}': no {what} named '{name}' with a dtype list (the dialect's {what}s are {', '.join(names)})"
                )
            col.append(ports[name])
        columns.append(col)
    ins, outs = columns
    width = len(next(c for c in (*ins, *outs) if c is not None))
    kernels: list[Kernel] = []
    for i in range(width):
        out = tuple(c[i] if c is not None else None for c in outs)
        # An optional input the table does not describe takes the first output's dtype (CANN's bias rule).
        inp = tuple(c[i] if c is not None else out[0] for c in ins)
        if None in inp or None in out:
            continue  # a dtype the project does not model
        kernel = Kernel(inp, out, engine)  # pyright: ignore[reportArgumentType]  # `None in inp or None in out` skipped above
        if kernel not in kernels:
            kernels.append(kernel)
    return tuple(kernels)


@dataclass
class OpLibrary:
    """Kernels and list kinds for every dialect op, for one SoC (optionally with a user table)."""

    soc: str
    source: str
    ops: dict[str, OpInfo]

    def info(self, op_type_: str) -> OpInfo:
        try:
            return self.ops[op_type_]
        except KeyError:
            raise AscendError(f"{self.source}: no entry for op type '{op_type_}'") from None

    def kernels(self, op: Operation) -> tuple[Kernel, ...]:
        """The op's kernels: its own `caps` attribute if it has one, else the library's."""
        caps = op.properties.get("caps")
        if isinstance(caps, CapsAttr):
            return caps.data
        return self.info(op_type(op)).kernels

    def list_kind(self, op: Operation) -> ListKind:
        """The op's list kind: its own `list` attribute if it has one, else the library's."""
        kind = op.properties.get("list")
        if isinstance(kind, ListKindAttr):
            return kind.data
        return self.info(op_type(op)).list_kind


def _make_info(op: str, kernels: tuple[Kernel, ...], kind: ListKind) -> OpInfo:
    return OpInfo(op, kernels, kind, CapsAttr(kernels), ListKindAttr(kind))


def _data_path(name: str) -> Path:
    return Path(str(resources.files("ascend_mp.opinfo") / "data" / name))


def builtin_library(soc: str = "ascend910") -> OpLibrary:
    """The built-in library of a SoC (AI Core table plus AI CPU fallback kernels); `soc` may be a CANN
    `--soc_version` name (`Ascend910B1`)."""
    return _builtin_library(canonical_soc(soc))


@cache
def _builtin_library(soc: str) -> OpLibrary:
    aic_path, cpu_path = _data_path(f"aic-{soc}-ops-info.json"), _data_path(f"aicpu-{soc}-ops-info.json")
    aic, cpu = read_table(aic_path), read_table(cpu_path)
    ops: dict[str, OpInfo] = {}
    for name, cls in OPS_BY_TYPE.items():
        if name not in aic:
            raise AscendError(f"{aic_path}: built-in table lacks dialect op '{name}'")
        kernels = kernels_for(cls, aic[name], "aicore", str(aic_path))
        if name in cpu:
            kernels += kernels_for(cls, cpu[name], "aicpu", str(cpu_path))
        ops[name] = _make_info(name, kernels, aic[name].list_kind)
    return OpLibrary(soc, str(aic_path), ops)


def overlay(base: OpLibrary, table: Mapping[str, TableEntry], source: str) -> OpLibrary:
    """`base` with every dialect op that `table` names taken from `table` (AI CPU kernels stay)."""
    ops = dict(base.ops)
    for name, entry in table.items():
        cls = OPS_BY_TYPE.get(name)
        if cls is None:
            continue
        old = base.ops[name]
        kernels = kernels_for(cls, entry, "aicore", source)
        if not kernels:
            kernels = tuple(k for k in old.kernels if k.engine == "aicore")
        kernels += tuple(k for k in old.kernels if k.engine != "aicore")
        ops[name] = _make_info(name, kernels, entry.list_kind)
    return OpLibrary(base.soc, source, ops)


_loaded: dict[tuple[str, str | None, int], OpLibrary] = {}


def load_library(soc: str = "ascend910", op_info: str | None = None) -> OpLibrary:
    """The library for `soc`, overlaid with the user table (a file or a folder of tables) at `op_info` if
    given (cached per file)."""
    soc = canonical_soc(soc)
    key = (soc, op_info, _stamp(op_info) if op_info else 0)
    if key not in _loaded:
        base = builtin_library(soc)
        _loaded[key] = base if op_info is None else overlay(base, read_table(op_info), op_info)
    return _loaded[key]


def _stamp(op_info: str) -> int:
    """A cache key that changes when the table (or a table of the folder) changes."""
    path = Path(op_info)
    try:
        if path.is_dir():
            return hash(tuple((p.name, p.stat().st_mtime_ns) for p in sorted(path.glob("*.json"))))
        return path.stat().st_mtime_ns
    except OSError:
        return 0
