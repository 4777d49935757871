"""ascend-autodiff: every gradient rule against central finite differences in float64
(the interpreter's reference mode), the MLP and CNN end to end, and the pass's errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ascend_mp.builder import Emitter, finish_function, mlp, new_function, shape, small_cnn, tensor
from ascend_mp.dialects import ascend as A
from ascend_mp.errors import AscendError, AscendPassError
from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context, parse_module, print_module, verify
from ascend_mp.passes import PASSES
from ascend_mp.passes.autodiff import NO_GRADIENT, RULES, SEED_NAME, differentiate

Body = Callable[[Emitter, list[SSAValue]], SSAValue | Sequence[SSAValue]]


def build(
    arg_shapes: Sequence[Sequence[int]], body: Body, seed: int = 0, arg_dtypes: Sequence[str] | None = None
) -> ModuleOp:
    """`@forward(args) -> sum_k sum(out_k * R_k)` with fixed random weights R_k, so every
    output element gets a distinct gradient."""
    dtypes = list(arg_dtypes or ["f32"] * len(arg_shapes))
    fn, block = new_function("forward", [tensor(s, d) for s, d in zip(arg_shapes, dtypes)])
    e = Emitter(block)
    outs = body(e, list(block.args))
    outs = [outs] if isinstance(outs, SSAValue) else list(outs)
    rng = np.random.default_rng(seed + 100)
    loss = None
    for out in outs:
        weighted = e.mul(e.cast(out, "f32"), e.const(rng.uniform(0.5, 1.5, shape(out))))
        term = e.reduce_sum(weighted, range(len(shape(out)))) if shape(out) else weighted
        loss = term if loss is None else e.add(loss, term)
    assert loss is not None
    finish_function(fn, block, [loss])
    module = ModuleOp([fn])
    verify(module)
    return module


def check(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    wrt: int | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-6,
    atol: float = 1e-7,
) -> list[np.ndarray]:
    """Compare @forward_grad with central differences of @forward, both in float64."""
    wrt = len(inputs) if wrt is None else wrt
    differentiate(module, "forward", wrt)
    verify(module)
    prog = Program.from_module(module, reference=True)
    args = [np.asarray(a, np.float64) for a in inputs]
    loss, *grads = prog.run("forward_grad", *args)
    assert np.allclose(loss, prog.run("forward", *args)[0])
    for i in range(wrt):
        fd = np.zeros_like(args[i])
        flat = fd.reshape(-1)
        for k in range(flat.size):
            hi = [a.copy() for a in args]
            lo = [a.copy() for a in args]
            hi[i].reshape(-1)[k] += eps
            lo[i].reshape(-1)[k] -= eps
            flat[k] = (prog.run("forward", *hi)[0] - prog.run("forward", *lo)[0]) / (2 * eps)
        np.testing.assert_allclose(
            grads[i], fd, rtol=rtol, atol=atol * max(1.0, float(np.abs(fd).max())), err_msg=f"gradient of argument {i}"
        )
    return grads


def rand(*shape_: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape_)).uniform(low, high, shape_)


def away_from_zero(*shape_: int, seed: int = 0) -> np.ndarray:
    """Values in ±[0.2, 1], for ops with a kink at 0."""
    a = rand(*shape_, seed=seed, low=0.2, high=1.0)
    signs = np.where(np.random.default_rng(seed + 7).random(shape_) < 0.5, -1.0, 1.0)
    return a * signs


def distinct(*shape_: int, seed: int = 0) -> np.ndarray:
    """A permutation of well-separated values (no ties for max-like ops)."""
    n = int(np.prod(shape_))
    return np.random.default_rng(seed).permutation(np.linspace(-1, 1, n)).reshape(shape_)


def t(v: SSAValue) -> tuple[int, ...]:
    return shape(v)


# --------------------------------------------------------------------------------------
# Cube ops
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("cls", [A.MatMulV2Op, A.MatMulOp])
def test_matmul(ta: bool, tb: bool, cls: type[A.AscendOp]) -> None:
    a = (4, 3) if ta else (3, 4)
    b = (5, 4) if tb else (4, 5)

    def body(e: Emitter, x: list[SSAValue]) -> SSAValue:
        return e.one(cls, x[0], x[1], x[2], type_=tensor((3, 5)), transpose_x1=ta, transpose_x2=tb)

    check(build([a, b, (5,)], body), [rand(*a), rand(*b, seed=1), rand(5, seed=2)])


@pytest.mark.parametrize(("adj1", "adj2"), [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_broadcast(adj1: bool, adj2: bool) -> None:
    a = (2, 4, 3) if adj1 else (2, 3, 4)
    b = (1, 5, 4) if adj2 else (1, 4, 5)

    def body(e: Emitter, x: list[SSAValue]) -> SSAValue:
        return e.one(A.BatchMatMulOp, x[0], x[1], type_=tensor((2, 3, 5)), adj_x1=adj1, adj_x2=adj2)

    check(build([a, b], body), [rand(*a), rand(*b, seed=1)])


@pytest.mark.parametrize(("stride", "pads", "dil"), [(1, [0, 0, 0, 0], 1), (2, [1, 0, 1, 1], 1), (1, [1, 1, 1, 1], 2)])
def test_conv2d(stride: int, pads: list[int], dil: int) -> None:
    x, w = (2, 2, 6, 6), (3, 2, 3, 3)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        h = (6 + pads[0] + pads[1] - dil * 2 - 1) // stride + 1
        wd = (6 + pads[2] + pads[3] - dil * 2 - 1) // stride + 1
        return e.one(
            A.Conv2DOp, a[0], a[1], a[2], type_=tensor((2, 3, h, wd)),
            strides=[1, 1, stride, stride], pads=pads, dilations=[1, 1, dil, dil],
        )  # fmt: skip

    check(build([x, w, (3,)], body), [rand(*x), rand(*w, seed=1), rand(3, seed=2)])


def test_conv2d_nhwc_groups() -> None:
    x, w = (1, 5, 5, 4), (3, 3, 2, 4)  # HWIO, 2 groups of 2 channels

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(
            A.Conv2DOp, a[0], a[1], None, type_=tensor((1, 3, 3, 4)), strides=[1, 1, 1, 1], groups=2, data_format="NHWC"
        )

    check(build([x, w], body), [rand(*x), rand(*w, seed=1)])


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_depthwise_conv2d(fmt: str) -> None:
    x = (1, 3, 5, 5) if fmt == "NCHW" else (1, 5, 5, 3)
    y = (1, 6, 4, 4) if fmt == "NCHW" else (1, 4, 4, 6)
    w = (2, 2, 3, 2)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(A.DepthwiseConv2DOp, a[0], a[1], a[2], type_=tensor(y), strides=[1, 1, 1, 1], data_format=fmt)

    check(build([x, w, (6,)], body), [rand(*x), rand(*w, seed=1), rand(6, seed=2)])


def test_conv2d_backprop_ops() -> None:
    """The backprop ops are linear in each operand, so they have rules too (second order)."""
    w, dy, x = (3, 2, 3, 3), (1, 3, 4, 4), (1, 2, 6, 6)

    def body(e: Emitter, a: list[SSAValue]) -> list[SSAValue]:
        dx = e.one(A.Conv2DBackpropInputOp, a[0], a[1], type_=tensor(x), input_size=list(x), strides=[1, 1, 1, 1])
        dw = e.one(A.Conv2DBackpropFilterOp, a[2], a[1], type_=tensor(w), filter_size=list(w), strides=[1, 1, 1, 1])
        return [dx, dw]

    check(build([w, dy, x], body), [rand(*w), rand(*dy, seed=1), rand(*x, seed=2)])


# --------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
def test_bias_add(fmt: str) -> None:
    x = (2, 3, 2, 2)
    c = 3 if fmt == "NCHW" else 2

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(A.BiasAddOp, a[0], a[1], data_format=fmt)

    check(build([x, (c,)], body), [rand(*x), rand(c, seed=1)])


BINARY = [A.AddOp, A.SubOp, A.MulOp, A.RealDivOp, A.MaximumOp, A.MinimumOp, A.PowOp]


@pytest.mark.parametrize("cls", BINARY, ids=lambda c: c.name)
@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 2))])
def test_binary_broadcast(cls: type[A.AscendOp], sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.binary(cls, a[0], a[1])

    if cls is A.PowOp:
        xa, xb = rand(*sa, low=0.5, high=2.0), rand(*sb, seed=1, low=-1.5, high=1.5)
    elif cls in (A.MaximumOp, A.MinimumOp):
        xa, xb = distinct(*sa), distinct(*sb, seed=1) + 0.013
    else:
        xa, xb = rand(*sa), away_from_zero(*sb, seed=1)
    check(build([sa, sb], body), [xa, xb], rtol=1e-5)


def test_maximum_ties_go_to_x1() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.binary(A.MaximumOp, a[0], a[1])

    module = build([(3,), (3,)], body)
    differentiate(module, "forward", 2)
    prog = Program.from_module(module, reference=True)
    x = np.array([1.0, 2.0, 3.0])
    _, d1, d2 = prog.run("forward_grad", x, np.array([1.0, 5.0, 0.0]))
    assert d1[0] != 0 and d2[0] == 0 and d1[1] == 0 and d2[2] == 0


UNARY: list[tuple[type[A.AscendOp], Callable[[tuple[int, ...]], np.ndarray], dict[str, object]]] = [
    (A.NegOp, lambda s: rand(*s), {}),
    (A.ReluOp, lambda s: away_from_zero(*s), {}),
    (A.LeakyReluOp, lambda s: away_from_zero(*s), {"negative_slope": 0.2}),
    (A.GeluOp, lambda s: rand(*s, low=-2, high=2), {}),
    (A.SigmoidOp, lambda s: rand(*s, low=-3, high=3), {}),
    (A.TanhOp, lambda s: rand(*s, low=-2, high=2), {}),
    (A.ExpOp, lambda s: rand(*s), {}),
    (A.LogOp, lambda s: rand(*s, low=0.5, high=2), {}),
    (A.SqrtOp, lambda s: rand(*s, low=0.5, high=2), {}),
    (A.RsqrtOp, lambda s: rand(*s, low=0.5, high=2), {}),
    (A.SquareOp, lambda s: rand(*s), {}),
    (A.FloorOp, lambda s: rand(*s, low=0.1, high=0.9) + np.arange(np.prod(s)).reshape(s), {}),
]


@pytest.mark.parametrize(("cls", "gen", "props"), UNARY, ids=lambda v: getattr(v, "name", ""))
def test_unary(cls: type[A.AscendOp], gen: Callable[[tuple[int, ...]], np.ndarray], props: dict[str, object]) -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(cls, a[0], **props)

    check(build([(2, 3)], body), [gen((2, 3))], rtol=1e-5)


def test_cast_gradient_goes_back_to_the_input_dtype() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.cast(e.mul(e.cast(a[0], "f16"), e.const(2.0, "f16")), "f32")

    module = build([(2, 2)], body)
    check(module, [rand(2, 2)])
    text = print_module(module)
    assert "ascend.Cast" in text.split("gradients/seed")[1]


# --------------------------------------------------------------------------------------
# Softmax, reductions, normalisation, pooling
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("axes", [[-1], [0]])
@pytest.mark.parametrize("cls", [A.SoftmaxV2Op, A.LogSoftmaxV2Op])
def test_softmax(cls: type[A.AscendOp], axes: list[int]) -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(cls, a[0], axes=axes)

    check(build([(3, 4)], body), [rand(3, 4, low=-2, high=2)])


@pytest.mark.parametrize("cls", [A.ReduceSumOp, A.ReduceMeanOp, A.ReduceMaxOp])
@pytest.mark.parametrize(("axes", "keep"), [([1], False), ([0, 2], True), ([], False)])
def test_reductions(cls: type[A.AscendOp], axes: list[int], keep: bool) -> None:
    x = (2, 3, 4)
    red = axes or [0, 1, 2]
    out = [1 if i in red else d for i, d in enumerate(x)] if keep else [d for i, d in enumerate(x) if i not in red]

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(cls, a[0], type_=tensor(out), axes=axes, keep_dims=keep)

    check(build([x], body), [distinct(*x)])


def test_reduce_max_ties_share_the_gradient() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(A.ReduceMaxOp, a[0], type_=tensor(()), axes=[0])

    module = build([(4,)], body)
    differentiate(module, "forward", 1)
    _, g = Program.from_module(module, reference=True).run("forward_grad", np.array([1.0, 3.0, 3.0, 0.0]))
    assert g[0] == 0 and g[1] == g[2] != 0 and g[3] == 0


def test_softmax_cross_entropy_both_operands() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.op(A.SoftmaxCrossEntropyWithLogitsOp, a[0], a[1], types=[tensor((3,)), tensor((3, 4))]).results[0]

    labels = rand(3, 4, seed=1, low=0, high=1)
    check(build([(3, 4), (3, 4)], body), [rand(3, 4, low=-2, high=2), labels / labels.sum(1, keepdims=True)])


@pytest.mark.parametrize("cls", [A.MaxPoolOp, A.AvgPoolOp])
@pytest.mark.parametrize(("fmt", "padding"), [("NCHW", "VALID"), ("NHWC", "VALID"), ("NCHW", "SAME")])
def test_pooling(cls: type[A.AscendOp], fmt: str, padding: str) -> None:
    x = (1, 2, 5, 5) if fmt == "NCHW" else (1, 5, 5, 2)
    k = [1, 1, 2, 2] if fmt == "NCHW" else [1, 2, 2, 1]
    s = [1, 1, 2, 2] if fmt == "NCHW" else [1, 2, 2, 1]
    o = 2 if padding == "VALID" else 3
    y = (1, 2, o, o) if fmt == "NCHW" else (1, o, o, 2)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(cls, a[0], type_=tensor(y), ksize=k, strides=s, padding=padding, data_format=fmt)

    check(build([x], body), [distinct(*x)])


def test_layer_norm() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        stat = tensor((3, 1))
        return e.op(
            A.LayerNormOp, a[0], a[1], a[2], types=[tensor((3, 4)), stat, stat], begin_norm_axis=1, begin_params_axis=1
        ).results[0]

    check(build([(3, 4), (4,), (4,)], body), [rand(3, 4, low=-2, high=2), rand(4, seed=1), rand(4, seed=2)], rtol=1e-5)


@pytest.mark.parametrize(("training", "fmt"), [(True, "NCHW"), (True, "NHWC"), (False, "NCHW")])
def test_batch_norm(training: bool, fmt: str) -> None:
    x = (2, 3, 2, 2) if fmt == "NCHW" else (2, 2, 2, 3)
    c = (3,)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.op(
            A.BatchNormOp,
            *a,
            types=[tensor(x), tensor(c), tensor(c)],
            epsilon=1e-3,
            is_training=training,
            data_format=fmt,
        ).results[0]

    stats = [rand(3, seed=3), rand(3, seed=4, low=0.5, high=1.5)]
    wrt = 3 if training else 5
    check(
        build([x, c, c, c, c], body),
        [rand(*x, low=-2, high=2), rand(3, seed=1), rand(3, seed=2), *stats],
        wrt=wrt,
        rtol=1e-5,
    )


def test_bn_training_reduce_update() -> None:
    x, c = (2, 3, 2, 2), (3,)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        red = e.op(A.BNTrainingReduceOp, a[0], types=[tensor(c), tensor(c)])
        upd = e.op(
            A.BNTrainingUpdateOp,
            a[0],
            red.results[0],
            red.results[1],
            a[1],
            a[2],
            a[3],
            a[4],
            types=[tensor(x), *[tensor(c)] * 4],
            epsilon=1e-3,
        )
        return upd.results[0]

    stats = [rand(3, seed=3), rand(3, seed=4, low=0.5, high=1.5)]
    check(
        build([x, c, c, c, c], body),
        [rand(*x, low=-2, high=2), rand(3, seed=1), rand(3, seed=2), *stats],
        wrt=3,
        rtol=1e-5,
    )


def test_bn_training_reduce_alone() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> list[SSAValue]:
        return list(e.op(A.BNTrainingReduceOp, a[0], types=[tensor((3,)), tensor((3,))]).results)

    check(build([(2, 3, 2, 2)], body), [rand(2, 3, 2, 2)])


# --------------------------------------------------------------------------------------
# Data movement, OneHot
# --------------------------------------------------------------------------------------


def test_reshape_transpose() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        r = e.reshape(a[0], (3, 2, 2))
        return e.one(A.TransposeOp, r, type_=tensor((2, 3, 2)), perm=[2, 0, 1])

    check(build([(2, 6)], body), [rand(2, 6)])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_concat(dim: int) -> None:
    shapes = [(2, 3), (2, 3), (2, 3)] if dim == 0 else [(2, 1), (2, 3), (2, 2)]
    out = (6, 3) if dim == 0 else (2, 6)

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(A.ConcatV2DOp, a, type_=tensor(out), concat_dim=dim)

    check(build(shapes, body), [rand(*s, seed=i) for i, s in enumerate(shapes)])


def test_one_hot_values() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        idx = e.const(np.array([0, 2, 1, 2]), "i32")
        return e.one(A.OneHotOp, idx, a[0], a[1], type_=tensor((4, 3)), depth=3)

    check(build([(), ()], body), [np.array(0.7), np.array(-0.2)])


# --------------------------------------------------------------------------------------
# Gradient ops as forward ops (second order)
# --------------------------------------------------------------------------------------


def test_second_order_elementwise() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> list[SSAValue]:
        x, g = a
        s = e.one(A.SigmoidOp, x)
        th = e.one(A.TanhOp, x)
        return [
            e.one(A.ReluGradOp, g, x),
            e.one(A.LeakyReluGradOp, g, x, negative_slope=0.1),
            e.one(A.SigmoidGradOp, s, g),
            e.one(A.TanhGradOp, th, g),
            e.one(A.SoftmaxGradOp, e.one(A.SoftmaxV2Op, x), g),
        ]

    check(build([(3, 4), (3, 4)], body), [away_from_zero(3, 4), rand(3, 4, seed=1)], rtol=1e-5)


def test_second_order_bias_and_pool() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> list[SSAValue]:
        bg = e.one(A.BiasAddGradOp, a[0], type_=tensor((2,)))
        ag = e.one(
            A.AvgPoolGradOp,
            a[1],
            type_=tensor((1, 2, 4, 4)),
            orig_input_shape=[1, 2, 4, 4],
            ksize=[1, 1, 2, 2],
            strides=[1, 1, 2, 2],
        )
        return [bg, ag]

    check(build([(3, 2, 2, 2), (1, 2, 2, 2)], body), [rand(3, 2, 2, 2), rand(1, 2, 2, 2, seed=1)])


# --------------------------------------------------------------------------------------
# Whole models, accumulation, structure
# --------------------------------------------------------------------------------------


def test_accumulates_multiple_uses() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        x = a[0]
        return e.add(e.mul(x, x), e.one(A.ExpOp, x))

    module = build([(2, 2)], body)
    check(module, [rand(2, 2)])
    assert "gradients/" in print_module(module)


def test_mlp_end_to_end() -> None:
    model = mlp((6, 5, 4))
    module = model.forward_module(batch=3)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6))
    labels = np.eye(4)[[0, 3, 1]]
    check(module, [*model.init_params(1), x, labels], wrt=4, rtol=1e-5)


def test_cnn_end_to_end() -> None:
    model = small_cnn()
    module = model.forward_module(batch=2)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 1, 8, 8))
    labels = np.eye(10)[[2, 7]]
    check(module, [*model.init_params(2), x, labels], wrt=4, rtol=1e-5)


def test_forward_is_unchanged_and_names_are_tf_style() -> None:
    module = mlp((4, 3, 2)).forward_module(batch=2)
    before = print_module(module)
    PASSES["ascend-autodiff"]()().apply(make_context(), module)
    after = print_module(module)
    assert before.split("func.func @predict")[0].strip() in after
    grad = after.split("@forward_grad")[1].split("func.func @predict")[0]
    assert f'name = "{SEED_NAME}"' in grad
    assert "ascend.ReluGrad" in grad and 'name = "gradients/relu_0_grad/ReluGrad"' in grad
    assert "transpose_x1 = true" in grad and "transpose_x2 = true" in grad
    # The first layer's input gradient is never computed (x is not differentiated).
    assert grad.count("ascend.MatMulV2") == 2 + 3


def test_unused_parameter_gets_zeros() -> None:
    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        return e.one(A.ExpOp, a[0])

    module = build([(2,), (3,)], body)
    _, g0, g1 = (lambda m: Program.from_module(m, reference=True).run("forward_grad", np.ones(2), np.ones(3)))(
        (differentiate(module, "forward", 2), module)[1]
    )
    assert g0.shape == (2,) and np.all(g1 == 0)


# --------------------------------------------------------------------------------------
# Registry and errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scalar", [False, True], ids=["mask", "flag"])
def test_select(scalar: bool) -> None:
    """The chosen operand gets dy, the other zeros; the arguments feeding only the condition get none."""

    def body(e: Emitter, a: list[SSAValue]) -> list[SSAValue]:
        x1, x2, c = a
        flag = e.reduce_sum(c, [0, 1]) if scalar else c
        cond = e.one(A.GreaterOp, flag, e.const(0.0), type_=tensor(shape(flag), "i1"))
        pick = e.one(A.SelectOp, cond, x1, x2, type_=x1.type)
        both = e.one(A.SelectOp, cond, e.mul(x2, x1), x1, type_=x1.type)  # x1 on both sides: its gradients add up
        return [pick, both]

    shapes = [(3, 4), (3, 4), (3, 4)]
    for sign in (1.0, -1.0):
        cond = sign * away_from_zero(3, 4, seed=2)
        grads = check(build(shapes, body), [rand(3, 4), rand(3, 4, seed=1), cond])
        assert not grads[2].any()


SECOND_ORDER_WITHOUT_RULE = {
    A.MaxPoolGradOp,
    A.GeluGradOp,
    A.LayerNormGradOp,
    A.BNTrainingUpdateGradOp,
    A.BNTrainingReduceGradOp,
    A.UnsortedSegmentSumDOp,  # the embedding's scatter-add gradient
}
STATEFUL = {A.ApplyGradientDescentOp, A.ApplyMomentumDOp, A.ApplyAdamDOp}
INFERENCE_ONLY = {
    A.PadV3DOp,
    A.ResizeDOp,
    A.ReduceMinOp,
    A.ReduceProdOp,
    A.InstanceNormOp,
    A.CumsumDOp,
    A.ScatterNdUpdateOp,
}
"""Ops of the segmentation and detection models' ONNX imports whose gradient rules are not written yet: the pass
refuses them with its one-line "no gradient rule" error."""


def test_every_op_has_a_rule_or_a_reason() -> None:
    for cls in A.OPS:
        assert cls in RULES or cls in NO_GRADIENT or cls in SECOND_ORDER_WITHOUT_RULE | STATEFUL | INFERENCE_ONLY, (
            cls.name
        )
    assert not set(RULES) & set(NO_GRADIENT)


GELU_GRAD = """\
func.func @forward(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<f32> {
  %y = ascend.Gelu %x : (tensor<4xf32>) -> tensor<4xf32>
  %g = ascend.GeluGrad %dy, %x, %y : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = ascend.ReduceSum %g {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def test_missing_rule_is_a_one_line_error_with_location() -> None:
    module = parse_module(GELU_GRAD, "model.mlir")
    with pytest.raises(AscendError) as info:
        differentiate(module, "forward", 1)
    assert str(info.value) == "model.mlir:3:3: ascend-autodiff: no gradient rule for ascend.GeluGrad (1 op)"
    assert isinstance(info.value, AscendPassError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"func_name": "nope"}, "no function @nope in the module (functions: @forward)"),
        ({"wrt": 3}, "wrt=3 is out of range: @forward has 2 arguments"),
        ({"wrt": 0}, "wrt=0 is out of range"),
    ],
)
def test_option_errors(kwargs: dict[str, object], message: str) -> None:
    module = parse_module(GELU_GRAD, "model.mlir")
    with pytest.raises(AscendError, match=message.replace("(", r"\(").replace(")", r"\)")):
        differentiate(module, **kwargs)  # pyright: ignore[reportArgumentType]


