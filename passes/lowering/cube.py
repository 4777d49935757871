"""Cube ops (MatMul, MatMulV2, BatchMatMul, BatchMatMulV2, Conv2D, DepthwiseConv2D) as contractions
that accumulate in float32: each float16/bfloat16 operand element is widened (`arith.extf`) inside a
`linalg.generic` whose `outs` is a float32 zero tensor, then one elementwise `linalg.generic` adds the
bias (in float32) and rounds once to the result dtype (`arith.truncf`), as the Cube unit's L0C buffer."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntElementsAttr,
    DenseIntOrFPElementsAttr,
    TensorType,
    f32,
    f64,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import Conv2DNchwFchwOp
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringError,
    Scalar,
    amap,
    attr,
    const,
    dim,
    elem,
    identity,
    ints,
    is_float,
    shape,
)
from ascend_mp.passes.lowering.registry import lowers


def accumulator_type(*types: Attribute) -> Attribute:
    """float32 for float16/bfloat16/float32 operands, float64 for float64, int64 for integers."""
    if any(t == f64 for t in types):
        return f64
    if all(is_float(t) for t in types):
        return f32
    if not any(is_float(t) for t in types):
        return i64
    raise LoweringError("mixes float and integer operands")


def contract(
    em: Emitter,
    a: SSAValue,
    b: SSAValue,
    maps: Sequence[AffineMapAttr],
    acc_shape: Sequence[int],
    iters: Sequence[IteratorTypeAttr],
    acc_type: Attribute,
) -> SSAValue:
    """sum over the reduction loops of widen(a) * widen(b), into a zero `acc_type` tensor."""
    acc = em.fill(acc_shape, acc_type, 0)

    def body(s: Scalar) -> list[SSAValue]:
        x, w, c = s.convert(s.arg(0), acc_type), s.convert(s.arg(1), acc_type), s.arg(2)
        if is_float(acc_type):
            return [s.addf(c, s.mulf(x, w))]
        return [s.add(arith.AddiOp(c, s.add(arith.MuliOp(x, w))))]

    return em.generic([(a, maps[0]), (b, maps[1])], [(acc, maps[2])], iters, body)[0]


def _finish(em: Emitter, acc: SSAValue, bias: SSAValue | None, bias_axis: int, out_type: Attribute) -> SSAValue:
    """acc (+ bias over `bias_axis`, widened), converted once to `out_type`."""
    out = shape(acc)
    rank = len(out)
    if bias is None:
        return em.convert(acc, out_type)
    acc_type = elem(acc)

    def fn(s: Scalar, v: list[SSAValue]) -> SSAValue:
        return s.addf(v[0], v[1]) if is_float(acc_type) else s.add(arith.AddiOp(v[0], v[1]))

    return em.map([acc, bias], out, out_type, fn, acc_type, [identity(rank), amap(rank, [dim(bias_axis)])])


@lowers("MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2")
def _matmul(em: Emitter, op: AscendOp) -> list[SSAValue]:
    a, b = op.operands[0], op.operands[1]
    bias = op.operands[2] if len(op.operands) > 2 else None
    y = op.results[0]
    batched = op.name.startswith("ascend.Batch")
    ta = bool(attr(op, "adj_x1" if batched else "transpose_x1"))
    tb = bool(attr(op, "adj_x2" if batched else "transpose_x2"))
    out = shape(y)
    nb = len(out) - 2  # batch loops, then m, n, k
    m, n, k = dim(nb), dim(nb + 1), dim(nb + 2)
    loops = nb + 3

    def operand_map(v: SSAValue, rows: AffineExpr, cols: AffineExpr) -> AffineMapAttr:
        s = shape(v)
        lead = nb - (len(s) - 2)
        batch = [const(0) if d == 1 and out[lead + j] != 1 else dim(lead + j) for j, d in enumerate(s[:-2])]
        return amap(loops, [*batch, rows, cols])

    maps = [
        operand_map(a, k, m) if ta else operand_map(a, m, k),
        operand_map(b, n, k) if tb else operand_map(b, k, n),
        amap(loops, [dim(i) for i in range(nb + 2)]),
    ]
    acc_type = accumulator_type(elem(a), elem(b))
    acc = contract(em, a, b, maps, out, [PARALLEL] * (nb + 2) + [REDUCTION], acc_type)
    return [_finish(em, acc, bias, len(out) - 1, elem(y))]


@lowers("Conv2D", "DepthwiseConv2D")
def _conv(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """Grouped convolution with loops (n, g, f, oh, ow, c, kh, kw): group g reads input channels
    g*C/G + c and writes output channels g*F/G + f (Depthwise: G = C, one input channel per group, F/G =
    the multiplier). The accumulator is (N, G, F/G, OH, OW) (NHWC: (N, OH, OW, G, F/G)), collapsed."""
    x, w = op.operands[0], op.operands[1]
    bias = op.operands[2] if len(op.operands) > 2 else None
    y = op.results[0]
    fmt = str(attr(op, "data_format"))
    nchw = fmt == "NCHW"
    strides, pads, dil = ints(op, "strides"), ints(op, "pads"), ints(op, "dilations")
    hi, wi = (2, 3) if nchw else (1, 2)
    ci = 1 if nchw else 3
    ws, out = shape(w), shape(y)
    depthwise = op.name == "ascend.DepthwiseConv2D"
    if depthwise:
        groups, cg, fg = ws[2], 1, ws[3]
    else:
        groups = int(attr(op, "groups"))
        fo, cg = (ws[0], ws[1]) if nchw else (ws[3], ws[2])
        fg = fo // groups
    xp = em.pad(x, _pad4(pads, hi, wi, True), _pad4(pads, hi, wi, False), 0.0)
    n_, g_, f_, oh, ow, c_, kh, kw = (dim(i) for i in range(8))
    ih = oh * strides[hi] + kh * dil[hi]
    iw = ow * strides[wi] + kw * dil[wi]
    chan = g_ * cg + c_ if groups > 1 else c_
    oh_n, ow_n = out[hi], out[wi]
    if nchw:
        xmap = [n_, chan, ih, iw]
        acc_shape = [out[0], groups, fg, oh_n, ow_n]
        omap = [n_, g_, f_, oh, ow]
        groups_of = [[0], [1, 2], [3], [4]]
    else:
        xmap = [n_, ih, iw, chan]
        acc_shape = [out[0], oh_n, ow_n, groups, fg]
        omap = [n_, oh, ow, g_, f_]
        groups_of = [[0], [1], [2], [3, 4]]
    fchan = g_ * fg + f_ if groups > 1 else f_
    if depthwise:  # [KH, KW, C, M] read as [KH, KW, C, 1, M]: the c loop (one input channel per group) has a size
        w = em.expand(w, [[0], [1], [2, 3], [4]], [ws[0], ws[1], ws[2], 1, ws[3]])
        wmap = [kh, kw, g_, c_, f_]
    elif nchw:
        wmap = [fchan, c_, kh, kw]
    else:
        wmap = [kh, kw, c_, fchan]
    acc_type = accumulator_type(elem(x), elem(w))
    if groups == 1 and nchw and not depthwise and is_float(acc_type):
        return [_finish(em, _named_conv(em, xp, w, out, acc_type, strides, dil), bias, ci, elem(y))]
    if groups == 1 and not depthwise:  # the plain 7-loop convolution, without a unit group loop
        g = 1 if nchw else 3
        xmap, wmap = (_drop_loop(m, 1) for m in (xmap, wmap))
        omap = _drop_loop(omap[:g] + omap[g + 1 :], 1)
        acc_shape = acc_shape[:g] + acc_shape[g + 1 :]
        maps = [amap(7, xmap), amap(7, wmap), amap(7, omap)]
        acc = contract(em, xp, w, maps, acc_shape, [PARALLEL] * 4 + [REDUCTION] * 3, acc_type)
        return [_finish(em, acc, bias, ci, elem(y))]
    maps = [amap(8, xmap), amap(8, wmap), amap(8, omap)]
    iters = [PARALLEL] * 5 + [REDUCTION] * 3
    acc = contract(em, xp, w, maps, acc_shape, iters, acc_type)
    acc = em.collapse(acc, groups_of, list(out))
    return [_finish(em, acc, bias, ci, elem(y))]


def _named_conv(
    em: Emitter,
    xp: SSAValue,
    w: SSAValue,
    out: Sequence[int],
    acc_type: Attribute,
    strides: Sequence[int],
    dil: Sequence[int],
) -> SSAValue:
    """A one-group NCHW convolution as `linalg.conv_2d_nchw_fchw` on operands widened to `acc_type` (the same
    arithmetic as the generic contraction; IREE's im2col and data tiling apply to the named op, making resnet50
    about 3x faster)."""

    def pair(v: Sequence[int]) -> DenseIntElementsAttr:
        return DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), [v[2], v[3]])

    xw, ww = em.convert(xp, acc_type), em.convert(w, acc_type)
    acc = em.fill(out, acc_type, 0)
    return em.add(
        Conv2DNchwFchwOp([xw, ww], [acc], [TensorType(acc_type, list(out))], strides=pair(strides), dilations=pair(dil))
    )


def _drop_loop(exprs: Sequence[AffineExpr], loop: int) -> list[AffineExpr]:
    """`exprs` over loops without `loop` (which none of them reads): every later loop moves down one."""
    shift = {i: dim(i - 1) for i in range(loop + 1, 8)}
    return [e.replace_dims_and_symbols([shift.get(i, dim(i)) for i in range(8)], []) for e in exprs]


def _pad4(pads: Sequence[int], hi: int, wi: int, low: bool) -> list[int]:
    p = [0, 0, 0, 0]
    p[hi] = pads[0] if low else pads[1]
    p[wi] = pads[2] if low else pads[3]
    return p
