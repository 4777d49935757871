"""Reductions, softmax, pooling, normalisation and the loss op of the `ascend` dialect.

```mlir
%s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
%p = ascend.MaxPool %i {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
```
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from ascend_mp.dialects.ascend.attrs import bool_prop, float_prop, int_prop, ints_prop, str_prop
from ascend_mp.dialects.ascend.base import AscendOp, dims_match, norm_axis, shape_of, spatial_dims


class ReduceOp(AscendOp, ABC):
    """Reduction over `axes` (all axes when empty), optionally keeping them as size 1."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    axes = ints_prop(())
    keep_dims = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(shape_of(self.x))
        axes = self.axes or tuple(range(rank))
        return tuple(sorted({norm_axis(self, a, rank, "axis") for a in axes}))

    def verify_shapes(self) -> None:
        shape = shape_of(self.x)
        axes = self.reduced_axes()
        if self.keep_dims:
            want = tuple(1 if i in axes else d for i, d in enumerate(shape))
        else:
            want = tuple(d for i, d in enumerate(shape) if i not in axes)
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")


class SoftmaxLikeOp(AscendOp, ABC):
    """SoftmaxV2 / LogSoftmaxV2: normalise over `axes` (default the last); the result has the operand's shape."""

    axes = ints_prop((-1,))

    def verify_shapes(self) -> None:
        x, y = self.operands[0], self.results[0]
        for a in self.axes:
            norm_axis(self, a, len(shape_of(x)), "axis")
        if not dims_match(shape_of(x), shape_of(y)):
            self.fail("expects the result shape to equal the operand shape")


