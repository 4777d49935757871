"""Gradient ops used by training steps: the convolution gradients (float32 contractions as the cube
ops), elementwise gradients (ReluGrad, LeakyReluGrad, SigmoidGrad, TanhGrad, GeluGrad), SoftmaxGrad,
BiasAddGrad and the loss SoftmaxCrossEntropyWithLogits; each computes float16/bfloat16 in float32 and
rounds every result once, as the interpreter does."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, TensorType, i32
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.cube import accumulator_type, contract
from ascend_mp.passes.lowering.emit import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringError,
    Scalar,
    amap,
    attr,
    compute_type,
    dim,
    elem,
    identity,
    ints,
    shape,
)
from ascend_mp.passes.lowering.reduce import add_values, counts_for, first_max_wins, pool_layout, shifted
from ascend_mp.passes.lowering.registry import lowers

_GELU_C = pymath.sqrt(2.0 / pymath.pi)
_GELU_A = 0.044715


def _map(em: Emitter, op: AscendOp, fn: Callable[[Scalar, list[SSAValue]], SSAValue]) -> list[SSAValue]:
    """The op's one result as an elementwise function of its operands, computed in float32."""
    y = op.results[0]
    compute = compute_type(*(elem(v) for v in op.operands), elem(y))
    return [em.map(list(op.operands), shape(y), elem(y), fn, compute)]


@lowers("ReluGrad")
def _relu_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        g, f = a
        return s.select(s.cmpf(f, s.const(0, f.type), "ogt"), g, s.const(0, g.type))

    return _map(em, op, fn)


@lowers("LeakyReluGrad")
def _leaky_relu_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    slope = float(attr(op, "negative_slope"))

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        g, f = a
        return s.select(s.cmpf(f, s.const(0, f.type), "ogt"), g, s.mulf(g, s.const(slope, g.type)))

    return _map(em, op, fn)


@lowers("SigmoidGrad")
def _sigmoid_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return _map(em, op, lambda s, a: s.mulf(s.mulf(a[1], a[0]), s.subf(s.const(1, a[0].type), a[0])))


@lowers("TanhGrad")
def _tanh_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    return _map(em, op, lambda s, a: s.mulf(a[1], s.subf(s.const(1, a[0].type), s.mulf(a[0], a[0]))))


@lowers("GeluGrad")
def _gelu_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        dy, x = a[0], a[1]
        t_ = x.type
        x2 = s.mulf(x, x)
        t = s.tanh(s.mulf(s.const(_GELU_C, t_), s.addf(x, s.mulf(s.mulf(s.const(_GELU_A, t_), x2), x))))
        half = s.const(0.5, t_)
        one = s.const(1.0, t_)
        left = s.mulf(half, s.addf(one, t))
        slope = s.mulf(s.const(_GELU_C, t_), s.addf(one, s.mulf(s.const(3 * _GELU_A, t_), x2)))
        right = s.mulf(s.mulf(s.mulf(half, x), s.subf(one, s.mulf(t, t))), slope)
        return s.mulf(dy, s.addf(left, right))

    return _map(em, op, fn)


@lowers("SoftmaxGrad")
def _softmax_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    sm, g = op.operands
    y = op.results[0]
    acc = compute_type(elem(sm), elem(g))
    assert acc is not None
    rank = len(shape(y))
    dot = em.reduce(
        em.map([g, sm], shape(y), acc, lambda s, a: s.mulf(a[0], a[1]), acc),
        [rank - 1],
        0.0,
        add_values,
        acc,
        keep_dims=True,
    )
    return [em.map([g, dot, sm], shape(y), elem(y), lambda s, a: s.mulf(s.subf(a[0], a[1]), a[2]), acc)]


