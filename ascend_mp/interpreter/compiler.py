"""Compile `func.func` bodies of ascend ops into steps over registers, and the steps into
straight-line Python (what :class:`~ascend_mp.interpreter.runner.Program` runs).

:class:`FunctionCompiler` walks a function once and turns every op into a :class:`Step`
(kernel, operand slots, result slots, the results to check for overflow, the slots that die
after it); the attributes are read into the kernels' closures then (:func:`op_spec`), so
running touches no xDSL object and looks up nothing by name. It decides which results the
float status must check (:meth:`FunctionCompiler.status_checks`), where each register dies,
and which ops run in place (:meth:`FunctionCompiler.plan_in_place`); :func:`generate` writes
one Python function per `func.func` (each step a line `r5 = k3(r1, r2)`, dead registers
deleted after their last use).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ascend_mp.dialects.ascend import AscendOp, op_type
from ascend_mp.dtypes import NUMPY, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.interpreter.kernels import (
    CAST,
    CONST,
    CUBE,
    DATA,
    KERNELS,
    SETS_STATUS,
    STATUS,
    VECTOR,
    KernelDef,
    KernelFn,
    make_in_place_kernel,
    make_kernel,
)
from ascend_mp.interpreter.kernels.cast import identity
from ascend_mp.interpreter.kernels.elementwise import select_moving
from ascend_mp.interpreter.numerics import F64, FLOATS, nonfinite_wide
from ascend_mp.interpreter.spec import FloatStatus, KernelError, OpSpec

_SKIPPED_PROPS = frozenset(("caps", "list", "name"))
DTYPE_NAMES = {d: n for n, d in NUMPY.items()}
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
        return f"tensor<{dims}{DTYPE_NAMES.get(self.dtype, str(self.dtype))}>"

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
    does the result of a step that runs in place, see :meth:`FunctionCompiler.plan_in_place`)."""
    donated: tuple[int, ...] = ()
    """Arguments whose buffers the run may overwrite (JAX's donated arguments)."""
    overwritten: frozenset[int] = frozenset()
    """Buffers (owner registers) that a step overwrites in place."""
    entry_releases: tuple[int, ...] = ()
    """Argument buffers no step uses."""
    itemsizes: tuple[int, ...] = ()
    """Bytes per element of each register's IR dtype (a carried float16 counts 2)."""
    carried_args: tuple[int, ...] = ()
    """The float16 arguments: float32 arrays of their values inside, converted by `Program.run`."""
    carried_results: tuple[int, ...] = ()
    """The float16 results, likewise."""
    fast: Callable[..., list[Any]] = field(default=lambda *a: [])
    """Runs the body on carried values (what calls between functions use)."""
    source: str = ""
    """The generated Python code of `fast` (for debugging)."""
    line_steps: dict[int, int] = field(default_factory=dict[int, int])
    """Line of `source` calling a step's kernel -> the step's index."""


class ProgramOptions(Protocol):
    """What compiling a function reads of its program (:class:`~ascend_mp.interpreter.runner.Program`)."""

    reference: bool
    status_analysis: bool
    final_status: bool
    carry_f16: bool
    called: set[str]
    functions: dict[str, CompiledFunction]
    status_register: FloatStatus

    def nonfinite(self, dtype: np.dtype[Any]) -> Callable[[Any], bool]: ...


def tensor_spec(t: Attribute, name: str, reference: bool, where: str) -> TensorSpec:
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
        return tuple(int(v) for v in attr.get_values())
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


def op_spec(
    op: AscendOp, reference: bool = False, status: FloatStatus | None = None, carry_f16: bool = False
) -> OpSpec:
    """The static facts of an ascend op, as its kernel builder receives them."""
    attrs: dict[str, Any] = {}
    # properties, and discardable attributes (e.g. an `epsilon` on LayerNormGrad, which has no such property)
    for key, attr in (*op.attributes.items(), *op.properties.items()):
        if key not in _SKIPPED_PROPS:
            value = _attr_value(attr)
            if value is not None:
                attrs[key] = value
    ins = [tensor_spec(v.type, f"operand {i}", reference, f"operand {i}") for i, v in enumerate(op.operands)]
    outs = [tensor_spec(r.type, f"result {i}", reference, f"result {i}") for i, r in enumerate(op.results)]
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


def too_big(op: Operation, array: np.ndarray[Any, Any], itemsize: int) -> None:
    """A result of dynamic shape larger than the tensor limit (the generated code calls this)."""
    from ascend_mp.limits import check_alloc

    check_alloc(array.shape, itemsize, f"{op_location(op)}: the result of {op.name}")


def op_location(op: Operation) -> str:
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
    """(the operand each result may overwrite, the kernel doing so), see :data:`~ascend_mp.interpreter.kernels.IN_PLACE`."""
    scalar_flag: bool = False
    """A Select on a 0-d condition."""


_FRESH_UNITS = (VECTOR, CUBE)
"""Units whose single-result kernels return new arrays (data movement may return views,
casts their operand, constants and the status register shared read-only arrays, and a
kernel with several results may pass an operand through: BatchNorm's inference statistics)."""

_CHECK, _PROPAGATED, _PRESERVED = "check", "propagated", "preserved"


