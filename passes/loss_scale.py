"""`ascend-loss-scale`: a training step with loss scaling, MindSpore's seven steps as IR.

From `@forward_grad(params..., inputs..., labels) -> (loss, dparams...)` (made by
`ascend-autodiff`, which this pass runs itself when the module has only `@forward`),
possibly already rewritten by `ascend-precision`, the pass adds

```mlir
func.func @train_step(%params...: fp32 master weights, %state...: optimizer slots,
                      %inputs..., %labels, %loss_scale: tensor<f32>,
                      %good_steps: tensor<i32>, %step: tensor<i32>)
    -> (new params..., new state..., loss, new loss_scale, new good_steps, new step, overflow: tensor<i1>)
```

whose body is, in order:

1. `NPUAllocFloatStatus` + `NPUClearFloatStatus` (before the forward and backward);
2. the master weights cast to the forward's parameter dtypes (when those are not fp32);
3. `@forward_grad` inlined, its gradient seed (`Const` named `gradients/seed`) multiplied
   by the loss scale: `%seed_scaled = Mul %seed, %loss_scale`; a cast of an argument (a
   master weight, the data) used by the forward and the backward is repeated before its
   later uses instead of being kept alive in between (:func:`_rematerialize_casts`);
4. gradients cast to fp32 and divided by the scale (`RealDiv`);
5. the overflow flag: `Greater(ReduceSum(NPUGetFloatStatus(...)), 0)`, a `tensor<i1>`;
6. the fp32 optimizer update (`ApplyGradientDescent` / `ApplyMomentumD` / `ApplyAdamD`);
7. on overflow (with `drop-overflow-update`) the update is skipped and `step` does not
   advance; the loss scale and the clean-step counter follow the manager's rule.

```mlir
%got = ascend.NPUGetFloatStatus %cleared : (tensor<8xf32>) -> tensor<8xf32>
%sum = ascend.ReduceSum %got {axes = array<i64: 0>} : (tensor<8xf32>) -> tensor<f32>
%overflow = ascend.Greater %sum, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
%dw_0 = ascend.SelectV2 %overflow, %zero, %dw : (tensor<i1>, tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
%lr_0 = ascend.Select %overflow, %zero, %lr : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
%w_new = ascend.ApplyGradientDescent %w, %lr_0, %dw_0 : (tensor<4x3xf32>, tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
```

The update is skipped through its inputs, as PyTorch's fused optimizers take `found_inf`:
on overflow it runs on a zero gradient (+0.0 for sgd, -0.0 for the others) with a zero
learning rate and a momentum (Adam: betas) of 1, so `accum * 1 + (-0.0)`, `var - 0 * x`
and Adam's `m + (g - m) * 0` give back every finite value bit for bit; the one exception
is a parameter (or Adam moment) that is exactly -0.0, which may come back +0.0 (initial
state is +0.0, so the slots never hold -0.0). The Adam beta powers are multiplied by the
betas, 1 on overflow, so they do not advance either. Selecting between old and new
values after the update, instead, would keep two copies of every parameter and slot
alive; this way the optimizer ops can update their state in place (their outputs are ref
outputs on Ascend; the interpreter does so when the state is donated, see
:func:`ascend_mp.train.trainer.donating_program`).

The float status alone decides overflow, as on Ascend: no separate finite check of the
gradients is needed, because every gradient passes through its unscale `RealDiv`, an AI
Core kernel that runs before `NPUGetFloatStatus` and turns an inf/NaN gradient into an
inf/NaN result (the scale is finite and positive), so the register sees every non-finite
gradient, even one an AI CPU kernel produced or one that arrived with the data. (Without
a manager there is no unscale: the flag is the gradient kernels' own, for information.)

Loss-scale managers (option `manager`):

* `dynamic` (PyTorch's GradScaler rule): on overflow `scale = max(scale * backoff-factor,
  min-scale)` and the counter resets; when `good_steps + 1` reaches `growth-interval`,
  `scale *= growth-factor` and the counter resets; else the counter advances. Defaults
  are GradScaler's (init 2^16, x2, x0.5, 2000, no floor); `preset=mindspore` is
  2^24/2/0.5/2000 with floor 1, `preset=tensorflow` 2^15/2/0.5/2000 with floor 1.
  Explicit options override a preset.
* `fixed`: the scale never changes (`scale`, default 128); `drop-overflow-update`
  (default true) skips the update on overflow, else the update is always applied.
* `none`: no loss scaling: the seed is not multiplied and the gradients are not divided
  (the `loss_scale` argument, 1, passes through), updates are always applied; the
  overflow flag is still computed.

Every op the pass emits (not the inlined forward and backward) carries the unit
`keep_dtype` property, so a precision pass run afterwards leaves the scaling, the unscale,
the overflow check, the state updates and the fp32 optimizer update as they are. Errors are
:class:`~ascend_mp.errors.AscendPassError`s starting with the op's location;
:func:`order_training_passes` is how `ascend-opt` orders a pipeline holding these passes.

The initial state for the runtime is described by the function's `ascend.train_step`
attribute and built by :func:`initial_state`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ascend_mp.dialects import ascend as A
from ascend_mp.emit import Emitter, dtype, finish_function, mark_all, name_new_ops, new_function, shape, tensor
from ascend_mp.errors import AscendError, AscendPassError
from ascend_mp.passes.autodiff import SEED_NAME, differentiate, function_names, pass_error

PASS = "ascend-loss-scale"

FLOAT32_MAX = float(np.finfo(np.float32).max)
"""The scale and the hyper-parameters are float32 constants in the IR."""

OPTIMIZERS = ("sgd", "momentum", "adam")
MANAGERS = ("dynamic", "fixed", "none")

PRESETS: dict[str, dict[str, float]] = {
    "pytorch": {
        "init_scale": 2.0**16,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "min_scale": 0.0,
    },
    "mindspore": {
        "init_scale": 2.0**24,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "min_scale": 1.0,
    },
    "tensorflow": {
        "init_scale": 2.0**15,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "min_scale": 1.0,
    },
}
"""Dynamic loss-scale defaults: PyTorch GradScaler (the default), MindSpore's DynamicLossScaleManager, TF's LossScaleOptimizer."""

logger = logging.getLogger("ascend_mp")

ATTR = "ascend.train_step"
"""Discardable attribute of `@train_step` describing its argument layout and initial state."""


@dataclass(frozen=True)
class LossScaleConfig:
    """Resolved options of the pass (what the IR and the runtime agree on)."""

    manager: str
    optimizer: str
    lr: float
    momentum: float
    nesterov: bool
    beta1: float
    beta2: float
    epsilon: float
    init_scale: float
    growth_factor: float
    backoff_factor: float
    growth_interval: int
    min_scale: float
    drop_overflow_update: bool


# --------------------------------------------------------------------------------------
# IR helpers
# --------------------------------------------------------------------------------------


def select(e: Emitter, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    """`cond ? a : b` (a `tensor<i1>` flag): the chosen value bit for bit, whatever the other holds."""
    return e.one(A.SelectOp, cond, a, b, type_=a.type)


def _skip_value(e: Emitter, overflow: SSAValue, skip: float, value: SSAValue, label: str) -> SSAValue:
    """`overflow ? skip : value`: the hyper-parameter `value` of the update on a skipped step."""
    mark = e.block.last_op
    out = select(e, overflow, e.const(skip), value)
    _name_ops(mark, f"loss_scale/skip_on_overflow/{label}")
    return out


def _rematerialize_casts(block: Block, args: Sequence[SSAValue]) -> list[Operation]:
    """Give every use but the first of a Cast of an argument (a master weight or the data cast
    to fp16) its own copy of the Cast, right before the user: the low-precision copy then
    lives for one op instead of from the forward to the backward (XLA's rematerialization of
    cheap ops: a cast costs one pass over the tensor, the copy kept alive costs memory for the
    whole step). Returns the copies (CSE merges them again, which only costs memory)."""
    argset = set(args)
    position = {op: i for i, op in enumerate(block.ops)}
    copies: list[Operation] = []
    for op in list(block.ops):
        if not isinstance(op, A.CastOp) or op.operands[0] not in argset:
            continue
        value = op.results[0]
        for user in sorted({use.operation for use in value.uses}, key=lambda u: position.get(u, -1))[1:]:
            copy = op.clone()
            if op.node_name is not None:
                copy.properties["name"] = StringAttr(f"{op.node_name.data}/rematerialized")
            block.insert_op_before(copy, user)
            value.replace_uses_with_if(copy.results[0], lambda use, u=user: use.operation is u)
            copies.append(copy)
    return copies


def _name_ops(after: Operation | None, scope: str) -> None:
    """Name the unnamed ops after `after`: `<scope>/<OpType>[_k]`."""
    assert after is not None and after.parent is not None
    name_new_ops(after.parent, after, scope)


def _find(module: ModuleOp, name: str) -> func.FuncOp | None:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    return None


def _seed_of(ops: Sequence[Operation]) -> A.ConstOp | None:
    for op in ops:
        if isinstance(op, A.ConstOp) and op.node_name is not None and op.node_name.data == SEED_NAME:
            return op
    return None


def build_train_step(
    module: ModuleOp, grad: func.FuncOp, cfg: LossScaleConfig, name: str = "train_step"
) -> func.FuncOp:
    """Add `@<name>` (see the module docstring) built from `grad` and return it."""
    gblock = grad.body.blocks[0]
    gret = gblock.last_op
    assert isinstance(gret, func.ReturnOp)
    nparams = len(gret.arguments) - 1
    gargs = list(gblock.args)
    if nparams < 1 or nparams > len(gargs):
        raise pass_error(PASS, gret, f"@{grad.sym_name.data} must return (loss, one gradient per leading argument)")
    for i in range(nparams):
        if shape(gret.arguments[i + 1]) != shape(gargs[i]):
            raise pass_error(PASS, gret, f"result #{i + 1} of @{grad.sym_name.data} is not shaped like argument #{i}")
    hints = [a.name_hint or f"p{i}" for i, a in enumerate(gargs)]
    param_types = [tensor(shape(a), "f32") for a in gargs[:nparams]]
    scalar = tensor(())
    counter = tensor((), "i32")

    # State slots per optimizer.
    state_names: list[str] = []
    state_types: list[Attribute] = []
    state_init: list[str] = []
    if cfg.optimizer == "momentum":
        for i in range(nparams):
            state_names.append(f"{hints[i]}_accum")
            state_types.append(param_types[i])
            state_init.append(f"zeros:{i}")
    elif cfg.optimizer == "adam":
        for slot in ("m", "v"):
            for i in range(nparams):
                state_names.append(f"{hints[i]}_{slot}")
                state_types.append(param_types[i])
                state_init.append(f"zeros:{i}")
        state_names += ["beta1_power", "beta2_power"]
        state_types += [scalar, scalar]
        state_init += [f"value:{cfg.beta1!r}", f"value:{cfg.beta2!r}"]
    nstate = len(state_types)

    data = gargs[nparams:]
    inputs = [*param_types, *state_types, *(a.type for a in data), scalar, counter, counter]
    names = [*hints[:nparams], *state_names, *hints[nparams:], "loss_scale", "good_steps", "step"]
    fn, block = new_function(name, inputs, names)
    args = list(block.args)
    params = args[:nparams]
    state = args[nparams : nparams + nstate]
    data_args = args[nparams + nstate : nparams + nstate + len(data)]
    loss_scale, good_steps, step = args[-3:]
    e = Emitter(block, prefix="loss_scale/")

    # 1. Float status: allocate and clear before the forward and backward.
    status = e.op(A.NPUAllocFloatStatusOp, types=[tensor((8,))], name="NPUAllocFloatStatus").results[0]
    cleared = e.one(A.NPUClearFloatStatusOp, status, name="NPUClearFloatStatus")

    # 2. fp32 master weights -> the forward's parameter dtypes.
    mapping: dict[SSAValue, SSAValue] = {}
    for p, a in zip(params, gargs[:nparams]):
        mapping[a] = e.cast(p, dtype(a))
    mapping.update(zip(data, data_args))

    # 3. Inline the forward and backward, the seed scaled.
    clones: list[Operation] = []
    for op in gblock.ops:
        if op is gret:
            break
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
        clones.append(clone)
    seed = _seed_of(clones)
    if seed is None:
        raise pass_error(
            PASS,
            grad,
            f"@{grad.sym_name.data} has no gradient seed (a Const named 'gradients/seed', as ascend-autodiff makes)",
        )
    scaling = cfg.manager != "none"  # without a manager the scale is 1: nothing to multiply or divide
    if scaling:
        seed_value = seed.results[0]
        scale_for_seed = e.cast(loss_scale, dtype(seed_value)) if dtype(seed_value) != "f32" else loss_scale
        scaled = A.MulOp(seed_value, scale_for_seed, result_types=[seed_value.type], name="loss_scale/scale_seed")
        block.insert_op_after(scaled, seed)
        if scale_for_seed is not loss_scale and isinstance(scale_for_seed.owner, Operation):
            block.detach_op(scale_for_seed.owner)
            block.insert_op_before(scale_for_seed.owner, scaled)
        seed_value.replace_uses_with_if(scaled.results[0], lambda use: use.operation is not scaled)
    clones += _rematerialize_casts(block, args)
    loss = mapping.get(gret.arguments[0], gret.arguments[0])
    grads = [mapping.get(g, g) for g in gret.arguments[1:]]

    # 4. Gradients in fp32, divided by the scale.
    unscaled = [e.cast(g, "f32") for g in grads]
    if scaling:
        unscaled = [e.one(A.RealDivOp, g, loss_scale, name=f"unscale/{hints[i]}") for i, g in enumerate(unscaled)]

    # 5. Overflow: the float status register (it sees the unscale kernels too).
    got = e.one(A.NPUGetFloatStatusOp, cleared, name="NPUGetFloatStatus")
    first = block.last_op
    flag = tensor((), "i1")
    overflow = e.one(A.GreaterOp, e.reduce_sum(got, [0]), e.const(0.0), type_=flag)
    _name_ops(first, "loss_scale/overflow")

    # 6. The fp32 optimizer update; 7. on overflow (drop) its inputs make it change nothing.
    drop = cfg.manager != "none" and (cfg.manager == "dynamic" or cfg.drop_overflow_update)
    e.prefix = "optimizer/"
    lr = e.const(cfg.lr, name="lr")
    if drop:
        e.prefix = "loss_scale/skip_on_overflow/"
        mark = block.last_op
        # +0.0 for sgd: var - 0 * (+0.0) is var; -0.0 for the others: accum * 1 + (-0.0) is accum
        zero_grad = e.const(0.0 if cfg.optimizer == "sgd" else -0.0, name="zero_gradient")
        unscaled = [
            e.one(A.SelectV2Op, overflow, zero_grad, g, type_=g.type, name=f"{hints[i]}/SelectV2")
            for i, g in enumerate(unscaled)
        ]
        _name_ops(mark, "loss_scale/skip_on_overflow")
        e.prefix = "optimizer/"
        lr = _skip_value(e, overflow, 0.0, lr, "lr")
    new_params: list[SSAValue] = []
    new_state: list[SSAValue] = []
    if cfg.optimizer == "sgd":
        for i, (p, g) in enumerate(zip(params, unscaled)):
            new_params.append(e.one(A.ApplyGradientDescentOp, p, lr, g, name=f"{hints[i]}/ApplyGradientDescent"))
    elif cfg.optimizer == "momentum":
        mom = e.const(cfg.momentum, name="momentum")
        if drop:
            mom = _skip_value(e, overflow, 1.0, mom, "momentum")
        for i, (p, g) in enumerate(zip(params, unscaled)):
            upd = e.op(
                A.ApplyMomentumDOp,
                p,
                state[i],
                lr,
                g,
                mom,
                types=[p.type, p.type],
                name=f"{hints[i]}/ApplyMomentumD",
                use_nesterov=cfg.nesterov,
            )
            new_params.append(upd.results[0])
            new_state.append(upd.results[1])
    else:
        b1, b2, eps = (
            e.const(cfg.beta1, name="beta1"),
            e.const(cfg.beta2, name="beta2"),
            e.const(cfg.epsilon, name="epsilon"),
        )
        ms, vs, b1p, b2p = state[:nparams], state[nparams : 2 * nparams], state[-2], state[-1]
        if drop:
            b1, b2 = _skip_value(e, overflow, 1.0, b1, "beta1"), _skip_value(e, overflow, 1.0, b2, "beta2")
        new_m: list[SSAValue] = []
        new_v: list[SSAValue] = []
        for i, (p, g) in enumerate(zip(params, unscaled)):
            upd = e.op(
                A.ApplyAdamDOp,
                p,
                ms[i],
                vs[i],
                b1p,
                b2p,
                lr,
                b1,
                b2,
                eps,
                g,
                types=[p.type] * 3,
                name=f"{hints[i]}/ApplyAdamD",
                use_nesterov=cfg.nesterov,
            )
            new_params.append(upd.results[0])
            new_m.append(upd.results[1])
            new_v.append(upd.results[2])
        mark = block.last_op
        new_state = [*new_m, *new_v, e.mul(b1p, b1), e.mul(b2p, b2)]  # on overflow the betas are 1: the powers stay
        _name_ops(mark, "optimizer/beta_power")

    # 7. Scale and counters.
    e.prefix = "loss_scale/"
    mark = block.last_op
    one = e.const(1, "i32")
    new_step = e.add(step, one)
    if drop:
        new_step = select(e, overflow, step, new_step)
    _name_ops(mark, "loss_scale/step")

    if cfg.manager == "dynamic":
        mark = block.last_op
        good1 = e.add(good_steps, one)
        interval = e.const(cfg.growth_interval, "i32", name="growth_interval")
        counting = e.one(A.GreaterOp, interval, good1, type_=flag)  # good_steps + 1 has not reached the interval
        zero = e.const(0, "i32")
        new_good = select(e, overflow, zero, select(e, counting, good1, zero))
        _name_ops(mark, "loss_scale/good_steps")
        mark = block.last_op
        grown = select(e, counting, loss_scale, e.mul(loss_scale, e.const(cfg.growth_factor, name="growth_factor")))
        backed = e.mul(loss_scale, e.const(cfg.backoff_factor, name="backoff_factor"))
        if cfg.min_scale > 0:
            backed = e.binary(A.MaximumOp, backed, e.const(cfg.min_scale, name="min_scale"))
        new_scale = select(e, overflow, backed, grown)
        _name_ops(mark, "loss_scale/update_scale")
    else:
        new_scale = loss_scale
        new_good = good_steps

    finish_function(fn, block, [*new_params, *new_state, loss, new_scale, new_good, new_step, overflow])
    inlined = set(clones)
    mark_all(op for op in block.ops if op not in inlined)  # the loss-scale machinery stays fp32 under every mode
    fn.attributes[ATTR] = DictionaryAttr(
        {
            "params": IntegerAttr(nparams, i64),
            "state": ArrayAttr([StringAttr(s) for s in state_init]),
            "optimizer": StringAttr(cfg.optimizer),
            "manager": StringAttr(cfg.manager),
            "init_scale": StringAttr(repr(cfg.init_scale)),
        }
    )
    module.body.blocks[0].insert_op_after(fn, grad)
    return fn


# --------------------------------------------------------------------------------------
# Runtime side: the initial state
# --------------------------------------------------------------------------------------


@dataclass
class TrainState:
    """Everything `@train_step` threads through: master weights, optimizer slots, scale, counters."""

    params: list[np.ndarray]
    slots: list[np.ndarray]
    loss_scale: np.ndarray
    good_steps: np.ndarray
    step: np.ndarray

    def args(self) -> list[np.ndarray]:
        """The leading and trailing arguments of `@train_step` (the data goes in between)."""
        return [*self.params, *self.slots]

    def update(self, results: Sequence[np.ndarray]) -> tuple[np.ndarray, bool]:
        """Take the step's results; returns (loss, overflow)."""
        n, k = len(self.params), len(self.slots)
        self.params = list(results[:n])
        self.slots = list(results[n : n + k])
        loss, self.loss_scale, self.good_steps, self.step, overflow = results[n + k :]
        return loss, bool(overflow)


