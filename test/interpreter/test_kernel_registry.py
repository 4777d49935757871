"""The kernel registry follows the op families: each module of `ascend_mp.interpreter.kernels` registers
exactly the kernels of its family's ops (the families written out below, as the dialect groups its ops),
every op of the dialect has one kernel, and importing the package registers them in family order."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from ascend_mp.dialects.ascend import OPS, op_type
from ascend_mp.interpreter import kernels
from ascend_mp.interpreter.kernels import FAMILIES, IN_PLACE, KERNELS

FAMILY_OPS = {
    "cube": {"MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2", "Conv2D", "DepthwiseConv2D"},
    "elementwise": {
        "BiasAdd",
        "Add",
        "Sub",
        "Mul",
        "RealDiv",
        "Maximum",
        "Minimum",
        "Pow",
        "Greater",
        "Less",
        "Equal",
        "LogicalAnd",
        "LogicalOr",
        "LogicalNot",
        "Select",
        "SelectV2",
        "Neg",
        "Relu",
        "Square",
        "Relu6",
        "ClipByValue",
        "HardSigmoid",
        "LeakyRelu",
        "Erf",
        "Gelu",
        "Sigmoid",
        "Tanh",
        "Exp",
        "Log",
        "Sqrt",
        "Rsqrt",
        "Floor",
    },
    "reduce": {
        "SoftmaxV2",
        "LogSoftmaxV2",
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ArgMaxV2",
        "MaxPool",
        "AvgPool",
        "MaxPoolV3",
        "AvgPoolV2",
        "BatchNorm",
        "BNInfer",
        "BNTrainingReduce",
        "BNTrainingUpdate",
        "LayerNorm",
        "InstanceNorm",
        "CumsumD",
        "SoftmaxCrossEntropyWithLogits",
    },
    "shape": {
        "Reshape",
        "Transpose",
        "ConcatV2D",
        "GatherV2D",
        "StridedSliceD",
        "BroadcastToD",
        "TileD",
        "OneHot",
        "PadV3D",
        "ResizeD",
        "ScatterNdUpdate",
        "UnsortedSegmentSumD",
    },
    "cast": {"Const", "Cast", "NPUAllocFloatStatus", "NPUClearFloatStatus", "NPUGetFloatStatus"},
    "grad": {
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "ReluGrad",
        "LeakyReluGrad",
        "SigmoidGrad",
        "TanhGrad",
        "GeluGrad",
        "SoftmaxGrad",
        "BiasAddGrad",
        "MaxPoolGrad",
        "AvgPoolGrad",
        "LayerNormGrad",
        "BNTrainingUpdateGrad",
        "BNTrainingReduceGrad",
    },
    "optim": {"ApplyGradientDescent", "ApplyMomentumD", "ApplyAdamD"},
}
"""The op families (the dialect's), written out."""


def registered_in_source(family: str) -> set[str]:
    """The op types a family module's source passes to `kernel(...)` (read from the file, not from the registry)."""
    path = Path(kernels.__file__).parent / f"{family}.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "kernel":
            found |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found


def test_the_families_are_the_dialects() -> None:
    assert set(FAMILIES) == set(FAMILY_OPS)
    every = [t for ops in FAMILY_OPS.values() for t in ops]
    assert len(every) == len(set(every)), "an op in two families"
    assert set(every) == {op_type(c) for c in OPS}, "the families are not the dialect's ops"


@pytest.mark.parametrize("family", sorted(FAMILY_OPS))
def test_each_family_module_registers_exactly_its_ops(family: str) -> None:
    assert registered_in_source(family) == FAMILY_OPS[family]
    assert {t for t, kd in KERNELS.items() if kd.family == family} == FAMILY_OPS[family]
    module = importlib.import_module(f"ascend_mp.interpreter.kernels.{family}")
    assert module.__name__.rpartition(".")[2] == family


def test_every_op_has_one_kernel_and_registration_follows_the_family_order() -> None:
    assert set(KERNELS) == {op_type(c) for c in OPS}
    order = [FAMILIES.index(kd.family) for kd in KERNELS.values()]
    assert order == sorted(order), "kernels registered out of family order"


def test_in_place_variants_live_with_their_ops_kernel() -> None:
    assert IN_PLACE, "no in-place variants registered"
    for op, (_, build) in IN_PLACE.items():
        assert op in KERNELS
        assert build.__module__ == f"ascend_mp.interpreter.kernels.{KERNELS[op].family}", op
