"""The `iree` section of benchmarks/run.py: the examples lowered by convert-ascend-to-linalg and run by
IREE on the CPU (llvm-cpu) beside the interpreter: compile time, CPU time per call, and agreement.

Then the zoo (models/out, from `make models`; skipped, saying so, without it): BERT-tiny (bert_sdpa) and
resnet50 (dynamo exports) through our lowering in fp32 and under allow_mix_precision, beside IREE's own ONNX
import (`iree-import-onnx`) compiled with the same flags (`FLAGS`: data tiling and im2col, the best found) and
onnxruntime, all single-threaded (IREE's `local-sync` driver, one onnxruntime thread). Budgets: BERT through
our lowering at most 1.0x onnxruntime; resnet50 through our lowering at most 1.0x IREE's own import."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ZOO = Path(__file__).resolve().parent.parent / "models" / "out"
FLAGS = ("--iree-opt-data-tiling", "--iree-global-opt-use-im2col-for-convs")
"""Extra `iree-compile` flags of the zoo rows, for our lowering and IREE's own import alike."""
BUDGETS = {"bert_sdpa": ("onnxruntime", 1.0), "resnet50": ("IREE's own import", 1.0)}
"""model -> (what our fp32 lowering is compared with, the budget on that ratio)."""
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
            _zoo_rows(quick, report, row)
        finally:
            if old is None:
                os.environ.pop("ASCEND_MP_CACHE", None)
            else:
                os.environ["ASCEND_MP_CACHE"] = old


def _rows(quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    from ascend_mp.backend.iree import IreeProgram, compile_module
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
        compile_module(module)
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


def _sync(vmfb: bytes, name: str) -> Callable[..., Any]:
    """Function `name` of a compiled module on IREE's single-threaded `local-sync` driver, numpy in and out."""
    import iree.runtime as rt

    fn = rt.load_vm_flatbuffer(vmfb, driver="local-sync")[name]

    def call(*args: Any) -> Any:
        out = fn(*args)
        return np.asarray((out[0] if isinstance(out, (tuple, list)) else out).to_host())

    return call


def _own_import(path: Path) -> str:
    """IREE's own import of an ONNX file (`iree-import-onnx`), as MLIR text."""
    import subprocess
    import sys
    import tempfile

    tool = Path(sys.executable).with_name("iree-import-onnx")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "model.mlir"
        subprocess.run([str(tool), str(path), "-o", str(out)], check=True, capture_output=True)
        return out.read_text()


def _zoo_rows(quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    from ascend_mp.backend.iree import compile_module, compile_text
    from ascend_mp.frontend import import_onnx
    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES

    paths = {name: ZOO / f"{name}.dynamo.onnx" for name in BUDGETS}
    missing = [p.name for p in paths.values() if not p.is_file()]
    if missing:
        print(f"  IREE zoo rows skipped: no {', '.join(missing)} in models/out (run `make models`)")
        return
    import onnxruntime as ort

    print(
        f"IREE on the zoo: our lowering vs IREE's own ONNX import vs onnxruntime, one thread each; iree-compile"
        f" flags {' '.join(FLAGS)}. This CPU has no float16 arithmetic (F16C converts only): IREE computes f16"
        " ops in f32 between conversions, so mixed precision halves the weights' bytes but adds conversions"
    )
    for name, path in paths.items():
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        saved = np.load(ZOO / f"{name}.inputs.npz")
        args = [saved[i.name] for i in session.get_inputs()]
        feed = {i.name: a for i, a in zip(session.get_inputs(), args)}
        ref = session.run(None, feed)[0]
        module = import_onnx(str(path))
        calls: dict[str, Callable[[], Any]] = {"onnxruntime": lambda: session.run(None, feed)}
        for label, mode in (("fp32", None), ("mixed", "allow_mix_precision")):
            decided = module.clone()
            if mode is not None:
                PASSES["ascend-precision"]()(mode=mode).apply(make_context(), decided)
            start = time.perf_counter()
            fn = _sync(compile_module(decided, extra=FLAGS), "main")
            report(row(f"iree {name} ours {label}: lower + iree-compile", time.perf_counter() - start, "s"))
            report(row(f"iree {name} ours {label}: max rel. error vs onnxruntime", _err(fn(*args), ref), ""))
            calls[f"ours {label}"] = lambda fn=fn: fn(*args)
        start = time.perf_counter()
        theirs = _sync(compile_text(_own_import(path), extra=FLAGS), "main_graph")
        report(row(f"iree {name} IREE's own import: iree-import-onnx + iree-compile", time.perf_counter() - start, "s"))
        report(row(f"iree {name} IREE's own import: max rel. error vs onnxruntime", _err(theirs(*args), ref), ""))
        calls["IREE's own import"] = lambda: theirs(*args)
        times = _interleaved(calls, 3 if quick else 7, 1 if quick else 3)
        for label, t in times.items():
            report(row(f"iree {name} {label}: CPU time per call", t * 1e3, "ms"))
        versus, budget = BUDGETS[name]
        report(row(f"iree {name} ours fp32 / {versus}", times["ours fp32"] / times[versus], "x", budget))
        report(row(f"iree {name} ours mixed / ours fp32", times["ours mixed"] / times["ours fp32"], "x"))


def _err(y: Any, r: Any) -> float:
    y64, r64 = np.asarray(y, np.float64), np.asarray(r, np.float64)
    return float(np.abs(y64 - r64).max() / (np.abs(r64).max() or 1.0))


def _interleaved(calls: dict[str, Callable[[], Any]], rounds: int, reps: int) -> dict[str, float]:
    """Median CPU seconds per call of each of `calls`, called in turn for `rounds` rounds of `reps` calls."""
    for fn in calls.values():
        fn()  # warm up
    times: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(rounds):
        for label, fn in calls.items():
            t = time.process_time()
            for _ in range(reps):
                fn()
            times[label].append((time.process_time() - t) / reps)
    return {label: statistics.median(v) for label, v in times.items()}
