"""ascend-autodiff's rules for the ops the ONNX importer emits, each against central finite
differences of the forward function.

Every case is a one-op forward built with the emitter, `loss = sum(out * R)` with fixed random
weights R (so every output element gets its own gradient), on a shape drawn at random per seed.
Two checks per case:

- float64: the interpreter's reference mode runs forward and backward in float64; the gradient
  must match float64 central differences (eps 1e-6) within rtol 1e-6 (atol 1e-7 x max |fd|):
  what is left is the differencing error, so any wrong term in a rule fails it.
- float32: the gradient function runs in float32 (the trainer's fp32 mode) on float32 inputs and
  must match the same float64 differences within rtol 1e-4 (atol 1e-5 x max |fd|): float32
  rounding of a handful of ops, no more.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, finish_function, new_function, shape, tensor
from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.ir import parse_module, print_module, verify
from ascend_mp.passes.autodiff import NO_GRADIENT, RULES, differentiate

Body = Callable[[Emitter, list[SSAValue]], SSAValue]
Gen = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def uniform(rng: np.random.Generator, s: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, s)


def positive(rng: np.random.Generator, s: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, s)


def away(rng: np.random.Generator, s: tuple[int, ...]) -> np.ndarray:
    """±[0.2, 1]: no value near a kink at 0."""
    return rng.uniform(0.2, 1.0, s) * rng.choice([-1.0, 1.0], s)


def distinct(rng: np.random.Generator, s: tuple[int, ...]) -> np.ndarray:
    """Well separated values (no ties for max-like ops)."""
    return rng.permutation(np.linspace(-2.0, 2.0, math.prod(s))).reshape(s)


def spread(low: float, high: float) -> Gen:
    def gen(rng: np.random.Generator, s: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(low, high, s)

    return gen


@dataclass
class Case:
    """A one-op forward: argument shapes (drawn from `rng`), generators, the body, how many
    leading arguments are differentiated, and extra (integer/bool) constant arguments."""

    shapes: Callable[[np.random.Generator], list[tuple[int, ...]]]
    gens: list[Gen]
    body: Callable[[Emitter, list[SSAValue], list[tuple[int, ...]]], SSAValue]
    extras: Callable[[np.random.Generator, list[tuple[int, ...]]], list[np.ndarray]] = field(default=lambda rng, s: [])


def _int(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(rng.integers(lo, hi + 1))


def unary_case(cls: type[A.AscendOp], gen: Gen = uniform, **props: object) -> Case:
    return Case(
        lambda r: [tuple(_int(r, 1, 4) for _ in range(_int(r, 1, 3)))],
        [gen],
        lambda e, a, s: e.one(cls, a[0], **props),
    )


def binary_case(cls: type[A.AscendOp], gen1: Gen = uniform, gen2: Gen = uniform) -> Case:
    def shapes(r: np.random.Generator) -> list[tuple[int, ...]]:
        full = (_int(r, 1, 3), _int(r, 2, 4), _int(r, 2, 4))
        other = tuple(1 if r.random() < 0.4 else d for d in full[r.integers(0, 2) :])
        return [full, other] if r.random() < 0.5 else [other, full]

    return Case(shapes, [gen1, gen2], lambda e, a, s: e.binary(cls, a[0], a[1]))


def conv_case(groups: int) -> Case:
    def shapes(r: np.random.Generator) -> list[tuple[int, ...]]:
        cin, cout = groups * _int(r, 1, 2), groups * _int(r, 1, 2)
        return [(_int(r, 1, 2), cin, _int(r, 4, 6), _int(r, 4, 6)), (cout, cin // groups, 3, 3), (cout,)]

    def body(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
        n, _, h, w = s[0]
        return e.one(
            A.Conv2DOp,
            a[0],
            a[1],
            a[2],
            type_=tensor((n, s[1][0], (h + 1 - 3) // 2 + 1, w - 2)),
            strides=[1, 1, 2, 1],
            pads=[1, 0, 0, 0],
            groups=groups,
        )

    return Case(shapes, [uniform, uniform, uniform], body)


def _depthwise(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    n, c, h, w = s[0]
    return e.one(
        A.DepthwiseConv2DOp,
        a[0],
        a[1],
        a[2],
        type_=tensor((n, c * s[1][3], h, w)),
        strides=[1, 1, 1, 1],
        pads=[1, 1, 1, 1],
    )


def _pool_shapes(r: np.random.Generator) -> list[tuple[int, ...]]:
    return [(_int(r, 1, 2), _int(r, 1, 2), _int(r, 5, 7), _int(r, 5, 7))]


def pool_v2_case(cls: type[A.AscendOp], ceil: bool, pads: list[int], stride: int, **props: object) -> Case:
    def body(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
        n, c, h, w = s[0]
        oh = A.pool_v2_out(h, 3, stride, pads[0], pads[1], ceil)
        ow = A.pool_v2_out(w, 3, stride, pads[2], pads[3], ceil)
        return e.one(
            cls,
            a[0],
            type_=tensor((n, c, oh, ow)),
            ksize=[1, 1, 3, 3],
            strides=[1, 1, stride, stride],
            pads=pads,
            ceil_mode=ceil,
            **props,
        )

    return Case(_pool_shapes, [distinct], body)


def _global_pool(cls: type[A.AscendOp], **props: object) -> Case:
    def body(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
        n, c, _, _ = s[0]
        return e.one(
            cls,
            a[0],
            type_=tensor((n, c, 1, 1)),
            ksize=[1, 1, 1, 1],
            strides=[1, 1, 1, 1],
            global_pooling=True,
            **props,
        )

    return Case(_pool_shapes, [distinct], body)


def _bn_training(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    c = s[0][1]
    st = tensor((c,))
    return e.op(
        A.BatchNormOp, a[0], a[1], a[2], a[3], a[4], types=[a[0].type, st, st], epsilon=1e-3, is_training=True
    ).results[0]


def _bn_shapes(r: np.random.Generator) -> list[tuple[int, ...]]:
    c = _int(r, 1, 3)
    return [(_int(r, 2, 3), c, _int(r, 2, 3), _int(r, 2, 3)), (c,), (c,), (c,), (c,)]


def _layer_norm(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    x = s[0]
    stat = tensor((x[0], 1))
    return e.op(
        A.LayerNormOp,
        a[0],
        a[1],
        a[2],
        types=[a[0].type, stat, stat],
        begin_norm_axis=1,
        begin_params_axis=1,
        epsilon=1e-5,
    ).results[0]


def _gather_extras(r: np.random.Generator, s: list[tuple[int, ...]]) -> list[np.ndarray]:
    n = s[0][0]
    ids = r.integers(-n, n, size=(2, 3))
    ids[0, 0] = ids[1, 2] = 1  # a repeated index: the gradients of its rows add up
    return [ids.astype(np.int32)]


def _gather(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    return e.one(A.GatherV2DOp, a[0], a[1], type_=tensor((2, 3, *s[0][1:])), axis=0)


def _gather_mid(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    x = s[0]
    return e.one(A.GatherV2DOp, a[0], a[1], type_=tensor((x[0], 2, 3, x[2])), axis=1)


def _gather_mid_extras(r: np.random.Generator, s: list[tuple[int, ...]]) -> list[np.ndarray]:
    n = s[0][1]
    return [r.integers(-n, n, size=(2, 3)).astype(np.int64)]


def _slice(begin: list[int], end: list[int], strides: list[int], begin_mask: int = 0, end_mask: int = 0) -> Case:
    def body(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
        op = A.StridedSliceDOp(
            a[0],
            result_types=[tensor((1,))],
            begin=begin,
            end=end,
            strides=strides,
            begin_mask=begin_mask,
            end_mask=end_mask,
        )
        out = [len(range(*sl.indices(d))) for sl, d in zip(op.slices(s[0]), s[0])] + list(s[0][len(begin) :])
        return e.one(
            A.StridedSliceDOp,
            a[0],
            type_=tensor(out),
            begin=begin,
            end=end,
            strides=strides,
            begin_mask=begin_mask,
            end_mask=end_mask,
        )

    return Case(lambda r: [(_int(r, 5, 7), _int(r, 4, 6), _int(r, 1, 3))], [uniform], body)


def _batch_matmul_v2(adj1: bool, adj2: bool) -> Case:
    def shapes(r: np.random.Generator) -> list[tuple[int, ...]]:
        b, m, k, n = _int(r, 1, 3), _int(r, 1, 4), _int(r, 1, 4), _int(r, 1, 4)
        a = (b, 2, k, m) if adj1 else (b, 2, m, k)
        w = (n, k) if adj2 else (k, n)  # a rank-2 operand broadcast over the batch (attention's projections)
        return [a, w, (n,)]

    def body(e: Emitter, x: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
        a, w = s[0], s[1]
        m = a[-1] if adj1 else a[-2]
        n = w[-2] if adj2 else w[-1]
        return e.one(A.BatchMatMulV2Op, x[0], x[1], x[2], type_=tensor((*a[:-2], m, n)), adj_x1=adj1, adj_x2=adj2)

    return Case(shapes, [uniform, uniform, uniform], body)


def _attention_scores(e: Emitter, x: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    """q @ k^T with both operands batched, as in attention."""
    b, h, t, d = s[0]
    return e.one(A.BatchMatMulV2Op, x[0], x[1], None, type_=tensor((b, h, t, s[1][2])), adj_x2=True)


def _concat(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    return e.one(A.ConcatV2DOp, [a[0], a[1]], type_=tensor((s[0][0], s[0][1] + s[1][1], s[0][2])), concat_dim=1)


def _clip(e: Emitter, a: list[SSAValue], s: list[tuple[int, ...]]) -> SSAValue:
    return e.one(A.ClipByValueOp, a[0], a[1], a[2])


def _clip_shapes(r: np.random.Generator) -> list[tuple[int, ...]]:
    return [(_int(r, 2, 4), _int(r, 2, 4)), (), ()]


CASES: dict[str, tuple[type[A.AscendOp], Case]] = {
    # cube
    "Conv2D": (A.Conv2DOp, conv_case(1)),
    "Conv2D-grouped": (A.Conv2DOp, conv_case(2)),
    "DepthwiseConv2D": (
        A.DepthwiseConv2DOp,
        Case(lambda r: [(1, _int(r, 1, 3), 4, 5), (3, 3, 0, 2)], [uniform] * 3, _depthwise),
    ),
    "BatchMatMulV2": (A.BatchMatMulV2Op, _batch_matmul_v2(False, False)),
    "BatchMatMulV2-adj": (A.BatchMatMulV2Op, _batch_matmul_v2(True, True)),
    "BatchMatMulV2-attention": (
        A.BatchMatMulV2Op,
        Case(lambda r: [(2, 2, 3, 4), (2, 2, _int(r, 2, 4), 4)], [uniform, uniform], _attention_scores),
    ),
    # elementwise
    "Sub": (A.SubOp, binary_case(A.SubOp)),
    "Mul": (A.MulOp, binary_case(A.MulOp)),
    "RealDiv": (A.RealDivOp, binary_case(A.RealDivOp, uniform, positive)),
    "Pow": (A.PowOp, binary_case(A.PowOp, positive, uniform)),
    "Maximum": (A.MaximumOp, binary_case(A.MaximumOp)),
    "Minimum": (A.MinimumOp, binary_case(A.MinimumOp)),
    "Neg": (A.NegOp, unary_case(A.NegOp)),
    "Sqrt": (A.SqrtOp, unary_case(A.SqrtOp, positive)),
    "Rsqrt": (A.RsqrtOp, unary_case(A.RsqrtOp, positive)),
    "Exp": (A.ExpOp, unary_case(A.ExpOp)),
    "Log": (A.LogOp, unary_case(A.LogOp, positive)),
    "Sigmoid": (A.SigmoidOp, unary_case(A.SigmoidOp)),
    "Tanh": (A.TanhOp, unary_case(A.TanhOp)),
    "Gelu": (A.GeluOp, unary_case(A.GeluOp)),
    "Erf": (A.ErfOp, unary_case(A.ErfOp, spread(-2.0, 2.0))),
    "Relu6": (A.Relu6Op, unary_case(A.Relu6Op, spread(-3.0, 9.0))),
    "HardSigmoid": (A.HardSigmoidOp, unary_case(A.HardSigmoidOp, spread(-5.0, 5.0), alpha=0.2, beta=0.5)),
    "ClipByValue": (
        A.ClipByValueOp,
        Case(_clip_shapes, [spread(-2.0, 2.0), spread(-1.2, -0.8), spread(0.8, 1.2)], _clip),
    ),
    "SelectV2": (
        A.SelectV2Op,
        Case(
            lambda r: [(_int(r, 2, 3), _int(r, 2, 4)), (1, 1)],
            [uniform, uniform],
            lambda e, a, s: e.one(A.SelectV2Op, a[2], a[0], a[1], type_=a[0].type),
            lambda r, s: [r.random(s[0]) < 0.5],
        ),
    ),
    # reduce
    "SoftmaxV2": (A.SoftmaxV2Op, unary_case(A.SoftmaxV2Op, uniform, axes=[-1])),
    "LogSoftmaxV2": (A.LogSoftmaxV2Op, unary_case(A.LogSoftmaxV2Op, uniform, axes=[-1])),
    "ReduceSum": (
        A.ReduceSumOp,
        Case(
            lambda r: [(2, 3, 4)],
            [uniform],
            lambda e, a, s: e.one(A.ReduceSumOp, a[0], type_=tensor((2, 1, 4)), axes=[1], keep_dims=True),
        ),
    ),
    "ReduceMean-global": (
        A.ReduceMeanOp,
        Case(
            _pool_shapes,
            [uniform],
            lambda e, a, s: e.one(A.ReduceMeanOp, a[0], type_=tensor((*s[0][:2], 1, 1)), axes=[2, 3], keep_dims=True),
        ),
    ),
    "ReduceMax-global": (
        A.ReduceMaxOp,
        Case(
            _pool_shapes,
            [distinct],
            lambda e, a, s: e.one(A.ReduceMaxOp, a[0], type_=tensor((*s[0][:2], 1, 1)), axes=[2, 3], keep_dims=True),
        ),
    ),
    "MaxPoolV3": (A.MaxPoolV3Op, pool_v2_case(A.MaxPoolV3Op, False, [1, 1, 1, 0], 2)),
    "MaxPoolV3-ceil": (A.MaxPoolV3Op, pool_v2_case(A.MaxPoolV3Op, True, [0, 1, 1, 1], 2)),
    "MaxPoolV3-global": (A.MaxPoolV3Op, _global_pool(A.MaxPoolV3Op)),
    "AvgPoolV2-exclusive": (A.AvgPoolV2Op, pool_v2_case(A.AvgPoolV2Op, False, [1, 1, 1, 1], 2)),
    "AvgPoolV2-inclusive-ceil": (A.AvgPoolV2Op, pool_v2_case(A.AvgPoolV2Op, True, [1, 0, 1, 1], 2, exclusive=False)),
    "AvgPoolV2-stride1": (A.AvgPoolV2Op, pool_v2_case(A.AvgPoolV2Op, False, [1, 1, 0, 1], 1, exclusive=False)),
    "AvgPoolV2-global": (A.AvgPoolV2Op, _global_pool(A.AvgPoolV2Op)),
    "BatchNorm-training": (
        A.BatchNormOp,
        Case(_bn_shapes, [uniform, uniform, uniform, uniform, positive], _bn_training),
    ),
    "BNInfer": (
        A.BNInferOp,
        Case(
            _bn_shapes,
            [uniform, uniform, uniform, uniform, positive],
            lambda e, a, s: e.one(A.BNInferOp, a[0], a[1], a[2], a[3], a[4], epsilon=1e-3),
        ),
    ),
    "LayerNorm": (
        A.LayerNormOp,
        Case(lambda r: [(_int(r, 1, 3), _int(r, 2, 5)), (0,), (0,)], [uniform] * 3, _layer_norm),
    ),
    # shape
    "GatherV2D-embedding": (
        A.GatherV2DOp,
        Case(lambda r: [(_int(r, 3, 5), _int(r, 1, 3))], [uniform], _gather, _gather_extras),
    ),
    "GatherV2D-axis1": (
        A.GatherV2DOp,
        Case(lambda r: [(2, _int(r, 3, 5), 2)], [uniform], _gather_mid, _gather_mid_extras),
    ),
    "StridedSliceD-split": (A.StridedSliceDOp, _slice([0, 1], [0, 3], [1, 1], begin_mask=1, end_mask=1)),
    "StridedSliceD-steps": (A.StridedSliceDOp, _slice([1, -1], [5, 0], [2, -2])),
    "StridedSliceD-negative": (A.StridedSliceDOp, _slice([-3], [100], [1])),
    "ConcatV2D": (
        A.ConcatV2DOp,
        Case(lambda r: [(2, _int(r, 1, 3), 2), (2, _int(r, 1, 3), 2)], [uniform, uniform], _concat),
    ),
    "Transpose": (
        A.TransposeOp,
        Case(
            lambda r: [(2, 3, 4)],
            [uniform],
            lambda e, a, s: e.one(A.TransposeOp, a[0], type_=tensor((4, 2, 3)), perm=[2, 0, 1]),
        ),
    ),
    "Reshape": (A.ReshapeOp, Case(lambda r: [(2, 6)], [uniform], lambda e, a, s: e.reshape(a[0], (3, 4)))),
    "BroadcastToD": (
        A.BroadcastToDOp,
        Case(
            lambda r: [(_int(r, 1, 3), 1)],
            [uniform],
            lambda e, a, s: e.one(A.BroadcastToDOp, a[0], type_=tensor((2, s[0][0], 3)), shape=[2, s[0][0], 3]),
        ),
    ),
    "TileD": (
        A.TileDOp,
        Case(
            lambda r: [(_int(r, 1, 3), _int(r, 1, 3))],
            [uniform],
            lambda e, a, s: e.one(A.TileDOp, a[0], type_=tensor((2 * s[0][0], 3 * s[0][1])), multiples=[2, 3]),
        ),
    ),
}


def _fix_shapes(name: str, shapes: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Shapes some cases derive from others (depthwise filter, layer norm parameters)."""
    if name == "DepthwiseConv2D":
        return [shapes[0], (3, 3, shapes[0][1], 2), (shapes[0][1] * 2,)]
    if name == "LayerNorm":
        return [shapes[0], shapes[0][1:], shapes[0][1:]]
    return shapes


