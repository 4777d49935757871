"""Run a command-line tool's `main(argv)` in-process and collect its exit status and output."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import pytest


def run_main(
    main: Callable[[list[str]], None], argv: Sequence[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """(exit status as a process would have it, stdout, stderr) of `main(argv)`."""
    try:
        main(list(argv))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return code, out, err