def step_layout(fn: func.FuncOp) -> dict[str, Any]:
    """The `ascend.train_step` attribute as Python values."""
    attr = fn.attributes.get(ATTR)
    if not isinstance(attr, DictionaryAttr):
        raise AscendError(f"@{fn.sym_name.data} has no {ATTR} attribute (was it made by ascend-loss-scale?)")
    d = attr.data
    params, init = d["params"], d["init_scale"]
    assert isinstance(params, IntegerAttr) and isinstance(init, StringAttr)
    state = d["state"]
    assert isinstance(state, ArrayAttr)
    return {
        "params": params.value.data,
        "state": [s.data for s in state.data],
        "optimizer": d["optimizer"].data,  # pyright: ignore[reportAttributeAccessIssue]  # a StringAttr: this pass writes the dict (above)
        "manager": d["manager"].data,  # pyright: ignore[reportAttributeAccessIssue]  # a StringAttr: this pass writes the dict (above)
        "init_scale": float(init.data),
    }


def initial_state(fn: func.FuncOp, params: Sequence[np.ndarray]) -> TrainState:
    """The state a run starts from: fp32 copies of `params`, zeroed slots, the initial scale, zero counters."""
    layout = step_layout(fn)
    if len(params) != layout["params"]:
        raise AscendError(f"@{fn.sym_name.data} trains {layout['params']} parameters, got {len(params)}")
    masters = [np.array(p, dtype=np.float32) for p in params]
    slots: list[np.ndarray] = []
    for spec in layout["state"]:
        kind, _, arg = spec.partition(":")
        if kind == "zeros":
            slots.append(np.zeros_like(masters[int(arg)]))
        else:
            slots.append(np.array(float(arg), dtype=np.float32))
    return TrainState(
        masters, slots, np.array(layout["init_scale"], np.float32), np.array(0, np.int32), np.array(0, np.int32)
    )


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------


