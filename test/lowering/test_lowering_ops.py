"""Every lowered op family, compiled by IREE for the CPU (one module per family, one function per case)
and run in fp32 against numpy float64 formulas written here; then the same modules under force_fp16
within twice the interpreter's error against float64."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from lowering_util import ENVELOPE, FLOOR, FP32_TOL, Array, interpret, iree_run, rel_err, with_mode
from onnx_util import resize64

from ascend_mp.ir import make_context, parse_module

F = np.float64


@dataclass(frozen=True)
class Case:
    name: str
    args: list[tuple[tuple[int, ...], str]]  # (shape, dtype) of each argument
    body: str  # ops computing %r from %a0, %a1, ...
    result: str  # the result type
    ref: Callable[..., Array]
    positive: bool = False  # inputs drawn from (0.5, 2.5) (Log, Sqrt, Pow)


def _t(shape: tuple[int, ...], dtype: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{dtype}>"


def _module(cases: list[Case]) -> str:
    funcs = []
    for c in cases:
        params = ", ".join(f"%a{i}: {_t(s, d)}" for i, (s, d) in enumerate(c.args))
        funcs.append(f"func.func @{c.name}({params}) -> {c.result} {{\n{c.body}\n  func.return %r : {c.result}\n}}")
    return "\n".join(funcs)


def _inputs(c: Case, seed: int) -> list[Array]:
    rng = np.random.default_rng(seed)
    out: list[Array] = []
    for s, d in c.args:
        if d.startswith("i"):
            out.append(rng.integers(-3, 3, s).astype(np.int32 if d == "i32" else np.int64))
        elif c.positive:
            out.append(rng.uniform(0.5, 2.5, s).astype(np.float32))
        else:
            out.append(rng.standard_normal(s).astype(np.float32))
    return out


def _un(name: str, op: str, ref: Callable[[Array], Array], positive: bool = False, attrs: str = "") -> Case:
    return Case(
        name,
        [((3, 4), "f32")],
        f"  %r = ascend.{op} %a0 {attrs}: (tensor<3x4xf32>) -> tensor<3x4xf32>",
        "tensor<3x4xf32>",
        ref,
        positive,
    )


def _bin(name: str, op: str, ref: Callable[[Array, Array], Array], positive: bool = False) -> Case:
    return Case(
        name,
        [((3, 4), "f32"), ((4,), "f32")],
        f"  %r = ascend.{op} %a0, %a1 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>",
        "tensor<3x4xf32>",
        ref,
        positive,
    )


_erf = np.vectorize(math.erf)
GELU_C = math.sqrt(2 / math.pi)

ELEMENTWISE = [
    _bin("add", "Add", np.add),
    _bin("sub", "Sub", np.subtract),
    _bin("mul", "Mul", np.multiply),
    _bin("div", "RealDiv", np.divide, positive=True),
    _bin("maximum", "Maximum", np.maximum),
    _bin("minimum", "Minimum", np.minimum),
    _bin("pow", "Pow", np.power, positive=True),
    _un("neg", "Neg", np.negative),
    _un("square", "Square", np.square),
    _un("relu", "Relu", lambda x: np.maximum(x, 0)),
    _un("relu6", "Relu6", lambda x: np.clip(x, 0, 6)),
    _un("leaky", "LeakyRelu", lambda x: np.where(x > 0, x, 0.1 * x), attrs="{negative_slope = 1.000000e-01 : f32} "),
    _un(
        "hard_sigmoid",
        "HardSigmoid",
        lambda x: np.clip(0.2 * x + 0.5, 0, 1),
        attrs="{alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} ",
    ),
    _un("erf", "Erf", _erf),
    _un("gelu", "Gelu", lambda x: 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x**3)))),
    _un("sigmoid", "Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    _un("tanh", "Tanh", np.tanh),
    _un("exp", "Exp", np.exp),
    _un("log", "Log", np.log, positive=True),
    _un("sqrt", "Sqrt", np.sqrt, positive=True),
    _un("rsqrt", "Rsqrt", lambda x: 1 / np.sqrt(x), positive=True),
    _un("floor", "Floor", np.floor),
    Case(
        "bias_add_nchw",
        [((2, 3, 2, 2), "f32"), ((3,), "f32")],
        "  %r = ascend.BiasAdd %a0, %a1 : (tensor<2x3x2x2xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>",
        "tensor<2x3x2x2xf32>",
        lambda x, b: x + b.reshape(1, 3, 1, 1),
    ),
    Case(
        "select_greater",
        [((3, 4), "f32"), ((3, 4), "f32")],
        "  %c = ascend.Greater %a0, %a1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>\n"
        "  %d = ascend.Less %a0, %a1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>\n"
        "  %e = ascend.LogicalOr %c, %d : (tensor<3x4xi1>, tensor<3x4xi1>) -> tensor<3x4xi1>\n"
        "  %s = ascend.SelectV2 %c, %a0, %a1 : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>\n"
        "  %z = ascend.Neg %s : (tensor<3x4xf32>) -> tensor<3x4xf32>\n"
        "  %r = ascend.SelectV2 %e, %s, %z : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>",
        "tensor<3x4xf32>",
        lambda a, b: np.where((a > b) | (a < b), np.maximum(a, b), -np.maximum(a, b)),
    ),
    Case(
        "clip",
        [((3, 4), "f32"), ((), "f32"), ((), "f32")],
        "  %r = ascend.ClipByValue %a0, %a1, %a2 : (tensor<3x4xf32>, tensor<f32>, tensor<f32>) -> tensor<3x4xf32>",
        "tensor<3x4xf32>",
        lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    ),
]


def _conv64(x: Array, w: Array, stride: int, pad: int, dil: int = 1, groups: int = 1) -> Array:
    """NCHW x OIHW, float64, by window taps."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                tap = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * dil : i * dil + stride * (oh - 1) + 1 : stride,
                    j * dil : j * dil + stride * (ow - 1) + 1 : stride,
                ]
                y[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", tap, w[g * og : (g + 1) * og, :, i, j])
    return y


def _conv_grads64(
    x_shape: tuple[int, ...], w: Array | None, dy: Array, x: Array | None, stride: int, pad: int, dil: int
) -> Array:
    """The input gradient (x None) or the filter gradient (w None) of the NCHW convolution, by taps."""
    n, c, h, wd = x_shape
    _, _, oh, ow = dy.shape
    if x is None:
        assert w is not None
        dxp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
        for i in range(w.shape[2]):
            for j in range(w.shape[3]):
                dxp[
                    :,
                    :,
                    i * dil : i * dil + stride * (oh - 1) + 1 : stride,
                    j * dil : j * dil + stride * (ow - 1) + 1 : stride,
                ] += np.einsum("nohw,oc->nchw", dy, w[:, :, i, j])
        return dxp[:, :, pad : pad + h, pad : pad + wd]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = 3
    dw = np.zeros((dy.shape[1], c, k, k))
    for i in range(k):
        for j in range(k):
            tap = xp[
                :,
                :,
                i * dil : i * dil + stride * (oh - 1) + 1 : stride,
                j * dil : j * dil + stride * (ow - 1) + 1 : stride,
            ]
            dw[:, :, i, j] = np.einsum("nohw,nchw->oc", dy, tap)
    return dw


CUBE = [
    Case(
        "conv_backprop_input",
        [((4, 3, 3, 3), "f32"), ((2, 4, 4, 4), "f32")],
        "  %r = ascend.Conv2DBackpropInput %a0, %a1 {input_size = array<i64: 2, 3, 9, 9>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1, 2, 2>} : (tensor<4x3x3x3xf32>, tensor<2x4x4x4xf32>) -> tensor<2x3x9x9xf32>",
        "tensor<2x3x9x9xf32>",
        lambda w, dy: _conv_grads64((2, 3, 9, 9), w, dy, None, 2, 1, 2),
    ),
    Case(
        "conv_backprop_filter",
        [((2, 3, 9, 9), "f32"), ((2, 4, 4, 4), "f32")],
        "  %r = ascend.Conv2DBackpropFilter %a0, %a1 {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1, 2, 2>} : (tensor<2x3x9x9xf32>, tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32>",
        "tensor<4x3x3x3xf32>",
        lambda x, dy: _conv_grads64(x.shape, None, dy, x, 2, 1, 2),
    ),
    Case(
        "matmul_t_bias",
        [((5, 4), "f32"), ((3, 5), "f32"), ((3,), "f32")],
        "  %r = ascend.MatMulV2 %a0, %a1, %a2 {transpose_x1 = true, transpose_x2 = true} : (tensor<5x4xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<4x3xf32>",
        "tensor<4x3xf32>",
        lambda a, b, c: a.T @ b.T + c,
    ),
    Case(
        "batch_matmul_broadcast",
        [((2, 3, 4), "f32"), ((4, 5), "f32"), ((5,), "f32")],
        "  %r = ascend.BatchMatMulV2 %a0, %a1, %a2 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>",
        "tensor<2x3x5xf32>",
        lambda a, b, c: a @ b + c,
    ),
    Case(
        "batch_matmul_adj",
        [((2, 4, 3), "f32"), ((1, 5, 4), "f32")],
        "  %r = ascend.BatchMatMul %a0, %a1 {adj_x1 = true, adj_x2 = true} : (tensor<2x4x3xf32>, tensor<1x5x4xf32>) -> tensor<2x3x5xf32>",
        "tensor<2x3x5xf32>",
        lambda a, b: a.swapaxes(-1, -2) @ b.swapaxes(-1, -2),
    ),
    Case(
        "conv_stride_dilation_bias",
        [((2, 3, 9, 9), "f32"), ((4, 3, 3, 3), "f32"), ((4,), "f32")],
        "  %r = ascend.Conv2D %a0, %a1, %a2 {strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1, 2, 2>} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>",
        "tensor<2x4x4x4xf32>",
        lambda x, w, b: _conv64(x, w, 2, 1, 2) + b.reshape(1, -1, 1, 1),
    ),
    Case(
        "conv_grouped",
        [((1, 4, 5, 5), "f32"), ((6, 2, 3, 3), "f32")],
        "  %r = ascend.Conv2D %a0, %a1 {strides = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>",
        "tensor<1x6x3x3xf32>",
        lambda x, w: _conv64(x, w, 1, 0, groups=2),
    ),
    Case(
        "conv_nhwc",
        [((1, 5, 5, 3), "f32"), ((3, 3, 3, 4), "f32")],
        '  %r = ascend.Conv2D %a0, %a1 {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, data_format = "NHWC"} : (tensor<1x5x5x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x5x5x4xf32>',
        "tensor<1x5x5x4xf32>",
        lambda x, w: _conv64(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 1, 1).transpose(0, 2, 3, 1),
    ),
    Case(
        "depthwise_multiplier",
        [((1, 3, 6, 6), "f32"), ((3, 3, 3, 2), "f32"), ((6,), "f32")],
        "  %r = ascend.DepthwiseConv2D %a0, %a1, %a2 {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<3x3x3x2xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>",
        "tensor<1x6x6x6xf32>",
        lambda x, w, b: (
            _conv64(x, w.transpose(2, 3, 0, 1).reshape(6, 1, 3, 3), 1, 1, groups=3) + b.reshape(1, -1, 1, 1)
        ),
    ),
]


def _softmax(x: Array, axis: int) -> Array:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _pool64(
    x: Array, k: int, s: int, pads: tuple[int, int, int, int], fill: float, reduce: str, divisor: str = "valid"
) -> Array:
    n, c, h, w = x.shape
    pt, pb, pl, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), ((pt, pb), (pl, pr)))
    oh, ow = (h + pt + pb - k) // s + 1, (w + pl + pr - k) // s + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s : i * s + k, j * s : j * s + k]
            if reduce == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                count = ones[i * s : i * s + k, j * s : j * s + k].sum() if divisor == "valid" else k * k
                y[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return y


def _ln(x: Array, g: Array, b: Array) -> Array:
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _ln_grads64(dy: Array, x: Array, gamma: Array) -> Array:
    """LayerNorm's input gradient by central differences of sum(dy * LayerNorm(x)) in float64 (eps 1e-5)."""

    def f(z: Array) -> float:
        return float((dy * _ln(z, gamma, 0.0 * gamma)).sum())

    dx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-5
        dx[i] = (f(x + e) - f(x - e)) / 2e-5
    return dx


def _pool_grad64(x: Array, g: Array, k: int, s: int, pads: tuple[int, int, int, int], kind: str) -> Array:
    """Max/avg pooling's input gradient by windows: the first maximum (row-major) or the valid pixels share."""
    n, c, h, w = x.shape
    pt, pb, pl, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf)
    valid = np.pad(np.ones((h, w)), ((pt, pb), (pl, pr)))
    dxp = np.zeros(xp.shape)
    for i in range(g.shape[2]):
        for j in range(g.shape[3]):
            win = xp[:, :, i * s : i * s + k, j * s : j * s + k].reshape(n, c, -1)
            if kind == "max":
                first = win.argmax(axis=-1)
                for a in range(k * k):
                    dxp[:, :, i * s + a // k, j * s + a % k] += np.where(first == a, g[:, :, i, j], 0.0)
            else:
                cnt = valid[i * s : i * s + k, j * s : j * s + k]
                dxp[:, :, i * s : i * s + k, j * s : j * s + k] += g[:, :, i, j][:, :, None, None] * cnt / cnt.sum()
    return dxp[:, :, pt : pt + h, pl : pl + w]


_BN_CHAIN = (
    "  %s, %q = ascend.BNTrainingReduce %a0 : (tensor<2x3x2x2xf32>) -> (tensor<3xf32>, tensor<3xf32>)\n"
    "  %y, %mo, %vo, %bm, %bv = ascend.BNTrainingUpdate %a0, %s, %q, %a1, %a2, %a3, %a4 {epsilon = 1.0e-03 : f32, factor = 2.500000e-01 : f32}"
    " : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)"
    " -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)\n"
)
_BN_ARGS = [((2, 3, 2, 2), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32"), ((2, 3, 2, 2), "f32")]


def _bn64(x: Array, scale: Array, offset: Array) -> Array:
    m = x.mean(axis=(0, 2, 3), keepdims=True)
    v = x.var(axis=(0, 2, 3), keepdims=True)
    return (x - m) / np.sqrt(v + 1e-3) * scale.reshape(1, -1, 1, 1) + offset.reshape(1, -1, 1, 1)


def _bn_dx64(x: Array, scale: Array, offset: Array, dy: Array) -> Array:
    """The input gradient of training batch norm by central differences of sum(dy * BN(x)) in float64."""
    dx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-5
        dx[i] = ((dy * _bn64(x + e, scale, offset)).sum() - (dy * _bn64(x - e, scale, offset)).sum()) / 2e-5
    return dx


def _in64(x: Array, g: Array, b: Array) -> Array:
    m = x.mean(axis=(2, 3), keepdims=True)
    v = ((x - m) ** 2).mean(axis=(2, 3), keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1)


def _nearest64(x: Array, size: tuple[int, int]) -> Array:
    """Nearest, asymmetric coordinates, floor: y[o] = x[floor(o * in / out)]."""
    h, w = x.shape[2:]
    rows = [o * h // size[0] for o in range(size[0])]
    cols = [o * w // size[1] for o in range(size[1])]
    return x[:, :, rows][:, :, :, cols]


REDUCE = [
    Case(
        "bn_training_y",
        _BN_ARGS,
        _BN_CHAIN + "  %r = ascend.Add %y, %a5 : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>",
        "tensor<2x3x2x2xf32>",
        lambda x, sc, off, m, v, dy: _bn64(x, sc, off) + dy,
    ),
    Case(
        "bn_training_running_variance",
        _BN_ARGS,
        _BN_CHAIN + "  %r = ascend.Add %vo, %mo : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>",
        "tensor<3xf32>",
        lambda x, sc, off, m, v, dy: (
            v * 0.75 + x.var(axis=(0, 2, 3), ddof=1) * 0.25 + m * 0.75 + x.mean(axis=(0, 2, 3)) * 0.25
        ),
    ),
    Case(
        "bn_training_grads_dx",
        _BN_ARGS,
        _BN_CHAIN
        + "  %ds, %do = ascend.BNTrainingUpdateGrad %a5, %a0, %bm, %bv {epsilon = 1.0e-03 : f32} : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)\n"
        "  %r = ascend.BNTrainingReduceGrad %a5, %a0, %ds, %do, %a1, %bm, %bv {epsilon = 1.0e-03 : f32} : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>",
        "tensor<2x3x2x2xf32>",
        lambda x, sc, off, m, v, dy: _bn_dx64(x, sc, off, dy),
    ),
    Case(
        "layer_norm_grad_dx",
        [((4, 8), "f32"), ((4, 8), "f32"), ((8,), "f32")],
        "  %m = ascend.ReduceMean %a1 {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>\n"
        "  %d = ascend.Sub %a1, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>\n"
        "  %d2 = ascend.Mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n"
        "  %v = ascend.ReduceMean %d2 {axes = array<i64: 1>, keep_dims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>\n"
        "  %r, %dg, %db = ascend.LayerNormGrad %a0, %a1, %v, %m, %a2 {epsilon = 1.0e-05 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)",
        "tensor<4x8xf32>",
        _ln_grads64,
    ),
    Case(
        "max_pool_grad_same",
        [((1, 2, 5, 5), "f32"), ((1, 2, 3, 3), "f32")],
        '  %p = ascend.MaxPool %a0 {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>\n'
        '  %r = ascend.MaxPoolGrad %a0, %p, %a1 {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32>',
        "tensor<1x2x5x5xf32>",
        lambda x, g: _pool_grad64(x, g, 3, 2, (1, 1, 1, 1), "max"),
    ),
    Case(
        "max_pool_grad_ties",
        [((1, 1, 4, 4), "f32"), ((1, 1, 2, 2), "f32")],
        "  %z = ascend.Floor %a0 : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>\n"
        "  %p = ascend.MaxPool %z {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>\n"
        "  %r = ascend.MaxPoolGrad %z, %p, %a1 {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>",
        "tensor<1x1x4x4xf32>",
        lambda x, g: _pool_grad64(np.floor(x), g, 2, 2, (0, 0, 0, 0), "max"),
    ),
    Case(
        "avg_pool_grad_same",
        [((1, 2, 3, 3), "f32")],
        '  %r = ascend.AvgPoolGrad %a0 {orig_input_shape = array<i64: 1, 2, 5, 5>, ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32>',
        "tensor<1x2x5x5xf32>",
        lambda g: _pool_grad64(np.zeros((1, 2, 5, 5)), g, 3, 2, (1, 1, 1, 1), "avg"),
    ),
    Case(
        "reduce_sum",
        [((3, 4, 5), "f32")],
        "  %r = ascend.ReduceSum %a0 {axes = array<i64: 0, 2>} : (tensor<3x4x5xf32>) -> tensor<4xf32>",
        "tensor<4xf32>",
        lambda x: x.sum(axis=(0, 2)),
    ),
    Case(
        "reduce_mean",
        [((3, 4, 5), "f32")],
        "  %r = ascend.ReduceMean %a0 {axes = array<i64: -1>, keep_dims = true} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>",
        "tensor<3x4x1xf32>",
        lambda x: x.mean(axis=-1, keepdims=True),
    ),
    Case(
        "reduce_max_all",
        [((3, 4), "f32")],
        "  %r = ascend.ReduceMax %a0 : (tensor<3x4xf32>) -> tensor<f32>",
        "tensor<f32>",
        lambda x: x.max(),
    ),
    Case(
        "softmax_axis1",
        [((2, 5, 3), "f32")],
        "  %r = ascend.SoftmaxV2 %a0 {axes = array<i64: 1>} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>",
        "tensor<2x5x3xf32>",
        lambda x: _softmax(x, 1),
    ),
    Case(
        "log_softmax",
        [((2, 5), "f32")],
        "  %r = ascend.LogSoftmaxV2 %a0 : (tensor<2x5xf32>) -> tensor<2x5xf32>",
        "tensor<2x5xf32>",
        lambda x: np.log(_softmax(x, -1)),
    ),
    Case(
        "max_pool_same",
        [((1, 2, 5, 5), "f32")],
        '  %r = ascend.MaxPool %a0 {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>',
        "tensor<1x2x3x3xf32>",
        lambda x: _pool64(x, 3, 2, (1, 1, 1, 1), -np.inf, "max"),
    ),
    Case(
        "avg_pool_same",
        [((1, 2, 5, 5), "f32")],
        '  %r = ascend.AvgPool %a0 {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, padding = "SAME"} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>',
        "tensor<1x2x3x3xf32>",
        lambda x: _pool64(x, 3, 2, (1, 1, 1, 1), 0.0, "avg"),
    ),
    Case(
        "avg_pool_v2_inclusive",
        [((1, 2, 6, 6), "f32")],
        "  %r = ascend.AvgPoolV2 %a0 {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, exclusive = false} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>",
        "tensor<1x2x6x6xf32>",
        lambda x: _pool64(x, 3, 1, (1, 1, 1, 1), 0.0, "avg", divisor="all"),
    ),
    Case(
        "max_pool_v3",
        [((1, 2, 6, 6), "f32")],
        "  %r = ascend.MaxPoolV3 %a0 {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>",
        "tensor<1x2x3x3xf32>",
        lambda x: _pool64(x, 3, 2, (1, 1, 1, 1), -np.inf, "max"),
    ),
    Case(
        "bn_infer",
        [((2, 3, 2, 2), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32")],
        "  %v = ascend.Mul %a4, %a4 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
        "  %r = ascend.BNInfer %a0, %a1, %a2, %a3, %v {epsilon = 1.0e-03 : f32} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>",
        "tensor<2x3x2x2xf32>",
        lambda x, s, o, m, v: (
            (x - m.reshape(1, -1, 1, 1)) / np.sqrt(v.reshape(1, -1, 1, 1) ** 2 + 1e-3) * s.reshape(1, -1, 1, 1)
            + o.reshape(1, -1, 1, 1)
        ),
    ),
    Case(
        "layer_norm",
        [((4, 8), "f32"), ((8,), "f32"), ((8,), "f32")],
        "  %r, %m, %v = ascend.LayerNorm %a0, %a1, %a2 {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)",
        "tensor<4x8xf32>",
        _ln,
    ),
    Case(
        "argmax",
        [((3, 5), "f32")],
        "  %r = ascend.ArgMaxV2 %a0 {dimension = 1 : i64} : (tensor<3x5xf32>) -> tensor<3xi32>",
        "tensor<3xi32>",
        lambda x: np.argmax(x, axis=1),
    ),
    Case(
        "batch_norm_training_y",
        [((2, 3, 2, 2), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32")],
        "  %r, %bm, %bv = ascend.BatchNorm %a0, %a1, %a2, %a3, %a4 {epsilon = 1.0e-03 : f32} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)",
        "tensor<2x3x2x2xf32>",
        lambda x, s, o, m, v: (
            (x - x.mean(axis=(0, 2, 3), keepdims=True))
            / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True) + 1e-3)
            * s.reshape(1, -1, 1, 1)
            + o.reshape(1, -1, 1, 1)
        ),
    ),
    Case(
        "batch_norm_training_variance",
        [((2, 3, 2, 2), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32"), ((3,), "f32")],
        "  %y, %bm, %r = ascend.BatchNorm %a0, %a1, %a2, %a3, %a4 : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)",
        "tensor<3xf32>",
        lambda x, s, o, m, v: x.var(axis=(0, 2, 3), ddof=1),
    ),
    Case(
        "instance_norm",
        [((2, 3, 2, 3), "f32"), ((3,), "f32"), ((3,), "f32")],
        "  %r, %m, %v = ascend.InstanceNorm %a0, %a1, %a2 {epsilon = 1.000000e-05 : f32} : (tensor<2x3x2x3xf32>, tensor<3xf32>, tensor<3xf32>)"
        " -> (tensor<2x3x2x3xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)",
        "tensor<2x3x2x3xf32>",
        lambda x, g, b: _in64(x, g, b),
    ),
    Case(
        "cumsum",
        [((3, 5), "f32")],
        "  %r = ascend.CumsumD %a0 {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>",
        "tensor<3x5xf32>",
        lambda x: np.cumsum(x, axis=1),
    ),
    Case(
        "cumsum_exclusive_reverse",
        [((4, 3), "f32")],
        "  %r = ascend.CumsumD %a0 {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<4x3xf32>) -> tensor<4x3xf32>",
        "tensor<4x3xf32>",
        lambda x: np.flip(np.cumsum(np.flip(x, 0), axis=0), 0) - x,
    ),
    Case(
        "reduce_min",
        [((3, 4), "f32")],
        "  %r = ascend.ReduceMin %a0 {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>",
        "tensor<3xf32>",
        lambda x: x.min(axis=1),
    ),
    Case(
        "reduce_prod",
        [((3, 4), "f32")],
        "  %r = ascend.ReduceProd %a0 {axes = array<i64: 0>, keep_dims = true} : (tensor<3x4xf32>) -> tensor<1x4xf32>",
        "tensor<1x4xf32>",
        lambda x: x.prod(axis=0, keepdims=True),
    ),
]

SHAPE = [
    Case(
        "reshape",
        [((2, 3, 4), "f32")],
        "  %r = ascend.Reshape %a0 : (tensor<2x3x4xf32>) -> tensor<4x6xf32>",
        "tensor<4x6xf32>",
        lambda x: x.reshape(4, 6),
    ),
    Case(
        "transpose",
        [((2, 3, 4), "f32")],
        "  %r = ascend.Transpose %a0 {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>",
        "tensor<4x2x3xf32>",
        lambda x: x.transpose(2, 0, 1),
    ),
    Case(
        "concat",
        [((2, 3), "f32"), ((2, 2), "f32")],
        "  %r = ascend.ConcatV2D %a0, %a1, %a0 {concat_dim = -1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x8xf32>",
        "tensor<2x8xf32>",
        lambda a, b: np.concatenate([a, b, a], axis=-1),
    ),
    Case(
        "gather",
        [((5, 3), "f32"), ((2, 2), "i32")],
        "  %r = ascend.GatherV2D %a0, %a1 {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi32>) -> tensor<2x2x3xf32>",
        "tensor<2x2x3xf32>",
        lambda x, i: np.take(x, i, axis=0),
    ),
    Case(
        "strided_slice",
        [((4, 8), "f32")],
        "  %r = ascend.StridedSliceD %a0 {begin = array<i64: 0, 1>, end = array<i64: 4, 7>, strides = array<i64: 1, 2>, begin_mask = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x3xf32>",
        "tensor<4x3xf32>",
        lambda x: x[:, 1:7:2],
    ),
    Case(
        "broadcast_to",
        [((3, 1), "f32")],
        "  %r = ascend.BroadcastToD %a0 {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>",
        "tensor<2x3x4xf32>",
        lambda x: np.broadcast_to(x, (2, 3, 4)),
    ),
    Case(
        "one_hot",
        [((2, 4), "i32"), ((), "f32"), ((), "f32")],
        "  %r = ascend.OneHot %a0, %a1, %a2 {depth = 3 : i64, axis = 1 : i64} : (tensor<2x4xi32>, tensor<f32>, tensor<f32>) -> tensor<2x3x4xf32>",
        "tensor<2x3x4xf32>",
        lambda i, on, off: np.where(i[:, None, :] == np.arange(3)[None, :, None], on, off),
    ),
    Case(
        "tile",
        [((3, 4), "f32")],
        "  %r = ascend.TileD %a0 {multiples = array<i64: 2, 3>} : (tensor<3x4xf32>) -> tensor<6x12xf32>",
        "tensor<6x12xf32>",
        lambda x: np.tile(x, (2, 3)),
    ),
    Case(
        "casts_const",
        [((3, 4), "f32")],
        "  %h = ascend.Cast %a0 : (tensor<3x4xf32>) -> tensor<3x4xf16>\n"
        "  %i = ascend.Cast %a0 : (tensor<3x4xf32>) -> tensor<3x4xi32>\n"
        "  %f = ascend.Cast %i : (tensor<3x4xi32>) -> tensor<3x4xf32>\n"
        "  %g = ascend.Cast %h : (tensor<3x4xf16>) -> tensor<3x4xf32>\n"
        "  %c = ascend.Const dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>\n"
        "  %s = ascend.Add %f, %g : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>\n"
        "  %r = ascend.Mul %s, %c : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>",
        "tensor<3x4xf32>",
        lambda x: (np.trunc(x) + x.astype(np.float16)) * np.array([1.0, 2.0, 3.0, 4.0]),
    ),
    Case(
        "scatter_nd",
        [((4, 3), "f32"), ((2, 3), "f32")],
        "  %i = ascend.Const dense<[[3], [-4]]> : tensor<2x1xi32>\n"
        "  %r = ascend.ScatterNdUpdate %a0, %i, %a1 : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
        "tensor<4x3xf32>",
        lambda x, u: np.concatenate([u[1:2], x[1:3], u[0:1]]),
    ),
    Case(
        "scatter_nd_elements",
        [((2, 3), "f32"), ((2,), "f32")],
        "  %i = ascend.Const dense<[[0, 2], [1, 0]]> : tensor<2x2xi64>\n"
        "  %r = ascend.ScatterNdUpdate %a0, %i, %a1 : (tensor<2x3xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<2x3xf32>",
        "tensor<2x3xf32>",
        lambda x, u: np.array([[x[0, 0], x[0, 1], u[0]], [u[1], x[1, 1], x[1, 2]]]),
    ),
    Case(
        "segment_sum",
        [((2, 3, 2), "f32")],
        "  %i = ascend.Const dense<[[0, 3, 3], [-1, 2, 0]]> : tensor<2x3xi64>\n"
        "  %r = ascend.UnsortedSegmentSumD %a0, %i {num_segments = 4 : i64} : (tensor<2x3x2xf32>, tensor<2x3xi64>) -> tensor<4x2xf32>",
        "tensor<4x2xf32>",
        lambda x: np.stack([x[0, 0] + x[1, 2], np.zeros(2), x[1, 1], x[0, 1] + x[0, 2]]),
    ),
    Case(
        "pad_constant",
        [((2, 3), "f32")],
        "  %r = ascend.PadV3D %a0 {paddings = array<i64: 1, 0, 0, 2>, constant_values = 1.500000e+00 : f32} : (tensor<2x3xf32>) -> tensor<3x5xf32>",
        "tensor<3x5xf32>",
        lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=1.5),
    ),
    Case(
        "pad_reflect",
        [((2, 4), "f32")],
        '  %r = ascend.PadV3D %a0 {paddings = array<i64: 1, 1, 3, 2>, mode = "reflect"} : (tensor<2x4xf32>) -> tensor<4x9xf32>',
        "tensor<4x9xf32>",
        lambda x: np.pad(x, ((1, 1), (3, 2)), mode="reflect"),
    ),
    Case(
        "pad_edge",
        [((2, 3), "f32")],
        '  %r = ascend.PadV3D %a0 {paddings = array<i64: 0, 2, 2, 1>, mode = "edge"} : (tensor<2x3xf32>) -> tensor<4x6xf32>',
        "tensor<4x6xf32>",
        lambda x: np.pad(x, ((0, 2), (2, 1)), mode="edge"),
    ),
    Case(
        "resize_nearest",
        [((1, 2, 3, 2), "f32")],
        '  %r = ascend.ResizeD %a0 {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x2x3x2xf32>) -> tensor<1x2x6x5xf32>',
        "tensor<1x2x6x5xf32>",
        lambda x: _nearest64(x, (6, 5)),
    ),
    Case(
        "resize_bilinear",
        [((1, 2, 3, 4), "f32")],
        '  %r = ascend.ResizeD %a0 {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x5x7xf32>',
        "tensor<1x2x5x7xf32>",
        lambda x: resize64(x, (5, 7), "linear", "align_corners"),
    ),
]


def _wide(inputs: list[Array]) -> list[Array]:
    return [a.astype(F) if a.dtype.kind == "f" else a for a in inputs]


FAMILIES = {"elementwise": ELEMENTWISE, "cube": CUBE, "reduce": REDUCE, "shape": SHAPE}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_fp32_family_matches_float64(family: str) -> None:
    cases = FAMILIES[family]
    module = parse_module(_module(cases), f"<{family}>", make_context())
    from ascend_mp.backend.iree import IreeProgram

    program = IreeProgram.from_module(module)  # one compile for the family
    bad = []
    for c in cases:
        inputs = _inputs(c, 0)
        (y,) = program.run(c.name, *inputs)[:1]
        want = np.asarray(c.ref(*_wide(inputs)), F)
        assert y.shape == want.shape, c.name
        if rel_err(y, want) > FP32_TOL:
            bad.append(f"{c.name}: {rel_err(y, want):.3g}")
    assert not bad, bad


@pytest.mark.parametrize("family", ["cube", "reduce", "elementwise"])
def test_force_fp16_family_within_interpreter_envelope(family: str) -> None:
    cases = FAMILIES[family]
    module = parse_module(_module(cases), f"<{family}>", make_context())
    decided = with_mode(module, "force_fp16")
    bad = []
    from ascend_mp.backend.iree import IreeProgram

    program = IreeProgram.from_module(decided)
    for c in cases:
        inputs = _inputs(c, 1)
        want = np.asarray(c.ref(*_wide(inputs)), F)
        ours = program.run(c.name, *inputs)[0]
        theirs = interpret(decided, c.name, *inputs)[0]
        e_iree, e_interp = rel_err(ours, want), rel_err(theirs, want)
        if e_iree > ENVELOPE * e_interp + FLOOR:
            bad.append(f"{c.name}: IREE {e_iree:.3g} vs interpreter {e_interp:.3g}")
    assert not bad, bad


def test_iree_run_helper_matches_program() -> None:
    """`iree_run` (compile + run once) gives the family program's result."""
    c = SHAPE[0]
    module = parse_module(_module([c]), "<one>", make_context())
    (y,) = iree_run(module, c.name, *_inputs(c, 0))
    np.testing.assert_array_equal(y, _inputs(c, 0)[0].reshape(4, 6))


STATUS = """
func.func @status(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf16>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %h = ascend.Cast %x : (tensor<4xf32>) -> tensor<4xf16>
  %g1 = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %c2 = ascend.NPUClearFloatStatus %g1 : (tensor<8xf32>) -> tensor<8xf32>
  %k = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf16>
  %g2 = ascend.NPUGetFloatStatus %c2 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %g1, %g2, %k : tensor<8xf32>, tensor<8xf32>, tensor<4xf16>
}
"""


@pytest.mark.parametrize(("x_big", "y_big"), [(False, False), (True, False), (False, True), (True, True)])
def test_float_status_flag(x_big: bool, y_big: bool) -> None:
    """Each Get reports an inf/NaN computed since the last Clear (here: an fp16 Cast overflowing)."""
    from ascend_mp.backend.iree import IreeProgram

    program = IreeProgram.from_module(parse_module(STATUS, "<status>", make_context()))
    x = np.array([1.0, 2.0, 1e5 if x_big else 3.0, 4.0], np.float32)
    y = np.array([1e6 if y_big else 5.0, 1.0, 2.0, 3.0], np.float32)
    g1, g2, _ = program.run("status", x, y)
    with np.errstate(over="ignore"):
        want1, want2 = (float(not np.isfinite(a.astype(np.float16)).all()) for a in (x, y))
    np.testing.assert_array_equal(g1, [want1] + [0.0] * 7)
    np.testing.assert_array_equal(g2, [want2] + [0.0] * 7)
