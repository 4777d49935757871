"""Shape and data movement, exact in the operand's dtype: Reshape (`tensor.collapse_shape` then
`tensor.expand_shape`), Transpose/BroadcastToD/TileD (a `linalg.generic` reading through a permuted or
broadcast map; TileD then collapses block and element dimensions), ConcatV2D (`tensor.insert_slice`),
StridedSliceD (`tensor.extract_slice`), GatherV2D (`tensor.extract` at the index read in the body),
PadV3D (constant: `tensor.insert_slice` into a filled tensor; reflect/edge: `tensor.extract` at the
mirrored or clamped index), ResizeD (`tensor.extract` at the taps of tables computed at compile time,
blended in float32 for linear), ScatterNdUpdate (a reduction over the index rows: each element takes
the update of the last row that addresses it), UnsortedSegmentSumD (a reduction over the id positions:
each output row sums the rows whose id names it; no one-hot matrix)."""

from __future__ import annotations

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, TensorType, f32, i64
from xdsl.ir import SSAValue

from ascend_mp.dialects.ascend import AscendOp, PadV3DOp, resize_taps
from ascend_mp.passes.lowering.emit import (
    PARALLEL,
    REDUCTION,
    Emitter,
    LoweringError,
    Scalar,
    amap,
    attr,
    broadcast_map,
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
        r = (
            range(n)[slice(None if bm >> i & 1 else begin[i], None if em_ >> i & 1 else end[i], strides[i])]
            if i < len(begin)
            else range(n)
        )
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


def _index(s: Scalar, v: int) -> SSAValue:
    return s.add(arith.ConstantOp.from_int_and_width(v, IndexType()))


@lowers("PadV3D")
def _pad(em: Emitter, op: AscendOp) -> list[SSAValue]:
    assert isinstance(op, PadV3DOp)
    x, y = op.operands[0], op.results[0]
    pairs = op.pairs()
    if op.mode == "constant":
        return [em.pad(x, [lo for lo, _ in pairs], [hi for _, hi in pairs], op.constant_values)]
    src, out = shape(x), shape(y)
    rank = len(out)
    init = em.empty(out, elem(y))

    def body(s: Scalar) -> list[SSAValue]:
        coords: list[SSAValue] = []
        for d, (n, (lo, _)) in enumerate(zip(src, pairs)):
            j = s.add(arith.SubiOp(s.index(d), _index(s, lo)))  # the position in x, before folding back
            zero, last = _index(s, 0), _index(s, n - 1)
            if op.mode == "edge":
                j = s.add(arith.MaxSIOp(j, zero))
                j = s.add(arith.MinSIOp(j, last))
            else:  # reflect: -j below 0, 2(n-1) - j past the end
                j = s.add(arith.MaxSIOp(j, s.add(arith.SubiOp(zero, j))))
                j = s.add(arith.MinSIOp(j, s.add(arith.SubiOp(_index(s, 2 * (n - 1)), j))))
            coords.append(j)
        return [s.add(tensor.ExtractOp(x, coords, elem(x)))]

    return em.generic([], [(init, identity(rank))], [PARALLEL] * rank, body)


def _table(em: Emitter, values: list[int] | list[float], t: TensorType) -> SSAValue:
    return em.add(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, values), t))  # pyright: ignore[reportArgumentType, reportCallIssue]  # from_list's overloads want the element kind statically; t's matches values at run time


@lowers("ResizeD")
def _resize(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """`y[n, c, o...] = sum over corners of x[n, c, i...] * prod(weights)`: per spatial dimension the
    tables i0, i1 (i64) and w (f32) of :func:`resize_taps`, read by the output index."""
    x, y = op.operands[0], op.results[0]
    src, out = shape(x), shape(y)
    rank = len(out)
    mode = str(attr(op, "mode"))
    linear = mode == "linear"
    acc_t = compute_type(elem(x)) or f32
    inputs: list[tuple[SSAValue, object]] = []
    for d in range(2, rank):
        taps = resize_taps(
            src[d], out[d], str(attr(op, "coordinate_transformation_mode")), mode, str(attr(op, "nearest_mode"))
        )
        n = len(taps)
        vmap = amap(rank, [dim(d)])
        inputs.append((_table(em, [a for a, _, _ in taps], TensorType(i64, [n])), vmap))
        if linear:
            inputs.append((_table(em, [b for _, b, _ in taps], TensorType(i64, [n])), vmap))
            inputs.append((_table(em, [w for _, _, w in taps], TensorType(acc_t, [n])), vmap))
    init = em.empty(out, elem(y))
    spatial = rank - 2
    per = 3 if linear else 1

    def body(s: Scalar) -> list[SSAValue]:
        def idx(k: int) -> SSAValue:
            return s.add(arith.IndexCastOp(s.arg(k), IndexType()))

        lead = [s.index(0), s.index(1)]
        if not linear:
            return [s.add(tensor.ExtractOp(x, lead + [idx(per * j) for j in range(spatial)], elem(x)))]
        lo = [idx(3 * j) for j in range(spatial)]
        hi = [idx(3 * j + 1) for j in range(spatial)]
        w = [s.arg(3 * j + 2) for j in range(spatial)]
        one = s.const(1.0, acc_t)
        total: SSAValue | None = None
        for corner in range(2**spatial):
            coords, weight = list(lead), None
            for j in range(spatial):
                up = corner >> j & 1
                coords.append(hi[j] if up else lo[j])
                f = w[j] if up else s.subf(one, w[j])
                weight = f if weight is None else s.mulf(weight, f)
            v = s.convert(s.add(tensor.ExtractOp(x, coords, elem(x))), acc_t)
            term = s.mulf(v, weight)  # pyright: ignore[reportArgumentType]
            total = term if total is None else s.addf(total, term)
        return [s.convert(total, elem(y))]  # pyright: ignore[reportArgumentType]

    return em.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, body)  # pyright: ignore[reportArgumentType]


