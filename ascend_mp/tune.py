"""`tune`: the ops to keep in high precision so that a mode meets a tolerance on the user's data.

The search (onnxconverter-common's `auto_convert_mixed_precision` bisects node lists with
onnxruntime until the outputs meet rtol/atol; this one bisects with the interpreter and
measures what users care about on their data):

1. Evaluate the mode as it is. If it meets the tolerance, nothing needs to stay high.
2. The candidates are the ops the mode runs in a low dtype (by `name`, the ONNX node name),
   less those that stay low when kept: the target has no kernel for them in the original dtype
   (Conv2D and DepthwiseConv2D have only fp16 kernels on ascend910 and ascend910b; they are
   reported as `stay_low`). Keeping all candidates in their original dtype must meet the
   tolerance, else the tuner says so and returns no configuration.
3. Rank the candidates by the per-op error attribution of the mode
   (`ascend_mp.interpreter.compare.attribute_errors`, on the first samples): the op whose
   own output is furthest from the float64 reference first, ties in program order.
4. Bisect the shortest prefix of the ranking that meets the tolerance (keeping more ops
   high never makes it worse in practice; the result is checked, not assumed). Where that
   prefix is over 90% of the candidates (the ranking singled out nothing: in a CNN the early
   ops' rounding, small where it happens, runs through the whole model), bisect program order
   too, earliest first, and take the shorter prefix.
5. Prune: drop what the prefix does not need, halves first, then single ops (a round of
   halves where nothing could go is followed by single ops).
6. Generalise to op types: `black-list` `to-add` with the op types of the kept ops, for
   `--modify_mixlist`; kept only if it meets the tolerance too.

Every configuration returned has been evaluated on the whole dataset: with `samples`, the
search runs on a seeded random subset of that many samples, and its result is then checked on
the whole dataset (a miss there is reported, never returned as met). The result is a pure
function of the model, the data and the options.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascend_mp.errors import AscendError
from ascend_mp.evaluate import Dataset, Model, batch_args, module_for, per_sample_errors, with_data_shapes

Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Tolerance:
    """What must hold on the dataset (None: not checked)."""

    min_agreement: float | None = 0.99
    """Top-1 agreement with fp32."""
    max_rel_err: float | None = None
    """The 99th percentile of the per-sample relative error against float64."""
    max_accuracy_drop: float | None = None
    """fp32 accuracy minus the mode's (needs labels)."""
    rtol: float | None = None
    """With `atol`: every element of every output, on every sample, within `atol + rtol * |y|` of the fp32
    run's (`np.allclose(fp32, y, rtol, atol)`, onnxconverter-common's `auto_convert_mixed_precision` check).
    Either alone takes numpy's default for the other (rtol 1e-5, atol 1e-8), as that tool does."""
    atol: float | None = None

    @property
    def elementwise(self) -> tuple[float, float] | None:
        """(rtol, atol) of the elementwise check, None where it is not asked for."""
        if self.rtol is None and self.atol is None:
            return None
        return (1e-5 if self.rtol is None else self.rtol, 1e-8 if self.atol is None else self.atol)

    def misses(self, m: Metrics, fp32_accuracy: float | None) -> list[str]:
        """What the metrics miss (empty: the tolerance holds)."""
        out: list[str] = []
        if self.min_agreement is not None and not (m.agreement is not None and m.agreement >= self.min_agreement):
            out.append(f"agreement {_pct(m.agreement)} < {_pct(self.min_agreement)}")
        if self.max_rel_err is not None and not m.err_p99 <= self.max_rel_err:
            out.append(f"p99 relative error {m.err_p99:.3g} > {self.max_rel_err:g}")
        if self.max_accuracy_drop is not None:
            drop = math.inf if m.accuracy is None or fp32_accuracy is None else fp32_accuracy - m.accuracy
            if not drop <= self.max_accuracy_drop + 1e-12:
                out.append(f"accuracy drop {drop:.4f} > {self.max_accuracy_drop:g}")
        close = self.elementwise
        if close is not None and not m.close_ratio <= 1.0:
            out.append(
                f"not allclose to fp32 (rtol {close[0]:g}, atol {close[1]:g}): "
                f"worst |fp32 - y| is {m.close_ratio:.3g}x atol + rtol*|y|"
            )
        return out


