"""`make demo`: the main job on the built-in examples.

1. Compiles `examples/*.mlir` and prints each module with its ops' dtype capabilities
   and list kinds (the `ascend-attach-caps` pass), then the same MLP after
   `ascend-precision{mode=allow_mix_precision}` with its precision report summary.
2. Trains the digits MLP (64-128-10) under allow_mix_precision with dynamic loss
   scaling (asked for explicitly: ascend-train's default mode is allow_fp32_to_fp16, as
   CANN's for training) and prints fp32-vs-mixed test accuracy (`ascend_mp.train.demo`).

It runs from an installed wheel too: the examples and the digits data are package data.
"""

from __future__ import annotations

from pathlib import Path

import ascend_mp.examples
from ascend_mp.ir import make_context, print_module, read_module
from ascend_mp.passes import PASSES

EXAMPLES = Path(next(iter(ascend_mp.examples.__path__)))
"""The examples folder: `examples/` of a checkout, `ascend_mp/examples/` of an installed wheel."""


def show_capabilities(path: Path) -> None:
    ctx = make_context()
    module = read_module(str(path), ctx)
    PASSES["ascend-attach-caps"]()().apply(ctx, module)
    print(f"// ===== {path.name}: operator capabilities (ascend910 built-in library)")
    print(print_module(module))


def show_mixed_precision(path: Path) -> None:
    from ascend_mp.passes.precision import run_precision

    module = read_module(str(path))
    report = run_precision(module, mode="allow_mix_precision")
    print(f"// ===== {path.name} after ascend-precision{{mode=allow_mix_precision}}")
    print(print_module(module))
    for op in report.ops:
        chosen = ",".join(d or "-" for d in op.chosen.inputs)
        print(f"//   {op.name or op.type:<12} {op.type:<10} {op.list_kind:<6} -> ({chosen}) {op.reason}")
    print(f"//   {report.ops_reduced} ops reduced, {report.casts_inserted} casts inserted\n")


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ascend_mp.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20, help="training epochs of each run (default 20)")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error(f"--epochs must be positive, got {args.epochs}")
    for path in sorted(EXAMPLES.glob("*.mlir")):
        show_capabilities(path)
    show_mixed_precision(EXAMPLES / "mlp.mlir")
    from ascend_mp.train import demo

    demo(epochs=args.epochs)


if __name__ == "__main__":
    main()
