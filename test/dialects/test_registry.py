"""The dialect's registry: every op of `OPS` is registered, sits in the module of its family, and
shows a docstring example that parses and verifies. (That every op has a kernel and a library
entry is test_op_facts.py's `test_every_op_has_consistent_facts`.)"""

from __future__ import annotations

import re

import pytest
from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, TensorType, f32
from xdsl.ir import Block

from ascend_mp.dialects import ascend
from ascend_mp.dialects.ascend import OPS, AscendOp
from ascend_mp.ir import parse_module, print_module

FAMILIES = {
    "cube": "MatMul MatMulV2 BatchMatMul BatchMatMulV2 Conv2D DepthwiseConv2D",
    "elementwise": """BiasAdd Add Sub Mul RealDiv Maximum Minimum Pow Greater Less Equal LogicalAnd LogicalOr
        LogicalNot Select SelectV2 Neg Relu Square Relu6 ClipByValue HardSigmoid LeakyRelu Erf Gelu Sigmoid Tanh Exp
        Log Sqrt Rsqrt Floor""",
    "reduce": """SoftmaxV2 LogSoftmaxV2 ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ArgMaxV2 MaxPool AvgPool MaxPoolV3 AvgPoolV2
        BatchNorm BNInfer BNTrainingReduce BNTrainingUpdate LayerNorm InstanceNorm CumsumD SoftmaxCrossEntropyWithLogits""",
    "shape": "Reshape Transpose ConcatV2D GatherV2D StridedSliceD BroadcastToD TileD OneHot PadV3D ResizeD ScatterNdUpdate UnsortedSegmentSumD",
    "cast": "Const Cast NPUAllocFloatStatus NPUClearFloatStatus NPUGetFloatStatus",
    "grad": """Conv2DBackpropInput Conv2DBackpropFilter ReluGrad LeakyReluGrad SigmoidGrad TanhGrad GeluGrad
        SoftmaxGrad BiasAddGrad MaxPoolGrad AvgPoolGrad LayerNormGrad BNTrainingUpdateGrad BNTrainingReduceGrad""",
    "optim": "ApplyGradientDescent ApplyMomentumD ApplyAdamD",
}
"""The op families (the interpreter's kernel modules use the same names)."""


def _type(cls: type[AscendOp]) -> str:
    return cls.name.removeprefix("ascend.")


FAMILY_OF = {op: family for family, ops in FAMILIES.items() for op in ops.split()}


def test_ops_are_the_dialects_operations_once_each() -> None:
    assert len(set(OPS)) == len(OPS)
    assert list(ascend.Ascend.operations) == list(OPS)
    assert {op.name for op in ascend.Ascend.operations} == {f"ascend.{t}" for t in ascend.OPS_BY_TYPE}
    assert set(FAMILY_OF) == {_type(c) for c in OPS}, "an op without a family, or a family entry without an op"


@pytest.mark.parametrize("cls", OPS, ids=lambda c: _type(c))
def test_every_op_sits_in_its_family_module(cls: type[AscendOp]) -> None:
    assert cls.__module__ == f"ascend_mp.dialects.ascend.{FAMILY_OF[_type(cls)]}"


def _example_function(cls: type[AscendOp]) -> str:
    """The docstring's mlir example as a function whose arguments are the values it uses."""
    found = re.search(r"```mlir\n(.*?)```", cls.__doc__ or "", re.S)
    assert found, f"{cls.name}: no ```mlir example in the docstring"
    defined: set[str] = set()
    args: dict[str, str] = {}
    body: list[str] = []
    for line in (raw.strip() for raw in found.group(1).splitlines()):
        if not line or "dense_resource<" in line:  # a blob needs a module's resource section (dense-resource.mlir)
            continue
        line = line.split("  //")[0].rstrip()
        results, rest = line.split(" = ", 1)
        op_text, types = rest.rsplit(" : ", 1)
        operands = re.findall(r"%\w+", op_text.split(" {")[0])
        if operands:
            assert types.startswith("("), line
            in_types = types[1 : types.index(")")].split(", ")
            assert len(in_types) == len(operands), line
            for name, type_ in zip(operands, in_types):
                if name not in defined:
                    args.setdefault(name, type_)
        defined.update(r.strip() for r in results.split(","))
        body.append(f"  {line}")
    assert body, f"{cls.name}: the example holds no op"
    signature = ", ".join(f"{n}: {t}" for n, t in args.items())
    return f"func.func @example({signature}) {{\n" + "\n".join(body) + "\n  func.return\n}\n"