class FunctionCompiler:
    """Compiles one function body into steps."""

    def __init__(self, program: ProgramOptions, fn: CompiledFunction, body: func.FuncOp):
        self.program, self.fn, self.body = program, fn, body
        self.slots: dict[SSAValue, int] = {a: i for i, a in enumerate(body.args)}
        self.owner: list[int] = list(range(len(body.args)))
        self.dtypes: list[np.dtype[Any]] = [a.dtype for a in fn.args]
        """The IR dtype of each register."""
        self.pending: list[_Pending] = []

    def slot(self, value: SSAValue) -> int:
        return self.slots[value]

    def new_slots(
        self, values: Sequence[SSAValue], dtypes: Sequence[np.dtype[Any]], alias_of: int | None = None
    ) -> tuple[int, ...]:
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
                raise AscendError(f"{op_location(op)}: op after func.return")
            if isinstance(op, func.ReturnOp):
                results = tuple(self.slot(v) for v in op.arguments)
            elif isinstance(op, func.CallOp):
                self.call(op)
            elif isinstance(op, AscendOp):
                self.ascend(op)
            else:
                raise AscendError(f"{op_location(op)}: the interpreter cannot execute '{op.name}'")
        if results is None:
            raise AscendError(f"@{self.fn.name}: function body has no func.return")
        self.finish(results)

    def call(self, op: func.CallOp) -> None:
        name = op.callee.string_value()
        callee = self.program.functions.get(name)
        if callee is None:
            raise AscendError(f"{op_location(op)}: call to @{name}, which has no body in this module")
        if callee.donated:  # it would overwrite the caller's tensors
            raise AscendError(f"{op_location(op)}: call to @{name}, whose arguments are donated")
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
            raise AscendError(f"{op_location(op)}: {e}") from None
        ins = tuple(self.slot(v) for v in op.operands)
        alias = ins[0] if spec.type == "Reshape" else None
        outs = self.new_slots(op.results, spec.out_dtypes, alias)
        size = math.prod(spec.out_shapes[0]) if spec.out_shapes and all(d > 0 for d in spec.out_shapes[0]) else 0
        dynamic = any(d < 0 for shape in spec.out_shapes for d in shape)
        step = Step(kernel, ins, outs, spec.type, len(outs) != 1, op=op, dynamic=dynamic)
        kd = KERNELS[spec.type]
        fresh = kd.unit in _FRESH_UNITS and len(outs) == 1
        flag = spec.type == "Select" and spec.in_shapes[0] == ()
        self.pending.append(
            _Pending(step, kd, spec.in_dtypes, spec.out_dtypes, size, fresh, make_in_place_kernel(spec), flag)
        )

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
            return self.drop_unread_tail(
                [
                    tuple((s, self.program.nonfinite(d)) for s, d in zip(p.step.outs, p.out_dtypes) if d in FLOATS)
                    if p.kernel_def is not None and p.kernel_def.unit not in (CONST, STATUS)
                    else ()
                    for p in pending
                ]
            )
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
        return self.drop_unread_tail(
            [
                tuple((s, self.program.nonfinite(d)) for s, d in watched_outputs(p) if state[s] == _CHECK)
                for p in pending
            ]
        )

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

    def moving_selects(
        self, kernels: list[KernelFn], last: dict[int, int], group_last: dict[int, int]
    ) -> list[KernelFn]:
        """`kernels` (each step's), with Selects on one flag that do not run in place (see
        :meth:`plan_in_place`) returning (not copying) an operand that dies there: computed by a
        vector or cube kernel (a fresh array), not an argument's view, not a result, with no other
        register on its buffer living on."""
        producer = {s: p for p in self.pending for s in p.step.outs}
        n_args = len(self.body.args)

        def dies(s: int, i: int) -> bool:
            p = producer.get(s)
            return (
                p is not None
                and p.kernel_def is not None
                and p.kernel_def.unit in (VECTOR, CUBE)
                and self.owner[s] == s >= n_args
                and last.get(s) == i
                and group_last.get(s) == i
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
            Step(
                kernels[i],
                p.step.ins,
                p.step.outs,
                p.step.op_type,
                p.step.multi,
                checks[i],
                tuple(sorted(frees[i])),
                tuple(sorted(releases[i])),
                p.step.callee,
                p.step.op,
                p.step.dynamic,
            )
            for i, p in enumerate(self.pending)
        ]
        fn.entry_releases = tuple(releases[-1])
        fn.n_slots = len(self.owner)
        fn.owner = tuple(self.owner)
        fn.itemsizes = tuple(d.itemsize for d in self.dtypes)
        fn.result_slots = results
        fn.source, fn.fast = generate(fn, self.program.status_register)

    def plan_in_place(self, group_last: dict[int, int], results: tuple[int, ...]) -> list[KernelFn]:
        """Let the results of ops with an in-place variant (:data:`~ascend_mp.interpreter.kernels.IN_PLACE`: the optimizer
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
        array: list[int | None] = [s if s in self.fn.donated else None for s in range(n_args)] + [None] * (
            len(owner) - n_args
        )
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
                group_last.get(ins[j]) == i
                and ins.count(ins[j]) == 1
                and arrays[j] is not None
                and array_last.get(arrays[j]) == i  # pyright: ignore[reportArgumentType]  # arrays[j] is checked not None just before; pyright does not narrow a subscript by a variable
                and arrays.count(arrays[j]) == 1
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


def generate(fn: CompiledFunction, status: FloatStatus) -> tuple[str, Callable[..., list[Any]]]:
    """A straight-line Python function running `fn`'s steps (registers are locals)."""
    env: dict[str, Any] = {"st": status, "inf": math.inf, "isfinite": np.isfinite, "too_big": too_big}
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
