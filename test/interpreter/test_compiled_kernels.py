"""The compiled float32 kernels (numba) behind Relu, Erf and the convolutions' bias epilogue.

They serve tensors of at least LOAD_COMPILED_AT elements (smaller ones stay on numpy), so the
cases here are that large. Each path is checked against a float64 reference written here (a
sum over filter taps; max(x, 0)) and bit for bit against the numpy path it replaces
(`use_compiled_kernels(False)`), special values included; a Relu whose operand dies runs in
place through the executor.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ascend_mp.interpreter import Program
from ascend_mp.interpreter.compiled import LOAD_COMPILED_AT, compiled, use_compiled_kernels
from ascend_mp.interpreter.kernels import FloatStatus, OpSpec, apply
from ascend_mp.ir import parse_module

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
EPS32 = 2.0**-23


@pytest.fixture
def numpy_kernels() -> Iterator[None]:
    """Kernels built inside use numpy only."""
    use_compiled_kernels(False)
    try:
        yield
    finally:
        use_compiled_kernels(True)


def spec(op: str, inputs: list[np.ndarray], out: np.dtype, out_shape: tuple[int, ...], attrs: dict[str, Any]) -> OpSpec:
    return OpSpec(
        op,
        tuple(a.dtype for a in inputs),
        (out,),
        tuple(a.shape for a in inputs),
        (out_shape,),
        attrs,
        status=FloatStatus(),
    )


def tap_sum(
    x: np.ndarray, w: np.ndarray, stride: int, dilation: int, pads: tuple[int, int, int, int], groups: int
) -> np.ndarray:
    """conv(x (N, C, H, W), w (O, C/G, KH, KW)) in float64, one einsum per filter tap and group."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    pt, pb, pl, pr = pads
    oh = (h + pt + pb - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + pl + pr - dilation * (kw - 1) - 1) // stride + 1
    xp = np.pad(x.astype(F64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for a in range(kh):
            for b in range(kw):
                r0, c0 = a * dilation, b * dilation
                tap = xp[
                    :,
                    g * i : (g + 1) * i,
                    r0 : r0 + (oh - 1) * stride + 1 : stride,
                    c0 : c0 + (ow - 1) * stride + 1 : stride,
                ]
                y[:, g * og : (g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", tap, w[g * og : (g + 1) * og, :, a, b].astype(F64)
                )
    return y


CONV_CASES = [
    # (n, c, o, h, w, k, stride, dilation, pads, groups)
    (1, 8, 16, 20, 20, 3, 1, 1, (1, 1, 1, 1), 1),  # resnet's 3x3
    (2, 6, 12, 17, 19, 3, 2, 1, (1, 1, 1, 1), 1),  # stride 2, batch 2, odd sizes
    (1, 4, 8, 24, 24, 3, 1, 2, (2, 1, 0, 2), 1),  # dilation, uneven pads
    (1, 16, 32, 16, 16, 1, 1, 1, (0, 0, 0, 0), 1),  # 1x1: no im2col
    (2, 16, 16, 18, 18, 1, 2, 1, (0, 0, 0, 0), 1),  # 1x1 stride 2
    (1, 3, 8, 40, 40, 7, 2, 1, (3, 3, 3, 3), 1),  # resnet's stem
    (2, 8, 12, 16, 16, 3, 1, 1, (1, 1, 1, 1), 4),  # grouped
    (1, 4, 8, 24, 24, 3, 1, 2, (2, 2, 2, 2), 1),  # dilated, as wide as x: shifted taps
    (2, 5, 6, 21, 23, 3, 1, 1, (0, 2, 2, 0), 1),  # uneven pads, as wide as x
]


def conv_inputs(
    case: tuple[Any, ...], dtype: np.dtype, seed: int
) -> tuple[list[np.ndarray], tuple[int, ...], dict[str, Any]]:
    n, c, o, h, w, k, s, d, pads, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    f = rng.standard_normal((o, c // g, k, k)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    oh = (h + pads[0] + pads[1] - d * (k - 1) - 1) // s + 1
    ow = (w + pads[2] + pads[3] - d * (k - 1) - 1) // s + 1
    attrs = {"strides": (1, 1, s, s), "dilations": (1, 1, d, d), "pads": pads, "groups": g, "data_format": "NCHW"}
    return [x, f, b], (n, o, oh, ow), attrs


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "n{}c{}o{}h{}w{}k{}s{}d{}p{}g{}".format(*c))
@pytest.mark.parametrize("dtype,out", [(F32, F32), (F16, F32), (F16, F16)], ids=str)
def test_conv2d_bias_epilogue_against_a_float64_tap_sum(case: tuple[Any, ...], dtype: np.dtype, out: np.dtype) -> None:
    (x, f, b), out_shape, attrs = conv_inputs(case, dtype, seed=sum(case[:6]))
    assert (
        np.prod(out_shape) >= LOAD_COMPILED_AT and compiled("channel_bias", out_shape) is not None
    )  # the compiled path
    y = apply(spec("Conv2D", [x, f, b], out, out_shape, attrs), x, f, b)
    _, s, d, pads, g = case[5:]
    ref = tap_sum(x, f, s, d, pads, g) + b.astype(F64).reshape(1, -1, 1, 1)
    scale = tap_sum(np.abs(x), np.abs(f), s, d, pads, g) + np.abs(b.astype(F64)).reshape(1, -1, 1, 1)
    terms = f.shape[1] * f.shape[2] * f.shape[3] + 1
    bound = terms * EPS32 * scale  # float32 products summed in float32, then the bias
    if out == F16:
        bound = bound + 2.0**-11 * np.abs(ref) + 2.0**-25  # the one rounding to float16
    assert y.dtype == out and y.shape == out_shape and y.flags.c_contiguous
    assert (np.abs(y.astype(F64) - ref) <= bound).all()


@pytest.mark.parametrize("case", CONV_CASES[:3], ids=lambda c: "n{}c{}o{}h{}w{}k{}s{}d{}p{}g{}".format(*c))
def test_conv2d_bias_epilogue_gives_numpys_bits(case: tuple[Any, ...], numpy_kernels: None) -> None:
    (x, f, b), out_shape, attrs = conv_inputs(case, F32, seed=7)
    x[0, 0, :2, :2] = [[np.inf, np.nan], [-0.0, 1e38]]
    by_numpy = apply(spec("Conv2D", [x, f, b], F32, out_shape, attrs), x, f, b)
    use_compiled_kernels(True)
    y = apply(spec("Conv2D", [x, f, b], F32, out_shape, attrs), x, f, b)
    assert np.array_equal(y.view(np.uint32), by_numpy.view(np.uint32))


@pytest.mark.parametrize(
    "k,dilation,pads",
    [
        (3, 1, (1, 1, 1, 1)),
        (3, 1, (0, 0, 1, 1)),
        (3, 1, (2, 0, 0, 2)),
        (3, 2, (2, 2, 2, 2)),
        (5, 1, (1, 3, 2, 2)),
        (3, 1, (4, 4, 1, 1)),
        (7, 1, (3, 3, 3, 3)),
        (2, 1, (0, 1, 1, 0)),
    ],
)
def test_shifted_tap_patches_are_the_windows(k: int, dilation: int, pads: tuple[int, int, int, int]) -> None:
    """Stride-1 patches of an output as wide as x (one flat copy per tap, then the wrapped columns and
    the rows outside x zeroed) are x's padded windows, exactly (rows past x: (4, 4) pads on 5 rows)."""
    from ascend_mp.interpreter.geometry import ConvGeometry

    x = np.random.default_rng(k).standard_normal((2, 3, 5, 6)).astype(F32) + 10  # no zeros of its own
    geo = ConvGeometry(1, 1, dilation, dilation, pads, 1)
    oh, ow = geo.out_size(5, 6, k, k)
    assert ow == 6  # the shifted-tap path
    windows = geo.windows(x, k, k)  # (N, C, OH, OW, K, K), a view of the zero-padded x
    expected = windows.transpose(0, 1, 4, 5, 2, 3).reshape(2, 3 * k * k, oh * ow)
    np.testing.assert_array_equal(geo.patches(x, k, k), expected)
    np.testing.assert_array_equal(
        geo.patches(x.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2), k, k), expected
    )  # strided x


@pytest.mark.parametrize(
    "k,stride,dilation,pads",
    [
        (7, (2, 2), 1, (3, 3, 3, 3)),
        (5, (2, 2), 1, (0, 1, 2, 0)),
        (3, (2, 1), 2, (1, 1, 1, 1)),
        (5, (3, 2), 1, (2, 2, 2, 2)),
        (5, (2, 2), 2, (9, 0, 1, 1)),
        (7, (2, 2), 1, (0, 0, 0, 0)),
    ],
)
def test_stride_phase_patches_are_the_windows(
    k: int, stride: tuple[int, int], dilation: int, pads: tuple[int, int, int, int]
) -> None:
    """Strided patches of a many-tap window (read from the padded x split by stride phase, each tap a
    stride-1 copy) are x's padded windows, exactly."""
    from ascend_mp.interpreter.geometry import ConvGeometry

    x = np.random.default_rng(k).standard_normal((2, 3, 13, 12)).astype(F32) + 10
    geo = ConvGeometry(stride[0], stride[1], dilation, dilation, pads, 1)
    assert k * k >= 4 * stride[0] * stride[1]  # the phase path
    oh, ow = geo.out_size(13, 12, k, k)
    expected = geo.windows(x, k, k).transpose(0, 1, 4, 5, 2, 3).reshape(2, 3 * k * k, oh * ow)
    np.testing.assert_array_equal(geo.patches(x, k, k), expected)


@pytest.mark.parametrize("m", [1, 2])
def test_depthwise_bias_epilogue_against_a_float64_tap_sum(m: int) -> None:
    rng = np.random.default_rng(m)
    x = rng.standard_normal((2, 6, 15, 14)).astype(F32)
    f = rng.standard_normal((3, 3, 6, m)).astype(F32)  # [KH, KW, C, M]
    b = rng.standard_normal(6 * m).astype(F32)
    attrs = {"strides": (1, 1, 1, 1), "dilations": (1, 1, 1, 1), "pads": (1, 1, 1, 1), "data_format": "NCHW"}
    out_shape = (2, 6 * m, 15, 14)
    y = apply(spec("DepthwiseConv2D", [x, f, b], F32, out_shape, attrs), x, f, b)
    w_oihw = f.transpose(2, 3, 0, 1).reshape(6 * m, 1, 3, 3)  # output channel c*M + m reads channel c
    ref = tap_sum(x, w_oihw, 1, 1, (1, 1, 1, 1), 6) + b.astype(F64).reshape(1, -1, 1, 1)
    scale = tap_sum(np.abs(x), np.abs(w_oihw), 1, 1, (1, 1, 1, 1), 6) + np.abs(b).reshape(1, -1, 1, 1)
    assert (np.abs(y - ref) <= 10 * EPS32 * scale).all()


SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3.5, -3.5], F32)


def relu_input(shape: tuple[int, ...]) -> np.ndarray:
    x = np.random.default_rng(1).standard_normal(shape).astype(F32)
    flat = x.reshape(-1)
    flat[: SPECIALS.size] = SPECIALS
    flat[-SPECIALS.size :] = SPECIALS
    return x


def test_relu_is_numpys_maximum_bit_for_bit() -> None:
    """NaN stays the same NaN, -0 gives +0 (numpy's maximum returns its second operand on a tie)."""
    x = relu_input((3, 41, 37))
    relu = OpSpec("Relu", (F32,), (F32,), (x.shape,), (x.shape,))
    assert compiled("relu", x.shape) is not None
    y = apply(relu, x)
    expected = np.maximum(x, np.float32(0))
    assert np.array_equal(y.view(np.uint32), expected.view(np.uint32))
    assert y is not x and np.array_equal(x[0, 0, :10].view(np.uint32), SPECIALS.view(np.uint32))  # operand untouched
    ref = np.where(np.isnan(x), np.nan, np.maximum(x.astype(F64), 0.0))
    np.testing.assert_array_equal(y.astype(F64), ref)


RELU_AFTER_ADD = """func.func @f(%x: tensor<{s}xf32>, %y: tensor<{s}xf32>) -> tensor<{s}xf32> {{
  %0 = ascend.Add %x, %y : (tensor<{s}xf32>, tensor<{s}xf32>) -> tensor<{s}xf32>
  %1 = ascend.Relu %0 : (tensor<{s}xf32>) -> tensor<{s}xf32>
  func.return %1 : tensor<{s}xf32>
}}
"""


@pytest.mark.parametrize("shape", [(2, 8, 30, 30), (64, 64)])
def test_relu_on_a_dying_buffer_runs_in_place(shape: tuple[int, ...]) -> None:
    module = parse_module(RELU_AFTER_ADD.format(s="x".join(map(str, shape))), "relu.mlir")
    x = relu_input(shape)
    y = np.full(shape, -0.0, F32)  # x + -0 is x, bit for bit (-0 + -0 = -0): the Relu sees the specials
    fast = Program.from_module(module)
    assert fast.function("f").overwritten  # the Relu writes into the Add's result
    (got,) = fast.run("f", x, y)
    use_compiled_kernels(False)
    try:
        (by_numpy,) = Program.from_module(module).run("f", x, y)
    finally:
        use_compiled_kernels(True)
    assert np.array_equal(got.view(np.uint32), by_numpy.view(np.uint32))
    assert not np.signbit(got[~np.isnan(got)]).any()  # -0 gave +0
    ref = np.maximum(x.astype(F64) + y, 0.0)
    np.testing.assert_array_equal(got.astype(F64), np.where(np.isnan(ref), np.nan, ref))


def test_small_or_dynamic_tensors_stay_on_numpy() -> None:
    assert compiled("relu", (LOAD_COMPILED_AT - 1,)) is None
    assert compiled("relu", (-1, 4096)) is None
    assert compiled("relu", (LOAD_COMPILED_AT,)) is not None


CONV_RELU = """func.func @f(%x: tensor<1x8x20x20x{t}>, %w: tensor<16x8x3x3x{t}>, %b: tensor<16x{t}>) -> tensor<1x16x20x20x{o}> {{
  %0 = ascend.Conv2D %x, %w, %b {{strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>}} : (tensor<1x8x20x20x{t}>, tensor<16x8x3x3x{t}>, tensor<16x{t}>) -> tensor<1x16x20x20x{o}>
  %1 = ascend.Relu %0 : (tensor<1x16x20x20x{o}>) -> tensor<1x16x20x20x{o}>
  func.return %1 : tensor<1x16x20x20x{o}>
}}
"""


@pytest.mark.parametrize("poison", ["none", "-inf", "nan", "overflow"])
@pytest.mark.parametrize("types", [("f32", "f32"), ("f16", "f32"), ("f16", "f16")], ids="-".join)
def test_a_convolution_that_sets_the_float_status_itself(poison: str, types: tuple[str, str]) -> None:
    """A float32 convolution result goes unchecked by the executor (its bias epilogue sets the float
    status): an inf or NaN in it sets the register even when the Relu after it hides it."""
    t, o = types
    module = parse_module(CONV_RELU.format(t=t, o=o), "conv.mlir")
    program = Program.from_module(module)
    (conv_step,) = [s for s in program.function("f").steps if s.op_type == "Conv2D"]
    assert (conv_step.checks == ()) == (o == "f32")  # an f16 result is rounded after the epilogue: checked
    dtype = np.float16 if t == "f16" else np.float32
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 20, 20)).astype(dtype)
    w = rng.standard_normal((16, 8, 3, 3)).astype(dtype)
    b = rng.standard_normal(16).astype(dtype)
    if poison == "-inf":
        b[5] = -np.inf  # channel 5 is -inf everywhere: the Relu makes it 0
    elif poison == "nan":
        x[0, 2, 7, 7] = np.nan
    elif poison == "overflow":  # finite operands, a product past the result's range (-3.6e9 is finite in f32)
        big = 6e4 if t == "f16" else 3e38
        x[0, 0, 10, 10], w[3, 0, 1, 1] = -big, big
    (y,) = program.run("f", x, w, b)
    overflows = poison != "none" and not (poison == "overflow" and types == ("f16", "f32"))
    assert program.float_status == overflows
    if poison == "-inf":
        assert np.isfinite(y).all()  # only the register shows it