def _pool_out(size: int, k: int, s: int, padding: str) -> int:
    """TF SAME/VALID output size; 0 or less when the window does not fit (-1: dynamic)."""
    if size < 0:
        return -1
    if padding == "SAME":
        return -(-size // s)
    return (size - k) // s + 1 if size >= k else 0


PAD_MODES = ("CALCULATED", "SAME", "VALID")
"""MaxPoolV3/AvgPoolV2 `padding_mode`: explicit `pads`, or TF's SAME/VALID rule."""


def pool_pads(size: int, k: int, s: int, mode: str, lo: int, hi: int) -> tuple[int, int]:
    """The (before, after) padding of one pooled dimension under `padding_mode`."""
    if mode == "VALID":
        return 0, 0
    if mode == "SAME":
        total = max((-(-size // s) - 1) * s + k - size, 0)
        return total // 2, total - total // 2
    return lo, hi


def pool_v2_out(size: int, k: int, s: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """Output size of one dimension with explicit pads (ONNX/PyTorch rule: with `ceil_mode` the
    last window must start inside the input or its leading pad); 0 when the window does not fit
    the padded input."""
    span = size + lo + hi - k
    if span < 0:
        return 0
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    return out


class WindowOp(AscendOp, ABC):
    """A TF-style pooling window: `ksize`, `strides` (4 entries in data_format order), `padding`
    (MaxPool / AvgPool and their gradients)."""

    ksize = ints_prop()
    strides = ints_prop()
    padding = str_prop("VALID")
    data_format = str_prop("NCHW")

    def verify_window(self, x: tuple[int, ...], y: tuple[int, ...]) -> None:
        """The window pools a rank-4 `x` over H and W into `y`."""
        if len(x) != 4:
            self.fail(f"expects a rank-4 input, got rank {len(x)}")
        k, s = self.ksize, self.strides
        if len(k) != 4 or len(s) != 4 or min(k) < 1 or min(s) < 1:
            self.fail("expects ksize and strides of 4 positive entries")
        c, h, w = spatial_dims(self.data_format)
        if any(k[i] != 1 or s[i] != 1 for i in (0, c)):
            self.fail(f"pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 on N and C")
        pad = self.padding
        want = list(x)
        want[h] = _pool_out(x[h], k[h], s[h], pad)
        want[w] = _pool_out(x[w], k[w], s[w], pad)
        if min(want[h], want[w]) == 0:
            self.fail(f"window {k[h]}x{k[w]} is larger than the {pad} padded input {x[h]}x{x[w]}")
        if not dims_match(want, y):
            self.fail(f"expects result shape {tuple(want)}, got {y}")


class PoolOp(WindowOp, ABC):
    """MaxPool / AvgPool: TF-style `ksize`, `strides` (4 entries in data_format order), `padding`."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        self.verify_window(shape_of(self.x), shape_of(self.y))


class PoolV2Op(AscendOp, ABC):
    """MaxPoolV3 / AvgPoolV2: `ksize`, `strides` (4 entries in data_format order), explicit
    `pads` [top, bottom, left, right] under `padding_mode` CALCULATED (SAME/VALID: TF's rule,
    pads ignored), `ceil_mode`, and `global_pooling` (the window is the whole H x W)."""

    x = operand_def(TensorType)
    y = result_def(TensorType)
    ksize = ints_prop()
    strides = ints_prop()
    padding_mode = str_prop("CALCULATED")
    pads = ints_prop((0, 0, 0, 0))
    data_format = str_prop("NCHW")
    global_pooling = bool_prop(False)
    ceil_mode = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x, y = shape_of(self.x), shape_of(self.y)
        if len(x) != 4:
            self.fail(f"expects a rank-4 input, got rank {len(x)}")
        k, s, p = self.ksize, self.strides, self.pads
        if len(k) != 4 or len(s) != 4 or min(k) < 1 or min(s) < 1:
            self.fail("expects ksize and strides of 4 positive entries")
        if len(p) != 4 or min(p) < 0:
            self.fail(f"expects pads of 4 non-negative entries [top, bottom, left, right], got {list(p)}")
        mode = self.padding_mode
        if mode not in PAD_MODES:
            self.fail(f"padding_mode must be one of {', '.join(PAD_MODES)}, got '{mode}'")
        c, h, w = spatial_dims(self.data_format)
        want = list(x)
        if self.global_pooling:
            want[h] = want[w] = 1
        else:
            if any(k[i] != 1 or s[i] != 1 for i in (0, c)):
                self.fail(f"pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 on N and C")
            for dim, lo, hi in ((h, p[0], p[1]), (w, p[2], p[3])):
                if mode == "CALCULATED" and max(lo, hi) >= k[dim]:
                    self.fail(f"pads {list(p)} must be smaller than the window {k[h]}x{k[w]}")
                if x[dim] < 0:
                    want[dim] = -1
                    continue
                lo, hi = pool_pads(x[dim], k[dim], s[dim], mode, lo, hi)
                want[dim] = pool_v2_out(x[dim], k[dim], s[dim], lo, hi, self.ceil_mode)
                if want[dim] == 0:
                    self.fail(
                        f"window {k[h]}x{k[w]} is larger than the padded input (dimension {dim}: {x[dim]} + pads {lo}, {hi})"
                    )
        if not dims_match(want, y):
            self.fail(f"expects result shape {tuple(want)}, got {y}")


def verify_channel_stats(
    op: AscendOp, x: tuple[int, ...], stats: list[tuple[int, ...]], data_format: str = "NCHW"
) -> None:
    """`x` is rank 4 and each of `stats` has one element per channel of `x`."""
    if len(x) != 4:
        op.fail(f"expects a rank-4 input, got rank {len(x)}")
    channels = x[spatial_dims(data_format)[0]]
    for s in stats:
        if not dims_match(s, (channels,)):
            op.fail(f"expects per-channel tensors of shape ({channels},), got {s}")


# --------------------------------------------------------------------------------------
# Softmax and reductions
# --------------------------------------------------------------------------------------


@irdl_op_definition
class SoftmaxV2Op(SoftmaxLikeOp):
    """Softmax over `axes` (default the last).

    ```mlir
    %y = ascend.SoftmaxV2 %x : (tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
    """

    name = "ascend.SoftmaxV2"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")


@irdl_op_definition
class LogSoftmaxV2Op(SoftmaxLikeOp):
    """Log-softmax over `axes` (default the last).

    ```mlir
    %y = ascend.LogSoftmaxV2 %x : (tensor<8x10xf32>) -> tensor<8x10xf32>
    ```
    """

    name = "ascend.LogSoftmaxV2"
    logits = operand_def(TensorType)
    logsoftmax = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("logits", "logsoftmax")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("logits", "logsoftmax")


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes`. ```mlir
    %s = ascend.ReduceSum %x {axes = array<i64: 0>} : (tensor<8x10xf32>) -> tensor<10xf32>
    ```"""

    name = "ascend.ReduceSum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over `axes`.

    ```mlir
    %m = ascend.ReduceMean %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
    ```
    """

    name = "ascend.ReduceMean"


class ExtremumReduceOp(ReduceOp, ABC):
    """ReduceMax / ReduceMin: an empty reduced axis is an error (the extremum of nothing is undefined)."""

    EXTREMUM: ClassVar[str] = "maximum"

    def verify_shapes(self) -> None:
        super().verify_shapes()
        x = shape_of(self.x)
        empty = [a for a in self.reduced_axes() if x[a] == 0]
        if empty:
            self.fail(
                f"reduces over the empty axis {empty[0]} of shape {x}: the {self.EXTREMUM} of no elements is undefined"
            )


@irdl_op_definition
class ReduceMaxOp(ExtremumReduceOp):
    """Maximum over `axes` (an empty axis is an error: the maximum of nothing is undefined).

    ```mlir
    %m = ascend.ReduceMax %x {axes = array<i64: -1>} : (tensor<8x10xf32>) -> tensor<8xf32>
    ```
    """

    name = "ascend.ReduceMax"


@irdl_op_definition
class ReduceMinOp(ExtremumReduceOp):
    """Minimum over `axes` (an empty axis is an error).

    ```mlir
    %m = ascend.ReduceMin %x {axes = array<i64: -1>} : (tensor<8x10xf32>) -> tensor<8xf32>
    ```
    """

    name = "ascend.ReduceMin"
    EXTREMUM: ClassVar[str] = "minimum"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over `axes` (1 over an empty axis).

    ```mlir
    %p = ascend.ReduceProd %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x10xf32>) -> tensor<8x1xf32>
    ```
    """

    name = "ascend.ReduceProd"


@irdl_op_definition
class CumsumDOp(AscendOp):
    """Cumulative sum along `axis`: `y[..., i, ...] = sum of x[..., j, ...]` over j <= i (j < i when
    `exclusive`; j >= i, or j > i, when `reverse`).

    ```mlir
    %y = ascend.CumsumD %x {axis = 1 : i64, exclusive = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    ```
    """

    name = "ascend.CumsumD"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    axis = int_prop(0)
    exclusive = bool_prop(False)
    reverse = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if not x:
            self.fail("expects an operand of rank >= 1")
        norm_axis(self, self.axis, len(x), "axis")
        if not dims_match(x, shape_of(self.y)):
            self.fail(f"expects the result shape {x}, got {shape_of(self.y)}")


@irdl_op_definition
class ArgMaxV2Op(AscendOp):
    """Index of the maximum along `dimension` (int32 result).

    ```mlir
    %i = ascend.ArgMaxV2 %x {dimension = 1 : i64} : (tensor<8x10xf32>) -> tensor<8xi32>
    ```
    """

    name = "ascend.ArgMaxV2"
    x = operand_def(TensorType)
    y = result_def(TensorType)
    dimension = int_prop(-1)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x",)

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        dim = norm_axis(self, self.dimension, len(x), "dimension")
        if len(x) and x[dim] == 0:
            self.fail(f"dimension {dim} of shape {x} is empty: the argmax of no elements is undefined")
        want = x[:dim] + x[dim + 1 :]
        if not dims_match(want, shape_of(self.y)):
            self.fail(f"expects result shape {want}, got {shape_of(self.y)}")
        assert isinstance(self.y.type, TensorType)
        if not isinstance(self.y.type.element_type, IntegerType):
            self.fail("expects an integer result")


# --------------------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------------------


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Max pooling. ```mlir
    %y = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
    ```"""

    name = "ascend.MaxPool"


@irdl_op_definition
class AvgPoolOp(PoolOp):
    """Average pooling (SAME padding averages over the valid elements only, as TF does).

    ```mlir
    %y = ascend.AvgPool %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>, padding = "SAME"} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16>
    ```
    """

    name = "ascend.AvgPool"


@irdl_op_definition
class MaxPoolV3Op(PoolV2Op):
    """Max pooling with explicit pads (padding never wins: it is -inf).

    ```mlir
    %y = ascend.MaxPoolV3 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
    ```
    """

    name = "ascend.MaxPoolV3"


@irdl_op_definition
class AvgPoolV2Op(PoolV2Op):
    """Average pooling with explicit pads. `exclusive` (CANN's default, ONNX's
    count_include_pad = 0) divides by the input elements in the window; otherwise by the
    elements inside the padded input (the ceil_mode overhang never counts, as in ONNX).

    ```mlir
    %y = ascend.AvgPoolV2 %x {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, exclusive = false} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16>
    ```
    """

    name = "ascend.AvgPoolV2"
    exclusive = bool_prop(True)


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


@irdl_op_definition
class BatchNormOp(AscendOp):
    """Batch normalisation over N, H, W; with `is_training` the batch statistics are used.

    ```mlir
    %y, %m, %v = ascend.BatchNorm %x, %s, %o, %mean, %var : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.BatchNorm"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    offset = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    y = result_def(TensorType)
    batch_mean = result_def(TensorType)
    batch_variance = result_def(TensorType)
    epsilon = float_prop(1e-4)
    data_format = str_prop("NCHW")
    is_training = bool_prop(True)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y", "scale", "offset", "mean", "variance")

    def verify_shapes(self) -> None:
        verify_channel_stats(
            self,
            shape_of(self.x),
            [shape_of(v) for v in self.operands[1:]] + [shape_of(r) for r in self.results[1:]],
            self.data_format,
        )
        if not dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects y to have the shape of x")


@irdl_op_definition
class BNInferOp(AscendOp):
    """Inference batch normalisation over channel axis 1 (NCHW, or N x C x ...):
    `y = (x - mean) / sqrt(variance + epsilon) * scale + offset`.

    ```mlir
    %y = ascend.BNInfer %x, %s, %o, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
    ```
    """

    name = "ascend.BNInfer"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    offset = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    y = result_def(TensorType)
    epsilon = float_prop(1e-5)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "scale", "offset", "mean", "variance", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if len(x) < 2:
            self.fail(f"expects an input of rank >= 2 (channels on axis 1), got rank {len(x)}")
        for v in self.operands[1:]:
            if not dims_match(shape_of(v), (x[1],)):
                self.fail(f"expects per-channel tensors of shape ({x[1]},), got {shape_of(v)}")
        if not dims_match(x, shape_of(self.y)):
            self.fail("expects y to have the shape of x")


@irdl_op_definition
class BNTrainingReduceOp(AscendOp):
    """Per-channel `sum` and `square_sum` of an NCHW batch (first half of training BatchNorm).

    ```mlir
    %s, %q = ascend.BNTrainingReduce %x : (tensor<2x4x8x8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.BNTrainingReduce"
    x = operand_def(TensorType)
    sum = result_def(TensorType)
    square_sum = result_def(TensorType)
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "sum", "square_sum")

    def verify_shapes(self) -> None:
        verify_channel_stats(self, shape_of(self.x), [shape_of(self.sum), shape_of(self.square_sum)])


@irdl_op_definition
class BNTrainingUpdateOp(AscendOp):
    """Normalises an NCHW batch from BNTrainingReduce's sums; updates running mean/variance by `factor`.

    ```mlir
    %y, %m2, %v2, %bm, %bv = ascend.BNTrainingUpdate %x, %s, %q, %g, %b, %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.BNTrainingUpdate"
    x = operand_def(TensorType)
    sum = operand_def(TensorType)
    square_sum = operand_def(TensorType)
    scale = operand_def(TensorType)
    offset = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    y = result_def(TensorType)
    mean_out = result_def(TensorType)
    variance_out = result_def(TensorType)
    batch_mean = result_def(TensorType)
    batch_variance = result_def(TensorType)
    factor = float_prop(0.1)
    epsilon = float_prop(1e-4)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "y")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("y", "mean", "variance", "batch_mean", "batch_variance")

    def verify_shapes(self) -> None:
        verify_channel_stats(
            self, shape_of(self.x), [shape_of(v) for v in self.operands[1:]] + [shape_of(r) for r in self.results[1:]]
        )
        if not dims_match(shape_of(self.x), shape_of(self.y)):
            self.fail("expects y to have the shape of x")


@irdl_op_definition
class LayerNormOp(AscendOp):
    """Layer normalisation over the dimensions from `begin_norm_axis`; gamma/beta cover `begin_params_axis` on.

    ```mlir
    %y, %m, %v = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
    ```
    """

    name = "ascend.LayerNorm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    y = result_def(TensorType)
    mean = result_def(TensorType)
    variance = result_def(TensorType)
    begin_norm_axis = int_prop(-1)
    begin_params_axis = int_prop(-1)
    epsilon = float_prop(1e-7)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "gamma", "beta", "y", "mean", "variance")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        norm = norm_axis(self, self.begin_norm_axis, len(x), "begin_norm_axis")
        params = norm_axis(self, self.begin_params_axis, len(x), "begin_params_axis")
        for v in (self.gamma, self.beta):
            if not dims_match(shape_of(v), x[params:]):
                self.fail(f"expects gamma and beta of shape {x[params:]}, got {shape_of(v)}")
        stat = x[:norm] + (1,) * (len(x) - norm)
        for r in (self.mean, self.variance):
            if not dims_match(shape_of(r), stat):
                self.fail(f"expects mean and variance of shape {stat}, got {shape_of(r)}")
        if not dims_match(x, shape_of(self.y)):
            self.fail("expects y to have the shape of x")


@irdl_op_definition
class InstanceNormOp(AscendOp):
    """Instance normalisation of a channels-first tensor (N, C, spatial...): each (n, c) plane is normalised
    over its spatial dimensions with the biased variance, then scaled by gamma[c] and shifted by beta[c];
    mean and variance have shape (N, C, 1, ...).

    ```mlir
    %y, %m, %v = ascend.InstanceNorm %x, %g, %b {epsilon = 1.0e-05 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
    ```
    """

    name = "ascend.InstanceNorm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    y = result_def(TensorType)
    mean = result_def(TensorType)
    variance = result_def(TensorType)
    data_format = str_prop("NCHW")
    epsilon = float_prop(1e-6)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "gamma", "beta", "y", "mean", "variance")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("x", "y")

    def verify_shapes(self) -> None:
        x = shape_of(self.x)
        if self.data_format != "NCHW":
            self.fail(
                f"supports the channels-first layout only (data_format NCHW, any rank >= 3), got '{self.data_format}'"
            )
        if len(x) < 3:
            self.fail(f"expects an operand of rank >= 3 (N, C, spatial...), got shape {x}")
        for v in (self.gamma, self.beta):
            if not dims_match(shape_of(v), x[1:2]):
                self.fail(f"expects gamma and beta of shape {x[1:2]}, got {shape_of(v)}")
        stat = x[:2] + (1,) * (len(x) - 2)
        for r in (self.mean, self.variance):
            if not dims_match(shape_of(r), stat):
                self.fail(f"expects mean and variance of shape {stat}, got {shape_of(r)}")
        if not dims_match(x, shape_of(self.y)):
            self.fail("expects y to have the shape of x")


# --------------------------------------------------------------------------------------
# Loss
# --------------------------------------------------------------------------------------


@irdl_op_definition
class SoftmaxCrossEntropyWithLogitsOp(AscendOp):
    """Per-example softmax cross-entropy `loss` [N] and its gradient `backprop` [N, C].

    ```mlir
    %l, %g = ascend.SoftmaxCrossEntropyWithLogits %z, %t : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
    ```
    """

    name = "ascend.SoftmaxCrossEntropyWithLogits"
    features = operand_def(TensorType)
    labels = operand_def(TensorType)
    loss = result_def(TensorType)
    backprop = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("features", "labels", "loss", "backprop")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("features", "labels")

    def verify_shapes(self) -> None:
        f = shape_of(self.features)
        if len(f) != 2 or not dims_match(f, shape_of(self.labels)) or not dims_match(f, shape_of(self.backprop)):
            self.fail("expects rank-2 features, labels and backprop of one shape")
        if not dims_match(shape_of(self.loss), f[:1]):
            self.fail(f"expects a loss of shape {f[:1]}, got {shape_of(self.loss)}")
