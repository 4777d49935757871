"""The `userday-tune` section: `ascend-tune` against onnxconverter-common's `auto_convert_mixed_precision`.

Both tools on the same criterion, the anchor's: `np.allclose(fp32, mixed, rtol=1e-2, atol=1e-3)` on every
output element (ascend-tune `--rtol 1e-2 --atol 1e-3`; the anchor compares with onnxruntime's fp32 run,
ascend-tune with the interpreter's, within 2e-5 normwise of it on these models), on the zoo's
mobilenet_v2, bert_sdpa and resnet50 (their inputs.npz, one sample each).

Per model: whether each tool met the tolerance, the ONNX nodes each keeps in fp32 among those it would
otherwise run low (ascend-tune: its --keep_dtype file; the anchor: its final node_block_list less the nodes
`convert_float_to_float16` never lowers, those of its DEFAULT_OP_BLOCK_LIST or with no float tensor), the
evaluations and the CPU seconds (the whole process, children and threads included). Budgets, where the anchor
succeeds on a model allow_mix_precision breaks: time ratio <= 1/3 and kept-nodes ratio <= 1.0; where it
fails, the row says so and ascend-tune must meet the tolerance. Where allow_mix_precision meets the tolerance
as it is, the time ratio is a figure without a verdict (ascend-tune's start-up against a run with nothing
to search).

On ascend910 Conv2D, DepthwiseConv2D and (on resnet50) MaxPoolV3 have only fp16 kernels, so convolutional
models cannot meet a tight allclose whatever is kept (ascend-tune reports them as `stay_low`); the anchor,
on onnxruntime's CPU, has fp32 for every op. There the search budgets have nothing to compare: no
configuration of the target reaches the tolerance, and the row checks instead that ascend-tune says so (its
verdict, and the allclose ratio with every candidate kept high, > 1) after at most two evaluations. For a
like-for-like search those models are also tuned with an `--op_info` table that adds an fp32 kernel to each
stay-low op type (a target with fp32 convolutions), and the budgets apply there.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.userday import BIN, MODELS, ROOT, _absent, _cpu_of, _json_tail

RTOL, ATOL = 1e-2, 1e-3

_ANCHOR = """
import json, sys, numpy as np, onnx
from onnxconverter_common import auto_mixed_precision as amp, float16
calls, typed = [], []
convert, add_dtypes = float16.convert_float_to_float16, amp.add_missing_dtypes_using_ort
def recording(model, *a, node_block_list=None, **k):
    calls.append(list(node_block_list or []))
    return convert(model, *a, node_block_list=node_block_list, **k)
def keeping(*a, **k):
    typed.append(add_dtypes(*a, **k))
    return typed[-1]
amp.float16.convert_float_to_float16, amp.add_missing_dtypes_using_ort = recording, keeping
model = onnx.load(sys.argv[1])
feed = dict(np.load(sys.argv[2]))
rtol, atol = float(sys.argv[3]), float(sys.argv[4])
try:
    amp.auto_convert_mixed_precision(model, feed, rtol=rtol, atol=atol, keep_io_types=True)
    error = None
except Exception as e:
    error = (type(e).__name__ + ": " + str(e)).splitlines()[0][:160]
