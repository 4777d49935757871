"""Mixed precision at fp32's cost: the float16 rounding the executor skips or
does faster must give the bits the rule (docs/design.md §6) gives.

* results of `exact` kernels on float16 operands are not rounded: each against its float64
  formula rounded to float16 independently;
* the compiled rounding ufunc against numpy's conversion on 10^7 random bit patterns and every
  edge class (float16 values, ties and their neighbours, subnormals, overflow, NaN payloads);
* a Select on one flag returns a dying operand itself, never an argument or a live value;
* `ascend-run` on a float32 or small float16 program does not import numba.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ascend_mp.interpreter import compiled as compiled_kernels
from ascend_mp.interpreter.compiled import use_compiled_rounding
from ascend_mp.interpreter.kernels import OpSpec, make_kernel
from ascend_mp.interpreter.kernels import base as kernels
from ascend_mp.interpreter.numerics import round_f16
from ascend_mp.interpreter.runner import Program
from ascend_mp.ir import parse_module

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)


def f16_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float16 values of every magnitude (subnormals, zeros of both signs, the extremes, inf)."""
    bits = rng.integers(0, 0x7C01, size=shape, dtype=np.uint32).astype(np.uint16)
    x = bits.view(F16).copy()
    x[rng.random(shape) < 0.5] *= -1
    flat = x.reshape(-1)
    flat[:6] = [0.0, -0.0, 65504.0, -65504.0, 6e-8, -np.inf][: flat.size]
    return x


def _pool_max(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _one_hot(idx: np.ndarray, on: np.ndarray, off: np.ndarray) -> np.ndarray:
    return np.where(idx[..., None] == np.arange(4), on, off)


# op -> (operand count, attributes, float64 formula, input shape, output shape)
EXACT: dict[str, tuple[int, dict[str, Any], Callable[..., np.ndarray], tuple[int, ...], tuple[int, ...]]] = {
    "Relu": (1, {}, lambda x: np.maximum(x, 0.0), (16, 32), (16, 32)),
    "Relu6": (1, {}, lambda x: np.minimum(np.maximum(x, 0.0), 6.0), (16, 32), (16, 32)),
    "Neg": (1, {}, lambda x: -x, (16, 32), (16, 32)),
    "Floor": (1, {}, np.floor, (16, 32), (16, 32)),
    "Maximum": (2, {}, np.maximum, (16, 32), (16, 32)),
    "Minimum": (2, {}, np.minimum, (16, 32), (16, 32)),
    "ClipByValue": (3, {}, lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), (16, 32), (16, 32)),
    "ReluGrad": (2, {}, lambda g, f: np.where(f > 0, g, 0.0), (16, 32), (16, 32)),
    "ReduceMax": (1, {"axes": (1,)}, lambda x: x.max(axis=1), (16, 32), (16,)),
    "MaxPool": (1, {"ksize": (1, 1, 2, 2), "strides": (1, 1, 2, 2)}, _pool_max, (2, 3, 8, 8), (2, 3, 4, 4)),
    "OneHot": (3, {"depth": 4, "axis": -1}, _one_hot, (16, 32), (16, 32, 4)),
}


