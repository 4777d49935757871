"""`ascend-train`: compile a model (forward -> autodiff -> precision -> loss scaling) and train it on digits.

    ascend-train                                    # the MLP, allow_fp32_to_fp16 (CANN's default), dynamic loss scaling
    ascend-train --precision_mode allow_mix_precision
    ascend-train --model cnn --epochs 10 --out run/ # history.json, loss_scale.png, checkpoint.npz in run/
    ascend-train --precision_mode none --loss-scale none           # the fp32 baseline
    ascend-train --loss-scale fixed --scale 1024 --no-drop-overflow-update
    ascend-train --out run/ --resume --epochs 40    # continue from run/checkpoint.npz
    ascend-train --demo                             # make demo's training part

A progress bar for the whole run (loss, scale) shows when standard error is a terminal,
unless --quiet. Errors are one line, `ascend-train: error: ...`, no traceback: exit status 2
for a usage error (a bad option or value), 1 for any other error (also a run that diverged,
after writing its history and plot), 130 on Ctrl-C, 143 on SIGTERM. Outputs go through
`ascend_mp.fileio.write_output`: never half-written; a device, pipe or symlink at an output
path is written through, not replaced.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from ascend_mp.errors import AscendError
from ascend_mp.modes import V1_MODES
from ascend_mp.tools import train_inputs
from ascend_mp.tools.atc import add_precision_arguments, precision_options
from ascend_mp.tools.cli import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    UsageError,
    UsageParser,
    add_log_argument,
    end_progress_lines,
    fail,
    flush_warnings,
    progress_lines,
    setup_logging,
)

PROG = "ascend-train"
DEFAULT_MODE = "allow_fp32_to_fp16"
"""CANN's default precision mode for training (`ascend_mp.train.config.DEFAULT_MODE`)."""