g = (typed[-1] if typed else model).graph
floats = {v.name for v in (*g.input, *g.output, *g.value_info) if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
floats |= {t.name for t in g.initializer if t.data_type == onnx.TensorProto.FLOAT}
blocked = set(float16.DEFAULT_OP_BLOCK_LIST)
lowerable = {n.name for n in g.node if n.op_type not in blocked and any(t in floats for t in (*n.input, *n.output))}
kept = calls[-1] if calls and error is None else None
sys.stdout.write("\\nRESULT " + json.dumps({"evaluations": len(calls), "error": error, "nodes": len(g.node),
    "lowerable": len(lowerable), "kept": None if kept is None else len([n for n in kept if n in lowerable]),
    "kept_all": None if kept is None else len(kept)}) + "\\n")
"""
"""auto_convert_mixed_precision on one model, recording its evaluations and its final node_block_list."""


def _fp32_table(types: set[str], path: Path) -> None:
    """An --op_info table: the shipped ascend910 entries of `types` with an fp32 kernel added."""
    shipped = json.loads((ROOT / "ascend_mp" / "opinfo" / "data" / "aic-ascend910-ops-info.json").read_text())
    table: dict[str, Any] = {}
    for t in sorted(types):
        entry = json.loads(json.dumps(shipped[t]))
        for key, io in entry.items():
            if key.startswith(("input", "output")):
                io["dtype"] += ",float"
                if "format" in io:
                    io["format"] += "," + io["format"].split(",")[0]
        table[t] = entry
    path.write_text(json.dumps(table))


def _tune(model: str, inputs: str, tmp: Path, *flags: str) -> tuple[dict[str, Any], float, int]:
    cmd = [str(BIN / "ascend-tune"), model, inputs, "--rtol", str(RTOL), "--atol", str(ATOL), "--json", *flags]
    cpu, out, rc = _cpu_of([*cmd, "--keep-dtype", str(tmp / "keep.cfg")], timeout=1800)
    return _json_tail(out) or {}, cpu, rc


def _tune_text(r: dict[str, Any], cpu: float) -> str:
    stay = r.get("stay_low") or {}
    return (
        f"met {r.get('met')}, kept {len(r.get('keep_dtype') or [])} of {r.get('candidates')} nodes fp32"
        + (f" ({len(stay)} more stay fp16: no fp32 kernel)" if stay else "")
        + f", {r.get('evaluations')} evaluations, {cpu:.1f} s CPU"
    )


def tune_rows(quick: bool, tmp: Path, report: Callable[[Any], None], row: Callable[..., Any]) -> None:
    for name in ("mobilenet_v2",) if quick else ("mobilenet_v2", "bert_sdpa", "resnet50"):
        if _absent(name):
            continue
        model, inputs = str(MODELS / f"{name}.legacy.onnx"), str(MODELS / f"{name}.inputs.npz")
        t_anchor, out, _rc = _cpu_of([sys.executable, "-c", _ANCHOR, model, inputs, str(RTOL), str(ATOL)], 3600)
        anchor: dict[str, Any] = (
            json.loads(out.rsplit("RESULT ", 1)[1]) if "RESULT " in out else {"error": f"no result: {out[-200:]}"}
        )
        anchor_text = (
            f"auto_convert_mixed_precision: failed ({anchor['error']})"
            if anchor.get("error")
            else f"auto_convert_mixed_precision: met, kept {anchor['kept']} of {anchor['lowerable']} lowerable nodes fp32"
            f" ({anchor['kept_all']} in its block list)"
        ) + f", {anchor.get('evaluations')} evaluations, {t_anchor:.1f} s CPU"
        runs = [("ascend910", *_tune(model, inputs, tmp))]
        stay = {t for ts in (runs[0][1].get("stay_low") or {}).values() for t in ts}
        if stay:
            _fp32_table(stay, tmp / "fp32_kernels.json")
            runs.append(
                (f"fp32 {'/'.join(sorted(stay))}", *_tune(model, inputs, tmp, f"--op_info={tmp / 'fp32_kernels.json'}"))
            )
        print(f"  {name}: {anchor_text}")
        for target, r, cpu, rc in runs:
            print(f"  {name}: ascend-tune ({target}, rc {rc}): {_tune_text(r, cpu)}")
            label = f"ascend-tune {name} ({target}) vs auto_convert_mixed_precision, rtol {RTOL:g} atol {ATOL:g}"
            note = f"(ascend-tune: {_tune_text(r, cpu)}; {anchor_text})"
            met = bool(r.get("met"))
            floor = (r.get("after") or {}).get("allclose_ratio")
            if not met and r.get("stay_low") and isinstance(floor, float) and floor > 1.0:
                # out of reach on this target: the budget is that ascend-tune says so, at once
                said = "not reachable" in str(r.get("message")) and (r.get("evaluations") or 99) <= 2
                report(
                    row(
                        f"{label}: out of reach (allclose ratio {floor:.3g} with every candidate high), reported",
                        float(said),
                        "reported",
                        1.0,
                        False,
                        note=note,
                    )
                )
                continue
            if anchor.get("error"):  # the anchor fails: ascend-tune must meet the tolerance
                report(row(f"{label}: met where the anchor fails", float(met), "met", 1.0, False, note=note))
                continue
            as_is = (r.get("before") or {}).get("allclose_ratio")
            if isinstance(as_is, float) and as_is <= 1.0:  # outside the budget: a model the mode does not break
                note = f"(allow_mix_precision meets the tolerance as it is; {note[1:]}"
            scoped = met and not (isinstance(as_is, float) and as_is <= 1.0)
            report(row(f"{label}: time ratio", cpu / t_anchor, "x", 1 / 3 if scoped else None, note=note))
            if met and anchor.get("kept"):
                kept = len(r.get("keep_dtype") or [])
                report(
                    row(
                        f"{label}: nodes kept fp32 ratio",
                        kept / anchor["kept"],
                        "x",
                        1.0,
                        note=f"({kept} vs {anchor['kept']})",
                    )
                )
            elif not met:  # reachable (the anchor meets it) but missed
                report(row(f"{label}: met (the anchor meets it)", 0.0, "met", 1.0, False, note=note))
