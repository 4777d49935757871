"""`ascend-autodiff`: reverse-mode differentiation of a forward function into ascend gradient ops.

From `@forward(params..., inputs..., labels) -> loss` the pass adds

```mlir
func.func @forward_grad(<the same arguments>) -> (loss, dparam_0, ..., dparam_{k-1})
```

holding a copy of the forward computation followed by its backward graph, built from
the dialect's gradient ops as MindSpore's AutoDiff and TF's gradient registry do:
`MatMulV2` with `transpose_x1`/`transpose_x2` for matrix products, `BiasAddGrad`,
`ReluGrad`, `Conv2DBackpropInput`/`Conv2DBackpropFilter`, `MaxPoolGrad`, `AvgPoolGrad`,
`SoftmaxGrad`, `LayerNormGrad`, `BNTraining*Grad`, and elementwise ops that sum over
broadcast dimensions. A value used several times accumulates its gradients with `Add`.
The forward function is left as it is.

```mlir
// -p 'ascend-autodiff{func=forward wrt=2}' on  %y = MatMulV2 %x, %w ; %r = Relu %y ; ...
%seed = ascend.Const dense<1.0> {name = "gradients/seed"} : tensor<f32>
...
%dr = ascend.ReluGrad %g, %y {name = "gradients/relu_0_grad/ReluGrad"} : ...
%dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true, name = "gradients/dense_0/MatMulV2_grad/MatMulV2"} : ...
```

The gradient of the loss itself (the seed, ones shaped like the loss) is a `Const` named
:data:`SEED_NAME`; `ascend-loss-scale` multiplies it by the loss scale.

Options: `func` (default `forward`), `wrt` (the number of leading arguments to
differentiate; default all but the last two, i.e. every argument before the inputs and
labels), `grad-func` (the new function's name; default `<func>_grad`).

The loss is computed in fp32 under every precision mode: the loss ops (:func:`loss_ops`:
the `SoftmaxCrossEntropyWithLogits` the loss depends on and every op between it and the
returned loss), the seed and their gradient ops get the unit `keep_dtype` property, as does
the backward of any op already marked (option `keep-loss=false` adds no marks).

Every op on a path from a `wrt` argument to the loss needs a rule in :data:`RULES`;
ops whose outputs carry no gradient are listed in :data:`NO_GRADIENT`. Errors are
:class:`~ascend_mp.errors.AscendPassError` (xDSL diagnostics) whose one-line message starts
with the op's location, e.g. `model.mlir:3:3: ascend-autodiff: no gradient rule for ascend.GeluGrad`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import (
    Emitter,
    dtype,
    finish_function,
    is_kept,
    mark_all,
    mark_keep_dtype,
    name_new_ops,
    new_function,
    ops_after,
    shape,
    tensor,
)
from ascend_mp.dtypes import is_float, tensor_dtype
from ascend_mp.errors import AscendPassError
from ascend_mp.ir import location_of, source_location

PASS = "ascend-autodiff"

LOSS_FUNCTIONS: tuple[type[A.AscendOp], ...] = (A.SoftmaxCrossEntropyWithLogitsOp,)
"""Loss functions: with the ops between them and the returned loss they are the loss ops,
computed in their original dtype (fp32) under every precision mode."""

SEED_NAME = "gradients/seed"
"""`name` of the Const holding d(loss)/d(loss)."""


@dataclass
class GradContext:
    """What a gradient rule sees: the op, its result gradients, and which operands need one."""

    e: Emitter
    op: A.AscendOp
    dys: list[SSAValue | None]
    needs: list[bool]
    where: str
    """The forward op's location, for errors."""

    def dy(self, index: int = 0) -> SSAValue:
        """The gradient of result `index` (multi-result rules call :meth:`only` first, so it exists)."""
        g = self.dys[index]
        assert g is not None, f"{self.op.name}: result #{index} has no gradient"
        return g

    def only(self, *results: int) -> None:
        """Fail if a result other than `results` carries a gradient (the rule cannot handle it)."""
        for i, d in enumerate(self.dys):
            if d is not None and i not in results:
                raise AscendPassError(f"{self.where}: ascend-autodiff: no gradient rule for result #{i} of {self.op.name}")


Grads = list[SSAValue | None]
Rule = Callable[[GradContext], Grads]

RULES: dict[type[A.AscendOp], Rule] = {}
"""Op class -> gradient rule: returns one gradient (or None) per operand."""

NO_GRADIENT: dict[type[A.AscendOp], str] = {
    A.ConstOp: "no operands",
    A.ArgMaxV2Op: "integer result",
    A.GreaterOp: "bool result",
    A.FloorOp: "piecewise constant (zero gradient almost everywhere)",
    A.NPUAllocFloatStatusOp: "float status register",
    A.NPUClearFloatStatusOp: "float status register",
    A.NPUGetFloatStatusOp: "float status register",
}
"""Ops that pass no gradient to their operands, and why."""


def rule(*classes: type[A.AscendOp]) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for cls in classes:
            RULES[cls] = fn
        return fn

    return register


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def unbroadcast(e: Emitter, g: SSAValue, target: Sequence[int]) -> SSAValue:
    """Sum `g` over the dimensions NumPy broadcasting added or stretched to reach its shape from `target`."""
    gs = shape(g)
    lead = len(gs) - len(target)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(target) if d == 1 and gs[lead + i] != 1]
    if axes:
        g = e.reduce_sum(g, axes, keep_dims=True)
    return e.reshape(g, target)


def broadcast_to(e: Emitter, g: SSAValue, target: Sequence[int]) -> SSAValue:
    """`g` (broadcastable to `target`) materialised at `target`'s shape, by multiplying with ones."""
    if shape(g) == tuple(target):
        return g
    return e.mul(g, e.const(1.0, dtype(g), target))


