"""`ascend-tune`: which ops to keep in high precision so that a mode meets a tolerance on your data.

    ascend-tune model.onnx val.npz --min-agreement 0.99 --mixlist mixlist.json --keep-dtype keep.cfg
    ascend-tune model.onnx val.npz --precision_mode allow_mix_precision_bf16 --max-accuracy-drop 0.005
    ascend-tune model.onnx val.npz --rtol 1e-2 --atol 1e-3

Writes CANN's own files, usable with ATC and ascend-opt unchanged: `--mixlist` (a
`--modify_mixlist` JSON blacklisting op types, written only where blacklisting by type meets
the tolerance) and `--keep-dtype` (a `--keep_dtype` file of op names). The search is in
`ascend_mp.tune`. When the tolerance cannot be met the tool says so, writes no files and exits 1.
Errors are one line, `ascend-tune: error: ...`; exit status 2 for usage errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence

from ascend_mp.fileio import check_writable, write_output
from ascend_mp.tools.atc import add_precision_arguments, precision_options
from ascend_mp.tools.cli import UsageError, UsageParser, add_format_argument, add_log_argument, run_tool, setup_logging

PROG = "ascend-tune"
PASS_FLAGS = ("soc_version", "op_info")
"""The ATC flags that apply to every evaluation (the mode is --precision_mode)."""


def _parser() -> UsageParser:
    from ascend_mp.modes import V1_MODES

    p = UsageParser(
        prog=PROG, description="find the ops to keep in high precision so a precision mode meets a tolerance"
    )
    p.add_argument("model", help="an ONNX model (.onnx) or an MLIR module")
    add_format_argument(p)
    p.add_argument("data", help="an .npz (inputs by name, optional labels) or a folder of .npy/.npz batches")
    p.add_argument(
        "--precision_mode",
        "--precision-mode",
        choices=V1_MODES,
        default="allow_mix_precision",
        help="the mode to tune (default allow_mix_precision)",
    )
    p.add_argument(
        "--min-agreement",
        type=float,
        metavar="F",
        help="top-1 agreement with fp32 (default 0.99 when no tolerance is given)",
    )
    p.add_argument(
        "--max-rel-err",
        type=float,
        metavar="E",
        help="99th percentile of the per-sample relative error against float64",
    )
    p.add_argument("--max-accuracy-drop", type=float, metavar="D", help="fp32 accuracy minus the mode's (needs labels)")
    p.add_argument(
        "--rtol",
        type=float,
        metavar="R",
        help="with --atol: every output element within atol + rtol*|y| of the fp32 run's, np.allclose as "
        "auto_convert_mixed_precision checks (alone: atol 1e-8)",
    )
    p.add_argument("--atol", type=float, metavar="A", help="see --rtol (alone: rtol 1e-5)")
    p.add_argument("--mixlist", metavar="JSON", help="write the --modify_mixlist file (black-list to-add by op type)")
    p.add_argument(
        "--keep-dtype",
        "--keep_dtype_out",
        dest="keep_out",
        metavar="FILE",
        help="write the --keep_dtype file (op names)",
    )
    p.add_argument("--report", metavar="JSON", help="write the search's report as JSON")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--batch-size", type=int, default=32, metavar="N")
    p.add_argument(
        "--samples", type=int, metavar="N", help="search on N samples drawn with --seed, then check the result on all"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the --samples draw (default 0)")
    p.add_argument(
        "--output", metavar="NAME", help="the output whose argmax is the predicted class (default: the first)"
    )
    p.add_argument("--function", default="main")
    p.add_argument("--verbose", "-v", action="store_true", help="print each evaluation")
    atc = p.add_argument_group("ATC options applied to every evaluation")
    add_precision_arguments(atc, only=PASS_FLAGS, check_soc=False)
    add_log_argument(p)
    return p


def run(argv: Sequence[str] | None) -> None:
    from ascend_mp.errors import AscendError
    from ascend_mp.evaluate import load_dataset, load_model
    from ascend_mp.tune import Tolerance, format_result, tune

    args = _parser().parse_args(argv)
    setup_logging(PROG, args.log)
    for flag in ("min_agreement", "max_accuracy_drop"):
        value = getattr(args, flag)
        if value is not None and not 0 <= value <= 1:
            raise UsageError(f"--{flag.replace('_', '-')} expects a fraction from 0 to 1, got {value}")
    for flag in ("max_rel_err", "rtol", "atol"):
        value = getattr(args, flag)
        if value is not None and not 0 <= value < math.inf:
            raise UsageError(f"--{flag.replace('_', '-')} expects a non-negative number, got {value}")
    if args.samples is not None and args.samples < 1:
        raise UsageError(f"--samples expects a positive count, got {args.samples}")
    if args.batch_size < 1:
        raise UsageError(f"--batch-size expects a positive count, got {args.batch_size}")
    given = (args.min_agreement, args.max_rel_err, args.max_accuracy_drop, args.rtol, args.atol)
    tolerance = Tolerance(*given) if any(v is not None for v in given) else Tolerance()
    for path in (args.mixlist, args.keep_out, args.report):
        if path is not None:
            check_writable(path)
    options = precision_options(args, only=PASS_FLAGS)
    if "soc" in options:
        from ascend_mp.opinfo import canonical_soc

        options["soc"] = canonical_soc(options["soc"])
    model = load_model(args.model, args.function, args.frontend)
    data = load_dataset(args.data, model)
    output = 0
    if args.output is not None:
        if args.output not in model.outputs:
            raise AscendError(
                f"--output: '{args.output}' is not an output of {args.model} (outputs: {', '.join(model.outputs)})"
            )
        output = model.outputs.index(args.output)
    log = (lambda line: print(f"{PROG}: {line}", file=sys.stderr)) if args.verbose else None
    result = tune(
        model,
        data,
        args.precision_mode,
        tolerance,
        batch_size=args.batch_size,
        pass_options=options,
        output=output,
        log=log,
        samples=args.samples,
        seed=args.seed,
    )
    report = json.dumps(result.as_dict(), indent=2)
    print(report if args.json else format_result(result))
    if not result.met:
        raise AscendError(result.message)
    if args.report is not None:
        write_output(args.report, report + "\n")
    if args.keep_out is not None:
        write_output(args.keep_out, result.keep_dtype_text())
    if args.mixlist is not None:
        mixlist = result.mixlist()
        if mixlist is None:
            raise AscendError(
                f"--mixlist: blacklisting the kept ops' types does not meet the tolerance; use --keep-dtype ({', '.join(result.keep)})"
            )
        write_output(args.mixlist, json.dumps(mixlist, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    """Run ascend-tune (exit status: 0 ok, 1 error or tolerance not met, 2 usage error, 130 Ctrl-C)."""
    run_tool(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
