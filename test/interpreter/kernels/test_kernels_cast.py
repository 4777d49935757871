"""The kernels of ascend_mp/interpreter/kernels/cast.py (casts, rounding and the float status) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_util import BF16, EXAMPLES, F16, F32, SHAPES, f16_rounding_cases, rne, run

from ascend_mp.interpreter.kernels import FloatStatus, KernelError, OpSpec, make_kernel
from ascend_mp.interpreter.numerics import round_f16


@EXAMPLES
@given(x=hnp.arrays(np.float64, SHAPES, elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_cast_rounds_to_nearest_even(x: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        x32 = x.astype(np.float32)
    for dst in (F16, BF16):
        y = run("Cast", x32, out=dst)
        np.testing.assert_array_equal(y.view(np.uint16), rne(x32, dst).view(np.uint16))
    half = rne(x32, F16)
    np.testing.assert_array_equal(run("Cast", half, out=F32), half.astype(np.float64).astype(np.float32))


def test_cast_boundaries() -> None:
    x = np.array([65519.0, 65520.0, 2.0**-25, 2.0**-25 * 1.5, 1 + 2.0**-11, 1 + 3 * 2.0**-11, -1e9], np.float32)
    assert run("Cast", x, out=F16).tolist() == [65504.0, np.inf, 0.0, 2.0**-24, 1.0, 1 + 2.0**-9, -np.inf]
    assert run("Cast", np.array([-2.7, 2.7, 0.0], F32), out=np.int32).tolist() == [-2, 2, 0]
    assert run("Cast", np.array([-2.7, 0.0, np.nan], F32), out=np.bool_).tolist() == [True, False, True]
    assert run("Cast", np.array([True, False]), out=F16).tolist() == [1.0, 0.0]


def test_round_f16_is_float16_rounding_bit_for_bit() -> None:
    """The carried float16 rounding against the format's definition (`rne`) and numpy's
    conversion: every float16 value, every tie and its neighbours, a million random
    bit patterns (an exhaustive run over all 2^32 float32 inputs also agreed)."""
    x = f16_rounding_cases()
    with np.errstate(all="ignore"):
        ours = round_f16(x)
        want = rne(x, F16).astype(F32)
        assert ours.dtype == F32 and x.size > 2048
        nan = np.isnan(want)
        assert (np.isnan(ours) == nan).all()
        np.testing.assert_array_equal(ours.view(np.uint32)[~nan], want.view(np.uint32)[~nan])  # signed zeros included
        np.testing.assert_array_equal(ours.view(np.uint32)[~nan], x.astype(F16).astype(F32).view(np.uint32)[~nan])
        for small in (x[:100], x[:1], x[0].reshape(())):  # below the size where numpy's conversion is used
            np.testing.assert_array_equal(round_f16(small).view(np.uint32), rne(small, F16).astype(F32).view(np.uint32))


def test_float_status_kernels_need_a_register() -> None:
    with pytest.raises(KernelError, match="needs the program's float status register"):
        make_kernel(OpSpec("NPUGetFloatStatus", (F32,), (F32,), ((8,),), ((8,),)))


def test_float_status_kernels() -> None:
    status = FloatStatus()
    spec = OpSpec("NPUGetFloatStatus", (F32,), (F32,), ((8,),), ((8,),), status=status)
    get = make_kernel(spec)
    clear = make_kernel(OpSpec("NPUClearFloatStatus", (F32,), (F32,), ((8,),), ((8,),), status=status))
    alloc = make_kernel(OpSpec("NPUAllocFloatStatus", (), (F32,), (), ((8,),), status=status))
    buf = alloc()
    assert buf.tolist() == [0.0] * 8
    assert get(buf).tolist() == [0.0] * 8
    status.flag = True
    assert get(buf).tolist() == [1.0] + [0.0] * 7
    assert clear(buf).tolist() == [0.0] * 8 and status.flag is False