def build(name: str, seed: int) -> tuple[ModuleOp, list[np.ndarray], int]:
    """The case's module `@forward(wrt args..., extras...) -> sum(out * R)` and its inputs."""
    cls, case = CASES[name]
    rng = np.random.default_rng(seed * 1000 + sum(map(ord, name)))
    shapes = _fix_shapes(name, case.shapes(rng))
    args = [g(rng, s) for g, s in zip(case.gens, shapes)]
    extras = case.extras(rng, shapes)
    types = [tensor(s) for s in shapes] + [
        tensor(x.shape, {"int32": "i32", "int64": "i64", "bool": "i1"}[x.dtype.name]) for x in extras
    ]
    fn, block = new_function("forward", types)
    e = Emitter(block)
    out = case.body(e, list(block.args), shapes)
    assert isinstance(out.owner, cls), f"{name} builds {out.owner.name}, not {cls.name}"
    weighted = e.mul(out, e.const(rng.uniform(0.5, 1.5, shape(out))))
    finish_function(fn, block, [e.reduce_sum(weighted, range(len(shape(out))))])
    module = ModuleOp([fn])
    verify(module)
    return module, args + extras, len(args)


def central_differences(prog: Program, args: list[np.ndarray], wrt: int, eps: float = 1e-6) -> list[np.ndarray]:
    out = []
    for i in range(wrt):
        fd = np.zeros_like(args[i], dtype=np.float64)
        for k in range(fd.size):
            hi = [a.copy() for a in args]
            lo = [a.copy() for a in args]
            hi[i].reshape(-1)[k] += eps
            lo[i].reshape(-1)[k] -= eps
            fd.reshape(-1)[k] = (prog.run("forward", *hi)[0] - prog.run("forward", *lo)[0]) / (2 * eps)
        out.append(fd)
    return out


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_central_differences(name: str, seed: int) -> None:
    module, args, wrt = build(name, seed)
    differentiate(module, "forward", wrt)
    verify(module)
    text = print_module(module)
    assert print_module(parse_module(text)) == text  # the gradient function prints and parses back
    ref = Program.from_module(module, reference=True)
    args64 = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    fd = central_differences(ref, args64, wrt)
    _, *grads = ref.run("forward_grad", *args64)
    for i in range(wrt):
        np.testing.assert_allclose(
            grads[i],
            fd[i],
            rtol=1e-6,
            atol=1e-7 * max(1.0, float(np.abs(fd[i]).max())),
            err_msg=f"{name}: float64 gradient of argument {i}",
        )
    f32 = Program.from_module(module)
    _, *grads32 = f32.run("forward_grad", *[a.astype(np.float32) if a.dtype.kind == "f" else a for a in args])
    for i in range(wrt):
        assert grads32[i].dtype == np.float32
        np.testing.assert_allclose(
            grads32[i],
            fd[i],
            rtol=1e-4,
            atol=1e-5 * max(1.0, float(np.abs(fd[i]).max())),
            err_msg=f"{name}: float32 gradient of argument {i}",
        )