@dataclass(frozen=True)
class Metrics:
    agreement: float | None
    accuracy: float | None
    err_p99: float
    nonfinite: int
    close_ratio: float = math.nan
    """The largest |fp32 - y| / (atol + rtol * |y|) over all output elements (<= 1: allclose holds; nan where the
    tolerance has no rtol/atol)."""


@dataclass
class TuneResult:
    mode: str
    tolerance: Tolerance
    met: bool
    keep: list[str]
    """Op names kept in their original dtype (the `--keep_dtype` file)."""
    black_types: list[str] | None
    """Op types for `black-list` `to-add` (None: blacklisting by type does not meet the tolerance)."""
    candidates: int
    stay_low: dict[str, tuple[str, ...]]
    """Ops (by name, with their op types) that stay low even when kept: the target has no kernel for them in the
    original dtype (e.g. Conv2D has only fp16 kernels on ascend910), so they are not candidates."""
    low_flops_before: float
    low_flops_after: float
    low_flops_by_type: float | None
    total_flops: float
    before: Metrics
    after: Metrics | None
    fp32_accuracy: float | None
    evaluations: int
    seconds: float
    message: str
    history: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def mixlist(self) -> dict[str, Any] | None:
        """The CANN `--modify_mixlist` JSON (None where blacklisting by type does not meet the tolerance)."""
        return None if self.black_types is None else {"black-list": {"to-add": self.black_types}}

    def keep_dtype_text(self) -> str:
        return "".join(f"{n}\n" for n in self.keep)

    def as_dict(self) -> dict[str, Any]:
        def metrics(m: Metrics | None) -> dict[str, Any] | None:
            if m is None:
                return None
            return {
                "agreement": m.agreement,
                "accuracy": m.accuracy,
                "rel_err_p99": _jsonable(m.err_p99),
                "nonfinite_samples": m.nonfinite,
                "allclose_ratio": None if math.isnan(m.close_ratio) else _jsonable(m.close_ratio),
            }

        t = self.tolerance
        return {
            "mode": self.mode,
            "met": self.met,
            "message": self.message,
            "tolerance": {
                "min_agreement": t.min_agreement,
                "max_rel_err": t.max_rel_err,
                "max_accuracy_drop": t.max_accuracy_drop,
                "rtol": None if t.elementwise is None else t.elementwise[0],
                "atol": None if t.elementwise is None else t.elementwise[1],
            },
            "keep_dtype": self.keep,
            "mixlist": self.mixlist(),
            "candidates": self.candidates,
            "stay_low": {n: list(t) for n, t in self.stay_low.items()},
            "flops": {
                "total": self.total_flops,
                "low_before": self.low_flops_before,
                "low_after_keep_dtype": self.low_flops_after,
                "low_after_mixlist": self.low_flops_by_type,
            },
            "fp32_accuracy": self.fp32_accuracy,
            "before": metrics(self.before),
            "after": metrics(self.after),
            "evaluations": self.evaluations,
            "seconds": round(self.seconds, 3),
        }


