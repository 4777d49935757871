"""Evaluate a model over a dataset under precision modes: what a mode does to accuracy on the user's data.

```python
from ascend_mp.evaluate import EvalSettings, evaluate, load_dataset, load_model

model = load_model("model.onnx")
report = evaluate(model, load_dataset("val.npz", model), EvalSettings(variants=("fp32", "allow_mix_precision")))
```

A *variant* is what runs: `fp32` (the graph as given, no precision pass), a CANN
`precision_mode` (the `ascend-precision` pass in that mode), or a framework policy
(`tf`, `torch`, `mindspore`, `mindspore:O1`). Each is compiled once and run batch by
batch, with the graph's float64 run (`Program.from_module(reference=True)`) beside it.
Per variant and sample: the top-1 class (argmax over the last axis of the chosen output),
the normwise relative error of all float outputs against float64
(``max|y - r| / max|r|``, as `ascend_mp.interpreter.compare.relative_errors`) and
whether an output holds inf/NaN. Per variant: top-1 accuracy (with labels), top-1
agreement with fp32, the error's median, 99th percentile and maximum over samples, the
non-finite sample count and the seconds spent running it.

Batches run in worker processes (`jobs`); every number but the times is a function of
the samples alone, so results do not depend on `jobs` or on the batch order.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ascend_mp.errors import AscendError

Array = np.ndarray[Any, Any]
FP32 = "fp32"
POLICIES = ("tf", "torch", "mindspore")


def default_variants() -> tuple[str, ...]:
    """fp32 and every CANN mode (allow_mix_precision_fp16 is allow_mix_precision under another name)."""
    from ascend_mp.modes import V1_MODES

    return (FP32, *(m for m in V1_MODES if m != "allow_mix_precision_fp16"))


def variant_options(variant: str) -> dict[str, Any] | None:
    """The precision pass options of a variant (None: fp32, no pass); unknown names are an error."""
    from ascend_mp.modes import V1_MODES

    if variant == FP32:
        return None
    if variant in V1_MODES:
        return {"mode": variant}
    policy, _, level = variant.partition(":")
    if policy in POLICIES and (not level or policy == "mindspore"):
        return {"policy": policy, **({"level": level} if level else {})}
    raise AscendError(
        f"--modes: unknown mode '{variant}' (expected fp32, a precision_mode ({', '.join(V1_MODES)}), "
        f"or a policy: {', '.join(POLICIES)}, mindspore:O1)"
    )


# --------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------


@dataclass
class Model:
    """A model to evaluate: where it comes from, its inputs (name, per-sample shape, dtype) and batch size."""

    path: str
    inputs: list[tuple[str, tuple[int, ...] | None, np.dtype[Any]]]
    """Per input: its name, its per-sample shape (None: not fixed by the model) and dtype."""
    batch: int | None
    """The batch size the model fixes (None: dynamic, chosen by the evaluation)."""
    outputs: list[str]
    function: str = "main"
    onnx: bool = False
    """An ONNX model (else an MLIR module)."""


def load_model(path: str, function: str = "main", frontend: str | None = None) -> Model:
    """Read a model's interface: an ONNX model (`.onnx`, a file that reads as one, or `frontend="onnx"`) or an MLIR
    module (a function's arguments; `frontend="mlir"` reads any file so)."""
    from ascend_mp.fileio import check_input_file

    check_input_file(path)
    if not os.path.isfile(path):
        raise AscendError(f"{path}: cannot read file: no such file")
    from ascend_mp.frontend.tools import is_onnx

    if frontend == "onnx" or (frontend is None and is_onnx(path)):
        return _onnx_interface(path)
    module = model_module(path, None, function, onnx=False)
    from ascend_mp.frontend.tools import io_names
    from ascend_mp.interpreter.runner import Program

    args, results = Program.from_module(module).signature(function)
    in_names, out_names = io_names(module, function)
    names = [n or a.name for n, a in zip(in_names, args)]
    batches = {a.shape[0] for a in args if a.shape}
    if len(batches) != 1:
        raise AscendError(
            f"{path}: @{function}'s arguments do not share a batch dimension (shapes: "
            f"{', '.join(a.type_str for a in args)})"
        )
    inputs: list[tuple[str, tuple[int, ...] | None, np.dtype[Any]]] = [
        (n, tuple(a.shape[1:]), a.dtype) for n, a in zip(names, args)
    ]
    return Model(path, inputs, batches.pop(), [n or r.name for n, r in zip(out_names, results)], function)


def _onnx_interface(path: str) -> Model:
    from ascend_mp.dtypes import NUMPY
    from ascend_mp.frontend.model import load_model as read
    from ascend_mp.frontend.onnx_import import ONNX_TO_DTYPE

    proto, label = read(path, None)
    g = proto.graph
    inits = {i.name for i in g.initializer}
    inputs: list[tuple[str, tuple[int, ...] | None, np.dtype[Any]]] = []
    batch: set[int | None] = set()
    for vi in g.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        if t.elem_type not in ONNX_TO_DTYPE:
            raise AscendError(f"{label}: input '{vi.name}' is not a tensor of a supported element type")
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if not dims:
            raise AscendError(f"{label}: input '{vi.name}' has no batch dimension")
        batch.add(dims[0])
        rest = tuple(dims[1:])
        inputs.append((vi.name, None if None in rest else rest, np.dtype(NUMPY[ONNX_TO_DTYPE[t.elem_type]])))  # pyright: ignore[reportArgumentType]  # `rest` is passed only when it holds no None
    fixed = {b for b in batch if b is not None}
    if len(fixed) > 1 or (fixed and None in batch):
        raise AscendError(
            f"{label}: the inputs' first dimensions differ ({sorted(fixed)}); they must be one batch dimension"
        )
    return Model(path, inputs, fixed.pop() if fixed else None, [o.name for o in g.output], onnx=True)


def module_for(model: Model, batch: int) -> Any:
    """The model's module, its batch dimension fixed to `batch`."""
    shape = None
    if model.onnx:
        shape = ";".join(f"{n}:{','.join(str(d) for d in (batch, *(s or ())))}" for n, s, _ in model.inputs)
    return model_module(model.path, shape, model.function, model.onnx)


def model_module(path: str, input_shape: str | None, function: str, onnx: bool | None = None) -> Any:
    """The module of an ONNX model (`onnx`; None: by `is_onnx`, the extension or the content) or an MLIR file."""
    from ascend_mp.frontend.tools import is_onnx

    if onnx or (onnx is None and is_onnx(path)):
        from ascend_mp.frontend import import_onnx

        return import_onnx(path, input_shape)
    from ascend_mp.ir import read_module

    return read_module(path)


# --------------------------------------------------------------------------------------
# The dataset
# --------------------------------------------------------------------------------------


@dataclass
class Dataset:
    """Inputs by name (samples along the first axis) and optional integer labels."""

    inputs: dict[str, Array]
    labels: Array | None
    source: str

    @property
    def count(self) -> int:
        return len(next(iter(self.inputs.values())))


def load_dataset(path: str, model: Model) -> Dataset:
    """A `.npz` (one array per model input, by name; optional `labels`) or a folder of batches:
    `.npz` files with the same keys, or `.npy` files holding batches of a one-input model's
    input (a `labels.npy` beside them holds the labels), concatenated in file-name order."""
    names = [n for n, _, _ in model.inputs]
    if os.path.isdir(path):
        files = sorted(p for p in Path(path).iterdir() if p.suffix in (".npz", ".npy"))
        npz = [p for p in files if p.suffix == ".npz"]
        npy = [p for p in files if p.suffix == ".npy" and p.name != "labels.npy"]
        if not files:
            raise AscendError(f"{path}: no .npz or .npy batches in this folder")
        if npz and npy:
            raise AscendError(f"{path}: holds both .npz and .npy batches; use one kind")
        parts: list[dict[str, Array]] = []
        if npz:
            parts = [_read_npz(str(p)) for p in npz]
        else:
            if len(names) != 1:
                raise AscendError(
                    f"{path}: .npy batches feed a one-input model, but the model has inputs {', '.join(names)}; use .npz batches"
                )
            parts = [{names[0]: _read_npy(str(p))} for p in npy]
            if (Path(path) / "labels.npy").exists():
                parts.append({"labels": _read_npy(str(Path(path) / "labels.npy"))})
        arrays: dict[str, Array] = {}
        for key in sorted({k for part in parts for k in part}):
            pieces = [part[key] for part in parts if key in part]
            try:
                arrays[key] = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
            except ValueError as e:
                raise AscendError(f"{path}: batches of '{key}' do not concatenate: {e}") from None
    elif path.endswith(".npy") and len(names) == 1:
        arrays = {names[0]: _read_npy(path)}
    else:
        arrays = _read_npz(path)
    return _checked(arrays, model, path)


def _read_npz(path: str) -> dict[str, Array]:
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise AscendError(f"{path}: expected an .npz archive of arrays (one per model input), got one array")
            return {k: data[k] for k in data.files}
    except AscendError:
        raise
    except (OSError, ValueError, EOFError) as e:
        raise AscendError(f"{path}: cannot read as .npz: {' '.join(str(e).split()) or type(e).__name__}") from None
    except Exception as e:  # noqa: BLE001 - zipfile's and numpy's format errors have no common base
        raise AscendError(f"{path}: cannot read as .npz: {type(e).__name__}: {' '.join(str(e).split())}") from None


def _read_npy(path: str) -> Array:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise AscendError(f"{path}: cannot read as .npy: {' '.join(str(e).split())}") from None


def _checked(arrays: dict[str, Array], model: Model, source: str) -> Dataset:
    names = [n for n, _, _ in model.inputs]
    missing = [n for n in names if n not in arrays]
    if missing:
        have = ", ".join(sorted(arrays)) or "none"
        raise AscendError(
            f"{source}: no array for model input '{missing[0]}' (model inputs: {', '.join(names)}; arrays: {have})"
        )
    inputs: dict[str, Array] = {}
    count: int | None = None
    for name, shape, dtype in model.inputs:
        a = arrays[name]
        if a.ndim == 0 or (shape is not None and tuple(a.shape[1:]) != shape):
            want = "(N, " + ", ".join(str(d) for d in shape or ()) + ")" if shape is not None else "(N, ...)"
            raise AscendError(f"{source}: '{name}' has shape {tuple(a.shape)}, the model expects {want} (N samples)")
        kinds = {a.dtype.kind, np.dtype(dtype).kind}
        if len(kinds) > 1 and not kinds <= {"i", "u"}:  # floats of any width are rounded to the input's dtype
            raise AscendError(f"{source}: '{name}' holds {a.dtype}, the model input is {np.dtype(dtype)}")
        if count is not None and len(a) != count:
            raise AscendError(f"{source}: '{name}' has {len(a)} samples, but '{names[0]}' has {count}")
        count = len(a)
        inputs[name] = np.ascontiguousarray(a.astype(dtype, copy=False))
    assert count is not None
    if count == 0:
        raise AscendError(f"{source}: the dataset has no samples")
    labels = arrays.get("labels")
    if labels is not None:
        if labels.shape != (count,) or labels.dtype.kind not in "iu":
            raise AscendError(
                f"{source}: 'labels' must be {count} integer class indices (shape ({count},)), got {labels.dtype} {tuple(labels.shape)}"
            )
        labels = labels.astype(np.int64)
    return Dataset(inputs, labels, source)


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalSettings:
    variants: tuple[str, ...] = field(default_factory=default_variants)
    batch_size: int = 32
    """Samples per run where the model's batch dimension is dynamic."""
    jobs: int = 1
    output: str | None = None
    """The output whose argmax is the predicted class (default: the first)."""
    pass_options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Options for every variant's precision pass (soc, op_info, modify_mixlist, keep_dtype, customize_dtypes)."""


@dataclass
class VariantResult:
    variant: str
    ok: bool
    error: str | None = None
    accuracy: float | None = None
    agreement: float | None = None
    err_median: float = math.nan
    err_p99: float = math.nan
    err_max: float = math.nan
    nonfinite: int = 0
    seconds: float = 0.0
    errors: Array | None = None
    """Per-sample relative errors (kept for plots; not in `as_dict`)."""
    predictions: Array | None = None

    def as_dict(self) -> dict[str, Any]:
        def num(v: float | None) -> float | str | None:
            return v if v is None or math.isfinite(v) else str(v)

        return {
            "mode": self.variant,
            "ok": self.ok,
            "error": self.error,
            "accuracy": num(self.accuracy),
            "agreement": num(self.agreement),
            "rel_err": {"median": num(self.err_median), "p99": num(self.err_p99), "max": num(self.err_max)},
            "nonfinite_samples": self.nonfinite,
            "seconds": round(self.seconds, 4),
        }


@dataclass
class EvalReport:
    model: str
    dataset: str
    samples: int
    batch_size: int
    labels: bool
    results: list[VariantResult]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dataset": self.dataset,
            "samples": self.samples,
            "batch_size": self.batch_size,
            "labels": self.labels,
            "modes": [r.as_dict() for r in self.results],
            "seconds": round(self.seconds, 3),
        }


