"""The `userday` section of benchmarks/run.py: the budgets of the user's-day tools (docs/usage/walkthrough.md).

- eval: `ascend-eval` on resnet18 over 256 random images (8 with --quick), 6 modes: its CPU time against the bare interpreter
  runs it does (the same programs, built the same way, run over the same batches by a plain loop);
  budget: at most 10% overhead. Also images/s with all cores.
- tune: `ascend-tune` against onnxconverter-common's `auto_convert_mixed_precision` on the same criterion
  (benchmarks/userday_tune.py says how).
- emit: `ascend-opt model.onnx --precision_mode=allow_mix_precision --emit-onnx out.onnx`, end to end (one
  process, interpreter start included), against a python process that loads the model, runs
  `convert_float_to_float16` and saves it; budget: at most 1.0x, on resnet50 and bert_sdpa.

Models come from models/out (`make models`); a model that is absent is skipped with a line saying so.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models" / "out"
BIN = Path(sys.executable).parent
EVAL_MODES = "fp32,allow_mix_precision,force_fp16,force_fp32,cube_fp16in_fp32out,allow_fp32_to_fp16"
"""Six modes for the eval budget."""

_BARE = """
import sys, numpy as np
from ascend_mp.evaluate import load_model, load_dataset, with_data_shapes, module_for, batch_args, _decided
from ascend_mp.interpreter.runner import Program
model_path, data_path, modes, batch = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
model = load_model(model_path)
data = load_dataset(data_path, model)
model = with_data_shapes(model, data)
module = module_for(model, batch)
programs = [Program.from_module(module, reference=True)]
programs += [Program.from_module(_decided(module, m, {})) for m in dict.fromkeys(("fp32", *modes))]
for i in range(-(-data.count // batch)):
    args, _ = batch_args(data, i, batch)
    for p in programs:
        p.run(model.function, *args)
"""
"""The bare interpreter runs ascend-eval does: the float64 reference and each mode's program, every batch."""

_F16 = """
import sys, onnx
from onnxconverter_common.float16 import convert_float_to_float16
onnx.save(convert_float_to_float16(onnx.load(sys.argv[1])), sys.argv[2])
"""


def _cpu_of(cmd: list[str], timeout: float | None = None) -> tuple[float, str, int]:
    """CPU seconds (user + system, children included), stdout and exit status of running `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout, proc.returncode


def _absent(name: str) -> bool:
    if (MODELS / f"{name}.legacy.onnx").exists():
        return False
    print(f"  {name}: skipped (models/out/{name}.legacy.onnx absent; `make models` exports it)")
    return True


def bench_userday(part: str, quick: bool, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    """One part ("eval", "emit" or "tune": sections userday-eval, userday-emit, userday-tune)."""
    rows = {"eval": _eval_rows, "emit": _emit_rows, "tune": _tune_rows}[part]
    with tempfile.TemporaryDirectory(prefix="ascend-mp-userday-") as tmp:
        rows(quick, Path(tmp), report, row)


def _eval_rows(quick: bool, tmp: Path, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    if _absent("resnet18"):
        return
    count = 8 if quick else 256
    data = tmp / "images.npz"
    np.savez(data, input=np.random.default_rng(0).standard_normal((count, 3, 224, 224)).astype(np.float32))
    model = str(MODELS / "resnet18.legacy.onnx")
    # resnet18's export fixes the batch at 1: batches are of 1 sample whatever --batch-size says
    eval_cmd = [str(BIN / "ascend-eval"), model, str(data), "--modes", EVAL_MODES, "--no-progress", "--jobs", "1"]
    bare_cmd = [sys.executable, "-c", _BARE, model, str(data), EVAL_MODES, "1"]
    e, _out, rc = _cpu_of(eval_cmd)  # one pair: at 256 images each run is minutes of CPU
    if rc:
        raise RuntimeError(f"ascend-eval failed: {_out[-300:]}")
    b = _cpu_of(bare_cmd)[0]
    report(
        row(
            f"ascend-eval resnet18, {count} images, 6 modes: overhead over the bare interpreter runs",
            100 * (e / b - 1),
            "%",
            10.0,
            note=f"(eval {e:.1f} s CPU, bare {b:.1f} s CPU, jobs 1)",
        )
    )
    jobs = os.cpu_count() or 1
    t0 = time.perf_counter()
    subprocess.run([*eval_cmd[:-1], str(jobs), "--json"], check=True, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    report(
        row(
            f"ascend-eval resnet18, {count} images, 6 modes, {jobs} jobs: images/s (wall, all modes)",
            count / wall,
            "img/s",
            None,
            False,
            note=f"({wall:.1f} s wall)",
        )
    )


def _emit_rows(quick: bool, tmp: Path, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    for name in ("resnet50", "bert_sdpa"):
        if _absent(name):
            continue
        model = str(MODELS / f"{name}.legacy.onnx")
        emit = [
            str(BIN / "ascend-opt"),
            model,
            "--precision_mode=allow_mix_precision",
            "--emit-onnx",
            str(tmp / "mixed.onnx"),
        ]  # the documented command: with --emit-onnx and no -o, ascend-opt writes the ONNX file and no MLIR text
        f16 = [sys.executable, "-c", _F16, model, str(tmp / "f16.onnx")]
        ratios, es, fs = [], [], []
        for _ in range(1 if quick else 3):  # interleaved: A, B, A, B, ...
            e = _cpu_of(emit)[0]
            f = _cpu_of(f16)[0]
            es.append(e)
            fs.append(f)
            ratios.append(e / f)
        report(
            row(
                f"ascend-opt --emit-onnx {name}, end to end, vs convert_float_to_float16",
                statistics.median(ratios),
                "x",
                1.0,
                note=f"({statistics.median(es):.2f} s vs {statistics.median(fs):.2f} s CPU)",
            )
        )


def _tune_rows(quick: bool, tmp: Path, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    from benchmarks.userday_tune import tune_rows  # the module imports this one's helpers

    tune_rows(quick, tmp, report, row)


def _json_tail(out: str) -> dict[str, Any] | None:
    start = out.find("{")
    try:
        return json.loads(out[start:]) if start >= 0 else None
    except ValueError:
        m = re.search(r"\{.*\}", out, re.S)
        return json.loads(m.group(0)) if m else None
