"""Gradient ops of the `ascend` dialect (what `ascend-autodiff` emits).

```mlir
%dx = ascend.ReluGrad %dy, %x : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
%db = ascend.BiasAddGrad %dy {data_format = "NHWC"} : (tensor<8x32xf32>) -> tensor<32xf32>
```
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from ascend_mp.dialects.ascend.attrs import float_prop, ints_prop, str_prop
from ascend_mp.dialects.ascend.base import AscendOp, dims_match, shape_of
from ascend_mp.dialects.ascend.cube import ConvOp
from ascend_mp.dialects.ascend.reduce import WindowOp, verify_channel_stats


class UnaryGradOp(AscendOp, ABC):
    """Elementwise gradient `z = f'(y) * dy`, all of one shape."""

    y = operand_def(TensorType)
    dy = operand_def(TensorType)
    z = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("y", "dy", "z")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("y", "dy", "z")
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ("y", "dy", "z")


# --------------------------------------------------------------------------------------
# Convolution gradients
# --------------------------------------------------------------------------------------


@irdl_op_definition
class Conv2DBackpropInputOp(ConvOp):
    """Gradient of Conv2D with respect to its input; `input_size` is the input's shape.

    ```mlir
    %dx = ascend.Conv2DBackpropInput %w, %dy {input_size = array<i64: 1, 3, 8, 8>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x3x3x3xf16>, tensor<1x4x6x6xf16>) -> tensor<1x3x8x8xf16>
    ```
    """

    name = "ascend.Conv2DBackpropInput"
    filter = operand_def(TensorType)
    out_backprop = operand_def(TensorType)
    y = result_def(TensorType)
    input_size = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("filter", "out_backprop")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("filter", "out_backprop", "y")

    def verify_shapes(self) -> None:
        size = self.input_size
        if min(size, default=0) < 0:
            self.fail(f"expects a static input_size, got {list(size)}")
        if not dims_match(size, shape_of(self.y)):
            self.fail(f"expects the result shape to equal input_size {size}")
        self.check_conv(size, shape_of(self.filter), shape_of(self.out_backprop))


@irdl_op_definition
class Conv2DBackpropFilterOp(ConvOp):
    """Gradient of Conv2D with respect to its filter; `filter_size` is the filter's shape.

    ```mlir
    %dw = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
    ```
    """

    name = "ascend.Conv2DBackpropFilter"
    x = operand_def(TensorType)
    out_backprop = operand_def(TensorType)
    y = result_def(TensorType)
    filter_size = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "out_backprop")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "out_backprop", "y")

    def verify_shapes(self) -> None:
        size = self.filter_size
        if min(size, default=0) < 0:
            self.fail(f"expects a static filter_size, got {list(size)}")
        if not dims_match(size, shape_of(self.y)):
            self.fail(f"expects the result shape to equal filter_size {size}")
        self.check_conv(shape_of(self.x), size, shape_of(self.out_backprop))


# --------------------------------------------------------------------------------------
# Activation gradients
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ReluGradOp(AscendOp):
    """`backprops = gradients * (features > 0)`.

    ```mlir
    %dx = ascend.ReluGrad %dy, %x : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    ```
    """

    name = "ascend.ReluGrad"
    gradients = operand_def(TensorType)
    features = operand_def(TensorType)
    backprops = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")


@irdl_op_definition
class LeakyReluGradOp(AscendOp):
    """`backprops = gradients * (features > 0 ? 1 : negative_slope)`.

    ```mlir
    %dx = ascend.LeakyReluGrad %dy, %x {negative_slope = 1.000000e-02 : f32} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    ```
    """

    name = "ascend.LeakyReluGrad"
    gradients = operand_def(TensorType)
    features = operand_def(TensorType)
    backprops = result_def(TensorType)
    negative_slope = float_prop(0.0)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ("gradients", "features", "backprops")


@irdl_op_definition
class SigmoidGradOp(UnaryGradOp):
    """`z = dy * y * (1 - y)` where y = sigmoid(x).

    ```mlir
    %dx = ascend.SigmoidGrad %y, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.SigmoidGrad"


@irdl_op_definition
class TanhGradOp(UnaryGradOp):
    """`z = dy * (1 - y^2)` where y = tanh(x).

    ```mlir
    %dx = ascend.TanhGrad %y, %dy : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
    ```
    """

    name = "ascend.TanhGrad"


@irdl_op_definition
class GeluGradOp(AscendOp):
    """`z = dy * gelu'(x)`; `y` is the forward output.

    ```mlir
    %dx = ascend.GeluGrad %dy, %x, %y : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ascend.GeluGrad"
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    z = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("dy", "x", "y", "z")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("dy", "x", "y", "z")
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ("dy", "x", "y", "z")


@irdl_op_definition
class SoftmaxGradOp(AscendOp):
    """`grad_x = (grad_softmax - sum(grad_softmax * softmax, -1)) * softmax` over the last axis.

    ```mlir
    %dx = ascend.SoftmaxGrad %y, %dy : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
    """

    name = "ascend.SoftmaxGrad"
    softmax = operand_def(TensorType)
    grad_softmax = operand_def(TensorType)
    grad_x = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("softmax", "grad_softmax", "grad_x")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("softmax", "grad_softmax", "grad_x")
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ("softmax", "grad_softmax", "grad_x")


# --------------------------------------------------------------------------------------
# Bias, pooling and normalisation gradients
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BiasAddGradOp(AscendOp):
    """Sum of `x` over every dimension but the channel one (rank-1 result).

    ```mlir
    %db = ascend.BiasAddGrad %dy : (tensor<2x16x4x4xf32>) -> tensor<16xf32>
    ```
    """

    name = "ascend.BiasAddGrad"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    data_format = str_prop("NCHW")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if len(x) < 2:
            self.fail("expects an operand of rank >= 2")
        channel = 1 if self.data_format == "NCHW" else len(x) - 1
        if not dims_match(shape_of(self.y), (x[channel],)):
            self.fail(f"expects a result of shape ({x[channel]},), got {shape_of(self.y)}")


@irdl_op_definition
class MaxPoolGradOp(WindowOp):
    """Routes `grad` to the maxima of the window: x1 = forward input, x2 = forward output.

    ```mlir
    %dx = ascend.MaxPoolGrad %x, %y, %dy {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x8x8xf32>
    ```
    """

    name = "ascend.MaxPoolGrad"
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    grad = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2", "grad", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x1", "x2", "grad", "y")

    def verify_shapes(self) -> None:
        self.verify_window(shape_of(self.x1), shape_of(self.x2))
        if not dims_match(shape_of(self.x2), shape_of(self.grad)) or not dims_match(
            shape_of(self.x1), shape_of(self.y)
        ):
            self.fail("expects grad shaped like x2 and y shaped like x1")


@irdl_op_definition
class AvgPoolGradOp(WindowOp):
    """Spreads `input_grad` evenly over each window; `orig_input_shape` is the forward input's shape.

    ```mlir
    %dx = ascend.AvgPoolGrad %dy {orig_input_shape = array<i64: 1, 4, 8, 8>, ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x8x8xf32>
    ```
    """

    name = "ascend.AvgPoolGrad"
    input_grad = operand_def(TensorType)
    out_grad = result_def(TensorType)
    orig_input_shape = ints_prop()
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("input_grad", "out_grad")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("input_grad", "out_grad")

    def verify_shapes(self) -> None:
        orig = self.orig_input_shape
        if min(orig, default=0) < 0:
            self.fail(f"expects a static orig_input_shape, got {list(orig)}")
        if not dims_match(orig, shape_of(self.out_grad)):
            self.fail(f"expects the result shape to equal orig_input_shape {orig}")
        self.verify_window(orig, shape_of(self.input_grad))


@irdl_op_definition
class LayerNormGradOp(AscendOp):
    """Gradients of LayerNorm: `pd_x`, `pd_gamma`, `pd_beta`.

    ```mlir
    %dx, %dg, %db = ascend.LayerNormGrad %dy, %x, %v, %m, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
    """

    name = "ascend.LayerNormGrad"
    dy = operand_def(TensorType)
    x = operand_def(TensorType)
    variance = operand_def(TensorType)
    mean = operand_def(TensorType)
    gamma = operand_def(TensorType)
    pd_x = result_def(TensorType)
    pd_gamma = result_def(TensorType)
    pd_beta = result_def(TensorType)
    epsilon = float_prop(1e-7)
    """Not a CANN attribute (CANN's LayerNormGrad assumes LayerNorm's default): the forward epsilon."""
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("dy", "x", "variance", "mean", "gamma", "pd_x", "pd_gamma", "pd_beta")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("dy", "x", "pd_x")
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ("dy", "x", "pd_x")

    def verify_shapes(self) -> None:
        if not (
            dims_match(shape_of(self.gamma), shape_of(self.pd_gamma))
            and dims_match(shape_of(self.gamma), shape_of(self.pd_beta))
        ):
            self.fail("expects gamma, pd_gamma and pd_beta of one shape")
        x, g = shape_of(self.x), shape_of(self.gamma)
        if len(g) > len(x) or not dims_match(g, x[len(x) - len(g) :]):
            self.fail(f"expects gamma shaped like trailing dimensions of x {x}, got {g}")
        var, mean = shape_of(self.variance), shape_of(self.mean)
        if not dims_match(var, mean):
            self.fail(f"expects mean and variance of one shape, got {mean} and {var}")
        norm = len(var)
        while norm > 0 and var[norm - 1] == 1:
            norm -= 1
        if len(var) != len(x) or norm == len(x) or not dims_match(var[:norm], x[:norm]):
            self.fail(
                f"expects mean and variance shaped like x {x} with the normalised trailing dimensions 1, got {var}"
            )


@irdl_op_definition
class BNTrainingUpdateGradOp(AscendOp):
    """Gradients of scale and offset of training BatchNorm (NCHW).

    ```mlir
    %ds, %do = ascend.BNTrainingUpdateGrad %dy, %x, %bm, %bv : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.BNTrainingUpdateGrad"
    grads = operand_def(TensorType)
    x = operand_def(TensorType)
    batch_mean = operand_def(TensorType)
    batch_variance = operand_def(TensorType)
    diff_scale = result_def(TensorType)
    diff_offset = result_def(TensorType)
    epsilon = float_prop(1e-4)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("grads", "x")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("grads", "x")

    def verify_shapes(self) -> None:
        verify_channel_stats(
            self, shape_of(self.x), [shape_of(v) for v in self.operands[2:]] + [shape_of(r) for r in self.results]
        )


@irdl_op_definition
class BNTrainingReduceGradOp(AscendOp):
    """Gradient of the input of training BatchNorm (NCHW).

    ```mlir
    %dx = ascend.BNTrainingReduceGrad %dy, %x, %ds, %do, %g, %bm, %bv : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
    ```
    """

    name = "ascend.BNTrainingReduceGrad"
    grads = operand_def(TensorType)
    x = operand_def(TensorType)
    diff_scale = operand_def(TensorType)
    diff_offset = operand_def(TensorType)
    scale = operand_def(TensorType)
    batch_mean = operand_def(TensorType)
    batch_variance = operand_def(TensorType)
    y = result_def(TensorType)
    epsilon = float_prop(1e-4)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("grads", "x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("grads", "x", "y")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(v) for v in self.operands[2:]])
