"""Compile `func.func` bodies of ascend ops into straight-line numpy code, and run them.

:meth:`Program.from_module` walks each function once and turns every op into a
:class:`Step` (kernel, operand slots, result slots, the results to check for
overflow, the slots that die after it) over a register array; the attributes are
read into the kernels' closures then, so running touches no xDSL object and
looks up nothing by name. From the steps it generates one Python function per
`func.func` (each step a line `r5 = k3(r1, r2)`, dead registers deleted after
their last use), which is what :meth:`Program.run` calls; runs that track memory
or profile walk the same steps in a loop instead.

Registers hold float16 tensors as float32 arrays of float16 values (see
:func:`~ascend_mp.interpreter.ascend.round_f16`): :meth:`Program.run` converts
float16 arguments and results at the boundary (exactly), and memory is counted
in the IR's dtypes, so a float16 tensor counts 2 bytes per element.

```python
program = Program.from_module(read_module("examples/mlp.mlir"))
(probs,) = program.run("mlp", x, w1, b1, w2, b2, track_memory=True)
program.peak_bytes, program.peak_activation_bytes, program.float_status
```
"""

from __future__ import annotations

import contextlib
import math
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ascend_mp.dialects.ascend import AscendOp, op_type
from ascend_mp.dtypes import NUMPY, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.interpreter.ascend import (
    CAST,
    CONST,
    CUBE,
    DATA,
    F16,
    F32,
    F64,
    FLOATS,
    KERNELS,
    NONFINITE,
    SETS_STATUS,
    STATUS,
    VECTOR,
    FloatStatus,
    KernelDef,
    KernelError,
    KernelFn,
    OpSpec,
    identity,
    make_in_place_kernel,
    make_kernel,
    select_moving,
    nonfinite_wide,
)

_SKIPPED_PROPS = frozenset(("caps", "list", "name"))
_DTYPE_NAMES = {d: n for n, d in NUMPY.items()}
_FLOAT_MAX = {d: float(ml_dtypes.finfo(d).max) for d in FLOATS}


@dataclass(frozen=True)
class TensorSpec:
    """A function argument or result: its name (SSA name hint or index), dtype and shape (-1 = dynamic)."""

    name: str
    dtype: np.dtype[Any]
    shape: tuple[int, ...]

    @property
    def type_str(self) -> str:
        dims = "".join(f"{'?' if d < 0 else d}x" for d in self.shape)
        return f"tensor<{dims}{_DTYPE_NAMES.get(self.dtype, str(self.dtype))}>"

    def accepts(self, a: np.ndarray[Any, Any]) -> bool:
        return len(a.shape) == len(self.shape) and all(d < 0 or d == s for d, s in zip(self.shape, a.shape))


@dataclass(frozen=True)
class Step:
    """One op: `outs = kernel(*ins)`; `checks` are (slot, test) pairs for the float status."""

    kernel: KernelFn
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    op_type: str
    multi: bool
    """The kernel returns a sequence (several results, or a call)."""
    checks: tuple[tuple[int, Callable[[Any], bool]], ...] = ()
    frees: tuple[int, ...] = ()
    """Registers whose last use is this step."""
    releases: tuple[int, ...] = ()
    """Buffers (owner registers) that die after this step, for memory accounting."""
    callee: CompiledFunction | None = None
    op: Operation | None = None
    """The op the step runs (errors name it)."""
    dynamic: bool = False
    """A result's shape is dynamic: the run checks its size against the tensor limit once the kernel made it."""


@dataclass
class CompiledFunction:
    """A `func.func` compiled to steps over registers (arguments first)."""

    name: str
    args: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]
    n_slots: int = 0
    steps: list[Step] = field(default_factory=list[Step])
    result_slots: tuple[int, ...] = ()
    owner: tuple[int, ...] = ()
    """Buffer owner of each register (a Reshape result shares its operand's buffer, and so
    does the result of a step that runs in place, see :meth:`_Compiler.plan_in_place`)."""
    donated: tuple[int, ...] = ()
    """Arguments whose buffers the run may overwrite (JAX's donated arguments)."""
    overwritten: frozenset[int] = frozenset()
    """Buffers (owner registers) that a step overwrites in place."""
    entry_releases: tuple[int, ...] = ()
    """Argument buffers no step uses."""
    itemsizes: tuple[int, ...] = ()
    """Bytes per element of each register's IR dtype (a carried float16 counts 2)."""
    carried_args: tuple[int, ...] = ()
    """The float16 arguments: float32 arrays of their values inside, converted by :meth:`Program.run`."""
    carried_results: tuple[int, ...] = ()
    """The float16 results, likewise."""
    fast: Callable[..., list[Any]] = field(default=lambda *a: [])  # pyright: ignore[reportUnknownLambdaType]
    """Runs the body on carried values (what calls between functions use)."""
    source: str = ""
    """The generated Python code of `fast` (for debugging)."""
    line_steps: dict[int, int] = field(default_factory=dict[int, int])
    """Line of `source` calling a step's kernel -> the step's index."""


