"""Reductions, normalisations, softmax and pooling. Each widens its operand to float32 (float16/bfloat16),
computes every step on float32 tensors (`linalg.generic` reductions into filled accumulators, elementwise
steps with broadcast maps) and rounds each result once to its dtype, as the interpreter's vector unit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, DenseIntOrFPElementsAttr, TensorType, i1, i64
from xdsl.ir import Attribute, SSAValue

from ascend_mp.dialects.ascend import AscendOp, pool_pads, pool_v2_out
from ascend_mp.passes.lowering.emit import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringError,
    Scalar,
    amap,
    attr,
    compute_type,
    const,
    dim,
    elem,
    identity,
    ints,
    is_float,
    shape,
)
from ascend_mp.passes.lowering.registry import lowers

INF = float("inf")


def _acc(op: AscendOp) -> Attribute:
    t = compute_type(*(elem(v) for v in op.operands))
    return t if t is not None else i64


def _axes(op: AscendOp, rank: int, name: str = "axes") -> list[int]:
    axes = ints(op, name) or tuple(range(rank))
    return sorted({a % rank for a in axes})


def add_values(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    return s.addf(a, b) if is_float(a.type) else s.add(arith.AddiOp(a, b))


def _max(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    return s.maxf(a, b) if is_float(a.type) else s.add(arith.MaxSIOp(a, b))


def _min(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    return s.minf(a, b) if is_float(a.type) else s.add(arith.MinSIOp(a, b))


def _mul(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    return s.mulf(a, b) if is_float(a.type) else s.add(arith.MuliOp(a, b))


@lowers("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")
def _reduce(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, y = op.operands[0], op.results[0]
    src = shape(x)
    axes = _axes(op, len(src))
    keep = bool(attr(op, "keep_dims"))
    acc_t = _acc(op)
    if op.name == "ascend.ReduceMax":
        low = -INF if is_float(acc_t) else -(2**63)
        return [em.convert(em.reduce(x, axes, low, _max, acc_t, keep), elem(y))]
    if op.name == "ascend.ReduceMin":
        high = INF if is_float(acc_t) else 2**63 - 1
        return [em.convert(em.reduce(x, axes, high, _min, acc_t, keep), elem(y))]
    if op.name == "ascend.ReduceProd":
        return [em.convert(em.reduce(x, axes, 1, _mul, acc_t, keep), elem(y))]
    total = em.reduce(x, axes, 0, add_values, acc_t, keep)
    if op.name == "ascend.ReduceMean":
        if not is_float(acc_t):
            raise LoweringError("of integers is not lowered")
        count = int(np.prod([src[a] for a in axes]))
        return [em.map([total], shape(total), elem(y), lambda s, a: s.divf(a[0], s.const(count, acc_t)))]
    return [em.convert(total, elem(y))]


@lowers("CumsumD")
def _cumsum(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """One loop more than the result's, the summed index j (a reduction): `y[.., i, ..] += x[.., j, ..]`
    where j <= i (j < i exclusive; >=, > reversed), accumulated in float32 (integers in i64)."""
    x, y = op.operands[0], op.results[0]
    out = shape(y)
    rank = len(out)
    axis = int(attr(op, "axis")) % rank
    exclusive, reverse = bool(attr(op, "exclusive")), bool(attr(op, "reverse"))
    pred = {(False, False): "sle", (True, False): "slt", (False, True): "sge", (True, True): "sgt"}[
        (exclusive, reverse)
    ]
    acc_t = _acc(op)
    acc = em.fill(out, acc_t, 0)
    read = amap(rank + 1, [dim(rank) if d == axis else dim(d) for d in range(rank)])

    def body(s: Scalar) -> list[SSAValue]:
        take = s.add(arith.CmpiOp(s.index(rank), s.index(axis), pred))
        v = s.convert(s.arg(0), acc_t)
        return [add_values(s, s.arg(1), s.select(take, v, s.const(0, acc_t)))]

    iters = [PARALLEL] * rank + [REDUCTION]
    total = em.generic([(x, read)], [(acc, amap(rank + 1, [dim(d) for d in range(rank)]))], iters, body)[0]
    return [em.convert(total, elem(y))]


def shifted(em: Emitter, x: SSAValue, axes: Sequence[int], acc_t: Attribute) -> SSAValue:
    """x - max(x over axes), on `acc_t` tensors."""
    xw = em.convert(x, acc_t)
    m = em.reduce(xw, axes, -INF, _max, acc_t, keep_dims=True)
    return em.map([xw, m], shape(x), acc_t, lambda s, a: s.subf(a[0], a[1]))


@lowers("SoftmaxV2", "LogSoftmaxV2")
def _softmax(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, y = op.operands[0], op.results[0]
    out = shape(y)
    axes = _axes(op, len(out))
    acc_t = _acc(op)
    sh = shifted(em, x, axes, acc_t)
    if op.name == "ascend.SoftmaxV2":
        e = em.map([sh], out, acc_t, lambda s, a: s.exp(a[0]))
        total = em.reduce(e, axes, 0.0, add_values, acc_t, keep_dims=True)
        return [em.map([e, total], out, elem(y), lambda s, a: s.divf(a[0], a[1]))]
    total = em.reduce(sh, axes, 0.0, add_values, acc_t, keep_dims=True, pre=lambda s, v: s.exp(v))
    return [em.map([sh, total], out, elem(y), lambda s, a: s.subf(a[0], s.log(a[1])))]


@lowers("BNInfer")
def _bn_infer(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, scale, offset, mean, var = op.operands
    y = op.results[0]
    out = shape(y)
    rank = len(out)
    eps = float(attr(op, "epsilon"))
    acc_t = _acc(op)
    vec = amap(rank, [dim(1)])

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        xv, sc, off, m, v = a
        inv = s.divf(s.const(1.0, acc_t), s.sqrt(s.addf(v, s.const(eps, acc_t))))
        return s.addf(s.mulf(s.subf(xv, m), s.mulf(sc, inv)), off)

    return [em.map([x, scale, offset, mean, var], out, elem(y), fn, acc_t, [identity(rank), vec, vec, vec, vec])]


def _normalized(em: Emitter, op: AscendOp, axes: list[int], maps: list[AffineMapAttr] | None) -> list[SSAValue]:
    """LayerNorm's and InstanceNorm's steps in the accumulation type: the mean and (biased) variance over `axes`
    (kept as size-1 dims), then `(x - mean) / sqrt(var + eps) * gamma + beta` with gamma and beta read through
    `maps` (None: they broadcast as the op's operands are laid out); results: y, mean, variance."""
    x, gamma, beta = op.operands
    y, mean_r, var_r = op.results
    src = shape(x)
    eps = float(attr(op, "epsilon"))
    acc_t = _acc(op)
    count = float(np.prod([src[a] for a in axes]))
    xw = em.convert(x, acc_t)
    total = em.reduce(xw, axes, 0.0, add_values, acc_t, keep_dims=True)
    m = em.map([total], shape(total), acc_t, lambda s, a: s.divf(a[0], s.const(count, acc_t)))
    d = em.map([xw, m], src, acc_t, lambda s, a: s.subf(a[0], a[1]))
    sq = em.reduce(d, axes, 0.0, add_values, acc_t, keep_dims=True, pre=lambda s, v: s.mulf(v, v))
    var = em.map([sq], shape(sq), acc_t, lambda s, a: s.divf(a[0], s.const(count, acc_t)))

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        dv, v, g, b = a
        inv = s.divf(s.const(1.0, acc_t), s.sqrt(s.addf(v, s.const(eps, acc_t))))
        return s.addf(s.mulf(s.mulf(dv, inv), g), b)

    if maps is None:
        out = em.map([d, var, gamma, beta], src, elem(y), fn, acc_t)
    else:
        out = em.map([d, var, gamma, beta], src, elem(y), fn, acc_t, maps)
    return [out, em.convert(m, elem(mean_r)), em.convert(var, elem(var_r))]


@lowers("LayerNorm")
def _layer_norm(em: Emitter, op: AscendOp) -> list[SSAValue]:
    rank = len(shape(op.operands[0]))
    begin = int(attr(op, "begin_norm_axis")) % rank
    return _normalized(em, op, list(range(begin, rank)), None)


@lowers("InstanceNorm")
def _instance_norm(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """LayerNorm's steps over the spatial dimensions, gamma and beta read per channel."""
    rank = len(shape(op.operands[0]))
    stat = amap(rank, [dim(0), dim(1)] + [const(0)] * (rank - 2))
    vec = amap(rank, [dim(1)])
    return _normalized(em, op, list(range(2, rank)), [identity(rank), stat, vec, vec])


# --------------------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------------------


def pool_layout(op: AscendOp, xs: tuple[int, ...]) -> tuple[int, ...]:
    """(KH, KW, SH, SW, OH, OW, pad top, bottom, left, right, bottom and right pads without the ceil_mode
    overhang), as the interpreter's pooling geometry."""
    fmt = str(attr(op, "data_format"))
    hi, wi = (2, 3) if fmt == "NCHW" else (1, 2)
    h, w = xs[hi], xs[wi]
    v2 = op.name in ("ascend.MaxPoolV3", "ascend.AvgPoolV2")
    if v2 and bool(attr(op, "global_pooling")):
        return h, w, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0
    k, st = ints(op, "ksize"), ints(op, "strides")
    kh, kw, sh, sw = k[hi], k[wi], st[hi], st[wi]
    if not v2:
        if str(attr(op, "padding")) != "SAME":
            return kh, kw, sh, sw, (h - kh) // sh + 1, (w - kw) // sw + 1, 0, 0, 0, 0, 0, 0
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        return kh, kw, sh, sw, oh, ow, ph // 2, ph - ph // 2, pw // 2, pw - pw // 2, ph - ph // 2, pw - pw // 2
    mode, p, ceil = str(attr(op, "padding_mode")), ints(op, "pads"), bool(attr(op, "ceil_mode"))
    pt, pb = pool_pads(h, kh, sh, mode, p[0], p[1])
    pl, pr = pool_pads(w, kw, sw, mode, p[2], p[3])
    oh, ow = pool_v2_out(h, kh, sh, pt, pb, ceil), pool_v2_out(w, kw, sw, pl, pr, ceil)
    extra_h = max((oh - 1) * sh + kh - (h + pt + pb), 0)
    extra_w = max((ow - 1) * sw + kw - (w + pl + pr), 0)
    return kh, kw, sh, sw, oh, ow, pt, pb + extra_h, pl, pr + extra_w, pb, pr


def _counts(h: int, w: int, lay: tuple[int, ...], inside: tuple[int, int, int, int]) -> np.ndarray:
    """Elements of `inside` (top, bottom, left, right of the ones in the padded plane) per window."""
    kh, kw, sh, sw, oh, ow, pt, pb, pl, pr = lay[:10]
    plane = np.zeros((h + pt + pb, w + pl + pr), np.float64)
    plane[inside[0] : inside[1], inside[2] : inside[3]] = 1
    win = sliding_window_view(plane, (kh, kw))
    return win[: (oh - 1) * sh + 1 : sh, : (ow - 1) * sw + 1 : sw].sum(axis=(2, 3))


def counts_for(op: AscendOp, h: int, w: int, lay: tuple[int, ...]) -> np.ndarray:
    """The (OH, OW) divisors of an average pool over an h x w input: the input elements of each window
    (AvgPool, AvgPoolGrad, exclusive AvgPoolV2), or those of the padded input without the ceil_mode
    overhang (AvgPoolV2 with exclusive = false)."""
    pt, pl = lay[6], lay[8]
    if op.name != "ascend.AvgPoolV2" or bool(attr(op, "exclusive")):
        return _counts(h, w, lay, (pt, pt + h, pl, pl + w))
    return _counts(h, w, lay, (0, h + pt + lay[10], 0, w + pl + lay[11]))


@lowers("MaxPool", "AvgPool", "MaxPoolV3", "AvgPoolV2")
def _pool(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, y = op.operands[0], op.results[0]
    xs, out = shape(x), shape(y)
    fmt = str(attr(op, "data_format"))
    nchw = fmt == "NCHW"
    lay = pool_layout(op, xs)
    kh, kw, sh, sw, oh, ow, pt, pb, pl, pr = lay[:10]
    acc_t = _acc(op)
    is_max = "Max" in op.name
    lo = [0, 0, pt, pl] if nchw else [0, pt, pl, 0]
    hi = [0, 0, pb, pr] if nchw else [0, pb, pr, 0]
    xp = em.pad(x, lo, hi, -INF if is_max else 0.0)
    n_, c_, oh_, ow_, kh_, kw_ = (dim(i) for i in range(6))
    ih, iw = oh_ * sh + kh_, ow_ * sw + kw_
    xmap = [n_, c_, ih, iw] if nchw else [n_, ih, iw, c_]
    omap = [n_, c_, oh_, ow_] if nchw else [n_, oh_, ow_, c_]
    window = em.empty([kh, kw], acc_t)
    acc = em.fill(list(out), acc_t, -INF if is_max else 0.0)
    combine = _max if is_max else add_values

    def body(s: Scalar) -> list[SSAValue]:
        return [combine(s, s.arg(2), s.convert(s.arg(0), acc_t))]

    iters = [PARALLEL] * 4 + [REDUCTION] * 2
    total = em.generic([(xp, amap(6, xmap)), (window, amap(6, [kh_, kw_]))], [(acc, amap(6, omap))], iters, body)[0]
    if is_max:
        return [em.convert(total, elem(y))]
    h, w = (xs[2], xs[3]) if nchw else (xs[1], xs[2])
    counts = counts_for(op, h, w, lay)
    ctype = TensorType(acc_t, [oh, ow])
    cattr = DenseIntOrFPElementsAttr.from_list(ctype, [float(v) for v in counts.reshape(-1)])  # pyright: ignore[reportCallIssue, reportArgumentType]  # xDSL's from_list overloads want a TensorType of a float type statically; acc_t is one here
    cval = em.add(arith.ConstantOp(cattr, ctype))
    hw = [dim(2), dim(3)] if nchw else [dim(1), dim(2)]
    return [em.map([total, cval], out, elem(y), lambda s, a: s.divf(a[0], a[1]), acc_t, [identity(4), amap(4, hw)])]


def first_max_wins(s: Scalar, v: SSAValue, best: SSAValue, here: SSAValue, index: SSAValue) -> SSAValue:
    """Whether element `v` at `here` replaces (`best`, `index`): numpy's argmax (the first maximum, a NaN
    beats any number) as an order-free rule, since a linalg reduction may visit elements in any order:
    a greater value, an equal one at a smaller index, or a NaN where there is none or a later one."""
    earlier = s.add(arith.CmpiOp(here, index, "slt"))
    v_nan, b_nan = s.cmpf(v, v, "uno"), s.cmpf(best, best, "uno")
    b_number = s.add(arith.XOrIOp(b_nan, s.const(1, i1)))
    nan_wins = s.add(arith.AndIOp(v_nan, s.add(arith.OrIOp(b_number, earlier))))
    better = s.add(arith.OrIOp(s.cmpf(v, best, "ogt"), s.add(arith.AndIOp(s.cmpf(v, best, "oeq"), earlier))))
    return s.add(arith.OrIOp(nan_wins, s.add(arith.AndIOp(b_number, better))))


@lowers("ArgMaxV2")
def _argmax(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """One reduction with two accumulators (best value, its index), combined by `first_max_wins`."""
    x, y = op.operands[0], op.results[0]
    src = shape(x)
    rank = len(src)
    axis = int(attr(op, "dimension")) % rank
    acc_t = _acc(op)
    out_t = elem(y)
    best = em.fill(shape(y), acc_t, -INF)
    index = em.fill(shape(y), out_t, 0)
    omap = amap(rank, [dim(i) for i in range(rank) if i != axis])

    def body(s: Scalar) -> list[SSAValue]:
        v, b, i = s.convert(s.arg(0), acc_t), s.arg(1), s.arg(2)
        here = s.add(arith.IndexCastOp(s.index(axis), out_t))
        take = first_max_wins(s, v, b, here, i)
        return [s.select(take, v, b), s.select(take, here, i)]

    iters = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
    return [em.generic([(x, identity(rank))], [(best, omap), (index, omap)], iters, body)[1]]


@lowers("BatchNorm")
def _batch_norm(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """TF's FusedBatchNorm: in training the batch statistics (y uses the biased variance, the returned
    batch_variance is Bessel-corrected), else the given mean and variance."""
    x, scale, offset, mean, var = op.operands
    y_r, mean_r, var_r = op.results
    src = shape(x)
    channel = 1 if str(attr(op, "data_format")) == "NCHW" else len(src) - 1
    axes = [i for i in range(len(src)) if i != channel]
    eps = float(attr(op, "epsilon"))
    acc_t = _acc(op)
    vec = amap(len(src), [dim(channel)])
    if bool(attr(op, "is_training")):
        n = float(np.prod([src[a] for a in axes]))
        xw = em.convert(x, acc_t)
        m = em.map(
            [em.reduce(xw, axes, 0.0, add_values, acc_t)],
            [src[channel]],
            acc_t,
            lambda s, a: s.divf(a[0], s.const(n, acc_t)),
        )
        d = em.map([xw, m], src, acc_t, lambda s, a: s.subf(a[0], a[1]), None, [identity(len(src)), vec])
        sq = em.reduce(d, axes, 0.0, add_values, acc_t, pre=lambda s, v: s.mulf(v, v))
        v = em.map([sq], [src[channel]], acc_t, lambda s, a: s.divf(a[0], s.const(n, acc_t)))
        out_v = em.map([v], [src[channel]], acc_t, lambda s, a: s.mulf(a[0], s.const(n / max(n - 1, 1), acc_t)))
    else:
        m, v, out_v = em.convert(mean, acc_t), em.convert(var, acc_t), em.convert(var, acc_t)

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        xv, sc, off, mv, vv = a
        inv = s.divf(s.const(1.0, acc_t), s.sqrt(s.addf(vv, s.const(eps, acc_t))))
        return s.addf(s.mulf(s.subf(xv, mv), s.mulf(sc, inv)), off)

    y = em.map([x, scale, offset, m, v], src, elem(y_r), fn, acc_t, [identity(len(src)), vec, vec, vec, vec])
    return [y, em.convert(m, elem(mean_r)), em.convert(out_v, elem(var_r))]


# --------------------------------------------------------------------------------------
# CANN's split batch normalisation (NCHW): statistics, update, and their gradients
# --------------------------------------------------------------------------------------

_NCHW_STATS = [0, 2, 3]


def _channel_vec() -> AffineMapAttr:
    return amap(4, [dim(1)])


def _floats(op: AscendOp) -> Attribute:
    acc = compute_type(*(elem(v) for v in op.operands))
    if acc is None:
        raise LoweringError("lowers float tensors only")
    return acc


@lowers("BNTrainingReduce")
def _bn_training_reduce(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x = op.operands[0]
    s_r, ss_r = op.results
    acc = _floats(op)
    total = em.reduce(x, _NCHW_STATS, 0.0, add_values, acc)
    squares = em.reduce(x, _NCHW_STATS, 0.0, add_values, acc, pre=lambda s, v: s.mulf(v, v))
    return [em.convert(total, elem(s_r)), em.convert(squares, elem(ss_r))]


@lowers("BNTrainingUpdate")
def _bn_training_update(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """Batch statistics from the sums (the biased variance normalises; the running variance is updated
    with the Bessel-corrected one), as CANN."""
    x, total, squares, scale, offset, mean, var = op.operands
    y_r, mean_r, var_r, bm_r, bv_r = op.results
    xs = shape(x)
    n = float(np.prod([xs[a] for a in _NCHW_STATS]))
    eps, factor = float(attr(op, "epsilon")), float(attr(op, "factor"))
    acc = _floats(op)
    c = [xs[1]]
    bm = em.map([total], c, acc, lambda s, a: s.divf(a[0], s.const(n, acc)), acc)
    bv = em.map([squares, bm], c, acc, lambda s, a: s.subf(s.divf(a[0], s.const(n, acc)), s.mulf(a[1], a[1])), acc)

    def norm(s: Scalar, a: list[SSAValue]) -> SSAValue:
        xv, m, v, sc, off = a
        inv = s.divf(s.const(1.0, acc), s.sqrt(s.addf(v, s.const(eps, acc))))
        return s.addf(s.mulf(s.subf(xv, m), s.mulf(sc, inv)), off)

    vec = _channel_vec()
    y = em.map([x, bm, bv, scale, offset], xs, elem(y_r), norm, acc, [identity(4), vec, vec, vec, vec])
    keep = 1.0 - factor
    mean_out = em.map(
        [mean, bm],
        c,
        elem(mean_r),
        lambda s, a: s.addf(s.mulf(a[0], s.const(keep, acc)), s.mulf(a[1], s.const(factor, acc))),
        acc,
    )
    bessel = factor * n / max(n - 1, 1)
    var_out = em.map(
        [var, bv],
        c,
        elem(var_r),
        lambda s, a: s.addf(s.mulf(a[0], s.const(keep, acc)), s.mulf(a[1], s.const(bessel, acc))),
        acc,
    )
    return [y, mean_out, var_out, em.convert(bm, elem(bm_r)), em.convert(bv, elem(bv_r))]


def _xhat(em: Emitter, x: SSAValue, bm: SSAValue, bv: SSAValue, eps: float, acc: Attribute) -> SSAValue:
    vec = _channel_vec()

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        return s.divf(s.subf(a[0], a[1]), s.sqrt(s.addf(a[2], s.const(eps, acc))))

    return em.map([x, bm, bv], shape(x), acc, fn, acc, [identity(4), vec, vec])


@lowers("BNTrainingUpdateGrad")
def _bn_training_update_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    dy, x, bm, bv = op.operands
    ds_r, do_r = op.results
    acc = _floats(op)
    xhat = _xhat(em, x, bm, bv, float(attr(op, "epsilon")), acc)
    prod = em.map([dy, xhat], shape(x), acc, lambda s, a: s.mulf(a[0], a[1]), acc)
    d_scale = em.reduce(prod, _NCHW_STATS, 0.0, add_values, acc)
    d_offset = em.reduce(dy, _NCHW_STATS, 0.0, add_values, acc)
    return [em.convert(d_scale, elem(ds_r)), em.convert(d_offset, elem(do_r))]


@lowers("BNTrainingReduceGrad")
def _bn_training_reduce_grad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """dx = scale * inv * (dy - (d_offset + xhat * d_scale) / n)."""
    dy, x, d_scale, d_offset, scale, bm, bv = op.operands
    y = op.results[0]
    xs = shape(x)
    n = float(np.prod([xs[a] for a in _NCHW_STATS]))
    eps = float(attr(op, "epsilon"))
    acc = _floats(op)
    xhat = _xhat(em, x, bm, bv, eps, acc)

    def fn(s: Scalar, a: list[SSAValue]) -> SSAValue:
        g, xh, ds, do, sc, v = a
        inv = s.divf(s.const(1.0, acc), s.sqrt(s.addf(v, s.const(eps, acc))))
        corr = s.divf(s.addf(do, s.mulf(xh, ds)), s.const(n, acc))
        return s.mulf(s.mulf(sc, inv), s.subf(g, corr))

    vec = _channel_vec()
    return [
        em.map(
            [dy, xhat, d_scale, d_offset, scale, bv],
            xs,
            elem(y),
            fn,
            acc,
            [identity(4), identity(4), vec, vec, vec, vec],
        )
    ]
