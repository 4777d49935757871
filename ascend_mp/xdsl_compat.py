"""Workarounds for how xDSL 0.74 behaves on large IR, kept in one place (each with a test and a
benchmark row: `benchmarks/run.py --only scaling`).

- :func:`bulk_ir`: parsing, printing or building a module of N ops allocates several objects per op
  that stay alive (the module), and CPython's cyclic garbage collector re-scans the growing heap on
  its collections: a cost that grows faster than N (about 20% of a 40k-op parse, more beyond).
  The IR being built is not garbage, so the collector is paused for the bulk step and runs once
  after it (`gc.collect` of the young generations only).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def bulk_ir() -> Iterator[None]:
    """Pause the cyclic garbage collector while a block builds, parses or prints a large module
    (nested blocks: only the outermost one resumes it; a collector already paused stays paused)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)  # what the paused young-generation collections would have freed
