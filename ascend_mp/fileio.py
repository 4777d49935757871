"""The one way every tool of ascend-mp writes an output file.

`write_output(path, data)` never leaves a half-written file and never replaces
what is not a regular file:

- a new path or an existing regular file: the data goes to a temporary file in
  the same folder (named `.<name>.ascend-tmp-<pid>-<random>`, so leftovers of a
  killed run are recognisable), is fsynced, then renamed over the path; an
  existing file keeps its permission bits, a new one gets `0666 & ~umask`;
- a symlink: the same, applied to the file it points to (the link survives);
- a device (`/dev/null`), a named pipe, a socket: opened and written through. A named pipe is
  opened without blocking: when no reader opens it within `limits.pipe_wait_seconds()` the output
  fails with one line instead of waiting for ever.

Outputs of one run are committed together, only on success: inside
`with deferred_outputs():` every `write_output` is queued and the queue is
written when the block exits without an exception (and dropped otherwise).
The queue is written in two phases: every output is first staged (its
temporary file written and fsynced), and only if all of them could be staged
are they committed: the write-throughs (devices, pipes) first, since they can
fail (`/dev/full`, a pipe with no reader), then the renames, so a failure to write
one output leaves the regular files unchanged too.
Outside such a block `write_output` writes at once (the Python API).

`read_input(path)` is the one way the tools read an input file: `-` is standard input, a device
(`/dev/zero`) is refused, a named pipe is opened without blocking and waited for (a writer within
`limits.pipe_wait_seconds()`), and no input is read past `limits.max_input_bytes()`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import select
import stat
import time
from collections.abc import Callable, Iterator
from typing import Any

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
                with os.fdopen(_open_for_writing(self.path, self.target), "wb") as f:
                    f.write(self.data or b"")
        except OSError as e:
            self.discard()
            raise AscendError(f"{self.path}: cannot write file: {e.strerror}") from None

    def discard(self) -> None:
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


def _open_for_writing(path: str, target: str) -> int:
    """A descriptor on an existing non-regular file, opened for writing without blocking on a pipe that has
    no reader: such a pipe is retried until `pipe_wait_seconds()` have passed, then refused."""
    from ascend_mp.limits import pipe_wait_seconds

    deadline = time.monotonic() + pipe_wait_seconds()
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO:  # ENXIO: a named pipe that no process reads
                raise
            if time.monotonic() >= deadline:
                raise AscendError(
                    f"{path}: cannot write file: it is a named pipe that no process reads "
                    f"(waited {pipe_wait_seconds():g} s)"
                ) from None
            time.sleep(0.02)
    _set_blocking(fd)
    return fd


def _set_blocking(fd: int) -> None:
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)


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
        # The write-throughs first (a device or a pipe can refuse data), then the renames (they hardly fail).
        for item in sorted(staged, key=lambda s: s.tmp is not None):
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
    """For a reader that opens `path` itself rather than through `read_input`: refuse a device (`/dev/zero`
    would be read for ever) and a named pipe (opening it blocks until a writer comes); `-` is standard input."""
    path = os.fspath(path)
    _refuse_device(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISFIFO(mode):
        raise AscendError(
            f"{path}: cannot read file: it is a named pipe; give a regular file (or - for standard input)"
        )


def _refuse_device(path: str) -> None:
    if path == "-":
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # reading it reports the problem
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise AscendError(f"{path}: cannot read file: it is a device, not a file (use - to read standard input)")


def read_input(path: str | os.PathLike[str], stdin: bool = True) -> bytes:
    """The bytes of an input file (`-`: standard input, when `stdin`), as the module docstring says:
    every problem is a one-line `AscendError` naming the path."""
    from ascend_mp.limits import human_bytes, max_input_bytes

    path = os.fspath(path)
    limit = max_input_bytes()
    if path == "-" and stdin:
        import sys

        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream (tests): its text as UTF-8
            return _bounded(path, lambda n: sys.stdin.read(n).encode("utf-8"), limit)
        return _bounded(path, stream.read, limit)
    _refuse_device(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a named pipe with no writer must not block the open
    except OSError as e:
        raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise AscendError(f"{path}: cannot read file: Is a directory")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            raise AscendError(f"{path}: cannot read file: it is a device, not a file (use - to read standard input)")
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise AscendError(
                f"{path}: cannot read file: it holds {human_bytes(st.st_size)}, more than the limit of "
                f"{human_bytes(limit)} (physical memory, or $ASCEND_MP_MAX_TENSOR_BYTES)"
            )
        if stat.S_ISFIFO(st.st_mode):
            _wait_for_writer(fd, path)
        _set_blocking(fd)
        head = b""
        if stat.S_ISREG(st.st_mode) and st.st_size:  # its size is known: one read, no 1 MiB chunks to join
            head = os.read(fd, st.st_size)
        return _bounded(path, lambda n: os.read(fd, n), limit, head)
    except OSError as e:
        raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    finally:
        os.close(fd)


def _wait_for_writer(fd: int, path: str) -> None:
    """Wait (bounded) until a named pipe has data or its writer has closed it."""
    from ascend_mp.limits import pipe_wait_seconds

    wait = pipe_wait_seconds()
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    if not poller.poll(int(wait * 1000)):
        raise AscendError(f"{path}: cannot read file: it is a named pipe that no process writes (waited {wait:g} s)")


_CHUNK = 1 << 20


def _bounded(path: str, read: Callable[[int], bytes], limit: int, head: bytes = b"") -> bytes:
    """`head` and everything `read` gives after it until end of file, refused as soon as it exceeds `limit` bytes."""
    from ascend_mp.limits import human_bytes

    parts: list[bytes] = [head] if head else []
    total = len(head)
    while True:
        chunk = read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return parts[0] if len(parts) == 1 else b"".join(parts)  # one part: itself, not a copy
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise AscendError(
                f"{path}: cannot read file: it holds more than the limit of {human_bytes(limit)} "
                f"(physical memory, or $ASCEND_MP_MAX_TENSOR_BYTES)"
            )


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


# --------------------------------------------------------------------------------------
# .npy / .npz files: headers checked before anything is allocated
# --------------------------------------------------------------------------------------

NPY_MAGIC = b"\x93NUMPY"
NPZ_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip archive, or an empty one (only its end record)


def _check_magic(path: str, data: bytes, magic: tuple[bytes, ...], kind: str) -> None:
    """Refuse a file that does not start like a `kind` file (np.load would try it as a pickle)."""
    if not any(data.startswith(m) for m in magic):
        raise AscendError(f"{path}: not a {kind} file (it does not start with the {kind} header)")


def _npy_header(f: Any, size: int, where: str) -> tuple[tuple[int, ...], bool, Any, int]:
    """(shape, fortran order, dtype, data bytes) of an open .npy stream of `size` bytes, checked: the shape
    must fit the bytes that follow and the tensor limit (`limits.check_alloc`). Reads only the header."""
    from numpy.lib import format as npy

    from ascend_mp.limits import check_alloc, tensor_bytes

    try:
        version = npy.read_magic(f)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]}")
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
        if dtype.hasobject:
            raise ValueError("it holds Python objects (pickles are refused)")
        need = tensor_bytes(shape, dtype.itemsize)
        have = size - f.tell()
        if need > have:
            raise ValueError(
                f"its header claims {shape} {dtype} ({need} bytes) but the file holds {have} bytes of data"
            )
    except (ValueError, TypeError, SyntaxError, EOFError) as e:
        raise AscendError(f"{where}: not a readable .npy file: {_one_line(e)}") from None
    check_alloc(shape, dtype.itemsize, where)
    return shape, fortran, dtype, need


def read_npy(f: Any, size: int, where: str) -> Any:
    """An array from an open .npy stream of `size` bytes, its header checked (`_npy_header`) before
    anything is allocated."""
    import numpy as np

    shape, fortran, dtype, need = _npy_header(f, size, where)
    try:
        data = f.read(need)
    except EOFError as e:
        raise AscendError(f"{where}: not a readable .npy file: {_one_line(e)}") from None
    if len(data) != need:
        raise AscendError(
            f"{where}: not a readable .npy file: its header claims {need} bytes of data but it ends after {len(data)}"
        )
    array = np.frombuffer(data, dtype=dtype).copy() if need else np.empty(0, dtype)
    return array.reshape(shape, order="F" if fortran else "C")


def load_npy(path: str) -> Any:
    """The array of a .npy file (`read_input`: bounded, a named pipe waited for, a device refused)."""
    import io

    data = read_input(path, stdin=False)
    _check_magic(path, data, (NPY_MAGIC,), ".npy")
    return read_npy(io.BytesIO(data), len(data), path)


def load_npz(path: str, kind: str = ".npz") -> dict[str, Any]:
    """Every member of an .npz file (a valid empty archive gives none); each must be an .npy array.

    Before anything is decompressed, every member's declared size and .npy header are checked
    (`npz_members`): a zip bomb is refused from its headers."""
    import io
    import zipfile
    import zlib

    data = read_input(path, stdin=False)
    _check_magic(path, data, NPZ_MAGIC, kind)
    arrays: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = npz_members(path, z)
            for key, info in members:
                with z.open(info) as member:
                    arrays[key] = read_npy(member, info.file_size, f"{path}[{key}]")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError, zlib.error) as e:
        raise AscendError(f"{path}: not a readable {kind} file: {_one_line(e)}") from None
    return arrays


def npz_members(path: str, z: Any) -> list[tuple[str, Any]]:
    """(key, ZipInfo) of each member of an open .npz archive, after checking what the archive declares
    (the uncompressed sizes, together) against the tensor limit, and each member's .npy header against its
    size: the only reads are the headers. Errors name the archive and the member."""
    from ascend_mp.limits import check_alloc

    members: list[tuple[str, Any]] = []
    total = 0
    for info in z.infolist():
        key = info.filename.removesuffix(".npy")
        where = f"{path}[{key}]"
        if info.is_dir() or not info.filename.endswith(".npy"):
            raise AscendError(f"{where}: not an array (an .npz member must be a .npy file, got '{info.filename}')")
        total += info.file_size
        members.append((key, info))
    check_alloc((total,), 1, f"{path}: the archive's members (as declared, uncompressed)")
    for key, info in members:
        with z.open(info) as member:  # decompresses only as far as the header
            _npy_header(member, info.file_size, f"{path}[{key}]")
    return members


def is_safe_member(name: str) -> bool:
    """Whether `name` can be an .npz member name as is: not empty, no path separator, no `..`, no leading
    dot, no control character (a member name is a path inside the archive, and np.load maps it back)."""
    return (
        bool(name)
        and name.isprintable()
        and "/" not in name
        and "\\" not in name
        and not name.startswith(".")
        and ".." not in name
    )


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """An .npz archive of `arrays` (as np.savez writes it, but any key is a member: `file`, `allow_pickle`);
    every key must satisfy `is_safe_member`."""
    import io
    import zipfile

    import numpy as np
    from numpy.lib import format as npy

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for key, value in arrays.items():
            if not is_safe_member(key):
                raise ValueError(f"'{key}' is not a plain .npz member name")
            with z.open(key + ".npy", "w", force_zip64=True) as member:
                npy.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buffer.getvalue()


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