def test_errors_for_bad_functions() -> None:
    two_results = "func.func @forward(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {\n  func.return %x, %x : tensor<2xf32>, tensor<2xf32>\n}\n"
    with pytest.raises(AscendError, match="must return exactly one float tensor"):
        differentiate(parse_module(two_results), "forward", 1)
    int_arg = "func.func @forward(%i: tensor<2xi32>, %x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n"
    with pytest.raises(AscendError, match=r"argument #0 of @forward \(tensor<2xi32>\) is not a float tensor"):
        differentiate(parse_module(int_arg), "forward", 1)
    module = mlp((2, 2)).forward_module(1)
    differentiate(module)
    with pytest.raises(AscendError, match="function @forward_grad already exists"):
        differentiate(module)


def _layer_norm_module(norm_axis: int, epsilon: float) -> ModuleOp:
    """LayerNorm of a (2, 3, 4) input, normalised from `norm_axis`, its parameters over the last axis."""

    def body(e: Emitter, a: list[SSAValue]) -> SSAValue:
        stat = tensor(tuple(d if i < norm_axis else 1 for i, d in enumerate((2, 3, 4))))  # kept dims
        return e.op(
            A.LayerNormOp,
            a[0],
            a[1],
            a[2],
            types=[tensor((2, 3, 4)), stat, stat],
            begin_norm_axis=norm_axis,
            begin_params_axis=2,
            epsilon=epsilon,
        ).results[0]

    return build([(2, 3, 4), (4,), (4,)], body)


