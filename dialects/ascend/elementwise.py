"""Elementwise ops of the `ascend` dialect: arithmetic, comparison, logic, selection, activations.

Binary ops broadcast as NumPy does; comparisons and logical ops produce bool (`i1`) tensors.

```mlir
%s = ascend.Add %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
%r = ascend.Relu %s : (tensor<2x4xf32>) -> tensor<2x4xf32>
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from ascend_mp.dialects.ascend.attrs import Unit, float_prop, str_prop
from ascend_mp.dialects.ascend.base import AscendOp, broadcast_shape, dims_match, shape_of
from ascend_mp.dtypes import dtype_name


class UnaryOp(AscendOp, ABC):
    """Elementwise `y = f(x)`."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        if not dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects the result shape to equal the operand shape")


class FloatUnaryOp(UnaryOp, ABC):
    """Elementwise `y = f(x)` on float tensors."""

    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")


class BinaryOp(AscendOp, ABC):
    """Elementwise `y = f(x1, x2)` with NumPy broadcasting."""

    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "y")

    def verify_shapes(self) -> None:
        out = broadcast_shape(shape_of(self.x1), shape_of(self.x2))
        if out is None:
            self.fail(f"operand shapes {shape_of(self.x1)} and {shape_of(self.x2)} do not broadcast")
        elif not dims_match(out, shape_of(self.y)):
            self.fail(f"expects result shape {out}, got {shape_of(self.y)}")


def _expect_bool(op: AscendOp, values: Sequence[SSAValue], what: str) -> None:
    for v in values:
        assert isinstance(v.type, TensorType)
        if dtype_name(v.type.element_type) != "i1":
            op.fail(f"expects a bool (i1) {what}, got {v.type.element_type}")


class CompareOp(BinaryOp, ABC):
    """`y = x1 <op> x2` with NumPy broadcasting; the result is bool (`i1`)."""

    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _expect_bool(self, [self.y], "result")


class LogicalBinaryOp(BinaryOp, ABC):
    """Elementwise boolean `y = x1 <op> x2` on bool (`i1`) tensors, NumPy broadcasting."""

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _expect_bool(self, [self.x1, self.x2, self.y], "operand and result")


# --------------------------------------------------------------------------------------
# Binary arithmetic
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BiasAddOp(AscendOp):
    """Adds a rank-1 `bias` along the channel dimension (1 for NCHW, last for NHWC).

    ```mlir
    %y = ascend.BiasAdd %x, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
    """

    name = "ascend.BiasAdd"
    x = operand_def(TensorType)
    bias = operand_def(TensorType)
    y = result_def(TensorType)
    data_format = str_prop("NCHW")
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "bias", "y")

    def verify_shapes(self) -> None:
        x, b = shape_of(self.x), shape_of(self.bias)
        if len(x) < 2 or len(b) != 1:
            self.fail("expects an operand of rank >= 2 and a rank-1 bias")
        channel = 1 if self.data_format == "NCHW" else len(x) - 1
        if not dims_match(b, (x[channel],)):
            self.fail(f"expects a bias of {x[channel]} elements, got {b[0]}")
        if not dims_match(x, shape_of(self.y)):
            self.fail("expects the result shape to equal the operand shape")


@irdl_op_definition
class AddOp(BinaryOp):
    """`y = x1 + x2`. ```mlir
    %y = ascend.Add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```"""

    name = "ascend.Add"


@irdl_op_definition
class SubOp(BinaryOp):
    """`y = x1 - x2`.

    ```mlir
    %y = ascend.Sub %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """`y = x1 * x2`.

    ```mlir
    %y = ascend.Mul %a, %b : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
    ```
    """

    name = "ascend.Mul"


@irdl_op_definition
class RealDivOp(BinaryOp):
    """`y = x1 / x2`.

    ```mlir
    %y = ascend.RealDiv %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.RealDiv"


@irdl_op_definition
class MaximumOp(BinaryOp):
    """`y = max(x1, x2)`.

    ```mlir
    %y = ascend.Maximum %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """`y = min(x1, x2)`.

    ```mlir
    %y = ascend.Minimum %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """

    name = "ascend.Minimum"


