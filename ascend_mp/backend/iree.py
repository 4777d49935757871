"""Run an ascend module through IREE: lower it (`convert-ascend-to-linalg`), compile it once with
`iree-compile` (the `.vmfb` is cached by a hash of the MLIR text and the flags), execute it with the IREE
runtime on numpy inputs.

    program = IreeProgram.from_module(module, device="cpu")
    outputs = program.run("mlp", x, w1, b1, w2, b2)

Devices: `cpu` (llvm-cpu, the host's CPU features, the `local-task` driver) and `cuda` (sm_90 by
default, the `cuda` driver). Compiling for CUDA needs no GPU; running does. The cache directory is
`$ASCEND_MP_CACHE/iree`, else `~/.cache/ascend-mp/iree`. Errors are :class:`IreeError` (one line).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.errors import AscendError

Array = np.ndarray[Any, Any]

CUDA_TARGET = "sm_90"
"""The CUDA architecture compiled for (Hopper: H100/H200); `IreeProgram.from_module(cuda_target=...)` changes it."""

DEVICES: dict[str, str] = {"cpu": "local-task", "cuda": "cuda"}
"""Device name -> the IREE runtime driver that runs it."""


class IreeError(AscendError):
    """IREE is missing, a module does not compile, or a device cannot run it: a one-line user error."""


def compile_flags(device: str, cuda_target: str = CUDA_TARGET, cpu_target: str = "host") -> list[str]:
    """The `iree-compile` flags for `device` (`cpu_target`: an LLVM CPU name, `host` for this machine's)."""
    if device == "cpu":
        return [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            f"--iree-llvmcpu-target-cpu={cpu_target}",
        ]
    if device == "cuda":
        # IREE 3.13 reads the architecture from --iree-gpu-test-target (--iree-cuda-target alone
        # leaves "missing GPU target in #hal.executable.target")
        return ["--iree-hal-target-device=cuda", f"--iree-gpu-test-target={cuda_target}"]
    raise IreeError(f"unknown IREE device '{device}'; expected one of {', '.join(DEVICES)}")


def cache_dir() -> Path:
    root = os.environ.get("ASCEND_MP_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "ascend-mp"
    return base / "iree"


def _versions() -> str:
    try:
        from importlib.metadata import version

        return f"{version('iree-base-compiler')}/{version('iree-base-runtime')}"
    except Exception as e:  # noqa: BLE001 - any failure: IREE is not installed
        raise IreeError(
            f"IREE is not installed ({e}); install the 'iree' extra: pip install 'ascend-mp[iree]'"
        ) from None


def _lowered(module: ModuleOp) -> ModuleOp:
    """A lowered copy of `module` (`convert-ascend-to-linalg`); `module` itself is not changed."""
    from ascend_mp.ir import make_context
    from ascend_mp.passes.convert_ascend_to_linalg import ConvertAscendToLinalgPass, check_lowerable

    check_lowerable(module)  # on the original: its diagnostics name source locations, a clone's cannot
    lowered = module.clone()
    ConvertAscendToLinalgPass().apply(make_context(), lowered)
    return lowered


def lower_to_text(module: ModuleOp) -> str:
    """The module lowered by `convert-ascend-to-linalg`, printed in generic form (what iree-compile reads);
    `module` itself is not changed."""
    from ascend_mp.ir import print_module

    return print_module(_lowered(module), generic=True)


def _iree_compile() -> str:
    try:
        from iree.compiler.tools.binaries import find_tool
    except ImportError:
        _versions()
        raise IreeError("IREE's compiler package is not importable") from None
    return str(find_tool("iree-compile"))


class _HashedFile:
    """A text sink for the printer: UTF-8 into a file, and into the cache key's hash on the way."""

    def __init__(self, file: Any, digest: Any) -> None:
        self.file, self.digest = file, digest

    def write(self, text: str) -> int:
        data = text.encode()
        self.digest.update(data)
        self.file.write(data)
        return len(text)


def _compile(
    write: Callable[[_HashedFile], None], device: str, cuda_target: str, cpu_target: str, extra: Sequence[str]
) -> bytes:
    """The `.vmfb` of the MLIR text `write` prints. The text goes to a file beside the cache (never into one
    string: a model's weights print as hundreds of MB of hex) and to the hash that keys the cache; iree-compile
    reads that file and writes the `.vmfb` there."""
    flags = [*compile_flags(device, cuda_target, cpu_target), *extra]
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256("\0".join([_versions(), *flags, ""]).encode())
    source = cache / f"source.{os.getpid()}.{threading.get_ident()}.mlir"
    try:
        with open(source, "wb", buffering=1 << 20) as f:
            write(_HashedFile(f, digest))
        path = cache / f"{digest.hexdigest()}.vmfb"
        if path.exists():
            return path.read_bytes()
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        proc = subprocess.run(
            [_iree_compile(), str(source), *flags, "-o", str(tmp)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            lines = [ln for ln in proc.stderr.decode(errors="replace").splitlines() if "error:" in ln]
            first = lines[0].strip().replace(f"{source}:", "<module>:") if lines else f"exit status {proc.returncode}"
            raise IreeError(f"iree-compile failed for device {device}: {first}")
        os.replace(tmp, path)  # atomic: a concurrent run reads a whole file or compiles again
        return path.read_bytes()
    finally:
        source.unlink(missing_ok=True)


def compile_text(
    text: str, device: str = "cpu", cuda_target: str = CUDA_TARGET, cpu_target: str = "host", extra: Sequence[str] = ()
) -> bytes:
    """The `.vmfb` of lowered MLIR `text` for `device` (`extra`: more `iree-compile` flags, e.g. data tiling),
    from the cache when compiled before."""

    def write(sink: _HashedFile) -> None:
        sink.write(text)

    return _compile(write, device, cuda_target, cpu_target, extra)


def compile_module(
    module: ModuleOp,
    device: str = "cpu",
    cuda_target: str = CUDA_TARGET,
    cpu_target: str = "host",
    extra: Sequence[str] = (),
) -> bytes:
    """The `.vmfb` of `module` (an ascend module after any precision pass) lowered for `device`: what
    `compile_text(lower_to_text(module))` gives, the same cache entry, without holding the text in memory."""
    from ascend_mp.ir import write_module

    lowered = _lowered(module)
    return _compile(lambda sink: write_module(lowered, sink, generic=True), device, cuda_target, cpu_target, extra)


_BF16 = np.dtype(ml_dtypes.bfloat16)


def _to_device(a: Array) -> Array:
    a = np.asarray(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    return a.view(np.uint16) if a.dtype == _BF16 else a  # bf16 crosses the runtime as its bits


@dataclass
class IreeProgram:
    """A compiled module: call :meth:`run` with numpy arrays, get numpy arrays back."""

    vmfb: bytes
    device: str
    result_dtypes: dict[str, list[np.dtype[Any]]] = field(default_factory=dict[str, list[np.dtype[Any]]])
    _module: Any = None

    @classmethod
    def from_module(cls, module: ModuleOp, device: str = "cpu", cuda_target: str = CUDA_TARGET) -> IreeProgram:
        """Lower and compile `module` (an ascend module after any precision pass) for `device`."""
        from ascend_mp.ir import functions
        from ascend_mp.resources import numpy_dtype

        compile_flags(device, cuda_target)  # an unknown device fails before anything runs
        vmfb = compile_module(module, device, cuda_target)
        dtypes = {f.sym_name.data: [numpy_dtype(t) for t in f.function_type.outputs] for f in functions(module)}  # pyright: ignore[reportArgumentType]  # the lowered functions return tensors
        return cls(vmfb, device, dtypes)

    def _load(self) -> Any:
        if self._module is None:
            import iree.runtime as rt

            driver = DEVICES[self.device]
            if driver not in rt.query_available_drivers():
                raise IreeError(f"the IREE runtime has no '{driver}' driver for device {self.device}")
            try:
                self._module = rt.load_vm_flatbuffer(self.vmfb, driver=driver)
            except (RuntimeError, ValueError) as e:
                raise IreeError(
                    f"cannot load the module on device {self.device}: {' '.join(str(e).split())[:300]}"
                ) from None
        return self._module

    def run(self, name: str, *inputs: Array) -> list[Array]:
        """Run function `name` on `inputs`; one numpy array per result, in the IR's dtypes."""
        module = self._load()
        try:
            fn = module[name]
        except (KeyError, AttributeError, RuntimeError):
            raise IreeError(f"no function @{name} in the compiled module") from None
        out = fn(*(_to_device(a) for a in inputs))
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        arrays = [np.asarray(o.to_host() if hasattr(o, "to_host") else o) for o in outs]
        want = self.result_dtypes.get(name, [])
        return [a.view(d) if d == _BF16 and a.dtype != d else a for a, d in zip(arrays, want)] + arrays[len(want) :]


def run_module(module: ModuleOp, name: str, inputs: Sequence[Array], device: str = "cpu") -> list[Array]:
    """Compile (cached) and run function `name` of `module` once."""
    return IreeProgram.from_module(module, device).run(name, *inputs)
