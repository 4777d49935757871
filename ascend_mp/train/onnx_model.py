"""Train an imported ONNX model: :class:`OnnxModel` gives the trainer what a builder
`Sequential` gives it (`params`, `init_params`, `forward_module`, `input_shape`, `num_classes`).

```python
model = OnnxModel("net.onnx", batch=32, example_shape=(3, 32, 32))
result = train(TrainConfig(precision_mode="allow_mix_precision"), model=model, data=data)
model.save_onnx(result.params, "trained.onnx")
```

The model is imported with :func:`ascend_mp.frontend.import_onnx` (batch dimension fixed to
the training batch). Its float initializers become the fp32 master parameters, in the order
the imported graph first uses them (a depthwise filter, which the importer re-lays out to
`[KH, KW, C, M]`, is trained in that layout and laid out back by :meth:`save_onnx`).
Initializers folded into other constants at import stay frozen (:attr:`frozen` names them).

Training appends softmax cross-entropy (mean over the batch) on the chosen output (`output`,
default the first), which must be `[batch, classes]` logits. BatchNormalization (imported as
`BNInfer`) trains with batch statistics (`BatchNorm` with `is_training`); its running mean
and variance are parameters without gradient (the optimizer leaves them as they are) that
:meth:`after_step` updates after every step with the node's `momentum`
(`running = momentum * running + (1 - momentum) * batch`, the batch variance Bessel-corrected
as in PyTorch), from an fp32 forward on the step's batch with the updated weights (dropout
off). `@predict` (evaluation, export) uses the running statistics.

Dropout (ratio r > 0) is honoured in training and off in `@predict`: before import each
Dropout node becomes `Mul(x, marker)` with a scalar marker initializer; `@forward` takes one
fp32 mask per Dropout (after the input, before the labels) and multiplies by it, so the
gradient flows through the mask. :meth:`step_inputs` draws the masks (Bernoulli(1 - r) /
(1 - r), inverted dropout as in PyTorch) from the generator the trainer seeds from the run's
seed. A Dropout whose mask output is used stays an identity (with a warning).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, classification_loss, dtype, finish_function, new_function, shape, tensor
from ascend_mp.errors import AscendError

DROPOUT_MARKER = "ascend_mp/dropout/"
"""Prefix of the scalar initializers that stand for Dropout nodes in the imported graph."""
DEPTHWISE_SUFFIX = "/hwcm"
"""The importer's name for a depthwise filter re-laid out from ONNX's [C*M, 1, KH, KW]."""


@dataclass
class OnnxParam:
    """One trained tensor: its initializer, shape in the IR, and role."""

    name: str
    shape: tuple[int, ...]
    initializer: str
    role: str = "weight"
    """`weight`, or `running_mean` / `running_var` of a BatchNormalization (no gradient)."""


@dataclass
class _BatchNorm:
    name: str
    mean: int
    var: int
    momentum: float


def load_proto(path: str | Path) -> Any:
    """The ONNX `ModelProto` at `path` (one-line errors)."""
    import onnx

    try:
        return onnx.load(str(path))
    except FileNotFoundError:
        raise AscendError(f"{path}: no such file") from None
    except Exception as e:  # noqa: BLE001 - onnx raises DecodeError, OSError, ...: one line
        raise AscendError(
            f"{path}: not a readable ONNX model ({type(e).__name__}: {' '.join(str(e).split())})"
        ) from None


def _scalar(proto: Any, name: str, default: float) -> float:
    """The value of a scalar initializer or Constant output `name` (`default` if absent)."""
    from onnx import numpy_helper

    if not name:
        return default
    for t in proto.graph.initializer:
        if t.name == name:
            return float(numpy_helper.to_array(t).reshape(-1)[0])
    for n in proto.graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            value = next((a for a in n.attribute if a.name == "value"), None)
            if value is not None:
                return float(numpy_helper.to_array(value.t).reshape(-1)[0])
    return default


def mark_dropouts(proto: Any) -> tuple[Any, dict[str, float]]:
    """A copy of `proto` with each Dropout node (ratio > 0, mask output unused) replaced by
    `Mul(x, marker)`, and {marker name: keep probability}."""
    import onnx
    from onnx import TensorProto, helper

    used = {i for n in proto.graph.node for i in n.input} | {o.name for o in proto.graph.output}
    marked = onnx.ModelProto()
    marked.CopyFrom(proto)
    keep: dict[str, float] = {}
    nodes = []
    for node in marked.graph.node:
        if node.op_type != "Dropout":
            nodes.append(node)
            continue
        attr_ratio = next((a.f for a in node.attribute if a.name == "ratio"), 0.5)
        ratio = _scalar(marked, node.input[1], 0.5) if len(node.input) > 1 and node.input[1] else attr_ratio
        if len(node.output) > 1 and node.output[1] in used:
            logging.getLogger("ascend_mp.train").warning(
                "Dropout '%s': its mask output is used, so it stays an identity in training", node.name
            )
            nodes.append(node)
            continue
        if not 0 < ratio < 1:
            nodes.append(node)
            continue
        marker = f"{DROPOUT_MARKER}{len(keep)}"
        keep[marker] = 1.0 - ratio
        marked.graph.initializer.append(helper.make_tensor(marker, TensorProto.FLOAT, [], [1.0]))
        nodes.append(helper.make_node("Mul", [node.input[0], marker], [node.output[0]], name=node.name or marker))
    del marked.graph.node[:]
    marked.graph.node.extend(nodes)
    return marked, keep


def model_inputs(proto: Any) -> list[str]:
    """The names of the model's inputs that are not initializers."""
    inits = {t.name for t in proto.graph.initializer}
    return [i.name for i in proto.graph.input if i.name not in inits]