LOSS_SCALE_PASS = "ascend-loss-scale"


@dataclass(frozen=True)
class LossScaleOptions:
    """The loss-scale manager and optimizer options, stated once: the `ascend-loss-scale` pass is one (its `-p`
    options), and the trainer's `TrainConfig` holds one (`ascend-train`'s flags set it). :meth:`config` validates
    them and resolves the manager's defaults."""

    manager: str = "dynamic"
    """`dynamic`, `fixed` or `none`."""
    preset: str | None = None
    """Dynamic defaults: `pytorch` (the default), `mindspore` or `tensorflow`."""
    init_scale: float | None = None
    growth_factor: float | None = None
    backoff_factor: float | None = None
    growth_interval: int | None = None
    min_scale: float | None = None
    scale: float | None = None
    """The fixed manager's scale (default 128)."""
    drop_overflow_update: bool | None = None
    """Fixed manager: skip the update on overflow (default true)."""
    optimizer: str = "sgd"
    """`sgd` (ApplyGradientDescent), `momentum` (ApplyMomentumD) or `adam` (ApplyAdamD)."""
    lr: float = 0.01
    momentum: float = 0.9
    nesterov: bool = False
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8

    def config(self, warn: bool = True) -> LossScaleConfig:
        """Validate the options and resolve the manager's defaults (`warn`: log options that have no effect)."""
        p = LOSS_SCALE_PASS
        if self.manager not in MANAGERS:
            raise AscendPassError(f"{p}: manager must be one of {', '.join(MANAGERS)}, got '{self.manager}'")
        if self.optimizer not in OPTIMIZERS:
            raise AscendPassError(f"{p}: optimizer must be one of {', '.join(OPTIMIZERS)}, got '{self.optimizer}'")
        if self.preset is not None and self.preset not in PRESETS:
            raise AscendPassError(f"{p}: preset must be one of {', '.join(PRESETS)}, got '{self.preset}'")
        dynamic_opts = ("preset", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "min_scale")
        fixed_opts = ("scale", "drop_overflow_update")
        given = {
            f.name
            for f in fields(LossScaleOptions)
            if f.name in dynamic_opts + fixed_opts and getattr(self, f.name) is not None
        }
        unused = sorted(
            given - set(dynamic_opts if self.manager == "dynamic" else fixed_opts if self.manager == "fixed" else ())
        )
        for opt in unused if warn else ():
            logger.warning("%s: option %s has no effect with manager=%s", p, opt.replace("_", "-"), self.manager)
        base = PRESETS[self.preset or "pytorch"]

        def pick(opt: str) -> float:
            v = getattr(self, opt)
            return float(base[opt] if v is None else v)

        init_scale, growth, backoff = pick("init_scale"), pick("growth_factor"), pick("backoff_factor")
        interval, min_scale = pick("growth_interval"), pick("min_scale")
        scale = 128.0 if self.scale is None else float(self.scale)
        if self.manager == "fixed":
            init_scale = scale
        elif self.manager == "none":
            init_scale = 1.0
        checks = [
            (
                0 < init_scale <= FLOAT32_MAX,
                "init-scale" if self.manager == "dynamic" else "scale",
                init_scale,
                "a positive finite float32 number",
            ),
            (1 < growth <= FLOAT32_MAX, "growth-factor", growth, "> 1 and finite"),
            (0 < backoff < 1, "backoff-factor", backoff, "in (0, 1)"),
            (1 <= interval < math.inf and interval == int(interval), "growth-interval", interval, "a positive integer"),
            (interval < 2**31, "growth-interval", interval, "below 2^31 (the clean-step counter is an int32)"),
            (0 <= min_scale <= FLOAT32_MAX, "min-scale", min_scale, ">= 0 and finite"),
            (0 < self.lr <= FLOAT32_MAX, "lr", self.lr, "> 0 and finite"),
            (0 <= self.momentum < 1, "momentum", self.momentum, "in [0, 1)"),
            (0 <= self.beta1 < 1, "beta1", self.beta1, "in [0, 1)"),
            (0 <= self.beta2 < 1, "beta2", self.beta2, "in [0, 1)"),
            (0 < self.epsilon <= FLOAT32_MAX, "epsilon", self.epsilon, "> 0 and finite"),
        ]
        for ok, opt, value, want in checks:
            if not ok:
                raise AscendPassError(f"{p}: {opt} must be {want}, got {value:g}")
        return LossScaleConfig(
            manager=self.manager,
            optimizer=self.optimizer,
            lr=float(self.lr),
            momentum=float(self.momentum),
            nesterov=bool(self.nesterov),
            beta1=float(self.beta1),
            beta2=float(self.beta2),
            epsilon=float(self.epsilon),
            init_scale=init_scale,
            growth_factor=growth,
            backoff_factor=backoff,
            growth_interval=int(interval),
            min_scale=min_scale,
            drop_overflow_update=True if self.drop_overflow_update is None else bool(self.drop_overflow_update),
        )