class _Evaluator:
    """Runs one configuration of the mode over the tuning data; the float64 and fp32 runs are done once."""

    def __init__(
        self,
        model: Model,
        data: Dataset,
        mode: str,
        batch_size: int,
        pass_options: dict[str, Any],
        output: int,
        close: tuple[float, float] | None = None,
    ):
        from ascend_mp.interpreter.runner import Program

        self.model = with_data_shapes(model, data)
        self.data, self.mode, self.options, self.output, self.close = data, mode, pass_options, output, close
        self.batch = model.batch or max(1, min(batch_size, data.count))
        self.module = module_for(self.model, self.batch)
        self.function = model.function
        self.batches = [batch_args(data, i, self.batch) for i in range(math.ceil(data.count / self.batch))]
        reference = Program.from_module(self.module, reference=True)
        self.references = [reference.run(self.function, *args) for args, _ in self.batches]
        fp32 = Program.from_module(self.module)
        self.fp32_outputs = [[np.array(y[:n]) for y in fp32.run(self.function, *a)] for a, n in self.batches]
        self.fp32_top1 = np.concatenate([self._top1(ys, n) for ys, (_, n) in zip(self.fp32_outputs, self.batches)])
        self.fp32_accuracy = float(np.mean(self.fp32_top1 == data.labels)) if data.labels is not None else None
        self.count = 0

    def _top1(self, ys: Sequence[Array], n: int) -> Array:
        y = np.asarray(ys[self.output], np.float64)[:n]
        return y.reshape(n, -1).argmax(axis=-1)

    def decided(self, keep: Sequence[str] = (), black_types: Sequence[str] = ()) -> Any:
        from ascend_mp.passes.precision import run_precision

        clone = self.module.clone()
        with tempfile.TemporaryDirectory() as folder:
            options: dict[str, Any] = dict(self.options)
            if keep:
                path = os.path.join(folder, "keep.cfg")
                with open(path, "w") as f:
                    f.write("".join(f"{n}\n" for n in keep))
                options["keep_dtype"] = path
            if black_types:
                path = os.path.join(folder, "mixlist.json")
                with open(path, "w") as f:
                    json.dump({"black-list": {"to-add": list(black_types)}}, f)
                options["modify_mixlist"] = path
            run_precision(clone, mode=self.mode, **options)
        return clone

    def measure(self, decided: Any) -> Metrics:
        from ascend_mp.interpreter.runner import Program

        self.count += 1
        program = Program.from_module(decided)
        top1, errs, nonfinite, close = [], [], 0, 0.0 if self.close is not None else math.nan
        for (args, n), reference, fp32 in zip(self.batches, self.references, self.fp32_outputs):
            ys = program.run(self.function, *args)
            top1.append(self._top1(ys, n))
            errs.append(per_sample_errors(ys, reference, n))
            if self.close is not None:
                close = max([close, *(close_ratio(a, np.asarray(y)[:n], *self.close) for a, y in zip(fp32, ys))])
            for y in ys:
                if y.dtype.kind == "f":
                    nonfinite += int((~np.isfinite(np.asarray(y[:n]).reshape(n, -1))).any(axis=1).sum())
        t, e = np.concatenate(top1), np.concatenate(errs)
        accuracy = float(np.mean(t == self.data.labels)) if self.data.labels is not None else None
        return Metrics(
            float(np.mean(t == self.fp32_top1)),
            accuracy,
            float(np.quantile(e, 0.99, method="higher")),
            nonfinite,
            close,
        )


def close_ratio(fp32: Array, y: Array, rtol: float, atol: float) -> float:
    """The largest |fp32 - y| / (atol + rtol * |y|) over the elements: <= 1 exactly where
    `np.allclose(fp32, y, rtol, atol)` holds (NaN fails, equal infinities pass, as there)."""
    a, b = np.asarray(fp32, np.float64), np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        diff = np.abs(a - b)
        ratio = np.where(diff == 0, 0.0, diff / (atol + rtol * np.abs(b)))
        ratio = np.where(np.isnan(ratio), np.inf, ratio)  # inf / inf: an infinity against a finite value
        ratio = np.where(np.isinf(a) & (a == b), 0.0, ratio)
        ratio = np.where(np.isnan(a) | np.isnan(b), np.inf, ratio)
    worst = float(ratio.max()) if ratio.size else 0.0
    if np.allclose(a, b, rtol, atol) != (worst <= 1.0):  # a quotient rounded across 1: numpy's test decides
        worst = 1.0 if worst > 1.0 else float(np.nextafter(1.0, 2.0))
    return worst


def low_ops(decided: Any) -> dict[str, tuple[tuple[str, ...], float]]:
    """Ops (by name) with a low-precision operand or result: their op types (an ONNX node may become several
    ops, e.g. Gemm: MatMulV2 and BiasAdd) and estimated FLOPs, summed per name."""
    from ascend_mp.dialects.ascend import AscendOp, op_type
    from ascend_mp.dtypes import LOW_FLOATS, tensor_dtype

    out: dict[str, tuple[tuple[str, ...], float]] = {}
    for op in decided.walk():
        if not isinstance(op, AscendOp) or op.node_name is None or op_type(op) in ("Cast", "Const"):
            continue
        if any(tensor_dtype(v.type) in LOW_FLOATS for v in (*op.operands, *op.results)):
            name = op.node_name.data
            types, previous = out.get(name, ((), 0.0))
            kind = op_type(op)
            out[name] = (types if kind in types else (*types, kind), previous + flops(op))
    return out


