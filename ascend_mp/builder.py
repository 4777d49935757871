"""A small model-building API that emits ascend IR.

```python
from ascend_mp.builder import Sequential, Dense, Relu

model = Sequential([Dense(64, 128), Relu(), Dense(128, 10)])
module = model.forward_module(batch=32)      # @forward(params..., x, labels) -> loss, @predict(params..., x) -> logits
params = model.init_params(seed=0)           # fp32 numpy arrays, in the functions' argument order
```

`@forward` ends in a softmax cross-entropy averaged over the batch (`ReduceMean`), in
fp32 whatever the model dtype. Every op carries a TF-style `name` (`dense_0/MatMulV2`)
that `keep_dtype` / `customize_dtypes` files can refer to.

The IR emitter it uses (:class:`~ascend_mp.emit.Emitter`, shared with the frontends and
the training passes) lives in :mod:`ascend_mp.emit`; it is re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from ascend_mp.dialects import ascend
from ascend_mp.emit import Emitter, classification_loss, dense, dtype, finish_function, new_function, shape, tensor
from ascend_mp.errors import AscendError

__all__ = [
    "AvgPool",
    "Conv2D",
    "Dense",
    "Emitter",
    "Flatten",
    "Gelu",
    "Layer",
    "LayerNorm",
    "LeakyRelu",
    "MaxPool",
    "Param",
    "Relu",
    "Sequential",
    "Sigmoid",
    "Tanh",
    "dense",
    "dtype",
    "finish_function",
    "mlp",
    "new_function",
    "shape",
    "small_cnn",
    "tensor",
]

Shape = tuple[int, ...]

# --------------------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------------------


@dataclass
class Param:
    """One trainable tensor: its name (used as SSA name hint) and shape."""

    name: str
    shape: Shape
    init: str
    """`he`, `glorot`, `zeros` or `ones`."""
    fan_in: int = 1
    fan_out: int = 1


class Layer:
    """A model layer: its parameters, output shape (per example) and IR."""

    kind: ClassVar[str] = "layer"

    def params(self, in_shape: Shape) -> list[Param]:
        return []

    def out_shape(self, in_shape: Shape) -> Shape:
        return in_shape

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        raise NotImplementedError


@dataclass
class Dense(Layer):
    """`y = x @ W + b`; W is `[in, out]`."""

    in_features: int
    out_features: int
    bias: bool = True
    kind: ClassVar[str] = "dense"

    def params(self, in_shape: Shape) -> list[Param]:
        if in_shape != (self.in_features,):
            raise AscendError(
                f"Dense({self.in_features}, {self.out_features}) expects inputs of shape ({self.in_features},), got {in_shape}"
            )
        ps = [Param("w", (self.in_features, self.out_features), "glorot", self.in_features, self.out_features)]
        if self.bias:
            ps.append(Param("b", (self.out_features,), "zeros"))
        return ps

    def out_shape(self, in_shape: Shape) -> Shape:
        return (self.out_features,)

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        n = shape(x)[0]
        y = e.one(
            ascend.MatMulV2Op,
            x,
            params[0],
            None,
            type_=tensor((n, self.out_features), dtype(x)),
            name=f"{scope}/MatMulV2",
        )
        if self.bias:
            y = e.one(ascend.BiasAddOp, y, params[1], name=f"{scope}/BiasAdd")
        return y


def _pair(v: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    a, b = v
    return (int(a), int(b))


@dataclass
class Conv2D(Layer):
    """NCHW convolution with an OIHW filter, `pad` on every side, then a bias."""

    in_channels: int
    out_channels: int
    kernel_size: int | tuple[int, int]
    stride: int | tuple[int, int] = 1
    pad: int = 0
    bias: bool = True
    kind: ClassVar[str] = "conv"

    def params(self, in_shape: Shape) -> list[Param]:
        if len(in_shape) != 3 or in_shape[0] != self.in_channels:
            raise AscendError(
                f"Conv2D({self.in_channels}, {self.out_channels}, ...) expects inputs of shape ({self.in_channels}, H, W), got {in_shape}"
            )
        kh, kw = _pair(self.kernel_size)
        fan_in, fan_out = self.in_channels * kh * kw, self.out_channels * kh * kw
        ps = [Param("w", (self.out_channels, self.in_channels, kh, kw), "glorot", fan_in, fan_out)]
        if self.bias:
            ps.append(Param("b", (self.out_channels,), "zeros"))
        return ps

    def out_shape(self, in_shape: Shape) -> Shape:
        (kh, kw), (sh, sw) = _pair(self.kernel_size), _pair(self.stride)
        h = (in_shape[1] + 2 * self.pad - kh) // sh + 1
        w = (in_shape[2] + 2 * self.pad - kw) // sw + 1
        if h < 1 or w < 1:
            raise AscendError(f"Conv2D kernel {self.kernel_size} does not fit an input of shape {in_shape}")
        return (self.out_channels, h, w)

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        sh, sw = _pair(self.stride)
        out = (shape(x)[0], *self.out_shape(shape(x)[1:]))
        y = e.one(
            ascend.Conv2DOp, x, params[0], None, type_=tensor(out, dtype(x)), name=f"{scope}/Conv2D",
            strides=[1, 1, sh, sw], pads=[self.pad] * 4,
        )  # fmt: skip
        if self.bias:
            y = e.one(ascend.BiasAddOp, y, params[1], name=f"{scope}/BiasAdd")
        return y


@dataclass
class _Pool(Layer):
    kernel_size: int | tuple[int, int] = 2
    stride: int | tuple[int, int] | None = None
    OP: ClassVar[type[ascend.AscendOp]] = ascend.MaxPoolOp

    def _ks(self) -> tuple[tuple[int, int], tuple[int, int]]:
        k = _pair(self.kernel_size)
        return k, _pair(self.stride) if self.stride is not None else k

    def out_shape(self, in_shape: Shape) -> Shape:
        if len(in_shape) != 3:
            raise AscendError(f"{type(self).__name__} expects (C, H, W) inputs, got {in_shape}")
        (kh, kw), (sh, sw) = self._ks()
        h, w = (in_shape[1] - kh) // sh + 1, (in_shape[2] - kw) // sw + 1
        if h < 1 or w < 1:
            raise AscendError(
                f"{type(self).__name__} window {self.kernel_size} does not fit an input of shape {in_shape}"
            )
        return (in_shape[0], h, w)

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        (kh, kw), (sh, sw) = self._ks()
        out = (shape(x)[0], *self.out_shape(shape(x)[1:]))
        return e.one(
            self.OP, x, type_=tensor(out, dtype(x)), name=f"{scope}/{self.OP.name.removeprefix('ascend.')}",
            ksize=[1, 1, kh, kw], strides=[1, 1, sh, sw], padding="VALID",
        )  # fmt: skip


@dataclass
class MaxPool(_Pool):
    """Max pooling over `kernel_size` windows (stride defaults to the window)."""

    kind: ClassVar[str] = "maxpool"


@dataclass
class AvgPool(_Pool):
    """Average pooling over `kernel_size` windows (stride defaults to the window)."""

    OP: ClassVar[type[ascend.AscendOp]] = ascend.AvgPoolOp
    kind: ClassVar[str] = "avgpool"


@dataclass
class Flatten(Layer):
    """Reshape `(N, ...)` to `(N, prod(...))`."""

    kind: ClassVar[str] = "flatten"

    def out_shape(self, in_shape: Shape) -> Shape:
        return (math.prod(in_shape),)

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        n = shape(x)[0]
        return e.one(
            ascend.ReshapeOp, x, type_=tensor((n, *self.out_shape(shape(x)[1:])), dtype(x)), name=f"{scope}/Reshape"
        )


@dataclass
class _Activation(Layer):
    OP: ClassVar[type[ascend.AscendOp]] = ascend.ReluOp

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        return e.one(self.OP, x, name=scope)


@dataclass
class Relu(_Activation):
    kind: ClassVar[str] = "relu"


@dataclass
class Sigmoid(_Activation):
    OP: ClassVar[type[ascend.AscendOp]] = ascend.SigmoidOp
    kind: ClassVar[str] = "sigmoid"


@dataclass
class Tanh(_Activation):
    OP: ClassVar[type[ascend.AscendOp]] = ascend.TanhOp
    kind: ClassVar[str] = "tanh"


@dataclass
class Gelu(_Activation):
    OP: ClassVar[type[ascend.AscendOp]] = ascend.GeluOp
    kind: ClassVar[str] = "gelu"


@dataclass
class LeakyRelu(_Activation):
    negative_slope: float = 0.01
    kind: ClassVar[str] = "leaky_relu"

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        return e.one(ascend.LeakyReluOp, x, name=scope, negative_slope=float(self.negative_slope))


@dataclass
class LayerNorm(Layer):
    """Layer normalisation over the features of each example, with `gamma` and `beta`."""

    features: int
    epsilon: float = 1e-5
    kind: ClassVar[str] = "layer_norm"

    def params(self, in_shape: Shape) -> list[Param]:
        if in_shape != (self.features,):
            raise AscendError(f"LayerNorm({self.features}) expects inputs of shape ({self.features},), got {in_shape}")
        return [Param("gamma", (self.features,), "ones"), Param("beta", (self.features,), "zeros")]

    def emit(self, e: Emitter, x: SSAValue, params: Sequence[SSAValue], scope: str) -> SSAValue:
        n = shape(x)[0]
        stat = tensor((n, 1), dtype(x))
        op = e.op(
            ascend.LayerNormOp, x, params[0], params[1], types=[x.type, stat, stat], name=f"{scope}/LayerNorm",
            begin_norm_axis=1, begin_params_axis=1, epsilon=float(self.epsilon),
        )  # fmt: skip
        return op.results[0]


_RELU_LIKE = (Relu, LeakyRelu, Gelu)

# --------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------


class Sequential:
    """A stack of layers ending in logits, trained with softmax cross-entropy.

    `input_shape` is one example's shape; it defaults to `(in_features,)` of a first `Dense`.
    `name` labels the model in training summaries, histories and plots.
    """

    def __init__(
        self,
        layers: Sequence[Layer],
        input_shape: Sequence[int] | None = None,
        num_classes: int | None = None,
        name: str = "model",
    ):
        if not layers:
            raise AscendError("Sequential needs at least one layer")
        if not name or not name.isprintable():
            raise AscendError(f"Sequential: the name must be printable and non-empty, got {name!r}")
        self.name = name
        self.layers = list(layers)
        if input_shape is None:
            first = self.layers[0]
            if not isinstance(first, (Dense, LayerNorm)):
                raise AscendError(
                    f"Sequential: give input_shape= when the first layer is not Dense ({type(first).__name__})"
                )
            input_shape = (first.in_features if isinstance(first, Dense) else first.features,)
        self.input_shape: Shape = tuple(int(d) for d in input_shape)
        # Shapes and parameters, layer by layer.
        self.scopes: list[str] = []
        self.layer_params: list[list[Param]] = []
        counts: dict[str, int] = {}
        s = self.input_shape
        for layer in self.layers:
            k = counts.get(layer.kind, 0)
            counts[layer.kind] = k + 1
            scope = f"{layer.kind}_{k}"
            self.scopes.append(scope)
            ps = layer.params(s)
            for p in ps:
                p.name = f"{scope}_{p.name}"
            self.layer_params.append(ps)
            s = layer.out_shape(s)
        if len(s) != 1:
            raise AscendError(
                f"Sequential: the last layer must give logits of shape (classes,), got {s}; add Flatten and Dense"
            )
        self.num_classes = s[0]
        if num_classes is not None and num_classes != s[0]:
            raise AscendError(f"Sequential: the model gives {s[0]} logits, expected {num_classes}")

    @property
    def params(self) -> list[Param]:
        """Every parameter, in argument order."""
        return [p for ps in self.layer_params for p in ps]

    def init_params(self, seed: int = 0) -> list[np.ndarray]:
        """fp32 initial values: He-normal for weights feeding a ReLU-like activation, Glorot-uniform otherwise."""
        rng = np.random.default_rng(seed)
        out: list[np.ndarray] = []
        for i, ps in enumerate(self.layer_params):
            relu_next = i + 1 < len(self.layers) and isinstance(self.layers[i + 1], _RELU_LIKE)
            for p in ps:
                if p.init == "zeros":
                    a = np.zeros(p.shape)
                elif p.init == "ones":
                    a = np.ones(p.shape)
                elif relu_next:
                    a = rng.normal(0.0, math.sqrt(2.0 / p.fan_in), p.shape)
                else:
                    limit = math.sqrt(6.0 / (p.fan_in + p.fan_out))
                    a = rng.uniform(-limit, limit, p.shape)
                out.append(a.astype(np.float32))
        return out

    def _body(self, e: Emitter, params: Sequence[SSAValue], x: SSAValue) -> SSAValue:
        pos = 0
        for layer, scope, ps in zip(self.layers, self.scopes, self.layer_params):
            x = layer.emit(e, x, params[pos : pos + len(ps)], scope)
            pos += len(ps)
        return x

    def forward_module(self, batch: int, dtype: str = "f32", keep_loss: bool = True) -> ModuleOp:
        """`@forward(params..., x, labels_onehot) -> mean loss (f32)` and `@predict(params..., x) -> logits`.

        `dtype` is the parameters' and activations' dtype; logits are cast to fp32 for the loss.
        `keep_loss` marks the loss ops (`loss/SoftmaxCrossEntropyWithLogits`, `loss/ReduceMean`)
        `keep_dtype`, so every precision mode computes the loss in fp32; False lets the mode decide.
        """
        if dtype not in ("f32", "f16", "bf16"):
            raise AscendError(f"forward_module: dtype must be f32, f16 or bf16, got '{dtype}'")
        if batch < 1:
            raise AscendError(f"forward_module: batch must be positive, got {batch}")
        ptypes = [tensor(p.shape, dtype) for p in self.params]
        names = [p.name for p in self.params]
        xtype = tensor((batch, *self.input_shape), dtype)
        ltype = tensor((batch, self.num_classes), "f32")

        fwd, block = new_function("forward", [*ptypes, xtype, ltype], [*names, "x", "labels"])
        e = Emitter(block)
        logits = e.cast(self._body(e, block.args[: len(ptypes)], block.args[-2]), "f32")
        loss = classification_loss(e, logits, block.args[-1], keep_loss)
        finish_function(fwd, block, [loss])

        pred, block = new_function("predict", [*ptypes, xtype], [*names, "x"])
        e = Emitter(block)
        finish_function(pred, block, [self._body(e, block.args[: len(ptypes)], block.args[-1])])
        return ModuleOp([fwd, pred])

    def summary(self) -> str:
        """One line per layer: scope, output shape, parameter count."""
        lines = []
        s = self.input_shape
        for layer, scope, ps in zip(self.layers, self.scopes, self.layer_params):
            s = layer.out_shape(s)
            lines.append(f"{scope:<12} out {str(s):<14} params {sum(math.prod(p.shape) for p in ps)}")
        lines.append(f"total params {sum(math.prod(p.shape) for p in self.params)}")
        return "\n".join(lines)


def mlp(sizes: Sequence[int] = (64, 128, 10)) -> Sequential:
    """`Dense -> Relu -> ... -> Dense` with the given layer sizes (the digits MLP by default)."""
    layers: list[Layer] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        if i:
            layers.append(Relu())
        layers.append(Dense(a, b))
    return Sequential(layers, name="mlp")


def small_cnn() -> Sequential:
    """A small CNN for 1x8x8 digits: conv 3x3 (8) -> relu -> maxpool 2 -> flatten -> dense 10."""
    return Sequential(
        [Conv2D(1, 8, 3, pad=1), Relu(), MaxPool(2), Flatten(), Dense(8 * 4 * 4, 10)],
        input_shape=(1, 8, 8),
        name="cnn",
    )


def example_main(model: Sequential, description: str) -> None:
    """The command line of `examples/*.py`: print the model's IR (`--train`: with @forward_grad and @train_step)."""
    import argparse

    from ascend_mp.ir import make_context, print_module
    from ascend_mp.passes import PASSES

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--train", action="store_true", help="add the gradient and training-step functions")
    args = parser.parse_args()
    module = model.forward_module(args.batch)
    if args.train:
        ctx = make_context()
        PASSES["ascend-autodiff"]()().apply(ctx, module)
        PASSES["ascend-loss-scale"]()().apply(ctx, module)
    print(print_module(module), end="")