@dataclass(frozen=True)
class _StepFunctions:
    """Which functions `ascend-loss-scale` reads and writes (the pass's options before the loss-scale ones)."""

    func: str = "forward"
    """The forward function; its gradient function is `<func>_grad` (made here if missing)."""
    grad_func: str | None = None
    """The gradient function (default `<func>_grad`)."""
    step_func: str = "train_step"
    """Name of the generated function."""
    wrt: int | None = None
    """Passed to ascend-autodiff when the gradient function has to be made."""
    keep_loss: bool = True
    """Passed to ascend-autodiff when the gradient function has to be made."""


@dataclass(frozen=True)
class LossScalePass(LossScaleOptions, _StepFunctions, ModulePass):
    """Add `@train_step`: loss-scaled forward and backward, overflow check, fp32 update (module docstring).

    Options: the functions (`func`, `grad_func`, `step_func`, and `wrt`, `keep_loss` for the autodiff it may run),
    then :class:`LossScaleOptions`' fields."""

    name = LOSS_SCALE_PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cfg = self.config()
        existing = _find(op, self.step_func)
        if existing is not None:
            raise pass_error(
                PASS, existing, f"function @{self.step_func} already exists (ascend-loss-scale ran already)"
            )
        grad_name = self.grad_func or f"{self.func}_grad"
        grad = _find(op, grad_name)
        if grad is None:
            if _find(op, self.func) is None:
                raise pass_error(
                    PASS,
                    op,
                    f"no function @{grad_name} or @{self.func} in the module (functions: {function_names(op)})",
                )
            grad = differentiate(op, self.func, self.wrt, grad_name, self.keep_loss)
        build_train_step(op, grad, cfg, self.step_func)