def keep_dims_shape(x: Sequence[int], axes: Sequence[int]) -> list[int]:
    return [1 if i in axes else d for i, d in enumerate(x)]


def matmul_shape(a: Sequence[int], b: Sequence[int], ta: bool, tb: bool) -> list[int]:
    m = a[-1] if ta else a[-2]
    n = b[-2] if tb else b[-1]
    batch = A.broadcast_shape(a[:-2], b[:-2]) or ()
    return [*batch, m, n]


def matmul_grads(c: GradContext, x1: SSAValue, x2: SSAValue, ta: bool, tb: bool, cls: type[A.AscendOp], flags: tuple[str, str]) -> Grads:
    """d(op(x1) @ op(x2)) for MatMul/MatMulV2 (`transpose_x*`) and BatchMatMul (`adj_x*`)."""
    e = c.e
    dy = e.cast(c.dy(), dtype(x1))
    fa, fb = flags

    def mm(a: SSAValue, b: SSAValue, t1: bool, t2: bool, like: SSAValue) -> SSAValue:
        out = matmul_shape(shape(a), shape(b), t1, t2)
        operands: list[SSAValue | None] = [a, b] if cls is A.BatchMatMulOp else [a, b, None]
        r = e.one(cls, *operands, type_=tensor(out, dtype(like)), **{fa: t1, fb: t2})
        return unbroadcast(e, r, shape(like))

    d1 = d2 = None
    if c.needs[0]:
        if not ta:
            d1 = mm(dy, x2, False, not tb, x1)
        else:
            d1 = mm(x2, dy, tb, True, x1)
    if c.needs[1]:
        if not tb:
            d2 = mm(x1, dy, not ta, False, x2)
        else:
            d2 = mm(dy, x1, True, ta, x2)
    return [d1, d2]


def conv_props(op: A.AscendOp) -> dict[str, object]:
    return {k: op.properties[k] for k in ("strides", "pads", "dilations", "groups", "data_format") if k in op.properties}


# --------------------------------------------------------------------------------------
# Rules: cube ops
# --------------------------------------------------------------------------------------


@rule(A.MatMulOp, A.MatMulV2Op)
def _matmul(c: GradContext) -> Grads:
    op = c.op
    assert isinstance(op, A.MatMulBase)
    grads = matmul_grads(c, op.x1, op.x2, op.transpose_x1, op.transpose_x2, type(op), ("transpose_x1", "transpose_x2"))
    if op.bias is not None:
        grads.append(c.e.one(A.BiasAddGradOp, c.e.cast(c.dy(), dtype(op.bias)), type_=op.bias.type) if c.needs[2] else None)
    return grads


@rule(A.BatchMatMulOp)
def _batch_matmul(c: GradContext) -> Grads:
    op = c.op
    assert isinstance(op, A.BatchMatMulOp)
    return matmul_grads(c, op.x1, op.x2, op.adj_x1, op.adj_x2, A.BatchMatMulOp, ("adj_x1", "adj_x2"))


@rule(A.Conv2DOp)
def _conv2d(c: GradContext) -> Grads:
    op, e = c.op, c.e
    assert isinstance(op, A.Conv2DOp)
    dy = e.cast(c.dy(), dtype(op.x))
    props = conv_props(op)
    dx = e.one(A.Conv2DBackpropInputOp, op.filter, dy, type_=op.x.type, input_size=list(shape(op.x)), **props) if c.needs[0] else None
    dw = e.one(A.Conv2DBackpropFilterOp, op.x, dy, type_=op.filter.type, filter_size=list(shape(op.filter)), **props) if c.needs[1] else None
    grads: Grads = [dx, dw]
    if op.bias is not None:
        fmt = op.data_format
        grads.append(e.one(A.BiasAddGradOp, e.cast(c.dy(), dtype(op.bias)), type_=op.bias.type, data_format=fmt) if c.needs[2] else None)
    return grads


@rule(A.DepthwiseConv2DOp)
def _depthwise(c: GradContext) -> Grads:
    """As a grouped Conv2D (groups = C): filter [KH, KW, C, M] -> OIHW [C*M, 1, KH, KW] (HWIO [KH, KW, 1, C*M] for NHWC)."""
    op, e = c.op, c.e
    assert isinstance(op, A.DepthwiseConv2DOp)
    dy = e.cast(c.dy(), dtype(op.x))
    kh, kw, ch, mult = shape(op.filter)
    nchw = op.data_format == "NCHW"
    props = conv_props(op) | {"groups": ch}
    if nchw:
        t = e.one(A.TransposeOp, op.filter, type_=tensor((ch, mult, kh, kw), dtype(op.filter)), perm=[2, 3, 0, 1])
        grouped_shape = (ch * mult, 1, kh, kw)
        grouped = e.reshape(t, grouped_shape)
    else:
        grouped_shape = (kh, kw, 1, ch * mult)
        grouped = e.reshape(op.filter, grouped_shape)
    dx = e.one(A.Conv2DBackpropInputOp, grouped, dy, type_=op.x.type, input_size=list(shape(op.x)), **props) if c.needs[0] else None
    dw = None
    if c.needs[1]:
        dg = e.one(A.Conv2DBackpropFilterOp, op.x, dy, type_=tensor(grouped_shape, dtype(op.filter)), filter_size=list(grouped_shape), **props)
        if nchw:
            dg = e.reshape(dg, (ch, mult, kh, kw))
            dw = e.one(A.TransposeOp, dg, type_=op.filter.type, perm=[2, 3, 0, 1])
        else:
            dw = e.reshape(dg, shape(op.filter))
    grads: Grads = [dx, dw]
    if op.bias is not None:
        grads.append(e.one(A.BiasAddGradOp, e.cast(c.dy(), dtype(op.bias)), type_=op.bias.type, data_format=op.data_format) if c.needs[2] else None)
    return grads


