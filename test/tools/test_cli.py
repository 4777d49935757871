"""ascend_mp.tools.cli: the exit-code convention and clean-up every tool shares."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from ascend_mp.errors import AscendError
from ascend_mp.fileio import write_output
from ascend_mp.tools.cli import UsageError, printable, run_tool


def status(body: object) -> int:
    try:
        run_tool("tool", body)  # pyright: ignore[reportArgumentType]
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    return 0


def test_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    def raising(e: BaseException):  # noqa: ANN202
        def body() -> None:
            raise e

        return body

    assert status(lambda: None) == 0
    assert status(raising(AscendError("f.mlir:1:2: bad\nthing"))) == 1
    assert capsys.readouterr().err == "tool: error: f.mlir:1:2: bad thing\n"
    assert status(raising(UsageError("unrecognized arguments: --x"))) == 2
    assert capsys.readouterr().err == "tool: error: unrecognized arguments: --x\n"
    assert status(raising(KeyboardInterrupt())) == 130
    assert capsys.readouterr().err == ""
    assert status(raising(RecursionError())) == 1
    assert "nested too deeply" in capsys.readouterr().err
    with pytest.raises(ZeroDivisionError):  # a bug is not disguised as a user error
        run_tool("tool", raising(ZeroDivisionError()))


def test_outputs_are_dropped_on_failure_and_written_on_success(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"

    def failing() -> None:
        write_output(out, "x")
        raise AscendError("later failure")

    assert status(failing) == 1 and not out.exists()
    assert status(lambda: write_output(out, "x")) == 0 and out.read_text() == "x"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_termination_removes_temporary_files(signum: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal while an output is being written: status 128+N, no temporary file, old output intact."""
    out = tmp_path / "out.txt"
    out.write_text("old")
    before = signal.getsignal(signum)

    def killed_during_fsync(fd: int) -> None:
        os.kill(os.getpid(), signum)

    monkeypatch.setattr(os, "fsync", killed_during_fsync)
    assert status(lambda: write_output(out, "new")) == 128 + signum
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"] and out.read_text() == "old"
    assert signal.getsignal(signum) == before  # the previous handler is restored


def test_printable_escapes_invisible_characters() -> None:
    assert printable("a\x00b\ufeffc\u2028d\te") == "a\\x00b\\ufeffc\\u2028d\\x09e"
    assert printable("plain text: ok") == "plain text: ok"


def test_logging_is_restored_after_a_run() -> None:
    import logging

    from ascend_mp.tools.cli import setup_logging

    log = logging.getLogger("ascend_mp")
    before = (list(log.handlers), log.level, log.propagate)
    assert status(lambda: setup_logging("tool", "info")) == 0
    assert (list(log.handlers), log.level, log.propagate) == before