def _number(
    kind: type, low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False
) -> Any:
    """An argparse type: a finite `kind` in [low, high] (an end excluded if `low_open` / `high_open`)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got '{text}'"
            ) from None
        if kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be finite, got {text}")
        if low is not None and (value <= low if low_open else value < low):
            raise argparse.ArgumentTypeError(f"must be {'>' if low_open else '>='} {low:g}, got {text}")
        if high is not None and (value >= high if high_open else value > high):
            raise argparse.ArgumentTypeError(f"must be {'<' if high_open else '<='} {high:g}, got {text}")
        return value

    return parse


_FLOAT32_MAX = 3.4028234663852886e38
_INT32_MAX = 2**31 - 1


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(
        prog=PROG, description="Train a model on the digits data set with CANN mixed precision and loss scaling."
    )
    p.add_argument("--model", type=train_inputs.model_argument, default="mlp",
                   help="mlp (64-128-10 on digits), cnn, or an ONNX classifier FILE.onnx (needs --data) (default mlp)")  # fmt: skip
    pr = p.add_argument_group("precision (the ascend-precision pass; every ATC option of ascend-opt)")
    pr.add_argument("--precision_mode", "--precision-mode", dest="precision_mode", choices=(*V1_MODES, "none"), default=None,
                    help=f"CANN precision mode of the ascend-precision pass; none trains the fp32 graph (default {DEFAULT_MODE}, as CANN trains)")  # fmt: skip
    add_precision_arguments(pr, skip=("precision_mode",), check_soc=False)
    p.add_argument(
        "--loss-fp16",
        action="store_true",
        help="let the precision mode decide the loss ops too (default: loss in fp32)",
    )

    ls = p.add_argument_group("loss scaling (the ascend-loss-scale pass)")
    ls.add_argument(
        "--loss-scale",
        choices=("dynamic", "fixed", "none"),
        default="dynamic",
        help="loss-scale manager (default dynamic)",
    )
    ls.add_argument(
        "--preset",
        choices=("pytorch", "mindspore", "tensorflow"),
        help="dynamic defaults (default pytorch: 2^16, x2, x0.5, 2000)",
    )
    ls.add_argument("--init-scale", type=_number(float, 0, _FLOAT32_MAX, low_open=True), help="dynamic: initial scale")
    ls.add_argument(
        "--growth-factor",
        type=_number(float, 1, _FLOAT32_MAX, low_open=True),
        help="dynamic: scale multiplier after growth-interval clean steps",
    )
    ls.add_argument(
        "--backoff-factor",
        type=_number(float, 0, 1, low_open=True, high_open=True),
        help="dynamic: scale multiplier on overflow",
    )
    ls.add_argument(
        "--growth-interval", type=_number(int, 1, _INT32_MAX), help="dynamic: clean steps before the scale grows"
    )
    ls.add_argument("--min-scale", type=_number(float, 0, _FLOAT32_MAX), help="dynamic: floor of the scale")
    ls.add_argument(
        "--scale", type=_number(float, 0, _FLOAT32_MAX, low_open=True), help="fixed: the loss scale (default 128)"
    )
    ls.add_argument("--no-drop-overflow-update", dest="drop_overflow_update", action="store_false", default=None,
                    help="fixed: apply the update even when gradients overflowed")  # fmt: skip

    opt = p.add_argument_group("optimisation")
    opt.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="momentum", help="default momentum")
    opt.add_argument(
        "--lr", type=_number(float, 0, _FLOAT32_MAX, low_open=True), default=0.02, help="learning rate (default 0.02)"
    )
    opt.add_argument(
        "--momentum", type=_number(float, 0, 1, high_open=True), default=0.9, help="momentum in [0, 1) (default 0.9)"
    )
    opt.add_argument("--epochs", type=_number(int, 1, _INT32_MAX), default=30, help="default 30")
    opt.add_argument("--batch", type=_number(int, 1, _INT32_MAX), default=32, help="default 32")
    opt.add_argument(
        "--seed",
        type=_number(int, 0, 2**32 - 1),
        default=0,
        help="initialisation and shuffling seed, in [0, 2^32) (default 0)",
    )
    opt.add_argument(
        "--subset", type=_number(int, 1, _INT32_MAX), metavar="N", help="train on the first N training examples only"
    )
    opt.add_argument(
        "--stats-every",
        type=_number(int, 0, _INT32_MAX),
        default=0,
        metavar="STEPS",
        help="steps between gradient underflow samples (default: one per epoch)",
    )

    train_inputs.add_arguments(p)
    io = p.add_argument_group("outputs")
    io.add_argument(
        "--out", metavar="DIR", help="write history.json, loss_scale.png and checkpoint.npz (per epoch) here"
    )
    io.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                    help="continue from a checkpoint (default: DIR/checkpoint.npz of --out)")  # fmt: skip
    io.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no per-epoch lines")
    add_log_argument(io)  # pyright: ignore[reportArgumentType]  # an argument group's add_argument is the parser's
    io.add_argument("--demo", action="store_true", help="run make demo's training part and exit")
    return p


def _mode(args: argparse.Namespace) -> str:
    return DEFAULT_MODE if args.precision_mode is None else args.precision_mode


def _config(args: argparse.Namespace):
    """The run's TrainConfig: the precision flags are the ATC flags of `PrecisionOptions`' fields, the loss-scale
    flags the fields of `LossScaleOptions` (`--loss-scale` its manager)."""
    from dataclasses import fields

    from ascend_mp.passes.loss_scale import LossScaleOptions
    from ascend_mp.precision_options import PrecisionOptions
    from ascend_mp.train import TrainConfig

    mode = _mode(args)
    given = precision_options(args)
    if args.precision_mode is None and ("mode_v2" in given or given.get("policy", "cann") != "cann"):
        mode = None  # the v2 name or a framework policy picks the mode
    precision = None if mode == "none" else PrecisionOptions(**{**given, "mode": mode})
    scaling = {
        f.name: getattr(args, f.name) for f in fields(LossScaleOptions) if getattr(args, f.name, None) is not None
    }
    return TrainConfig(
        model=args.model,
        precision=precision,
        scaling=LossScaleOptions(**{**scaling, "manager": args.loss_scale}),
        epochs=args.epochs,
        batch=args.batch,
        seed=args.seed,
        subset=args.subset,
        # must_keep_origin_dtype keeps the fp32 loss anyway (and ignores keep_dtype)
        keep_loss_fp32=not args.loss_fp16 and mode != "must_keep_origin_dtype",
        stats_every=args.stats_every,
    )


def _check_paths(args: argparse.Namespace) -> None:
    """Fail before compiling on an output folder that cannot be made, a bad keep_dtype file or an unreadable checkpoint."""
    from pathlib import Path

    if args.out is not None:
        for folder in (Path(args.out), *Path(args.out).parents):
            if folder.exists():
                if not folder.is_dir():
                    raise AscendError(f"{args.out}: cannot write the outputs there: '{folder}' is a file, not a folder")
                if not os.access(folder, os.W_OK | os.X_OK):
                    raise AscendError(f"{args.out}: cannot write the outputs there: '{folder}' is not writable")
                break
    if args.keep_dtype is not None:  # fail before compiling
        from ascend_mp.config import load_keep_dtype

        load_keep_dtype(args.keep_dtype)
    if args.resume:
        resume = Path(args.out) / "checkpoint.npz" if args.resume is True else Path(args.resume)  # pyright: ignore[reportArgumentType]  # --resume is True or a path, and truthy here
        if not resume.exists():
            raise AscendError(f"{resume}: no checkpoint to resume from")
        if resume.is_dir():
            raise AscendError(f"{resume}: not a readable ascend-train checkpoint (it is a folder)")
        check_checkpoint(str(resume))


def check_checkpoint(path: str) -> None:
    """Refuse a checkpoint that is not a regular .npz file whose members' headers (zip and .npy) fit the limits,
    before the trainer decompresses anything (the checks `--inputs` gets: `fileio.npz_members`)."""
    import stat
    import zipfile
    import zlib

    from ascend_mp.fileio import npz_members

    try:
        st = os.stat(path)
    except OSError as e:
        raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):  # read twice (checked here, loaded by the trainer): a pipe or device cannot be
        raise AscendError(f"{path}: not a readable ascend-train checkpoint (not a regular file)")
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"PK\x03\x04":
                raise AscendError(f"{path}: not a readable ascend-train checkpoint (not an .npz file)")
            f.seek(0)
            with zipfile.ZipFile(f) as z:
                npz_members(path, z)
    except OSError as e:
        raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError, zlib.error) as e:
        raise AscendError(
            f"{path}: not a readable ascend-train checkpoint ({type(e).__name__}: {' '.join(str(e).split())})"
        ) from None


def run(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    train_inputs.check(args)
    setup_logging(PROG, args.log)  # `ascend-train: warning: ...`; the passes' per-op INFO lines need --log=info
    # one progress line per epoch (`ascend-train: epoch 1/30: ...`, not an info message), unless --quiet or --log
    # error/null; --log warning shows no info message
    lines = None
    if not args.quiet and logging.getLogger("ascend_mp").getEffectiveLevel() <= logging.WARNING:
        lines = progress_lines(PROG, "ascend_mp.train")
    try:
        if args.demo:
            from ascend_mp.train import demo

            demo(out_dir=args.out)
            return
        from ascend_mp.train import compile_training, report_summary, train

        cfg = _config(args)
        if args.resume and args.out is None and args.resume is True:
            raise UsageError("--resume without a checkpoint path needs --out DIR")
        _check_paths(args)
        if not args.quiet:
            named = cfg.precision is None or cfg.precision.mode is not None  # not by precision_mode_v2 or a policy
            default = " (the default: CANN's for training)" if args.precision_mode is None and named else ""
            label = _mode(args) if named else cfg.precision.mode_v2 or f"amp_policy {cfg.precision.policy}"  # pyright: ignore[reportOptionalMemberAccess]  # not `named` means cfg.precision is set
            print(f"precision mode: {label}{default}", flush=True)
        model, data = train_inputs.prepare(args, cfg.batch, cfg.subset, cfg.seed)
        compiled = compile_training(cfg, model)
        if not args.quiet:
            print(report_summary(compiled.report), flush=True)
        result = train(
            cfg,
            out_dir=args.out,
            resume=args.resume,
            progress=False if args.quiet else None,
            compiled=compiled,
            data=data,
        )
        print(result.summary(), flush=True)
        saved = train_inputs.finish(args, model, result.params)
        if saved:
            print(saved, flush=True)
        if result.diverged:
            written = (
                f" ({' and '.join(k for k in ('history', 'plot') if k in result.outputs)} written)"
                if result.outputs
                else ""
            )
            raise AscendError(f"training diverged: {result.diverged}{written}")
    finally:
        if lines is not None:
            end_progress_lines("ascend_mp.train", lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Exit status (`ascend_mp.tools.cli`'s convention): 0; 2 on a usage error; 1 on any other
    error; 130 on Ctrl-C, quietly. Not `cli.run_tool`: its outputs must not wait for the end of
    the run (a checkpoint per epoch; a diverged run still writes its history and plot)."""
    previous = None
    try:  # SIGTERM exits 143 through the finally clauses (no temporary file is left behind)
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread
        pass
    try:
        run(argv)
    except UsageError as e:
        fail(PROG, e, EXIT_USAGE)
    except AscendError as e:
        fail(PROG, e)
    except OSError as e:
        fail(PROG, f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
    except KeyboardInterrupt:
        sys.stderr.flush()
        sys.exit(EXIT_INTERRUPTED)
    finally:
        flush_warnings(PROG)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    main()
