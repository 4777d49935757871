"""`ascend-run`: execute a function of an ascend module on given or random inputs.

    ascend-run model.mlir --seed 0
    ascend-run model.mlir --function mlp --input x=x.npy --inputs params.npz -o out.npz
    ascend-run model.mlir --precision_mode allow_mix_precision --print-memory --print-timing
    ascend-run model.mlir --compare-modes

Inputs not given are random (seeded): floats standard normal, integers in [0, 10).
An input is named by its SSA name (`x` or `%x`) or its position (`0`); `.npz`
keys may also be `arg<i>`. The ATC flags (as in ascend-opt) run the
`ascend-precision` pass before executing. Outputs print in a stable,
FileCheck-friendly form; `-o` writes them (`result0`, `result1`, ...) to an
`.npz` file atomically. Errors are one line, `ascend-run: error: ...`, exit 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from ascend_mp.errors import AscendError
from ascend_mp.tools.atc import add_atc_arguments, precision_options

PROG = "ascend-run"
SHOWN_VALUES = 8



class _Parser(argparse.ArgumentParser):
    """Usage errors as one-line AscendErrors (exit 1, like every other error)."""

    def error(self, message: str) -> NoReturn:
        raise AscendError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Execute a function of an ascend module with the numpy interpreter.")
    p.add_argument("file", help="the module (.mlir), or - for standard input")
    p.add_argument("--function", metavar="NAME", help="function to run (default: the first public one)")
    p.add_argument("--input", action="append", default=[], metavar="NAME_OR_INDEX=PATH.npy", help="an argument from a .npy file")
    p.add_argument("--inputs", metavar="FILE.npz", help="arguments from an .npz file (keys: names, indices or arg<i>)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("-o", "--output", metavar="FILE.npz", help="write the outputs to an .npz file")
    p.add_argument("--print-timing", action="store_true", help="print the run time and the time per op type")
    p.add_argument("--print-memory", action="store_true", help="print the peak bytes of live tensors")
    p.add_argument("--compare-modes", action="store_true", help="run every precision mode and compare with float64")
    from ascend_mp.interpreter.compare import add_compare_arguments

    add_compare_arguments(p)  # --samples, --modes, --attribute-errors, --divergence-threshold, --json
    add_atc_arguments(p, "ATC precision options (run the ascend-precision pass first)", report=False)
    return p


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


NPY_MAGIC = b"\x93NUMPY"
NPZ_MAGIC = b"PK\x03\x04"


def _check_magic(path: str, magic: bytes, kind: str) -> None:
    """Refuse a file that does not start like a `kind` file (np.load would try it as a pickle)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(magic))
    except OSError as e:
        raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    if head != magic:
        raise AscendError(f"{path}: not a {kind} file (it does not start with the {kind} header)")


def _load_npy(path: str) -> np.ndarray[Any, Any]:
    _check_magic(path, NPY_MAGIC, ".npy")
    try:
        return np.load(path, allow_pickle=False)
    except OSError as e:
        raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    except ValueError as e:
        raise AscendError(f"{path}: not a readable .npy file: {' '.join(str(e).split())}") from None


def _arg_index(key: str, names: Sequence[str], source: str) -> int:
    key = key.removeprefix("%")
    if key in names:
        return names.index(key)
    for candidate in (key, key.removeprefix("arg")):
        if candidate.isdigit() and int(candidate) < len(names):
            return int(candidate)
    listed = ", ".join(f"{i}: %{n}" for i, n in enumerate(names))
    raise AscendError(f"{source}: '{key}' names no argument (arguments: {listed})")


def gather_inputs(args: argparse.Namespace, specs: Sequence[Any], func_name: str) -> tuple[list[np.ndarray[Any, Any]], list[str]]:
    """The arguments (from files, else random) and where each came from."""
    names = [s.name for s in specs]
    given: dict[int, tuple[np.ndarray[Any, Any], str]] = {}
    if args.inputs:
        _check_magic(args.inputs, NPZ_MAGIC, ".npz")
        try:
            with np.load(args.inputs, allow_pickle=False) as npz:
                for key in npz.files:
                    given[_arg_index(key, names, args.inputs)] = (npz[key], f"{args.inputs}[{key}]")
        except OSError as e:
            raise AscendError(f"{args.inputs}: cannot read file: {e.strerror or e}") from None
        except (ValueError, zipfile.BadZipFile) as e:
            raise AscendError(f"{args.inputs}: not a readable .npz file: {' '.join(str(e).split())}") from None
    for item in args.input:
        key, sep, path = item.partition("=")
        if not sep or not key or not path:
            raise AscendError(f"--input expects NAME_OR_INDEX=PATH.npy, got '{item}'")
        index = _arg_index(key, names, f"--input {item}")
        given[index] = (_load_npy(path), path)
    rng = np.random.default_rng(args.seed)
    arrays: list[np.ndarray[Any, Any]] = []
    sources: list[str] = []
    for i, spec in enumerate(specs):
        if i in given:
            arr, source = given[i]
            if arr.dtype != spec.dtype or not spec.accepts(arr):
                raise AscendError(
                    f"{source}: argument {i} (%{spec.name}) of @{func_name} expects {spec.type_str}, "
                    f"got {arr.dtype} array of shape {tuple(arr.shape)}"
                )
            arrays.append(arr)
            sources.append(source)
            continue
        if any(d < 0 for d in spec.shape):
            raise AscendError(f"argument {i} (%{spec.name}) of @{func_name} has a dynamic shape; give it with --input")
        arrays.append(random_array(rng, spec.dtype, spec.shape))
        sources.append(f"random, seed {args.seed}")
    return arrays, sources


