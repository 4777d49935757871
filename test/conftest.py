"""Shared fixtures."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks' graph builders

REAL_TABLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "aic-ascend910-ops-info.json"


@pytest.fixture
def real_table() -> Path:
    """CANN's real 613-op table, which lives in shared/ beside the checkout."""
    if not REAL_TABLE.exists():
        pytest.skip(f"CANN's real op table is not beside this checkout ({REAL_TABLE})")
    return REAL_TABLE