class _Compiled:
    """The programs of every variant (built once per process)."""

    def __init__(self, model: Model, batch: int, settings: EvalSettings):
        from ascend_mp.interpreter.runner import Program

        self.module = module_for(model, batch)
        self.function = model.function
        self.reference = Program.from_module(self.module, reference=True)
        self.programs: dict[str, Any] = {}
        self.failed: dict[str, str] = {}
        for variant in dict.fromkeys((FP32, *settings.variants)):
            try:
                self.programs[variant] = Program.from_module(_decided(self.module, variant, settings.pass_options))
            except AscendError as e:
                self.failed[variant] = str(e)
            except Exception as e:  # noqa: BLE001 - a pass failure (xDSL diagnostics): the variant's one-line error
                from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

                if not isinstance(e, (DiagnosticException, PassFailedException, VerifyException)):
                    raise
                self.failed[variant] = " ".join(str(e).split())


def _decided(module: Any, variant: str, pass_options: Mapping[str, Any]) -> Any:
    options = variant_options(variant)
    if options is None:
        return module
    from ascend_mp.passes.precision import run_precision

    clone = module.clone()
    run_precision(clone, **{**pass_options, **options})
    return clone


_STATE: dict[str, Any] = {}
"""Per process: the compiled programs, the dataset and the settings (set before the workers fork)."""