@lowers("BiasAddGrad")
def _bias_add_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, y = op.operands[0], op.results[0]
    rank = len(shape(x))
    fmt = str(attr(op, "data_format"))
    channel = 1 if fmt.startswith("NC") and rank > 2 else rank - 1
    acc = compute_type(elem(x))
    assert acc is not None
    total = em.reduce(x, [i for i in range(rank) if i != channel], 0.0, add_values, acc)
    return [em.convert(total, elem(y))]


@lowers("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(em: Emitter, op: AscendOp) -> list[SSAValue]:
    features, labels = op.operands
    loss_r, back_r = op.results
    acc = compute_type(elem(features), elem(labels))
    assert acc is not None
    sh = shifted(em, features, [1], acc)
    total = em.reduce(sh, [1], 0.0, add_values, acc, keep_dims=True, pre=lambda s, v: s.exp(v))
    logp = em.map([sh, total], shape(features), acc, lambda s, a: s.subf(a[0], s.log(a[1])))
    prod = em.map([labels, logp], shape(features), acc, lambda s, a: s.mulf(a[0], a[1]), acc)
    loss = em.reduce(prod, [1], 0.0, add_values, acc)
    loss = em.map([loss], shape(loss_r), elem(loss_r), lambda s, a: s.add(arith.NegfOp(a[0])))
    back = em.map([logp, labels], shape(back_r), elem(back_r), lambda s, a: s.subf(s.exp(a[0]), a[1]), acc)
    return [loss, back]


def _flipped(em: Emitter, w: SSAValue) -> SSAValue:
    """The filter with both spatial dimensions reversed, read with `tensor.extract` (linalg's verifier
    rejects a map like `2 - d2`, and the contraction needs a plain dimension per loop)."""
    ws = shape(w)
    init = em.empty(ws, elem(w))

    def body(s: Scalar) -> list[SSAValue]:
        coords = [s.index(0), s.index(1)]
        for d, n in ((2, ws[2]), (3, ws[3])):
            last = s.add(arith.ConstantOp.from_int_and_width(n - 1, IndexType()))
            coords.append(s.add(arith.SubiOp(last, s.index(d))))
        return [s.add(tensor.ExtractOp(w, coords, elem(w)))]

    return em.generic([], [(init, identity(4))], [PARALLEL] * 4, body)[0]


def _spread(em: Emitter, dy: SSAValue, out: list[int], sh: int, sw: int, fill: float = 0.0) -> SSAValue:
    """dy with sh-1 / sw-1 `fill` elements between its rows / columns. (A strided `tensor.insert_slice` into a
    filled tensor says the same, but gave wrong values through IREE 3.13's llvm-cpu here, although a
    1-d one into an `arith.constant` is right: not investigated further.)"""
    init = em.empty(out, elem(dy))

    def body(s: Scalar) -> list[SSAValue]:
        coords, on_grid = [s.index(0), s.index(1)], None
        for d, step in ((2, sh), (3, sw)):
            i = s.index(d)
            k = s.add(arith.ConstantOp.from_int_and_width(step, IndexType()))
            coords.append(s.add(arith.DivUIOp(i, k)))
            zero = s.add(arith.ConstantOp.from_int_and_width(0, IndexType()))
            hit = s.add(arith.CmpiOp(s.add(arith.RemUIOp(i, k)), zero, "eq"))
            on_grid = hit if on_grid is None else s.add(arith.AndIOp(on_grid, hit))
        value = s.add(tensor.ExtractOp(dy, coords, elem(dy)))
        assert on_grid is not None
        return [s.select(on_grid, value, s.const(fill, elem(dy)))]

    return em.generic([], [(init, identity(4))], [PARALLEL] * 4, body)[0]


def _nchw_groups1(op: AscendOp) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(strides, pads, dilations) of a convolution gradient this lowering handles: NCHW, one group."""
    if str(attr(op, "data_format")) != "NCHW" or int(attr(op, "groups")) != 1:
        raise LoweringError("is lowered for NCHW data and one group only")
    return ints(op, "strides"), ints(op, "pads"), ints(op, "dilations")


@lowers("Conv2DBackpropFilter")
def _conv_backprop_filter(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """dW[o, c, kh, kw] = sum over (n, oh, ow) of dy[n, o, oh, ow] * x_padded[n, c, oh*s + kh*d, ow*s + kw*d]."""
    x, dy = op.operands
    y = op.results[0]
    s, p, d = _nchw_groups1(op)
    xp = em.pad(x, [0, 0, p[0], p[2]], [0, 0, p[1], p[3]], 0.0)
    o_, c_, kh, kw, n_, oh, ow = (dim(i) for i in range(7))
    maps = [
        amap(7, [n_, o_, oh, ow]),
        amap(7, [n_, c_, oh * s[2] + kh * d[2], ow * s[3] + kw * d[3]]),
        amap(7, [o_, c_, kh, kw]),
    ]
    acc = contract(em, dy, xp, maps, shape(y), [PARALLEL] * 4 + [REDUCTION] * 3, accumulator_type(elem(x), elem(dy)))
    return [em.convert(acc, elem(y))]


@lowers("Conv2DBackpropInput")
def _conv_backprop_input(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """dx = the stride-dilated, padded dy correlated with the flipped filter:
    dx[n, c, h, w] = sum over (o, kh, kw) of dy'[n, o, h + kh*d, w + kw*d] * W[o, c, KH-1-kh, KW-1-kw]."""
    w, dy = op.operands
    y = op.results[0]
    s, p, d = _nchw_groups1(op)
    n, o, oh, ow = shape(dy)
    _, _, kh_n, kw_n = shape(w)
    h, wd = shape(y)[2], shape(y)[3]
    spread = [n, o, (oh - 1) * s[2] + 1, (ow - 1) * s[3] + 1]
    dyd = _spread(em, dy, spread, s[2], s[3]) if s[2] > 1 or s[3] > 1 else dy
    lo = [d[2] * (kh_n - 1) - p[0], d[3] * (kw_n - 1) - p[2]]
    hi = [h + d[2] * (kh_n - 1) - lo[0] - spread[2], wd + d[3] * (kw_n - 1) - lo[1] - spread[3]]
    if min(lo + hi) < 0:
        raise LoweringError(f"with pads {list(p)} larger than the dilated filter is not lowered")
    dyp = em.pad(dyd, [0, 0, *lo], [0, 0, *hi], 0.0)
    wf = _flipped(em, w)
    n_, c_, h_, w_, o_, kh, kw = (dim(i) for i in range(7))
    maps = [
        amap(7, [n_, o_, h_ + kh * d[2], w_ + kw * d[3]]),
        amap(7, [o_, c_, kh, kw]),
        amap(7, [n_, c_, h_, w_]),
    ]
    acc = contract(em, dyp, wf, maps, shape(y), [PARALLEL] * 4 + [REDUCTION] * 3, accumulator_type(elem(w), elem(dy)))
    return [em.convert(acc, elem(y))]


@lowers("LayerNormGrad")
def _layer_norm_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """dx = inv * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma, xhat = (x - mean) * inv,
    over the normalised axes (where the statistics have size 1); d_gamma = sum(dy * xhat) and
    d_beta = sum(dy) over the batch axes (those before gamma's)."""
    dy, x, var, mean, gamma = op.operands
    dx_r, dg_r, db_r = op.results
    src, vs = shape(x), shape(var)
    rank = len(src)
    norm = rank
    while norm > 0 and vs[norm - 1] == 1:
        norm -= 1
    axes = list(range(norm, rank))
    batch = list(range(rank - len(shape(gamma))))
    n = float(np.prod([src[a] for a in axes]))
    eps = float(attr(op, "epsilon"))
    acc = compute_type(*(elem(v) for v in op.operands))
    assert acc is not None
    inv = em.map([var], vs, acc, lambda s, a: s.divf(s.const(1.0, acc), s.sqrt(s.addf(a[0], s.const(eps, acc)))), acc)
    xhat = em.map([x, mean, inv], src, acc, lambda s, a: s.mulf(s.subf(a[0], a[1]), a[2]), acc)
    g = em.map([dy, gamma], src, acc, lambda s, a: s.mulf(a[0], a[1]), acc)
    sg = em.reduce(g, axes, 0.0, add_values, acc, keep_dims=True)
    sgx = em.reduce(
        em.map([g, xhat], src, acc, lambda s, a: s.mulf(a[0], a[1])), axes, 0.0, add_values, acc, keep_dims=True
    )

    def dx_fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        iv, gv, sgv, xh, sgxv = a
        nn = s.const(n, acc)
        return s.mulf(iv, s.subf(s.subf(gv, s.divf(sgv, nn)), s.mulf(xh, s.divf(sgxv, nn))))

    dx = em.map([inv, g, sg, xhat, sgx], src, elem(dx_r), dx_fn, acc)
    dyx = em.map([dy, xhat], src, acc, lambda s, a: s.mulf(a[0], a[1]), acc)
    d_gamma = em.convert(em.reduce(dyx, batch, 0.0, add_values, acc), elem(dg_r))
    d_beta = em.convert(em.reduce(dy, batch, 0.0, add_values, acc), elem(db_r))
    return [dx, d_gamma, d_beta]


def _pool_grad_geometry(op: AscendOp, xs: tuple[int, ...]) -> tuple[int, ...]:
    if str(attr(op, "data_format")) != "NCHW":
        raise LoweringError("is lowered for NCHW data only")
    return pool_layout(op, xs)


def _scatter_back(em: Emitter, g: SSAValue, lay: tuple[int, ...], h: int, w: int, fill: float = 0.0) -> SSAValue:
    """`g` (N, C, OH, OW) spread by the strides and padded (with `fill`) so that input pixel (h, w)
    reads, at (h + a, w + b), the output whose window tap (KH-1-a, KW-1-b) is that pixel."""
    kh, kw, sh, sw, oh, ow, pt, _, pl, _ = lay[:10]
    n, c = shape(g)[:2]
    spread = [n, c, (oh - 1) * sh + 1, (ow - 1) * sw + 1]
    gd = _spread(em, g, spread, sh, sw, fill) if sh > 1 or sw > 1 else g
    lo = [kh - 1 - pt, kw - 1 - pl]
    hi = [h + kh - 1 - lo[0] - spread[2], w + kw - 1 - lo[1] - spread[3]]
    if min(lo + hi) < 0:
        raise LoweringError("with pads larger than the window is not lowered")
    return em.pad(gd, [0, 0, *lo], [0, 0, *hi], fill)


@lowers("AvgPoolGrad")
def _avg_pool_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """Each output's gradient divided by its window's divisor, summed back onto the window's pixels."""
    (g,) = op.operands
    y = op.results[0]
    xs = ints(op, "orig_input_shape")
    lay = _pool_grad_geometry(op, xs)
    kh, kw, oh, ow = lay[0], lay[1], lay[4], lay[5]
    h, w = xs[2], xs[3]
    acc = compute_type(elem(g))
    assert acc is not None
    counts = counts_for(op, h, w, lay)
    cval = em.add(
        arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(TensorType(acc, [oh, ow]), [float(v) for v in counts.reshape(-1)]),  # pyright: ignore[reportCallIssue, reportArgumentType]  # xDSL's from_list overloads want a TensorType of a float/int type statically; acc is a float type
            TensorType(acc, [oh, ow]),
        )
    )
    share = em.map(
        [g, cval], shape(g), acc, lambda s, a: s.divf(a[0], a[1]), acc, [identity(4), amap(4, [dim(2), dim(3)])]
    )
    gp = _scatter_back(em, share, lay, h, w)
    window = em.empty([kh, kw], acc)
    total = em.fill(list(shape(y)), acc, 0.0)
    n_, c_, h_, w_, a_, b_ = (dim(i) for i in range(6))
    maps = [amap(6, [n_, c_, h_ + a_, w_ + b_]), amap(6, [a_, b_])]
    out = em.generic(
        list(zip([gp, window], maps)),
        [(total, amap(6, [n_, c_, h_, w_]))],
        [PARALLEL] * 4 + [REDUCTION] * 2,
        lambda s: [s.addf(s.arg(2), s.arg(0))],
    )[0]
    return [em.convert(out, elem(y))]


