"""ascend_mp.fileio, the one way the tools write outputs, and every tool output through it:
a device, a named pipe and a symlink at the output path survive and receive the output; an existing
file keeps its mode; a new file honours the umask; outputs of a run are committed together, only on success."""

from __future__ import annotations

import io
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from ascend_mp.errors import AscendError
from ascend_mp.fileio import TMP_MARK, check_writable, deferred_outputs, write_output

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOOD = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x {name = "relu"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if TMP_MARK in p.name]


def make_device(tmp_path: Path) -> Path:
    """A character device to write to: a private copy of /dev/null when we may create one (root), else /dev/null
    itself (which an unprivileged process cannot replace anyway)."""
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return path
    except (PermissionError, AttributeError, OSError):
        return Path(os.devnull)


class PipeReader:
    """A named pipe at `path` whose reader thread collects everything written to it."""

    def __init__(self, path: Path):
        os.mkfifo(path)
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as f:
            self.data = f.read()

    def join(self) -> bytes:
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "nothing was written to the pipe"
        return self.data


# --------------------------------------------------------------------------------------
# fileio unit tests
# --------------------------------------------------------------------------------------


def test_new_file_honours_umask(tmp_path: Path, umask_027: None) -> None:
    path = tmp_path / "new.txt"
    write_output(path, "hello")
    assert path.read_text() == "hello"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o664])
