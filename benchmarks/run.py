"""`make bench`: measured figures and ratios, each against its budget, in one run on this machine.

Sections (each prints its rows as it finishes):
  precision  the ascend-precision pass in-process on 1k/10k/50k-op chains (time per op, scaling exponent)
  text       parse and print time of the same graphs; ascend-opt end to end on the 10k graph
  step       one training step of the digits MLP 64-128-10 at batch 64, fp32 and mixed, vs plain numpy
  memory     peak live tensor bytes, mixed vs fp32, for the MLP and the CNN
  accuracy   fp32 vs allow_mix_precision + dynamic loss scaling on digits (full training run)

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


SECTIONS: dict[str, Callable[[bool], None]] = {
    "precision": bench_precision,
    "text": bench_text,
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
