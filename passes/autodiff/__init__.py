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

Every op on a path from a `wrt` argument to the loss needs a rule in :data:`RULES` (the
family modules `cube`, `elementwise`, `reduce`, `shape`, `cast`, `grad` register them);
ops whose outputs carry no gradient are listed in :data:`NO_GRADIENT`. Errors are
:class:`~ascend_mp.errors.AscendPassError` (xDSL diagnostics) whose one-line message starts
with the location of the first offending op; ops without a rule make ONE error that lists
every such op type with its count, e.g.
`model.mlir:3:3: ascend-autodiff: no gradient rule for ascend.GeluGrad (1 op)`.

Where CANN has no gradient op, a rule composes forward ops (docs/design.md §15): `GatherV2D`
scatter-adds with `UnsortedSegmentSumD` (no one-hot matrix of indices by rows), `StridedSliceD` pads back (or scatters with a
0/1 matrix), `MaxPoolV3`/`AvgPoolV2` pad their input and use the VALID gradient ops, `Erf`,
`Relu6`, `ClipByValue`, `HardSigmoid` use `ReluGrad` masks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from ascend_mp.dialects import ascend as A
from ascend_mp.dtypes import is_float, tensor_dtype
from ascend_mp.emit import (
    Emitter,
    finish_function,
    is_kept,
    mark_all,
    mark_keep_dtype,
    name_new_ops,
    new_function,
    ops_after,
)
from ascend_mp.emit import shape as value_shape  # `shape` is the family module
from ascend_mp.errors import AscendPassError
from ascend_mp.ir import location_of, source_location
from ascend_mp.passes.autodiff import cast, cube, elementwise, reduce, shape  # noqa: F401  (they register their rules)
from ascend_mp.passes.autodiff import grad as grad_rules  # noqa: F401  (registers its rules)
from ascend_mp.passes.autodiff.base import NO_GRADIENT, RULES, GradContext, Grads, Rule, rule

__all__ = ["NO_GRADIENT", "RULES", "SEED_NAME", "AutodiffPass", "GradContext", "Grads", "Rule", "differentiate", "rule"]

PASS = "ascend-autodiff"

LOSS_FUNCTIONS: tuple[type[A.AscendOp], ...] = (A.SoftmaxCrossEntropyWithLogitsOp,)
"""Loss functions: with the ops between them and the returned loss they are the loss ops,
computed in their original dtype (fp32) under every precision mode."""

SEED_NAME = "gradients/seed"
"""`name` of the Const holding d(loss)/d(loss)."""


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
    found: list[Operation] = [op for op in body if op in feeds and op in after_loss_fn]
    if not found and isinstance(loss.owner, A.AscendOp):
        found = [loss.owner]
    return found


def _check_rules(
    body: Sequence[Operation], loss: SSAValue, active: set[SSAValue], origin: dict[Operation, Operation]
) -> None:
    """Fail with ONE error listing every op type (with its count) that would need a gradient
    rule and has none, located at the first such op of the forward function."""
    carries: set[SSAValue] = {loss}  # values that receive a gradient
    missing: list[Operation] = []
    for op in reversed(body):
        if not any(r in carries for r in op.results) or not any(o in active for o in op.operands):
            continue
        if isinstance(op, A.AscendOp) and type(op) in NO_GRADIENT:
            continue
        if not (isinstance(op, A.AscendOp) and type(op) in RULES):
            missing.append(op)
        carries.update(o for o in op.operands if o in active)
    if not missing:
        return
    missing.reverse()
    counts: dict[str, int] = {}
    for op in missing:
        counts[op.name] = counts.get(op.name, 0) + 1
    listed = ", ".join(f"{name} ({n} op{'s' if n > 1 else ''})" for name, n in counts.items())
    raise AscendPassError(f"{where(origin[missing[0]])}: {PASS}: no gradient rule for {listed}")


def differentiate(
    module: ModuleOp,
    func_name: str = "forward",
    wrt: int | None = None,
    grad_name: str | None = None,
    keep_loss: bool = True,
) -> func.FuncOp:
    """Add `@<func>_grad` to `module` (see the module docstring) and return it.

    `keep_loss`: mark the loss ops (:func:`loss_ops`), the seed and their gradient ops
    `keep_dtype`, so every precision mode computes the loss in its original dtype."""
    fwd = _find_function(module, func_name, "ascend-autodiff")
    grad_name = grad_name or f"{func_name}_grad"
    existing = find_function(module, grad_name)
    if existing is not None:
        after = " (or ascend-loss-scale, which runs it)" if find_function(module, "train_step") else ""
        raise pass_error(
            PASS,
            existing,
            f"function @{grad_name} already exists: ascend-autodiff{after} ran before; run ascend-autodiff once, before ascend-loss-scale",
        )
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
            raise pass_error(
                PASS,
                fwd,
                f"argument #{i} of @{func_name} ({a.type}) is not a float tensor and cannot be differentiated",
            )
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or len(ret.arguments) != 1 or not _is_float_value(ret.arguments[0]):
        raise pass_error(
            PASS,
            ret if isinstance(ret, func.ReturnOp) else fwd,
            f"@{func_name} must return exactly one float tensor (the loss)",
        )

    # Copy the forward computation.
    new_fn, new_block = new_function(
        grad_name, [a.type for a in args], [a.name_hint or f"arg{i}" for i, a in enumerate(args)]
    )
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

    _check_rules(body, loss, active, origin)

    e = Emitter(new_block)
    seed = e.const(1.0, tensor_dtype(loss.type) or "f32", value_shape(loss), name=SEED_NAME)
    if keep_loss:
        mark_keep_dtype(seed.owner)  # pyright: ignore[reportArgumentType]  # the seed is an op's result, so its owner is an Operation (not a Block)
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
            g = e.const(0.0, tensor_dtype(arg.type) or "f32", value_shape(arg), name=f"gradients/zeros_{i}")
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
