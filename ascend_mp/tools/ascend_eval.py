"""`ascend-eval`: a model over a dataset under each precision mode: accuracy, agreement, error, speed.

    ascend-eval model.onnx val.npz
    ascend-eval model.onnx batches/ --modes fp32,allow_mix_precision,force_fp16 --json --plot eval.png
    ascend-eval model.onnx val.npz --modes allow_mix_precision --modify_mixlist tuned.json

The dataset is an `.npz` (one array per model input, by name, samples along the first axis;
optional integer `labels`) or a folder of `.npy`/`.npz` batches (`ascend_mp.evaluate.load_dataset`).
Modes: `fp32` (the graph as given), CANN precision modes, the policies `tf`, `torch`,
`mindspore[:O1..O3]` (default: fp32 and every CANN mode). The ATC flags (`--soc_version`,
`--modify_mixlist`, `--keep_dtype`, ...) apply to every mode. Batches run in `--jobs` worker
processes (default: every core); results do not depend on it. Errors are one line,
`ascend-eval: error: ...`; exit status 1 for errors, 2 for usage errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from ascend_mp.fileio import check_writable, write_output
from ascend_mp.optional import available, require
from ascend_mp.tools.atc import add_precision_arguments, precision_options
from ascend_mp.tools.cli import UsageError, UsageParser, add_format_argument, add_log_argument, run_tool, setup_logging

PROG = "ascend-eval"
PASS_FLAGS = ("soc_version", "op_info", "modify_mixlist", "keep_dtype", "customize_dtypes")
"""The ATC flags that apply to every evaluated mode (the mode itself comes from --modes)."""


def _parser() -> UsageParser:
    from ascend_mp.evaluate import cpu_count

    p = UsageParser(prog=PROG, description="evaluate a model over a dataset under each precision mode")
    p.add_argument("model", help="an ONNX model (.onnx) or an MLIR module")
    add_format_argument(p)
    p.add_argument("data", help="an .npz (inputs by name, optional labels) or a folder of .npy/.npz batches")
    p.add_argument(
        "--modes",
        metavar="A,B,...",
        help="fp32, precision modes and policies to run (default: fp32 and every CANN mode)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        metavar="N",
        help="samples per run when the model's batch is dynamic (default 32)",
    )
    p.add_argument(
        "--jobs", "-j", type=int, default=cpu_count(), metavar="N", help="worker processes (default: all cores)"
    )
    p.add_argument(
        "--output", metavar="NAME", help="the output whose argmax is the predicted class (default: the first)"
    )
    p.add_argument("--function", default="main", help="the function of an MLIR module to run (default main)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--plot", metavar="PNG", help="write accuracy/agreement and the error distribution per mode as a PNG"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    atc = p.add_argument_group("ATC options applied to every mode")
    add_precision_arguments(atc, only=PASS_FLAGS, check_soc=False)
    add_log_argument(p)
    return p


def run(argv: Sequence[str] | None) -> None:
    from ascend_mp.evaluate import (
        EvalSettings,
        default_variants,
        evaluate,
        format_report,
        load_dataset,
        load_model,
        plot_report,
        variant_options,
    )

    args = _parser().parse_args(argv)
    setup_logging(PROG, args.log)
    if args.jobs < 1:
        raise UsageError(f"--jobs expects a positive count, got {args.jobs}")
    if args.batch_size < 1:
        raise UsageError(f"--batch-size expects a positive count, got {args.batch_size}")
    variants = tuple(m.strip() for m in args.modes.split(",") if m.strip()) if args.modes else default_variants()
    if not variants:
        raise UsageError("--modes: no mode given")
    for v in variants:
        try:
            variant_options(v)
        except Exception as e:  # noqa: BLE001 - an AscendError: a usage error here
            raise UsageError(str(e)) from None
    if args.plot is not None:
        check_writable(args.plot)
        require("matplotlib", "--plot")
    options = precision_options(args, only=PASS_FLAGS)
    if "soc" in options:
        from ascend_mp.opinfo import canonical_soc

        options["soc"] = canonical_soc(options["soc"])
    model = load_model(args.model, args.function, args.frontend)
    dataset = load_dataset(args.data, model)
    settings = EvalSettings(variants, args.batch_size, args.jobs, args.output, options)
    bar = None
    if not args.no_progress and available("tqdm"):  # no bar without tqdm (optional)
        from tqdm import tqdm

        batch = model.batch or min(args.batch_size, dataset.count)
        bar = tqdm(
            total=-(-dataset.count // batch), desc=PROG, unit="batch", file=sys.stderr, disable=None, leave=False
        )
    try:
        report = evaluate(model, dataset, settings, bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    if args.plot is not None:
        write_output(args.plot, plot_report(report, args.plot))
    print(json.dumps(report.as_dict(), indent=2) if args.json else format_report(report))


def main(argv: Sequence[str] | None = None) -> None:
    """Run ascend-eval (exit status: 0 ok, 1 error, 2 usage error, 130 Ctrl-C)."""
    run_tool(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
