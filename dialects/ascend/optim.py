"""Optimizer ops of the `ascend` dialect (functional: they return the updated state).

On Ascend their var/slot outputs are ref outputs (`VARIABLE_UPDATE`), as TF's ref and
resource optimizers.

```mlir
%w2 = ascend.ApplyGradientDescent %w, %lr, %g : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
```
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from ascend_mp.dialects.ascend.attrs import bool_prop
from ascend_mp.dialects.ascend.base import AscendOp, dims_match, shape_of


def _verify_slots(op: AscendOp, slots: Sequence[SSAValue], scalars: Sequence[SSAValue]) -> None:
    shape = shape_of(slots[0])
    for v in (*slots, *op.results):
        if not dims_match(shape_of(v), shape):
            op.fail(f"expects the variable, its slots, gradient and results to share the shape {shape}")
    for v in scalars:
        if prod(shape_of(v)) != 1:
            op.fail(f"expects scalar hyper-parameters, got shape {shape_of(v)}")


@irdl_op_definition
class ApplyGradientDescentOp(AscendOp):
    """`var - alpha * delta`. ```mlir
    %w2 = ascend.ApplyGradientDescent %w, %lr, %g : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    ```"""

    name = "ascend.ApplyGradientDescent"
    var = operand_def(TensorType)
    alpha = operand_def(TensorType)
    delta = operand_def(TensorType)
    var_out = result_def(TensorType)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("var", "alpha", "delta", "var_out")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ("var", "alpha", "delta", "var_out")
    VARIABLE_UPDATE: ClassVar[bool] = True
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var",)

    def verify_shapes(self) -> None:
        _verify_slots(self, [self.var, self.delta], [self.alpha])


@irdl_op_definition
class ApplyMomentumDOp(AscendOp):
    """`accum = accum * momentum + grad; var -= lr * accum` (Nesterov: `var -= lr * (grad + momentum * accum)`).

    ```mlir
    %w2, %a2 = ascend.ApplyMomentumD %w, %acc, %lr, %g, %mom : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>, tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
    ```
    """

    name = "ascend.ApplyMomentumD"
    var = operand_def(TensorType)
    accum = operand_def(TensorType)
    lr = operand_def(TensorType)
    grad = operand_def(TensorType)
    momentum = operand_def(TensorType)
    var_out = result_def(TensorType)
    accum_out = result_def(TensorType)
    use_nesterov = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = ("var", "accum", "lr", "grad", "momentum", "var_out", "accum_out")
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = SAME_DTYPE
    VARIABLE_UPDATE: ClassVar[bool] = True
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var", "accum")

    def verify_shapes(self) -> None:
        _verify_slots(self, [self.var, self.accum, self.grad], [self.lr, self.momentum])


@irdl_op_definition
class ApplyAdamDOp(AscendOp):
    """Adam: `m, v` moments; `lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)`.

    ```mlir
    %w2, %m2, %v2 = ascend.ApplyAdamD %w, %m, %v, %b1p, %b2p, %lr, %b1, %b2, %eps, %g : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "ascend.ApplyAdamD"
    var = operand_def(TensorType)
    m = operand_def(TensorType)
    v = operand_def(TensorType)
    beta1_power = operand_def(TensorType)
    beta2_power = operand_def(TensorType)
    lr = operand_def(TensorType)
    beta1 = operand_def(TensorType)
    beta2 = operand_def(TensorType)
    epsilon = operand_def(TensorType)
    grad = operand_def(TensorType)
    var_out = result_def(TensorType)
    m_out = result_def(TensorType)
    v_out = result_def(TensorType)
    use_locking = bool_prop(False)
    use_nesterov = bool_prop(False)
    SAME_DTYPE: ClassVar[tuple[str, ...]] = (
        "var",
        "m",
        "v",
        "beta1_power",
        "beta2_power",
        "lr",
        "beta1",
        "beta2",
        "epsilon",
        "grad",
        "var_out",
        "m_out",
        "v_out",
    )
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = SAME_DTYPE
    VARIABLE_UPDATE: ClassVar[bool] = True
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = ("var", "m", "v")

    def verify_shapes(self) -> None:
        _verify_slots(self, [self.var, self.m, self.v, self.grad], self.operands[3:9])