def _init_worker(model: Model, batch: int, settings: EvalSettings, dataset: Dataset) -> None:
    if "compiled" not in _STATE:
        _STATE.update(
            compiled=_Compiled(model, batch, settings), dataset=dataset, batch=batch, settings=settings, model=model
        )


def batch_args(data: Dataset, index: int, batch: int) -> tuple[list[Array], int]:
    """The arguments of batch `index` and its sample count (the last batch is padded with its last sample)."""
    start, stop = index * batch, min((index + 1) * batch, data.count)
    args = []
    for a in data.inputs.values():
        part = a[start:stop]
        if len(part) < batch:
            part = np.concatenate([part, np.repeat(part[-1:], batch - len(part), axis=0)])
        args.append(part)
    return args, stop - start


def _run_batch(index: int) -> tuple[int, dict[str, tuple[Array, Array, Array, float]]]:
    """One batch under every variant: per variant (top-1, relative error, non-finite, seconds) per sample."""
    compiled: _Compiled = _STATE["compiled"]
    out_index = _STATE["out_index"]
    args, n = batch_args(_STATE["dataset"], index, _STATE["batch"])
    reference = compiled.reference.run(compiled.function, *args)
    out: dict[str, tuple[Array, Array, Array, float]] = {}
    for variant, program in compiled.programs.items():
        t0 = time.perf_counter()
        ys = program.run(compiled.function, *args)
        seconds = time.perf_counter() - t0
        errs = per_sample_errors(ys, reference, n)
        nonfinite = np.zeros(n, bool)
        for y in ys:
            if y.dtype.kind == "f":
                nonfinite |= ~np.isfinite(np.asarray(y[:n]).reshape(n, -1)).all(axis=1)
        y = np.asarray(ys[out_index], np.float64)[:n]
        top1 = y.reshape(n, -1).argmax(axis=-1) if y.ndim >= 2 else np.full(n, -1)
        out[variant] = (top1, errs, nonfinite, seconds)
    return index, out


