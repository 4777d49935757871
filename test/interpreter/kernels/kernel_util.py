"""Helpers of the kernel tests (test_kernels_<family>.py): float64 references, rounding, tolerances, strategies.

The references are written here from the ops' definitions (numpy in float64, naive loops for convolution and
pooling); none calls a kernel. A result in dtype D passes when it is within one ulp of the float64 reference
rounded to D (the one rounding step), or within the error float32 arithmetic may add (k * 2^-23 * scale, the
scale chosen per op), so the tolerances follow from the dtypes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ascend_mp.interpreter.kernels import FloatStatus, OpSpec, apply

F16, BF16, F32, F64 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)


EPS32 = 2.0**-23


EXAMPLES = settings(max_examples=30, deadline=None)


def run(
    op: str,
    *inputs: Any,
    out: Any = None,
    attrs: dict[str, Any] | None = None,
    out_shapes: Any = (),
    reference: bool = False,
) -> Any:
    """Build and run one kernel; `out` is the result dtype or a tuple of them (default: the first input's)."""
    arrays = [np.asarray(x) for x in inputs]
    outs = (
        tuple(np.dtype(d) for d in out)
        if isinstance(out, tuple)
        else (np.dtype(out if out is not None else arrays[0].dtype),)
    )
    spec = OpSpec(
        type=op,
        in_dtypes=tuple(a.dtype for a in arrays),
        out_dtypes=outs,
        in_shapes=tuple(a.shape for a in arrays),
        out_shapes=tuple(out_shapes),
        attrs=attrs or {},
        reference=reference,
        status=FloatStatus(),
    )
    result = apply(spec, *arrays)
    results = result if isinstance(result, tuple) else (result,)
    assert len(results) == len(outs)
    for r, d in zip(results, outs):
        assert isinstance(r, np.ndarray), f"{op} returned {type(r)}"
        assert r.dtype == d, f"{op} returned {r.dtype}, expected {d}"
    return result


def ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns as integers ordered like the floats (adjacent floats differ by 1)."""
    bits = a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize]).astype(np.int64)
    sign = 1 << (8 * a.dtype.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


FORMATS = {F16: (11, -14, 65504.0), BF16: (8, -126, float(ml_dtypes.finfo(BF16).max))}


"""precision bits, minimum normal exponent, largest finite value."""


def rne(x: Any, dtype: np.dtype) -> np.ndarray:
    """Round float64 values to `dtype` (nearest, ties to even, overflow to inf), written from
    the format's definition rather than through numpy's or ml_dtypes' conversions."""
    x = np.asarray(x, np.float64)
    if dtype not in FORMATS:
        return x.astype(dtype)
    p, emin, top = FORMATS[dtype]
    finite = np.isfinite(x) & (x != 0)
    _, e = np.frexp(np.where(finite, x, 1.0))  # |x| = m 2^e, m in [0.5, 1)
    quantum = np.ldexp(1.0, np.maximum(e - 1, emin) - (p - 1))
    r = np.where(finite, np.round(np.where(finite, x, 0.0) / quantum) * quantum, x)
    r = np.where(np.abs(r) > top, np.copysign(np.inf, x), r)
    return r.astype(dtype)


def assert_close(ours: np.ndarray, ref: np.ndarray, scale: Any = None, k: float = 8, ulps: int = 1) -> None:
    """`ours` (in its dtype) against the float64 `ref`: NaN where the reference is NaN, and each
    element within `ulps` of the correctly rounded reference or within k * 2^-23 * scale."""
    dtype = ours.dtype
    ref = np.broadcast_to(np.asarray(ref, np.float64), ours.shape)
    with np.errstate(all="ignore"):
        rounded = rne(ref, dtype)
    nan_ours, nan_ref = np.isnan(ours.astype(np.float64)), np.isnan(rounded.astype(np.float64))
    assert (nan_ours == nan_ref).all(), f"NaN pattern differs:\nours {ours}\nref  {ref}"
    ok = nan_ours | (np.abs(ordered(ours) - ordered(rounded)) <= ulps)
    if scale is not None:
        with np.errstate(all="ignore"):
            diff = np.abs(ours.astype(np.float64) - ref)
        ok |= diff <= k * EPS32 * np.broadcast_to(scale, ours.shape)
    bad = np.argwhere(~ok)
    assert bad.size == 0, (
        f"{len(bad)} elements off, first at {tuple(bad[0])}: ours {ours[tuple(bad[0])]!r}, ref {ref[tuple(bad[0])]!r}"
    )


def f64(a: Any) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


SPECIAL_BITS = {
    # zeros, smallest subnormals (6e-8), largest subnormal, smallest normal, +-1, max (65504), inf, NaN
    F16: [
        0x0000,
        0x8000,
        0x0001,
        0x8001,
        0x03FF,
        0x0400,
        0x3C00,
        0xBC00,
        0x7BFF,
        0xFBFF,
        0x7BFE,
        0x7C00,
        0xFC00,
        0x7E00,
    ],
    BF16: [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0],
}


def arrays_of(dtype: np.dtype, shape: Any, bound: float | None = None) -> st.SearchStrategy[np.ndarray]:
    """Arrays of `dtype`. Without `bound`: any value, 16-bit floats drawn as bit patterns mixed
    with the limits (65504, subnormals such as 6e-8, inf, NaN). With `bound`: finite values in
    [-bound, bound] (drawn as float32 and rounded to `dtype`)."""
    if bound is not None:
        values = hnp.arrays(
            np.float32, shape, elements=st.floats(-float(np.float32(bound)), float(np.float32(bound)), width=32)
        )
        return values if dtype == F32 else values.map(lambda a: a.astype(dtype))
    if dtype in SPECIAL_BITS:
        bits = st.one_of(st.integers(0, 0xFFFF), st.sampled_from(SPECIAL_BITS[dtype]))
        return hnp.arrays(np.uint16, shape, elements=bits).map(lambda a: a.view(dtype))
    return hnp.arrays(dtype, shape, elements=st.floats(width=32))


SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)