def _tensor(t: Attribute, name: str, reference: bool, where: str) -> TensorSpec:
    """The runtime view of a tensor type (floats become float64 in reference mode)."""
    dtype = tensor_dtype(t)
    if not isinstance(t, TensorType) or dtype is None:
        raise AscendError(f"{where}: cannot execute a value of type {t}")
    np_dtype = NUMPY[dtype]
    if reference and np_dtype in FLOATS:
        np_dtype = F64
    return TensorSpec(name, np_dtype, tuple(t.get_shape()))


def _dense_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray[Any, Any]:
    dtype = NUMPY[tensor_dtype(attr.type) or "f32"]
    shape = tuple(attr.type.get_shape())
    raw = attr.data.data
    if dtype == np.dtype(np.bool_):
        flat = np.frombuffer(raw, np.uint8) != 0
    elif len(raw) % dtype.itemsize == 0:
        flat = np.frombuffer(raw, dtype)
    else:
        flat = np.asarray(attr.get_values(), dtype)
    size = math.prod(shape)
    if flat.size == 1 and size != 1:
        return np.broadcast_to(flat, shape).copy()
    return flat.reshape(shape).copy()


def _attr_value(attr: Attribute) -> Any:
    if isinstance(attr, DenseArrayBase):
        return tuple(int(v) for v in attr.get_values())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if isinstance(attr, IntegerAttr):
        value = int(attr.value.data)
        width = getattr(attr.type, "width", None)
        return bool(value) if width is not None and width.data == 1 else value
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return _dense_array(attr)
    if isinstance(attr, DenseResourceAttr):  # a weight blob (ascend_mp/resources.py)
        from ascend_mp.resources import resource_array

        return resource_array(attr)
    return None


def op_spec(op: AscendOp, reference: bool = False, status: FloatStatus | None = None, carry_f16: bool = False) -> OpSpec:
    """The static facts of an ascend op, as its kernel builder receives them."""
    attrs: dict[str, Any] = {}
    # properties, and discardable attributes (e.g. an `epsilon` on LayerNormGrad, which has no such property)
    for key, attr in (*op.attributes.items(), *op.properties.items()):
        if key not in _SKIPPED_PROPS:
            value = _attr_value(attr)
            if value is not None:
                attrs[key] = value
    ins = [_tensor(v.type, f"operand {i}", reference, f"operand {i}") for i, v in enumerate(op.operands)]
    outs = [_tensor(r.type, f"result {i}", reference, f"result {i}") for i, r in enumerate(op.results)]
    return OpSpec(
        type=op_type(op),
        in_dtypes=tuple(t.dtype for t in ins),
        out_dtypes=tuple(t.dtype for t in outs),
        in_shapes=tuple(t.shape for t in ins),
        out_shapes=tuple(t.shape for t in outs),
        attrs=attrs,
        reference=reference,
        status=status,
        carry_f16=carry_f16,
    )


def _too_big(op: Operation, array: np.ndarray[Any, Any], itemsize: int) -> None:
    """A result of dynamic shape larger than the tensor limit (the generated code calls this)."""
    from ascend_mp.limits import check_alloc

    check_alloc(array.shape, itemsize, f"{_location(op)}: the result of {op.name}")


def _location(op: Operation) -> str:
    from ascend_mp.ir import location_of

    return location_of(op)


@dataclass
class _Pending:
    """A step before liveness and float status checks are decided."""

    step: Step
    kernel_def: KernelDef | None = None
    """None for func.call."""
    in_dtypes: tuple[np.dtype[Any], ...] = ()
    out_dtypes: tuple[np.dtype[Any], ...] = ()
    out0_size: int = 0
    fresh: bool = False
    """The kernel returns new arrays (never an operand, a view of one or a shared constant)."""
    in_place: tuple[tuple[int, ...], KernelFn] | None = None
    """(the operand each result may overwrite, the kernel doing so), see :data:`IN_PLACE`."""
    scalar_flag: bool = False
    """A Select on a 0-d condition."""


_FRESH_UNITS = (VECTOR, CUBE)
"""Units whose single-result kernels return new arrays (data movement may return views,
casts their operand, constants and the status register shared read-only arrays, and a
kernel with several results may pass an operand through: BatchNorm's inference statistics)."""

_CHECK, _PROPAGATED, _PRESERVED = "check", "propagated", "preserved"


