"""The bad-input corpus (test/errors): every malformed input gets a one-line error from the tool.

Each case calls the tool's `main(argv)` in this process (standard input, output and error replaced;
`SystemExit` caught) and asserts: the expected exit status (1 unless the case says `"exit"`), exactly one
line on stderr of the form `<tool>: error: ...` naming the file and location ('where') and what was wrong
('says'), no traceback, and no output file written or changed. A case may pipe text to the tool ('stdin')
and create files in its temporary folder first ('files', 'keep'); those must be unchanged afterwards.
A case marked `"subprocess": true` also runs through the installed console script, so the real exit
status, the interpreter's own handling and the entry points are checked too (a handful, they are slow).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).parents[1] / "errors"
CASES: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())["cases"]
BIN = Path(sys.executable).parent
MODULES = {
    "ascend-opt": "ascend_mp.tools.ascend_opt",
    "ascend-run": "ascend_mp.tools.ascend_run",
    "ascend-train": "ascend_mp.tools.ascend_train",
}


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def _fill(text: str, tmp: Path) -> str:
    return text.replace("{in}", str(CORPUS / "inputs")).replace("{tmp}", str(tmp))


def _bytes(text: str) -> bytes:
    """UTF-8 text in which `\\xNN` stands for the raw byte NN (JSON cannot hold bytes that are not UTF-8)."""
    parts = re.split(r"\\x([0-9a-fA-F]{2})", text)
    return b"".join(bytes([int(part, 16)]) if i % 2 else part.encode("utf-8") for i, part in enumerate(parts))


def fresh_process_state() -> contextlib.ExitStack:
    """What a new process starts without: the resource blobs (dense_resource) of earlier runs."""
    from ascend_mp.ir import isolated_store

    stack = contextlib.ExitStack()
    stack.enter_context(isolated_store())
    return stack


def run_in_process(tool: str, args: list[str], stdin: bytes = b"") -> Result:
    """Call the tool's main(args) here, as its console script would, and collect what it printed."""
    main = importlib.import_module(MODULES[tool]).main
    out, err = io.StringIO(), io.StringIO()
    fake_stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    code: Any = 0
    saved_stdin = sys.stdin
    fresh = fresh_process_state()
    sys.stdin = fake_stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(args)
            except SystemExit as e:
                code = e.code
                if isinstance(code, str):  # what the interpreter does with sys.exit("message")
                    print(code, file=sys.stderr)
                    code = 1
    finally:
        sys.stdin = saved_stdin
        fresh.close()
    return Result(0 if code is None else int(code), out.getvalue(), err.getvalue())


def run_subprocess(tool: str, args: list[str], stdin: bytes = b"") -> Result:
    proc = subprocess.run([str(BIN / tool), *args], capture_output=True, input=stdin, timeout=120)
    out, err = (stream.decode("utf-8", "replace") for stream in (proc.stdout, proc.stderr))
    return Result(proc.returncode, out, err)


def _prepare(case: dict[str, Any], tmp: Path) -> dict[str, bytes]:
    """Create the case's files (and its kept output) in `tmp`; returns name -> content to check afterwards."""
    files = {name: _bytes(text) for name, text in case.get("files", {}).items()}
    if case.get("keep"):
        files[case["keep"]] = b"precious\n"
    for name, content in files.items():
        (tmp / name).write_bytes(content)
    return files


def check_case(case: dict[str, Any], tmp: Path, files: dict[str, bytes], result: Result) -> None:
    expected = case.get("exit", 1)
    assert result.returncode == expected, (
        f"exit {result.returncode}, expected {expected}; stderr: {result.stderr[:300]}"
    )
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[:2000]
    message = lines[0]
    assert message.startswith(f"{case['tool']}: error: "), message
    assert message.isprintable(), f"invisible characters in the message: {message!r}"
    assert _fill(case["where"], tmp) in message, message
    assert _fill(case["says"], tmp) in message, message
    leftovers = [p.name for p in tmp.iterdir() if p.name not in files]
    assert leftovers == [], f"files left behind: {leftovers}"
    for name, content in files.items():
        assert (tmp / name).read_bytes() == content, f"an existing file was changed: {name}"


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30, f"the corpus has {len(CASES)} cases; it covers at least 30"
    assert len({c["name"] for c in CASES}) == len(CASES)


def test_corpus_covers_every_tool_and_input_kind() -> None:
    tools = {c["tool"] for c in CASES}
    assert tools >= {"ascend-opt", "ascend-run", "ascend-train"}, tools
    flags = " ".join(a for c in CASES for a in c["args"])
    for kind in (
        "--modify_mixlist",
        "--keep_dtype",
        "--customize_dtypes",
        "--op_info",
        "op-info=",
        "--precision-report",
        "--precision_mode_v2",
        "--input",
        "--inputs",
        "--resume",
        "--out",
    ):
        assert kind in flags, f"no case gives {kind}"
    assert {c.get("exit", 1) for c in CASES} >= {1, 2}, "the corpus has no usage error (exit 2)"
    assert sum(1 for c in CASES if c.get("subprocess")) >= 3, "keep a few cases that run the real console scripts"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_gives_one_line_error(case: dict[str, Any], tmp_path: Path) -> None:
    files = _prepare(case, tmp_path)
    args = [_fill(a, tmp_path) for a in case["args"]]
    stdin = _bytes(case["stdin"]) if "stdin" in case else b""
    check_case(case, tmp_path, files, run_in_process(case["tool"], args, stdin))


SUBPROCESS_CASES = [c for c in CASES if c.get("subprocess")]


@pytest.mark.parametrize("case", SUBPROCESS_CASES, ids=[c["name"] for c in SUBPROCESS_CASES])
def test_bad_input_through_the_console_script(case: dict[str, Any], tmp_path: Path) -> None:
    files = _prepare(case, tmp_path)
    args = [_fill(a, tmp_path) for a in case["args"]]
    stdin = _bytes(case["stdin"]) if "stdin" in case else b""
    check_case(case, tmp_path, files, run_subprocess(case["tool"], args, stdin))
