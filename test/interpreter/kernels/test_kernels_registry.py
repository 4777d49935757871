"""The kernels of ascend_mp/interpreter/kernels/__init__.py (the kernel registry) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_util import F32

from ascend_mp.dialects.ascend import OPS, op_type
from ascend_mp.interpreter.kernels import KERNELS, KernelError, OpSpec, make_kernel


def test_every_dialect_op_has_a_kernel() -> None:
    missing = [op_type(op) for op in OPS if op.name.removeprefix("ascend.") not in KERNELS]
    assert not missing, f"ops without a kernel: {missing}"
    extra = set(KERNELS) - {op.name.removeprefix("ascend.") for op in OPS}
    assert not extra, f"kernels for ops the dialect does not have: {extra}"


def test_unknown_op_type_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match="no kernel for op type 'Bogus'"):
        make_kernel(OpSpec("Bogus", (F32,), (F32,)))


def test_missing_attribute_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match="Transpose needs the attribute 'perm'"):
        make_kernel(OpSpec("Transpose", (F32,), (F32,), ((2, 3),), ((3, 2),)))


def test_every_kernel_is_exercised_by_a_test() -> None:
    """Each op type is named in a kernel or gradient test (or, for Const, in the IR tests)."""
    here = Path(__file__).parent
    files = [*sorted(here.glob("test_kernels_*.py")), here.parent / "test_interpreter_grads.py"]
    files.append(here.parent / "test_interpreter.py")
    assert len(files) >= 9  # the family modules are found
    text = "".join(path.read_text() for path in files)
    untested = [t for t in KERNELS if f'"{t}"' not in text and f"ascend.{t} " not in text]
    assert not untested, f"kernels without a test: {untested}"