class _Compiler:
    """Compiles one function body into steps."""

    def __init__(self, program: Program, fn: CompiledFunction, body: func.FuncOp):
        self.program, self.fn, self.body = program, fn, body
        self.slots: dict[SSAValue, int] = {a: i for i, a in enumerate(body.args)}
        self.owner: list[int] = list(range(len(body.args)))
        self.dtypes: list[np.dtype[Any]] = [a.dtype for a in fn.args]
        """The IR dtype of each register."""
        self.pending: list[_Pending] = []

    def slot(self, value: SSAValue) -> int:
        return self.slots[value]

    def new_slots(self, values: Sequence[SSAValue], dtypes: Sequence[np.dtype[Any]], alias_of: int | None = None) -> tuple[int, ...]:
        out: list[int] = []
        for v, d in zip(values, dtypes, strict=True):
            s = len(self.owner)
            self.slots[v] = s
            self.owner.append(self.owner[alias_of] if alias_of is not None else s)
            self.dtypes.append(d)
            out.append(s)
        return tuple(out)

    def compile(self) -> None:
        results: tuple[int, ...] | None = None
        for op in self.body.body.block.ops:
            if results is not None:
                raise AscendError(f"{_location(op)}: op after func.return")
            if isinstance(op, func.ReturnOp):
                results = tuple(self.slot(v) for v in op.arguments)
            elif isinstance(op, func.CallOp):
                self.call(op)
            elif isinstance(op, AscendOp):
                self.ascend(op)
            else:
                raise AscendError(f"{_location(op)}: the interpreter cannot execute '{op.name}'")
        if results is None:
            raise AscendError(f"@{self.fn.name}: function body has no func.return")
        self.finish(results)

    def call(self, op: func.CallOp) -> None:
        name = op.callee.string_value()
        callee = self.program.functions.get(name)
        if callee is None:
            raise AscendError(f"{_location(op)}: call to @{name}, which has no body in this module")
        if callee.donated:  # it would overwrite the caller's tensors
            raise AscendError(f"{_location(op)}: call to @{name}, whose arguments are donated")
        ins = tuple(self.slot(v) for v in op.arguments)
        outs = self.new_slots(op.results, [r.dtype for r in callee.results])

        def call(*args: Any, _callee: CompiledFunction = callee) -> list[Any]:
            return _callee.fast(*args)

        self.pending.append(_Pending(Step(call, ins, outs, "func.call", True, callee=callee, op=op)))

    def ascend(self, op: AscendOp) -> None:
        try:
            spec = op_spec(op, self.program.reference, self.program.status_register, self.program.carry_f16)
            kernel = make_kernel(spec)
        except (KernelError, AscendError) as e:
            raise AscendError(f"{_location(op)}: {e}") from None
        ins = tuple(self.slot(v) for v in op.operands)
        alias = ins[0] if spec.type == "Reshape" else None
        outs = self.new_slots(op.results, spec.out_dtypes, alias)
        size = math.prod(spec.out_shapes[0]) if spec.out_shapes and all(d > 0 for d in spec.out_shapes[0]) else 0
        dynamic = any(d < 0 for shape in spec.out_shapes for d in shape)
        step = Step(kernel, ins, outs, spec.type, len(outs) != 1, op=op, dynamic=dynamic)
        kd = KERNELS[spec.type]
        fresh = kd.unit in _FRESH_UNITS and len(outs) == 1
        flag = spec.type == "Select" and spec.in_shapes[0] == ()
        self.pending.append(_Pending(step, kd, spec.in_dtypes, spec.out_dtypes, size, fresh, make_in_place_kernel(spec), flag))

    def status_checks(self, results: tuple[int, ...]) -> list[tuple[tuple[int, Callable[[Any], bool]], ...]]:
        """Which float results each step checks for inf/NaN.

        Every float result of an AI Core kernel must be *watched*: whenever it holds
        inf/NaN, the register is set before the next status op (or call, or the end).
        A result is watched when it is checked, when it feeds an operand that
        propagates inf/NaN into a watched result 0 of a later op of the same segment
        (the later check sees it), or when its op preserves finiteness and its float
        operands are watched results of the same segment (it cannot be the first).
        """
        pending = self.pending
        if not self.program.status_analysis:
            return self.drop_unread_tail([
                tuple((s, self.program.nonfinite(d)) for s, d in zip(p.step.outs, p.out_dtypes) if d in FLOATS)
                if p.kernel_def is not None and p.kernel_def.unit not in (CONST, STATUS)
                else ()
                for p in pending
            ])
        segment: list[int] = []
        seg = 0
        for p in pending:
            if p.kernel_def is None or p.kernel_def.unit == STATUS:
                seg += 1
                segment.append(seg)
                seg += 1
            else:
                segment.append(seg)
        producer: dict[int, int] = {}
        consumers: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for i, p in enumerate(pending):
            for pos, s in enumerate(p.step.ins):
                consumers[s].append((i, pos))
            for s in p.step.outs:
                producer[s] = i

        def watched_outputs(p: _Pending) -> list[tuple[int, np.dtype[Any]]]:
            kd = p.kernel_def
            if kd is None or kd.unit in (CONST, STATUS):
                return []
            return [(s, d) for s, d in zip(p.step.outs, p.out_dtypes) if d in FLOATS]

        state: dict[int, str] = {}
        relied: set[int] = set()
        returned = set(results)
        for i in range(len(pending) - 1, -1, -1):
            for s, _ in watched_outputs(pending[i]):
                state[s] = _CHECK
                if s in returned:
                    continue
                for c, pos in consumers[s]:
                    pc = pending[c]
                    kd = pc.kernel_def
                    if kd is None or segment[c] != segment[i] or pos not in kd.propagates or pc.out0_size == 0:
                        continue
                    target = pc.step.outs[0]
                    if state.get(target) in (_CHECK, _PROPAGATED):
                        state[s] = _PROPAGATED
                        relied.add(target)
                        break
        for i, p in enumerate(pending):
            kd = p.kernel_def
            if kd is None or not kd.finite_preserving:
                continue
            float_ins = [(s, d) for s, d in zip(p.step.ins, p.in_dtypes) if d in FLOATS]
            for s, dtype in watched_outputs(p):
                if state[s] != _CHECK or s in relied or s in returned:
                    continue
                if all(
                    s_in in state and segment[producer[s_in]] == segment[i] and _FLOAT_MAX[dtype] >= _FLOAT_MAX[d]
                    for s_in, d in float_ins
                ):
                    state[s] = _PRESERVED
        return self.drop_unread_tail([
            tuple((s, self.program.nonfinite(d)) for s, d in watched_outputs(p) if state[s] == _CHECK) for p in pending
        ])

    def drop_unread_tail(
        self, checks: list[tuple[tuple[int, Callable[[Any], bool]], ...]]
    ) -> list[tuple[tuple[int, Callable[[Any], bool]], ...]]:
        """`checks` without those after the function's last status op or call, when nothing
        reads the register after a run (`final_status=False`) and no function calls this one
        (a caller's later status op would read what its tail sets)."""
        if self.program.final_status or self.fn.name in self.program.called:
            return checks
        tail = 1 + max(
            (i for i, p in enumerate(self.pending) if p.kernel_def is None or p.kernel_def.unit == STATUS), default=-1
        )
        return checks[:tail] + [()] * (len(checks) - tail)

    def moving_selects(self, kernels: list[KernelFn], last: dict[int, int], group_last: dict[int, int]) -> list[KernelFn]:
        """`kernels` (each step's), with Selects on one flag that do not run in place (see
        :meth:`plan_in_place`) returning (not copying) an operand that dies there: computed by a
        vector or cube kernel (a fresh array), not an argument's view, not a result, with no other
        register on its buffer living on."""
        producer = {s: p for p in self.pending for s in p.step.outs}
        n_args = len(self.body.args)

        def dies(s: int, i: int) -> bool:
            p = producer.get(s)
            return (
                p is not None and p.kernel_def is not None and p.kernel_def.unit in (VECTOR, CUBE)
                and self.owner[s] == s >= n_args and last.get(s) == i and group_last.get(s) == i
            )

        moved = list(kernels)
        for i, p in enumerate(self.pending):
            if p.step.op_type == "Select" and p.scalar_flag and kernels[i] is p.step.kernel:
                move1, move2 = dies(p.step.ins[1], i), dies(p.step.ins[2], i)
                if move1 or move2:
                    moved[i] = select_moving(move1, move2)
        return moved

    def finish(self, results: tuple[int, ...]) -> None:
        fn, n_steps = self.fn, len(self.pending)
        checks = self.status_checks(results)
        last: dict[int, int] = {}
        for i, p in enumerate(self.pending):
            for s in p.step.ins:
                last[s] = i
            for s in p.step.outs:
                last.setdefault(s, i)
        end = n_steps  # results live to the end
        for s in results:
            last[s] = end
        group_last: dict[int, int] = {}
        for s in range(len(self.owner)):
            o = self.owner[s]
            group_last[o] = max(group_last.get(o, -1), last.get(s, -1))
        kernels = self.plan_in_place(group_last, results)
        frees: dict[int, list[int]] = defaultdict(list)
        releases: dict[int, list[int]] = defaultdict(list)
        for s, i in last.items():
            if i < end:
                frees[i].append(s)
        for o, i in group_last.items():
            if i < end:
                releases[i].append(o)
        kernels = self.moving_selects(kernels, last, group_last)
        for i, p in enumerate(self.pending):  # a kernel that sets the status for its result itself
            if getattr(kernels[i], SETS_STATUS, False) and not p.step.multi:
                checks[i] = tuple(c for c in checks[i] if c[0] != p.step.outs[0])
        fn.steps = [
            Step(kernels[i], p.step.ins, p.step.outs, p.step.op_type, p.step.multi, checks[i],
                 tuple(sorted(frees[i])), tuple(sorted(releases[i])), p.step.callee, p.step.op, p.step.dynamic)
            for i, p in enumerate(self.pending)
        ]
        fn.entry_releases = tuple(releases[-1])
        fn.n_slots = len(self.owner)
        fn.owner = tuple(self.owner)
        fn.itemsizes = tuple(d.itemsize for d in self.dtypes)
        fn.result_slots = results
        fn.source, fn.fast = _generate(fn, self.program.status_register)

    def plan_in_place(self, group_last: dict[int, int], results: tuple[int, ...]) -> list[KernelFn]:
        """Let the results of ops with an in-place variant (:data:`IN_PLACE`: the optimizer
        updates, whose outputs are ref outputs on Ascend, elementwise arithmetic, a full-size
        select) take an operand's buffer where that is safe, as a buffer assigner does:

        * the operand's buffer dies at the op (no later use of it or of an alias, not a
          result) and the op reads it once, so no one sees it overwritten;
        * the array holding it may be written: the function made it (a kernel's new array,
          see :data:`_FRESH_UNITS`; a cast or data movement result may be its operand's
          array or a view of it, so it counts as that array) or it is a donated argument,
          and no other register that may hold the same array is used later.

        Such a result joins the operand's buffer group (`owner`), so memory accounting sees
        no new buffer, and the step runs the variant, which writes there. Updates
        `self.owner` and `group_last`; returns the kernels."""
        pending, owner = self.pending, self.owner
        kernels = [p.step.kernel for p in pending]
        n_args = len(self.fn.args)
        last: dict[int, int] = {s: len(pending) for s in results}
        for i, p in enumerate(pending):
            for s in p.step.ins:
                last.setdefault(s, i)
                last[s] = max(last[s], i)
        # the numpy array each register may be (its first register; None: unknown or shared,
        # never written), and the last use of any register that may be that array
        array: list[int | None] = [s if s in self.fn.donated else None for s in range(n_args)] + [None] * (len(owner) - n_args)
        array_last: dict[int, int] = {s: last.get(s, -1) for s in range(n_args) if array[s] is not None}

        def holds(s: int, a: int | None) -> None:
            array[s] = a
            if a is not None:
                array_last[a] = max(array_last.get(a, -1), last.get(s, -1))

        overwritten: set[int] = set()
        for i, p in enumerate(pending):
            ins = [owner[s] for s in p.step.ins]
            arrays = [array[s] for s in p.step.ins]
            done: set[int] = set()
            if p.in_place is not None and all(
                group_last.get(ins[j]) == i and ins.count(ins[j]) == 1
                and arrays[j] is not None and array_last.get(arrays[j]) == i and arrays.count(arrays[j]) == 1
                for j in p.in_place[0]
            ):
                for r, j in enumerate(p.in_place[0]):
                    o, res = ins[j], p.step.outs[r]
                    for s in range(res, len(owner)):  # the result and anything aliasing it (e.g. a Reshape)
                        if owner[s] == res:
                            owner[s] = o
                    group_last[o] = group_last.pop(res)
                    holds(res, arrays[j])
                    overwritten.add(o)
                    done.add(res)
                kernels[i] = p.in_place[1]
            may_alias = p.kernel_def is not None and p.kernel_def.unit in (CAST, DATA) and bool(arrays)
            for s in p.step.outs:
                if s not in done:
                    holds(s, s if p.fresh else arrays[0] if may_alias else None)
        self.fn.overwritten = frozenset(overwritten)
        return kernels


