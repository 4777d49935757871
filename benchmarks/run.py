"""`make bench`: measured figures and ratios, each against its budget, in one run on this machine.

Budgets are the project's performance targets (stated with each row below). Every comparison is
measured paired and interleaved in the same run (A, B, A, B, ...) and reported as the median; times
are CPU seconds of this process (or of the child process for the command-line tools), so the
figures hold up on a machine other work shares.

A full run (no `--only`, no `--quick`) also writes docs/performance.md: a short header (host, date,
command, commit) and the table of every figure with its budget and verdict. The page is generated;
do not edit it by hand. Runs of some sections (`--only`) or smoke runs (`--quick`) leave it alone.

Sections (each prints its rows as it finishes):
  precision  the ascend-precision pass in-process on 10k/50k-op chains: time, us/op, ratio to a bare
             walk() of the same module, scaling exponent; on imported bert_sdpa and resnet50: us/op
             without the weight conversion, the conversion's MB/s, the whole pass
  text       parse and print; ascend-opt end to end on 10k ops vs plain xdsl-opt parse+print
  step       one training step of the digits MLP (batch 64, momentum), fp32 vs mixed with
             dynamic loss scaling (default: compiled rounding when numba is installed, and numpy
             rounding only); the fp32 step vs plain numpy
  memory     peak and activation bytes (live tensors, arguments excluded), mixed vs fp32
  models     imported real models (benchmarks/models.py, when present)
  accuracy   fp32 vs allow_mix_precision + dynamic loss scaling on digits (full training runs)
  archs      ResNet-style CNN and transformer (benchmarks/train_archs.py): mixed / fp32 step time and
             activations, the transformer's step vs PyTorch eager when the torch venv exists
  train-torch  the torch-exported CNN and transformer (test/train/data) trained by ascend-train, fp32 vs mixed

    python benchmarks/run.py [--only SECTION ...] [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

# Single-threaded numeric kernels, as the comparisons assume (onnxruntime runs with one thread; the
# plain-numpy step is one thread too): set before numpy loads its BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.graphs import chain_module  # noqa: E402

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "performance.md"
"""The generated performance page: written by a full run only."""
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
    section: str = field(default="", compare=False)

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
SECTION = [""]  # the section now running (each row records it)


def budget_text(row: Row) -> str:
    return "" if row.budget is None else f"{'<=' if row.lower_is_better else '>='} {row.budget:g} {row.unit}"


def report(row: Row) -> None:
    row.section = row.section or SECTION[0]
    ROWS.append(row)
    print(
        f"  {row.name:<62} {row.value:>10.4g} {row.unit:<6} {budget_text(row):<14} {row.verdict()} {row.note}",
        flush=True,
    )


def cpu() -> float:
    """CPU seconds of this process (all its threads)."""
    return time.process_time()


def child_cpu(cmd: Sequence[str]) -> float:
    """CPU seconds (user + system) that running `cmd` to completion costs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(list(cmd), check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(fns: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Call each measurement once per round, in turn (A, B, A, B, ...); each returns its seconds."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            times[k].append(fn())
    return times


def median_ratio(a: list[float], b: list[float]) -> float:
    """The median of the per-round ratios a/b (paired: each round's two figures share the machine's state)."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def timed(fn: Callable[[], object], reps: int = 1) -> Callable[[], float]:
    """A measurement: CPU seconds per call of `fn`, over `reps` calls."""

    def measure() -> float:
        start = cpu()
        for _ in range(reps):
            fn()
        return (cpu() - start) / reps

    return measure


# --------------------------------------------------------------------------------------


def bench_precision(quick: bool) -> None:
    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES

    print(
        "precision pass (in-process, allow_mix_precision), interleaved with a bare walk() of the same module and "
        "across the sizes"
    )
    sizes = (1000, 10000) if quick else (10000, 50000)
    ctx = make_context()
    pass_ = PASSES["ascend-precision"]()(mode="allow_mix_precision")
    pass_times: dict[int, list[float]] = {n: [] for n in sizes}
    walk_times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(7):  # A, B, A, B, ...: a drift in the machine's speed moves both sizes alike
        for n in sizes:
            module = chain_module(n)  # a fresh module each round (not timed)
            start = cpu()
            for _op in module.walk():
                pass
            walk_times[n].append(cpu() - start)
            start = cpu()
            pass_.apply(ctx, module)
            pass_times[n].append(cpu() - start)
    medians = {n: statistics.median(pass_times[n]) for n in sizes}
    for n in sizes:
        big = n == max(sizes)
        report(Row(f"precision pass, {n} ops: total", medians[n], "s", 0.4 if n == 50000 else None))
        report(Row(f"precision pass, {n} ops: time per op", medians[n] / n * 1e6, "us/op", 8.0 if big else None))
        report(
            Row(
                f"precision pass, {n} ops: / bare walk() of the same module",
                median_ratio(pass_times[n], walk_times[n]),
                "x",
                8.0 if big else None,
            )
        )
    a, b = sizes
    report(
        Row(
            f"precision pass scaling exponent {a} -> {b} ops",
            math.log(median_ratio(pass_times[b], pass_times[a])) / math.log(b / a),
            "",
            1.05,
            note="(from the median of the rounds' paired time ratios)",
        )
    )
    from benchmarks.precision_imported import bench_imported  # the pass on imported models, a process each

    bench_imported(report, Row)


def bench_text(quick: bool) -> None:
    from ascend_mp.ir import make_context, parse_module, print_module

    print("text: parse and print (in-process); ascend-opt end to end vs plain xdsl-opt parse+print (child CPU time)")
    ctx = make_context()
    for n in (1000, 10000):
        module = chain_module(n)
        text = print_module(module)
        report(
            Row(
                f"print {n} ops",
                statistics.median(interleaved({"p": timed(lambda: print_module(module))}, 3)["p"]),
                "s",
            )
        )
        report(
            Row(
                f"parse + verify {n} ops",
                statistics.median(interleaved({"p": timed(lambda: parse_module(text, "bench", ctx))}, 3)["p"]),
                "s",
            )
        )
    _compile_bytecode()  # the tools below start as installed ones do
    with tempfile.TemporaryDirectory() as tmp:
        n = 2000 if quick else 10000
        src = Path(tmp) / "chain.mlir"
        src.write_text(print_module(chain_module(n)))
        out = str(Path(tmp) / "out.mlir")
        runs = interleaved(
            {
                "xdsl": lambda: child_cpu([str(BIN / "xdsl-opt"), str(src), "-o", out]),
                "ascend": lambda: child_cpu(
                    [str(BIN / "ascend-opt"), str(src), "--precision_mode=allow_mix_precision", "-o", out]
                ),
            },
            3,
        )
        report(
            Row(
                f"ascend-opt end to end, {n} ops, allow_mix_precision",
                statistics.median(runs["ascend"]),
                "s",
                note=f"(plain xdsl-opt parse+print {statistics.median(runs['xdsl']):.2f} s)",
            )
        )
        report(
            Row(
                f"ascend-opt end to end / xdsl-opt parse+print, {n} ops",
                median_ratio(runs["ascend"], runs["xdsl"]),
                "x",
                0.6,
            )
        )
        small = Path(tmp) / "small.mlir"
        small.write_text(SMALL)
        starts = interleaved(
            {
                "xdsl": lambda: child_cpu([str(BIN / "xdsl-opt"), str(small)]),
                "ascend": lambda: child_cpu([str(BIN / "ascend-opt"), str(small)]),
                "run": lambda: child_cpu([str(BIN / "ascend-run"), str(small), "--seed", "0"]),
            },
            5,
        )
        t_xdsl, t_ascend, t_run = (statistics.median(starts[k]) for k in ("xdsl", "ascend", "run"))
        report(
            Row(
                "startup on a small file: ascend-opt minus xdsl-opt",
                t_ascend - t_xdsl,
                "s",
                0.1,
                note=f"(xdsl-opt {t_xdsl:.3f} s)",
            )
        )
        report(
            Row(
                "startup on a small file: ascend-run minus ascend-opt",
                t_run - t_ascend,
                "s",
                0.15,
                note="(both with compiled byte code, as installed)",
            )
        )


def bench_scaling(quick: bool) -> None:
    """Parse + print of plain MLIR text (one attribute per op) at two sizes: ops/s and the growth exponent
    (1 is linear). `ascend_mp.ir.compat.bulk_ir` pauses CPython's cyclic collector for the bulk steps, as
    the tools do; without it the cost grows faster than the op count."""
    import math

    from ascend_mp.blob_names import print_module_text
    from ascend_mp.ir import make_context
    from ascend_mp.ir.compat import bulk_ir
    from ascend_mp.tools.cli import parse_text

    print("scaling: parse + print of plain MLIR text, as ascend-opt does it (in-process CPU time)")
    sizes = (2000, 20000) if quick else (10000, 100000)
    seconds: dict[int, float] = {}
    for n in sizes:
        text = print_module_text(chain_module(n))

        def parse_print(text: str = text) -> None:
            with bulk_ir():
                print_module_text(parse_text(make_context(), text, "bench.mlir"))

        seconds[n] = statistics.median(interleaved({"p": timed(parse_print)}, 1 if n > 50000 else 3)["p"])
        report(Row(f"parse + print {n} ops", n / seconds[n], "ops/s", lower_is_better=False))
    small, large = sizes
    exponent = math.log(seconds[large] / seconds[small]) / math.log(large / small)
    report(Row(f"parse + print growth exponent, {small} -> {large} ops", exponent, "", 1.05))


def _compile_bytecode() -> None:
    """Compile the project's modules to byte code, as an installed package has them: with
    PYTHONDONTWRITEBYTECODE set (or a read-only tree) an editable install would otherwise
    recompile every edited module at each start, which is not the tools' startup cost
    (xdsl-opt's modules, installed by pip, are compiled)."""
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("ascend_mp", "passes", "dialects"):
        compileall.compile_dir(str(root / package), quiet=1)


def _training_step(model: str, precision_mode: str | None, loss_scale: str):  # noqa: ANN202
    """(program, arguments) of one momentum training step at batch 64, from the initial state."""
    from ascend_mp.passes.loss_scale import initial_state
    from ascend_mp.train import TrainConfig, compile_training

    cfg = TrainConfig(
        model=model, batch=64, optimizer="momentum", lr=0.05, precision_mode=precision_mode, loss_scale=loss_scale
    )
    compiled = compile_training(cfg)
    state = initial_state(compiled.step_fn, compiled.model.init_params(0))
    specs = compiled.program.signature("train_step")[0]
    n = len(state.args())
    rng = np.random.default_rng(0)
    x = rng.standard_normal(specs[n].shape).astype(np.float32)
    labels = np.eye(specs[n + 1].shape[1], dtype=np.float32)[
        rng.integers(0, specs[n + 1].shape[1], specs[n + 1].shape[0])
    ]
    return compiled, [*state.args(), x, labels, state.loss_scale, state.good_steps, state.step]


def numpy_mlp_step(w1, b1, w2, b2, v1, c1, v2, c2, x, y, lr, mom):  # noqa: ANN001, ANN201, PLR0913
    """The same momentum step of the 64-128-10 MLP (mean softmax cross-entropy) in plain numpy, fp32."""
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
    out = []
    for w, v, g in ((w1, v1, dw1), (b1, c1, db1), (w2, v2, dw2), (b2, c2, db2)):
        v = mom * v + g
        out += [w - lr * v, v]
    return out, loss


def bench_step(quick: bool) -> None:
    from ascend_mp.interpreter.compiled import _COMPILED_ON, use_compiled_rounding

    print("training step: digits MLP 64-128-10, batch 64, momentum (CPU time per step, interleaved, medians)")
    reps, rounds = (10, 11) if quick else (20, 41)
    steps = {
        "fp32": _training_step("mlp", None, "none"),
        "fp32+dynamic": _training_step("mlp", None, "dynamic"),
        "mixed": _training_step("mlp", "allow_mix_precision", "dynamic"),  # the default configuration
    }
    compiled_rounding = bool(_COMPILED_ON[0]) and use_compiled_rounding(True)
    default = (
        "compiled rounding (numba), the default" if compiled_rounding else "numpy rounding (numba is not installed)"
    )
    if compiled_rounding:  # the same graph compiled and run with the numpy rounding only
        use_compiled_rounding(False)
        steps["mixed, numpy rounding"] = _training_step("mlp", "allow_mix_precision", "dynamic")
        use_compiled_rounding(True)

    def run(label: str) -> Callable[[], float]:
        compiled, args = steps[label]
        if label == "mixed, numpy rounding":

            def numpy_rounding() -> None:
                use_compiled_rounding(False)
                compiled.program.run("train_step", *args)
                use_compiled_rounding(True)

            return timed(numpy_rounding, reps)
        return timed(lambda: compiled.program.run("train_step", *args), reps)

    fp32_args = steps["fp32"][1]
    w1, b1, w2, b2, v1, c1, v2, c2 = fp32_args[:8]
    x, y = fp32_args[8:10]
    lr, mom = np.float32(0.05), np.float32(0.9)
    measures = {label: run(label) for label in steps}
    measures["numpy"] = timed(lambda: numpy_mlp_step(w1, b1, w2, b2, v1, c1, v2, c2, x, y, lr, mom), reps)
    for label in steps:  # warm up (kernels, caches)
        measures[label]()
    t = interleaved(measures, rounds)
    for label, (compiled, _) in steps.items():
        n_ops = len(list(compiled.step_fn.body.ops))
        report(
            Row(
                f"interpreter step, {label} ({n_ops} ops)",
                statistics.median(t[label]) * 1e3,
                "ms",
                note=f"({default})" if label == "mixed" else "",
            )
        )
    report(Row("plain numpy step, fp32", statistics.median(t["numpy"]) * 1e3, "ms"))
    report(Row("overhead: interpreter fp32 step / numpy step", median_ratio(t["fp32"], t["numpy"]), "x", 1.3))
    report(
        Row(
            "mixed (dynamic loss scaling) / fp32 step",
            median_ratio(t["mixed"], t["fp32"]),
            "x",
            1.3,
            note=f"({default})",
        )
    )
    report(
        Row(
            "  the same graph's cost: mixed / fp32 with dynamic loss scaling",
            median_ratio(t["mixed"], t["fp32+dynamic"]),
            "x",
        )
    )
    if compiled_rounding:
        report(
            Row(
                "  mixed / fp32 step with numpy rounding only (ASCEND_MP_COMPILED_ROUNDING=0)",
                median_ratio(t["mixed, numpy rounding"], t["fp32"]),
                "x",
            )
        )
    else:
        print("  (numba is not installed: float16 rounding in numpy; pip install numba)")
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        print("  (PyTorch is not installed: no CPU eager comparison)")
        return
    tw = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
    tx, ty = torch.tensor(x), torch.tensor(y)
    opt = torch.optim.SGD(tw, lr=0.05, momentum=0.9)

    def torch_step() -> None:
        logits = torch.relu(tx @ tw[0] + tw[1]) @ tw[2] + tw[3]
        loss = torch.nn.functional.cross_entropy(logits, ty.argmax(1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    report(
        Row(
            "PyTorch CPU eager step, fp32 (for reference)",
            statistics.median(interleaved({"t": timed(torch_step, reps)}, 5)["t"]) * 1e3,
            "ms",
        )
    )


def bench_memory(quick: bool) -> None:
    from ascend_mp.interpreter import Program
    from ascend_mp.ir import read_module
    from ascend_mp.passes.precision import run_precision

    print("memory: live tensor bytes, allow_mix_precision vs fp32 (peak: arguments included; activations: excluded)")
    rng = np.random.default_rng(0)
    examples = Path(__file__).resolve().parent.parent / "examples"
    for name in ("mlp", "cnn"):
        peaks = {}
        for label, mode in (("fp32", None), ("mixed", "allow_mix_precision")):
            module = read_module(str(examples / f"{name}.mlir"))
            if mode:
                run_precision(module, mode=mode)
            prog = Program.from_module(module)
            args = [rng.standard_normal(s.shape).astype(np.float32) for s in prog.signature(name)[0]]
            prog.run(name, *args, track_memory=True)
            peaks[label] = (prog.peak_bytes, prog.peak_activation_bytes)
        report(
            Row(
                f"{name} forward (examples/{name}.mlir, weights as fp32 arguments): mixed / fp32 peak",
                peaks["mixed"][0] / peaks["fp32"][0],
                "x",
                note=f"({peaks['fp32'][0]} -> {peaks['mixed'][0]} bytes; the caller's fp32 weights stay live)",
            )
        )
        report(
            Row(
                f"{name} forward: mixed / fp32 activations",
                peaks["mixed"][1] / peaks["fp32"][1],
                "x",
                note=f"({peaks['fp32'][1]} -> {peaks['mixed'][1]} bytes)",
            )
        )
    from onnx_blocks import mlp_model

    from ascend_mp.frontend import import_onnx

    model, feed = mlp_model()
    peaks = {}
    for label, mode in (("fp32", None), ("mixed", "allow_mix_precision")):
        module = import_onnx(model.SerializeToString())
        if mode:
            run_precision(module, mode=mode)  # the weights used only in fp16 are stored in fp16, as ATC stores them
        prog = Program.from_module(module)
        prog.run("main", feed["x"], track_memory=True)
        peaks[label] = prog.peak_bytes
    report(
        Row(
            "mlp forward, weights as constants (imported from ONNX): mixed / fp32 peak",
            peaks["mixed"] / peaks["fp32"],
            "x",
            0.6,
            note=f"({peaks['fp32']} -> {peaks['mixed']} bytes)",
        )
    )
    from ascend_mp.train.trainer import donating_program

    print(
        "  training steps as the trainer runs them: parameters and optimizer state donated (updated in place);"
        " activations: buffers the step allocates (argument buffers, donated ones included, excluded)"
    )
    for model in ("mlp", "cnn"):
        peaks = {}
        for label, mode, scale in (
            ("fp32", None, "none"),
            ("fp32+dynamic", None, "dynamic"),
            ("mixed", "allow_mix_precision", "dynamic"),
        ):
            compiled, args = _training_step(model, mode, scale)
            program = donating_program(compiled)
            program.run("train_step", *args, track_memory=True)
            peaks[label] = (program.peak_bytes, program.peak_activation_bytes)
        report(
            Row(
                f"{model} training step (batch 64): mixed / fp32 peak",
                peaks["mixed"][0] / peaks["fp32"][0],
                "x",
                note=f"({peaks['fp32'][0]} -> {peaks['mixed'][0]} bytes)",
            )
        )
        report(
            Row(
                f"{model} training step (batch 64): mixed / fp32 activations",
                peaks["mixed"][1] / peaks["fp32"][1],
                "x",
                0.55,
                note=f"({peaks['fp32'][1]} -> {peaks['mixed'][1]} bytes)",
            )
        )
        report(
            Row(
                "  the same graph: mixed / fp32 with dynamic loss scaling, activations",
                peaks["mixed"][1] / peaks["fp32+dynamic"][1],
                "x",
                note=f"({peaks['fp32+dynamic'][1]} -> {peaks['mixed'][1]} bytes)",
            )
        )


def bench_accuracy(quick: bool) -> None:
    from ascend_mp.train import accuracy_comparison

    print("accuracy: digits MLP, fp32 vs allow_mix_precision + dynamic loss scaling (seeds 0-2, 30 epochs)")
    start = time.perf_counter()
    result = accuracy_comparison(seeds=(0,) if quick else (0, 1, 2), epochs=5 if quick else 30)
    report(Row("test accuracy, fp32", 100 * result["fp32_accuracy"], "%"))
    report(Row("test accuracy, mixed", 100 * result["mixed_accuracy"], "%"))
    report(
        Row(
            "|fp32 - mixed| accuracy",
            abs(result["difference_pt"]),
            "pt",
            0.5,
            note=f"(skipped steps {result['mixed_skipped_steps']}, final scales {result['mixed_final_scale']}, {time.perf_counter() - start:.0f} s)",
        )
    )


def bench_models(quick: bool) -> None:
    from benchmarks.models import bench_models as run  # real exports, when `make models` made them

    run(quick, report, Row)


def bench_archs(quick: bool) -> None:
    from benchmarks.train_archs import bench_archs as run  # ResNet-style CNN and transformer training steps

    run(quick, report, Row)


def bench_train_torch(quick: bool) -> None:
    from benchmarks.train_archs import bench_torch_exports as run  # torch exports through ascend-train

    run(quick, report, Row)


def bench_iree(quick: bool) -> None:
    from benchmarks.iree_rows import bench_iree as run  # the IREE backend beside the interpreter

    run(quick, report, Row)


def bench_kernels(quick: bool) -> None:
    from benchmarks.kernel_rows import bench_kernels as run  # Erf, a ConvNeXt block

    run(quick, report, Row)


def bench_userday(part: str) -> Callable[[bool], None]:
    def bench(quick: bool) -> None:  # the ascend-eval, ascend-tune and --emit-onnx budgets
        from benchmarks.userday import bench_userday as run

        run(part, quick, report, Row)

    return bench


SECTIONS: dict[str, Callable[[bool], None]] = {
    "precision": bench_precision,
    "text": bench_text,
    "scaling": bench_scaling,
    "step": bench_step,
    "memory": bench_memory,
    "models": bench_models,
    "accuracy": bench_accuracy,
    "iree": bench_iree,
    "kernels": bench_kernels,
    "archs": bench_archs,
    "train-torch": bench_train_torch,
    "userday-eval": bench_userday("eval"),
    "userday-emit": bench_userday("emit"),
    "userday-tune": bench_userday("tune"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=list(SECTIONS), help="run only these sections")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--imported", type=Path, help=argparse.SUPPRESS)  # one model's precision rows, as JSON
    args = parser.parse_args()
    if args.imported is not None:
        from benchmarks.precision_imported import imported_rows

        print(json.dumps([asdict(row) for row in imported_rows(args.imported, Row, cpu)]))
        return
    started = datetime.now(timezone.utc)
    load = os.getloadavg()[0]
    print(
        f"ascend-mp benchmarks on {os.cpu_count()} CPU(s), load average {load:.1f}; "
        "times are CPU seconds, medians of interleaved runs"
    )
    failed: list[str] = []
    ran = list(args.only or SECTIONS)
    for name in ran:
        SECTION[0] = name
        try:
            SECTIONS[name](args.quick)
        except Exception as e:  # a section that cannot run says why; the others still run
            failed.append(name)
            print(f"  section {name} could not run: {type(e).__name__}: {e}")
    summary = summary_line(ran, failed)
    print(f"\n{summary}")
    for r in ROWS:
        if r.verdict().startswith("NOT"):
            print(f"  NOT met: {r.name}: {r.value:.4g} {r.unit} (budget {r.budget:g})")
    if not args.only and not args.quick:
        write_page(PAGE, started, load, summary)
        print(f"wrote {PAGE.relative_to(ROOT)}")


def summary_line(ran: list[str], failed: list[str]) -> str:
    missed = sum(1 for r in ROWS if r.verdict().startswith("NOT"))
    empty = [name for name in ran if name not in failed and not any(r.section == name for r in ROWS)]
    return (
        f"{len(ROWS)} figures, {sum(1 for r in ROWS if r.budget is not None)} with budgets, {missed} budgets not met"
        + (f"; sections that could not run: {', '.join(failed)}" if failed else "")
        + (f"; sections without figures: {', '.join(empty)}" if empty else "")
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()


def _host() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node() or 'unknown host'} ({platform.system()} {platform.machine()}, {os.cpu_count()} CPU(s)" + (
        f", {model})" if model else ")"
    )


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def write_page(path: Path, started: datetime, load: float, summary: str) -> None:
    """docs/performance.md: the header (how and when it was measured) and the table of every figure."""
    import numpy
    import xdsl

    finished = datetime.now(timezone.utc)
    minutes = (finished - started).total_seconds() / 60
    lines = [
        "# Performance",
        "",
        "<!-- Generated by `make bench` (benchmarks/run.py); do not edit by hand: rerun `make bench`. -->",
        "",
        f"Measured by `make bench` (`python benchmarks/run.py`, every section) on {started:%Y-%m-%d %H:%M} UTC, "
        f"{minutes:.0f} min, commit `{_commit()}`.",
        f"Host: {_host()}, load average {load:.1f} at the start; Python {platform.python_version()}, "
        f"numpy {numpy.__version__}, xdsl {getattr(xdsl, '__version__', '?')}.",
        "Times are CPU seconds, the median of paired, interleaved rounds (A, B, A, B, ...); numeric kernels single-threaded.",
        f"{summary}.",
        "",
        "| Section | Figure | Value | Budget | Verdict | Note |",
        "|---|---|---|---|---|---|",
    ]
    for r in ROWS:
        verdict = r.verdict().replace("NOT met", "not met")
        lines.append(
            f"| {r.section} | {_cell(r.name)} | {r.value:.4g} {r.unit} | {_cell(budget_text(r))} | {verdict} | {_cell(r.note)} |"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


if __name__ == "__main__":
    main()
