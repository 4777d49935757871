"""The dtype facts the precision pass reads, in one small place: thin calls into `ascend_mp.dtypes`.

When `ascend_mp.dtypes` gains one record per dtype, these become its fields and lattice join.
"""

from __future__ import annotations

from ascend_mp.dtypes import PRECISION_RANK, TO_CANN
from ascend_mp.policies import BF16, F16, F32

EXACT_WIDENING = frozenset({(F16, F32), (BF16, F32), (F16, "f64"), (BF16, "f64"), (F32, "f64")})
"""(narrow, wide) pairs whose round trip narrow -> wide -> narrow is the identity."""

FLOAT_NAMES = frozenset(PRECISION_RANK)
"""The float dtypes (the ones the pass decides)."""


def cann(dtype: str | None) -> str | None:
    """The CANN name of a dtype (`float16`), as the report writes it."""
    return None if dtype is None else TO_CANN.get(dtype, dtype)


def rank(dtype: str | None) -> int:
    """A dtype's place in the precision lattice (0: not a float)."""
    return PRECISION_RANK.get(dtype, 0) if dtype is not None else 0


def join(a: str, b: str) -> str:
    """The more precise of two float dtypes; f16 and bf16 (neither holds the other) join at f32."""
    if a == b:
        return a
    ra, rb = rank(a), rank(b)
    if ra == rb:
        return F32
    return a if ra > rb else b