@pytest.mark.parametrize("epsilon", [1e-5, 1e-3])
def test_layer_norm_other_epsilon_uses_layer_norm_grad(epsilon: float) -> None:
    """LayerNormGrad adds its own epsilon (1e-7) to the variance: another epsilon (ONNX's and
    PyTorch's 1e-5) reaches it as `variance + (epsilon - 1e-7)`; float64 finite differences agree."""

    module = _layer_norm_module(norm_axis=2, epsilon=epsilon)
    # a row of nearly equal values: the variance is of the order of epsilon, so a wrong epsilon shows
    x = rand(2, 3, 4, low=-2, high=2)
    x[0, 1] = 0.5 + 1e-2 * rand(4, seed=3)
    check(module, [x, rand(4, seed=1), rand(4, seed=2)], rtol=1e-5)
    assert "ascend.LayerNormGrad" in print_module(module)


def test_layer_norm_statistics_and_parameters_on_other_axes() -> None:
    """Without LayerNormGrad's assumption (statistics and parameters from one axis) the rule uses elementwise ops."""

    module = _layer_norm_module(norm_axis=1, epsilon=1e-3)
    check(module, [rand(2, 3, 4, low=-2, high=2), rand(4, seed=1), rand(4, seed=2)], rtol=1e-5)
    assert "LayerNormGrad" not in print_module(module)