def flops(op: Any) -> float:
    """Estimated floating-point operations: 2 x output elements x reduction size for cube ops
    (MatMul*, BatchMatMul*, Conv2D*: the contraction), else one per output element."""
    from ascend_mp.dialects.ascend import op_type, shape_of

    kind = op_type(op)
    out = float(sum(np.prod(shape_of(r)) for r in op.results)) if op.results else 0.0
    if kind.startswith(("MatMul", "BatchMatMul")) and op.operands:
        a, b = float(np.prod(shape_of(op.operands[0]))), float(np.prod(shape_of(op.operands[1])))
        k = math.sqrt(a * b / out) if out else 0.0  # (M*K)(K*N)/(M*N) = K^2, whatever the transposes
        return 2.0 * out * k
    if kind.startswith(("Conv2D", "DepthwiseConv2D")) and len(op.operands) > 1:
        w = shape_of(op.operands[1])  # NCHW filters (out, in/groups, kh, kw) as the importer writes them
        per = float(np.prod(w[1:])) if kind.startswith("Conv2D") else float(np.prod(w[2:]))
        return 2.0 * out * per
    return out


def total_flops(module: Any) -> float:
    from ascend_mp.dialects.ascend import AscendOp, op_type

    return sum(flops(op) for op in module.walk() if isinstance(op, AscendOp) and op_type(op) not in ("Cast", "Const"))


def rank(ev: _Evaluator, candidates: Sequence[str]) -> list[str]:
    """The candidates, the op whose own output errs most (against float64, on the first batch) first."""
    from ascend_mp.interpreter.compare import attribute_errors

    args, _ = ev.batches[0]
    attribution = attribute_errors(ev.module, ev.function, args, ev.mode, **ev.options)
    score: dict[str, float] = {}
    order: dict[str, int] = {}
    for e in attribution.ops:
        if e.name in candidates:
            err = e.max_rel_err if not math.isnan(e.max_rel_err) else math.inf
            score[e.name] = max(score.get(e.name, 0.0), err)
            order.setdefault(e.name, e.index)
    return sorted(candidates, key=lambda c: (-score.get(c, 0.0), order.get(c, 1 << 30), c))


def tune(
    model: Model,
    data: Dataset,
    mode: str = "allow_mix_precision",
    tolerance: Tolerance = Tolerance(),
    *,
    batch_size: int = 32,
    pass_options: dict[str, Any] | None = None,
    output: int = 0,
    log: Callable[[str], None] | None = None,
    samples: int | None = None,
    seed: int = 0,
) -> TuneResult:
    """Search the ops to keep high (see the module docstring)."""
    if tolerance.max_accuracy_drop is not None and data.labels is None:
        raise AscendError("--max-accuracy-drop needs labels in the dataset (an integer array 'labels')")
    if samples is None or samples >= data.count:
        return _search(model, data, mode, tolerance, batch_size, dict(pass_options or {}), output, log)
    chosen = np.sort(np.random.default_rng(seed).choice(data.count, samples, replace=False))
    subset = Dataset(
        {k: v[chosen] for k, v in data.inputs.items()},
        None if data.labels is None else data.labels[chosen],
        f"{data.source} ({samples} samples, seed {seed})",
    )
    found = _search(model, subset, mode, tolerance, batch_size, dict(pass_options or {}), output, log)
    if not found.met:
        return found
    t0 = time.perf_counter()
    ev = _Evaluator(model, data, mode, batch_size, dict(pass_options or {}), output, tolerance.elementwise)
    after = ev.measure(ev.decided(found.keep))
    missed = tolerance.misses(after, ev.fp32_accuracy)
    found.after, found.fp32_accuracy = after, ev.fp32_accuracy
    found.before = ev.measure(ev.decided())
    if (
        found.black_types is not None
        and found.black_types
        and tolerance.misses(ev.measure(ev.decided((), found.black_types)), ev.fp32_accuracy)
    ):
        found.black_types, found.low_flops_by_type = None, None
        found.message += "; blacklisting by op type misses the tolerance on the whole dataset"
    found.evaluations += ev.count
    found.seconds += time.perf_counter() - t0
    if missed:
        found.met = False
        found.message = (
            f"the ops found on {samples} samples miss the tolerance on the whole dataset ({'; '.join(missed)}); "
            f"tune on more samples"
        )
    return found


