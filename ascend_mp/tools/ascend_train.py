"""`ascend-train`: compile a model (forward -> autodiff -> precision -> loss scaling) and train it on digits.

    ascend-train                                    # the MLP, allow_mix_precision, dynamic loss scaling
    ascend-train --model cnn --epochs 10 --out run/ # history.json, loss_scale.png, checkpoint.npz in run/
    ascend-train --precision_mode none --loss-scale none           # the fp32 baseline
    ascend-train --loss-scale fixed --scale 1024 --no-drop-overflow-update
    ascend-train --out run/ --resume --epochs 40    # continue from run/checkpoint.npz
    ascend-train --demo                             # make demo's training part

A progress bar (loss, scale) shows when standard error is a terminal, unless --quiet.
Errors are one line, `ascend-train: error: ...`, exit status 1, no traceback; output files
are written atomically, so an existing one is never left half-written.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ascend_mp.errors import AscendError
from ascend_mp.modes import V1_MODES

PROG = "ascend-train"


class _Parser(argparse.ArgumentParser):
    """Usage errors as one-line AscendErrors (exit 1, like every other error)."""

    def error(self, message: str) -> NoReturn:
        raise AscendError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Train a model on scikit-learn's digits with CANN mixed precision and loss scaling.")
    p.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="the digits MLP (64-128-10) or the small CNN (default mlp)")
    p.add_argument("--precision_mode", "--precision-mode", dest="precision_mode", choices=(*V1_MODES, "none"), default="allow_mix_precision",
                   help="CANN precision mode of the ascend-precision pass; none trains the fp32 graph (default allow_mix_precision)")  # fmt: skip
    p.add_argument("--modify_mixlist", metavar="JSON", help="mixed-precision list changes for the precision pass")
    p.add_argument("--keep_dtype", metavar="FILE", help="ops (names or OpType::X) that keep their original dtype")
    p.add_argument("--soc_version", default="ascend910", metavar="SOC", help="SoC of the operator library (default ascend910)")
    p.add_argument("--loss-fp16", action="store_true", help="let the precision mode decide the loss ops too (default: loss in fp32)")

    ls = p.add_argument_group("loss scaling (the ascend-loss-scale pass)")
    ls.add_argument("--loss-scale", choices=("dynamic", "fixed", "none"), default="dynamic", help="loss-scale manager (default dynamic)")
    ls.add_argument("--preset", choices=("pytorch", "mindspore", "tensorflow"), help="dynamic defaults (default pytorch: 2^16, x2, x0.5, 2000)")
    ls.add_argument("--init-scale", type=float, help="dynamic: initial scale")
    ls.add_argument("--growth-factor", type=float, help="dynamic: scale multiplier after growth-interval clean steps")
    ls.add_argument("--backoff-factor", type=float, help="dynamic: scale multiplier on overflow")
    ls.add_argument("--growth-interval", type=int, help="dynamic: clean steps before the scale grows")
    ls.add_argument("--min-scale", type=float, help="dynamic: floor of the scale")
    ls.add_argument("--scale", type=float, help="fixed: the loss scale (default 128)")
    ls.add_argument("--no-drop-overflow-update", dest="drop_overflow_update", action="store_false", default=None,
                    help="fixed: apply the update even when gradients overflowed")  # fmt: skip

    opt = p.add_argument_group("optimisation")
    opt.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="momentum", help="default momentum")
    opt.add_argument("--lr", type=float, default=0.02, help="learning rate (default 0.02)")
    opt.add_argument("--momentum", type=float, default=0.9, help="momentum (default 0.9)")
    opt.add_argument("--epochs", type=int, default=30, help="default 30")
    opt.add_argument("--batch", type=int, default=32, help="default 32")
    opt.add_argument("--seed", type=int, default=0, help="initialisation and shuffling seed (default 0)")
    opt.add_argument("--subset", type=int, metavar="N", help="train on the first N training examples only")
    opt.add_argument("--stats-every", type=int, default=0, metavar="STEPS", help="steps between gradient underflow samples (default: one per epoch)")

    io = p.add_argument_group("outputs")
    io.add_argument("--out", metavar="DIR", help="write history.json, loss_scale.png and checkpoint.npz (per epoch) here")
    io.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                    help="continue from a checkpoint (default: DIR/checkpoint.npz of --out)")  # fmt: skip
    io.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no per-epoch lines")
    io.add_argument("--demo", action="store_true", help="run make demo's training part and exit")
    return p


def _config(args: argparse.Namespace):
    from ascend_mp.train import TrainConfig

    return TrainConfig(
        model=args.model,
        precision_mode=None if args.precision_mode == "none" else args.precision_mode,
        loss_scale=args.loss_scale,
        preset=args.preset,
        init_scale=args.init_scale,
        growth_factor=args.growth_factor,
        backoff_factor=args.backoff_factor,
        growth_interval=args.growth_interval,
        min_scale=args.min_scale,
        scale=args.scale,
        drop_overflow_update=args.drop_overflow_update,
        optimizer=args.optimizer,
        lr=args.lr,
        momentum=args.momentum,
        epochs=args.epochs,
        batch=args.batch,
        seed=args.seed,
        subset=args.subset,
        # must_keep_origin_dtype keeps the fp32 loss anyway (and ignores keep_dtype)
        keep_loss_fp32=not args.loss_fp16 and args.precision_mode != "must_keep_origin_dtype",
        modify_mixlist=args.modify_mixlist,
        keep_dtype=args.keep_dtype,
        soc=args.soc_version,
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
    if args.keep_dtype is not None:  # errors name the user's file, not the copy the trainer extends
        from ascend_mp.config import load_keep_dtype

        load_keep_dtype(args.keep_dtype)
    if args.resume:
        resume = Path(args.out) / "checkpoint.npz" if args.resume is True else Path(args.resume)
        if not resume.exists():
            raise AscendError(f"{resume}: no checkpoint to resume from")
        if resume.is_dir():
            raise AscendError(f"{resume}: not a readable ascend-train checkpoint (it is a folder)")
        try:
            with resume.open("rb") as f:
                head = f.read(4)
        except OSError as e:
            raise AscendError(f"{resume}: cannot read file: {e.strerror or e}") from None
        if head != b"PK\x03\x04":
            raise AscendError(f"{resume}: not a readable ascend-train checkpoint (not an .npz file)")


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        kind = "warning" if record.levelno >= logging.WARNING else "info"
        text = " ".join(record.getMessage().split())
        return f"{PROG}: {text}" if kind == "info" else f"{PROG}: {kind}: {text}"


def run(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    log = logging.getLogger("ascend_mp")
    log.addHandler(handler)
    log.propagate = False
    levels = (log.level, logging.getLogger("ascend_mp.train").level)
    log.setLevel(logging.WARNING)  # the passes' per-op INFO lines are for ascend-opt
    logging.getLogger("ascend_mp.train").setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        if args.demo:
            from ascend_mp.train import demo

            demo(out_dir=args.out)
            return
        from ascend_mp.train import compile_training, report_summary, train

        cfg = _config(args)
        if args.resume and args.out is None and args.resume is True:
            raise AscendError("--resume without a checkpoint path needs --out DIR")
        _check_paths(args)
        compiled = compile_training(cfg)
        if not args.quiet:
            print(report_summary(compiled.report))
        result = train(cfg, out_dir=args.out, resume=args.resume, progress=False if args.quiet else None, compiled=compiled)
        print(result.summary())
    finally:
        log.removeHandler(handler)
        log.propagate = True
        log.setLevel(levels[0])
        logging.getLogger("ascend_mp.train").setLevel(levels[1])


def main(argv: Sequence[str] | None = None) -> None:
    try:
        run(argv)
    except AscendError as e:
        sys.exit(f"{PROG}: error: {e}")
    except OSError as e:
        sys.exit(f"{PROG}: error: {e.filename + ': ' if e.filename else ''}{e.strerror or e}")
    except KeyboardInterrupt:
        sys.exit(f"{PROG}: error: interrupted")


if __name__ == "__main__":
    main()
