"""float16 rounding of carried float16 tensors: the compiled kernel (numba) and
its Python body against numpy's own conversion `x.astype(float16)`, bit for bit, NaN payloads
included; the numpy path likewise (NaN as NaN); and a mixed training step that gives the same
bits with either path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_mp.interpreter import compiled as compiled_kernels
from ascend_mp.interpreter.compiled import _round_f16_element, use_compiled_rounding
from ascend_mp.interpreter.numerics import _round_f16_numpy, round_f16

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def numpy_rounding(x: np.ndarray) -> np.ndarray:
    """The reference: numpy's float32 -> float16 conversion, widened back (exact)."""
    with np.errstate(all="ignore"):
        return x.astype(F16).astype(F32)


@st.composite
def near_f16(draw: Any) -> np.float32:
    """float32 values where rounding is delicate: a float16 value, the tie between it and its upper
    neighbour, one float32 ulp either side of that tie (subnormals, the 65504/65520 edge and the
    signs included), or any float32 bit pattern (NaNs with payloads, float32 subnormals, inf)."""
    kind = draw(st.sampled_from(["value", "tie", "below", "above", "bits"]))
    if kind == "bits":
        return np.uint32(draw(st.integers(0, 2**32 - 1))).view(F32)
    h = np.uint16(draw(st.integers(0, 0x7BFF))).view(F16)  # finite, non-negative float16 values
    with np.errstate(over="ignore"):
        up = np.float64(np.nextafter(h, F16.type(np.inf)))
    up = 65536.0 if np.isinf(up) else up  # above 65504 the tie is 65520 (rounds to inf)
    tie = np.float32((np.float64(h) + up) / 2)  # exact in float32
    value = {
        "value": np.float32(h),
        "tie": tie,
        "below": np.nextafter(tie, np.float32(0)),
        "above": np.nextafter(tie, np.float32(np.inf)),
    }[kind]
    return -value if draw(st.booleans()) else value


ARRAYS = st.lists(near_f16(), min_size=1, max_size=64).map(lambda v: np.array(v, F32))


def assert_bits(ours: np.ndarray, want: np.ndarray) -> None:
    assert ours.dtype == F32 and ours.shape == want.shape
    np.testing.assert_array_equal(ours.view(np.uint32), want.view(np.uint32))


@settings(max_examples=300, deadline=None)
@given(x=ARRAYS)
def test_kernel_body_is_numpy_rounding_bit_for_bit(x: np.ndarray) -> None:
    """The kernel's algorithm, run as plain Python (no numba needed): every bit, NaN payloads too."""
    with np.errstate(all="ignore"):
        out = np.array([_round_f16_element(v) for v in x], F32)
    assert_bits(out, numpy_rounding(x))


@settings(max_examples=300, deadline=None)
@given(x=ARRAYS)
def test_numpy_path_is_numpy_rounding(x: np.ndarray) -> None:
    """The numpy path on arrays large enough to take its nine-pass route: same bits (NaN stays NaN)."""
    big = np.resize(x, 4096)
    with np.errstate(all="ignore"):
        ours = _round_f16_numpy(big)
    want = numpy_rounding(big)
    nan = np.isnan(want)
    assert (np.isnan(ours) == nan).all()
    np.testing.assert_array_equal(ours.view(np.uint32)[~nan], want.view(np.uint32)[~nan])


class TestCompiled:
    @pytest.fixture(autouse=True)
    def compiled(self) -> Any:
        before = compiled_kernels._COMPILED_ON[0]
        assert use_compiled_rounding(True)
        yield
        use_compiled_rounding(before)

    @settings(max_examples=300, deadline=None)
    @given(x=ARRAYS)
    def test_compiled_is_numpy_rounding_bit_for_bit(self, x: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            assert_bits(round_f16(x), numpy_rounding(x))

    def test_every_float16_value_tie_and_neighbour(self) -> None:
        """Every float16 value, every tie between neighbours, one float32 ulp either side, the
        limits, and a million random bit patterns; non-contiguous and 2-d input keep their shape."""
        h = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(F16)
        h = np.sort(h[np.isfinite(h)].astype(np.float64))
        ties = ((h[:-1] + h[1:]) / 2).astype(F32)
        values = np.concatenate([h.astype(F32), ties, np.array([65519.996, 65520.0, 2.0**16, 3.4e38, 1e-45], F32)])
        near = [np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(-np.inf))]
        random = np.random.default_rng(5).integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32)
        x = np.concatenate([values, -values, *near, random])
        with np.errstate(all="ignore"):
            assert_bits(round_f16(x), numpy_rounding(x))
            m = x[: 64 * 130].reshape(64, 130)[:, ::2]  # strided
            assert_bits(round_f16(m), numpy_rounding(m))

    def test_switch_reports_and_restores(self) -> None:
        assert compiled_kernels._COMPILED_ON[0]
        use_compiled_rounding(False)
        assert not compiled_kernels._COMPILED_ON[0]


def test_mixed_training_step_same_bits_with_either_rounding() -> None:
    from ascend_mp.passes.loss_scale import initial_state
    from ascend_mp.train import TrainConfig, compile_training

    compiled = compile_training(TrainConfig(model="mlp", batch=64, optimizer="momentum", lr=0.05))
    state = initial_state(compiled.step_fn, compiled.model.init_params(0))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    args = [*state.args(), x, y, state.loss_scale, state.good_steps, state.step]
    results = {}
    before = compiled_kernels._COMPILED_ON[0]
    for on in (False, True):
        use_compiled_rounding(on)
        try:
            results[on] = compiled.program.run("train_step", *args)
        finally:
            use_compiled_rounding(before)
    for a, b in zip(results[False], results[True], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