def test_erf_compiled_is_the_numpy_approximation_bit_for_bit_and_close_to_libm(numpy_kernels: None) -> None:
    """float32 Erf: the compiled ufunc and numpy's evaluation of the same rational give the same bits (NaN
    stays NaN, signed zeros kept, +-inf give +-1), within 4.8e-7 of libm's double erf (7.5 float32 ulps;
    the bound test_erf allows); float64 (reference mode) is libm's erf exactly."""
    import math

    x = np.concatenate([np.linspace(-6, 6, 40001, dtype=F32), SPECIALS]).astype(F32)
    erf = OpSpec("Erf", (F32,), (F32,), (x.shape,), (x.shape,))
    slow = apply(erf, x)  # built under numpy_kernels
    use_compiled_kernels(True)
    assert compiled("erf", x.shape) is not None
    fast = apply(erf, x)
    assert np.array_equal(fast.view(np.uint32), slow.view(np.uint32))
    finite = np.isfinite(x)
    ref = np.array([math.erf(v) for v in x[finite].astype(F64)])
    assert np.abs(fast[finite].astype(F64) - ref).max() <= 4 * EPS32
    assert np.array_equal(np.isnan(fast), np.isnan(x))
    assert fast[np.isposinf(x)].tolist() == [1.0] * int(np.isposinf(x).sum())
    assert np.array_equal(np.signbit(fast[x == 0]), np.signbit(x[x == 0]))
    x64 = x[finite].astype(F64)
    exact = apply(OpSpec("Erf", (F64,), (F64,), (x64.shape,), (x64.shape,)), x64)
    assert np.array_equal(exact, ref)
