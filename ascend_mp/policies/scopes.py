"""`to_float` scopes: node-name prefixes (name scopes, MindSpore cells) mapped to a dtype.

MindSpore's `net.to_float(float16); net.dense.to_float(float32)` runs every op of `net` in fp16
except those inside the cell `dense`. In a graph a cell is a name scope, written as MindSpore
writes full names: `Default/dense-Dense/MatMul-op0` is the op MatMul inside the cell `dense` of
class Dense. A scope is a `/`-separated prefix of those names; a component of a scope matches
a name's component written in full (`dense-Dense`) or by the cell's instance name (`dense`).
The innermost scope (the one with the most components) wins.

Format (a file, or inline as the pass option with `;` between entries):

```
# scope = dtype   (fp16, bf16 or fp32)
Default = fp16
Default/dense = fp32
```
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ascend_mp.dtypes import BY_NAME
from ascend_mp.errors import AscendError
from ascend_mp.policies.base import AICORE, AICPU, BF16, F16, F32, Step, Steps, low_steps, short

DTYPES = {n: d.name for d in map(BY_NAME.__getitem__, (F16, BF16, F32)) for n in (d.short, d.cann, d.name)}
"""The dtype spellings a to_float file accepts (`fp16`, `float16`, `f16`, ...; case-insensitive)."""


def components(name: str) -> tuple[str, ...]:
    return tuple(c for c in name.split("/") if c)


def _component_matches(scope: str, part: str) -> bool:
    return part == scope or part.split("-", 1)[0] == scope


def to_steps(dtype: str, reason: str) -> Steps:
    """Run in `dtype` whatever the original dtype (a framework's cast of the op's inputs)."""
    if dtype == F32:
        return (
            Step(F32, AICORE, reason),
            Step(F32, AICPU, f"{reason}: aicpu fallback"),
            Step(F16, AICORE, f"{reason}: no fp32 kernel", warn=True),
            Step(BF16, AICORE, f"{reason}: no fp32 kernel", warn=True),
        )
    return low_steps(dtype, reason)


@dataclass(frozen=True)
class ToFloat:
    """Parsed scopes, innermost first."""

    scopes: tuple[tuple[tuple[str, ...], str, str], ...]
    """(scope components, dtype, the scope as written)."""
    source: str

    def lookup(self, name: str) -> tuple[str, str] | None:
        """(dtype, scope) of the innermost scope holding the op named `name`, else None."""
        parts = components(name)
        for scope, dtype, text in self.scopes:
            if len(scope) <= len(parts) and all(_component_matches(s, p) for s, p in zip(scope, parts)):
                return dtype, text
        return None

    def steps(self, name: str, orig: str) -> Steps | None:
        hit = self.lookup(name)
        if hit is None:
            return None
        dtype, text = hit
        return to_steps(dtype, f"to_float {text}: {short(dtype)}")


def load_to_float(spec: str) -> ToFloat:
    """Parse a `to_float` file, or inline entries (`scope=dtype;scope=dtype`) when no such file exists."""
    if os.path.exists(spec):
        from ascend_mp.fileio import read_input

        data = read_input(spec, stdin=False)  # bounded; a device refused, a named pipe waited for
        try:
            lines = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        except UnicodeDecodeError as e:
            raise AscendError(f"{spec}: cannot read file: {e}") from None
        where = [f"{spec}:{i}" for i in range(1, len(lines) + 1)]
        source = spec
    elif "=" in spec:
        lines = spec.split(";")
        where = [f"to_float entry {i}" for i in range(1, len(lines) + 1)]
        source = "to_float"
    else:
        raise AscendError(f"{spec}: cannot read file: no such file (inline to_float entries are scope=dtype)")
    entries: list[tuple[tuple[str, ...], str, str]] = []
    seen: dict[tuple[str, ...], str] = {}
    for at, raw in zip(where, lines):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        scope_text, eq, dtype_text = (x.strip() for x in line.partition("="))
        if not eq or not scope_text:
            raise AscendError(f"{at}: expected 'scope = dtype' (fp16, bf16 or fp32), got '{line}'")
        dtype = DTYPES.get(dtype_text.lower())
        if dtype is None:
            raise AscendError(
                f"{at}: unknown dtype '{dtype_text}' for scope '{scope_text}'; expected fp16, bf16 or fp32"
            )
        scope = components(scope_text)
        if not scope:
            raise AscendError(f"{at}: empty scope '{scope_text}'")
        if scope in seen:
            raise AscendError(f"{at}: scope '{scope_text}' is given twice (first at {seen[scope]})")
        seen[scope] = at
        entries.append((scope, dtype, "/".join(scope)))
    entries.sort(key=lambda e: -len(e[0]))
    return ToFloat(tuple(entries), source)
