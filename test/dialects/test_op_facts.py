"""An op's facts are stated once, in its dialect definition, and every consumer agrees with them.

Registry checks over every op: a kernel whose unit is the op's `UNIT`, a library entry,
SAME_DTYPE/FLOAT_ONLY names that exist (checked at import by `check_op_facts`), and
attribute defaults that the interpreter reads from the op definition.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.irdl import OptionalDef, irdl_op_definition, operand_def, result_def

from ascend_mp.dialects import ascend
from ascend_mp.dialects.ascend import OPS, AscendOp, Unit, check_op_facts, op_type
from ascend_mp.interpreter import kernels as interp
from ascend_mp.interpreter.kernels import KERNELS, KernelError, OpSpec
from ascend_mp.opinfo import builtin_library

F32 = np.dtype(np.float32)


@pytest.mark.parametrize("cls", OPS, ids=lambda c: op_type(c))
def test_every_op_has_consistent_facts(cls: type[AscendOp]) -> None:
    name = op_type(cls)
    check_op_facts(cls)
    assert isinstance(cls.UNIT, Unit)
    assert KERNELS[name].unit == cls.UNIT, f"{name}: the kernel's unit is not the op's UNIT"
    info = builtin_library("ascend910").info(name)
    assert info.kernels, f"{name}: no kernel signature in the built-in library"
    fields = [n for n, _ in cls.get_irdl_definition().operands] + [n for n, _ in cls.get_irdl_definition().results]
    assert set(cls.SAME_DTYPE) <= set(fields) and set(cls.FLOAT_ONLY) <= set(fields)


@pytest.mark.parametrize("cls", OPS, ids=lambda c: op_type(c))
def test_interpreter_reads_declared_defaults(cls: type[AscendOp]) -> None:
    """OpSpec.attr gives the op's declared default for an absent attribute, and refuses an
    absent attribute that has no default (a required one)."""
    name = op_type(cls)
    spec = OpSpec(name, (F32,), (F32,))
    defaults = cls.attr_defaults()
    for prop, d in cls.get_irdl_definition().properties.items():
        if prop in defaults:
            assert spec.attr(prop) == defaults[prop]
        elif not isinstance(d, OptionalDef):
            with pytest.raises(KernelError, match=f"needs the attribute '{prop}'"):
                spec.attr(prop)
    assert OpSpec(name, (F32,), (F32,), attrs={"x_given": 3}).attr("x_given") == 3


def test_defaults_are_the_declared_ones() -> None:
    assert ascend.MaxPoolOp.attr_defaults() == {"padding": "VALID", "data_format": "NCHW"}
    assert ascend.ConcatV2DOp.attr_defaults() == {"concat_dim": 0}
    assert ascend.ApplyMomentumDOp.attr_defaults() == {"use_nesterov": False}
    assert ascend.Conv2DOp.attr_defaults()["pads"] == (0, 0, 0, 0)


def test_interpreter_states_no_attribute_default_of_its_own() -> None:
    source = "".join(
        p.read_text() for p in sorted(Path(interp.__file__).parents[1].rglob("*.py"))
    )  # the whole interpreter
    assert "attrs.get(" not in source, "read attributes with spec.attr(name): the default is the op's"


def test_cube_ops_are_the_matmuls_and_convolutions() -> None:
    cube = {op_type(c) for c in OPS if c.UNIT == Unit.CUBE}
    assert cube == {
        "MatMul",
        "MatMulV2",
        "BatchMatMul",
        "BatchMatMulV2",
        "Conv2D",
        "DepthwiseConv2D",
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
    }


def test_a_misspelt_same_dtype_name_is_refused() -> None:
    @irdl_op_definition
    class TypoOp(AscendOp):
        name = "ascend.TypoTest"
        x = operand_def(TensorType)
        y = result_def(TensorType)
        SAME_DTYPE: ClassVar[tuple[str, ...]] = ("x", "z")

    with pytest.raises(TypeError, match=r"ascend.TypoTest: SAME_DTYPE names \['z'\]"):
        check_op_facts(TypoOp)


def test_a_wrong_cann_outputs_count_is_refused() -> None:
    @irdl_op_definition
    class OutsOp(AscendOp):
        name = "ascend.OutsTest"
        x = operand_def(TensorType)
        y = result_def(TensorType)
        CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("a", "b")

    with pytest.raises(TypeError, match="CANN_OUTPUTS has 2 names for 1 results"):
        check_op_facts(OutsOp)