def with_data_shapes(model: Model, dataset: Dataset) -> Model:
    """The model with the per-sample shapes it leaves open taken from the dataset."""
    from dataclasses import replace

    inputs = [(n, s if s is not None else tuple(dataset.inputs[n].shape[1:]), d) for n, s, d in model.inputs]
    return replace(model, inputs=inputs)


def per_sample_errors(outputs: Sequence[Array], reference: Sequence[Array], n: int) -> Array:
    """Per sample (the first `n` along axis 0), ``max|y - r| / max|r|`` over all float outputs
    (inf for a NaN or inf the reference does not have; as `compare.relative_errors` per sample)."""
    diffs: list[Array] = []
    refs: list[Array] = []
    for y, r in zip(outputs, reference):
        if r.dtype.kind != "f":
            continue
        r64 = np.asarray(r[:n], np.float64).reshape(n, -1)
        y64 = np.asarray(y[:n], np.float64).reshape(n, -1)
        with np.errstate(all="ignore"):
            d = np.abs(y64 - r64)
        same = (y64 == r64) | (np.isnan(y64) & np.isnan(r64))
        diffs.append(np.where(same, 0.0, np.where(np.isnan(d), np.inf, d)))
        refs.append(np.abs(np.where(np.isfinite(r64), r64, 0.0)))
    if not diffs:
        return np.zeros(n)
    d, r = np.concatenate(diffs, axis=1), np.concatenate(refs, axis=1)
    if d.shape[1] == 0:
        return np.zeros(n)
    return d.max(axis=1) / np.maximum(r.max(axis=1), np.finfo(np.float64).tiny)