def _rows(em: Emitter, v: SSAValue, lead: int, rows: int) -> SSAValue:
    """`v` with its first `lead` dimensions as one (of size `rows`)."""
    s = shape(v)
    if lead == 1:
        return v
    if lead == 0:
        return em.expand(v, [] if not s else [[0, 1], *[[i + 1] for i in range(1, len(s))]], [1, *s])
    return em.collapse(v, [list(range(lead)), *[[i] for i in range(lead, len(s))]], [rows, *s[lead:]])


@lowers("ScatterNdUpdate")
def _scatter_nd_update(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """Loops over var's elements and the index rows r (a reduction, in order): the element becomes
    updates[r, ...] where row r addresses it (negative indices counted from the end)."""
    var, idx, upd = op.operands
    vs, ishape = shape(var), shape(idx)
    k, rank = ishape[-1], len(vs)
    lead = len(ishape) - 1
    n_rows = 1
    for d in ishape[:-1]:
        n_rows *= d
    idx2 = _rows(em, idx, lead, n_rows)
    upd2 = _rows(em, upd, lead, n_rows)
    out_map = amap(rank + 1, [dim(d) for d in range(rank)])

    def body(s: Scalar) -> list[SSAValue]:
        r = s.index(rank)
        hit: SSAValue | None = None
        for t in range(k):
            i = s.add(arith.IndexCastOp(s.add(tensor.ExtractOp(idx2, [r, _index(s, t)], elem(idx2))), IndexType()))
            neg = s.add(arith.CmpiOp(i, _index(s, 0), "slt"))
            i = s.select(neg, s.add(arith.AddiOp(i, _index(s, vs[t]))), i)
            eq = s.add(arith.CmpiOp(i, s.index(t), "eq"))
            hit = eq if hit is None else s.add(arith.AndIOp(hit, eq))
        value = s.add(tensor.ExtractOp(upd2, [r] + [s.index(d) for d in range(k, rank)], elem(upd2)))
        return [value if hit is None else s.select(hit, value, s.arg(1))]

    iters = [PARALLEL] * rank + [REDUCTION]
    # indices read (unused) at (r, 0): a loop must appear in an operand's map for linalg to size it
    rows_map = amap(rank + 1, [dim(rank), const(0)])
    return em.generic([(idx2, rows_map)], [(var, out_map)], iters, body)


@lowers("UnsortedSegmentSumD")
def _unsorted_segment_sum(em: Emitter, op: AscendOp) -> list[SSAValue]:
    """Loops over the result (segment j, rest) and the id positions r (a reduction): the
    accumulator (in the compute type) adds x[r, rest] where ids[r] == j."""
    x, ids = op.operands
    y = op.results[0]
    lead = len(shape(ids))
    n_rows = 1
    for d in shape(ids):
        n_rows *= d
    x2, ids2 = _rows(em, x, lead, n_rows), _rows(em, ids, lead, n_rows)
    rest = len(shape(y)) - 1
    loops = rest + 2  # (j, rest..., r)
    acc_t = compute_type(elem(x)) or elem(x)
    acc = em.fill(shape(y), acc_t, 0)

    def body(s: Scalar) -> list[SSAValue]:
        i = s.add(arith.IndexCastOp(s.arg(1), IndexType()))
        hit = s.add(arith.CmpiOp(i, s.index(0), "eq"))
        v = s.convert(s.arg(0), acc_t)
        total = s.addf(s.arg(2), v) if is_float(acc_t) else s.add(arith.AddiOp(s.arg(2), v))
        return [s.select(hit, total, s.arg(2))]

    x_map = amap(loops, [dim(loops - 1)] + [dim(d) for d in range(1, rest + 1)])
    ids_map = amap(loops, [dim(loops - 1)])
    out_map = amap(loops, [dim(d) for d in range(rest + 1)])
    iters = [PARALLEL] * (rest + 1) + [REDUCTION]
    total = em.generic([(x2, x_map), (ids2, ids_map)], [(acc, out_map)], iters, body)[0]
    return [em.convert(total, elem(y))]