def _generate(fn: CompiledFunction, status: FloatStatus) -> tuple[str, Callable[..., list[Any]]]:
    """A straight-line Python function running `fn`'s steps (registers are locals)."""
    env: dict[str, Any] = {"st": status, "inf": math.inf, "isfinite": np.isfinite, "too_big": _too_big}
    params = ", ".join(f"r{i}" for i in range(len(fn.args)))
    lines = [f"def run({params}):"]
    if any(step.dynamic for step in fn.steps):
        from ascend_mp.limits import max_tensor_bytes

        env["limit"] = max_tensor_bytes()
    unused = [s for s in range(len(fn.args)) if all(s not in st.ins for st in fn.steps) and s not in fn.result_slots]
    if unused:
        lines.append(f"    del {', '.join(f'r{s}' for s in unused)}")
    for i, step in enumerate(fn.steps):
        env[f"k{i}"] = step.kernel
        fn.line_steps[len(lines) + 1] = i  # the line calling the kernel (a MemoryError names its op)
        call = f"k{i}({', '.join(f'r{s}' for s in step.ins)})"
        if step.kernel is identity:  # the operand's register is the result
            call = f"r{step.ins[0]}"
        elif step.op_type == "Const":  # the same read-only array every run
            env[f"k{i}"] = step.kernel()
            call = f"k{i}"
        if not step.outs:
            lines.append(f"    {call}")
        elif step.multi:
            lines.append(f"    {', '.join(f'r{s}' for s in step.outs)}, = {call}")
        else:
            lines.append(f"    r{step.outs[0]} = {call}")
        if step.dynamic:  # a size only the run knows: checked before the next step allocates
            env[f"o{i}"] = step.op
            for slot in step.outs:
                size = fn.itemsizes[slot]
                lines.append(f"    if r{slot}.size * {size} > limit: too_big(o{i}, r{slot}, {size})")
        for j, (slot, check) in enumerate(step.checks):
            if check is nonfinite_wide:  # inlined: one BLAS dot, an exact test only if it is not finite
                lines.append("    if not st.flag:")
                lines.append(f"        t = r{slot}.reshape(-1)")
                lines.append("        if not t.dot(t) < inf and not isfinite(t).all(): st.flag = True")
            else:
                env[f"c{i}_{j}"] = check
                lines.append(f"    if not st.flag and c{i}_{j}(r{slot}): st.flag = True")
        if step.frees:
            lines.append(f"    del {', '.join(f'r{s}' for s in step.frees)}")
    lines.append(f"    return [{', '.join(f'r{s}' for s in fn.result_slots)}]")
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<ascend @{fn.name}>", "exec"), env)  # noqa: S102 - our own generated code
    return source, env["run"]