def evaluate(
    model: Model, dataset: Dataset, settings: EvalSettings, progress: Callable[[int], object] | None = None
) -> EvalReport:
    """Run every variant over the dataset (see the module docstring); `progress(k)` after each batch."""
    for v in settings.variants:
        variant_options(v)
    model = with_data_shapes(model, dataset)
    batch = model.batch or max(1, min(settings.batch_size, dataset.count))
    outputs = model.outputs
    out_index = 0
    if settings.output is not None:
        if settings.output not in outputs:
            raise AscendError(
                f"--output: '{settings.output}' is not an output of {model.path} (outputs: {', '.join(outputs)})"
            )
        out_index = outputs.index(settings.output)
    t0 = time.perf_counter()
    _STATE.clear()
    _init_worker(model, batch, settings, dataset)
    _STATE["out_index"] = out_index
    count = math.ceil(dataset.count / batch)
    # The first batch runs here, before the workers fork: its runs do the programs' lazy set-up once
    # for all workers (and count: no throwaway warm-up run).
    parts: dict[int, dict[str, tuple[Array, Array, Array, float]]] = dict([_run_batch(0)])
    if progress is not None:
        progress(1)
    for index, part in _batches(range(1, count), settings.jobs):
        parts[index] = part
        if progress is not None:
            progress(1)
    compiled: _Compiled = _STATE["compiled"]
    _STATE.clear()
    results: list[VariantResult] = []
    merged = {v: [np.concatenate([parts[i][v][k] for i in range(count)]) for k in range(3)] for v in compiled.programs}
    # The first batch's times hold the lazy set-up: with more batches, the others' times stand for all of them
    timed = range(1, count) if count > 1 else range(count)
    seconds = {v: sum(parts[i][v][3] for i in timed) * count / len(timed) for v in compiled.programs}
    base = merged.get(FP32)
    for v in settings.variants:
        if v in compiled.failed:
            results.append(VariantResult(v, False, compiled.failed[v]))
            continue
        top1, errs, nonfinite = merged[v]
        classes = bool(np.all(top1 >= 0))
        accuracy = float(np.mean(top1 == dataset.labels)) if classes and dataset.labels is not None else None
        agreement = float(np.mean(top1 == base[0])) if classes and base is not None else None
        results.append(
            VariantResult(
                v,
                True,
                None,
                accuracy,
                agreement,
                float(np.median(errs)),
                float(np.quantile(errs, 0.99, method="higher")),
                float(errs.max()),
                int(nonfinite.sum()),
                seconds[v],
                errs,
                top1,
            )
        )
    return EvalReport(
        model.path, dataset.source, dataset.count, batch, dataset.labels is not None, results, time.perf_counter() - t0
    )