LOW_FLOATS = [F16, BF16, F32]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


GELU_C, GELU_A = math.sqrt(2 / math.pi), 0.044715


def gelu64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + GELU_A * x**3)))


UNARY: dict[str, tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray, np.ndarray], Any]]] = {
    # op: (float64 reference, scale of the float32 compute error)
    "Neg": (lambda x: -x, lambda x, r: 0),
    "Relu": (lambda x: np.where(np.isnan(x) | (x > 0), x, 0.0), lambda x, r: 0),
    "Square": (lambda x: x * x, lambda x, r: np.abs(r)),
    "Exp": (np.exp, lambda x, r: np.abs(r) * (1 + np.abs(x))),
    "Log": (np.log, lambda x, r: 1 + np.abs(r)),
    "Sqrt": (np.sqrt, lambda x, r: np.abs(r)),
    "Rsqrt": (lambda x: 1 / np.sqrt(x), lambda x, r: np.abs(r)),
    "Floor": (np.floor, lambda x, r: 0),
    "Tanh": (np.tanh, lambda x, r: 1),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda x, r: np.abs(r)),
    "Gelu": (gelu64, lambda x, r: 1 + np.abs(x) ** 2),
}


BINARY: dict[
    str, tuple[Callable[[np.ndarray, np.ndarray], np.ndarray], Callable[[np.ndarray, np.ndarray, np.ndarray], Any]]
] = {
    "Add": (np.add, lambda a, b, r: 0),
    "Sub": (np.subtract, lambda a, b, r: 0),
    "Mul": (np.multiply, lambda a, b, r: 0),
    "RealDiv": (np.divide, lambda a, b, r: np.abs(r)),
    "Maximum": (np.maximum, lambda a, b, r: 0),
    "Minimum": (np.minimum, lambda a, b, r: 0),
    "Pow": (np.power, lambda a, b, r: np.abs(r) * (1 + np.abs(b * np.log(np.abs(a))))),
}


def naive_conv(
    x: np.ndarray, w: np.ndarray, strides: tuple[int, int], pads: tuple[int, ...], dil: tuple[int, int], groups: int
) -> np.ndarray:
    """Direct NCHW / OIHW convolution with loops over every output element (float64)."""
    n_, c_, h_, w_ = x.shape
    o_, i_, kh_, kw_ = w.shape
    (sh, sw), (dh, dw), (pt, pb, pl, pr) = strides, dil, pads
    oh_ = (h_ + pt + pb - dh * (kh_ - 1) - 1) // sh + 1
    ow_ = (w_ + pl + pr - dw * (kw_ - 1) - 1) // sw + 1
    y = np.zeros((n_, o_, oh_, ow_))
    per_group = o_ // groups
    for n, o, oh, ow in itertools.product(range(n_), range(o_), range(oh_), range(ow_)):
        g = o // per_group
        acc = 0.0
        for i, a, b in itertools.product(range(i_), range(kh_), range(kw_)):
            h, v = oh * sh + a * dh - pt, ow * sw + b * dw - pl
            if 0 <= h < h_ and 0 <= v < w_:
                acc += x[n, g * i_ + i, h, v] * w[o, i, a, b]
        y[n, o, oh, ow] = acc
    return y


