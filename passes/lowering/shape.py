"""Shape and data movement, exact in the operand's dtype: Reshape (`tensor.collapse_shape` then
`tensor.expand_shape`), Transpose/BroadcastToD/TileD (a `linalg.generic` reading through a permuted or
broadcast map; TileD then collapses block and element dimensions), ConcatV2D (`tensor.insert_slice`),
StridedSliceD (`tensor.extract_slice`), GatherV2D (`tensor.extract` at the index read in the body)."""

from __future__ import annotations

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.passes.lowering.emit import (
    PARALLEL,
    Emitter,
    LoweringError,
    Scalar,
    amap,
    attr,
    broadcast_map,
    const,
    dim,
    elem,
    identity,
    ints,
    shape,
)
from ascend_mp.passes.lowering.registry import lowers


@lowers("Reshape")
def _reshape(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x = op.operands[0]
    src, out = shape(x), shape(op.results[0])
    if src == out:
        return [x]
    if not src:  # a 0-d tensor: the result's dimensions are all 1
        return [em.expand(x, [], list(out))]
    if not out:
        return [em.collapse(x, [], [])]
    flat = x if len(src) == 1 else em.collapse(x, [list(range(len(src)))], [_size(src)])
    if len(out) == 1:
        return [flat]
    return [em.expand(flat, [list(range(len(out)))], list(out))]


def _size(s: tuple[int, ...]) -> int:
    n = 1
    for d in s:
        n *= d
    return n


def _permuted(em: Emitter, x: SSAValue, out: tuple[int, ...], read: list) -> SSAValue:
    return em.map([x], out, elem(x), lambda s, a: a[0], None, [amap(len(out), read)])


@lowers("Transpose")
def _transpose(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x = op.operands[0]
    perm = ints(op, "perm")
    out = shape(op.results[0])
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return [_permuted(em, x, out, [dim(inverse[j]) for j in range(len(perm))])]


@lowers("BroadcastToD")
def _broadcast_to(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x = op.operands[0]
    out = shape(op.results[0])
    return [em.map([x], out, elem(x), lambda s, a: a[0], None, [broadcast_map(shape(x), out)])]


@lowers("TileD")
def _tile(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """x broadcast to (m_0, d_0, m_1, d_1, ...), then each (m_j, d_j) pair collapsed: block r of
    dimension j is a copy of x (a `mod` map would be shorter, but IREE cannot tile it)."""
    x = op.operands[0]
    src, out = shape(x), shape(op.results[0])
    lead = len(out) - len(src)
    padded = (1,) * lead + src
    mult = [o // d if d else 1 for o, d in zip(out, padded)]
    expanded = [v for m, d in zip(mult, padded) for v in (m, d)]
    read = [const(0) if d == 1 else dim(2 * (lead + j) + 1) for j, d in enumerate(src)]
    wide = _permuted(em, x, tuple(expanded), read)
    return [em.collapse(wide, [[2 * j, 2 * j + 1] for j in range(len(out))], list(out))]


@lowers("ConcatV2D")
def _concat(em: Emitter, op: AscendOp) -> list[SSAValue]:
    y = op.results[0]
    out = shape(y)
    axis = int(attr(op, "concat_dim")) % len(out)
    acc = em.empty(out, elem(y))
    offset = 0
    for v in op.operands:
        offsets = [0] * len(out)
        offsets[axis] = offset
        acc = em.insert(v, acc, offsets)
        offset += shape(v)[axis]
    return [acc]


@lowers("StridedSliceD")
def _strided_slice(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x = op.operands[0]
    src = shape(x)
    begin, end, strides = ints(op, "begin"), ints(op, "end"), ints(op, "strides")
    bm, em_ = int(attr(op, "begin_mask")), int(attr(op, "end_mask"))
    for name in ("ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if name in type(op).attr_defaults() and int(attr(op, name)):
            raise LoweringError(f"with a non-zero {name} is not lowered")
    if any(st < 0 for st in strides):
        raise LoweringError("with a negative stride is not lowered")
    offsets: list[int] = []
    sizes: list[int] = []
    steps: list[int] = []
    for i, n in enumerate(src):
        # Python's slice rules, as the interpreter (dimensions past `begin` are kept whole)
        r = range(n)[slice(None if bm >> i & 1 else begin[i], None if em_ >> i & 1 else end[i], strides[i])] if i < len(begin) else range(n)
        offsets.append(r.start if len(r) else 0)
        sizes.append(len(r))
        steps.append(r.step)
    out = shape(op.results[0])
    sliced = em.extract(x, offsets, sizes, steps)
    if tuple(sizes) != out:
        raise LoweringError(f"result shape {out} differs from the slice {tuple(sizes)}")
    return [sliced]


@lowers("GatherV2D")
def _gather(em: Emitter, op: AscendOp) -> list[SSAValue]:
    x, idx = op.operands
    y = op.results[0]
    src, ishape, out = shape(x), shape(idx), shape(y)
    axis = int(attr(op, "axis")) % len(src)
    ni = len(ishape)
    rank = len(out)
    # out[d_0..d_{axis-1}, i_0..i_{ni-1}, d_{axis+1}..] = x[d_0.., idx[i..], d..]
    imap = amap(rank, [dim(axis + j) for j in range(ni)])
    init = em.empty(out, elem(y))

    def body(s: Scalar) -> list[SSAValue]:
        i = s.add(arith.IndexCastOp(s.arg(0), IndexType()))
        n = s.add(arith.ConstantOp.from_int_and_width(src[axis], IndexType()))
        zero = s.add(arith.ConstantOp.from_int_and_width(0, IndexType()))
        neg = s.add(arith.CmpiOp(i, zero, "slt"))
        i = s.select(neg, s.add(arith.AddiOp(i, n)), i)  # a negative index counts from the end
        coords = [s.index(d) for d in range(axis)] + [i] + [s.index(axis + ni + d) for d in range(len(src) - axis - 1)]
        return [s.add(tensor.ExtractOp(x, coords, elem(x)))]

    return em.generic([(idx, imap)], [(init, identity(rank))], [PARALLEL] * rank, body)


@lowers("OneHot")
def _one_hot(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """`y[..., k, ...] = on if x[...] == k else off` (k at `axis`; out-of-range indices are all off)."""
    x, on, off = op.operands
    y = op.results[0]
    out = shape(y)
    rank = len(out)
    axis = int(attr(op, "axis")) % rank
    xmap = amap(rank, [dim(i) for i in range(rank) if i != axis])
    scalar = [amap(rank, [const(0)] * len(shape(v))) for v in (on, off)]
    itype = elem(x)
    init = em.empty(out, elem(y))

    def body(s: Scalar) -> list[SSAValue]:
        k = s.add(arith.IndexCastOp(s.index(axis), itype))
        return [s.select(s.add(arith.CmpiOp(s.arg(0), k, "eq")), s.arg(1), s.arg(2))]

    return em.generic([(x, xmap), (on, scalar[0]), (off, scalar[1])], [(init, identity(rank))], [PARALLEL] * rank, body)