@irdl_op_definition
class PowOp(BinaryOp):
    """`y = x1 ** x2`.

    ```mlir
    %y = ascend.Pow %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Pow"


# --------------------------------------------------------------------------------------
# Comparison, logic, selection
# --------------------------------------------------------------------------------------


@irdl_op_definition
class GreaterOp(CompareOp):
    """`y = x1 > x2` with NumPy broadcasting; the result is bool (`i1`), the operands float or integer.

    ```mlir
    %y = ascend.Greater %a, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    ```
    """

    name = "ascend.Greater"


@irdl_op_definition
class LessOp(CompareOp):
    """`y = x1 < x2` (bool result, NumPy broadcasting).

    ```mlir
    %y = ascend.Less %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
    """

    name = "ascend.Less"


@irdl_op_definition
class EqualOp(CompareOp):
    """`y = x1 == x2` (bool result, NumPy broadcasting; NaN equals nothing). `IsNaN(x)` is
    `LogicalNot(Equal(x, x))` (CANN's table has no IsNan).

    ```mlir
    %y = ascend.Equal %a, %b : (tensor<2x4xi32>, tensor<4xi32>) -> tensor<2x4xi1>
    ```
    """

    name = "ascend.Equal"


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """`y = x1 and x2`. ```mlir
    %y = ascend.LogicalAnd %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    ```"""

    name = "ascend.LogicalAnd"


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """`y = x1 or x2`.

    ```mlir
    %y = ascend.LogicalOr %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    ```
    """

    name = "ascend.LogicalOr"


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """`y = not x` on a bool (`i1`) tensor.

    ```mlir
    %y = ascend.LogicalNot %a : (tensor<4xi1>) -> tensor<4xi1>
    ```
    """

    name = "ascend.LogicalNot"

    def verify_shapes(self) -> None:
        super().verify_shapes()
        _expect_bool(self, [self.x, self.y], "operand and result")


@irdl_op_definition
class SelectV2Op(AscendOp):
    """`result = condition ? then : else` elementwise, the three broadcast together (NumPy `where`).

    CANN's inputs are `condition`, `then`, `else` (fields `x1`, `x2`: `else` is a Python keyword).

    ```mlir
    %y = ascend.SelectV2 %mask, %a, %fill : (tensor<1x1x4x4xi1>, tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
    ```
    """

    name = "ascend.SelectV2"
    condition = operand_def(TensorType)
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "y")
    UNIT: ClassVar[Unit] = Unit.DATA
    CANN_INPUTS: ClassVar[tuple[str, ...] | None] = ("condition", "then", "else")
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("result",)

    def verify_shapes(self) -> None:
        _expect_bool(self, [self.condition], "condition")
        shapes = [shape_of(v) for v in self.operands]
        out: tuple[int, ...] | None = shapes[0]
        for s in shapes[1:]:
            out = None if out is None else broadcast_shape(out, s)
        if out is None:
            self.fail(f"condition, then and else shapes {shapes[0]}, {shapes[1]}, {shapes[2]} do not broadcast")
        elif not dims_match(out, shape_of(self.y)):
            self.fail(f"expects result shape {out}, got {shape_of(self.y)}")


@irdl_op_definition
class SelectOp(AscendOp):
    """`y = condition ? x1 : x2` elementwise; `condition` is bool (`i1`), rank 0 or shaped like `x1`.

    Only the chosen operand's value reaches `y`, so the result is bit-exact whatever the
    other holds (inf, NaN).

    ```mlir
    %y = ascend.Select %overflow, %old, %new : (tensor<i1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    ```
    """

    name = "ascend.Select"
    UNIT: ClassVar[Unit] = Unit.DATA
    condition = operand_def(TensorType)
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "y")

    def verify_shapes(self) -> None:
        cond = self.condition.type
        assert isinstance(cond, TensorType)
        if dtype_name(cond.element_type) != "i1":
            self.fail(f"expects a bool (i1) condition, got {cond.element_type}")
        x1, x2, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if not (dims_match(x1, x2) and dims_match(x1, y)):
            self.fail(f"expects x1, x2 and y of one shape, got {x1}, {x2} and {y}")
        c = shape_of(self.condition)
        if c and not dims_match(c, x1):
            self.fail(f"expects a rank-0 condition or one shaped like x1 {x1}, got {c}")


# --------------------------------------------------------------------------------------
# Unary
# --------------------------------------------------------------------------------------


@irdl_op_definition
class NegOp(UnaryOp):
    """`y = -x`. ```mlir
    %y = ascend.Neg %x : (tensor<4xf32>) -> tensor<4xf32>
    ```"""

    name = "ascend.Neg"


@irdl_op_definition
class ReluOp(UnaryOp):
    """`y = max(x, 0)`.

    ```mlir
    %y = ascend.Relu %x : (tensor<4xf16>) -> tensor<4xf16>
    ```
    """

    name = "ascend.Relu"


@irdl_op_definition
class SquareOp(UnaryOp):
    """`y = x * x`.

    ```mlir
    %y = ascend.Square %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Square"


@irdl_op_definition
class Relu6Op(UnaryOp):
    """`y = min(max(x, 0), 6)`. ```mlir
    %y = ascend.Relu6 %x : (tensor<4xf16>) -> tensor<4xf16>
    ```"""

    name = "ascend.Relu6"


@irdl_op_definition
class ClipByValueOp(AscendOp):
    """`y = min(max(x, clip_value_min), clip_value_max)`; the bounds broadcast to x's shape.

    ```mlir
    %y = ascend.ClipByValue %x, %lo, %hi : (tensor<2x4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x4xf32>
    ```
    """

    name = "ascend.ClipByValue"
    x = operand_def(TensorType)
    clip_value_min = operand_def(TensorType)
    clip_value_max = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "clip_value_min", "clip_value_max", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        for bound in (self.clip_value_min, self.clip_value_max):
            b = broadcast_shape(x, shape_of(bound))
            if b is None or not dims_match(b, x):
                self.fail(f"bound shape {shape_of(bound)} does not broadcast to the input shape {x}")
        if not dims_match(x, shape_of(self.y)):
            self.fail("expects the result shape to equal the input shape")


@irdl_op_definition
class HardSigmoidOp(AscendOp):
    """`output_y = max(0, min(1, alpha * input_x + beta))` (ONNX HardSigmoid; HardSwish is
    `x * HardSigmoid(x)` with alpha 1/6, beta 0.5).

    ```mlir
    %y = ascend.HardSigmoid %x {alpha = 2.000000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.HardSigmoid"
    input_x = operand_def(TensorType)
    output_y = result_def(TensorType)
    alpha = float_prop(0.16666666)
    beta = float_prop(0.5)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("input_x", "output_y")

    def verify_shapes(self) -> None:
        if not dims_match(shape_of(self.input_x), shape_of(self.output_y)):
            self.fail("expects the result shape to equal the operand shape")


@irdl_op_definition
class LeakyReluOp(FloatUnaryOp):
    """`y = x if x > 0 else negative_slope * x`.

    ```mlir
    %y = ascend.LeakyRelu %x {negative_slope = 1.000000e-02 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.LeakyRelu"
    negative_slope = float_prop(0.0)


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """`y = erf(x)`; ONNX's exact Gelu is `0.5 * x * (1 + Erf(x / sqrt(2)))` (the dialect's Gelu is
    CANN's tanh form). ```mlir
    %y = ascend.Erf %x : (tensor<4xf32>) -> tensor<4xf32>
    ```"""

    name = "ascend.Erf"


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """GELU, tanh approximation as CANN computes it.

    ```mlir
    %y = ascend.Gelu %x : (tensor<4xf16>) -> tensor<4xf16>
    ```
    """

    name = "ascend.Gelu"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`y = 1 / (1 + exp(-x))`.

    ```mlir
    %y = ascend.Sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Sigmoid"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """`y = tanh(x)`.

    ```mlir
    %y = ascend.Tanh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Tanh"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """`y = exp(x)` (CANN's default base e).

    ```mlir
    %y = ascend.Exp %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """`y = ln(x)`.

    ```mlir
    %y = ascend.Log %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """`y = sqrt(x)`.

    ```mlir
    %y = ascend.Sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """`y = 1 / sqrt(x)`.

    ```mlir
    %y = ascend.Rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Rsqrt"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """`y = floor(x)`.

    ```mlir
    %y = ascend.Floor %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.Floor"
