"""The one way every tool of ascend-mp writes an output file.

`write_output(path, data)` never leaves a half-written file and never replaces
what is not a regular file:

- a new path or an existing regular file: the data goes to a temporary file in
  the same folder (named `.<name>.ascend-tmp-<pid>-<random>`, so leftovers of a
  killed run are recognisable), is fsynced, then renamed over the path; an
  existing file keeps its permission bits, a new one gets `0666 & ~umask`;
- a symlink: the same, applied to the file it points to (the link survives);
- a device (`/dev/null`), a named pipe, a socket: opened and written through.

Outputs of one run are committed together, only on success: inside
`with deferred_outputs():` every `write_output` is queued and the queue is
written when the block exits without an exception (and dropped otherwise).
The queue is written in two phases: every output is first staged (its
temporary file written and fsynced), and only if all of them could be staged
are they renamed into place, so a failure to write one output leaves the
others unchanged too.
Outside such a block `write_output` writes at once (the Python API).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator

from ascend_mp.errors import AscendError

TMP_MARK = ".ascend-tmp-"

_pending: list[list[tuple[str, bytes]]] = []


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _resolve(path: str) -> str:
    """Follow symlinks (a chain, or a dangling link: its would-be target)."""
    return os.path.realpath(path) if os.path.islink(path) else path


class _Staged:
    """One output made ready to commit: a fsynced temporary file to rename, or data to write through."""

    def __init__(self, path: str, target: str, tmp: str | None, data: bytes | None):
        self.path, self.target, self.tmp, self.data = path, target, tmp, data

    def commit(self) -> None:
        try:
            if self.tmp is not None:
                os.replace(self.tmp, self.target)
                self.tmp = None
                _sync_folder(self.target)
            else:
                # A device, a pipe or a socket: write through, never replace.
                with open(self.target, "wb") as f:
                    f.write(self.data or b"")
        except OSError as e:
            self.discard()
            raise AscendError(f"{self.path}: cannot write file: {e.strerror}") from None

    def discard(self) -> None:
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


def _sync_folder(path: str) -> None:
    """Make a rename in `path`'s folder durable (best effort: some file systems refuse)."""
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _stage(path: str, data: bytes) -> _Staged:
    """Prepare writing `data` to `path`: for a regular file or a new path, a complete fsynced temporary file."""
    target = _resolve(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise AscendError(f"{path}: cannot write file: is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        return _Staged(path, target, None, data)
    folder = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(target)
    tmp = os.path.join(folder, f".{name}{TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_current_umask()
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
    staged = _Staged(path, target, tmp, None)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except BaseException as e:
        staged.discard()
        if isinstance(e, OSError):
            raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
        raise
    return staged


def _write_now(path: str, data: bytes) -> None:
    _write_all([(path, data)])


def _write_all(queue: list[tuple[str, bytes]]) -> None:
    """Stage every output first (any failure: nothing is written), then commit them all."""
    staged: list[_Staged] = []
    try:
        for path, data in queue:
            staged.append(_stage(path, data))
        # Renames first (they hardly fail), then the write-throughs.
        for item in sorted(staged, key=lambda s: s.tmp is None):
            item.commit()
    finally:
        for item in staged:
            item.discard()


def write_output(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` (text is UTF-8) to `path` as the module docstring says."""
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    path = os.fspath(path)
    if _pending:
        queue = _pending[-1]
        queue[:] = [(p, d) for p, d in queue if p != path]
        queue.append((path, payload))
        return
    _write_now(path, payload)


def check_writable(path: str | os.PathLike[str]) -> None:
    """Fail early (one line) when `path` cannot be an output: its folder is missing or it is a directory."""
    target = _resolve(os.fspath(path))
    if os.path.isdir(target):
        raise AscendError(f"{os.fspath(path)}: cannot write file: is a directory")
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise AscendError(f"{os.fspath(path)}: cannot write file: no such directory {folder}")


def check_input_file(path: str | os.PathLike[str]) -> None:
    """Refuse an input path that is a device (`/dev/zero` would be read for ever); `-` is standard input."""
    path = os.fspath(path)
    if path == "-":
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # reading it reports the problem
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise AscendError(f"{path}: cannot read file: it is a device, not a file (use - to read standard input)")


@contextlib.contextmanager
def deferred_outputs() -> Iterator[None]:
    """Queue every `write_output` of the block; write them all only if the block succeeds."""
    _pending.append([])
    try:
        yield
    except BaseException:
        _pending.pop()
        raise
    queue = _pending.pop()
    if _pending:  # an enclosing block commits them
        for path, payload in queue:
            write_output(path, payload)
    else:
        _write_all(queue)