# --------------------------------------------------------------------------------------
# Pass order in a pipeline
# --------------------------------------------------------------------------------------

PRECISION = "ascend-precision"
AUTODIFF = "ascend-autodiff"


def order_training_passes(
    passes: Sequence[ModulePass], flags_precision: ModulePass | None = None
) -> tuple[ModulePass, ...]:
    """Check and complete a pipeline that holds the training passes, as `ascend-opt` runs it.

    CANN applies the precision mode to the whole training graph, forward and backward,
    before the loss-scale step. So `flags_precision` (the ATC flags' pass) goes after the
    last `ascend-autodiff` that precedes the first `ascend-loss-scale` (or right before that
    loss-scale pass; at the front when neither pass is in the pipeline); a precision pass
    before a loss-scale pass that must differentiate by itself gets an
    `ascend-autodiff{if-missing=true}` in front of it (a no-op when the gradient function
    exists), so the precision mode sees the backward too. `ascend-precision` before
    `ascend-autodiff` is a one-line error: the backward would be derived from the fp16
    forward without kernel selection. Every other order is correct or fails at run time with
    a one-line error (`ascend-autodiff` after `ascend-loss-scale`, either pass twice).
    """
    out = list(passes)
    if flags_precision is not None:
        first_ls = next((i for i, p in enumerate(out) if p.name == LossScalePass.name), None)
        scope = out if first_ls is None else out[:first_ls]
        last_ad = max((i for i, p in enumerate(scope) if p.name == AUTODIFF), default=None)
        at = last_ad + 1 if last_ad is not None else first_ls if first_ls is not None else 0
        out.insert(at, flags_precision)
    for i, p in enumerate(out):
        if p.name == AUTODIFF and any(q.name == PRECISION for q in out[:i]):
            raise AscendError(
                "ascend-precision runs before ascend-autodiff in this pipeline: the backward would be derived from the "
                "reduced-precision forward without kernel selection; put ascend-precision after ascend-autodiff "
                "(CANN applies precision to the forward and backward graph)"
            )
    for i, p in enumerate(out):
        if not isinstance(p, LossScalePass) or any(q.name == AUTODIFF for q in out[:i]):
            continue
        first_precision = next((j for j, q in enumerate(out[:i]) if q.name == PRECISION), None)
        if first_precision is not None:
            from ascend_mp.passes.autodiff import AutodiffPass

            ensure = AutodiffPass(
                func=p.func,
                wrt=p.wrt,
                grad_func=p.grad_func or f"{p.func}_grad",
                keep_loss=p.keep_loss,
                if_missing=True,
            )
            out.insert(first_precision, ensure)
            break
    return tuple(out)
