"""The `ascend` dialect: Ascend NPU operators named by their CANN op types.

Every op is a CANN op type verbatim (`ascend.MatMulV2`, `ascend.Conv2D`), with
CANN/TF attribute names (`transpose_x1`, `strides`, `pads`, `data_format`,
`axes`, `keep_dims`, ...). Operands and results are ranked tensors.

Each op may carry two dialect attributes that describe what the hardware can run:

* `caps = #ascend.caps<(f16, f16) -> f16, (f32, f32) -> f32, aicpu (f32, f32) -> f32>`:
  the kernel signatures (CANN's parallel dtype columns: column i of every input
  and output together is one kernel), each on the AI Core unless marked `aicpu`.
  A signature lists one dtype per operand *definition* of the op (an optional
  operand that is absent is skipped; a variadic one uses the same dtype for all
  of its values), then one per result.
* `list = #ascend.list<white|black|gray>`: the mixed-precision list kind
  (CANN's `precision_reduce` flag: true = white, false = black, absent = gray).

When an op does not carry them, the operator library supplies them
(`ascend_mp.opinfo`); the `ascend-attach-caps` pass writes them into the IR.
The verifier checks structure only (ranks, shapes, attribute ranges, dtype
agreement inside one kernel): whether a kernel exists for the dtypes is the
precision pass's question, so an fp32 graph holding an fp16-only Conv2D parses.

An optional `name` attribute holds the TF/ONNX node name that the
`keep_dtype` and `customize_dtypes` files refer to. A unit `keep_dtype` attribute
pins the op to its original dtype under every precision mode and policy (the
loss, loss scaling and optimizer updates carry it; see `AscendOp.keep_dtype`).

```mlir
%y = ascend.MatMulV2 %x, %w {transpose_x2 = true, name = "fc1"} : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
%r = ascend.Relu %y : (tensor<8x32xf32>) -> tensor<8x32xf32>
```

The package follows the op families (the interpreter's kernels use the same modules):
`attrs` (attributes, `Unit`, property declarations), `base` (`AscendOp`, shape helpers),
`cube`, `elementwise`, `reduce` (reductions, softmax, pooling, normalisation, loss),
`shape` (shape and data movement), `cast` (constants, casts, float status; the Cast
canonicalization), `grad` and `optim`. A new op goes in the module of its family and
in `OPS` below.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.ir import Dialect

from ascend_mp.dialects.ascend.attrs import (
    ENGINES,
    FORMATS,
    PADDINGS,
    CapsAttr,
    Kernel,
    ListKind,
    ListKindAttr,
    Unit,
    ValueProp,
    bool_prop,
    float_prop,
    from_attr,
    int_prop,
    ints_prop,
    str_prop,
    to_attr,
)
from ascend_mp.dialects.ascend.base import (
    AscendOp,
    broadcast_shape,
    cann_inputs,
    cann_outputs,
    check_op_facts,
    dims_match,
    norm_axis,
    op_type,
    operand_groups,
    shape_of,
    spatial_dims,
)
from ascend_mp.dialects.ascend.cast import (
    CastCanonicalization,
    CastOp,
    ConstOp,
    FloatStatusOp,
    NPUAllocFloatStatusOp,
    NPUClearFloatStatusOp,
    NPUGetFloatStatusOp,
)
from ascend_mp.dialects.ascend.cube import (
    BatchMatMulOp,
    BatchMatMulV2Op,
    Conv2DOp,
    ConvOp,
    DepthwiseConv2DOp,
    MatMulBase,
    MatMulOp,
    MatMulV2Op,
)
from ascend_mp.dialects.ascend.elementwise import (
    AddOp,
    BiasAddOp,
    BinaryOp,
    ClipByValueOp,
    CompareOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloatUnaryOp,
    FloorOp,
    GeluOp,
    GreaterOp,
    HardSigmoidOp,
    LeakyReluOp,
    LessOp,
    LogOp,
    LogicalAndOp,
    LogicalBinaryOp,
    LogicalNotOp,
    LogicalOrOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    NegOp,
    PowOp,
    RealDivOp,
    Relu6Op,
    ReluOp,
    RsqrtOp,
    SelectOp,
    SelectV2Op,
    SigmoidOp,
    SqrtOp,
    SquareOp,
    SubOp,
    TanhOp,
    UnaryOp,
)
from ascend_mp.dialects.ascend.grad import (
    AvgPoolGradOp,
    BNTrainingReduceGradOp,
    BNTrainingUpdateGradOp,
    BiasAddGradOp,
    Conv2DBackpropFilterOp,
    Conv2DBackpropInputOp,
    GeluGradOp,
    LayerNormGradOp,
    LeakyReluGradOp,
    MaxPoolGradOp,
    ReluGradOp,
    SigmoidGradOp,
    SoftmaxGradOp,
    TanhGradOp,
    UnaryGradOp,
)
from ascend_mp.dialects.ascend.optim import (
    ApplyAdamDOp,
    ApplyGradientDescentOp,
    ApplyMomentumDOp,
)
from ascend_mp.dialects.ascend.reduce import (
    PAD_MODES,
    ArgMaxV2Op,
    AvgPoolOp,
    AvgPoolV2Op,
    BNInferOp,
    BNTrainingReduceOp,
    BNTrainingUpdateOp,
    BatchNormOp,
    CumsumDOp,
    InstanceNormOp,
    LayerNormOp,
    LogSoftmaxV2Op,
    MaxPoolOp,
    MaxPoolV3Op,
    PoolOp,
    PoolV2Op,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceOp,
    ReduceProdOp,
    ReduceSumOp,
    SoftmaxCrossEntropyWithLogitsOp,
    SoftmaxLikeOp,
    SoftmaxV2Op,
    WindowOp,
    pool_pads,
    pool_v2_out,
    verify_channel_stats,
)
from ascend_mp.dialects.ascend.shape import (
    BroadcastToDOp,
    ConcatV2DOp,
    GatherV2DOp,
    OneHotOp,
    PadV3DOp,
    ReshapeOp,
    ResizeDOp,
    ScatterNdUpdateOp,
    StridedSliceDOp,
    TileDOp,
    TransposeOp,
    resize_taps,
)

__all__ = [  # noqa: RUF022 (grouped by module)
    "ENGINES", "FORMATS", "PADDINGS", "CapsAttr", "Kernel", "ListKind", "ListKindAttr", "Unit", "ValueProp",
    "bool_prop", "float_prop", "from_attr", "int_prop", "ints_prop", "str_prop", "to_attr", "AscendOp",
    "broadcast_shape", "cann_inputs", "cann_outputs", "check_op_facts", "dims_match", "norm_axis", "op_type",
    "operand_groups", "shape_of", "spatial_dims", "CastCanonicalization", "CastOp", "ConstOp",
    "FloatStatusOp", "NPUAllocFloatStatusOp", "NPUClearFloatStatusOp", "NPUGetFloatStatusOp", "BatchMatMulOp",
    "BatchMatMulV2Op", "Conv2DOp", "ConvOp", "DepthwiseConv2DOp", "MatMulBase", "MatMulOp", "MatMulV2Op",
    "AddOp", "BiasAddOp", "BinaryOp", "ClipByValueOp", "CompareOp", "EqualOp", "ErfOp", "ExpOp",
    "FloatUnaryOp", "FloorOp", "GeluOp", "GreaterOp", "HardSigmoidOp", "LeakyReluOp", "LessOp", "LogOp",
    "LogicalAndOp", "LogicalBinaryOp", "LogicalNotOp", "LogicalOrOp", "MaximumOp", "MinimumOp", "MulOp",
    "NegOp", "PowOp", "RealDivOp", "Relu6Op", "ReluOp", "RsqrtOp", "SelectOp", "SelectV2Op", "SigmoidOp",
    "SqrtOp", "SquareOp", "SubOp", "TanhOp", "UnaryOp", "AvgPoolGradOp", "BNTrainingReduceGradOp",
    "BNTrainingUpdateGradOp", "BiasAddGradOp", "Conv2DBackpropFilterOp", "Conv2DBackpropInputOp",
    "GeluGradOp", "LayerNormGradOp", "LeakyReluGradOp", "MaxPoolGradOp", "ReluGradOp", "SigmoidGradOp",
    "SoftmaxGradOp", "TanhGradOp", "UnaryGradOp", "ApplyAdamDOp", "ApplyGradientDescentOp",
    "ApplyMomentumDOp", "PAD_MODES", "ArgMaxV2Op", "AvgPoolOp", "AvgPoolV2Op", "BNInferOp",
    "BNTrainingReduceOp", "BNTrainingUpdateOp", "BatchNormOp", "CumsumDOp", "InstanceNormOp", "LayerNormOp", "LogSoftmaxV2Op", "MaxPoolOp",
    "MaxPoolV3Op", "PoolOp", "PoolV2Op", "ReduceMaxOp", "ReduceMeanOp", "ReduceMinOp", "ReduceOp", "ReduceProdOp", "ReduceSumOp",
    "SoftmaxCrossEntropyWithLogitsOp", "SoftmaxLikeOp", "SoftmaxV2Op", "WindowOp", "pool_pads", "pool_v2_out",
    "verify_channel_stats", "BroadcastToDOp", "ConcatV2DOp", "GatherV2DOp", "OneHotOp", "ReshapeOp",
    "StridedSliceDOp", "TileDOp", "TransposeOp", "PadV3DOp", "ResizeDOp", "ScatterNdUpdateOp", "resize_taps", "_spatial", "OPS", "OPS_BY_TYPE", "Ascend",
]

_spatial = spatial_dims  # the name passes/autodiff.py reads (kept for it)

OPS: tuple[type[AscendOp], ...] = (
    ConstOp,
    CastOp,
    MatMulOp,
    MatMulV2Op,
    BatchMatMulOp,
    BatchMatMulV2Op,
    Conv2DOp,
    DepthwiseConv2DOp,
    Conv2DBackpropInputOp,
    Conv2DBackpropFilterOp,
    BiasAddOp,
    AddOp,
    SubOp,
    MulOp,
    RealDivOp,
    MaximumOp,
    MinimumOp,
    PowOp,
    GreaterOp,
    LessOp,
    EqualOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalNotOp,
    SelectOp,
    SelectV2Op,
    NegOp,
    ReluOp,
    SquareOp,
    Relu6Op,
    ClipByValueOp,
    HardSigmoidOp,
    LeakyReluOp,
    ErfOp,
    GeluOp,
    SigmoidOp,
    TanhOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    FloorOp,
    SoftmaxV2Op,
    LogSoftmaxV2Op,
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    ReduceMinOp,
    ReduceProdOp,
    CumsumDOp,
    MaxPoolOp,
    AvgPoolOp,
    MaxPoolV3Op,
    AvgPoolV2Op,
    BatchNormOp,
    BNInferOp,
    BNTrainingReduceOp,
    BNTrainingUpdateOp,
    BNTrainingUpdateGradOp,
    BNTrainingReduceGradOp,
    LayerNormOp,
    InstanceNormOp,
    ReshapeOp,
    TransposeOp,
    ConcatV2DOp,
    GatherV2DOp,
    StridedSliceDOp,
    BroadcastToDOp,
    TileDOp,
    PadV3DOp,
    ResizeDOp,
    ScatterNdUpdateOp,
    ArgMaxV2Op,
    OneHotOp,
    SoftmaxCrossEntropyWithLogitsOp,
    ReluGradOp,
    LeakyReluGradOp,
    SigmoidGradOp,
    TanhGradOp,
    GeluGradOp,
    SoftmaxGradOp,
    BiasAddGradOp,
    MaxPoolGradOp,
    AvgPoolGradOp,
    LayerNormGradOp,
    ApplyGradientDescentOp,
    ApplyMomentumDOp,
    ApplyAdamDOp,
    NPUAllocFloatStatusOp,
    NPUClearFloatStatusOp,
    NPUGetFloatStatusOp,
)
"""Every op of the dialect, in the order the dialect registers them."""

for _cls in OPS:
    check_op_facts(_cls)

OPS_BY_TYPE: Mapping[str, type[AscendOp]] = {op.name.removeprefix("ascend."): op for op in OPS}
"""CANN op type (`"MatMulV2"`) -> op class."""

Ascend = Dialect("ascend", list(OPS), [CapsAttr, ListKindAttr])
