"""`ascend-opt --compare-policies`, `--compare-json FILE` and `--precision-dot FILE`: the flags and the run.

`--compare-policies` prints, per op, the dtype CANN's allow_mix_precision, TF's AutoMixedPrecision,
MindSpore O2 and PyTorch autocast choose, marking the ops where they disagree; `--compare-json FILE`
writes the same as JSON. `--precision-dot FILE` writes the graph as Graphviz DOT after the precision
pass with the given ATC/amp flags. The views themselves are `ascend_mp.policies.compare`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

from ascend_mp.tools.atc import precision_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("policy comparison")
    group.add_argument(
        "--compare-policies",
        action="store_true",
        help="print per op the dtype CANN allow_mix_precision, TF, MindSpore O2 and torch autocast choose",
    )
    group.add_argument(
        "--compare-json", metavar="FILE", help="with --compare-policies: also write the comparison as JSON"
    )
    group.add_argument(
        "--precision-dot",
        metavar="FILE",
        help="write the graph after the precision pass (ATC/amp flags) as Graphviz DOT, coloured by dtype",
    )


def wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "compare_policies", False) or getattr(args, "precision_dot", None))


def run(args: argparse.Namespace, read_input: Callable[[], ModuleOp]) -> None:
    """`ascend-opt --compare-policies` / `--precision-dot`: read the input (`read_input`: the driver's frontends,
    .mlir or .onnx), write the views (stdout: the table)."""
    import sys

    from ascend_mp.errors import AscendError
    from ascend_mp.fileio import deferred_outputs, write_output
    from ascend_mp.passes.precision import apply_plan, decide_precision, load_config
    from ascend_mp.policies.compare import compare_policies, format_table, to_dot, to_json

    if getattr(args, "compare_json", None) and not args.compare_policies:
        raise AscendError("--compare-json needs --compare-policies")
    module = read_input()
    module.verify()
    options = precision_options(args)
    soc, op_info = options.get("soc", "ascend910"), options.get("op_info")
    with deferred_outputs():
        if args.compare_policies:
            rows = compare_policies(module, soc, op_info)
            sys.stdout.write(format_table(rows))
            if args.compare_json:
                write_output(args.compare_json, json.dumps(to_json(rows), indent=2) + "\n")
        if args.precision_dot:
            target = module.clone()  # deepcopy recurses once per op: a long chain would overflow
            names = ("mode", "mode_v2", "modify_mixlist", "keep_dtype", "customize_dtypes", "soc", "op_info", "report")
            config = load_config(
                *(options.get(k) if k != "soc" else soc for k in names),  # pyright: ignore[reportArgumentType]  # each option's value has its parameter's type; soc is a str
                policy=options.get("policy"),
                level=options.get("level"),
                amp_dtype_name=options.get("amp_dtype"),
                to_float=options.get("to_float"),
            )
            plan = decide_precision(target, config)
            apply_plan(target, plan)
            write_output(args.precision_dot, to_dot(target, plan.inserted, config.label))
