"""What a training run says about its precision: how many ops the precision pass actually
reduced, and to which dtype, read from its report (never from the mode's name alone: CANN's
default training mode, allow_fp32_to_fp16, reduces nothing in a graph whose ops all have fp32
kernels)."""

from __future__ import annotations

from typing import Any

LOW = {"float16": "fp16", "bfloat16": "bf16"}
"""CANN dtype names of the reduced dtypes, as the summaries write them."""


def reduced_by_dtype(report: Any) -> dict[str, int]:
    """Reduced ops per dtype they now run in (`fp16`, `bf16`), from the report's decisions."""
    counts: dict[str, int] = {}
    for d in report.ops:
        if not d.reduced:
            continue
        chosen = d.to_json()["chosen"]
        low = next((LOW[t] for t in (*chosen["inputs"], *chosen["outputs"]) if t in LOW), "a lower precision")
        counts[low] = counts.get(low, 0) + 1
    return counts


def precision_label(mode: str | None, report: Any) -> str:
    """`fp32`; `allow_mix_precision (12 of 31 ops in fp16)`; `allow_fp32_to_fp16 (nothing reduced: all 31 ops fp32)`."""
    if mode is None or report is None:
        return "fp32" if mode is None else mode
    total = len(report.ops)
    counts = reduced_by_dtype(report)
    if not counts:
        return f"{mode} (nothing reduced: all {total} ops fp32)"
    return f"{mode} ({', '.join(f'{n} of {total} ops in {low}' for low, n in sorted(counts.items()))})"