class Program:
    """A compiled module: run its functions on numpy arrays.

    After :meth:`run`, `float_status` is the overflow register (cleared when a run
    starts), `peak_bytes` the peak of live tensor bytes and `peak_activation_bytes` the
    peak of live tensors the run allocated, the function's arguments excluded (with
    `track_memory`), and `op_times` seconds per op type (with `profile`).
    """

    def __init__(self, reference: bool = False, status_analysis: bool = True, carry_f16: bool = True, final_status: bool = True):
        self.reference = reference
        self.status_analysis = status_analysis
        self.final_status = final_status
        self.called: set[str] = set()
        """Functions some `func.call` of the module calls."""
        self.carry_f16 = carry_f16 and not reference
        self.functions: dict[str, CompiledFunction] = {}
        self.status_register = FloatStatus()
        self.peak_bytes = 0
        self.peak_activation_bytes = 0
        self.op_times: dict[str, float] = {}
        self.public: list[str] = []
        """Names of the functions with a body that are not private, in module order."""

    @classmethod
    def from_module(
        cls, module: ModuleOp, *, reference: bool = False, status_analysis: bool = True, carry_f16: bool = True,
        donate: Mapping[str, Collection[int]] | None = None, final_status: bool = True,
    ) -> Program:
        """Compile every function of `module`; `reference` runs every float op in float64.

        `donate` maps function names to argument indices whose arrays the caller gives up
        (as JAX's `donate_argnums`): the run may overwrite them (an optimizer update writes
        the new parameters into the old ones' buffers), so the caller must not read them
        afterwards; a donated array that is read-only, a view or passed twice is copied first.

        `final_status=False` promises that nothing reads `float_status` after a run (a
        training loop whose step reads the register with its own status ops): the float
        results after a function's last status op are then not checked (unless another
        function calls it), which the register cannot show. Status ops inside read it as always.

        `status_analysis=False` checks every float result for the float status instead
        of only those the analysis needs (slower; for testing the analysis).
        `carry_f16=False` holds float16 tensors as numpy float16 arrays, widened for every
        op, instead of float32 arrays of float16 values (same results, slower; for testing)."""
        program = cls(reference, status_analysis, carry_f16, final_status)
        program.called = {op.callee.string_value() for op in module.walk() if isinstance(op, func.CallOp)}
        bodies: list[tuple[CompiledFunction, func.FuncOp]] = []
        for op in module.ops:
            if not isinstance(op, func.FuncOp):
                continue
            name = op.sym_name.data
            if not op.body.blocks:  # a declaration: calls to it fail to compile
                continue
            args = tuple(
                _tensor(a.type, a.name_hint or str(i), reference, f"@{name} argument {i}") for i, a in enumerate(op.args)
            )
            results = tuple(
                _tensor(t, f"result{i}", reference, f"@{name} result {i}") for i, t in enumerate(op.function_type.outputs.data)
            )
            fn = CompiledFunction(name, args, results)
            fn.donated = tuple(sorted(i for i in (donate or {}).get(name, ()) if 0 <= i < len(args)))
            if program.carry_f16:
                fn.carried_args = tuple(i for i, a in enumerate(args) if a.dtype == F16)
                fn.carried_results = tuple(i for i, r in enumerate(results) if r.dtype == F16)
            program.functions[name] = fn
            bodies.append((fn, op))
            if op.sym_visibility is None or op.sym_visibility.data != "private":
                program.public.append(name)
        for fn, op in bodies:
            _Compiler(program, fn, op).compile()
        return program

    def nonfinite(self, dtype: np.dtype[Any]) -> Callable[[Any], bool]:
        """The inf/NaN test for results of `dtype`, as this program holds them."""
        return NONFINITE[F32 if self.carry_f16 and dtype == F16 else dtype]

    @property
    def float_status(self) -> bool:
        return self.status_register.flag

    @float_status.setter
    def float_status(self, value: bool) -> None:
        self.status_register.flag = value

    def function(self, name: str) -> CompiledFunction:
        fn = self.functions.get(name)
        if fn is None:
            known = ", ".join(f"@{n}" for n in self.functions) or "none"
            raise AscendError(f"unknown function @{name} (functions: {known})")
        return fn

    def run(self, func_name: str, *args: Any, track_memory: bool = False, profile: bool = False) -> list[np.ndarray[Any, Any]]:
        """Run a function; arguments must match its signature (count, shape, dtype)."""
        fn = self.function(func_name)
        arrays = self._check_args(fn, args)
        if fn.donated:
            arrays = _owned(fn, arrays)
        if fn.carried_args:  # float16 arguments become float32 arrays of their values (exact)
            arrays = list(arrays)
            for i in fn.carried_args:
                arrays[i] = arrays[i].astype(F32)
        self.status_register.flag = False
        with np.errstate(all="ignore"), self._naming_memory_errors():
            if not (track_memory or profile):
                results = fn.fast(*arrays)
            else:
                self.op_times = defaultdict(float) if profile else {}
                results, peak, act_peak = self._walk(fn, arrays, track_memory, profile)
                if track_memory:
                    self.peak_bytes, self.peak_activation_bytes = peak, act_peak
                if profile:
                    self.op_times = dict(self.op_times)
        for i in fn.carried_results:  # exact: the values are float16 values
            results[i] = results[i].astype(F16)
        return results

    @contextlib.contextmanager
    def _naming_memory_errors(self) -> Iterator[None]:
        """A kernel's MemoryError as a one-line error naming its op and the shapes of its operands (the step is
        found in the traceback: the innermost frame of generated code, see `line_steps`, or of :meth:`_walk`)."""
        try:
            yield
        except MemoryError as e:
            found: tuple[Step, Sequence[Any]] | None = None
            tb = e.__traceback__
            while tb is not None:
                frame = tb.tb_frame
                code = frame.f_code
                if code.co_filename.startswith("<ascend @"):
                    fn = self.functions.get(code.co_filename[len("<ascend @") : -1])
                    index = fn.line_steps.get(tb.tb_lineno) if fn is not None else None
                    if fn is not None and index is not None:
                        step = fn.steps[index]
                        found = step, [frame.f_locals.get(f"r{s}") for s in step.ins]
                elif code is Program._walk.__code__ and isinstance(frame.f_locals.get("step"), Step):
                    found = frame.f_locals["step"], frame.f_locals.get("ins") or ()
                tb = tb.tb_next
            if found is None or found[0].op is None:
                raise
            step, ins = found
            shapes = ", ".join(str(tuple(a.shape)) if isinstance(a, np.ndarray) else "?" for a in ins)
            op = step.op
            raise AscendError(f"{_location(op)}: out of memory running {op.name} on operands of shapes {shapes}") from None

    def _check_args(self, fn: CompiledFunction, args: Sequence[Any]) -> Sequence[np.ndarray[Any, Any]]:
        specs = fn.args
        if len(args) != len(specs):
            raise AscendError(f"@{fn.name} takes {len(specs)} arguments, got {len(args)}")
        for a, spec in zip(args, specs):  # the common case: exact arrays, checked cheaply
            if a.__class__ is not np.ndarray or a.dtype != spec.dtype or a.shape != spec.shape:
                break
        else:
            return args
        arrays: list[np.ndarray[Any, Any]] = []
        for i, (a, spec) in enumerate(zip(args, specs)):
            arr = np.asarray(a)
            ok_dtype = arr.dtype == spec.dtype or (self.reference and spec.dtype == F64 and arr.dtype in FLOATS)
            if not ok_dtype or not spec.accepts(arr):
                got = _DTYPE_NAMES.get(arr.dtype, str(arr.dtype))
                raise AscendError(
                    f"@{fn.name} argument {i} (%{spec.name}): expected {spec.type_str}, "
                    f"got {got} array of shape {tuple(arr.shape)}"
                )
            arrays.append(arr.astype(F64) if arr.dtype != spec.dtype else arr)
        return arrays

    def trace(self, func_name: str, *args: Any) -> tuple[list[np.ndarray[Any, Any]], list[tuple[np.ndarray[Any, Any], ...]]]:
        """Run a function like :meth:`run` and also return what each op of its body computed:
        one tuple of result arrays per op, in program order (`func.return` excluded). float16
        results come as float32 arrays of their values (exact), as the executor holds them."""
        fn = self.function(func_name)
        arrays = list(_owned(fn, self._check_args(fn, args)))
        for i in fn.carried_args:
            arrays[i] = arrays[i].astype(F32)
        self.status_register.flag = False
        steps: list[tuple[np.ndarray[Any, Any], ...]] = []
        with np.errstate(all="ignore"), self._naming_memory_errors():
            results, _, _ = self._walk(fn, arrays, False, False, steps)
        for i in fn.carried_results:
            results[i] = results[i].astype(F16)
        return results, steps

    def _walk(
        self, fn: CompiledFunction, args: Sequence[Any], track: bool, profile: bool,
        trace: list[tuple[np.ndarray[Any, Any], ...]] | None = None,
    ) -> tuple[list[np.ndarray[Any, Any]], int, int]:
        """Run the steps one by one, accounting live bytes and/or time per op type (and
        appending each step's results to `trace`).

        Returns the results, the peak of live bytes (arguments included) and the peak of
        live activation bytes (buffers the steps allocate: the arguments excluded)."""
        regs: list[Any] = [None] * fn.n_slots
        regs[: len(args)] = args
        status, owner, times, itemsize = self.status_register, fn.owner, self.op_times, fn.itemsizes
        sizes: dict[int, int] = {}
        live = act = 0
        if track:
            for i, a in enumerate(args):
                sizes[i] = a.size * itemsize[i]
            live = sum(sizes.values())
        peak, act_peak, n_args = live, 0, len(args)
        for o in fn.entry_releases:
            live -= sizes.pop(o, 0)
        clock = time.perf_counter
        limit: int | None = None  # the tensor limit, read at the first step of dynamic shape
        for step in fn.steps:
            ins = [regs[s] for s in step.ins]
            t0 = clock()
            if step.callee is not None:
                out, inner, inner_act = self._walk(step.callee, ins, track, profile)
                entry = sum(a.size * itemsize[s] for a, s in zip(ins, step.ins))
                peak = max(peak, live + inner - entry)
                act_peak = max(act_peak, act + inner_act)  # the callee's arguments are counted here already
            else:
                out = step.kernel(*ins)
                if profile:
                    times[step.op_type] += clock() - t0
            if step.multi:
                for s, v in zip(step.outs, out):
                    regs[s] = v
            elif step.outs:
                regs[step.outs[0]] = out
            if step.dynamic:  # as the generated code checks them
                if limit is None:
                    from ascend_mp.limits import max_tensor_bytes

                    limit = max_tensor_bytes()
                for s in step.outs:
                    if regs[s].size * itemsize[s] > limit:
                        _too_big(step.op, regs[s], itemsize[s])  # pyright: ignore[reportArgumentType]
            for slot, check in step.checks:
                if not status.flag and check(regs[slot]):
                    status.flag = True
            if trace is not None:  # a copy of what a later step overwrites in place
                trace.append(tuple(regs[s].copy() if owner[s] in fn.overwritten else regs[s] for s in step.outs))
            if track:
                for s in step.outs:
                    if owner[s] == s:
                        sizes[s] = regs[s].size * itemsize[s]
                        live += sizes[s]
                        act += sizes[s]
                peak = max(peak, live)
                act_peak = max(act_peak, act)
                for o in step.releases:
                    size = sizes.pop(o, 0)
                    live -= size
                    if o >= n_args:
                        act -= size
            for s in step.frees:
                regs[s] = None
        return [regs[s] for s in fn.result_slots], peak, act_peak

    def signature(self, func_name: str) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
        """(arguments, results) of a function."""
        fn = self.function(func_name)
        return fn.args, fn.results


def _owned(fn: CompiledFunction, arrays: Sequence[Any]) -> Sequence[Any]:
    """The arguments with every donated one an array the run may overwrite: a read-only
    array, a view or one passed more than once is copied."""
    if not fn.donated:
        return arrays
    out = list(arrays)
    seen = {id(a) for i, a in enumerate(arrays) if i not in fn.donated}
    for i in fn.donated:
        a = out[i]
        if id(a) in seen or a.base is not None or not a.flags.writeable:
            out[i] = a = a.copy()
        seen.add(id(a))
    return out


def run_function(module: ModuleOp, func_name: str, *args: Any, reference: bool = False, **kw: Any) -> list[np.ndarray[Any, Any]]:
    """Compile `module` and run one function (`kw`: track_memory, profile)."""
    return Program.from_module(module, reference=reference).run(func_name, *args, **kw)
