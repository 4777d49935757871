"""CANN ATC-style precision flags, shared by `ascend-opt` and `ascend-run`.

Each precision flag maps onto a field of the `ascend-precision` pass: the flags, their help and choices are the
metadata of :class:`ascend_mp.precision_options.PrecisionOptions` (stated there once).
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from dataclasses import fields
from typing import Any

from ascend_mp.implmode import SELECT_IMPLMODES
from ascend_mp.precision_options import PrecisionOptions, option_flags

ATC_FLAGS = option_flags()
"""ATC flag -> `ascend-precision` pass field, from the metadata of :class:`PrecisionOptions`' fields."""


class _Once(argparse.Action):
    """Store a flag's value; giving the flag twice (not 'the last one wins') or with an empty value is a usage error."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = namespace.__dict__.setdefault("_atc_given", set())
        if self.dest in seen:
            parser.error(f"{option_string or self.dest} given twice")
        if isinstance(values, str) and not values.strip():  # `--amp_level=`: no flag means "nothing" by an empty value
            parser.error(f"{option_string or self.dest} expects a value, got an empty one")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


def _soc(text: str) -> str:
    from ascend_mp.errors import AscendError
    from ascend_mp.opinfo import canonical_soc

    try:
        return canonical_soc(text)
    except AscendError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_precision_arguments(
    group: Any, skip: Collection[str] = (), check_soc: bool = True, only: Collection[str] | None = None
) -> None:
    """Register a flag for each :class:`PrecisionOptions` field that has one (those in `only` if given, but the flags
    in `skip`), in field order, with the help and choices of the field's metadata (`check_soc`: `--soc_version` is
    checked as it is parsed, a usage error; else when the pass loads its library)."""
    for field in fields(PrecisionOptions):
        flag = field.metadata.get("flag")
        if flag is None or flag in skip or (only is not None and flag not in only):
            continue
        settings = dict(field.metadata["argparse"])
        if field.name == "soc" and check_soc:
            settings["type"] = _soc
        if flag == _REPORT:
            group.add_argument("--precision-report", "--precision_report", dest=_REPORT, action=_Once, **settings)
        else:
            group.add_argument(*spellings(flag), dest=flag, action=_Once, **settings)


def spellings(flag: str) -> tuple[str, ...]:
    """An ATC flag as ATC spells it (`--precision_mode`) and with hyphens (`--precision-mode`), in every tool."""
    hyphens = flag.replace("_", "-")
    return (f"--{flag}",) if hyphens == flag else (f"--{flag}", f"--{hyphens}")


def add_atc_arguments(parser: argparse.ArgumentParser, title: str, report: bool = True) -> None:
    """Register the ATC flags (`--precision-report` only where a tool writes the report)."""
    atc = parser.add_argument_group(title)
    add_precision_arguments(atc, skip=(_REPORT,))
    atc.add_argument(
        *spellings("op_select_implmode"),
        choices=SELECT_IMPLMODES,
        action=_Once,
        help="operator implementation mode (the ascend-impl-mode pass)",
    )
    atc.add_argument(
        *spellings("optypelist_for_implmode"),
        metavar="A,B,...",
        action=_Once,
        help="op types --op_select_implmode applies to",
    )
    atc.add_argument(
        *spellings("op_precision_mode"),
        metavar="INI",
        action=_Once,
        help="implementation mode per op type / node name (OpType=mode lines, [ByOpType], [ByNodeName])",
    )
    if report:
        add_precision_arguments(atc, only=(_REPORT,))


_REPORT = "precision_report"
"""The report's flag (also spelled `--precision-report`), registered last and only where a tool writes it."""


def precision_options(args: argparse.Namespace, only: Collection[str] | None = None) -> dict[str, Any]:
    """The `ascend-precision` pass fields the given flags set (empty: no precision pass); `only`: of these flags (a
    tool that registered some of them, `add_precision_arguments(only=...)`, may have other arguments of their names)."""
    return {
        field: getattr(args, flag)
        for flag, field in ATC_FLAGS.items()
        if (only is None or flag in only) and getattr(args, flag, None) is not None
    }


IMPL_MODE_FLAGS = {
    # flag: ascend-impl-mode pass field
    "op_select_implmode": "op_select_implmode",
    "optypelist_for_implmode": "optypelist_for_implmode",
    "op_precision_mode": "op_precision_mode",
}


def impl_mode_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `ascend-impl-mode` pass fields the given flags set (empty: no impl-mode pass)."""
    return {
        field: getattr(args, flag) for flag, field in IMPL_MODE_FLAGS.items() if getattr(args, flag, None) is not None
    }
