"""Shared fixtures."""

import sys
from pathlib import Path

import pytest
from hypothesis import settings

# `make test` draws the same examples on every run and machine (a property test that fails, fails for everyone, and
# a run's result never depends on chance); `make fuzz` explores afresh with `--hypothesis-profile=explore`.
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks' graph builders


@pytest.fixture
def real_table() -> Path:
    """CANN's real 613-op table, kept in the repository (ascend_mp/opinfo/data/cann/)."""
    from ascend_mp.opinfo.derive import CANN_TABLE

    assert CANN_TABLE.is_file(), f"CANN's real op table is missing from the checkout ({CANN_TABLE})"
    return CANN_TABLE