@rule(A.Conv2DBackpropInputOp)
def _conv_bp_input(c: GradContext) -> Grads:
    """y = conv^T(g, W): dg = conv(dy, W), dW = Conv2DBackpropFilter(dy, g)."""
    op, e = c.op, c.e
    assert isinstance(op, A.Conv2DBackpropInputOp)
    dy = e.cast(c.dy(), dtype(op.filter))
    props = conv_props(op)
    dw = e.one(A.Conv2DBackpropFilterOp, dy, op.out_backprop, type_=op.filter.type, filter_size=list(shape(op.filter)), **props) if c.needs[0] else None
    dg = e.one(A.Conv2DOp, dy, op.filter, None, type_=op.out_backprop.type, **props) if c.needs[1] else None
    return [dw, dg]


@rule(A.Conv2DBackpropFilterOp)
def _conv_bp_filter(c: GradContext) -> Grads:
    """y = dW(x, g): dx = Conv2DBackpropInput(dy, g), dg = conv(x, dy)."""
    op, e = c.op, c.e
    assert isinstance(op, A.Conv2DBackpropFilterOp)
    dy = e.cast(c.dy(), dtype(op.x))
    props = conv_props(op)
    dx = e.one(A.Conv2DBackpropInputOp, dy, op.out_backprop, type_=op.x.type, input_size=list(shape(op.x)), **props) if c.needs[0] else None
    dg = e.one(A.Conv2DOp, op.x, dy, None, type_=op.out_backprop.type, **props) if c.needs[1] else None
    return [dx, dg]


# --------------------------------------------------------------------------------------
# Rules: elementwise
# --------------------------------------------------------------------------------------


@rule(A.BiasAddOp)
def _bias_add(c: GradContext) -> Grads:
    op, e = c.op, c.e
    assert isinstance(op, A.BiasAddOp)
    dy = c.dy()
    db = e.one(A.BiasAddGradOp, e.cast(dy, dtype(op.bias)), type_=op.bias.type, data_format=op.data_format) if c.needs[1] else None
    return [dy, db]


def _binary_operands(c: GradContext) -> tuple[SSAValue, SSAValue, SSAValue]:
    x1, x2 = c.op.operands
    return x1, x2, c.e.cast(c.dy(), dtype(x1))


@rule(A.AddOp)
def _add(c: GradContext) -> Grads:
    x1, x2, dy = _binary_operands(c)
    return [unbroadcast(c.e, dy, shape(x1)) if c.needs[0] else None, unbroadcast(c.e, dy, shape(x2)) if c.needs[1] else None]


@rule(A.SubOp)
def _sub(c: GradContext) -> Grads:
    x1, x2, dy = _binary_operands(c)
    return [unbroadcast(c.e, dy, shape(x1)) if c.needs[0] else None, unbroadcast(c.e, c.e.neg(dy), shape(x2)) if c.needs[1] else None]


@rule(A.MulOp)
def _mul(c: GradContext) -> Grads:
    x1, x2, dy = _binary_operands(c)
    e = c.e
    return [
        unbroadcast(e, e.mul(dy, x2), shape(x1)) if c.needs[0] else None,
        unbroadcast(e, e.mul(dy, x1), shape(x2)) if c.needs[1] else None,
    ]


@rule(A.RealDivOp)
def _real_div(c: GradContext) -> Grads:
    x1, x2, dy = _binary_operands(c)
    e, y = c.e, c.op.results[0]
    d1 = unbroadcast(e, e.div(dy, x2), shape(x1)) if c.needs[0] else None
    d2 = unbroadcast(e, e.neg(e.div(e.mul(dy, y), x2)), shape(x2)) if c.needs[1] else None
    return [d1, d2]


@rule(A.MaximumOp, A.MinimumOp)
def _max_min(c: GradContext) -> Grads:
    """The gradient goes to the larger (smaller) operand, to x1 on ties, as in TF: a ReluGrad mask."""
    x1, x2, dy = _binary_operands(c)
    e = c.e
    dy = broadcast_to(e, dy, shape(c.op.results[0]))
    # x2 wins strictly where (x2 - x1) > 0 for Maximum, (x1 - x2) > 0 for Minimum.
    margin = e.sub(x2, x1) if isinstance(c.op, A.MaximumOp) else e.sub(x1, x2)
    d2 = e.one(A.ReluGradOp, dy, margin)
    d1 = e.sub(dy, d2)
    return [unbroadcast(e, d1, shape(x1)) if c.needs[0] else None, unbroadcast(e, d2, shape(x2)) if c.needs[1] else None]


@rule(A.SelectOp)
def _select(c: GradContext) -> Grads:
    """The gradient goes to the chosen operand: d x1 = Select(c, dy, 0), d x2 = Select(c, 0, dy); none to the bool condition."""
    op, e = c.op, c.e
    assert isinstance(op, A.SelectOp)
    dy = e.cast(c.dy(), dtype(op.x1))
    zero = e.const(0.0, dtype(dy), shape(dy))
    d1 = e.one(A.SelectOp, op.condition, dy, zero, type_=dy.type) if c.needs[1] else None
    d2 = e.one(A.SelectOp, op.condition, zero, dy, type_=dy.type) if c.needs[2] else None
    return [None, d1, d2]


@rule(A.PowOp)
def _pow(c: GradContext) -> Grads:
    x1, x2, dy = _binary_operands(c)
    e, y = c.e, c.op.results[0]
    d1 = d2 = None
    if c.needs[0]:
        lower = e.binary(A.PowOp, x1, e.sub(x2, e.scalar(1.0, x2)))
        d1 = unbroadcast(e, e.mul(e.mul(dy, x2), lower), shape(x1))
    if c.needs[1]:
        d2 = unbroadcast(e, e.mul(e.mul(dy, y), e.one(A.LogOp, x1)), shape(x2))
    return [d1, d2]