def test_existing_file_keeps_its_mode(tmp_path: Path, mode: int, umask_027: None) -> None:
    path = tmp_path / "old.txt"
    path.write_text("old")
    path.chmod(mode)
    write_output(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == mode


def test_device_is_written_through_not_replaced(tmp_path: Path) -> None:
    device = make_device(tmp_path)
    before = os.stat(device)
    write_output(device, "data")
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert leftovers(tmp_path) == []


def test_named_pipe_receives_the_data(tmp_path: Path) -> None:
    reader = PipeReader(tmp_path / "fifo")
    write_output(reader.path, "through the pipe")
    assert reader.join() == b"through the pipe"
    assert stat.S_ISFIFO(os.stat(reader.path).st_mode)


def test_symlink_survives_and_its_target_gets_the_data(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old")
    target.chmod(0o644)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_output(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o644


def test_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "made.txt")
    write_output(link, "x")
    assert link.is_symlink() and (tmp_path / "made.txt").read_text() == "x"


def test_directory_and_missing_folder_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(AscendError, match="is a directory"):
        write_output(tmp_path, "x")
    with pytest.raises(AscendError, match="cannot write file"):
        write_output(tmp_path / "no" / "f.txt", "x")
    with pytest.raises(AscendError, match="no such directory"):
        check_writable(tmp_path / "no" / "f.txt")
    assert leftovers(tmp_path) == []


def test_deferred_outputs_commit_only_on_success(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    with pytest.raises(RuntimeError):
        with deferred_outputs():
            write_output(a, "a")
            assert not a.exists(), "a deferred output must not be written before the block ends"
            raise RuntimeError("the run failed")
    assert not a.exists()
    with deferred_outputs():
        write_output(a, "a")
        write_output(b, "b")
    assert a.read_text() == "a" and b.read_text() == "b"


def test_deferred_outputs_are_all_or_nothing(tmp_path: Path) -> None:
    """If one output cannot be written, the others are not changed either (they are staged first)."""
    a = tmp_path / "a.txt"
    a.write_text("before")
    with pytest.raises(AscendError, match="is a directory"):
        with deferred_outputs():
            write_output(a, "after")
            write_output(tmp_path, "x")
    assert a.read_text() == "before"
    assert leftovers(tmp_path) == []


def test_temporary_file_is_removed_when_writing_is_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_output(tmp_path / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------
# Every output of every tool: a device, a pipe and a symlink survive; modes kept
# --------------------------------------------------------------------------------------


def _opt(src: Path, out: Path) -> list[str]:
    return [str(src), "-o", str(out)]


def _run(src: Path, out: Path) -> list[str]:
    return [str(src), "-o", str(out)]


def _call(tool: str, argv: list[str]) -> int:
    if tool == "ascend-opt":
        from ascend_mp.tools.ascend_opt import main
    else:
        from ascend_mp.tools.ascend_run import main
    try:
        main(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    return 0


def _check_content(tool: str, data: bytes) -> None:
    if tool == "ascend-opt":
        assert b"ascend.Relu" in data
    else:
        with np.load(io.BytesIO(data)) as npz:
            assert npz.files == ["result0"] and npz["result0"].shape == (4,)


OUTPUTS: dict[str, Callable[[Path, Path], list[str]]] = {"ascend-opt": _opt, "ascend-run": _run}


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "m.mlir"
    path.write_text(GOOD)
    return path


@pytest.mark.parametrize("tool", OUTPUTS)
def test_tool_output_to_a_device(tool: str, src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    device = make_device(tmp_path)
    before = os.stat(device)
    assert _call(tool, OUTPUTS[tool](src, device)) == 0, capsys.readouterr().err
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("tool", OUTPUTS)
def test_tool_output_to_a_named_pipe(tool: str, src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reader = PipeReader(tmp_path / "fifo")
    assert _call(tool, OUTPUTS[tool](src, reader.path)) == 0, capsys.readouterr().err
    _check_content(tool, reader.join())
    assert stat.S_ISFIFO(os.stat(reader.path).st_mode)


@pytest.mark.parametrize("tool", OUTPUTS)
def test_tool_output_through_a_symlink(
    tool: str, src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target.out"
    target.write_bytes(b"old")
    target.chmod(0o644)
    link = tmp_path / "link.out"
    link.symlink_to(target)
    assert _call(tool, OUTPUTS[tool](src, link)) == 0, capsys.readouterr().err
    assert link.is_symlink()
    _check_content(tool, target.read_bytes())
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


@pytest.mark.parametrize("tool", OUTPUTS)
def test_tool_output_modes(
    tool: str, src: Path, tmp_path: Path, umask_027: None, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.out", tmp_path / "new.out"
    old.write_bytes(b"old")
    old.chmod(0o644)
    assert _call(tool, OUTPUTS[tool](src, old)) == 0, capsys.readouterr().err
    assert _call(tool, OUTPUTS[tool](src, new)) == 0, capsys.readouterr().err
    _check_content(tool, old.read_bytes())
    assert stat.S_IMODE(old.stat().st_mode) == 0o644
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("tool", OUTPUTS)
def test_failed_run_leaves_the_output_alone(tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(GOOD.replace("%0 = ascend.Relu %x", "%0 = ascend.Relu %y"))
    out = tmp_path / "out"
    out.write_bytes(b"precious")
    assert _call(tool, OUTPUTS[tool](bad, out)) == 1
    assert out.read_bytes() == b"precious"
    assert leftovers(tmp_path) == []


def test_precision_report_and_output_commit_together(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o and --precision-report are written only when the whole run succeeded (and then both)."""
    report, out = tmp_path / "report.json", tmp_path / "out.mlir"
    # A pass after the ATC flags' precision pass fails: neither output is written.
    argv = [
        str(src),
        "--precision_mode",
        "force_fp16",
        "--precision-report",
        str(report),
        "-o",
        str(out),
        "-p",
        "ascend-loss-scale",
    ]
    assert _call("ascend-opt", argv) == 1
    assert not report.exists() and not out.exists() and leftovers(tmp_path) == []
    assert _call("ascend-opt", argv[:-2]) == 0, capsys.readouterr().err
    assert report.exists() and out.exists()


def test_precision_report_to_a_pipe_and_a_symlink(
    src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = PipeReader(tmp_path / "fifo")
    assert (
        _call("ascend-opt", [str(src), "--precision_mode", "force_fp16", "--precision-report", str(reader.path)]) == 0
    )
    assert b'"ops"' in reader.join() or b"relu" in reader.data
    target = tmp_path / "r.json"
    target.write_text("{}")
    target.chmod(0o644)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    device = make_device(tmp_path)
    assert (
        _call(
            "ascend-opt",
            [str(src), "--precision_mode", "force_fp16", "--precision-report", str(link), "-o", str(device)],
        )
        == 0
    )
    assert link.is_symlink() and "relu" in target.read_text() and stat.S_IMODE(target.stat().st_mode) == 0o644
    assert stat.S_ISCHR(os.stat(device).st_mode)


def test_data_is_fsynced_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append("fsync-dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file")
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        assert TMP_MARK in os.path.basename(src), src  # a recognisable temporary name
        calls.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_output(tmp_path / "out.txt", "x")
    assert calls == ["fsync-file", "replace", "fsync-dir"]
