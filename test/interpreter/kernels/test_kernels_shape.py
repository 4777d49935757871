"""The kernels of ascend_mp/interpreter/kernels/shape.py (shape and data movement) against independent float64 references (kernel_util.py)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_util import EXAMPLES, F16, F32, arrays_of, assert_close, f64, rng, run
from onnx_util import resize64

from ascend_mp.interpreter.kernels import KernelError


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis: int) -> None:
    idx = np.array([[0, 3], [2, 7]], np.int32)  # 7 is out of range: all off
    on, off = np.array(2.0, np.float16), np.array(-1.0, np.float16)
    y = run("OneHot", idx, on, off, out=F16, attrs={"depth": 4, "axis": axis})
    ref = np.full((2, 2, 4), -1.0)
    for i, j in itertools.product(range(2), range(2)):
        if idx[i, j] < 4:
            ref[i, j, idx[i, j]] = 2.0
    np.testing.assert_array_equal(y, np.moveaxis(ref, -1, axis % 3))


@EXAMPLES
@given(x=arrays_of(F16, hnp.array_shapes(min_dims=1, max_dims=4, max_side=4)), data=st.data())
def test_reshape_transpose_concat_are_exact(x: np.ndarray, data: st.DataObject) -> None:
    flat = run("Reshape", x, out_shapes=[(x.size,)])
    np.testing.assert_array_equal(flat.view(np.uint16), x.reshape(-1).view(np.uint16))
    perm = tuple(data.draw(st.permutations(range(x.ndim))))
    np.testing.assert_array_equal(
        run("Transpose", x, attrs={"perm": perm}).view(np.uint16), np.transpose(x, perm).view(np.uint16)
    )
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    y = run("ConcatV2D", x, x, x, attrs={"concat_dim": dim})
    np.testing.assert_array_equal(y.view(np.uint16), np.concatenate([x, x, x], axis=dim).view(np.uint16))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@EXAMPLES
@given(x=arrays_of(F16, hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4)), data=st.data())
def test_pad_v3d_is_numpy_pad(mode: str, x: np.ndarray, data: st.DataObject) -> None:
    limit = [d - 1 if mode == "reflect" else 3 for d in x.shape]
    pairs = [(data.draw(st.integers(0, n)), data.draw(st.integers(0, n))) for n in limit]
    contiguous = data.draw(st.booleans())
    flat = [p for pair in pairs for p in pair] if contiguous else [lo for lo, _ in pairs] + [hi for _, hi in pairs]
    attrs = {"paddings": tuple(flat), "mode": mode, "constant_values": -2.5, "paddings_contiguous": contiguous}
    y = run("PadV3D", x, attrs=attrs)
    kw: dict[str, Any] = {"constant_values": -2.5} if mode == "constant" else {}
    np.testing.assert_array_equal(f64(y), np.pad(f64(x), pairs, mode=mode, **kw))


@pytest.mark.parametrize(
    ("mode", "coords", "nearest", "hw", "size"),
    [
        ("nearest", "asymmetric", "floor", (3, 4), (6, 8)),
        ("nearest", "half_pixel", "round_prefer_floor", (4, 4), (8, 2)),
        ("nearest", "half_pixel", "round_prefer_ceil", (4, 4), (8, 2)),
        ("nearest", "align_corners", "round_prefer_floor", (3, 5), (5, 3)),
        ("linear", "half_pixel", "round_prefer_floor", (3, 4), (5, 9)),
        ("linear", "align_corners", "round_prefer_floor", (4, 3), (7, 2)),
        ("linear", "asymmetric", "round_prefer_floor", (2, 5), (4, 3)),
    ],
)
@pytest.mark.parametrize("dtype", [F32, F16], ids=str)
def test_resize_matches_the_onnx_formulas(
    mode: str, coords: str, nearest: str, hw: tuple[int, int], size: tuple[int, int], dtype: np.dtype
) -> None:
    x = rng(3).standard_normal((2, 3, *hw)).astype(dtype)
    attrs = {"mode": mode, "coordinate_transformation_mode": coords, "nearest_mode": nearest}
    y = run("ResizeD", x, attrs=attrs, out_shapes=[(2, 3, *size)])
    ref = resize64(f64(x), size, mode, coords, nearest)
    if mode == "nearest":
        np.testing.assert_array_equal(f64(y), ref)
    else:
        assert_close(y, ref, scale=np.abs(f64(x)).max(), k=4)


@pytest.mark.parametrize(("var", "idx"), [((5, 3), (2, 1)), ((4, 3, 2), (2, 2, 2)), ((3, 4), (2,)), ((6,), (4, 1))])
def test_scatter_nd_update_loops(var: tuple[int, ...], idx: tuple[int, ...]) -> None:
    """Against a Python loop over the index rows (distinct rows, some negative)."""
    g = rng(5)
    k = idx[-1]
    n_rows = int(np.prod(idx[:-1]))
    flat = g.choice(int(np.prod(var[:k])), size=n_rows, replace=False)
    rows = np.stack(np.unravel_index(flat, var[:k]), axis=-1) - np.array(var[:k]) * g.integers(0, 2, (n_rows, k))
    indices = rows.reshape(idx).astype(np.int32)
    x = g.standard_normal(var).astype(F16)
    updates = g.standard_normal(idx[:-1] + var[k:]).astype(F16)
    want = f64(x).copy()
    for r, u in zip(rows, f64(updates).reshape((n_rows, *var[k:]))):
        want[tuple(int(c) % n for c, n in zip(r, var))] = u
    np.testing.assert_array_equal(f64(run("ScatterNdUpdate", x, indices, updates)), want)


def test_unsorted_segment_sum_against_a_loop() -> None:
    """Repeated ids add up, ids outside [0, n) drop out; fp16 rows summed in fp32, rounded once."""
    g = rng(6)
    x = g.standard_normal((2, 5, 3)).astype(F16)
    ids = np.array([[0, 3, 3, -1, 2], [3, 5, 0, 0, 1]], np.int64)
    want = np.zeros((4, 3))
    for i, row in zip(ids.reshape(-1), f64(x).reshape(-1, 3)):
        if 0 <= i < 4:
            want[i] += row
    got = run("UnsortedSegmentSumD", x, ids, attrs={"num_segments": 4}, out_shapes=[(4, 3)])
    assert got.dtype == F16
    np.testing.assert_array_equal(f64(got), f64(want.astype(F16)))


def test_resize_of_dynamic_sizes_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match=r"ResizeD needs static spatial sizes"):
        run("ResizeD", np.zeros((1, 2, 3, 4), F32), out_shapes=[(1, 2, -1, 8)])


def test_scatter_nd_update_out_of_range_is_a_kernel_error() -> None:
    with pytest.raises(KernelError, match=r"index \[4\] is out of range for shape \(4, 2\)"):
        run("ScatterNdUpdate", np.zeros((4, 2), F32), np.array([[1], [4]], np.int32), np.zeros((2, 2), F32))


def test_reshape_with_one_dynamic_dimension() -> None:
    assert run("Reshape", np.zeros((2, 6), F32), out_shapes=[(-1, 3)]).shape == (4, 3)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_gather_v2(axis: int, idx_dtype: type) -> None:
    x = rng(7).standard_normal((4, 5, 3)).astype(F16)
    n = x.shape[axis]
    indices = np.array([[0, n - 1], [-1, 1], [-n, 2 % n]], idx_dtype)
    y = run("GatherV2D", x, indices, attrs={"axis": axis})
    ax = axis % 3
    assert y.shape == x.shape[:ax] + indices.shape + x.shape[ax + 1 :]
    for index in np.ndindex(*y.shape):
        i = int(indices[index[ax : ax + 2]])
        src = index[:ax] + ((i + n) % n,) + index[ax + 2 :]
        assert y[index].tobytes() == x[src].tobytes()


def test_gather_v2_out_of_range_index_is_a_one_line_error() -> None:
    x = np.zeros((4, 2), F32)
    with pytest.raises(KernelError, match="GatherV2D: index 4 is out of range for axis 0 of size 4"):
        run("GatherV2D", x, np.array([1, 4], np.int64))
    with pytest.raises(KernelError, match="index -5 is out of range"):
        run("GatherV2D", x, np.array([-5], np.int32))


@pytest.mark.parametrize(
    ("begin", "end", "strides", "bm", "em"),
    [
        ((0, 1), (4, 7), (1, 2), 0, 0),
        ((3, -1), (0, 0), (-1, -2), 0, 0),
        ((1,), (100,), (1,), 0, 0),
        ((5, 2), (0, 6), (1, 3), 1, 2),
        ((-3, 0), (-1, 1), (1, 1), 0, 0),
    ],
)
def test_strided_slice(
    begin: tuple[int, ...], end: tuple[int, ...], strides: tuple[int, ...], bm: int, em: int
) -> None:
    x = rng(8).standard_normal((4, 8, 2)).astype(F32)
    y = run(
        "StridedSliceD", x, attrs={"begin": begin, "end": end, "strides": strides, "begin_mask": bm, "end_mask": em}
    )
    # the reference picks indices one by one from TF's rules (clamping, negative counting, masks)
    picks = []
    for d, size in enumerate(x.shape):
        if d >= len(begin):
            picks.append(list(range(size)))
            continue
        s = strides[d]
        lo, hi = (0, size) if s > 0 else (-1, size - 1)
        b = (
            (0 if s > 0 else size - 1)
            if bm >> d & 1
            else min(max(begin[d] + size if begin[d] < 0 else begin[d], lo), hi)
        )
        e = (size if s > 0 else -1) if em >> d & 1 else min(max(end[d] + size if end[d] < 0 else end[d], lo), hi)
        idx, i = [], b
        while (i < e) if s > 0 else (i > e):
            idx.append(i)
            i += s
        picks.append(idx)
    ref = x[np.ix_(*picks)]
    assert y.shape == ref.shape and (y == ref).all()


def test_broadcast_to_and_tile() -> None:
    x = rng(9).standard_normal((3, 1)).astype(F16)
    y = run("BroadcastToD", x, attrs={"shape": (2, 3, 4)})
    assert y.shape == (2, 3, 4)
    for i, j, k in np.ndindex(2, 3, 4):
        assert y[i, j, k] == x[j, 0]
    t = run("TileD", x, attrs={"multiples": (2, 3)})
    assert t.shape == (6, 3)
    for i, j in np.ndindex(6, 3):
        assert t[i, j] == x[i % 3, 0]
    mask = np.array([[True, False]])
    assert run("TileD", mask, out=np.bool_, attrs={"multiples": (2, 2)}).tolist() == [[True, False, True, False]] * 2
