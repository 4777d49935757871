"""Kernel rows of `make bench` (section `kernels`): Erf per element against numpy's tanh, and a ConvNeXt
block (depthwise 7x7, LayerNorm, exact GELU through Erf) through the interpreter against onnxruntime,
single-threaded, CPU time in paired rounds."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ERF_BUDGET = 3.0
"""Erf per element at most 3x numpy's float32 tanh (the exact GELU's kernel, not its bottleneck)."""


def _cpu_time(fn: Callable[[], Any], reps: int) -> float:
    start = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - start) / reps


def _paired(a: Callable[[], Any], b: Callable[[], Any], rounds: int, reps: int) -> list[float]:
    """Per-round ratios a/b of CPU seconds per call (each round measures both, in turn)."""
    return [_cpu_time(a, reps) / _cpu_time(b, reps) for _ in range(rounds)]


def bench_kernels(quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    from ascend_mp.interpreter import Program
    from ascend_mp.interpreter.kernels.base import make_kernel
    from ascend_mp.interpreter.spec import OpSpec

    print("kernels: Erf vs numpy tanh; a ConvNeXt block vs onnxruntime (single-threaded)")
    x = np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32) * 2
    f32 = np.dtype(np.float32)
    erf = make_kernel(OpSpec("Erf", (f32,), (f32,), (x.shape,), (x.shape,)))
    erf(x)  # loads the compiled kernel
    rounds = 5 if quick else 11
    ratios = _paired(lambda: erf(x), lambda: np.tanh(x), rounds, 10)
    report(row("Erf per element / numpy tanh (f32, 1M elements)", statistics.median(ratios), "x", ERF_BUDGET))

    import onnxruntime as ort

    from ascend_mp.frontend import import_onnx
    from benchmarks.onnx_blocks import convnext_block

    model, inputs = convnext_block()
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    program = Program.from_module(import_onnx(model))
    args = list(inputs.values())
    (y,), (ref,) = program.run("main", *args), session.run(None, inputs)
    err = float(np.abs(y - ref).max() / np.abs(ref).max())
    ratios = _paired(lambda: program.run("main", *args), lambda: session.run(None, inputs), rounds, 3)
    report(
        row(
            "ConvNeXt block 96x56x56: interpreter fp32 / onnxruntime",
            statistics.median(ratios),
            "x",
            note=f"(error vs onnxruntime {err:.1e})",
        )
    )
