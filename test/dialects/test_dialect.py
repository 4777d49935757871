"""The ascend dialect: registry facts, Python construction, generic round trip."""

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import TensorType, f16, f32

from ascend_mp.dialects import ascend
from ascend_mp.errors import AscendError
from ascend_mp.ir import make_context, parse_module, print_module
from ascend_mp.passes import PASSES

DIALECT_TESTS = Path(__file__).parents[1] / "filecheck" / "dialect"

REQUIRED_OPS = """Const MatMul MatMulV2 BatchMatMul Conv2D DepthwiseConv2D BiasAdd Add Sub Mul RealDiv Neg Maximum
Minimum Relu LeakyRelu Gelu Sigmoid Tanh Exp Log Sqrt Rsqrt Square Pow Floor SoftmaxV2 LogSoftmaxV2 ReduceSum
ReduceMean ReduceMax MaxPool AvgPool BatchNorm BNTrainingReduce BNTrainingUpdate LayerNorm Reshape Transpose ConcatV2D
Cast ArgMaxV2 OneHot SoftmaxCrossEntropyWithLogits ReluGrad SigmoidGrad TanhGrad GeluGrad SoftmaxGrad BiasAddGrad
Conv2DBackpropInput Conv2DBackpropFilter MaxPoolGrad AvgPoolGrad LayerNormGrad ApplyGradientDescent ApplyMomentumD
ApplyAdamD NPUAllocFloatStatus NPUClearFloatStatus NPUGetFloatStatus""".split()


def test_every_design_op_exists_under_its_cann_name() -> None:
    missing = [op for op in REQUIRED_OPS if op not in ascend.OPS_BY_TYPE]
    assert not missing
    for name, cls in ascend.OPS_BY_TYPE.items():
        assert cls.name == f"ascend.{name}"
    assert {op.name for op in ascend.Ascend.operations} == {f"ascend.{n}" for n in ascend.OPS_BY_TYPE}


def test_every_op_appears_in_a_round_trip_test() -> None:
    text = "".join(p.read_text() for p in DIALECT_TESTS.glob("*.mlir"))
    untested = [name for name in ascend.OPS_BY_TYPE if f"ascend.{name} " not in text]
    assert not untested


def test_every_pass_name_equals_its_key() -> None:
    for key, factory in PASSES.items():
        assert factory().name == key


def test_python_construction_and_defaults() -> None:
    x = TensorType(f32, [4, 8])
    w = TensorType(f32, [8, 16])
    from xdsl.ir import Block

    block = Block(arg_types=[x, w])
    op = ascend.MatMulV2Op(
        block.args[0], block.args[1], None, result_types=[TensorType(f32, [4, 16])], transpose_x1=False, name="fc"
    )
    block.add_op(op)
    op.verify()
    assert op.transpose_x2 is False
    assert op.node_name is not None and op.node_name.data == "fc"
    assert ascend.operand_groups(op) == [[block.args[0]], [block.args[1]], []]
    relu = ascend.ReluOp(op, result_types=[TensorType(f32, [4, 16])])
    block.add_op(relu)
    relu.verify()
    cast = ascend.CastOp(relu, result_types=[TensorType(f16, [4, 16])])
    block.add_op(cast)
    cast.verify()


def test_cann_port_names() -> None:
    assert ascend.cann_inputs(ascend.Conv2DOp) == ("x", "filter", "bias")
    assert ascend.cann_outputs(ascend.ApplyMomentumDOp) == ("var", "accum")
    assert ascend.cann_outputs(ascend.SoftmaxCrossEntropyWithLogitsOp) == ("loss", "backprop")


@pytest.mark.parametrize(
    "path", sorted(p for p in DIALECT_TESTS.glob("*.mlir") if "invalid" not in p.name), ids=lambda p: p.name
)
def test_generic_round_trip_is_lossless(path: Path) -> None:
    ctx = make_context()
    for i, chunk in enumerate(path.read_text().split("// -----")):
        module = parse_module(chunk, f"{path.name}#{i}", ctx)
        generic = print_module(module, generic=True)
        again = parse_module(generic, "generic", ctx)
        assert print_module(again) == print_module(module)
        assert print_module(again, generic=True) == generic


def test_verifier_accepts_fp32_graph_with_fp16_only_conv() -> None:
    """Deciding what to do with an unsupported dtype is the precision pass's job, not the verifier's."""
    parse_module(
        """func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
          %0 = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
          func.return %0 : tensor<1x4x6x6xf32>
        }"""
    )


def test_parse_and_verify_errors_are_one_line_with_location() -> None:
    with pytest.raises(AscendError) as info:
        parse_module(
            "func.func @f(%x: tensor<4xf32>) {\n  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<5xf32>\n  func.return\n}",
            "m.mlir",
        )
    assert str(info.value) == "m.mlir:2:3: 'ascend.Relu' op expects the result shape to equal the operand shape"
    with pytest.raises(AscendError) as info:
        parse_module("func.func @f(%x: tensor<4xf32>) {\n  %0 = ascend.Relu %x : tensor<4xf32>\n}", "m.mlir")
    assert str(info.value).startswith("m.mlir:2:")
    assert "\n" not in str(info.value)


def test_plain_xdsl_opt_sees_the_dialect_and_passes() -> None:
    """The xdsl.universe entry point: `xdsl-opt` parses ascend IR and lists the passes."""
    src = (DIALECT_TESTS / "cube.mlir").read_text().split("// -----")[2]
    bin_dir = Path(sys.executable).parent
    out = subprocess.run([bin_dir / "xdsl-opt", "-p", "ascend-attach-caps"], input=src, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "ascend.Conv2D" in out.stdout and "#ascend.caps<" in out.stdout
    helptext = subprocess.run([bin_dir / "xdsl-opt", "--help"], capture_output=True, text=True).stdout
    assert "ascend-attach-caps" in helptext
