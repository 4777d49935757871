"""The bad-input corpus (test/errors): every malformed input gets a one-line error from the real tool.

Each case runs the installed command in a subprocess (so a traceback or a crash cannot hide) and
asserts: non-zero exit, exactly one line on stderr of the form `<tool>: error: ...` naming the file
and location ('where') and what was wrong ('says'), no traceback, and no output file written or changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parent / "errors"
CASES: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())["cases"]
BIN = Path(sys.executable).parent


def _run(case: dict[str, Any], tmp: Path) -> subprocess.CompletedProcess[str]:
    args = [a.replace("{in}", str(CORPUS / "inputs")).replace("{tmp}", str(tmp)) for a in case["args"]]
    return subprocess.run([str(BIN / case["tool"]), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.CompletedProcess[str], Path, str | None]]:
    """Runs the whole corpus once, two at a time."""

    def one(case: dict[str, Any]) -> tuple[str, tuple[subprocess.CompletedProcess[str], Path, str | None]]:
        tmp = tmp_path_factory.mktemp(case["name"])
        keep = case.get("keep")
        before = None
        if keep:
            (tmp / keep).write_text("precious\n")
            before = "precious\n"
        return case["name"], (_run(case, tmp), tmp, before)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(one, CASES))


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30, f"the corpus has {len(CASES)} cases; issue 6 asks for at least 30"
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_gives_one_line_error(case: dict[str, Any], results: dict[str, Any]) -> None:
    proc, tmp, before = results[case["name"]]
    assert proc.returncode != 0, f"exit 0; stdout: {proc.stdout[:300]}"
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    message = lines[0]
    assert message.startswith(f"{case['tool']}: error: "), message
    assert case["where"] in message, message
    assert case["says"] in message, message
    leftovers = [p.name for p in tmp.iterdir() if p.name != case.get("keep")]
    assert leftovers == [], f"files left behind: {leftovers}"
    if before is not None:
        assert (tmp / case["keep"]).read_text() == before, "an existing output file was changed"
