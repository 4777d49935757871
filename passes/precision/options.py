"""The options of `ascend-precision`, stated once (docs/design.md §5, §8, §11).

:class:`PrecisionOptions` is the one dataclass of the pass's options. Every entry point reads it: the pass
(`AscendPrecisionPass` is a `PrecisionOptions`, so `-p 'ascend-precision{mode=... modify-mixlist="x.json"}'` sets
its fields), :func:`run_precision`, the ATC flags of `ascend-opt` / `ascend-run` (each field's metadata names its
flag and help) and the trainer's configuration. :meth:`PrecisionOptions.config` validates the options and loads
their files, once, into the :class:`PrecisionConfig` the pass decides with.

This module imports nothing heavy at import time (the tools build their flags from it before any IR is read).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ascend_mp.errors import AscendError
from ascend_mp.modes import DEFAULT_MODE, V1_MODES, V2_MODES, V2_TO_V1

if TYPE_CHECKING:
    from ascend_mp.config import CustomizeDtypes, KeepDtype, Mixlist
    from ascend_mp.opinfo import OpLibrary
    from ascend_mp.policies import Rule
    from ascend_mp.policies.scopes import ToFloat

logger = logging.getLogger("ascend_mp")

POLICY_NAMES = ("cann", "tf", "mindspore", "torch")
"""The `policy` values (`ascend_mp.policies.POLICIES`' keys; `test_precision_options.py` checks they agree)."""

AMP_DTYPES = ("fp16", "bf16")


def _option(doc: str, flag: str | None = None, **argparse: Any) -> Any:
    """Field metadata: `doc` (the field's meaning), `flag` (its ATC / CLI flag; None: a pass option only) and the
    `argparse` settings of the flag (`help` defaults to `doc`)."""
    return {"doc": doc, "flag": flag, "argparse": {"help": doc, **argparse}}


@dataclass(frozen=True)
class PrecisionOptions:
    """The options of the `ascend-precision` pass, as given (file paths, names); :meth:`config` validates them."""

    mode: str | None = field(default=None, metadata=_option(
        "precision_mode (v1 name); force_fp16 when neither mode is given", "precision_mode",
        choices=V1_MODES, help="CANN precision mode (v1 names)"))
    mode_v2: str | None = field(default=None, metadata=_option(
        "precision_mode_v2 (fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16)", "precision_mode_v2",
        choices=V2_MODES, help="CANN precision mode (v2 names)"))
    modify_mixlist: str | None = field(default=None, metadata=_option(
        "JSON moving op types between the black, white and gray lists (mix modes)", "modify_mixlist",
        metavar="JSON", help="mixed-precision list changes (white/black/gray-list to-add/to-remove)"))
    keep_dtype: str | None = field(default=None, metadata=_option(
        "ops (names or OpType::X, one a line) that keep their original dtype", "keep_dtype", metavar="FILE"))
    customize_dtypes: str | None = field(default=None, metadata=_option(
        "exact kernel dtypes per op name or OpType::X", "customize_dtypes", metavar="FILE"))
    soc: str = field(default="ascend910", metadata=_option(
        "SoC whose operator library is used", "soc_version", metavar="SOC",
        help="SoC whose operator library is used: CANN's names (Ascend910A, Ascend910B1, ...) or ascend910, ascend910b"))
    op_info: str | None = field(default=None, metadata=_option(
        "a CANN aic-<soc>-ops-info.json table overriding the built-in entries", "op_info", metavar="JSON_OR_DIR",
        help="a CANN aic-<soc>-ops-info.json table, or a folder of them, overriding the built-in one"))
    report: str | None = field(default=None, metadata=_option(
        "where to write the JSON precision report", "precision_report", metavar="FILE",
        help="write the per-op precision decisions as JSON"))
    policy: str | None = field(default=None, metadata=_option(
        "cann (default), tf, mindspore or torch (CLI `--amp_policy`)", "amp_policy",
        choices=POLICY_NAMES, help="precision policy (default cann: the ATC modes)"))
    level: str | None = field(default=None, metadata=_option(
        "MindSpore's amp level O0-O3 (CLI `--amp_level`; default O2)", "amp_level",
        metavar="LEVEL", help="MindSpore amp level O0-O3 (with --amp_policy=mindspore; default O2)"))
    amp_dtype: str | None = field(default=None, metadata=_option(
        "the framework policies' low dtype: fp16 (default) or bf16 (CLI `--amp_dtype`)", "amp_dtype",
        choices=AMP_DTYPES, help="low dtype of the tf, mindspore and torch policies (default fp16)"))
    tf_lists: str | None = field(default=None, metadata=_option(
        "TF list edits, `ALLOWLIST_ADD=A,B;DENYLIST_REMOVE=C` (with the environment's)"))
    to_float: str | None = field(default=None, metadata=_option(
        "`to_float` scopes: a file, or inline `scope=dtype;scope=dtype`", "to_float",
        metavar="FILE", help="to_float scopes: 'scope = dtype' lines (name prefixes, MindSpore cells)"))

    def options(self) -> PrecisionOptions:
        """These options as a plain :class:`PrecisionOptions` (the pass object is one, with more behind it)."""
        return PrecisionOptions(**self.given())

    def given(self) -> dict[str, Any]:
        """The fields that differ from their defaults (what a `-p` spec or a set of flags states)."""
        return {f.name: getattr(self, f.name) for f in fields(PrecisionOptions) if getattr(self, f.name) != f.default}

    def config(self, environ: Mapping[str, str] | None = None) -> PrecisionConfig:
        """Validate every option and load every file, before anything is rewritten (:func:`load_config`)."""
        return load_config(
            self.mode, self.mode_v2, self.modify_mixlist, self.keep_dtype, self.customize_dtypes, self.soc,
            self.op_info, self.report, policy=self.policy, level=self.level, amp_dtype_name=self.amp_dtype,
            tf_lists=self.tf_lists, to_float=self.to_float, environ=environ,
        )


def option_flags() -> dict[str, str]:
    """ATC / CLI flag -> :class:`PrecisionOptions` field, in field order (the fields with a flag)."""
    return {f.metadata["flag"]: f.name for f in fields(PrecisionOptions) if f.metadata.get("flag")}


@dataclass(frozen=True)
class PrecisionConfig:
    """Validated options of the pass: the mode resolved to v1 and the loaded override files."""

    mode: str
    library: OpLibrary
    mixlist: Mixlist | None = None
    keep_dtype: KeepDtype | None = None
    customize_dtypes: CustomizeDtypes | None = None
    warnings: tuple[str, ...] = ()
    """What loading the options warned about (already logged)."""
    rule: Rule | None = None
    """The rule deciding each op (`ascend_mp.policies`); None: the CANN mode's."""
    policy: str = "cann"
    to_float: ToFloat | None = None
    """`to_float` scopes (node-name prefixes -> dtype), applied before the rule."""

    def __post_init__(self) -> None:
        if self.rule is None:
            from ascend_mp.policies import PolicyOptions, policy_rule

            object.__setattr__(self, "rule", policy_rule("cann", PolicyOptions(self.mode)))

    @property
    def the_rule(self) -> Rule:
        assert self.rule is not None
        return self.rule

    @property
    def label(self) -> str:
        """The mode or policy as the report names it."""
        return self.the_rule.label


def resolve_mode(mode: str | None, mode_v2: str | None) -> str:
    """The v1 mode name for `precision_mode` / `precision_mode_v2` (mutually exclusive)."""
    if mode is not None and mode_v2 is not None:
        raise AscendError(
            f"precision_mode '{mode}' and precision_mode_v2 '{mode_v2}' are mutually exclusive; give one of them"
        )
    if mode_v2 is not None:
        if mode_v2 not in V2_TO_V1:
            raise AscendError(f"unknown precision_mode_v2 '{mode_v2}'; expected one of {', '.join(V2_MODES)}")
        return V2_TO_V1[mode_v2]
    if mode is None:
        return DEFAULT_MODE
    if mode not in V1_MODES:
        raise AscendError(f"unknown precision_mode '{mode}'; expected one of {', '.join(V1_MODES)}")
    return mode


def load_config(
    mode: str | None = None,
    mode_v2: str | None = None,
    modify_mixlist: str | None = None,
    keep_dtype: str | None = None,
    customize_dtypes: str | None = None,
    soc: str = "ascend910",
    op_info: str | None = None,
    report: str | None = None,
    *,
    policy: str | None = None,
    level: str | None = None,
    amp_dtype_name: str | None = None,
    tf_lists: str | None = None,
    to_float: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> PrecisionConfig:
    """Validate every option and load every file, before anything is rewritten.

    `policy` (default `cann`) picks the rule (`ascend_mp.policies`); `level` is MindSpore's amp
    level, `amp_dtype_name` the framework policies' low dtype (fp16 or bf16), `tf_lists` TF's list
    edits (added to the `TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_*` variables of `environ`, default
    `os.environ`), `to_float` a file or inline list of `scope=dtype` scopes.
    """
    from ascend_mp.config import load_customize_dtypes, load_keep_dtype, load_mixlist
    from ascend_mp.dialects.ascend import OPS_BY_TYPE
    from ascend_mp.opinfo import load_library
    from ascend_mp.policies import PolicyOptions, amp_dtype, policy_rule
    from ascend_mp.policies.scopes import load_to_float

    resolved = resolve_mode(mode, mode_v2)
    policy = policy or "cann"
    if policy != "cann" and (mode is not None or mode_v2 is not None):
        raise AscendError(f"precision_mode applies to the cann policy only, not to amp_policy '{policy}'")
    known = set(OPS_BY_TYPE)
    keep = load_keep_dtype(keep_dtype, known) if keep_dtype is not None else None
    opts = PolicyOptions(
        resolved, level, amp_dtype(amp_dtype_name or "fp16"), tf_lists, os.environ if environ is None else environ, keep
    )
    rule = policy_rule(policy, opts)
    scopes = load_to_float(to_float) if to_float is not None else None
    library = load_library(soc, op_info)
    mixlist = load_mixlist(modify_mixlist, known) if modify_mixlist is not None else None
    custom = load_customize_dtypes(customize_dtypes, known) if customize_dtypes is not None else None
    if report is not None:
        folder = os.path.dirname(os.path.abspath(report))
        if not os.path.isdir(folder):
            raise AscendError(f"{report}: cannot write the precision report: no directory '{folder}'")
        if os.path.isdir(report):
            raise AscendError(f"{report}: cannot write the precision report: Is a directory")
    warnings = [w for cfg in (mixlist, keep, custom) if cfg is not None for w in cfg.warnings]
    useless: list[str] = []
    what = f"precision mode '{resolved}'" if policy == "cann" else f"amp_policy '{rule.label}'"
    if mixlist is not None and not rule.uses_mixlist:
        useless.append(f"{modify_mixlist}: modify_mixlist has no effect in {what} (only in the mix modes)")
    if keep is not None and rule.keeps_origin:
        useless.append(f"{keep_dtype}: keep_dtype has no effect in precision mode 'must_keep_origin_dtype'")
    for message in useless:
        logger.warning("%s", message)
    return PrecisionConfig(resolved, library, mixlist, keep, custom, (*warnings, *useless), rule, policy, scopes)
