"""`ascend-train`'s model and data options: `--model FILE.onnx`, `--data`, `--val`,
`--val-split`, `--output` and `--save-onnx` (the rest of the command is `ascend_train.py`)."""

from __future__ import annotations

import argparse
from typing import Any

from ascend_mp.errors import AscendError
from ascend_mp.tools.cli import UsageError

BUILT_IN = ("mlp", "cnn")


def model_argument(text: str) -> str:
    """`--model`: a built-in model or an ONNX model (`.onnx`, or a file that reads as one, as every tool takes it)."""
    from ascend_mp.frontend.tools import is_onnx

    if text in BUILT_IN or text.lower().endswith(".onnx") or is_onnx(text):
        return text
    raise argparse.ArgumentTypeError(
        f"expected {', '.join(BUILT_IN)} or an ONNX model file (.onnx, or a file that reads as one), got '{text}'"
    )


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model and data (default: the digits data set)")
    g.add_argument(
        "--data", metavar="NPZ", help="training data: arrays x and y (integer classes), or <input name> and labels"
    )
    g.add_argument("--val", metavar="NPZ", help="validation data, the same keys (default: --val-split of --data)")
    g.add_argument(
        "--val-split", type=_fraction, metavar="F", help="fraction of --data held out for validation (default 0.1)"
    )
    g.add_argument("--output", metavar="NAME", help="ONNX model: the output holding the logits (default the first)")
    g.add_argument("--save-onnx", metavar="FILE", help="ONNX model: write it with the trained parameters")


def is_onnx(args: argparse.Namespace) -> bool:
    return args.model not in BUILT_IN


def check(args: argparse.Namespace) -> None:
    """Usage errors between the options, before anything is read."""
    if args.val is not None and args.val_split is not None:
        raise UsageError("--val and --val-split exclude each other")
    if args.data is None:
        for flag, value in (("--val", args.val), ("--val-split", args.val_split)):
            if value is not None:
                raise UsageError(f"{flag} needs --data")
        if is_onnx(args):
            raise UsageError(f"--model {args.model} needs --data NPZ (its training data)")
    if not is_onnx(args):
        for flag, value in (("--output", args.output), ("--save-onnx", args.save_onnx)):
            if value is not None:
                raise UsageError(f"{flag} needs --model FILE.onnx")
    if args.demo and (args.data is not None or is_onnx(args)):
        raise UsageError("--demo trains the digits MLP: it takes no --data or ONNX --model")


def prepare(args: argparse.Namespace, batch: int, subset: int | None, seed: int) -> tuple[Any, Any]:
    """(model, data) for `train`; (None, None) for a built-in model on digits."""
    if args.data is None:
        return None, None
    from ascend_mp.train.data import Dataset, builder_for, load_npz

    if is_onnx(args):
        from ascend_mp.train.data import Features, example_shape
        from ascend_mp.train.onnx_model import OnnxModel, load_proto, model_inputs

        names = model_inputs(load_proto(args.model))
        data = load_npz(args.data, args.val, args.val_split, input_names=names, seed=seed)
        shapes = example_shape(data.x_train)
        model = OnnxModel(
            args.model, batch, example_shape=dict(shapes) if len(names) > 1 else shapes, output=args.output
        )
        if data.num_classes > model.num_classes:
            raise AscendError(
                f"{args.data}: the labels go up to class {data.num_classes - 1}, {args.model} gives {model.num_classes} classes"
            )
        import numpy as np

        from ascend_mp.dtypes import NUMPY

        def conform(x: Any) -> Any:
            """The data cast to the model's input dtypes (float data for an integer input is refused)."""
            arrays = x.arrays if isinstance(x, Features) else {model.input_name: x}
            out = {}
            for name, a in arrays.items():
                want = NUMPY[model.input_dtypes[name]]
                if (a.dtype.kind == "f") != (np.dtype(want).kind == "f"):
                    what = "" if len(arrays) == 1 else f" for input '{name}'"
                    raise AscendError(
                        f"{args.data}: {args.model} takes {model.input_dtypes[name]} inputs{what}, the data holds {a.dtype}"
                    )
                out[name] = a.astype(want)
            return Features(out) if isinstance(x, Features) else out[model.input_name]

        data = Dataset(conform(data.x_train), data.y_train, conform(data.x_test), data.y_test, model.num_classes)
    else:
        data = load_npz(args.data, args.val, args.val_split, seed=seed)
        model, data = builder_for(args.model, data)
    if subset is not None:
        data = Dataset(data.x_train[:subset], data.y_train[:subset], data.x_test, data.y_test, data.num_classes)
    return model, data


def finish(args: argparse.Namespace, model: Any, params: list[Any]) -> str | None:
    """`--save-onnx`: write the trained model; returns the line to print."""
    if args.save_onnx is None or model is None:
        return None
    model.save_onnx(params, args.save_onnx)
    return f"wrote {args.save_onnx}"