FD_TESTED_ELSEWHERE = {
    A.MatMulOp,
    A.MatMulV2Op,
    A.BatchMatMulOp,
    A.Conv2DBackpropInputOp,
    A.Conv2DBackpropFilterOp,
    A.BiasAddOp,
    A.AddOp,
    A.SelectOp,
    A.ReluOp,
    A.LeakyReluOp,
    A.SquareOp,
    A.CastOp,
    A.SoftmaxCrossEntropyWithLogitsOp,
    A.MaxPoolOp,
    A.AvgPoolOp,
    A.BNTrainingUpdateOp,
    A.BNTrainingReduceOp,
    A.OneHotOp,
    A.ReluGradOp,
    A.LeakyReluGradOp,
    A.SigmoidGradOp,
    A.TanhGradOp,
    A.SoftmaxGradOp,
    A.BiasAddGradOp,
    A.AvgPoolGradOp,
}
"""Rules whose finite-difference tests live in test/test_autodiff.py."""


def test_every_rule_has_a_finite_difference_test() -> None:
    covered = {cls for cls, _ in CASES.values()} | FD_TESTED_ELSEWHERE
    assert set(RULES) - covered == set()


def test_every_op_the_importer_emits_has_a_rule_or_no_gradient() -> None:
    """The ops `ascend_mp.frontend.converters` emits (read from its source) all have a rule or
    carry no gradient."""
    import inspect
    import re

    from ascend_mp.frontend import converters

    source = inspect.getsource(converters)
    emitted = {getattr(A, m) for m in re.findall(r"ascend\.(\w+Op)\b", source)}
    emitted |= {
        A.OPS_BY_TYPE[m] for m in re.findall(r'"(\w+)"', source) if m in A.OPS_BY_TYPE
    }  # _op("MaxPoolV3"), tables
    emitted &= set(A.OPS)  # not the base classes named in annotations
    assert {cls.name for cls in emitted - set(RULES) - set(NO_GRADIENT)} == set()
    assert {A.GatherV2DOp, A.BatchMatMulV2Op, A.StridedSliceDOp, A.MaxPoolV3Op, A.BNInferOp} <= emitted


