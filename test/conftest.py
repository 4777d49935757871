"""Shared fixtures."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks' graph builders


@pytest.fixture
def real_table() -> Path:
    """CANN's real 613-op table, kept in the repository (ascend_mp/opinfo/data/cann/)."""
    from ascend_mp.opinfo.derive import CANN_TABLE

    assert CANN_TABLE.is_file(), f"CANN's real op table is missing from the checkout ({CANN_TABLE})"
    return CANN_TABLE
