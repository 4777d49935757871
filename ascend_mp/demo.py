"""`make demo`: the main job on the built-in examples, as a short guided tour.

1. What each op of the MLP example can run in: its kernels and list kind from the ascend910
   operator table (what the `ascend-attach-caps` pass writes into the IR).
2. The same MLP after `ascend-precision{mode=allow_mix_precision}`, and the report's reasons.
3. Every CANN mode on the CNN example, executed with Ascend numerics against a float64
   reference (what `ascend-run --compare-modes` prints).
4. Training the digits MLP (64-128-10) in fp32 and under allow_mix_precision with dynamic loss
   scaling, and the test accuracy of both (`ascend_mp.train.demo`).

It runs from an installed wheel too: the examples and the digits data are package data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import ascend_mp.examples
from ascend_mp.ir import make_context, read_module
from ascend_mp.passes import PASSES

EXAMPLES = Path(next(iter(ascend_mp.examples.__path__)))
"""The examples folder: `examples/` of a checkout, `ascend_mp/examples/` of an installed wheel."""


def heading(step: int, text: str) -> None:
    print(f"\n== {step}. {text}\n")


def show_capabilities(path: Path) -> None:
    """One line per op: its float kernels and its list kind (the IR carries them as `caps` and `list`)."""
    from ascend_mp.dialects.ascend import AscendOp
    from ascend_mp.dtypes import is_float

    ctx = make_context()
    module = read_module(str(path), ctx)
    PASSES["ascend-attach-caps"]()().apply(ctx, module)
    print(f"// ===== {path.name}: operator capabilities (ascend910 built-in library)")
    print(f"  {'op':<10} {'type':<10} {'list':<6} float kernels (inputs -> output)")
    for op in module.walk():
        if not isinstance(op, AscendOp):
            continue
        caps = op.properties.get("caps")
        kernels = [k for k in getattr(caps, "data", ()) if all(is_float(d) for d in (*k.inputs, *k.outputs) if d)]
        kind = op.properties.get("list")
        name = op.properties.get("name")
        label = getattr(name, "data", "") or "-"
        print(
            f"  {label:<10} {op.name.removeprefix('ascend.'):<10} {str(getattr(kind, 'data', '-')):<6} "
            + " | ".join(str(k) for k in kernels)
        )


def show_mixed_precision(path: Path) -> None:
    from ascend_mp.passes.precision import run_precision

    module = read_module(str(path))
    report = run_precision(module, mode="allow_mix_precision")
    print(f"// ===== {path.name} after ascend-precision{{mode=allow_mix_precision}}, one op a line")
    print("// (the full IR: ascend-opt examples/mlp.mlir --precision_mode=allow_mix_precision)")
    print(op_lines(module))
    print("\nWhy (the precision report):")
    for op in report.ops:
        chosen = ",".join(d or "-" for d in op.chosen.inputs)
        print(f"  {op.name or op.type:<10} {op.type:<10} {op.list_kind:<6} runs in ({chosen}): {op.reason}")
    print(f"  {report.ops_reduced} ops reduced, {report.casts_inserted} casts inserted")


def op_lines(module: ModuleOp) -> str:
    """Each op of each function as `%2 = MatMulV2 'fc1' (f16, f16) -> f16`: the decided dtypes, not the full IR."""
    from xdsl.dialects.func import FuncOp

    from ascend_mp.dtypes import short, tensor_dtype

    def dtypes(values: Sequence[SSAValue]) -> str:
        return ", ".join(short(tensor_dtype(v.type) or "?") for v in values)

    names: dict[SSAValue, str] = {}
    lines: list[str] = []
    for f in module.ops:
        if not isinstance(f, FuncOp):
            continue
        names.update({a: f"%{a.name_hint or i}" for i, a in enumerate(f.args)})
        lines.append(f"  @{f.sym_name.data}({dtypes(f.args)})")
        for op in f.body.ops:
            for r in op.results:
                names[r] = f"%{len(names) - len(f.args)}"
            label = getattr(op.properties.get("name"), "data", "")
            kind = op.name.removeprefix("ascend.").removeprefix("func.")
            head = ", ".join(names[r] for r in op.results)
            uses = ", ".join(names.get(o, "?") for o in op.operands)
            label = f" '{label}'" if label else ""
            lines.append(
                f"    {head + ' = ' if head else ''}{kind}{label} {uses}: ({dtypes(op.operands)}) -> ({dtypes(op.results)})"
            )
    return "\n".join(lines)


def _short_error(error: str, mode: str) -> str:
    """`cnn.mlir:3:3: Conv2D 'conv1' has no kernel ... under <mode> ...; kernels: ...` -> `Conv2D 'conv1' has no ...`."""
    text = error.split("; ")[0].replace(f" under {mode}", "")
    where, sep, rest = text.partition(": ")
    return rest if sep and where.count(":") >= 2 else text


def compare_modes(path: Path) -> None:
    import logging

    import numpy as np
    from xdsl.dialects.func import FuncOp

    from ascend_mp.dialects.ascend import shape_of
    from ascend_mp.interpreter.compare import compare_modes as compare
    from ascend_mp.interpreter.compare import format_table

    module = read_module(str(path))
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(tuple(shape_of(a))).astype(np.float32) for a in func.args]
    print(f"{path.name}, random inputs (seed 0); errors relative to a float64 run of the fp32 graph:\n")
    log = logging.getLogger("ascend_mp")
    level, log.level = log.level, logging.ERROR  # the bf16 modes warn that ascend910 has no bf16 Conv2D/MatMul
    try:
        results = compare(module, func.sym_name.data, inputs)
    finally:
        log.level = level
    # an error without its location, the row's mode and the kernel list (ascend-run --compare-modes shows them all)
    shown = [replace(r, error=_short_error(r.error, r.mode)) if r.error else r for r in results]
    print(format_table(shown))
    print("\n(ascend910 has no bf16 Conv2D or MatMul kernel: the bf16 modes run those ops in another of their kernels)")


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m ascend_mp.demo", description="make demo: a guided tour of ascend-mp on the built-in examples"
    )
    parser.add_argument("--epochs", type=int, default=20, help="training epochs of each run (default 20)")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error(f"--epochs must be positive, got {args.epochs}")
    print(f"ascend-mp demo on the examples in {EXAMPLES}")
    heading(1, "What each op can run in (CANN's operator table: kernels and white/black/gray list)")
    show_capabilities(EXAMPLES / "mlp.mlir")
    heading(2, "The MLP under allow_mix_precision: white ops to fp16, gray ops follow, casts inserted")
    show_mixed_precision(EXAMPLES / "mlp.mlir")
    heading(3, "Every CANN mode on the CNN, executed with Ascend numerics (ascend-run --compare-modes)")
    compare_modes(EXAMPLES / "cnn.mlir")
    heading(4, f"Training the digits MLP, fp32 and mixed precision with dynamic loss scaling ({args.epochs} epochs)")
    from ascend_mp.train import demo

    demo(epochs=args.epochs)


if __name__ == "__main__":
    main()
