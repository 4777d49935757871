"""Shape and data-movement ops of the `ascend` dialect (exact: they move or select elements).

```mlir
%t = ascend.Transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
%r = ascend.Reshape %t : (tensor<8x4xf32>) -> tensor<32xf32>
```
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import ceil, floor, prod
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, var_operand_def

from ascend_mp.dialects.ascend.attrs import Unit, bool_prop, float_prop, int_prop, ints_prop, str_prop
from ascend_mp.dialects.ascend.base import AscendOp, broadcast_shape, dims_match, norm_axis, shape_of
from ascend_mp.dtypes import dtype_name


@irdl_op_definition
class ReshapeOp(AscendOp):
    """Same elements, the result's shape. ```mlir
    %y = ascend.Reshape %x : (tensor<2x4x4xf32>) -> tensor<2x16xf32>
    ```"""

    name = "ascend.Reshape"
    UNIT: ClassVar[Unit] = Unit.DATA
    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        a, b = shape_of(self.x), shape_of(self.y)
        if all(d >= 0 for d in a + b) and prod(a) != prod(b):
            self.fail(f"cannot reshape {a} ({prod(a)} elements) to {b} ({prod(b)} elements)")


@irdl_op_definition
class TransposeOp(AscendOp):
    """Permutes dimensions: `y.shape[i] = x.shape[perm[i]]`.

    ```mlir
    %y = ascend.Transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
    ```
    """

    name = "ascend.Transpose"
    UNIT: ClassVar[Unit] = Unit.DATA
    x = operand_def(TensorType)
    y = result_def(TensorType)
    perm = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x, perm = shape_of(self.x), self.perm
        if sorted(perm) != list(range(len(x))):
            self.fail(f"perm {list(perm)} is not a permutation of {len(x)} dimensions")
        want = tuple(x[p] for p in perm)
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class ConcatV2DOp(AscendOp):
    """Concatenates its operands along `concat_dim`. ```mlir
    %y = ascend.ConcatV2D %a, %b {concat_dim = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```"""

    name = "ascend.ConcatV2D"
    UNIT: ClassVar[Unit] = Unit.DATA
    input_values = var_operand_def(TensorType)
    output_data = result_def(TensorType)
    concat_dim = int_prop(0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("input_values", "output_data")

    def verify_shapes(self) -> None:
        shapes = [shape_of(v) for v in self.input_values]
        if not shapes:
            self.fail("expects at least one operand")
        rank = len(shapes[0])
        dim = norm_axis(self, self.concat_dim, rank, "concat_dim")
        want = list(shapes[0])
        for s in shapes[1:]:
            if len(s) != rank or not dims_match(s[:dim] + s[dim + 1 :], tuple(want[:dim] + want[dim + 1 :])):
                self.fail(f"operand shapes {shapes} differ outside concat_dim {dim}")
            want[dim] = -1 if min(want[dim], s[dim]) < 0 else want[dim] + s[dim]
        if not dims_match(want, shape_of(self.output_data)):
            self.fail(f"expects result shape {tuple(want)}, got {shape_of(self.output_data)}")


@irdl_op_definition
class GatherV2DOp(AscendOp):
    """`y = take(x, indices, axis)`: `y.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]`.
    Indices in [-n, n) (negative ones count from the end, as ONNX's Gather); others are a run-time error.

    ```mlir
    %y = ascend.GatherV2D %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
    ```
    """

    name = "ascend.GatherV2D"
    x = operand_def(TensorType)
    indices = operand_def(TensorType)
    y = result_def(TensorType)
    axis = int_prop(0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def verify_shapes(self) -> None:
        assert isinstance(self.indices.type, TensorType)
        if (
            not isinstance(self.indices.type.element_type, IntegerType)
            or dtype_name(self.indices.type.element_type) == "i1"
        ):
            self.fail(f"expects integer indices, got {self.indices.type.element_type}")
        x = shape_of(self.x)
        axis = norm_axis(self, self.axis, len(x), "axis")
        if not x:
            self.fail("expects an operand of rank >= 1")
        want = x[:axis] + shape_of(self.indices) + x[axis + 1 :]
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class StridedSliceDOp(AscendOp):
    """TF's strided slice: per dimension i < len(begin), `x[begin[i]:end[i]:strides[i]]` (Python
    rules: negative indices count from the end, out-of-range ones clamp); bit i of `begin_mask`
    / `end_mask` ignores begin[i] / end[i]; later dimensions are kept whole. The ellipsis,
    new-axis and shrink-axis masks must be 0.

    ```mlir
    %y = ascend.StridedSliceD %x {begin = array<i64: 0, 1>, end = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
    """

    name = "ascend.StridedSliceD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    begin = ints_prop()
    end = ints_prop()
    strides = ints_prop()
    begin_mask = int_prop(0)
    end_mask = int_prop(0)
    ellipsis_mask = int_prop(0)
    new_axis_mask = int_prop(0)
    shrink_axis_mask = int_prop(0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def slices(self, shape: Sequence[int]) -> tuple[slice, ...]:
        """The Python slices the op takes of a tensor of `shape`."""
        begin, end, strides = self.begin, self.end, self.strides
        bm, em = self.begin_mask, self.end_mask
        return tuple(
            slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i])
            for i in range(len(begin))
        )

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        begin, end, strides = self.begin, self.end, self.strides
        if not len(begin) == len(end) == len(strides) or len(begin) > len(x):
            self.fail(
                f"expects begin, end and strides of one length <= rank {len(x)}, got {len(begin)}, {len(end)}, {len(strides)}"
            )
        if 0 in strides:
            self.fail("strides must be non-zero")
        for mask, value in (
            ("ellipsis_mask", self.ellipsis_mask),
            ("new_axis_mask", self.new_axis_mask),
            ("shrink_axis_mask", self.shrink_axis_mask),
        ):
            if value != 0:
                self.fail(f"{mask} is not supported (must be 0)")
        want = list(x)
        for i, sl in enumerate(self.slices(x)):
            if x[i] >= 0:
                want[i] = len(range(*sl.indices(x[i])))
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {tuple(want)}, got {shape_of(self.y)}")


@irdl_op_definition
class BroadcastToDOp(AscendOp):
    """Broadcasts `x` to `shape` (NumPy rules; ONNX's Expand with its shape folded).

    ```mlir
    %y = ascend.BroadcastToD %x {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
    """

    name = "ascend.BroadcastToD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    shape = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def verify_shapes(self) -> None:
        x, shape = shape_of(self.x), self.shape
        if min(shape, default=0) < 0:
            self.fail(f"expects a static shape, got {list(shape)}")
        b = broadcast_shape(x, shape)
        if b is None or len(x) > len(shape) or not dims_match(b, shape):
            self.fail(f"cannot broadcast {x} to {tuple(shape)}")
        if not dims_match(shape, shape_of(self.y)):
            self.fail(f"expects result shape {tuple(shape)}, got {shape_of(self.y)}")


@irdl_op_definition
class TileDOp(AscendOp):
    """Repeats `x` `multiples[i]` times along dimension i (one multiple per dimension).

    ```mlir
    %y = ascend.TileD %x {multiples = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
    ```
    """

    name = "ascend.TileD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    multiples = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    UNIT: ClassVar[Unit] = Unit.DATA

    def verify_shapes(self) -> None:
        x, m = shape_of(self.x), self.multiples
        if len(m) != len(x) or min(m, default=1) < 0:
            self.fail(f"expects {len(x)} non-negative multiples, got {list(m)}")
        want = tuple(-1 if d < 0 else d * k for d, k in zip(x, m))
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


@irdl_op_definition
class OneHotOp(AscendOp):
    """One-hot encoding of integer indices `x`, `depth` wide at `axis`; rank-0 `on_value`/`off_value`.

    ```mlir
    %y = ascend.OneHot %i, %on, %off {depth = 10 : i64} : (tensor<8xi32>, tensor<f32>, tensor<f32>) -> tensor<8x10xf32>
    ```
    """

    name = "ascend.OneHot"
    x = operand_def(TensorType)
    on_value = operand_def(TensorType)
    off_value = operand_def(TensorType)
    y = result_def(TensorType)
    depth = int_prop(1)
    axis = int_prop(-1)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("on_value", "off_value", "y")

    def verify_shapes(self) -> None:
        assert isinstance(self.x.type, TensorType)
        if not isinstance(self.x.type.element_type, IntegerType):
            self.fail("expects integer indices")
        depth, x = self.depth, shape_of(self.x)
        for v, what in ((self.on_value, "on_value"), (self.off_value, "off_value")):
            if any(d != 1 for d in shape_of(v)):
                self.fail(f"expects a scalar {what} (one element), got shape {shape_of(v)}")
        if depth < 1:
            self.fail(f"depth must be positive, got {depth}")
        axis = norm_axis(self, self.axis, len(x) + 1, "axis")
        want = x[:axis] + (depth,) + x[axis:]
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


PAD_MODES_V3 = ("constant", "reflect", "edge")
"""PadV3D's modes: a constant, the mirror image without the edge element (numpy's `reflect`), the edge repeated."""


@irdl_op_definition
class PadV3DOp(AscendOp):
    """Pads `x`: `paddings` holds (before, after) per dimension (`paddings_contiguous`, CANN's default;
    false: all befores, then all afters). `mode` is `constant` (`constant_values`), `reflect` (pads
    shorter than the dimension) or `edge` (a non-empty dimension).

    ```mlir
    %y = ascend.PadV3D %x {paddings = array<i64: 0, 0, 1, 2>, mode = "reflect"} : (tensor<2x4xf32>) -> tensor<2x7xf32>
    ```
    """

    name = "ascend.PadV3D"
    UNIT: ClassVar[Unit] = Unit.DATA
    x = operand_def(TensorType)
    y = result_def(TensorType)
    paddings = ints_prop()
    constant_values = float_prop(0.0)
    mode = str_prop("constant")
    paddings_contiguous = bool_prop(True)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def pairs(self) -> list[tuple[int, int]]:
        """(before, after) per dimension."""
        p, n = self.paddings, len(self.paddings) // 2
        return [(p[2 * i], p[2 * i + 1]) for i in range(n)] if self.paddings_contiguous else list(zip(p[:n], p[n:]))

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if len(self.paddings) != 2 * len(x):
            self.fail(
                f"expects {2 * len(x)} paddings (before and after for each of {len(x)} dimensions), got {len(self.paddings)}"
            )
        if min(self.paddings, default=0) < 0:
            self.fail(f"expects non-negative paddings, got {list(self.paddings)}")
        if self.mode not in PAD_MODES_V3:
            self.fail(f"mode must be one of {', '.join(PAD_MODES_V3)}, got '{self.mode}'")
        pairs = self.pairs()
        for i, (d, (lo, hi)) in enumerate(zip(x, pairs)):
            if d < 0:
                continue
            if self.mode == "reflect" and max(lo, hi) >= max(d, 1):
                self.fail(f"reflect padding ({lo}, {hi}) of dimension {i} must be smaller than its size {d}")
            if self.mode == "edge" and d == 0 and lo + hi:
                self.fail(f"edge padding of the empty dimension {i}")
        want = tuple(-1 if d < 0 else d + lo + hi for d, (lo, hi) in zip(x, pairs))
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


RESIZE_COORDINATES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn")
RESIZE_MODES = ("nearest", "linear")
RESIZE_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize_taps(n_in: int, n_out: int, coordinates: str, mode: str, nearest_mode: str) -> list[tuple[int, int, float]]:
    """For each output index along one resized dimension: (i0, i1, w) with `y = x[i0] * (1 - w) + x[i1] * w`
    (nearest: i0 == i1, w == 0), ONNX Resize's rules with the scale `n_out / n_in`, computed exactly."""
    scale = Fraction(n_out, n_in)
    taps: list[tuple[int, int, float]] = []
    for o in range(n_out):
        if coordinates == "half_pixel" or (coordinates == "pytorch_half_pixel" and n_out > 1):
            x = (o + Fraction(1, 2)) / scale - Fraction(1, 2)
        elif coordinates == "align_corners":
            x = Fraction(o * (n_in - 1), n_out - 1) if n_out > 1 else Fraction(0)
        elif coordinates == "tf_half_pixel_for_nn":
            x = (o + Fraction(1, 2)) / scale
        elif coordinates == "asymmetric":
            x = o / scale
        else:  # pytorch_half_pixel with one output element
            x = Fraction(0)
        if mode == "nearest":
            f = floor(x)
            if nearest_mode == "floor":
                i = f
            elif nearest_mode == "ceil":
                i = ceil(x)
            elif x - f == Fraction(1, 2):
                i = f if nearest_mode == "round_prefer_floor" else f + 1
            else:
                i = round(x)
            i = min(max(i, 0), n_in - 1)
            taps.append((i, i, 0.0))
        else:
            x = min(max(x, Fraction(0)), Fraction(n_in - 1))
            i0 = floor(x)
            taps.append((i0, min(i0 + 1, n_in - 1), float(x - i0)))
    return taps


@irdl_op_definition
class ResizeDOp(AscendOp):
    """Resizes the spatial dimensions (2 and on) of an NC... tensor to the result's sizes, as ONNX's Resize
    (CANN's ResizeD keeps ONNX's attributes): `mode` nearest or linear (separable: bilinear in 2-d), the
    `coordinate_transformation_mode` mapping an output index to an input coordinate with the scale
    `out / in`, and the `nearest_mode` rounding of that coordinate.

    ```mlir
    %y = ascend.ResizeD %x {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
    ```
    """

    name = "ascend.ResizeD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    mode = str_prop("nearest")
    coordinate_transformation_mode = str_prop("half_pixel")
    nearest_mode = str_prop("round_prefer_floor")
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x",)

    def verify_shapes(self) -> None:
        for what, value, allowed in (
            ("mode", self.mode, RESIZE_MODES),
            ("coordinate_transformation_mode", self.coordinate_transformation_mode, RESIZE_COORDINATES),
            ("nearest_mode", self.nearest_mode, RESIZE_NEAREST),
        ):
            if value not in allowed:
                self.fail(f"{what} must be one of {', '.join(allowed)}, got '{value}'")
        x, y = shape_of(self.x), shape_of(self.y)
        if len(x) < 3 or len(y) != len(x):
            self.fail(f"expects an operand of rank >= 3 (N, C, spatial...) and a result of its rank, got {x} -> {y}")
        if not dims_match(x[:2], y[:2]):
            self.fail(f"resizes the spatial dimensions only: N and C of {x} and {y} differ")
        if any(d == 0 for d in x[2:] + y[2:]):
            self.fail(f"cannot resize empty dimensions ({x} -> {y})")


@irdl_op_definition
class ScatterNdUpdateOp(AscendOp):
    """`var` with slices replaced: for each row r of `indices` (shape (..., k)), the slice
    `var[indices[r]]` (its first k coordinates) becomes `updates[r]`; `updates` has shape
    `indices.shape[:-1] + var.shape[k:]`. Negative indices count from the end; the last of duplicate
    rows wins. A value, not an update in place (CANN's `var` output).

    ```mlir
    %y = ascend.ScatterNdUpdate %x, %i, %u : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    ```
    """

    name = "ascend.ScatterNdUpdate"
    UNIT: ClassVar[Unit] = Unit.DATA
    var = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    var_out = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("var", "updates", "var_out")
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var",)

    def verify_shapes(self) -> None:
        assert isinstance(self.indices.type, TensorType)
        if (
            not isinstance(self.indices.type.element_type, IntegerType)
            or dtype_name(self.indices.type.element_type) == "i1"
        ):
            self.fail(f"expects integer indices, got {self.indices.type.element_type}")
        var, idx, upd = shape_of(self.var), shape_of(self.indices), shape_of(self.updates)
        if not idx or idx[-1] < 0:
            self.fail(f"expects indices of rank >= 1 with a static last dimension, got shape {idx}")
        k = idx[-1]
        if k > len(var):
            self.fail(f"indices address {k} dimensions of a rank-{len(var)} var")
        want = idx[:-1] + var[k:]
        if not dims_match(want, upd):
            self.fail(f"expects updates of shape {want}, got {upd}")
        if not dims_match(var, shape_of(self.var_out)):
            self.fail(f"expects the result shape {var}, got {shape_of(self.var_out)}")


@irdl_op_definition
class UnsortedSegmentSumDOp(AscendOp):
    """`y[j, ...] = sum of x[i..., ...] over the index positions i where segment_ids[i] == j`:
    `x.shape = segment_ids.shape + rest`, `y.shape = [num_segments] + rest`. Ids outside
    [0, num_segments) contribute nothing (CANN's and TF's UnsortedSegmentSum). The scatter-add
    of an embedding's gradient: no one-hot matrix of ids by segments is formed.

    ```mlir
    %y = ascend.UnsortedSegmentSumD %dy, %ids {num_segments = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
    ```
    """

    name = "ascend.UnsortedSegmentSumD"
    UNIT: ClassVar[Unit] = Unit.VECTOR
    x = operand_def(TensorType)
    segment_ids = operand_def(TensorType)
    y = result_def(TensorType)
    num_segments = int_prop(1)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        assert isinstance(self.segment_ids.type, TensorType)
        if (
            not isinstance(self.segment_ids.type.element_type, IntegerType)
            or dtype_name(self.segment_ids.type.element_type) == "i1"
        ):
            self.fail(f"expects integer segment ids, got {self.segment_ids.type.element_type}")
        x, ids = shape_of(self.x), shape_of(self.segment_ids)
        if self.num_segments < 1:
            self.fail(f"expects num_segments >= 1, got {self.num_segments}")
        if not dims_match(x[: len(ids)], ids) or len(ids) > len(x):
            self.fail(f"expects segment ids shaped as a prefix of x's shape {x}, got {ids}")
        want = [self.num_segments, *x[len(ids) :]]
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")
