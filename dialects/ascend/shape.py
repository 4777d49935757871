"""Shape and data-movement ops of the `ascend` dialect (exact: they move or select elements).

```mlir
%t = ascend.Transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
%r = ascend.Reshape %t : (tensor<8x4xf32>) -> tensor<32xf32>
```
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, var_operand_def

from ascend_mp.dialects.ascend.attrs import Unit, int_prop, ints_prop
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
        if not isinstance(self.indices.type.element_type, IntegerType) or dtype_name(self.indices.type.element_type) == "i1":
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
            slice(None if bm >> i & 1 else begin[i], None if em >> i & 1 else end[i], strides[i]) for i in range(len(begin))
        )

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        begin, end, strides = self.begin, self.end, self.strides
        if not len(begin) == len(end) == len(strides) or len(begin) > len(x):
            self.fail(f"expects begin, end and strides of one length <= rank {len(x)}, got {len(begin)}, {len(end)}, {len(strides)}")
        if 0 in strides:
            self.fail("strides must be non-zero")
        for mask, value in (("ellipsis_mask", self.ellipsis_mask), ("new_axis_mask", self.new_axis_mask), ("shrink_axis_mask", self.shrink_axis_mask)):
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