@st.composite
def conv_cases(draw: st.DrawFn, depthwise: bool = False) -> dict[str, Any]:
    groups = 1 if depthwise else draw(st.sampled_from([1, 1, 2]))
    c = draw(st.integers(1, 3)) * groups
    o = draw(st.integers(1, 2)) * groups
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = tuple(draw(st.lists(st.integers(0, 2), min_size=4, max_size=4)))
    h = draw(st.integers(dh * (kh - 1) + 1, 6))
    w = draw(st.integers(dw * (kw - 1) + 1, 6))
    n = draw(st.integers(1, 2))
    return {
        "n": n,
        "c": c,
        "o": o,
        "h": h,
        "w": w,
        "k": (kh, kw),
        "s": (sh, sw),
        "d": (dh, dw),
        "pads": pads,
        "groups": groups,
        "fmt": draw(st.sampled_from(["NCHW", "NHWC"])),
        "seed": draw(st.integers(0, 2**16)),
    }


def conv_attrs(case: dict[str, Any]) -> dict[str, Any]:
    (sh, sw), (dh, dw) = case["s"], case["d"]
    nchw = case["fmt"] == "NCHW"
    return {
        "strides": (1, 1, sh, sw) if nchw else (1, sh, sw, 1),
        "dilations": (1, 1, dh, dw) if nchw else (1, dh, dw, 1),
        "pads": case["pads"],
        "groups": case["groups"],
        "data_format": case["fmt"],
    }


def to_fmt(x: np.ndarray, fmt: str) -> np.ndarray:
    return np.ascontiguousarray(x if fmt == "NCHW" else x.transpose(0, 2, 3, 1))


def filter_to_fmt(w: np.ndarray, fmt: str) -> np.ndarray:
    return np.ascontiguousarray(w if fmt == "NCHW" else w.transpose(2, 3, 1, 0))


def frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy: what a Const op hands its users."""
    a = np.array(a)
    a.setflags(write=False)
    return a


def tf_pads(size: int, k: int, s: int, same: bool) -> tuple[int, int, int]:
    if not same:
        return (size - k) // s + 1, 0, 0
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


def naive_pool(x: np.ndarray, k: tuple[int, int], s: tuple[int, int], same: bool, kind: str) -> np.ndarray:
    """NCHW pooling with loops over output pixels; windows cover the valid (unpadded) elements."""
    n_, c_, h_, w_ = x.shape
    oh_, pt, _ = tf_pads(h_, k[0], s[0], same)
    ow_, pl, _ = tf_pads(w_, k[1], s[1], same)
    y = np.zeros((n_, c_, oh_, ow_))
    for oh, ow in itertools.product(range(oh_), range(ow_)):
        h0, w0 = oh * s[0] - pt, ow * s[1] - pl
        win = x[:, :, max(h0, 0) : h0 + k[0], max(w0, 0) : w0 + k[1]]
        y[:, :, oh, ow] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y


@st.composite
def pool_cases(draw: st.DrawFn) -> dict[str, Any]:
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    same = draw(st.booleans())
    h, w = draw(st.integers(k[0], 7)), draw(st.integers(k[1], 7))
    fmt = draw(st.sampled_from(["NCHW", "NHWC"]))
    nchw = fmt == "NCHW"
    attrs = {
        "ksize": (1, 1, *k) if nchw else (1, *k, 1),
        "strides": (1, 1, *s) if nchw else (1, *s, 1),
        "padding": "SAME" if same else "VALID",
        "data_format": fmt,
    }
    return {
        "k": k,
        "s": s,
        "same": same,
        "shape": (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w),
        "fmt": fmt,
        "attrs": attrs,
        "seed": draw(st.integers(0, 2**16)),
    }


def bn_reference(
    x: np.ndarray, scale: np.ndarray, offset: np.ndarray, eps: float, axes: tuple[int, ...], view: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean = x.mean(axis=axes)
    var = ((x - mean.reshape(view)) ** 2).mean(axis=axes)
    y = (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + eps) * scale.reshape(view) + offset.reshape(view)
    return y, mean, var


def f16_rounding_cases() -> np.ndarray:
    """float32 inputs around every float16 value: the value, the ties between neighbours
    and one float32 ulp either side of them, plus random bit patterns and the limits."""
    h = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(F16).astype(np.float64)
    h = np.sort(h[np.isfinite(h)])
    ties = (h[:-1] + h[1:]) / 2
    top = np.array([65504.0 + 16.0, 65504.0 + 15.99, 2.0**16, 1e30, 3.4e38])  # the tie above 65504 overflows
    values = np.concatenate([h, ties, top]).astype(F32)
    near = [np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(-np.inf))]
    random = rng(11).integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 2.0**-25, -(2.0**-25), 2.0**-26], F32)
    return np.concatenate([values, -values, *near, random, specials])


def onnx_pool_out(size: int, k: int, s: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """ONNX's output size (floor or ceil of (size + pads - k) / s, plus 1), with the rule that
    the last window starts inside the input or its leading pad (onnxruntime, PyTorch)."""
    q = (size + lo + hi - k) / s
    out = (math.ceil(q) if ceil_mode else math.floor(q)) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    return out


def naive_pad_pool(
    x: np.ndarray,
    k: tuple[int, int],
    s: tuple[int, int],
    pads: tuple[int, int, int, int],
    ceil_mode: bool,
    kind: str,
    exclusive: bool = True,
) -> np.ndarray:
    """NCHW pooling with explicit pads [top, bottom, left, right], looping over output pixels:
    max over the input elements of a window; the average divides by its input elements
    (exclusive) or by its elements inside the padded input."""
    n_, c_, h_, w_ = x.shape
    pt, pb, pl, pr = pads
    oh_ = onnx_pool_out(h_, k[0], s[0], pt, pb, ceil_mode)
    ow_ = onnx_pool_out(w_, k[1], s[1], pl, pr, ceil_mode)
    y = np.zeros((n_, c_, oh_, ow_))
    for oh, ow in itertools.product(range(oh_), range(ow_)):
        h0, w0 = oh * s[0] - pt, ow * s[1] - pl
        h1, w1 = h0 + k[0], w0 + k[1]
        win = x[:, :, max(h0, 0) : min(h1, h_), max(w0, 0) : min(w1, w_)]
        if kind == "max":
            y[:, :, oh, ow] = win.max(axis=(2, 3))
        else:
            count = (
                win.shape[2] * win.shape[3]
                if exclusive
                else (min(h1, h_ + pb) - max(h0, -pt)) * (min(w1, w_ + pr) - max(w0, -pl))
            )
            y[:, :, oh, ow] = win.sum(axis=(2, 3)) / count
    return y


@st.composite
def pad_pool_cases(draw: st.DrawFn) -> dict[str, Any]:
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pads = (
        draw(st.integers(0, k[0] - 1)),
        draw(st.integers(0, k[0] - 1)),
        draw(st.integers(0, k[1] - 1)),
        draw(st.integers(0, k[1] - 1)),
    )
    h, w = (
        draw(st.integers(max(k[0] - pads[0] - pads[1], 1), 8)),
        draw(st.integers(max(k[1] - pads[2] - pads[3], 1), 8)),
    )
    fmt = draw(st.sampled_from(["NCHW", "NHWC"]))
    nchw = fmt == "NCHW"
    ceil_mode, exclusive = draw(st.booleans()), draw(st.booleans())
    attrs = {
        "ksize": (1, 1, *k) if nchw else (1, *k, 1),
        "strides": (1, 1, *s) if nchw else (1, *s, 1),
        "pads": pads,
        "ceil_mode": ceil_mode,
        "exclusive": exclusive,
        "data_format": fmt,
    }
    return {
        "k": k,
        "s": s,
        "pads": pads,
        "ceil": ceil_mode,
        "exclusive": exclusive,
        "fmt": fmt,
        "attrs": attrs,
        "shape": (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w),
        "seed": draw(st.integers(0, 2**16)),
    }


def broadcast_index(index: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The element of an operand of `shape` that NumPy broadcasting pairs with result `index`."""
    tail = index[len(index) - len(shape) :] if shape else ()
    return tuple(i if n > 1 else 0 for i, n in zip(tail, shape))


COMPARE = {"Less": lambda a, b: a < b, "Equal": lambda a, b: a == b, "Greater": lambda a, b: a > b}
