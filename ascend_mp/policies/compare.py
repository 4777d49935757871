"""Side by side: which dtype each policy gives each op, and a picture of one policy's choice.

The views behind `ascend-opt model.mlir --compare-policies` (per op, the dtype CANN's allow_mix_precision,
TF's AutoMixedPrecision, MindSpore O2 and PyTorch autocast choose, marking the ops where they
disagree; `--compare-json FILE` writes the same as JSON) and `--precision-dot FILE` (the graph
as Graphviz DOT after the precision pass with the given options: one colour per dtype, inserted
casts drawn as diamonds). The flags live in `ascend_mp.tools.policy_views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

from ascend_mp.dtypes import TO_CANN, short, tensor_dtype

POLICY_COLUMNS: tuple[tuple[str, dict[str, str]], ...] = (
    ("cann allow_mix_precision", {"mode": "allow_mix_precision"}),
    ("tf", {"policy": "tf"}),
    ("mindspore O2", {"policy": "mindspore", "level": "O2"}),
    ("torch", {"policy": "torch"}),
)

COLOURS = {"f16": "#f4a261", "bf16": "#e9c46a", "f32": "#8ecae6", "f64": "#219ebc"}
"""Node fill colour per compute dtype (other dtypes: white)."""


@dataclass
class Row:
    name: str
    type: str
    dtypes: list[str]
    reasons: list[str]

    @property
    def agree(self) -> bool:
        return len(set(self.dtypes)) == 1


def compare_policies(module: ModuleOp, soc: str = "ascend910", op_info: str | None = None) -> list[Row]:
    """Run each policy on a copy of `module`; one row per op of the input (in program order)."""
    from ascend_mp.passes.precision import run_precision

    reports = []
    for _, options in POLICY_COLUMNS:
        reports.append(run_precision(module.clone(), soc=soc, op_info=op_info, **options))  # pyright: ignore[reportArgumentType]  # options holds mode or policy keywords, never `options`
    rows: list[Row] = []
    for i, first in enumerate(reports[0].ops):
        decisions = [r.ops[i] for r in reports]
        dtypes = [_short(d.chosen.outputs[0] if d.chosen.outputs else None) for d in decisions]
        rows.append(
            Row(first.name or f"{first.type} ({first.location})", first.type, dtypes, [d.reason for d in decisions])
        )
    return rows


def _short(dtype: str | None) -> str:
    return "-" if dtype is None else short(dtype)


def format_table(rows: Sequence[Row]) -> str:
    heads = ["op", "type", *(label for label, _ in POLICY_COLUMNS), ""]
    body = [[r.name, r.type, *r.dtypes, "" if r.agree else "<- differ"] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(heads, *body)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in (heads, *body)]
    differ = sum(not r.agree for r in rows)
    lines.append(f"{differ} of {len(rows)} ops differ between the policies")
    return "\n".join(lines) + "\n"


def to_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {
        "policies": [label for label, _ in POLICY_COLUMNS],
        "ops": [
            {
                "name": r.name,
                "type": r.type,
                "dtypes": dict(zip((lab for lab, _ in POLICY_COLUMNS), r.dtypes)),
                "reasons": dict(zip((lab for lab, _ in POLICY_COLUMNS), r.reasons)),
                "agree": r.agree,
            }
            for r in rows
        ],
        "differ": sum(not r.agree for r in rows),
    }


def to_dot(module: ModuleOp, inserted: set[Operation] | None = None, title: str = "") -> str:
    """Graphviz DOT of every function: ops coloured by the dtype they compute in; casts as diamonds
    (filled grey when the pass inserted them), function arguments and results as plain boxes."""
    from ascend_mp.dialects.ascend import AscendOp, CastOp
    from ascend_mp.ir import functions

    out = ["digraph precision {", '  rankdir=TB; node [style=filled, fontname="Helvetica"];']
    if title:
        out.append(f'  label="{_esc(title)}"; labelloc=t;')
    ids: dict[SSAValue | Operation, str] = {}
    n = 0
    for fn in functions(module):
        for arg in fn.body.block.args:
            ids[arg] = f"a{n}"
            out.append(
                f'  a{n} [shape=box, fillcolor=white, label="%{_esc(arg.name_hint or str(arg.index))}: {_dt(arg)}"];'
            )
            n += 1
        for op in fn.walk():
            if not isinstance(op, AscendOp) and op.name != "func.return":
                continue
            node = f"n{n}"
            n += 1
            ids[op] = node
            if op.name == "func.return":
                out.append(f'  {node} [shape=box, fillcolor=white, label="return"];')
            else:
                dtype = next((d for v in (*op.operands, *op.results) if (d := tensor_dtype(v.type)) in COLOURS), None)
                name = op.properties.get("name")
                label = op.name.removeprefix("ascend.") + (
                    f"\\n{_esc(name.data)}" if isinstance(name, StringAttr) else ""
                )
                label += f"\\n{_short(dtype)}"
                colour = COLOURS.get(dtype or "", "white")
                if isinstance(op, CastOp):
                    src, dst = tensor_dtype(op.operands[0].type), tensor_dtype(op.results[0].type)
                    label = f"Cast\\n{_short(src)} -> {_short(dst)}"
                    fill = "#cccccc" if inserted is not None and op in inserted else colour
                    out.append(f'  {node} [shape=diamond, fillcolor="{fill}", label="{label}"];')
                else:
                    out.append(f'  {node} [shape=box, fillcolor="{colour}", label="{label}"];')
            for v in op.operands:
                src = ids.get(v) if v not in ids else ids[v]
                if src is None and isinstance(v.owner, Operation):
                    src = ids.get(v.owner)
                if src is not None:
                    out.append(f'  {src} -> {node} [label="{_dt(v)}"];')
    legend = " ".join(f'<td bgcolor="{c}">{_short(d)}</td>' for d, c in COLOURS.items())
    out.append(
        f'  legend [shape=plaintext, style="", label=<<table border="0"><tr>{legend}<td bgcolor="#cccccc">inserted cast</td></tr></table>>];'
    )
    out.append("}")
    return "\n".join(out) + "\n"


def _dt(v: SSAValue) -> str:
    return (
        _short(tensor_dtype(v.type))
        if tensor_dtype(v.type) in COLOURS
        else (TO_CANN.get(tensor_dtype(v.type) or "", "?"))
    )


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
