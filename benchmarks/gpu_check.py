"""The IREE GPU check in two steps (benchmarks/gpu_check.sh runs them; docs/usage/lowering.md).

    prepare  (this machine, the project's venv, no GPU needed): for each model and precision mode
             (fp32, force_fp16, allow_mix_precision) lower the decided graph, compile it with IREE for
             CUDA and for the CPU, save the inputs, the float64 reference and the interpreter's error,
             and copy IREE's standalone `iree-run-module`/`iree-benchmark-module` beside them.
    run      (the GPU machine: python3 with numpy only, no registry): run every module with those tools
             and print per model and mode the device's error and the interpreter's error against
             float64, their ratio, and the device time against IREE's CPU time.

`run --device cpu` runs the CPU modules instead (what the tests check on a machine without a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out" / "gpu_check"
MODES = ("fp32", "force_fp16", "allow_mix_precision")
MODELS = ("mlp", "cnn", "conv_block", "attention_block")
TOOLS = ("iree-run-module", "iree-benchmark-module")
CPU_TARGET = "x86-64-v3"
"""The CPU modules run on the GPU machine's host: a portable AVX2 target, not this machine's."""

Array = np.ndarray[Any, Any]


def rel_err(y: Array, r: Array) -> float:
    y64, r64 = np.asarray(y, np.float64), np.asarray(r, np.float64)
    return float(np.abs(y64 - r64).max()) / (float(np.abs(r64).max()) or 1.0)


# --------------------------------------------------------------------------------------
# prepare (needs the project)
# --------------------------------------------------------------------------------------


def _model(name: str) -> tuple[Any, str, list[Array]]:
    """(module, function, inputs) of a built-in model or a zoo model (models/out/<name>.onnx)."""
    from ascend_mp.frontend import import_onnx
    from ascend_mp.ir import make_context, read_module

    if name in ("mlp", "cnn"):
        module = read_module(str(ROOT / "examples" / f"{name}.mlir"), make_context())
        from ascend_mp.interpreter import Program

        specs, _ = Program.from_module(module).signature(name)
        rng = np.random.default_rng(0)
        return module, name, [rng.standard_normal(s.shape).astype(np.float32) for s in specs]
    if name in ("conv_block", "attention_block"):
        sys.path.insert(0, str(ROOT))
        from benchmarks import onnx_blocks

        model, inputs = getattr(onnx_blocks, name)()
        return import_onnx(model), "main", list(inputs.values())
    zoo = ROOT / "models" / "out"
    path = zoo / f"{name}.onnx"
    if not path.exists():
        raise SystemExit(
            f"gpu_check: no model '{name}' (built-in: {', '.join(MODELS)}; zoo: {zoo}/<name>.onnx, `make models`)"
        )
    saved = np.load(zoo / f"{name.split('.')[0]}.inputs.npz")  # one inputs file per architecture
    return import_onnx(str(path)), "main", [saved[k] for k in saved.files]


def _iree_tool(name: str) -> Path:
    import iree.runtime  # pyright: ignore[reportMissingImports]

    path = Path(iree.runtime.__file__).resolve().parent.parent / "_runtime_libs" / name
    if not path.exists():
        raise SystemExit(f"gpu_check: IREE's {name} is not at {path}")
    return path


def prepare(out: Path, models: list[str], cuda_target: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "bin").mkdir(exist_ok=True)
    for tool in TOOLS:
        shutil.copy2(_iree_tool(tool), out / "bin" / tool)
    entries: list[dict[str, Any]] = []
    for name in models:
        try:
            entries += _prepare_model(out, name, cuda_target)
        except Exception as exc:  # noqa: BLE001 - one line per model that cannot be prepared, then go on
            print(f"skipped  {name:<16} {type(exc).__name__}: {str(exc).splitlines()[0][:160]}", flush=True)
    (out / "manifest.json").write_text(json.dumps({"cuda_target": cuda_target, "entries": entries}, indent=1))


def _prepare_model(out: Path, name: str, cuda_target: str) -> list[dict[str, Any]]:
    from ascend_mp.backend.iree import compile_text, lower_to_text
    from ascend_mp.interpreter import Program
    from ascend_mp.ir import make_context
    from ascend_mp.passes import PASSES

    entries: list[dict[str, Any]] = []
    module, fn, inputs = _model(name)
    ref = Program.from_module(module, reference=True).run(fn, *inputs)[0]
    d = out / name
    d.mkdir(exist_ok=True)
    for i, a in enumerate(inputs):
        np.save(d / f"input{i}.npy", a)
    np.save(d / "reference.npy", ref)
    for mode in MODES:
        decided = module.clone()
        if mode != "fp32":
            PASSES["ascend-precision"]()(mode=mode).apply(make_context(), decided)
        program = Program.from_module(decided)
        program.run(fn, *inputs)  # warm-up
        start = time.perf_counter()
        y = program.run(fn, *inputs)[0]
        interp_ms = (time.perf_counter() - start) * 1e3
        text = lower_to_text(decided)
        start = time.perf_counter()
        (d / f"{mode}.cuda.vmfb").write_bytes(compile_text(text, "cuda", cuda_target=cuda_target))
        (d / f"{mode}.cpu.vmfb").write_bytes(compile_text(text, "cpu", cpu_target=CPU_TARGET))
        compile_s = time.perf_counter() - start
        entries.append(
            {
                "model": name,
                "function": fn,
                "mode": mode,
                "inputs": len(inputs),
                "interpreter_err": rel_err(y, ref),
                "interpreter_ms": interp_ms,
            }
        )
        print(
            f"prepared {name:<16} {mode:<20} interpreter err {rel_err(y, ref):.3g}  compiled in {compile_s:.1f} s",
            flush=True,
        )
    return entries


# --------------------------------------------------------------------------------------
# run (numpy and IREE's standalone tools only)
# --------------------------------------------------------------------------------------


def _flags(out: Path, e: dict[str, Any], vmfb: Path, device: str) -> list[str]:
    d = out / e["model"]
    return [f"--device={device}", f"--module={vmfb}", f"--function={e['function']}"] + [
        f"--input=@{d / f'input{i}.npy'}" for i in range(e["inputs"])
    ]


def _time_ms(out: Path, e: dict[str, Any], vmfb: Path, device: str) -> float:
    proc = subprocess.run(
        [
            str(out / "bin" / "iree-benchmark-module"),
            *_flags(out, e, vmfb, device),
            "--benchmark_format=json",
            "--benchmark_min_time=0.3s",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(_first_error(proc.stderr))
    runs = json.loads(proc.stdout[proc.stdout.index("{") :])["benchmarks"]
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    return min(float(r["real_time"]) * scale[r["time_unit"]] for r in runs)


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    picked = next(
        (ln for ln in lines if re.search(r"error|UNAVAILABLE|INVALID|NOT_FOUND", ln, re.I)),
        lines[-1] if lines else "failed",
    )
    return picked[:200]


def run(out: Path, device: str) -> int:
    manifest = json.loads((out / "manifest.json").read_text())
    driver = "cuda" if device == "cuda" else "local-task"
    print(
        f"{'model':<16} {'mode':<20} {device + ' err':>10} {'interp err':>10} {'ratio':>7} {device + ' ms':>9} {'cpu ms':>9} {'speedup':>8}"
    )
    failures = 0
    for e in manifest["entries"]:
        d = out / e["model"]
        vmfb = d / f"{e['mode']}.{device}.vmfb"
        result = d / f"{e['mode']}.{device}.out.npy"
        proc = subprocess.run(
            [str(out / "bin" / "iree-run-module"), *_flags(out, e, vmfb, driver), f"--output=@{result}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0 or not result.exists():
            print(f"{e['model']:<16} {e['mode']:<20} failed: {_first_error(proc.stderr + proc.stdout)}")
            failures += 1
            continue
        err = rel_err(np.load(result), np.load(d / "reference.npy"))
        interp = e["interpreter_err"]
        ratio = err / interp if interp > 0 else (0.0 if err == 0 else float("inf"))
        dev_ms = _time_ms(out, e, vmfb, driver)
        cpu_ms = dev_ms if device == "cpu" else _time_ms(out, e, d / f"{e['mode']}.cpu.vmfb", "local-task")
        print(
            f"{e['model']:<16} {e['mode']:<20} {err:>10.3g} {interp:>10.3g} {ratio:>7.2f} {dev_ms:>9.3f} {cpu_ms:>9.3f} {cpu_ms / dev_ms:>7.1f}x",
            flush=True,
        )
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gpu_check", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="step", required=True)
    pp = sub.add_parser("prepare", help="compile and record references (no GPU needed)")
    pp.add_argument(
        "--models",
        default=",".join(MODELS),
        help=f"comma-separated (default {','.join(MODELS)}; zoo names from models/out)",
    )
    pp.add_argument("--cuda-target", default="sm_90")
    pr = sub.add_parser("run", help="run the prepared modules and print the table")
    pr.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    for q in (pp, pr):
        q.add_argument("--out", type=Path, default=Path(os.environ.get("GPU_CHECK_OUT", OUT)))
    args = p.parse_args(argv)
    if args.step == "prepare":
        prepare(args.out, [m for m in args.models.split(",") if m], args.cuda_target)
        return 0
    return run(args.out, args.device)


if __name__ == "__main__":
    sys.exit(main())
