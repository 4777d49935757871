"""Cube-unit ops of the `ascend` dialect: matrix products and forward convolutions.

The Cube unit takes its inputs in their dtype, accumulates in fp32 and rounds once
(`UNIT = Unit.CUBE`); the convolution gradients share :class:`ConvOp` (see `grad.py`).

```mlir
%y = ascend.MatMulV2 %x, %w {transpose_x2 = true} : (tensor<8x16xf16>, tensor<32x16xf16>) -> tensor<8x32xf16>
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def

from ascend_mp.dialects.ascend.attrs import Unit, bool_prop, int_prop, ints_prop, str_prop
from ascend_mp.dialects.ascend.base import AscendOp, broadcast_shape, dims_match, shape_of, spatial_dims


def _check_matmul(op: AscendOp, a: tuple[int, ...], b: tuple[int, ...], ta: bool, tb: bool, y: tuple[int, ...]) -> None:
    """The last two dimensions of `a` and `b` (transposed by `ta`, `tb`) contract and give those of `y`."""
    m, k1 = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if k1 >= 0 and k2 >= 0 and k1 != k2:
        op.fail(f"contracting dimensions differ: {k1} vs {k2}")
    if not dims_match((m, n), y[-2:]):
        op.fail(f"expects result matrix shape {(m, n)}, got {y[-2:]}")


class MatMulBase(AscendOp, ABC):
    """MatMul / MatMulV2: `y = op(x1) @ op(x2) (+ bias)` on rank-2 operands, `transpose_x*` transposing them."""

    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    transpose_x1 = bool_prop(False)
    transpose_x2 = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ()
    UNIT: ClassVar[Unit] = Unit.CUBE

    def verify_shapes(self) -> None:
        a, b, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if len(a) != 2 or len(b) != 2 or len(y) != 2:
            self.fail("expects rank-2 operands and result")
        _check_matmul(self, a, b, self.transpose_x1, self.transpose_x2, y)
        if self.bias is not None and not dims_match(shape_of(self.bias), y[-1:]):
            self.fail(f"expects a bias of shape ({y[-1]},), got {shape_of(self.bias)}")


class ConvOp(AscendOp, ABC):
    """Shared attributes of the Conv2D family (strides/dilations in data_format order, pads [top, bottom, left, right])."""

    strides = ints_prop()
    pads = ints_prop((0, 0, 0, 0))
    dilations = ints_prop((1, 1, 1, 1))
    groups = int_prop(1)
    data_format = str_prop("NCHW")
    UNIT: ClassVar[Unit] = Unit.CUBE

    def check_conv(self, x: Sequence[int], f: Sequence[int], y: Sequence[int], depthwise: bool = False) -> None:
        """x: input, f: filter (OIHW for NCHW, HWIO for NHWC; depthwise: HW C M), y: output."""
        if len(x) != 4 or len(f) != 4 or len(y) != 4:
            self.fail("expects rank-4 input, filter and output")
        s, p, d = self.strides, self.pads, self.dilations
        if len(s) != 4 or len(p) != 4 or len(d) != 4:
            self.fail("expects strides, pads and dilations of 4 entries")
        if min(s) < 1 or min(d) < 1 or min(p) < 0:
            self.fail("expects positive strides and dilations and non-negative pads")
        groups = self.groups
        if groups < 1:
            self.fail(f"groups must be positive, got {groups}")
        fmt = self.data_format
        c, h, w = spatial_dims(fmt)
        if depthwise:
            kh, kw, cin, out = f[0], f[1], f[2], f[2] * f[3]
        elif fmt == "NCHW":
            out, cin, kh, kw = f
        else:
            kh, kw, cin, out = f
        if not depthwise and x[c] >= 0 and cin >= 0 and x[c] != cin * groups:
            self.fail(f"input channels {x[c]} do not match filter channels {cin} x groups {groups}")
        if depthwise and x[c] >= 0 and cin >= 0 and x[c] != cin:
            self.fail(f"input channels {x[c]} do not match filter channels {cin}")
        if not depthwise and out >= 0 and out % groups:
            self.fail(f"output channels {out} are not a multiple of groups {groups}")
        bias = self.operands[2] if len(self.operands) == 3 else None
        if bias is not None and not dims_match(shape_of(bias), (out,)):
            self.fail(f"expects a bias of shape ({out},), got {shape_of(bias)}")
        want = list(x)
        want[c] = out
        for dim, k, pad_lo, pad_hi in ((h, kh, p[0], p[1]), (w, kw, p[2], p[3])):
            size = x[dim]
            eff = d[dim] * (k - 1) + 1
            if size >= 0 and k >= 0 and size + pad_lo + pad_hi < eff:
                self.fail(f"filter window {eff} (dilated) is larger than the padded input {size + pad_lo + pad_hi}")
            want[dim] = -1 if size < 0 or k < 0 else (size + pad_lo + pad_hi - eff) // s[dim] + 1
        if not dims_match(want, y):
            self.fail(f"expects output shape {tuple(want)}, got {tuple(y)}")


# --------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------


@irdl_op_definition
class MatMulOp(MatMulBase):
    """Matrix product `y = op(x1) @ op(x2) (+ bias)` on the Cube unit.

    ```mlir
    %y = ascend.MatMul %a, %b {transpose_x2 = true} : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf32>
    ```
    """

    name = "ascend.MatMul"


@irdl_op_definition
class MatMulV2Op(MatMulBase):
    """Matrix product, CANN's V2 kernel (same semantics as MatMul).

    ```mlir
    %y = ascend.MatMulV2 %a, %b, %bias : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    ```
    """

    name = "ascend.MatMulV2"


@irdl_op_definition
class BatchMatMulOp(AscendOp):
    """Batched matrix product over the leading (broadcast) dimensions; `adj_x*` transpose the last two.

    ```mlir
    %y = ascend.BatchMatMul %a, %b : (tensor<2x4x8xf16>, tensor<2x8x3xf16>) -> tensor<2x4x3xf16>
    ```
    """

    name = "ascend.BatchMatMul"
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    y = result_def(TensorType)
    adj_x1 = bool_prop(False)
    adj_x2 = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")
    UNIT: ClassVar[Unit] = Unit.CUBE

    def verify_shapes(self) -> None:
        a, b, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if len(a) < 3 or len(b) < 3:
            self.fail("expects operands of rank 3 or more")
        batch = broadcast_shape(a[:-2], b[:-2])
        if batch is None or not dims_match(batch, y[:-2]):
            self.fail(f"batch dimensions {a[:-2]} and {b[:-2]} do not give {y[:-2]}")
        _check_matmul(self, a, b, self.adj_x1, self.adj_x2, y)


@irdl_op_definition
class BatchMatMulV2Op(AscendOp):
    """N-d matrix product: the last two dimensions multiply (`adj_x*` transpose them), the leading
    ones broadcast (NumPy `matmul`), so a 3-d x 2-d product is one op; optional `bias` over the
    last dimension. Operands of rank 2 or more (promote a vector with Reshape).

    ```mlir
    %y = ascend.BatchMatMulV2 %a, %w, %b : (tensor<2x5x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<2x5x3xf32>
    ```
    """

    name = "ascend.BatchMatMulV2"
    x1 = operand_def(TensorType)
    x2 = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    adj_x1 = bool_prop(False)
    adj_x2 = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x1", "x2")
    UNIT: ClassVar[Unit] = Unit.CUBE

    def verify_shapes(self) -> None:
        a, b, y = shape_of(self.x1), shape_of(self.x2), shape_of(self.y)
        if len(a) < 2 or len(b) < 2:
            self.fail(f"expects operands of rank 2 or more, got ranks {len(a)} and {len(b)}")
        batch = broadcast_shape(a[:-2], b[:-2])
        if batch is None or len(y) != len(batch) + 2 or not dims_match(batch, y[:-2]):
            self.fail(f"batch dimensions {a[:-2]} and {b[:-2]} do not broadcast to the result's {y[:-2]}")
        _check_matmul(self, a, b, self.adj_x1, self.adj_x2, y)
        if self.bias is not None and not dims_match(shape_of(self.bias), y[-1:]):
            self.fail(f"expects a bias of shape ({y[-1]},), got {shape_of(self.bias)}")


# --------------------------------------------------------------------------------------
# Convolutions
# --------------------------------------------------------------------------------------


@irdl_op_definition
class Conv2DOp(ConvOp):
    """2-d convolution. Filter layout: OIHW with NCHW data, HWIO with NHWC data.

    ```mlir
    %y = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16>
    ```
    """

    name = "ascend.Conv2D"
    x = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "filter")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "filter", "y")

    def verify_shapes(self) -> None:
        self.check_conv(shape_of(self.x), shape_of(self.filter), shape_of(self.y))


@irdl_op_definition
class DepthwiseConv2DOp(ConvOp):
    """Depthwise 2-d convolution; filter `[KH, KW, C, multiplier]`, output channels C x multiplier.

    ```mlir
    %y = ascend.DepthwiseConv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<3x3x3x1xf16>) -> tensor<1x3x6x6xf16>
    ```
    """

    name = "ascend.DepthwiseConv2D"
    x = operand_def(TensorType)
    filter = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "filter")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "filter", "y")

    def verify_shapes(self) -> None:
        self.check_conv(shape_of(self.x), shape_of(self.filter), shape_of(self.y), depthwise=True)
