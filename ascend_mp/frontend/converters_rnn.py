"""Converters of ONNX's recurrent layers (LSTM, GRU), unrolled over time into ops every precision mode places
per op. Registered in `registry.CONVERTERS` like every converter; the importer loads this module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend
from ascend_mp.frontend.converters import _dtype, _need_const, _scalar, _slice_axis, _unsupported
from ascend_mp.frontend.registry import converter

if TYPE_CHECKING:
    from ascend_mp.frontend.onnx_import import Converter
    from ascend_mp.frontend.registry import Node


# --------------------------------------------------------------------------------------
# Recurrent layers, unrolled over time
# --------------------------------------------------------------------------------------
# CANN's DynamicRNN / DynamicGRUV2 are fp16-only fused ops (the op table lists them white);
# unrolled, each step is MatMulV2 + Add + Sigmoid/Tanh + Mul, ops every precision mode
# already places per op, so fp32 runs exactly and the modes decide each matmul and
# activation as for any other graph. The input projection of every step is one MatMulV2.


class _Rnn:
    """What the LSTM and GRU converters share: attributes, per-direction weights, slicing."""

    def __init__(self, cx: Converter, node: Node, gates: int) -> None:
        self.cx, self.node, self.gates = cx, node, gates
        direction = node.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise _unsupported(cx, node, f"direction '{direction}' is not one of forward, reverse, bidirectional")
        self.directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
        if node.attr("clip") is not None:
            raise _unsupported(cx, node, "the clip attribute is not supported")
        if node.attr("activations") is not None:
            raise _unsupported(cx, node, "only the default activations are supported")
        if node.input(4) is not None:
            lens = cx.const(node.input(4))
            if lens is None or not (lens == self.seq_shape()[0]).all():
                raise _unsupported(cx, node, "sequence_lens must be absent or a constant equal to the sequence length")
        self.layout = int(node.attr("layout", 0))
        self.hidden = int(node.attr("hidden_size"))
        x = cx.value(node.inputs[0])
        if self.layout:
            x = cx.emit(ascend.TransposeOp, [x], cx.tensor(self.seq_shape(), _dtype(x)), perm=[1, 0, 2])
        self.x, self.dtype = x, _dtype(x)
        self.w = _need_const(cx, node, 1, "W")
        self.r = _need_const(cx, node, 2, "R")
        b = (
            cx.const(node.input(3))
            if node.input(3)
            else np.zeros((len(self.directions), 2 * gates * self.hidden), np.float32)
        )
        if b is None:
            raise _unsupported(cx, node, "B (input 3) must be a constant")
        self.b = b

    def seq_shape(self) -> tuple[int, int, int]:
        s = self.cx.shape(self.node.inputs[0])
        return (s[1], s[0], s[2]) if int(self.node.attr("layout", 0)) else (s[0], s[1], s[2])

    def t(self, shape: Sequence[int]) -> Any:
        return self.cx.tensor(shape, self.dtype)

    def const(self, array: np.ndarray[Any, Any], what: str) -> SSAValue:
        return self.cx.new_const(np.ascontiguousarray(array, np.float32), f"{self.node.name}/{what}", self.dtype)

    def input_projection(self, d: int, bias: np.ndarray[Any, Any]) -> SSAValue:
        """X W^T + bias for every step at once: [seq, batch, gates * hidden]."""
        seq, batch, feat = self.seq_shape()
        gh = self.gates * self.hidden
        flat = self.cx.emit(ascend.ReshapeOp, [self.x], self.t((seq * batch, feat)))
        y = self.cx.emit(ascend.MatMulV2Op, [flat, self.const(self.w[d].T, f"W{d}_t")], self.t((seq * batch, gh)))
        y = self.cx.emit(ascend.AddOp, [y, self.const(bias, f"Wb{d}")], self.t((seq * batch, gh)))
        return self.cx.emit(ascend.ReshapeOp, [y], self.t((seq, batch, gh)))

    def step_input(self, xw: SSAValue, step: int) -> SSAValue:
        _, batch, _ = self.seq_shape()
        gh = self.gates * self.hidden
        row = _slice_axis(self.cx, xw, 0, step, step + 1, self.t((1, batch, gh)))
        return self.cx.emit(ascend.ReshapeOp, [row], self.t((batch, gh)))

    def gate(self, v: SSAValue, k: int) -> SSAValue:
        batch = ascend.shape_of(v)[0]
        return _slice_axis(self.cx, v, 1, k * self.hidden, (k + 1) * self.hidden, self.t((batch, self.hidden)))

    def initial(self, index: int, d: int) -> SSAValue:
        _, batch, _ = self.seq_shape()
        name = self.node.input(index)
        if name is None:
            return self.const(np.zeros((batch, self.hidden)), f"zero_state{index}")
        v = self.cx.value(name)  # [num_dir, batch, hidden]; layout=1: [batch, num_dir, hidden]
        axis = 1 if self.layout else 0
        row = _slice_axis(
            self.cx, v, axis, d, d + 1, self.t((batch, 1, self.hidden) if self.layout else (1, batch, self.hidden))
        )
        return self.cx.emit(ascend.ReshapeOp, [row], self.t((batch, self.hidden)))

    def op(self, cls: type[ascend.AscendOp], *xs: SSAValue) -> SSAValue:
        return self.cx.emit(cls, list(xs), self.t(ascend.shape_of(xs[0])))

    def bind_outputs(self, per_dir: list[tuple[list[SSAValue], list[SSAValue]]]) -> None:
        """per_dir[d] = (H of every step in time order, final states [Y_h, Y_c?])."""
        cx, node = self.cx, self.node
        seq, batch, _ = self.seq_shape()
        nd, hid = len(per_dir), self.hidden
        outs = list(node.outputs) + [""] * 3
        if outs[0]:
            steps = [
                cx.emit(ascend.ReshapeOp, [h], self.t((1, 1, batch, hid))) for h in sum((hs for hs, _ in per_dir), [])
            ]
            by_dir = [
                cx.emit(
                    ascend.ConcatV2DOp, [steps[d * seq : (d + 1) * seq]], self.t((seq, 1, batch, hid)), concat_dim=0
                )
                if seq > 1
                else steps[d * seq]
                for d in range(nd)
            ]
            y = (
                cx.emit(ascend.ConcatV2DOp, [by_dir], self.t((seq, nd, batch, hid)), concat_dim=1)
                if nd > 1
                else by_dir[0]
            )
            if self.layout:
                y = cx.emit(ascend.TransposeOp, [y], self.t((batch, seq, nd, hid)), perm=[2, 0, 1, 3])
            cx.bind(outs[0], cx.emit(ascend.ReshapeOp, [y], outs[0]))
        for k in range(len(per_dir[0][1])):
            if not outs[k + 1]:
                continue
            finals = [cx.emit(ascend.ReshapeOp, [states[k]], self.t((1, batch, hid))) for _, states in per_dir]
            y = cx.emit(ascend.ConcatV2DOp, [finals], self.t((nd, batch, hid)), concat_dim=0) if nd > 1 else finals[0]
            if self.layout:
                y = cx.emit(ascend.TransposeOp, [y], self.t((batch, nd, hid)), perm=[1, 0, 2])
            cx.bind(outs[k + 1], cx.emit(ascend.ReshapeOp, [y], outs[k + 1]))

    def steps(self, d: int) -> range:
        seq = self.seq_shape()[0]
        return range(seq) if self.directions[d] == "forward" else range(seq - 1, -1, -1)


@converter("LSTM")
def _lstm(cx: Converter, node: Node) -> None:
    """Gates i, o, f, c (ONNX order): C = f*C + i*tanh(c); H = o*tanh(C)."""
    if node.input(7) is not None and np.any(_need_const(cx, node, 7, "P") != 0):
        raise _unsupported(cx, node, "peephole weights (P) are not supported")
    if int(node.attr("input_forget", 0)):
        raise _unsupported(cx, node, "input_forget=1 is not supported")
    rnn = _Rnn(cx, node, 4)
    hid = rnn.hidden
    per_dir: list[tuple[list[SSAValue], list[SSAValue]]] = []
    for d in range(len(rnn.directions)):
        xw = rnn.input_projection(d, rnn.b[d, : 4 * hid] + rnn.b[d, 4 * hid :])
        r_t = rnn.const(rnn.r[d].T, f"R{d}_t")
        h, c = rnn.initial(5, d), rnn.initial(6, d)
        hs: dict[int, SSAValue] = {}
        for step in rnn.steps(d):
            g = rnn.op(
                ascend.AddOp,
                rnn.step_input(xw, step),
                cx.emit(ascend.MatMulV2Op, [h, r_t], rnn.t((ascend.shape_of(h)[0], 4 * hid))),
            )
            i, o, f = (rnn.op(ascend.SigmoidOp, rnn.gate(g, k)) for k in range(3))
            cand = rnn.op(ascend.TanhOp, rnn.gate(g, 3))
            c = rnn.op(ascend.AddOp, rnn.op(ascend.MulOp, f, c), rnn.op(ascend.MulOp, i, cand))
            h = rnn.op(ascend.MulOp, o, rnn.op(ascend.TanhOp, c))
            hs[step] = h
        per_dir.append(([hs[s] for s in sorted(hs)], [h, c]))
    rnn.bind_outputs(per_dir)


@converter("GRU")
def _gru(cx: Converter, node: Node) -> None:
    """Gates z, r, h (ONNX order): H = (1 - z) * n + z * H, n = tanh(x_h + r * (H R_h^T + Rb_h))
    for linear_before_reset=1 (torch), tanh(x_h + (r * H) R_h^T + Rb_h) for 0."""
    rnn = _Rnn(cx, node, 3)
    hid = rnn.hidden
    before_reset = bool(node.attr("linear_before_reset", 0))
    per_dir: list[tuple[list[SSAValue], list[SSAValue]]] = []
    for d in range(len(rnn.directions)):
        wb, rb = rnn.b[d, : 3 * hid], rnn.b[d, 3 * hid :]
        xw = rnn.input_projection(d, wb + np.concatenate([rb[: 2 * hid], np.zeros(hid, rb.dtype)]))
        r_all = rnn.r[d]
        rb_h = rnn.const(rb[2 * hid :], f"Rb{d}_h")
        h = rnn.initial(5, d)
        hs: dict[int, SSAValue] = {}
        one = _scalar(cx, 1.0, h, f"{node.name}/one")
        rows = 3 if before_reset else 2
        r_t = rnn.const(r_all[: rows * hid].T, f"R{d}_t")
        rh_t = None if before_reset else rnn.const(r_all[2 * hid :].T, f"R{d}_h_t")
        for step in rnn.steps(d):
            batch = ascend.shape_of(h)[0]
            x = rnn.step_input(xw, step)
            hr = cx.emit(ascend.MatMulV2Op, [h, r_t], rnn.t((batch, rows * hid)))
            z = rnn.op(ascend.SigmoidOp, rnn.op(ascend.AddOp, rnn.gate(x, 0), rnn.gate(hr, 0)))
            r = rnn.op(ascend.SigmoidOp, rnn.op(ascend.AddOp, rnn.gate(x, 1), rnn.gate(hr, 1)))
            if rh_t is None:
                recur = rnn.op(ascend.MulOp, r, rnn.op(ascend.AddOp, rnn.gate(hr, 2), rb_h))
            else:
                recur = rnn.op(
                    ascend.AddOp,
                    cx.emit(ascend.MatMulV2Op, [rnn.op(ascend.MulOp, r, h), rh_t], rnn.t((batch, hid))),
                    rb_h,
                )
            n = rnn.op(ascend.TanhOp, rnn.op(ascend.AddOp, rnn.gate(x, 2), recur))
            keep = cx.emit(ascend.SubOp, [one, z], rnn.t((batch, hid)))
            h = rnn.op(ascend.AddOp, rnn.op(ascend.MulOp, keep, n), rnn.op(ascend.MulOp, z, h))
            hs[step] = h
        per_dir.append(([hs[s] for s in sorted(hs)], [h]))
    rnn.bind_outputs(per_dir)
