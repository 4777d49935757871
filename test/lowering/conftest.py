"""The lowering tests compile with IREE into a per-session cache directory (not the user's cache)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def iree_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get("ASCEND_MP_CACHE")
    os.environ["ASCEND_MP_CACHE"] = str(tmp_path_factory.mktemp("ascend-mp-cache"))
    yield
    if old is None:
        os.environ.pop("ASCEND_MP_CACHE", None)
    else:
        os.environ["ASCEND_MP_CACHE"] = old