def _unary(c: GradContext) -> tuple[SSAValue, SSAValue, SSAValue]:
    x = c.op.operands[0]
    return x, c.op.results[0], c.e.cast(c.dy(), dtype(x))


@rule(A.NegOp)
def _neg(c: GradContext) -> Grads:
    _, _, dy = _unary(c)
    return [c.e.neg(dy)]


@rule(A.ReluOp)
def _relu(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    return [c.e.one(A.ReluGradOp, dy, x)]


@rule(A.LeakyReluOp)
def _leaky_relu(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    return [c.e.one(A.LeakyReluGradOp, dy, x, negative_slope=c.op.properties["negative_slope"])]


@rule(A.GeluOp)
def _gelu(c: GradContext) -> Grads:
    x, y, dy = _unary(c)
    return [c.e.one(A.GeluGradOp, dy, x, y)]


@rule(A.SigmoidOp)
def _sigmoid(c: GradContext) -> Grads:
    _, y, dy = _unary(c)
    return [c.e.one(A.SigmoidGradOp, y, dy)]


@rule(A.TanhOp)
def _tanh(c: GradContext) -> Grads:
    _, y, dy = _unary(c)
    return [c.e.one(A.TanhGradOp, y, dy)]


@rule(A.ExpOp)
def _exp(c: GradContext) -> Grads:
    _, y, dy = _unary(c)
    return [c.e.mul(dy, y)]


@rule(A.LogOp)
def _log(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    return [c.e.div(dy, x)]


@rule(A.SqrtOp)
def _sqrt(c: GradContext) -> Grads:
    _, y, dy = _unary(c)
    return [c.e.div(dy, c.e.mul(y, c.e.scalar(2.0, y)))]


@rule(A.RsqrtOp)
def _rsqrt(c: GradContext) -> Grads:
    """d(x^-1/2) = -1/2 y^3."""
    _, y, dy = _unary(c)
    e = c.e
    cube = e.mul(e.one(A.SquareOp, y), y)
    return [e.mul(e.mul(dy, cube), e.scalar(-0.5, y))]


@rule(A.SquareOp)
def _square(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    return [c.e.mul(dy, c.e.mul(x, c.e.scalar(2.0, x)))]


@rule(A.CastOp)
def _cast(c: GradContext) -> Grads:
    """The gradient is cast back to the input's dtype."""
    x = c.op.operands[0]
    return [c.e.cast(c.dy(), dtype(x))]


# --------------------------------------------------------------------------------------
# Rules: softmax, reductions, normalisation
# --------------------------------------------------------------------------------------


def _axes(op: A.AscendOp, rank: int) -> list[int]:
    assert isinstance(op, A.SoftmaxLikeOp)
    return sorted({a % rank for a in op.axes})


@rule(A.SoftmaxV2Op)
def _softmax(c: GradContext) -> Grads:
    x, y, dy = _unary(c)
    e = c.e
    rank = len(shape(x))
    axes = _axes(c.op, rank)
    if axes == [rank - 1]:
        return [e.one(A.SoftmaxGradOp, y, dy)]
    s = e.reduce_sum(e.mul(dy, y), axes, keep_dims=True)
    return [e.mul(e.sub(dy, s), y)]


@rule(A.LogSoftmaxV2Op)
def _log_softmax(c: GradContext) -> Grads:
    """dx = dy - softmax(x) * sum(dy) over the axes."""
    x, y, dy = _unary(c)
    e = c.e
    axes = _axes(c.op, len(shape(x)))
    return [e.sub(dy, e.mul(e.one(A.ExpOp, y), e.reduce_sum(dy, axes, keep_dims=True)))]


def _reduced(op: A.AscendOp) -> list[int]:
    assert isinstance(op, A.ReduceOp)
    return list(op.reduced_axes())


@rule(A.ReduceSumOp)
def _reduce_sum(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    return [broadcast_to(c.e, c.e.reshape(dy, keep_dims_shape(shape(x), _reduced(c.op))), shape(x))]


@rule(A.ReduceMeanOp)
def _reduce_mean(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    axes = _reduced(c.op)
    count = math.prod(shape(x)[a] for a in axes)
    e = c.e
    return [e.div(e.reshape(dy, keep_dims_shape(shape(x), axes)), e.const(float(count), dtype(x), shape(x)))]


@rule(A.ReduceMaxOp)
def _reduce_max(c: GradContext) -> Grads:
    """Shared evenly between the maxima, as TF does: mask = 1 - ReluGrad(1, max - x)."""
    x, y, dy = _unary(c)
    e = c.e
    axes = _reduced(c.op)
    keep = keep_dims_shape(shape(x), axes)
    ones = e.const(1.0, dtype(x), shape(x))
    below = e.one(A.ReluGradOp, ones, e.sub(e.reshape(y, keep), x))
    mask = e.sub(ones, below)
    count = e.reduce_sum(mask, axes, keep_dims=True)
    return [e.div(e.mul(e.reshape(dy, keep), mask), count)]


@rule(A.SoftmaxCrossEntropyWithLogitsOp)
def _softmax_xent(c: GradContext) -> Grads:
    """d features = backprop * dloss[:, None]; d labels = -dloss[:, None] * log_softmax(features)."""
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.SoftmaxCrossEntropyWithLogitsOp)
    n = shape(op.features)[0]
    dl = e.reshape(e.cast(c.dy(), dtype(op.features)), (n, 1))
    df = e.mul(op.backprop, dl) if c.needs[0] else None
    dt = None
    if c.needs[1]:
        logp = e.one(A.LogSoftmaxV2Op, op.features, axes=[-1])
        dt = e.neg(e.mul(logp, dl))
    return [df, dt]


@rule(A.MaxPoolOp)
def _max_pool(c: GradContext) -> Grads:
    x, y, dy = _unary(c)
    props = {k: c.op.properties[k] for k in ("ksize", "strides", "padding", "data_format")}
    return [c.e.one(A.MaxPoolGradOp, x, y, dy, type_=x.type, **props)]


@rule(A.AvgPoolOp)
def _avg_pool(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    props = {k: c.op.properties[k] for k in ("ksize", "strides", "padding", "data_format")}
    return [c.e.one(A.AvgPoolGradOp, dy, type_=x.type, orig_input_shape=list(shape(x)), **props)]


LAYER_NORM_GRAD_EPSILON = 1e-7
"""The epsilon LayerNormGrad assumes (it has no attribute for it): LayerNorm's default."""


@rule(A.LayerNormOp)
def _layer_norm(c: GradContext) -> Grads:
    """LayerNormGrad when LayerNorm uses its default epsilon and one axis for statistics and
    parameters; otherwise the same formula in elementwise ops."""
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.LayerNormOp)
    dy = e.cast(c.dy(), dtype(op.x))
    x = shape(op.x)
    rank = len(x)
    norm = op.begin_norm_axis % rank
    params = op.begin_params_axis % rank
    eps = op.epsilon
    if norm == params and math.isclose(eps, LAYER_NORM_GRAD_EPSILON, rel_tol=1e-6):
        g = e.op(A.LayerNormGradOp, dy, op.x, op.variance, op.mean, op.gamma, types=[op.x.type, op.gamma.type, op.beta.type])
        return [g.results[0], g.results[1], g.results[2]]
    axes = list(range(norm, rank))
    batch = list(range(params))
    n = float(math.prod(x[norm:]))
    inv = e.one(A.RsqrtOp, e.add(op.variance, e.const(eps, dtype(op.x))))
    xhat = e.mul(e.sub(op.x, op.mean), inv)
    g = e.mul(dy, op.gamma)
    count = e.const(n, dtype(op.x))
    mean_g = e.div(e.reduce_sum(g, axes, keep_dims=True), count)
    mean_gx = e.div(e.reduce_sum(e.mul(g, xhat), axes, keep_dims=True), count)
    dx = e.mul(inv, e.sub(e.sub(g, mean_g), e.mul(xhat, mean_gx)))
    dgamma = e.reduce_sum(e.mul(dy, xhat), batch) if c.needs[1] else None
    dbeta = e.reduce_sum(dy, batch) if c.needs[2] else None
    return [dx, dgamma, dbeta]


def _to_nchw(e: Emitter, v: SSAValue, fmt: str) -> SSAValue:
    if fmt == "NCHW":
        return v
    n, h, w, ch = shape(v)
    return e.one(A.TransposeOp, v, type_=tensor((n, ch, h, w), dtype(v)), perm=[0, 3, 1, 2])


def _from_nchw(e: Emitter, v: SSAValue, fmt: str) -> SSAValue:
    if fmt == "NCHW":
        return v
    n, ch, h, w = shape(v)
    return e.one(A.TransposeOp, v, type_=tensor((n, h, w, ch), dtype(v)), perm=[0, 2, 3, 1])


def _bn_training_grads(e: Emitter, dy: SSAValue, x: SSAValue, scale: SSAValue, mean: SSAValue, var: SSAValue, eps: object, fmt: str) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(dx, dscale, doffset) of training batch norm with BNTrainingUpdateGrad + BNTrainingReduceGrad."""
    dy_c, x_c = _to_nchw(e, dy, fmt), _to_nchw(e, x, fmt)
    upd = e.op(A.BNTrainingUpdateGradOp, dy_c, x_c, mean, var, types=[scale.type, scale.type], epsilon=eps)
    dscale, doffset = upd.results
    dx = e.one(A.BNTrainingReduceGradOp, dy_c, x_c, dscale, doffset, scale, mean, var, type_=x_c.type, epsilon=eps)
    return _from_nchw(e, dx, fmt), dscale, doffset


@rule(A.BatchNormOp)
def _batch_norm(c: GradContext) -> Grads:
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.BatchNormOp)
    dy = e.cast(c.dy(), dtype(op.x))
    fmt = op.data_format
    eps = op.properties["epsilon"]
    if op.is_training:
        # batch_variance is Bessel-corrected (as TF's FusedBatchNorm); the grad ops take the biased one.
        ch = A._spatial(fmt)[0]  # pyright: ignore[reportPrivateUsage]
        n = math.prod(d for i, d in enumerate(shape(op.x)) if i != ch)
        biased = e.mul(op.batch_variance, e.const(max(n - 1, 1) / n, dtype(op.batch_variance)))
        dx, dscale, doffset = _bn_training_grads(e, dy, op.x, op.scale, op.batch_mean, biased, eps, fmt)
        return [dx, dscale, doffset, None, None]
    # Inference: y = (x - mean) * rsqrt(var + eps) * scale + offset, all per channel.
    ch = A._spatial(fmt)[0]  # pyright: ignore[reportPrivateUsage]
    stat = [1, 1, 1, 1]
    stat[ch] = shape(op.x)[ch]
    axes = [i for i in range(4) if i != ch]

    def per_channel(v: SSAValue) -> SSAValue:
        return e.reshape(e.cast(v, dtype(op.x)), stat)

    inv = e.one(A.RsqrtOp, e.add(per_channel(op.variance), e.const(op.epsilon, dtype(op.x))))
    centred = e.sub(op.x, per_channel(op.mean))
    scale_c = per_channel(op.scale)
    dx = e.mul(dy, e.mul(scale_c, inv))
    dscale = e.cast(e.reshape(e.reduce_sum(e.mul(dy, e.mul(centred, inv)), axes), shape(op.scale)), dtype(op.scale))
    doffset = e.cast(e.reshape(e.reduce_sum(dy, axes), shape(op.offset)), dtype(op.offset))
    dmean = e.cast(e.reshape(e.neg(e.reduce_sum(dx, axes)), shape(op.mean)), dtype(op.mean)) if c.needs[3] else None
    dvar = None
    if c.needs[4]:
        # d/dvar (var + eps)^-1/2 = -1/2 inv^3
        inv3 = e.mul(e.mul(inv, inv), inv)
        t = e.reduce_sum(e.mul(e.mul(dy, e.mul(centred, scale_c)), inv3), axes)
        dvar = e.cast(e.reshape(e.mul(t, e.scalar(-0.5, t)), shape(op.variance)), dtype(op.variance))
    return [dx, dscale, doffset, dmean, dvar]


@rule(A.BNTrainingUpdateOp)
def _bn_training_update(c: GradContext) -> Grads:
    """The full input gradient (through the batch statistics too), so `sum`/`square_sum` must come from
    a BNTrainingReduce of the same `x`."""
    c.only(0)
    op, e = c.op, c.e
    assert isinstance(op, A.BNTrainingUpdateOp)
    src = op.sum.owner
    if not (isinstance(src, A.BNTrainingReduceOp) and src.x == op.x and op.square_sum == src.square_sum):
        raise AscendPassError(f"{c.where}: ascend-autodiff: the gradient of {op.name} needs its sum and square_sum from a BNTrainingReduce of the same input")
    dy = e.cast(c.dy(), dtype(op.x))
    dx, dscale, doffset = _bn_training_grads(e, dy, op.x, op.scale, op.batch_mean, op.batch_variance, op.properties["epsilon"], "NCHW")
    return [dx, None, None, dscale, doffset, None, None]


@rule(A.BNTrainingReduceOp)
def _bn_training_reduce(c: GradContext) -> Grads:
    """sum and square_sum per channel: dx = dsum + 2 x dsquare_sum (broadcast over N, H, W)."""
    op, e = c.op, c.e
    assert isinstance(op, A.BNTrainingReduceOp)
    x = op.x
    ch = shape(x)[1]
    total: SSAValue | None = None
    if c.dys[0] is not None:
        total = broadcast_to(e, e.reshape(e.cast(c.dys[0], dtype(x)), (1, ch, 1, 1)), shape(x))
    if c.dys[1] is not None:
        d = e.mul(e.reshape(e.cast(c.dys[1], dtype(x)), (1, ch, 1, 1)), e.mul(x, e.scalar(2.0, x)))
        total = d if total is None else e.add(total, d)
    return [total]


# --------------------------------------------------------------------------------------
# Rules: data movement
# --------------------------------------------------------------------------------------


@rule(A.ReshapeOp)
def _reshape(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    return [c.e.reshape(dy, shape(x))]


@rule(A.TransposeOp)
def _transpose(c: GradContext) -> Grads:
    x, _, dy = _unary(c)
    assert isinstance(c.op, A.TransposeOp)
    perm = c.op.perm
    inverse = [perm.index(i) for i in range(len(perm))]
    return [c.e.one(A.TransposeOp, dy, type_=x.type, perm=inverse)]


@rule(A.ConcatV2DOp)
def _concat(c: GradContext) -> Grads:
    """Slices of dy by a matrix product with 0/1 selection matrices (the dialect has no Slice op)."""
    op, e = c.op, c.e
    assert isinstance(op, A.ConcatV2DOp)
    ys = shape(op.results[0])
    rank = len(ys)
    dim = op.concat_dim % rank
    dy = e.cast(c.dy(), dtype(op.operands[0]))
    perm = [i for i in range(rank) if i != dim] + [dim]
    moved = dy if dim == rank - 1 else e.one(A.TransposeOp, dy, type_=tensor([ys[i] for i in perm], dtype(dy)), perm=perm)
    rows = math.prod(ys[i] for i in perm[:-1])
    flat = e.reshape(moved, (rows, ys[dim]))
    inverse = [perm.index(i) for i in range(rank)]
    grads: Grads = []
    offset = 0
    for i, x in enumerate(op.operands):
        n = shape(x)[dim]
        if c.needs[i]:
            sel = np.zeros((ys[dim], n))
            sel[offset : offset + n, :] = np.eye(n)
            part = e.one(A.MatMulV2Op, flat, e.const(sel, dtype(dy)), None, type_=tensor((rows, n), dtype(dy)))
            part = e.reshape(part, [ys[j] for j in perm[:-1]] + [n])
            if dim != rank - 1:
                part = e.one(A.TransposeOp, part, type_=x.type, perm=inverse)
            grads.append(part)
        else:
            grads.append(None)
        offset += n
    return grads


@rule(A.OneHotOp)
def _one_hot(c: GradContext) -> Grads:
    """Indices get none; on_value / off_value get the sum of dy where the mask is on / off."""
    op, e = c.op, c.e
    assert isinstance(op, A.OneHotOp)
    dy = c.dy()
    f = dtype(dy)
    one, zero = e.const(1.0, f), e.const(0.0, f)
    mask = e.one(A.OneHotOp, op.x, one, zero, type_=dy.type, depth=op.properties["depth"], axis=op.properties["axis"])
    d_on = e.reshape(e.reduce_sum(e.mul(dy, mask), range(len(shape(dy)))), shape(op.on_value)) if c.needs[1] else None
    d_off = e.reshape(e.reduce_sum(e.mul(dy, e.sub(e.const(1.0, f), mask)), range(len(shape(dy)))), shape(op.off_value)) if c.needs[2] else None
    return [None, d_on, d_off]


# --------------------------------------------------------------------------------------
# Rules: gradient ops (second order, where they are simple)
# --------------------------------------------------------------------------------------


@rule(A.ReluGradOp)
def _relu_grad(c: GradContext) -> Grads:
    op = c.op
    return [c.e.one(A.ReluGradOp, c.e.cast(c.dy(), dtype(op.operands[0])), op.operands[1]), None]


@rule(A.LeakyReluGradOp)
def _leaky_relu_grad(c: GradContext) -> Grads:
    op = c.op
    return [c.e.one(A.LeakyReluGradOp, c.dy(), op.operands[1], negative_slope=op.properties["negative_slope"]), None]


@rule(A.SigmoidGradOp)
def _sigmoid_grad(c: GradContext) -> Grads:
    """z = dy * y * (1 - y): d dy = SigmoidGrad(y, dz); d y = dz * dy * (1 - 2y)."""
    e = c.e
    y, g = c.op.operands
    dz = c.dy()
    dy_ = e.one(A.SigmoidGradOp, y, dz) if c.needs[1] else None
    d_y = e.mul(e.mul(dz, g), e.sub(e.scalar(1.0, y), e.mul(y, e.scalar(2.0, y)))) if c.needs[0] else None
    return [d_y, dy_]


@rule(A.TanhGradOp)
def _tanh_grad(c: GradContext) -> Grads:
    """z = dy * (1 - y^2): d dy = TanhGrad(y, dz); d y = -2 dz dy y."""
    e = c.e
    y, g = c.op.operands
    dz = c.dy()
    dy_ = e.one(A.TanhGradOp, y, dz) if c.needs[1] else None
    d_y = e.mul(e.mul(dz, g), e.mul(y, e.scalar(-2.0, y))) if c.needs[0] else None
    return [d_y, dy_]


@rule(A.SoftmaxGradOp)
def _softmax_grad(c: GradContext) -> Grads:
    """z = (g - sum(g s)) s over the last axis: d g = SoftmaxGrad(s, dz); d s = dz (g - sum(g s)) - g sum(dz s)."""
    e = c.e
    s, g = c.op.operands
    dz = c.dy()
    last = [len(shape(s)) - 1]
    dg = e.one(A.SoftmaxGradOp, s, dz) if c.needs[1] else None
    ds = None
    if c.needs[0]:
        gs = e.reduce_sum(e.mul(g, s), last, keep_dims=True)
        zs = e.reduce_sum(e.mul(dz, s), last, keep_dims=True)
        ds = e.sub(e.mul(dz, e.sub(g, gs)), e.mul(g, zs))
    return [ds, dg]


@rule(A.BiasAddGradOp)
def _bias_add_grad(c: GradContext) -> Grads:
    op, e = c.op, c.e
    assert isinstance(op, A.BiasAddGradOp)
    x = op.operands[0]
    rank = len(shape(x))
    ch = 1 if op.data_format == "NCHW" else rank - 1
    stat = [1] * rank
    stat[ch] = shape(x)[ch]
    return [broadcast_to(e, e.reshape(e.cast(c.dy(), dtype(x)), stat), shape(x))]


@rule(A.AvgPoolGradOp)
def _avg_pool_grad(c: GradContext) -> Grads:
    """AvgPoolGrad is the adjoint of AvgPool, so its adjoint is AvgPool."""
    op = c.op
    props = {k: op.properties[k] for k in ("ksize", "strides", "padding", "data_format")}
    return [c.e.one(A.AvgPoolOp, c.dy(), type_=op.operands[0].type, **props)]


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------


def where(op: Operation) -> str:
    """Where an error about `op` points: its source location, else `@name` for a function,
    `module` for a module, else its function and position."""
    loc = source_location(op)
    if loc is not None:
        return loc
    if isinstance(op, func.FuncOp):
        return f"@{op.sym_name.data}"
    if isinstance(op, ModuleOp):
        return "module"
    return location_of(op)


def pass_error(pass_name: str, op: Operation, message: str) -> AscendPassError:
    """`<where op is>: <pass>: <message>`, an xDSL diagnostic that the tools print as one line."""
    return AscendPassError(f"{where(op)}: {pass_name}: {message}")


def find_function(module: ModuleOp, name: str) -> func.FuncOp | None:
    """The top-level `func.func @name` of `module`, if any."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    return None


def function_names(module: ModuleOp) -> str:
    """`@a, @b` (or `none`): the module's functions, for error messages."""
    return ", ".join(f"@{op.sym_name.data}" for op in module.ops if isinstance(op, func.FuncOp)) or "none"


def _find_function(module: ModuleOp, name: str, pass_name: str) -> func.FuncOp:
    fn = find_function(module, name)
    if fn is None:
        raise pass_error(pass_name, module, f"no function @{name} in the module (functions: {function_names(module)})")
    return fn


def _is_float_value(v: SSAValue) -> bool:
    return is_float(tensor_dtype(v.type))


def _op_label(op: Operation) -> str:
    n = op.properties.get("name")
    return getattr(n, "data", None) or op.name.removeprefix("ascend.")


def loss_ops(body: Sequence[Operation], loss: SSAValue) -> list[Operation]:
    """The ops that compute the loss: each loss function (:data:`LOSS_FUNCTIONS`) the loss
    depends on and every op between it and the loss; without a loss function, the op that
    produces the loss."""
    feeds: set[Operation] = set()  # ops the loss depends on
    todo = [loss.owner]
    while todo:
        op = todo.pop()
        if not isinstance(op, Operation) or op in feeds:
            continue
        feeds.add(op)
        todo.extend(o.owner for o in op.operands)
    after_loss_fn: set[Operation] = set()
    for op in body:
        if isinstance(op, LOSS_FUNCTIONS) or any(o.owner in after_loss_fn for o in op.operands):
            after_loss_fn.add(op)
    found = [op for op in body if op in feeds and op in after_loss_fn]
    if not found and isinstance(loss.owner, A.AscendOp):
        found = [loss.owner]
    return found


def differentiate(
    module: ModuleOp, func_name: str = "forward", wrt: int | None = None, grad_name: str | None = None, keep_loss: bool = True
) -> func.FuncOp:
    """Add `@<func>_grad` to `module` (see the module docstring) and return it.

    `keep_loss`: mark the loss ops (:func:`loss_ops`), the seed and their gradient ops
    `keep_dtype`, so every precision mode computes the loss in its original dtype."""
    fwd = _find_function(module, func_name, "ascend-autodiff")
    grad_name = grad_name or f"{func_name}_grad"
    existing = find_function(module, grad_name)
    if existing is not None:
        after = " (or ascend-loss-scale, which runs it)" if find_function(module, "train_step") else ""
        raise pass_error(PASS, existing, f"function @{grad_name} already exists: ascend-autodiff{after} ran before; run ascend-autodiff once, before ascend-loss-scale")
    if len(fwd.body.blocks) != 1:
        raise pass_error(PASS, fwd, f"@{func_name} must have a single block")
    block = fwd.body.blocks[0]
    args = list(block.args)
    if wrt is None:
        wrt = len(args) - 2
    if not 0 < wrt <= len(args):
        raise pass_error(PASS, fwd, f"wrt={wrt} is out of range: @{func_name} has {len(args)} arguments")
    for i, a in enumerate(args[:wrt]):
        if not _is_float_value(a):
            raise pass_error(PASS, fwd, f"argument #{i} of @{func_name} ({a.type}) is not a float tensor and cannot be differentiated")
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or len(ret.arguments) != 1 or not _is_float_value(ret.arguments[0]):
        raise pass_error(PASS, ret if isinstance(ret, func.ReturnOp) else fwd, f"@{func_name} must return exactly one float tensor (the loss)")

    # Copy the forward computation.
    new_fn, new_block = new_function(grad_name, [a.type for a in args], [a.name_hint or f"arg{i}" for i, a in enumerate(args)])
    mapping: dict[SSAValue, SSAValue] = dict(zip(args, new_block.args))
    origin: dict[Operation, Operation] = {}
    body: list[Operation] = []
    for op in block.ops:
        if op is ret:
            break
        if op.regions:
            raise pass_error(PASS, op, f"ops with regions ({op.name}) are not supported")
        clone = op.clone(value_mapper=mapping)
        new_block.add_op(clone)
        origin[clone] = op
        body.append(clone)
    loss = mapping[ret.arguments[0]]
    if keep_loss:
        mark_all(loss_ops(body, loss))

    # Values that depend on a wrt argument (only they need gradients).
    active: set[SSAValue] = set(new_block.args[:wrt])
    for op in body:
        if any(o in active for o in op.operands):
            active.update(r for r in op.results if _is_float_value(r))

    e = Emitter(new_block)
    seed = e.const(1.0, tensor_dtype(loss.type) or "f32", shape(loss), name=SEED_NAME)
    if keep_loss:
        mark_keep_dtype(seed.owner)  # pyright: ignore[reportArgumentType]
    adjoint: dict[SSAValue, SSAValue] = {loss: seed}

    def accumulate(value: SSAValue, grad: SSAValue) -> None:
        grad = e.cast(grad, tensor_dtype(value.type) or "f32")
        prev = adjoint.get(value)
        adjoint[value] = grad if prev is None else e.add(prev, grad)

    for op in reversed(body):
        dys = [adjoint.get(r) for r in op.results]
        needs = [o in active for o in op.operands]
        if all(d is None for d in dys) or not any(needs):
            continue
        where_ = where(origin[op])
        if isinstance(op, A.AscendOp) and type(op) in NO_GRADIENT:
            continue
        fn = RULES.get(type(op)) if isinstance(op, A.AscendOp) else None
        if fn is None:
            raise AscendPassError(f"{where_}: ascend-autodiff: no gradient rule for {op.name}")
        assert isinstance(op, A.AscendOp)
        first = new_block.last_op
        grads = fn(GradContext(e, op, dys, needs, where_))
        for operand, grad, need in zip(op.operands, grads, needs):
            if grad is not None and need:
                accumulate(operand, grad)
        name_new_ops(new_block, first, f"gradients/{_op_label(op)}_grad")
        if is_kept(op):  # the backward of a kept op (the loss) is kept too
            mark_all(ops_after(new_block, first))

    results = [loss]
    for i, arg in enumerate(new_block.args[:wrt]):
        g = adjoint.get(arg)
        if g is None:
            g = e.const(0.0, tensor_dtype(arg.type) or "f32", shape(arg), name=f"gradients/zeros_{i}")
        results.append(g)
    finish_function(new_fn, new_block, results)
    module.body.blocks[0].insert_op_after(new_fn, fwd)
    return new_fn


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Generate `@<func>_grad(args) -> (loss, d loss / d arg_i for i < wrt)` with ascend gradient ops."""

    name = "ascend-autodiff"

    func: str = "forward"
    """The forward function: `(params..., inputs..., labels) -> loss`."""
    wrt: int | None = None
    """How many leading arguments to differentiate (default: all but the last two)."""
    grad_func: str | None = None
    """Name of the generated function (default `<func>_grad`)."""
    keep_loss: bool = True
    """Mark the loss ops and their gradients `keep_dtype` (fp32 under every mode); false lets the mode decide."""
    if_missing: bool = False
    """Do nothing when the gradient function exists already (`ascend-opt` adds such a pass in front
    of a precision pass that precedes `ascend-loss-scale`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.if_missing and find_function(op, self.grad_func or f"{self.func}_grad") is not None:
            return
        differentiate(op, self.func, self.wrt, self.grad_func, self.keep_loss)
