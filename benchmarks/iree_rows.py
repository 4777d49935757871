"""The `iree` section of benchmarks/run.py: the examples lowered by convert-ascend-to-linalg and run by
IREE on the CPU (llvm-cpu) beside the interpreter: compile time, CPU time per call, and agreement."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SHAPES = {
    "mlp": [(64, 64), (64, 128), (128,), (128, 10), (10,)],
    "cnn": [(16, 1, 8, 8), (8, 1, 3, 3), (8,), (128, 10), (10,)],
}


def bench_iree(quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    import os
    import tempfile

    old = os.environ.get("ASCEND_MP_CACHE")
    with tempfile.TemporaryDirectory(prefix="ascend-mp-bench-") as cache:
        os.environ["ASCEND_MP_CACHE"] = cache  # compile for real, not from the user's cache
        try:
            _rows(quick, report, row)
        finally:
            if old is None:
                os.environ.pop("ASCEND_MP_CACHE", None)
            else:
                os.environ["ASCEND_MP_CACHE"] = old


def _rows(quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    from ascend_mp.backend.iree import IreeProgram, compile_text, lower_to_text
    from ascend_mp.interpreter import Program
    from ascend_mp.ir import make_context, read_module
    from ascend_mp.passes import PASSES

    print(
        "IREE backend: examples on llvm-cpu (compile wall time without the cache; CPU time per call, interleaved, medians)"
    )
    reps, rounds = (20, 5) if quick else (100, 11)
    rng = np.random.default_rng(0)
    for name, shapes in SHAPES.items():
        args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        module = read_module(str(EXAMPLES / f"{name}.mlir"), make_context())
        PASSES["ascend-precision"]()(mode="allow_mix_precision").apply(make_context(), module)
        start = time.perf_counter()
        compile_text(lower_to_text(module))
        report(row(f"iree {name} allow_mix_precision: lower + iree-compile", time.perf_counter() - start, "s"))
        ours, theirs = IreeProgram.from_module(module), Program.from_module(module)
        a, b = ours.run(name, *args)[0], theirs.run(name, *args)[0]
        err = float(np.abs(a.astype(np.float64) - b).max() / (np.abs(b).max() or 1.0))
        report(row(f"iree {name} allow_mix_precision: max rel. difference from the interpreter", err, ""))
        times: dict[str, list[float]] = {"iree": [], "interpreter": []}
        for _ in range(rounds):
            for label, program in (("iree", ours), ("interpreter", theirs)):
                t = time.process_time()
                for _ in range(reps):
                    program.run(name, *args)
                times[label].append((time.process_time() - t) / reps)
        for label, values in times.items():
            report(
                row(
                    f"iree {name} allow_mix_precision: CPU time per call, {label}",
                    statistics.median(values) * 1e3,
                    "ms",
                )
            )