@lowers("MaxPoolGrad")
def _max_pool_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """Each output's gradient goes to the first maximum of its window (row-major; a NaN wins), as TF:
    one reduction finds each window's tap (value, then smallest tap on ties: order-free), then each
    input pixel sums the gradients of the windows whose chosen tap it is."""
    x, _, g = op.operands
    y = op.results[0]
    xs = shape(x)
    lay = _pool_grad_geometry(op, xs)
    kh, kw, sh, sw, oh, ow, pt, pb, pl, pr = lay[:10]
    acc = compute_type(elem(x), elem(g))
    assert acc is not None
    xp = em.pad(x, [0, 0, pt, pl], [0, 0, pb, pr], -float("inf"))
    out4 = [xs[0], xs[1], oh, ow]
    best = em.fill(out4, acc, -float("inf"))
    first = em.fill(out4, i32, 0)
    window = em.empty([kh, kw], acc)
    n_, c_, o1, o2, a_, b_ = (dim(i) for i in range(6))

    def pick(s: Scalar) -> list[SSAValue]:
        v, b, i = s.convert(s.arg(0), acc), s.arg(2), s.arg(3)
        tap = s.add(
            arith.AddiOp(
                s.add(arith.MuliOp(s.add(arith.IndexCastOp(s.index(4), i32)), s.const(kw, i32))),
                s.add(arith.IndexCastOp(s.index(5), i32)),
            )
        )
        take = first_max_wins(s, v, b, tap, i)
        return [s.select(take, v, b), s.select(take, tap, i)]

    xmap = amap(6, [n_, c_, o1 * sh + a_, o2 * sw + b_])
    arg = em.generic(
        [(xp, xmap), (window, amap(6, [a_, b_]))],
        [(best, amap(6, [n_, c_, o1, o2])), (first, amap(6, [n_, c_, o1, o2]))],
        [PARALLEL] * 4 + [REDUCTION] * 2,
        pick,
    )[1]
    h, w = xs[2], xs[3]
    gp = _scatter_back(em, g, lay, h, w)
    argp = _scatter_back(em, arg, lay, h, w, -1)
    total = em.fill(list(shape(y)), acc, 0.0)

    def gather(s: Scalar) -> list[SSAValue]:
        tap_h = s.add(arith.SubiOp(s.const(kh - 1, i32), s.add(arith.IndexCastOp(s.index(4), i32))))
        tap_w = s.add(arith.SubiOp(s.const(kw - 1, i32), s.add(arith.IndexCastOp(s.index(5), i32))))
        tap = s.add(arith.AddiOp(s.add(arith.MuliOp(tap_h, s.const(kw, i32))), tap_w))
        mine = s.add(arith.CmpiOp(s.arg(1), tap, "eq"))
        gv = s.convert(s.arg(0), acc)
        return [s.addf(s.arg(3), s.select(mine, gv, s.const(0.0, acc)))]

    read = amap(6, [n_, c_, o1 + a_, o2 + b_])
    ins = [(gp, read), (argp, read), (window, amap(6, [a_, b_]))]
    out = em.generic(ins, [(total, amap(6, [n_, c_, o1, o2]))], [PARALLEL] * 4 + [REDUCTION] * 2, gather)[0]
    return [em.convert(out, elem(y))]
