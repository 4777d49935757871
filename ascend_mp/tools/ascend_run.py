"""`ascend-run`: execute a function of an ascend module on given or random inputs.

    ascend-run model.mlir --seed 0
    ascend-run model.mlir --function mlp --input x=x.npy --inputs params.npz -o out.npz
    ascend-run model.mlir --precision_mode allow_mix_precision --print-memory --print-timing
    ascend-run model.mlir --compare-modes
    ascend-run -f onnx model.bin --input_shape "x:1,3,224,224"

Inputs not given are random (seeded): floats standard normal, integers in [0, 10).
An input is named by its SSA name (`x` or `%x`) or its position (`0`); `.npz`
keys may also be `arg<i>`. The ATC flags (as in ascend-opt) run the
`ascend-precision` pass before executing. Outputs print in a stable,
FileCheck-friendly form; `-o` writes them (`result0`, `result1`, ...) to an
`.npz` file, only on success (`ascend_mp.fileio.write_output`). Errors are one line,
`ascend-run: error: ...`; exit status 1 for errors, 2 for usage errors, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ascend_mp.errors import AscendError
from ascend_mp.fileio import check_writable, is_safe_member, load_npy, load_npz, npz_bytes, write_output
from ascend_mp.limits import check_alloc
from ascend_mp.tools.atc import add_atc_arguments, impl_mode_options, precision_options
from ascend_mp.tools.cli import (
    UsageError,
    UsageParser,
    add_format_argument,
    add_log_argument,
    one_line,
    run_tool,
    setup_logging,
)

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

PROG = "ascend-run"
SHOWN_VALUES = 8


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
    if not 0 <= value < 2**128:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**128-1, got {value}")
    return value


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    """The comparison options besides --compare-modes (the comparison code loads only when one is used)."""
    from ascend_mp.interpreter.numerics import DIVERGENCE_THRESHOLD

    p.add_argument(
        "--samples",
        type=int,
        default=1,
        metavar="N",
        help="with --compare-modes: errors over N seeded inputs (seed, seed+1, ...), max and mean",
    )
    p.add_argument("--modes", metavar="A,B,...", help="with --compare-modes: only these precision modes, in this order")
    p.add_argument(
        "--attribute-errors",
        metavar="MODE",
        help="print each op's error under MODE against the float64 reference, in program order",
    )
    p.add_argument(
        "--divergence-threshold",
        type=float,
        default=DIVERGENCE_THRESHOLD,
        metavar="T",
        help=f"with --attribute-errors: an op diverges when its max_rel_err exceeds T (default {DIVERGENCE_THRESHOLD:g})",
    )
    p.add_argument("--json", action="store_true", help="with --compare-modes or --attribute-errors: print JSON only")


def build_parser() -> argparse.ArgumentParser:
    p = UsageParser(prog=PROG, description="Execute a function of an ascend module with the numpy interpreter.")
    p.add_argument("file", help="the module (.mlir) or an ONNX model (.onnx), or - for standard input")
    add_format_argument(p)
    p.add_argument("--function", metavar="NAME", help="function to run (default: the first public one)")
    p.add_argument(
        "--input", action="append", default=[], metavar="NAME_OR_INDEX=PATH.npy", help="an argument from a .npy file"
    )
    p.add_argument("--inputs", metavar="FILE.npz", help="arguments from an .npz file (keys: names, indices or arg<i>)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("-o", "--output", metavar="FILE.npz", help="write the outputs to an .npz file")
    p.add_argument("--print-timing", action="store_true", help="print the run time and the time per op type")
    p.add_argument("--print-memory", action="store_true", help="print the peak bytes of live tensors")
    p.add_argument("--compare-modes", action="store_true", help="run every precision mode and compare with float64")
    add_compare_arguments(p)  # --samples, --modes, --attribute-errors, --divergence-threshold, --json
    p.add_argument(
        "--backend",
        choices=("interpreter", "iree"),
        default="interpreter",
        help="run with the numpy interpreter (default) or lowered and compiled by IREE (docs/usage/lowering.md)",
    )
    p.add_argument(
        "--device", choices=("cpu", "cuda"), default="cpu", help="with --backend iree: the device (default cpu)"
    )
    add_atc_arguments(p, "ATC precision options (run the ascend-precision pass first)", report=False)
    add_log_argument(p)
    from ascend_mp.frontend.tools import add_frontend_arguments

    add_frontend_arguments(p)
    return p


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


def _arg_index(key: str, names: Sequence[str], source: str) -> int:
    key = key.removeprefix("%")
    if key in names:
        return names.index(key)
    for candidate in (key, key.removeprefix("arg")):
        if candidate.isdigit() and int(candidate) < len(names):
            return int(candidate)
    listed = ", ".join(f"{i}: %{n}" for i, n in enumerate(names))
    raise AscendError(f"{source}: '{key}' names no argument (arguments: {listed})")


def gather_inputs(
    args: argparse.Namespace, specs: Sequence[Any], func_name: str
) -> tuple[list[np.ndarray[Any, Any]], list[str]]:
    """The arguments (from files, else random) and where each came from."""
    names = [s.name for s in specs]
    given: dict[int, tuple[np.ndarray[Any, Any], str]] = {}

    def give(index: int, array: np.ndarray[Any, Any], source: str) -> None:
        if index in given:
            raise AscendError(f"{source}: argument {index} (%{names[index]}) is already given by {given[index][1]}")
        given[index] = (array, source)

    if args.inputs:
        for key, array in load_npz(args.inputs).items():
            give(_arg_index(key, names, args.inputs), array, f"{args.inputs}[{key}]")
    for item in args.input:
        key, sep, path = item.partition("=")
        if not sep or not key or not path:
            raise UsageError(f"--input expects NAME_OR_INDEX=PATH.npy, got '{item}'")
        index = _arg_index(key, names, f"--input {item}")
        give(index, load_npy(path), path)
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
        check_alloc(
            spec.shape,
            spec.dtype.itemsize,
            f"{args.file}: random input for argument {i} (%{spec.name}) of @{func_name} ({spec.type_str})",
        )
        arrays.append(random_array(rng, spec.dtype, spec.shape))
        sources.append(f"random, seed {args.seed}")
    return arrays, sources


RANDOM_CHUNK = 1 << 20


def random_array(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Standard normal floats, integers in [0, 10), random booleans.

    Drawn in chunks of RANDOM_CHUNK elements straight into the result, so only one chunk exists in
    float64/int64 at a time (the values are those of one big draw: the generator's stream is the same)."""
    out = np.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    for start in range(0, flat.size, RANDOM_CHUNK):
        n = min(RANDOM_CHUNK, flat.size - start)
        if dtype == np.dtype(np.bool_):
            flat[start : start + n] = rng.integers(0, 2, n).astype(np.bool_)
        elif dtype.kind in "iu":
            flat[start : start + n] = rng.integers(0, 10, n)
        else:
            flat[start : start + n] = rng.standard_normal(n)
    return out


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
    """Write `outputs` to `path` as an .npz file (`write_output`: atomic, kept mode, devices written through)."""
    write_output(path, npz_bytes(outputs))


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _pass_error(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


# --------------------------------------------------------------------------------------
# --compare-modes / --attribute-errors (the comparison code loads only when one is used)
# --------------------------------------------------------------------------------------


def _json_number(v: float) -> float | str:
    return v if math.isfinite(v) else str(v)  # JSON has no inf/NaN: "inf", "nan"


def _check_mode(flag: str, mode: str) -> str:
    from ascend_mp.interpreter.compare import ALL_V1_MODES

    if mode not in ALL_V1_MODES:
        raise UsageError(f"{flag}: unknown precision mode '{mode}' (modes: {', '.join(ALL_V1_MODES)})")
    return mode


def run_comparison(
    args: argparse.Namespace,
    module: ModuleOp,
    func_name: str,
    sample: Callable[[int], Sequence[np.ndarray[Any, Any]]],
    options: dict[str, Any],
) -> str:
    """What `ascend-run --compare-modes` / `--attribute-errors` print; `sample(seed)` gives one seed's inputs."""
    import json
    from dataclasses import asdict

    from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

    from ascend_mp.interpreter.compare import (
        ALL_V1_MODES,
        attribute_errors,
        compare_modes,
        format_attribution,
        format_table,
    )

    if args.samples < 1:
        raise UsageError(f"--samples expects a positive count, got {args.samples}")
    modes = list(ALL_V1_MODES)
    if args.modes is not None:
        modes = [_check_mode("--modes", m.strip()) for m in args.modes.split(",")]
    if args.attribute_errors is not None:
        _check_mode("--attribute-errors", args.attribute_errors)
    seeds = [args.seed + k for k in range(args.samples)]
    first = sample(seeds[0])
    data: dict[str, Any] = {"function": func_name, "seeds": seeds}
    text: list[str] = []
    if args.compare_modes:
        results = compare_modes(module, func_name, first, modes, more_samples=[sample(s) for s in seeds[1:]], **options)
        data["modes"] = [
            {k: _json_number(v) if isinstance(v, float) else v for k, v in asdict(r).items()} for r in results
        ]
        text.append(format_table(results))
    if args.attribute_errors is not None:
        try:
            a = attribute_errors(module, func_name, first, args.attribute_errors, args.divergence_threshold, **options)
        except (PassFailedException, DiagnosticException, VerifyException) as e:
            raise AscendError(" ".join(str(e).split())) from None
        divergent = a.first_divergent
        data["attribution"] = {
            "mode": a.mode,
            "seed": seeds[0],
            "threshold": a.threshold,
            "first_divergent": None if divergent is None else divergent.index,
            "ops": [
                {
                    **asdict(e),
                    "dtypes": list(e.dtypes),
                    "max_rel_err": _json_number(e.max_rel_err),
                    "mean_rel_err": _json_number(e.mean_rel_err),
                }
                for e in a.ops
            ],
        }
        text.append(format_attribution(a))
    if args.json:
        return json.dumps(data, indent=2)
    return "\n".join(text)


def run(argv: Sequence[str] | None) -> None:
    args = build_parser().parse_args(argv)
    setup_logging(PROG, args.log)
    from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

    from ascend_mp.interpreter.runner import Program
    from ascend_mp.ir import location_of, make_context
    from ascend_mp.limits import check_module_sizes, check_no_recursion, module_values

    options: dict[str, Any] = precision_options(args)
    comparing = args.compare_modes or args.attribute_errors is not None
    if not comparing and (args.json or args.samples != 1 or args.modes is not None):
        raise UsageError("--samples, --modes and --json go with --compare-modes or --attribute-errors")
    if comparing and ("mode" in options or "mode_v2" in options):
        flag = "--compare-modes" if args.compare_modes else "--attribute-errors"
        raise UsageError(f"{flag} runs every precision mode; drop --precision_mode/--precision_mode_v2")
    if comparing and args.output:
        raise UsageError(
            f"{'--compare-modes' if args.compare_modes else '--attribute-errors'} writes no .npz file; drop -o"
        )
    if args.backend == "iree" and (comparing or args.print_memory):
        raise UsageError("--backend iree runs one function; drop --compare-modes/--attribute-errors/--print-memory")
    if args.device != "cpu" and args.backend != "iree":
        raise UsageError(f"--device {args.device} needs --backend iree")
    if args.output:
        check_writable(args.output)
    ctx = make_context()
    from ascend_mp.frontend.tools import io_names, is_onnx, rename_specs

    if args.frontend == "onnx" or (args.frontend is None and is_onnx(args.file)):  # through the frontend, no text
        from ascend_mp.frontend import import_onnx

        if args.file == "-":
            from ascend_mp.fileio import read_input

            module = import_onnx(read_input("-"), args.input_shape, name="<stdin>")
        else:
            module = import_onnx(args.file, args.input_shape)
    else:
        from ascend_mp.fileio import read_input
        from ascend_mp.ir import decode_source, verify
        from ascend_mp.tools.cli import parse_text

        source = "<stdin>" if args.file == "-" else args.file
        module = parse_text(ctx, decode_source(read_input(args.file), source), source)
        verify(module)
    check_no_recursion(module, location_of)
    impl = impl_mode_options(args)
    if impl:  # recorded on the ops before the precision pass (and kept by every mode of --compare-modes)
        from ascend_mp.passes import PASSES

        PASSES["ascend-impl-mode"]()(**impl).apply(ctx, module)
    if options and not comparing:
        from ascend_mp.passes import PASSES

        if "ascend-precision" not in PASSES:
            raise AscendError("the ascend-precision pass is not available in this build")
        try:
            PASSES["ascend-precision"]()(**options).apply(ctx, module)
        except (PassFailedException, DiagnosticException, VerifyException, ValueError) as e:
            raise AscendError(_pass_error(e)) from None
    check_module_sizes(module_values(module, location_of))
    program = Program.from_module(module)
    if args.function is not None:
        name = args.function.removeprefix("@")
    elif program.public:
        name = program.public[0]
    else:
        raise AscendError(f"{args.file}: no public function with a body to run")
    specs, results = program.signature(name)
    arg_names, result_names = io_names(module, name)
    specs = rename_specs(specs, arg_names)
    inputs, sources = gather_inputs(args, specs, name)

    out = sys.stdout
    if not (comparing and args.json):
        out.write(f"@{name}: {_count(len(specs), 'input')}, {_count(len(results), 'output')}\n")
        for spec, arr, source in zip(specs, inputs, sources):
            out.write(describe(f"input %{spec.name}", spec.type_str, arr).replace("\n", f" ({source})\n", 1) + "\n")
    if comparing:

        def sample(seed: int) -> list[np.ndarray[Any, Any]]:
            return gather_inputs(argparse.Namespace(**{**vars(args), "seed": seed}), specs, name)[0]

        out.write(run_comparison(args, module, name, sample, options) + "\n")
        return
    if args.backend == "iree":
        from ascend_mp.backend.iree import IreeProgram

        compiled = IreeProgram.from_module(module, args.device)  # compiled once, cached: not timed
        start = time.perf_counter()
        outputs = compiled.run(name, *inputs)
    else:
        start = time.perf_counter()
        outputs = program.run(name, *inputs, track_memory=args.print_memory, profile=args.print_timing)
    elapsed = time.perf_counter() - start
    for i, (spec, arr) in enumerate(zip(results, outputs)):
        out.write(describe(f"result{i}", spec.type_str, arr) + "\n")
    if args.backend == "interpreter":  # IREE's lowering keeps no float status register of its own
        out.write(f"float status: {'overflow' if program.float_status else 'clear'}\n")
    if args.print_memory:
        out.write(f"peak memory: {program.peak_bytes} bytes of live tensors\n")
    if args.print_timing:
        out.write(f"time: {elapsed * 1e3:.3f} ms\n")
        for op, seconds in sorted(program.op_times.items(), key=lambda kv: (-kv[1], kv[0])):
            out.write(f"  {op:<28} {seconds * 1e3:.3f} ms\n")
    if args.output:
        named: dict[str, np.ndarray[Any, Any]] = {}
        for i, (n, a) in enumerate(zip(result_names, outputs)):
            if not n or n.startswith("result"):
                continue
            if is_safe_member(n):
                named[n] = a
            else:  # `../x`, `a/b`: never a path inside the archive; the value is there as result<i>
                logging.getLogger("ascend_mp").warning(
                    "output '%s' is stored in %s as 'result%d' only (not a plain .npz member name)",
                    one_line(n),
                    args.output,
                    i,
                )
        write_npz(args.output, {**named, **{f"result{i}": a for i, a in enumerate(outputs)}})


def main(argv: Sequence[str] | None = None) -> None:
    """Run ascend-run (exit status: 0 ok, 1 error, 2 usage error, 130 Ctrl-C)."""
    run_tool(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