def _search(
    model: Model,
    data: Dataset,
    mode: str,
    tolerance: Tolerance,
    batch_size: int,
    pass_options: dict[str, Any],
    output: int,
    log: Callable[[str], None] | None,
) -> TuneResult:
    t0 = time.perf_counter()
    ev = _Evaluator(model, data, mode, batch_size, pass_options, output, tolerance.elementwise)
    say = log or (lambda _: None)
    history: list[dict[str, Any]] = []

    def check(keep: Sequence[str], black: Sequence[str] = ()) -> tuple[bool, Metrics, Any]:
        decided = ev.decided(keep, black)
        m = ev.measure(decided)
        missed = tolerance.misses(m, ev.fp32_accuracy)
        history.append({"keep": len(keep), "black_types": list(black), "agreement": m.agreement, "met": not missed})
        say(
            f"evaluation {ev.count}: {len(keep)} ops kept{' (types ' + ','.join(black) + ')' if black else ''}: "
            f"agreement {_pct(m.agreement)}, p99 error {m.err_p99:.3g}"
            + ("" if math.isnan(m.close_ratio) else f", allclose ratio {m.close_ratio:.3g}")
            + f": {'meets' if not missed else '; '.join(missed)}"
        )
        return not missed, m, decided

    ok, before, base = check(())
    low = low_ops(base)
    total = total_flops(base)
    before_flops = sum(f for _, f in low.values())
    with _quiet():  # keep_dtype's "cannot keep" warnings: reported once, as stay_low
        still = low_ops(ev.decided(sorted(low)))
    stay_low = {n: still[n][0] for n in sorted(still)}
    candidates = sorted(n for n in low if n not in still or still[n][1] < low[n][1])

    def result(
        met: bool,
        keep: list[str],
        black: list[str] | None,
        after: Metrics | None,
        decided: Any,
        by_type: Any,
        message: str,
    ) -> TuneResult:
        after_flops = sum(f for _, f in low_ops(decided).values()) if decided is not None else 0.0
        type_flops = sum(f for _, f in low_ops(by_type).values()) if by_type is not None else None
        return TuneResult(
            mode,
            tolerance,
            met,
            keep,
            black,
            len(candidates),
            stay_low,
            before_flops,
            after_flops,
            type_flops,
            total,
            before,
            after,
            ev.fp32_accuracy,
            ev.count,
            time.perf_counter() - t0,
            message,
            history,
        )

    if ok:
        return result(
            True, [], [], before, base, base, f"{mode} meets the tolerance as it is: nothing needs to stay high"
        )
    ok_all, m_all, all_high = check(candidates)
    if not ok_all:
        missed = "; ".join(tolerance.misses(m_all, ev.fp32_accuracy))
        return result(
            False,
            [],
            None,
            m_all,
            None,
            None,
            f"the tolerance is not reachable under {mode}: even with all {len(candidates)} low-precision ops kept high, "
            f"{missed}{_stay_low_text(stay_low, ' (')}",
        )
    ranked = rank(ev, candidates)
    hi, best = _shortest_prefix(ranked, (m_all, all_high), check)
    if 10 * hi > 9 * len(ranked):  # the ranking singled out nothing (CNNs: early ops' rounding runs through all)
        chosen = set(candidates)
        in_order = [n for n in low if n in chosen]  # program order: low_ops walks the program
        hi_order, best_order = _shortest_prefix(in_order, (m_all, all_high), check)
        if hi_order < hi:
            ranked, hi, best = in_order, hi_order, best_order
    keep = ranked[:hi]
    keep, best = _prune(keep, best, check)
    types = sorted({kind for n in keep for kind in low[n][0]})
    ok_t, m_t, by_type = check((), types)
    message = f"{len(keep)} of {len(candidates)} low-precision ops kept high"
    if not ok_t:
        message += f"; blacklisting their op types ({', '.join(types)}) does not meet the tolerance: use --keep_dtype"
    return result(True, keep, types if ok_t else None, best[0], best[1], by_type if ok_t else None, message)


