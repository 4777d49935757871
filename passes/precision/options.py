"""The options of `ascend-precision` validated: :func:`resolve_options` turns a :class:`PrecisionOptions`
(`ascend_mp.precision_options`, the one dataclass of the options) into the :class:`PrecisionConfig` the pass
decides with, loading every file once, before anything is rewritten.

This module imports nothing heavy at import time (the loaders are imported when options are resolved).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascend_mp.errors import AscendError
from ascend_mp.modes import DEFAULT_MODE, V1_MODES, V2_MODES, V2_TO_V1
from ascend_mp.precision_options import AMP_DTYPES, POLICY_NAMES, PrecisionOptions, option_flags

logger = logging.getLogger("ascend_mp")

if TYPE_CHECKING:
    from ascend_mp.config import CustomizeDtypes, KeepDtype, Mixlist
    from ascend_mp.opinfo import OpLibrary
    from ascend_mp.policies import Rule
    from ascend_mp.policies.scopes import ToFloat


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


def resolve_options(options: PrecisionOptions, environ: Mapping[str, str] | None = None) -> PrecisionConfig:
    """Validate every option and load every file, before anything is rewritten (:func:`load_config`)."""
    return load_config(
        options.mode,
        options.mode_v2,
        options.modify_mixlist,
        options.keep_dtype,
        options.customize_dtypes,
        options.soc,
        options.op_info,
        options.report,
        policy=options.policy,
        level=options.level,
        amp_dtype_name=options.amp_dtype,
        tf_lists=options.tf_lists,
        to_float=options.to_float,
        environ=environ,
    )


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


__all__ = [
    "AMP_DTYPES",
    "POLICY_NAMES",
    "PrecisionConfig",
    "PrecisionOptions",
    "load_config",
    "option_flags",
    "resolve_mode",
    "resolve_options",
]
