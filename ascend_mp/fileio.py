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


def _write_now(path: str, data: bytes) -> None:
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
        # A device, a pipe or a socket: write through, never replace.
        try:
            with open(target, "wb") as f:
                f.write(data)
        except OSError as e:
            raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
        return
    folder = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(target)
    tmp = os.path.join(folder, f".{name}{TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_current_umask()
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
        raise


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
    for path, payload in queue:
        write_output(path, payload)  # an enclosing block queues them; the outermost writes