def test_unsupported_result_gradients_are_errors() -> None:
    """A rule that only handles some results fails on the others (here LayerNorm's mean, SCE's backprop)."""
    mean_used = """\
func.func @forward(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %unused: tensor<3xf32>) -> tensor<f32> {
  %y, %m, %v = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %l = ascend.ReduceSum %m {axes = array<i64: 0, 1>} : (tensor<2x1xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
"""
    with pytest.raises(
        AscendError, match=r"model.mlir:2:3: ascend-autodiff: no gradient rule for result #1 of ascend.LayerNorm"
    ):
        differentiate(parse_module(mean_used, "model.mlir"), "forward", 1)
    backprop_used = """\
func.func @forward(%z: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> tensor<f32> {
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %z, %t : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %s = ascend.ReduceSum %bp {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
"""
    with pytest.raises(AscendError, match=r"no gradient rule for result #1 of ascend.SoftmaxCrossEntropyWithLogits"):
        differentiate(parse_module(backprop_used, "model.mlir"), "forward", 1)


def test_bn_training_update_needs_its_reduce() -> None:
    text = """\
func.func @forward(%x: tensor<2x3x2x2xf32>, %s: tensor<3xf32>, %ss: tensor<3xf32>, %c: tensor<3xf32>) -> tensor<f32> {
  %y, %m, %v, %bm, %bv = ascend.BNTrainingUpdate %x, %s, %ss, %c, %c, %c, %c : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %l = ascend.ReduceSum %y {axes = array<i64: 0, 1, 2, 3>} : (tensor<2x3x2x2xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
"""
    with pytest.raises(
        AscendError,
        match="model.mlir:2:3: ascend-autodiff: the gradient of ascend.BNTrainingUpdate needs its sum and square_sum from a BNTrainingReduce",
    ):
        differentiate(parse_module(text, "model.mlir"), "forward", 1)


def test_functions_with_several_blocks_or_nested_regions_are_refused() -> None:
    from xdsl.dialects import func
    from xdsl.ir import Block, Region

    two_blocks = func.FuncOp(
        "forward", ([tensor((2,))], [tensor(())]), Region([Block(arg_types=[tensor((2,))]), Block()])
    )
    with pytest.raises(AscendError, match="@forward must have a single block"):
        differentiate(ModuleOp([two_blocks]), "forward", 1)
    fn, block = new_function("forward", [tensor((2,))])
    inner, inner_block = new_function("inner", [])
    finish_function(inner, inner_block, [])
    block.add_op(inner)
    finish_function(fn, block, [Emitter(block).reduce_sum(block.args[0], [0])])
    with pytest.raises(AscendError, match=r"ops with regions \(func.func\) are not supported"):
        differentiate(ModuleOp([fn]), "forward", 1)
