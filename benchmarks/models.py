"""`make bench` section `models`: real exported models (models/out, from `make models`).

Per model and exporter: import time, allow_mix_precision pass time, interpreter time in
fp32 and mixed against onnxruntime single-threaded, the fp32 and mixed errors against
onnxruntime (`max|y-r| / max|r|`), and the weight bytes in fp32 and after
allow_mix_precision (which stores the weights used only in fp16 in fp16, as ATC does).
Budgets: import + allow_mix_precision of resnet50 under 10 s; the fp32 interpreter
on resnet50 within 1.5x onnxruntime's single-threaded time;
every model's fp32 output within 1e-5 relative of onnxruntime's; mixed / fp32
interpreter time at most 1.3x for resnet18 and BERT inference.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ZOO = Path(__file__).resolve().parent.parent / "models" / "out"
QUICK = ("lenet", "resnet18", "bert_eager", "lstm")


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()  # CPU seconds, as every figure of `make bench`
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def _paired(a: Callable[[], Any], b: Callable[[], Any], rounds: int) -> tuple[list[float], list[float]]:
    """CPU seconds of `a` and of `b`, called in turn (a, b, a, b, ...) for `rounds` rounds, as
    benchmarks/run.py measures every comparison (onnxruntime runs in this thread: one thread)."""
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(rounds):
        for fn, times in ((a, ta), (b, tb)):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
    return ta, tb


def _err(ys: Any, rs: Any) -> float:
    """`max|y-r| / max|r|` over every float output together (a model may have several: an LSTM's y, h and c)."""
    from ascend_mp.interpreter.compare import relative_errors

    return relative_errors(list(ys), [np.asarray(r) for r in rs])[0]


def _rounding() -> str:
    """How the interpreter rounds float16 results in this (the default) configuration."""
    from ascend_mp.interpreter.compiled import _COMPILED_ON, _KERNEL

    return (
        "(compiled rounding, numba: the default)" if _COMPILED_ON[0] and _KERNEL and _KERNEL[0] else "(numpy rounding)"
    )


def bench_models(quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    """Rows for every model in models/out (a note when there are none)."""
    print("models: real exports (models/out) vs onnxruntime, single-threaded")
    paths = sorted(ZOO.glob("*.onnx")) if ZOO.is_dir() else []
    if quick:
        paths = [p for p in paths if p.name.split(".")[0] in QUICK]
    if not paths:
        print("  no exported models in models/out: run `make models` first")
        return
    import onnxruntime as ort

    from ascend_mp.frontend import import_onnx
    from ascend_mp.interpreter.runner import Program
    from ascend_mp.passes.precision import run_precision

    for path in paths:
        name, exporter = path.name.split(".")[:2]
        label = f"{name} ({exporter})"
        saved = np.load(ZOO / f"{name}.inputs.npz")
        t_import, module = _best(lambda: import_onnx(str(path)), 1)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        feed = {i.name: saved[i.name] for i in session.get_inputs()}  # token ids and masks too, in graph order
        x = list(feed.values())
        fp32 = Program.from_module(module)
        start = time.process_time()
        y = fp32.run("main", *x)
        t_once = time.process_time() - start
        ref = session.run(None, feed)  # every output (a model may have several)
        # Rounds enough to span about half a second (a sub-millisecond model's single calls are noise: BERT-tiny's
        # mixed / fp32 ratio swung 1.14-1.43 between runs over 3); resnet50 carries the 1.5x budget: 15.
        pairs = 15 if name == "resnet50" else max(3, min(101, int(0.5 / max(t_once, 1e-4))))
        times_fp32, times_ort = _paired(lambda: fp32.run("main", *x), lambda: session.run(None, feed), pairs)
        t_fp32, t_ort = min(times_fp32), min(times_ort)
        ratio_fp32 = statistics.median(a / b for a, b in zip(times_fp32, times_ort))  # per-round ratios
        exact = None
        if name == "resnet50":  # the same graph evaluated in float64 (reference mode)
            exact = Program.from_module(module, reference=True).run("main", *(a.astype(np.float64) for a in x))
        start = time.perf_counter()
        stored = run_precision(module, mode="allow_mix_precision")  # stores fp16-only weights in fp16
        t_pass = time.perf_counter() - start
        mixed = Program.from_module(
            module
        )  # (fp32 was compiled before the pass changed the module: it still runs fp32)
        y_mixed = mixed.run("main", *x)
        times_mixed, times_fp32_again = _paired(lambda: mixed.run("main", *x), lambda: fp32.run("main", *x), pairs)
        t_mixed = min(times_mixed)
        ratio_mixed = statistics.median(a / b for a, b in zip(times_mixed, times_fp32_again))
        budget_compile = 10.0 if name == "resnet50" else None
        budget_interp = {"resnet50": 1.5, "bert_eager": 3.0, "bert_sdpa": 3.0}.get(name)  # BERT-tiny: per-op overhead
        budget_mixed = 1.3 if name in ("resnet18", "bert_eager", "bert_sdpa") else None
        report(row(f"{label}: import", t_import, "s"))
        report(row(f"{label}: import + allow_mix_precision", t_import + t_pass, "s", budget_compile))
        report(row(f"{label}: onnxruntime (1 thread)", t_ort * 1e3, "ms"))
        report(
            row(
                f"{label}: interpreter fp32 / onnxruntime",
                ratio_fp32,
                "x",
                budget_interp,
                note=f"(median of {pairs} paired CPU-time rounds; best {t_fp32 * 1e3:.1f} ms vs {t_ort * 1e3:.1f} ms)",
            )
        )
        report(row(f"{label}: interpreter mixed / onnxruntime", t_mixed / t_ort, "x", note=f"({t_mixed * 1e3:.1f} ms)"))
        report(
            row(
                f"{label}: interpreter mixed / fp32",
                ratio_mixed,
                "x",
                budget_mixed,
                note=f"(median of {pairs} paired CPU-time rounds; {_rounding()[1:]}",
            )
        )
        # The zoo tolerance (docs/design.md §10): 1e-5, or twice onnxruntime's own spread between its optimisation
        # levels where that is larger (the deep ResNets), measured here on the same inputs.
        plain = ort.SessionOptions()
        plain.intra_op_num_threads = plain.inter_op_num_threads = 1
        plain.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        unoptimised = ort.InferenceSession(str(path), plain, providers=["CPUExecutionProvider"]).run(None, feed)
        spread = _err(unoptimised, ref)
        report(
            row(
                f"{label}: fp32 error vs onnxruntime",
                _err(y, ref),
                "rel",
                max(1e-5, 2 * spread),
                note=f"(budget: 1e-5 or twice onnxruntime's own spread between its optimisation levels, {spread:.2g})",
            )
        )
        if exact is not None:  # the 1e-5 budget against onnxruntime's own distance from exact (README)
            report(row(f"{label}: fp32 error vs float64 (same graph)", _err(y, exact), "rel"))
            report(row(f"{label}: onnxruntime error vs float64 (same graph)", _err(ref, exact), "rel"))
        report(row(f"{label}: allow_mix_precision error vs onnxruntime", _err(y_mixed, ref), "rel"))
        report(
            row(
                f"{label}: weight MB fp32 -> mixed (fp16 stored)",
                stored.weight_bytes_after / 1e6,
                "MB",
                note=f"(from {stored.weight_bytes_before / 1e6:.2f} MB, {stored.constants_stored_low} constants stored in fp16)",
            )
        )
