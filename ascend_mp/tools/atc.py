"""CANN ATC-style precision flags, shared by `ascend-opt` and `ascend-run`.

Each flag maps onto a field of the `ascend-precision` pass.
"""

from __future__ import annotations

import argparse
from typing import Any

from ascend_mp.implmode import SELECT_IMPLMODES
from ascend_mp.modes import V1_MODES, V2_MODES

ATC_FLAGS = {
    # flag: precision pass field
    "precision_mode": "mode",
    "precision_mode_v2": "mode_v2",
    "modify_mixlist": "modify_mixlist",
    "keep_dtype": "keep_dtype",
    "customize_dtypes": "customize_dtypes",
    "soc_version": "soc",
    "op_info": "op_info",
    "precision_report": "report",
    "amp_policy": "policy",
    "amp_level": "level",
    "amp_dtype": "amp_dtype",
    "to_float": "to_float",
}


class _Once(argparse.Action):
    """Store a flag's value; giving the flag twice (not 'the last one wins') or with an empty value is a usage error."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        seen: set[str] = namespace.__dict__.setdefault("_atc_given", set())
        if self.dest in seen:
            parser.error(f"{option_string or self.dest} given twice")
        if isinstance(values, str) and not values.strip():  # `--amp_level=`: no flag means "nothing" by an empty value
            parser.error(f"{option_string or self.dest} expects a value, got an empty one")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


def _soc(text: str) -> str:
    from ascend_mp.opinfo import canonical_soc
    from ascend_mp.errors import AscendError

    try:
        return canonical_soc(text)
    except AscendError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_atc_arguments(parser: argparse.ArgumentParser, title: str, report: bool = True) -> None:
    """Register the ATC flags (`--precision-report` only where a tool writes the report)."""
    atc = parser.add_argument_group(title)
    atc.add_argument("--precision_mode", choices=V1_MODES, action=_Once, help="CANN precision mode (v1 names)")
    atc.add_argument("--precision_mode_v2", choices=V2_MODES, action=_Once, help="CANN precision mode (v2 names)")
    atc.add_argument("--modify_mixlist", metavar="JSON", action=_Once, help="mixed-precision list changes (white/black/gray-list to-add/to-remove)")
    atc.add_argument("--keep_dtype", metavar="FILE", action=_Once, help="ops (names or OpType::X, one a line) that keep their original dtype")
    atc.add_argument("--customize_dtypes", metavar="FILE", action=_Once, help="exact kernel dtypes per op name or OpType::X")
    atc.add_argument("--soc_version", metavar="SOC", type=_soc, action=_Once,
                     help="SoC whose operator library is used: CANN's names (Ascend910A, Ascend910B1, ...) or ascend910, ascend910b")
    atc.add_argument("--op_info", metavar="JSON_OR_DIR", action=_Once,
                     help="a CANN aic-<soc>-ops-info.json table, or a folder of them, overriding the built-in one")
    atc.add_argument("--amp_policy", choices=("cann", "tf", "mindspore", "torch"), action=_Once, help="precision policy (default cann: the ATC modes)")
    atc.add_argument("--amp_level", metavar="LEVEL", action=_Once, help="MindSpore amp level O0-O3 (with --amp_policy=mindspore; default O2)")
    atc.add_argument("--amp_dtype", choices=("fp16", "bf16"), action=_Once, help="low dtype of the tf, mindspore and torch policies (default fp16)")
    atc.add_argument("--to_float", metavar="FILE", action=_Once, help="to_float scopes: 'scope = dtype' lines (name prefixes, MindSpore cells)")
    atc.add_argument("--op_select_implmode", choices=SELECT_IMPLMODES, action=_Once,
                     help="operator implementation mode (the ascend-impl-mode pass)")
    atc.add_argument("--optypelist_for_implmode", metavar="A,B,...", action=_Once,
                     help="op types --op_select_implmode applies to")
    atc.add_argument("--op_precision_mode", metavar="INI", action=_Once,
                     help="implementation mode per op type / node name (OpType=mode lines, [ByOpType], [ByNodeName])")
    if report:
        atc.add_argument("--precision-report", "--precision_report", dest="precision_report", metavar="FILE",
                         action=_Once, help="write the per-op precision decisions as JSON")


def precision_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `ascend-precision` pass fields the given flags set (empty: no precision pass)."""
    return {field: getattr(args, flag) for flag, field in ATC_FLAGS.items() if getattr(args, flag, None) is not None}



IMPL_MODE_FLAGS = {
    # flag: ascend-impl-mode pass field
    "op_select_implmode": "op_select_implmode",
    "optypelist_for_implmode": "optypelist_for_implmode",
    "op_precision_mode": "op_precision_mode",
}


def impl_mode_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `ascend-impl-mode` pass fields the given flags set (empty: no impl-mode pass)."""
    return {field: getattr(args, flag) for flag, field in IMPL_MODE_FLAGS.items() if getattr(args, flag, None) is not None}
