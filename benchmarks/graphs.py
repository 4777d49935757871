"""Synthetic graphs for the benchmarks: chains of MatMulV2 -> Add -> Relu blocks, SoftmaxV2 every 4th block."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

from ascend_mp.dialects.ascend import AddOp, MatMulV2Op, ReluOp, SoftmaxV2Op

SIZE = 16


def chain_module(n_ops: int) -> ModuleOp:
    """An fp32 function of about `n_ops` ops (3 per block, plus a SoftmaxV2 every 4th block)."""
    t = TensorType(f32, [SIZE, SIZE])
    block = Block(arg_types=[t, t, t])
    x, w, b = block.args
    value = x
    count = 0
    i = 0
    while count < n_ops:
        mm = MatMulV2Op(value, w, None, result_types=[t])
        add = AddOp(mm, b, result_types=[t])
        relu = ReluOp(add, result_types=[t])
        block.add_ops([mm, add, relu])
        value = relu.results[0]
        count += 3
        if i % 4 == 3:
            soft = SoftmaxV2Op(value, result_types=[t])
            block.add_op(soft)
            value = soft.results[0]
            count += 1
        i += 1
    block.add_op(func.ReturnOp(value))
    fn = func.FuncOp("chain", ((t, t, t), (t,)), Region(block))
    return ModuleOp([fn])