def _shortest_prefix(
    order: list[str], best: tuple[Metrics, Any], check: Callable[..., tuple[bool, Metrics, Any]]
) -> tuple[int, tuple[Metrics, Any]]:
    """Bisect the shortest prefix of `order` that meets the tolerance (all of it does: `best` is its evaluation)."""
    lo, hi = 0, len(order)  # the shortest meeting prefix is in (lo, hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok_mid, m_mid, d_mid = check(order[:mid])
        if ok_mid:
            hi, best = mid, (m_mid, d_mid)
        else:
            lo = mid
    return hi, best


def _stay_low_text(stay_low: dict[str, tuple[str, ...]], lead: str) -> str:
    """Why part of the model stays low whatever is kept: `lead` + the count and op types, or empty."""
    if not stay_low:
        return ""
    types = Counter(t for ts in stay_low.values() for t in ts)
    listed = ", ".join(f"{t} x{c}" for t, c in sorted(types.items()))
    return (
        f"{lead}{len(stay_low)} ops stay low whatever --keep_dtype says: the target has no kernel for them in the "
        f"original dtype: {listed}{')' if lead.endswith('(') else ''}"
    )


@contextmanager
def _quiet() -> Iterator[None]:
    """The library's warnings off (a probe whose findings are reported otherwise)."""
    log = logging.getLogger("ascend_mp")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _prune(
    keep: list[str], best: tuple[Metrics, Any], check: Callable[..., tuple[bool, Metrics, Any]]
) -> tuple[list[str], tuple[Metrics, Any]]:
    """Drop kept ops the tolerance does not need: halves of the set first, then single ops (last ranked first).
    A round of chunks where none could go means the needed ops are dense: the next round is single ops."""
    chunk = len(keep) // 2
    while chunk >= 1:
        i, dropped = len(keep) - chunk, False
        while i >= 0 and len(keep) > 1:
            trial = keep[:i] + keep[i + chunk :]
            ok, m, d = check(trial)
            if ok:
                keep, best, dropped = trial, (m, d), True
            i -= chunk
        chunk = chunk // 2 if dropped else min(chunk // 2, 1)
    return keep, best


def format_result(r: TuneResult) -> str:
    lines = [r.message]
    if r.after is not None and r.met:
        lines.append(
            f"agreement with fp32: {_pct(r.before.agreement)} -> {_pct(r.after.agreement)}; "
            f"p99 relative error: {r.before.err_p99:.3g} -> {r.after.err_p99:.3g}"
        )
        close = r.tolerance.elementwise
        if close is not None:
            lines.append(
                f"worst |fp32 - y| / (atol + rtol*|y|) (rtol {close[0]:g}, atol {close[1]:g}): "
                f"{r.before.close_ratio:.3g} -> {r.after.close_ratio:.3g}"
            )
        if r.fp32_accuracy is not None:
            lines.append(
                f"accuracy: fp32 {_pct(r.fp32_accuracy)}, {r.mode} {_pct(r.before.accuracy)} -> {_pct(r.after.accuracy)}"
            )
    if r.total_flops:
        share = lambda f: f"{100 * f / r.total_flops:.1f}%"  # noqa: E731
        line = f"estimated FLOPs in low precision: {share(r.low_flops_before)} before"
        if r.met:  # no files otherwise
            line += f", {share(r.low_flops_after)} with --keep_dtype"
        if r.met and r.low_flops_by_type is not None:
            line += f", {share(r.low_flops_by_type)} with --modify_mixlist"
        lines.append(line)
    if r.keep:
        lines.append("keep high: " + ", ".join(r.keep))
    if r.stay_low:
        lines.append(_stay_low_text(r.stay_low, ""))
    lines.append(f"{r.evaluations} evaluations in {r.seconds:.2f} s")
    return "\n".join(lines)


def _jsonable(v: float) -> float | str:
    return v if math.isfinite(v) else str(v)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.2f}%"


__all__ = ["Metrics", "Tolerance", "TuneResult", "close_ratio", "flops", "format_result", "low_ops", "rank", "tune"]
