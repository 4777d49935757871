"""The `precision` section's rows on imported models: the pass on bert_sdpa and resnet50 (models/out), each
measured in a process of its own (`benchmarks/run.py --imported PATH` runs :func:`imported_rows`)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

IMPORTED = ("bert_sdpa", "resnet50")
"""The imported models (legacy exports in models/out) whose per-op pass time the precision section prints
(importing resnet50 costs about 0.7 s)."""


def bench_imported(report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    """The pass on imported models (models/out, from `make models`) as `ascend-precision{mode=allow_mix_precision}`
    runs it (options loaded, decided, rewritten, weights stored low): its time per op without converting the
    weight payloads to fp16 (that part grows with the weight bytes, not the ops: printed apart, as MB/s of fp32
    weights converted), and the whole pass per model. Each model is measured in a process of its own, as
    `ascend-opt model.onnx` runs the pass: right after the import, not among the chains' garbage (which, collected
    while the model's rounds run, slowed them by up to 20%). Three such processes: a process's median of its rounds
    still varied by up to 1.6x from one process to the next on an idle machine (bert_sdpa: 5.9-9.3 us/op), so each
    row is the process whose time per op is the median of the three, and the note gives the range."""
    for name in IMPORTED:
        path = ROOT / "models" / "out" / f"{name}.legacy.onnx"
        if not path.exists():
            print(f"  (no {path.name} in models/out: no figure for {name}; make models)")
            continue
        runs = []
        for _ in range(3):
            done = subprocess.run(
                [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--imported", str(path)],
                check=True,
                capture_output=True,
                text=True,
            )
            runs.append([row(**r) for r in json.loads(done.stdout.splitlines()[-1])])
        runs.sort(key=lambda rows: rows[0].value)  # the first row: the time per op
        chosen = runs[1]
        low, high = runs[0][0].value, runs[-1][0].value
        chosen[0].note = f"(median of 3 processes, range {low:.3g}-{high:.3g}; {chosen[0].note[1:]}"
        for r in chosen:
            report(r)


def imported_rows(path: Path, row: Callable[..., Any], cpu: Callable[[], float]) -> list[Any]:
    """The rows of `bench_imported` for one model (run in a child process: `benchmarks/run.py --imported PATH`)."""
    from ascend_mp.frontend.onnx_import import import_onnx
    from ascend_mp.passes.precision import load_config, precision_rewrite

    name = path.name.removesuffix(".legacy.onnx")
    imported = import_onnx(str(path))
    n = sum(1 for _ in imported.walk())
    totals: list[float] = []
    converting: list[float] = []
    rewriting: list[float] = []
    converted = distinct = 0
    start, first = time.perf_counter(), cpu()
    warm = precision_rewrite(imported.clone(), load_config(mode="allow_mix_precision"), records=False)  # a warm-up
    assert warm.stored is not None
    first = cpu() - first - warm.stored.seconds  # the first pass of the process, as `ascend-opt model.onnx` runs it
    rounds = max(11, min(61, int(2.0 / (time.perf_counter() - start))))  # spread over about 2 s (the machine drifts)
    for _ in range(rounds):
        module = imported.clone()  # a fresh module each round (not timed), just built, as an import leaves it
        start = cpu()
        plan = precision_rewrite(module, load_config(mode="allow_mix_precision"), records=False)  # what apply does
        totals.append(cpu() - start)
        assert plan.stored is not None
        converting.append(plan.stored.seconds)  # measured inside the same call (CPU seconds too)
        rewriting.append(plan.seconds)  # timed apart inside the call: resnet50's 150 ms of conversion dwarfs it
        converted, distinct = plan.stored.converted, plan.distinct
    rest = statistics.median(rewriting)
    rows = [
        row(
            f"precision pass, imported {name} ({n} ops): time per op",
            rest / n * 1e6,
            "us/op",
            8.0,
            note=f"(decide, rewrite, constants retyped, timed inside the pass without converting the weight payloads; "
            f"{distinct} distinct decisions, each computed once; a process of its own; median of {rounds} "
            f"rounds after a warm-up, which was the process's first pass: {first / n * 1e6:.3g} us/op, "
            f"op library facts not yet built)",
        )
    ]
    conv = statistics.median(converting)
    if converted:
        rows.append(
            row(
                f"precision pass, imported {name}: weight conversion",
                converted / conv / 1e6,
                "MB/s",
                note=f"({converted / 1e6:.3g} MB of fp32 weights read, rounded to fp16, stored as blobs: "
                f"{conv * 1e3:.3g} ms)",
            )
        )
    rows.append(
        row(
            f"precision pass, imported {name}: whole pass",
            statistics.median(totals) * 1e3,
            "ms",
            note="(weight conversion included)",
        )
    )
    return rows