def random_array(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Standard normal floats, integers in [0, 10), random booleans."""
    if dtype == np.dtype(np.bool_):
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------


def _fmt(v: Any, kind: str) -> str:
    if kind == "b":
        return "true" if v else "false"
    if kind in "iu":
        return str(int(v))
    return f"{float(v):.4f}"


def describe(label: str, type_str: str, a: np.ndarray[Any, Any]) -> str:
    """`label: type sum=.. min=.. max=..` and a line with the first values (fixed precision)."""
    kind = a.dtype.kind if a.dtype.kind in "biu" else "f"
    flat = a.reshape(-1)
    head = f"{label}: {type_str}"
    if flat.size:
        wide = flat.astype(np.float64) if kind == "f" else flat.astype(np.int64)
        with np.errstate(all="ignore"):
            total, low, high = wide.sum(), wide.min(), wide.max()
        stats = f" sum={_fmt(total, kind if kind != 'b' else 'i')} min={_fmt(low, kind)} max={_fmt(high, kind)}"
    else:
        stats = " (empty)"
    values = ", ".join(_fmt(v, kind) for v in flat[:SHOWN_VALUES])
    more = ", ..." if flat.size > SHOWN_VALUES else ""
    return f"{head}{stats}\n  [{values}{more}]"


def write_npz(path: str, outputs: dict[str, np.ndarray[Any, Any]]) -> None:
    """Write `outputs` to `path` through a temporary file in the same folder (atomic)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ascend-run-", suffix=".npz")
    except OSError as e:
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **outputs)  # pyright: ignore[reportArgumentType]
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _pass_error(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def run(argv: Sequence[str] | None) -> None:
    args = build_parser().parse_args(argv)
    from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

    from ascend_mp.interpreter.runner import Program
    from ascend_mp.ir import make_context, read_module

    ctx = make_context()
    module = read_module(args.file, ctx)
    options: dict[str, Any] = precision_options(args)
    comparing = args.compare_modes or args.attribute_errors is not None
    if comparing and ("mode" in options or "mode_v2" in options):
        flag = "--compare-modes" if args.compare_modes else "--attribute-errors"
        raise AscendError(f"{flag} runs every precision mode; drop --precision_mode/--precision_mode_v2")
    if options and not comparing:
        from ascend_mp.passes import PASSES

        if "ascend-precision" not in PASSES:
            raise AscendError("the ascend-precision pass is not available in this build")
        try:
            PASSES["ascend-precision"]()(**options).apply(ctx, module)
        except (PassFailedException, DiagnosticException, VerifyException, ValueError) as e:
            raise AscendError(_pass_error(e)) from None
    program = Program.from_module(module)
    if args.function is not None:
        name = args.function.removeprefix("@")
    elif program.public:
        name = program.public[0]
    else:
        raise AscendError(f"{args.file}: no public function with a body to run")
    specs, results = program.signature(name)
    inputs, sources = gather_inputs(args, specs, name)

    out = sys.stdout
    if not (comparing and args.json):
        out.write(f"@{name}: {_count(len(specs), 'input')}, {_count(len(results), 'output')}\n")
        for spec, arr, source in zip(specs, inputs, sources):
            out.write(describe(f"input %{spec.name}", spec.type_str, arr).replace("\n", f" ({source})\n", 1) + "\n")
    if comparing:
        from ascend_mp.interpreter.compare import run_comparison

        def sample(seed: int) -> list[np.ndarray[Any, Any]]:
            return gather_inputs(argparse.Namespace(**{**vars(args), "seed": seed}), specs, name)[0]

        out.write(run_comparison(args, module, name, sample, options) + "\n")
        return
    start = time.perf_counter()
    outputs = program.run(name, *inputs, track_memory=args.print_memory, profile=args.print_timing)
    elapsed = time.perf_counter() - start
    for i, (spec, arr) in enumerate(zip(results, outputs)):
        out.write(describe(f"result{i}", spec.type_str, arr) + "\n")
    out.write(f"float status: {'overflow' if program.float_status else 'clear'}\n")
    if args.print_memory:
        out.write(f"peak memory: {program.peak_bytes} bytes of live tensors\n")
    if args.print_timing:
        out.write(f"time: {elapsed * 1e3:.3f} ms\n")
        for op, seconds in sorted(program.op_times.items(), key=lambda kv: (-kv[1], kv[0])):
            out.write(f"  {op:<28} {seconds * 1e3:.3f} ms\n")
    if args.output:
        write_npz(args.output, {f"result{i}": a for i, a in enumerate(outputs)})


def main(argv: Sequence[str] | None = None) -> None:
    try:
        run(argv)
    except AscendError as e:
        sys.exit(f"{PROG}: error: {e}")
    except BrokenPipeError:
        sys.exit(1)


if __name__ == "__main__":
    main()