@pytest.mark.parametrize("op", sorted(EXACT))
def test_exact_kernels_skip_rounding_and_agree_with_float64(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel is marked exact, runs without any rounding step on carried float16 operands,
    and its result is the float64 result rounded to float16, bit for bit."""
    n, attrs, formula, shape, out_shape = EXACT[op]
    assert kernels.KERNELS[op].exact
    rng = np.random.default_rng(sorted(EXACT).index(op))
    xs = [f16_values(rng, shape) for _ in range(n)]
    if op == "ClipByValue":  # scalar bounds, lo <= hi
        lo, hi = sorted(f16_values(rng, (2,)).astype(F64).tolist())
        xs = [xs[0], np.array(lo, F16), np.array(hi, F16)]
    if op == "OneHot":  # int32 indices (some out of range: all off), float16 on and off values
        on, off = f16_values(rng, (8,))[6:]  # past the fixed specials
        xs = [rng.integers(-1, 6, shape).astype(np.int32), np.array(on, F16), np.array(off, F16)]
    spec = OpSpec(
        op, tuple(x.dtype for x in xs), (F16,), tuple(x.shape for x in xs), (out_shape,), attrs, carry_f16=True
    )

    def no_rounding(*_: Any) -> Any:
        raise AssertionError(f"{op} rounds a result that is a float16 value already")

    monkeypatch.setattr(kernels, "round_f16", no_rounding)
    monkeypatch.setattr(kernels, "f16_rounding", lambda shape: no_rounding)
    carried = [x.astype(F32) if x.dtype == F16 else x for x in xs]
    body = kernels.KERNELS[op].build(spec)
    with np.errstate(all="ignore"):
        y = make_kernel(spec)(*carried)
        want = formula(*[x.astype(F64) if x.dtype == F16 else x for x in xs]).astype(F16).astype(F32)
        direct = np.asarray(body(*carried))
    assert y.dtype == F32 and y.shape == out_shape
    np.testing.assert_array_equal(y.view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(direct.view(np.uint32), want.view(np.uint32))  # the body alone: nothing left to round


def edge_cases() -> np.ndarray:
    """Every float16 value, every tie between neighbours and one float32 ulp either side, both
    signs, the overflow edge, float32 subnormals, infinities and NaNs with payloads."""
    h = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(F16)
    h = np.sort(h[np.isfinite(h)].astype(F64))
    ties = (h[:-1] + h[1:]) / 2
    values = np.concatenate([h, ties, [65519.996, 65520.0, 65536.0, 1e30, 3.4e38, 2.0**-25, 2.0**-26]]).astype(F32)
    near = [np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(-np.inf))]
    special = np.array(
        [0x00000001, 0x007FFFFF, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FBFFFFF, 0x7F801FFF, 0x7FFFE000], np.uint32
    )
    special = np.concatenate([special, special | np.uint32(0x80000000)]).view(F32)
    return np.concatenate([values, -values, *near, special])


def numpy_rounding(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return x.astype(F16).astype(F32)


def test_compiled_rounding_on_ten_million_patterns_and_every_edge() -> None:
    assert use_compiled_rounding(True)
    kernel = compiled_kernels._compiled_kernel()
    assert kernel is not None
    random = np.random.default_rng(13).integers(0, 2**32, 10**7, dtype=np.uint64).astype(np.uint32).view(F32)
    for x in (edge_cases(), random):
        with np.errstate(all="ignore"):
            got = kernel(x)
        np.testing.assert_array_equal(got.view(np.uint32), numpy_rounding(x).view(np.uint32))  # NaN payloads too
    with np.errstate(all="ignore"):  # through round_f16: 2-d, strided and 0-d input keep their shape
        m = edge_cases()[: 64 * 130].reshape(64, 130)[:, ::2]
        np.testing.assert_array_equal(round_f16(m).view(np.uint32), numpy_rounding(m).view(np.uint32))
        zero_d = round_f16(np.array(3.0e-8, F32))
        assert (
            isinstance(zero_d, np.ndarray)
            and zero_d.shape == ()
            and zero_d == np.float32(numpy_rounding(np.array(3.0e-8, F32)))
        )


SELECT = """func.func @f(%flag: tensor<i1>, %w: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %u = ascend.Add %w, %w : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %v = ascend.Mul %w, %w : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %s = ascend.Select %flag, %w, %u : (tensor<i1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %t = ascend.Select %flag, %w, %v : (tensor<i1>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %s, %t, %v : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
"""


@pytest.mark.parametrize("track", [False, True])
def test_select_on_one_flag_moves_only_a_dying_operand(track: bool) -> None:
    """%u dies at its Select (returned itself), %v lives on as a result (copied), %w is an
    argument (copied): the results are right and none shares memory with another or with %w."""
    program = Program.from_module(parse_module(SELECT))
    w = np.arange(64, dtype=F32)
    for flag in (False, True):
        s, t, v = program.run("f", np.array(flag), w, track_memory=track)
        np.testing.assert_array_equal(s, w if flag else w + w)
        np.testing.assert_array_equal(t, w if flag else w * w)
        np.testing.assert_array_equal(v, w * w)
        for a, b in ((s, w), (t, w), (t, v), (s, t), (s, v)):
            assert not np.shares_memory(a, b)


_NO_NUMBA = """
import sys
import numpy as np
from ascend_mp.interpreter.runner import Program
from ascend_mp.ir import parse_module
import ascend_mp.tools.ascend_run as tool
tool.main([sys.argv[1], "--seed", "0"])
small = parse_module('''func.func @f(%x: tensor<64xf16>) -> tensor<64xf16> {
  %0 = ascend.Exp %x : (tensor<64xf16>) -> tensor<64xf16>
  func.return %0 : tensor<64xf16>
}''')
Program.from_module(small).run("f", np.ones(64, np.float16))
assert "numba" not in sys.modules, "a float32 or small float16 program imported numba"
"""


def test_float32_and_small_float16_programs_do_not_import_numba(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n"
    )
    done = subprocess.run([sys.executable, "-c", _NO_NUMBA, str(src)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