def test_ops_without_rules_are_one_error_listing_each_type_and_count() -> None:
    text = """\
func.func @forward(%x: tensor<1x1x2x2xf32>, %dy: tensor<1x1x2x2xf32>) -> tensor<f32> {
  %m = ascend.MaxPoolGrad %x, %x, %dy {ksize = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = ascend.Gelu %m : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %g = ascend.GeluGrad %dy, %m, %y : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %h = ascend.GeluGrad %g, %m, %y : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %l = ascend.ReduceSum %h {axes = array<i64: 0, 1, 2, 3>} : (tensor<1x1x2x2xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
"""
    module = parse_module(text, "model.mlir")
    with pytest.raises(AscendError) as info:
        differentiate(module, "forward", 1)
    assert (
        str(info.value)
        == "model.mlir:2:3: ascend-autodiff: no gradient rule for ascend.MaxPoolGrad (1 op), ascend.GeluGrad (2 ops)"
    )
    assert [op.sym_name.data for op in module.ops] == ["forward"]  # nothing was added


def test_embedding_gradient_of_a_large_vocabulary_is_a_scatter_add() -> None:
    """Vocabulary 50k, 128 tokens: no value of the gradient function is larger than the table
    (a one-hot encoding would be tokens x vocab = 6.4M elements), and the gradient equals the
    float64 scatter-add np.add.at (repeated and negative ids included)."""
    vocab, dim = 50_000, 16
    r = np.random.default_rng(7)
    table = r.standard_normal((vocab, dim))
    ids = r.integers(-vocab, vocab, size=(4, 32))
    ids[1, :4] = ids[0, 0]  # repeats add up
    weights = r.uniform(0.5, 1.5, (4, 32, dim))
    fn, block = new_function("forward", [tensor((vocab, dim)), tensor(ids.shape, "i64")])
    e = Emitter(block)
    out = e.one(A.GatherV2DOp, block.args[0], block.args[1], type_=tensor((4, 32, dim)), axis=0)
    finish_function(fn, block, [e.reduce_sum(e.mul(out, e.const(weights)), range(3))])
    module = ModuleOp([fn])
    differentiate(module, "forward", 1)
    verify(module)
    grad_fn = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "forward_grad")  # pyright: ignore[reportAttributeAccessIssue]  # func.FuncOp
    largest = max(math.prod(shape(v)) for op in grad_fn.walk() for v in op.results if hasattr(v.type, "shape"))
    assert largest <= vocab * dim
    assert any(isinstance(op, A.UnsortedSegmentSumDOp) for op in grad_fn.walk())
    _, grad = Program.from_module(module, reference=True).run("forward_grad", table, ids)
    want = np.zeros((vocab, dim))
    np.add.at(want, ids.reshape(-1) % vocab, weights.astype(np.float32).reshape(-1, dim))  # the constant is fp32
    np.testing.assert_allclose(grad, want, rtol=1e-12, atol=1e-12)
