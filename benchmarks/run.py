"""`make bench`: measured figures and ratios, each against its budget, in one run on this machine.

Sections (each prints its rows as it finishes):
  precision  the ascend-precision pass in-process on 1k/10k/50k-op chains (time per op, scaling exponent)
  text       parse and print time of the same graphs; ascend-opt end to end on the 10k graph
  step       one training step of the digits MLP 64-128-10 at batch 64, fp32 and mixed, vs plain numpy
  memory     peak live tensor bytes, mixed vs fp32, for the MLP and the CNN
  accuracy   fp32 vs allow_mix_precision + dynamic loss scaling on digits (full training run)
  models     real ONNX exports (models/out): import, pass and interpreter time vs onnxruntime, errors, weight bytes

    python benchmarks/run.py [--only SECTION ...] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.graphs import chain_module, count_ops  # noqa: E402

BIN = Path(sys.executable).parent
SMALL = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


@dataclass
class Row:
    name: str
    value: float
    unit: str
    budget: float | None = None
    lower_is_better: bool = True
    note: str = ""

    def verdict(self) -> str:
        if self.budget is None:
            return ""
        ok = self.value <= self.budget if self.lower_is_better else self.value >= self.budget
        if ok:
            return "met"
        if self.lower_is_better:
            return f"NOT met ({self.value / self.budget:.2f}x the budget)"
        return f"NOT met (short by {self.budget - self.value:.3g} {self.unit})"


ROWS: list[Row] = []


def report(row: Row) -> None:
    ROWS.append(row)
    budget = "" if row.budget is None else f"{'<=' if row.lower_is_better else '>='} {row.budget:g} {row.unit}"
    print(f"  {row.name:<58} {row.value:>10.4g} {row.unit:<8} {budget:<16} {row.verdict()} {row.note}", flush=True)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# --------------------------------------------------------------------------------------


def bench_precision(quick: bool) -> None:
    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES

    print("precision pass (in-process, allow_mix_precision)")
    sizes = (1000, 10000) if quick else (1000, 10000, 50000)
    ctx = make_context()
    pass_ = PASSES["ascend-precision"]()(mode="allow_mix_precision")
    times: dict[int, float] = {}
    for n in sizes:
        def once() -> None:
            module = chain_module(n)
            start = time.perf_counter()
            pass_.apply(ctx, module)
            once.elapsed = time.perf_counter() - start  # type: ignore[attr-defined]

        best = math.inf
        for _ in range(3 if n < 50000 else 2):
            once()
            best = min(best, once.elapsed)  # type: ignore[attr-defined]
        times[n] = best
        report(Row(f"precision pass, {n} ops: time per op", best / n * 1e6, "us/op"))
        report(Row(f"precision pass, {n} ops: total", best, "s", 2.0 if n == 50000 else None))
    ns = sorted(times)
    for a, b in zip(ns, ns[1:]):
        exponent = math.log(times[b] / times[a]) / math.log(b / a)
        report(Row(f"scaling exponent {a} -> {b} ops", exponent, "", 1.1))


def bench_text(quick: bool) -> None:
    from ascend_mp.ir import make_context, parse_module, print_module

    print("text: parse and print (same graphs), ascend-opt end to end")
    ctx = make_context()
    for n in (1000, 10000) if quick else (1000, 10000, 50000):
        module = chain_module(n)
        text = print_module(module)
        report(Row(f"print {n} ops", best_of(lambda: print_module(module), 2), "s"))
        report(Row(f"parse + verify {n} ops", best_of(lambda: parse_module(text, "bench", ctx), 2 if n < 50000 else 1), "s"))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "chain10k.mlir"
        src.write_text(print_module(chain_module(10000)))
        cmd = [str(BIN / "ascend-opt"), str(src), "--precision_mode=allow_mix_precision", "-o", str(Path(tmp) / "out.mlir")]
        elapsed = best_of(lambda: subprocess.run(cmd, check=True), 2)
        report(Row("ascend-opt end to end, 10k ops, allow_mix_precision", elapsed, "s", 5.0))
        small = Path(tmp) / "small.mlir"
        small.write_text(SMALL)
        t_xdsl = best_of(lambda: subprocess.run([str(BIN / "xdsl-opt"), str(small)], check=True, capture_output=True), 7)
        t_ascend = best_of(lambda: subprocess.run([str(BIN / "ascend-opt"), str(small)], check=True, capture_output=True), 7)
        report(Row("startup on a small file: ascend-opt minus xdsl-opt", t_ascend - t_xdsl, "s", 0.1, note=f"(xdsl-opt {t_xdsl:.3f} s)"))
        run_tool = BIN / "ascend-run"
        if run_tool.exists():
            t_run = best_of(lambda: subprocess.run([str(run_tool), str(small), "--seed", "0"], check=True, capture_output=True), 7)
            report(Row("startup on a small file: ascend-run minus ascend-opt", t_run - t_ascend, "s", 0.15))


def _mlp_state(cfg_kwargs: dict[str, object]):  # noqa: ANN202
    from ascend_mp.passes.loss_scale import initial_state
    from ascend_mp.train import TrainConfig, compile_training

    cfg = TrainConfig(model="mlp", batch=64, optimizer="sgd", lr=0.05, **cfg_kwargs)  # type: ignore[arg-type]
    compiled = compile_training(cfg)
    return compiled, initial_state(compiled.step_fn, compiled.model.init_params(0))


def numpy_mlp_step(w1, b1, w2, b2, x, y, lr):  # noqa: ANN001, ANN201
    """The same SGD step of the 64-128-10 MLP (mean softmax cross-entropy) in plain numpy, fp32."""
    h = x @ w1 + b1
    a = np.maximum(h, 0)
    z = a @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    loss = np.mean(-np.sum(y * np.log(p), axis=1))
    dz = (p - y) / x.shape[0]
    dw2, db2 = a.T @ dz, dz.sum(axis=0)
    da = dz @ w2.T
    dh = da * (h > 0)
    dw1, db1 = x.T @ dh, dh.sum(axis=0)
    return w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2, loss


def bench_step(quick: bool) -> None:
    print("training step: digits MLP 64-128-10, batch 64, SGD (interpreter vs plain numpy)")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    reps = 50 if quick else 300
    timings: dict[str, float] = {}
    for label, kwargs in (("fp32", {"precision_mode": None, "loss_scale": "none"}),
                          ("mixed", {"precision_mode": "allow_mix_precision", "loss_scale": "dynamic"})):
        compiled, state = _mlp_state(kwargs)
        args = [*state.args(), x, y, state.loss_scale, state.good_steps, state.step]
        run = compiled.program.run
        timings[label] = best_of(lambda: [run("train_step", *args) for _ in range(reps)], 5) / reps
        n_ops = len(list(compiled.step_fn.body.ops))
        report(Row(f"interpreter step, {label} ({n_ops} ops in @train_step)", timings[label] * 1e3, "ms"))
    compiled, state = _mlp_state({"precision_mode": None, "loss_scale": "none"})
    w1, b1, w2, b2 = state.params
    lr = np.float32(0.05)
    timings["numpy"] = best_of(lambda: [numpy_mlp_step(w1, b1, w2, b2, x, y, lr) for _ in range(reps)], 5) / reps
    report(Row("plain numpy step, fp32", timings["numpy"] * 1e3, "ms"))
    report(Row("overhead: interpreter fp32 step / numpy step", timings["fp32"] / timings["numpy"], "x", 1.3))
    report(Row("mixed step / fp32 step", timings["mixed"] / timings["fp32"], "x", 1.5))
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        print("  (PyTorch is not installed: no CPU eager comparison)")
        return
    tw = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
    tx, ty = torch.tensor(x), torch.tensor(y)

    def torch_step() -> None:
        logits = torch.relu(tx @ tw[0] + tw[1]) @ tw[2] + tw[3]
        loss = torch.nn.functional.cross_entropy(logits, ty.argmax(1))
        grads = torch.autograd.grad(loss, tw)
        with torch.no_grad():
            for p, g in zip(tw, grads):
                p.sub_(0.05 * g)

    t = best_of(lambda: [torch_step() for _ in range(reps)], 5) / reps
    report(Row("PyTorch CPU eager step, fp32 (for reference)", t * 1e3, "ms"))


def bench_memory(quick: bool) -> None:
    from ascend_mp.interpreter import Program
    from ascend_mp.ir import read_module
    from ascend_mp.passes.loss_scale import initial_state
    from ascend_mp.passes.precision import run_precision
    from ascend_mp.train import TrainConfig, compile_training

    print("memory: peak bytes of live tensors, allow_mix_precision vs fp32")
    rng = np.random.default_rng(0)
    examples = Path(__file__).resolve().parent.parent / "examples"
    for name, fn in (("mlp", "mlp"), ("cnn", "cnn")):
        peaks = {}
        for label, mode in (("fp32", None), ("mixed", "allow_mix_precision")):
            module = read_module(str(examples / f"{name}.mlir"))
            if mode:
                run_precision(module, mode=mode)
            prog = Program.from_module(module)
            args = [rng.standard_normal(s.shape).astype(np.float32) for s in prog.signature(fn)[0]]
            prog.run(fn, *args, track_memory=True)
            peaks[label] = prog.peak_bytes
        report(Row(f"{name} forward (examples/{name}.mlir): mixed / fp32 peak", peaks["mixed"] / peaks["fp32"], "x", 0.6,
                   note=f"({peaks['fp32']} -> {peaks['mixed']} bytes)"))
    for model in ("mlp", "cnn"):
        peaks = {}
        for label, kwargs in (("fp32", {"precision_mode": None, "loss_scale": "none"}),
                              ("mixed", {"precision_mode": "allow_mix_precision", "loss_scale": "dynamic"})):
            compiled = compile_training(TrainConfig(model=model, batch=64, **kwargs))  # type: ignore[arg-type]
            state = initial_state(compiled.step_fn, compiled.model.init_params(0))
            specs = compiled.program.signature("train_step")[0]
            n = len(state.args())
            data = [rng.standard_normal(s.shape).astype(np.float32) for s in specs[n : n + 2]]
            compiled.program.run("train_step", *state.args(), *data, state.loss_scale, state.good_steps, state.step, track_memory=True)
            peaks[label] = compiled.program.peak_bytes
        report(Row(f"{model} training step (batch 64): mixed / fp32 peak", peaks["mixed"] / peaks["fp32"], "x", 0.6,
                   note=f"({peaks['fp32']} -> {peaks['mixed']} bytes)"))


def bench_accuracy(quick: bool) -> None:
    from ascend_mp.train import accuracy_comparison

    print("accuracy: digits MLP, fp32 vs allow_mix_precision + dynamic loss scaling (seeds 0-2, 30 epochs)")
    start = time.perf_counter()
    result = accuracy_comparison(seeds=(0,) if quick else (0, 1, 2), epochs=5 if quick else 30)
    report(Row("test accuracy, fp32", 100 * result["fp32_accuracy"], "%"))
    report(Row("test accuracy, mixed", 100 * result["mixed_accuracy"], "%"))
    report(Row("|fp32 - mixed| accuracy", abs(result["difference_pt"]), "pt", 0.5,
               note=f"(skipped steps {result['mixed_skipped_steps']}, final scales {result['mixed_final_scale']}, {time.perf_counter() - start:.0f} s)"))


def bench_models(quick: bool) -> None:
    from benchmarks.models import bench_models as run  # real exports, when `make models` made them

    run(quick, report, Row)


SECTIONS: dict[str, Callable[[bool], None]] = {
    "precision": bench_precision,
    "text": bench_text,
    "step": bench_step,
    "memory": bench_memory,
    "accuracy": bench_accuracy,
    "models": bench_models,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=list(SECTIONS), help="run only these sections")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = parser.parse_args()
    print(f"ascend-mp benchmarks on {os.cpu_count()} CPU(s); budgets from issue 6; times are best-of-N wall clock")
    failed: list[str] = []
    for name in args.only or SECTIONS:
        try:
            SECTIONS[name](args.quick)
        except Exception as e:  # a section that cannot run says why; the others still run
            failed.append(name)
            print(f"  section {name} could not run: {type(e).__name__}: {e}")
    missed = [r for r in ROWS if r.verdict().startswith("NOT")]
    print(f"\n{len(ROWS)} figures, {sum(1 for r in ROWS if r.budget is not None)} with budgets, {len(missed)} budgets not met"
          + (f", sections that could not run: {', '.join(failed)}" if failed else ""))
    for r in missed:
        print(f"  NOT met: {r.name}: {r.value:.4g} {r.unit} (budget {r.budget:g})")


if __name__ == "__main__":
    main()
