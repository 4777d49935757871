"""The options of the `ascend-precision` pass, stated once (docs/design.md §5, §8, §11).

:class:`PrecisionOptions` is the one dataclass of the pass's options. Every entry point reads it: the pass
(`AscendPrecisionPass` is a `PrecisionOptions`, so `-p 'ascend-precision{mode=... modify-mixlist="x.json"}'` sets
its fields), `run_precision`, the ATC flags of `ascend-opt` / `ascend-run` (each field's metadata names its flag
and help) and the trainer's `TrainConfig`. `ascend_mp.passes.precision.options.resolve_options` validates the
options and loads their files into the configuration the pass decides with.

It lives outside `ascend_mp.passes`, as the mode names do (`ascend_mp.modes`): the tools build their flags from
it without loading any pass (`test_lazy_imports.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ascend_mp.modes import V1_MODES, V2_MODES

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

    mode: str | None = field(
        default=None,
        metadata=_option(
            "precision_mode (v1 name); force_fp16 when neither mode is given",
            "precision_mode",
            choices=V1_MODES,
            help="CANN precision mode (v1 names)",
        ),
    )
    mode_v2: str | None = field(
        default=None,
        metadata=_option(
            "precision_mode_v2 (fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16)",
            "precision_mode_v2",
            choices=V2_MODES,
            help="CANN precision mode (v2 names)",
        ),
    )
    modify_mixlist: str | None = field(
        default=None,
        metadata=_option(
            "JSON moving op types between the black, white and gray lists (mix modes)",
            "modify_mixlist",
            metavar="JSON",
            help="mixed-precision list changes (white/black/gray-list to-add/to-remove)",
        ),
    )
    keep_dtype: str | None = field(
        default=None,
        metadata=_option(
            "ops (names or OpType::X, one a line) that keep their original dtype", "keep_dtype", metavar="FILE"
        ),
    )
    customize_dtypes: str | None = field(
        default=None,
        metadata=_option("exact kernel dtypes per op name or OpType::X", "customize_dtypes", metavar="FILE"),
    )
    soc: str = field(
        default="ascend910",
        metadata=_option(
            "SoC whose operator library is used",
            "soc_version",
            metavar="SOC",
            help="SoC whose operator library is used: CANN's names (Ascend910A, Ascend910B1, ...) or ascend910, ascend910b",
        ),
    )
    op_info: str | None = field(
        default=None,
        metadata=_option(
            "a CANN aic-<soc>-ops-info.json table overriding the built-in entries",
            "op_info",
            metavar="JSON_OR_DIR",
            help="a CANN aic-<soc>-ops-info.json table, or a folder of them, overriding the built-in one",
        ),
    )
    report: str | None = field(
        default=None,
        metadata=_option(
            "where to write the JSON precision report",
            "precision_report",
            metavar="FILE",
            help="write the per-op precision decisions as JSON",
        ),
    )
    policy: str | None = field(
        default=None,
        metadata=_option(
            "cann (default), tf, mindspore or torch (CLI `--amp_policy`)",
            "amp_policy",
            choices=POLICY_NAMES,
            help="precision policy (default cann: the ATC modes)",
        ),
    )
    level: str | None = field(
        default=None,
        metadata=_option(
            "MindSpore's amp level O0-O3 (CLI `--amp_level`; default O2)",
            "amp_level",
            metavar="LEVEL",
            help="MindSpore amp level O0-O3 (with --amp_policy=mindspore; default O2)",
        ),
    )
    amp_dtype: str | None = field(
        default=None,
        metadata=_option(
            "the framework policies' low dtype: fp16 (default) or bf16 (CLI `--amp_dtype`)",
            "amp_dtype",
            choices=AMP_DTYPES,
            help="low dtype of the tf, mindspore and torch policies (default fp16)",
        ),
    )
    tf_lists: str | None = field(
        default=None, metadata=_option("TF list edits, `ALLOWLIST_ADD=A,B;DENYLIST_REMOVE=C` (with the environment's)")
    )
    to_float: str | None = field(
        default=None,
        metadata=_option(
            "`to_float` scopes: a file, or inline `scope=dtype;scope=dtype`",
            "to_float",
            metavar="FILE",
            help="to_float scopes: 'scope = dtype' lines (name prefixes, MindSpore cells)",
        ),
    )

    def options(self) -> PrecisionOptions:
        """These options as a plain :class:`PrecisionOptions` (the pass object is one, with more behind it)."""
        return PrecisionOptions(**self.given())

    def given(self) -> dict[str, Any]:
        """The fields that differ from their defaults (what a `-p` spec or a set of flags states)."""
        return {f.name: getattr(self, f.name) for f in fields(PrecisionOptions) if getattr(self, f.name) != f.default}


def option_flags() -> dict[str, str]:
    """ATC / CLI flag -> :class:`PrecisionOptions` field, in field order (the fields with a flag)."""
    return {f.metadata["flag"]: f.name for f in fields(PrecisionOptions) if f.metadata.get("flag")}