class OnnxModel:
    """An ONNX classifier prepared for `ascend_mp.train.train` (see the module docstring)."""

    def __init__(
        self,
        path: str | Path,
        batch: int,
        example_shape: tuple[int, ...] | dict[str, tuple[int, ...]] | None = None,
        output: str | None = None,
    ):
        from onnx import numpy_helper

        from ascend_mp.frontend import import_onnx

        self.path = Path(path)
        self.proto = load_proto(path)
        self.name = self.path.stem or "onnx"
        graph = self.proto.graph
        self.initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        inputs = [i for i in graph.input if i.name not in self.initializers]
        if not inputs:
            raise AscendError(f"{path}: training needs a model with an input, this one has none")
        self.input_names = [i.name for i in inputs]
        self.input_name = self.input_names[0]
        given = example_shape if isinstance(example_shape, dict) else {self.input_name: example_shape}
        if not isinstance(example_shape, dict) and len(inputs) > 1 and example_shape is not None:
            raise AscendError(f"{path}: the model has inputs {', '.join(self.input_names)}: give data for each by name")
        self.input_shapes = {i.name: self._example_shape(i, given.get(i.name)) for i in inputs}
        """Each input's example shape (without the batch dimension)."""
        self.input_shape: Any = (
            self.input_shapes[self.input_name]
            if len(inputs) == 1
            else tuple((n, s) for n, s in self.input_shapes.items())
        )
        """The example shape (one input) or ((name, shape), ...) (several), as `example_shape` states the data's."""
        self.batch = batch
        outputs = [o.name for o in graph.output]
        if output is None:
            output = outputs[0]
        elif output not in outputs:
            raise AscendError(f"--output: '{output}' is not an output of {path} (outputs: {', '.join(outputs)})")
        self.output_index = outputs.index(output)
        self.output = output
        marked, self.dropout_keep = mark_dropouts(self.proto)
        self._consumed = {i for n in marked.graph.node for i in n.input}
        self.module = import_onnx(marked, {n: [batch, *sh] for n, sh in self.input_shapes.items()}, name=str(path))
        self.main = next(op for op in self.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
        ret = self.main.body.blocks[0].last_op
        assert isinstance(ret, func.ReturnOp)
        logits = ret.arguments[self.output_index]
        ls = shape(logits)
        if len(ls) != 2 or ls[0] != batch or dtype(logits) not in ("f32", "f16", "bf16"):
            raise AscendError(
                f"{path}: output '{output}' must be float logits of shape (batch, classes), got {ls} {dtype(logits)}; name another with --output"
            )
        self.num_classes = ls[1]
        self.input_dtypes = {n: dtype(a) for n, a in zip(self.input_names, self.main.body.blocks[0].args)}
        """Each input's dtype in the IR (`f32`, `i64` for token ids, ...)."""
        self.input_dtype = self.input_dtypes[self.input_name]
        self._find_params()
        self.dropouts = self._find_dropouts()
        """(marker, mask shape, keep probability) of each Dropout, in `@forward`'s argument order."""
        self.wrt = len(self.params)
        """The number of leading `@forward` arguments that are trained (the rest are data)."""
        self._stats_program: Any = None

    def _example_shape(self, inp: Any, example: tuple[int, ...] | None) -> tuple[int, ...]:
        """Input `inp`'s example shape: `example` checked against the declared one, or the declared one."""
        declared = [d.dim_value if d.HasField("dim_value") else None for d in inp.type.tensor_type.shape.dim]
        if example is None:
            if not declared[1:] or None in declared[1:]:
                raise AscendError(
                    f"{self.path}: input '{inp.name}' has dynamic dimensions {declared}; give training data to fix them"
                )
            example = tuple(int(d) for d in declared[1:])  # pyright: ignore[reportArgumentType]  # None in declared[1:] raised just above
        if declared and (
            len(declared) != 1 + len(example) or any(d not in (None, s) for d, s in zip(declared[1:], example))
        ):
            want = tuple("?" if d is None else d for d in declared[1:])
            raise AscendError(
                f"{self.path}: input '{inp.name}' takes examples of shape {want}, the data has {tuple(example)}"
            )
        return tuple(int(d) for d in example)

    def inputs_of(self, x: Any) -> list[np.ndarray]:
        """The model's input arrays, in its order, from `x`: an array (one input) or `Features`."""
        if len(self.input_names) == 1:
            return [x.arrays[self.input_name] if hasattr(x, "arrays") else x]
        return [x.arrays[n] for n in self.input_names]

    # -- parameters ----------------------------------------------------------------------
    def _find_params(self) -> None:
        self.params: list[OnnxParam] = []
        self.index: dict[str, int] = {}  # Const name -> parameter index
        momenta = {
            n.name: next((a.f for a in n.attribute if a.name == "momentum"), 0.9)
            for n in self.proto.graph.node
            if n.op_type == "BatchNormalization"
        }
        used: set[str] = set()
        for op in self.main.body.blocks[0].ops:
            if (
                isinstance(op, A.ConstOp)
                and op.node_name is not None
                and dtype(op.results[0]) in ("f32", "f16", "bf16", "f64")
                and not op.node_name.data.startswith(DROPOUT_MARKER)
            ):
                const = op.node_name.data
                init = const.removesuffix(DEPTHWISE_SUFFIX)
                if init in self.initializers and const not in self.index and self.initializers[init].dtype.kind == "f":
                    self.index[const] = len(self.params)
                    self.params.append(OnnxParam(const, shape(op.results[0]), init))
                    used.add(init)
        self.batch_norms: list[_BatchNorm] = []
        fixed: list[str] = []
        for op in self.main.body.blocks[0].ops:
            if isinstance(op, A.BNInferOp):
                stats = [self._param_of(v) for v in (op.mean, op.variance)]
                if None in stats:  # computed statistics: inference only
                    fixed.append(op.node_name.data if op.node_name is not None else "?")
                    continue
                mean, var = stats
                assert mean is not None and var is not None
                self.params[mean].role, self.params[var].role = "running_mean", "running_var"
                name = op.node_name.data if op.node_name is not None else f"bn_{len(self.batch_norms)}"
                self.batch_norms.append(_BatchNorm(name, mean, var, float(momenta.get(name, 0.9))))
        self._check_statistics_unshared()
        if fixed:
            logging.getLogger("ascend_mp.train").warning(
                "%s: %d BatchNormalization nodes keep fixed statistics in training (their running mean and variance "
                "are not initializers of their own, e.g. an exporter's Identity of another initializer): %s",
                self.path,
                len(fixed),
                ", ".join(fixed[:5]) + (", ..." if len(fixed) > 5 else ""),
            )
        self.frozen = sorted(
            n for n, a in self.initializers.items() if a.dtype.kind == "f" and n not in used and n in self._consumed
        )
        """Float initializers the importer folded into other constants: they are not trained."""
        if self.frozen:
            logging.getLogger("ascend_mp.train").warning(
                "%s: %d float initializers are folded into constants at import and stay frozen: %s",
                self.path,
                len(self.frozen),
                ", ".join(self.frozen[:5]) + (", ..." if len(self.frozen) > 5 else ""),
            )

    def _check_statistics_unshared(self) -> None:
        """Running statistics are updated after each step, so an initializer that is one BatchNorm's
        running mean or variance may be nothing else (the TorchScript exporter in eval mode merges
        equal initializers: every BatchNorm's ones and zeros would become one tensor)."""
        owner: dict[int, str] = {}
        for bn in self.batch_norms:
            for i, what in ((bn.mean, "running mean"), (bn.var, "running variance")):
                if i in owner:
                    self._shared(i, owner[i], f"the {what} of BatchNormalization '{bn.name}'")
                owner[i] = f"the {what} of BatchNormalization '{bn.name}'"
        stat_positions = {k for k, (n, _) in enumerate(A.BNInferOp.get_irdl_definition().operands) if n in ("mean", "variance")}  # fmt: skip
        for op in self.main.body.blocks[0].ops:
            stats = stat_positions if isinstance(op, A.BNInferOp) else set[int]()
            for k, v in enumerate(op.operands):
                i = self._param_of(v)
                if i in owner and k not in stats:
                    node = op.node_name.data if isinstance(op, A.AscendOp) and op.node_name is not None else op.name
                    self._shared(i, owner[i], f"an input of '{node}'")

    def _shared(self, i: int, first: str, second: str) -> None:
        raise AscendError(
            f"{self.path}: initializer '{self.params[i].initializer}' is {first} and {second}: training would update "
            "one with the other (an exporter merged equal initializers; the TorchScript exporter does so in eval "
            "mode: export with the model in training mode and its BatchNorm layers in eval mode)"
        )

    def _dropout_of(self, op: Operation) -> str | None:
        """The marker of `op` if it is a Dropout's `Mul(x, marker)`."""
        if not isinstance(op, A.MulOp):
            return None
        owner = op.operands[1].owner
        if isinstance(owner, A.ConstOp) and owner.node_name is not None and owner.node_name.data in self.dropout_keep:
            return owner.node_name.data
        return None

    def _find_dropouts(self) -> list[tuple[str, tuple[int, ...], float]]:
        found = []
        for op in self.main.body.blocks[0].ops:
            marker = self._dropout_of(op)
            if marker is not None:
                found.append((marker, shape(op.operands[0]), self.dropout_keep[marker]))
        return found

    def step_inputs(self, x: Any, rng: np.random.Generator) -> list[np.ndarray]:
        """`@forward`'s data arguments for batch `x`: the inputs, then a fresh dropout mask per Dropout."""
        masks = [(rng.random(s) < keep).astype(np.float32) / np.float32(keep) for _, s, keep in self.dropouts]
        return [*self.inputs_of(x), *masks]

    def _param_of(self, v: SSAValue) -> int | None:
        owner = v.owner
        if isinstance(owner, A.ConstOp) and owner.node_name is not None:
            return self.index.get(owner.node_name.data)
        return None

    def init_params(self, seed: int = 0) -> list[np.ndarray]:
        """The initializers' values (fp32; `seed` is unused: the model brings its weights)."""
        del seed
        return [self._initial(p).astype(np.float32) for p in self.params]

    def _initial(self, p: OnnxParam) -> np.ndarray:
        a = self.initializers[p.initializer]
        if p.name.endswith(DEPTHWISE_SUFFIX):  # ONNX [C*M, 1, KH, KW] -> [KH, KW, C, M]
            kh, kw, c, m = p.shape
            return np.ascontiguousarray(a.reshape(c, m, kh, kw).transpose(2, 3, 0, 1))
        return np.asarray(a)

    def _to_onnx(self, p: OnnxParam, value: np.ndarray) -> np.ndarray:
        if p.name.endswith(DEPTHWISE_SUFFIX):
            kh, kw, c, m = p.shape
            value = value.transpose(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
        return np.ascontiguousarray(value).astype(self.initializers[p.initializer].dtype)

    # -- functions -------------------------------------------------------------------------
    def _body(
        self,
        block: Block,
        params: list[SSAValue],
        xs: list[SSAValue],
        training: bool,
        masks: Sequence[SSAValue] | None = None,
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """@main's ops cloned into `block` (parameters as arguments); returns its results and,
        in `training`, each batch norm's (batch mean, batch variance). Dropouts multiply by
        `masks` (in order) or, without masks, are identities."""
        src = self.main.body.blocks[0]
        mapping: dict[SSAValue, SSAValue] = dict(zip(src.args, xs))
        stats: list[SSAValue] = []
        e = Emitter(block)
        dropped = iter(masks or [])
        for op in src.ops:
            if isinstance(op, func.ReturnOp):
                return [mapping[v] for v in op.arguments], stats
            if self._dropout_of(op) is not None:
                kept = mapping[op.operands[0]]
                mask = next(dropped, None)
                mapping[op.results[0]] = kept if mask is None else e.mul(kept, e.cast(mask, dtype(kept)))
                continue
            if isinstance(op, A.ConstOp) and op.node_name is not None and op.node_name.data in self.index:
                p = params[self.index[op.node_name.data]]
                mapping[op.results[0]] = e.cast(p, dtype(op.results[0]))
                continue
            if training and isinstance(op, A.BNInferOp) and self._param_of(op.mean) is not None:
                y, mean, var = self._batch_norm(e, op, mapping)
                mapping[op.results[0]] = y
                stats += [mean, var]
                continue
            clone: Operation = op.clone(value_mapper=mapping)
            block.add_op(clone)
        raise AssertionError("@main has no return")

    @staticmethod
    def _batch_norm(
        e: Emitter, op: A.BNInferOp, mapping: dict[SSAValue, SSAValue]
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """BatchNorm with `is_training` on x viewed as NCHW ([N, C, rest, 1])."""
        x = mapping[op.x]
        xs = shape(x)
        as4 = (xs[0], xs[1], math.prod(xs[2:]), 1)
        x4 = e.reshape(x, as4)
        f = dtype(x)
        stat = tensor((xs[1],), "f32")
        operands = [e.cast(mapping[v], "f32") for v in (op.scale, op.offset, op.mean, op.variance)]
        bn = e.op(
            A.BatchNormOp,
            x4,
            *operands,
            types=[tensor(as4, f), stat, stat],
            name=op.node_name.data if op.node_name else None,
            epsilon=op.epsilon,
            is_training=True,
        )
        return e.reshape(bn.results[0], xs), bn.results[1], bn.results[2]

    def forward_module(self, batch: int, dtype_: str = "f32", keep_loss: bool = True) -> ModuleOp:
        """`@forward(params..., inputs..., dropout masks..., labels_onehot) -> mean loss`,
        `@predict(params..., inputs...) -> logits` and, with batch norms,
        `@batch_stats(params..., inputs...) -> (mean, variance) per batch norm`."""
        if batch != self.batch:
            raise AscendError(f"{self.path}: imported for batch {self.batch}, asked for {batch}")
        if dtype_ != "f32":
            raise AscendError(f"{self.path}: ONNX models train from fp32 master parameters (dtype {dtype_} asked)")
        ptypes = [tensor(p.shape) for p in self.params]
        names = [p.name.replace("/", "_") for p in self.params]
        xtypes = [a.type for a in self.main.body.blocks[0].args]
        xnames = ["x"] if len(xtypes) == 1 else [n.replace("/", "_") for n in self.input_names]
        k = len(xtypes)
        ltype = tensor((batch, self.num_classes))

        mtypes = [tensor(s) for _, s, _ in self.dropouts]
        mnames = [f"dropout{i}_mask" for i in range(len(mtypes))]
        fwd, block = new_function("forward", [*ptypes, *xtypes, *mtypes, ltype], [*names, *xnames, *mnames, "labels"])
        n = len(ptypes)
        masks = list(block.args[n + k : n + k + len(mtypes)])
        outs, _ = self._body(block, list(block.args[:n]), list(block.args[n : n + k]), training=True, masks=masks)
        e = Emitter(block)
        logits = e.cast(outs[self.output_index], "f32")
        loss = classification_loss(e, logits, block.args[-1], keep_loss)
        finish_function(fwd, block, [loss])

        pred, block = new_function("predict", [*ptypes, *xtypes], [*names, *xnames])
        outs, _ = self._body(block, list(block.args[:n]), list(block.args[n:]), training=False)
        finish_function(pred, block, [outs[self.output_index]])
        functions = [fwd, pred]
        if self.batch_norms:
            st, block = new_function("batch_stats", [*ptypes, *xtypes], [*names, *xnames])
            _, stats = self._body(block, list(block.args[:n]), list(block.args[n:]), training=True)
            finish_function(st, block, stats)
            functions.append(st)
        module = ModuleOp(functions)
        module.verify()
        return module

    # -- running statistics and export -------------------------------------------------------
    def after_step(self, params: list[np.ndarray], x: Any) -> None:
        """Update the batch norms' running statistics in `params` (in place) from batch `x`."""
        if not self.batch_norms:
            return
        if self._stats_program is None:
            from ascend_mp.interpreter import Program

            self._stats_program = Program.from_module(self.forward_module(self.batch))
        stats = self._stats_program.run("batch_stats", *params, *self.inputs_of(x))
        for bn, mean, var in zip(self.batch_norms, stats[0::2], stats[1::2]):
            m = np.float32(bn.momentum)
            params[bn.mean][...] = m * params[bn.mean] + (1 - m) * mean
            params[bn.var][...] = m * params[bn.var] + (1 - m) * var

    def save_onnx(self, params: list[np.ndarray], path: str | Path) -> None:
        """Write the model with its initializers replaced by `params` (laid out and typed as before)."""
        import onnx
        from onnx import numpy_helper

        from ascend_mp.fileio import write_output

        model = onnx.ModelProto()
        model.CopyFrom(self.proto)
        by_init = {p.initializer: (p, v) for p, v in zip(self.params, params)}
        for t in model.graph.initializer:
            if t.name in by_init:
                p, v = by_init[t.name]
                t.CopyFrom(numpy_helper.from_array(self._to_onnx(p, np.asarray(v)), t.name))
        write_output(path, model.SerializeToString())