def _batches(indices: range, jobs: int) -> Iterator[tuple[int, dict[str, tuple[Array, Array, Array, float]]]]:
    """Each batch's results, in completion order, from `jobs` worker processes (or this one)."""
    jobs = max(1, min(jobs, len(indices)))
    import multiprocessing

    # the workers inherit the compiled programs by forking
    if jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
        for i in indices:
            yield _run_batch(i)
        return
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap_unordered(_run_batch, indices)


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------


def format_report(report: EvalReport) -> str:
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.2f}%"

    header = f"{'mode':<26} {'accuracy':>9} {'agree':>8} {'err_median':>10} {'err_p99':>9} {'err_max':>9} {'nonfinite':>9} {'samples/s':>9}"
    lines = [
        f"{report.model} on {report.dataset}: {report.samples} samples, batch {report.batch_size}",
        header,
        "-" * len(header),
    ]
    for r in report.results:
        if not r.ok:
            lines.append(f"{r.variant:<26} error: {r.error}")
            continue
        rate = report.samples / r.seconds if r.seconds > 0 else math.inf
        lines.append(
            f"{r.variant:<26} {pct(r.accuracy):>9} {pct(r.agreement):>8} {r.err_median:>10.2e} {r.err_p99:>9.2e} "
            f"{r.err_max:>9.2e} {r.nonfinite:>9d} {rate:>9.0f}"
        )
    lines.append("agree: top-1 agreement with fp32; err: relative error of the outputs against float64, per sample")
    return "\n".join(lines)


def plot_report(report: EvalReport, path: str) -> bytes:
    """A PNG: accuracy and agreement per mode (bars), the per-sample error distribution per mode (box plot)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in report.results if r.ok]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(6.0, 0.9 * len(ok) + 2), 7), constrained_layout=True)
    x = np.arange(len(ok))
    names = [r.variant for r in ok]
    if report.labels:
        top.bar(x - 0.2, [100 * (r.accuracy or 0) for r in ok], 0.4, label="top-1 accuracy")
    top.bar(x + 0.2 if report.labels else x, [100 * (r.agreement or 0) for r in ok], 0.4, label="agreement with fp32")
    top.set_xticks(x, names, rotation=30, ha="right", fontsize=8)
    top.set_ylabel("%")
    top.legend(fontsize=8)
    top.set_title(f"{os.path.basename(report.model)}: {report.samples} samples")
    tiny = 1e-12
    data = [np.clip(np.nan_to_num(r.errors, nan=1e3, posinf=1e3), tiny, None) for r in ok if r.errors is not None]
    bottom.boxplot(data, tick_labels=names, whis=(1, 99))
    bottom.set_yscale("log")
    bottom.set_ylabel("relative error vs float64 (per sample)")
    bottom.tick_params(axis="x", rotation=30, labelsize=8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return buffer.getvalue()


__all__ = [
    "Dataset",
    "EvalReport",
    "EvalSettings",
    "Model",
    "VariantResult",
    "cpu_count",
    "default_variants",
    "evaluate",
    "batch_args",
    "format_report",
    "load_dataset",
    "load_model",
    "model_module",
    "module_for",
    "per_sample_errors",
    "plot_report",
    "variant_options",
    "with_data_shapes",
]