@pytest.mark.parametrize("cls", OPS, ids=lambda c: _type(c))
def test_every_op_docstring_example_parses_and_verifies(cls: type[AscendOp]) -> None:
    module = parse_module(_example_function(cls))
    module.verify()
    assert any(isinstance(op, cls) for op in module.walk())


# --------------------------------------------------------------------------------------
# Typed property reads (ValueProp)
# --------------------------------------------------------------------------------------

X = TensorType(f32, [2, 3, 4])


def _reduce(**props: object) -> ascend.ReduceSumOp:
    return ascend.ReduceSumOp(Block(arg_types=[X]).args[0], result_types=[TensorType(f32, [2, 1, 4])], **props)


def test_declared_properties_read_as_python_values() -> None:
    op = _reduce(axes=[1], keep_dims=True)
    assert op.axes == (1,) and op.keep_dims is True
    assert isinstance(op.properties["axes"], DenseArrayBase) and op.axes_attr is op.properties["axes"]  # pyright: ignore[reportAttributeAccessIssue] (declared by ValueProp)
    ln = parse_module(
        """func.func @f(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  %y, %m, %v = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  func.return
}
"""
    )
    op = next(o for o in ln.walk() if isinstance(o, ascend.LayerNormOp))
    assert (op.begin_norm_axis, op.begin_params_axis) == (1, 1)
    assert op.epsilon == pytest.approx(1e-5, rel=1e-6)  # an f32 attribute
    pool = ascend.MaxPoolOp(op.x, result_types=[op.x.type], ksize=[1, 1, 1, 1], strides=[1, 1, 1, 1])
    assert (pool.padding, pool.data_format) == ("VALID", "NCHW")  # declared defaults


def test_an_absent_property_reads_as_its_declared_default() -> None:
    op = _reduce(axes=[1], keep_dims=True)
    del op.properties["keep_dims"]
    assert op.keep_dims is False
    del op.properties["axes"]
    assert op.axes == ()
    pool = ascend.MaxPoolOp(op.x, result_types=[X], ksize=[1, 1, 1, 1], strides=[1, 1, 1, 1])
    del pool.properties["ksize"]  # required: no default to fall back on
    with pytest.raises(KeyError, match="ascend.MaxPool has no 'ksize' property"):
        _ = pool.ksize


def test_writing_a_property_stores_the_attribute_construction_would() -> None:
    built = _reduce(axes=[1], keep_dims=True)
    op = _reduce(axes=[0])
    op.axes = (1,)
    op.keep_dims = True
    assert op.properties == built.properties
    assert op.properties["keep_dims"] == BoolAttr.from_bool(True)
    hs = ascend.HardSigmoidOp(op.x, result_types=[X])
    hs.alpha = 0.25
    assert hs.properties["alpha"] == FloatAttr(0.25, f32)
    sl = ascend.StridedSliceDOp(op.x, result_types=[X], begin=[0], end=[1], strides=[1])
    sl.begin_mask = 1
    assert sl.properties["begin_mask"] == IntegerAttr(1, 64)
    ba = ascend.BiasAddOp(op.x, op.x, result_types=[X])
    ba.data_format = "NHWC"
    assert ba.properties["data_format"] == StringAttr("NHWC") and ba.data_format == "NHWC"


def test_a_typed_read_prints_nothing_new() -> None:
    """Reading every property of a parsed module leaves its printed form as it was."""
    text = """func.func @f(%x: tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16> {
  %0 = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x4x4xf16>
  func.return %0 : tensor<1x4x4x4xf16>
}
"""
    module = parse_module(text)
    before = print_module(module)
    pool = next(o for o in module.walk() if isinstance(o, ascend.MaxPoolOp))
    assert (pool.ksize, pool.strides, pool.padding, pool.data_format) == ((1, 1, 2, 2), (1, 1, 2, 2), "VALID", "NCHW")
    assert print_module(module) == before
