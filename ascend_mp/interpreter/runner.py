"""Compile `func.func` bodies of ascend ops into straight-line numpy code, and run them.

:meth:`Program.from_module` compiles each function once into steps over a register
array and one generated Python function (:mod:`ascend_mp.interpreter.compiler`), which is
what :meth:`Program.run` calls; runs that track memory or profile walk the same steps in
a loop instead (:meth:`Program._walk`, which also accounts the live bytes).

Registers hold float16 tensors as float32 arrays of float16 values (see
:func:`~ascend_mp.interpreter.numerics.round_f16`): :meth:`Program.run` converts
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
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.errors import AscendError
from ascend_mp.interpreter.compiler import (
    DTYPE_NAMES,
    CompiledFunction,
    FunctionCompiler,
    Step,
    TensorSpec,
    op_location,
    tensor_spec,
    too_big,
)
from ascend_mp.interpreter.numerics import F16, F32, F64, FLOATS, NONFINITE
from ascend_mp.interpreter.spec import FloatStatus

__all__ = ["Program", "TensorSpec", "run_function"]


class Program:
    """A compiled module: run its functions on numpy arrays.

    After :meth:`run`, `float_status` is the overflow register (cleared when a run
    starts), `peak_bytes` the peak of live tensor bytes and `peak_activation_bytes` the
    peak of live tensors the run allocated, the function's arguments excluded (with
    `track_memory`), and `op_times` seconds per op type (with `profile`).
    """

    def __init__(
        self, reference: bool = False, status_analysis: bool = True, carry_f16: bool = True, final_status: bool = True
    ):
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
        cls,
        module: ModuleOp,
        *,
        reference: bool = False,
        status_analysis: bool = True,
        carry_f16: bool = True,
        donate: Mapping[str, Collection[int]] | None = None,
        final_status: bool = True,
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
                tensor_spec(a.type, a.name_hint or str(i), reference, f"@{name} argument {i}")
                for i, a in enumerate(op.args)
            )
            results = tuple(
                tensor_spec(t, f"result{i}", reference, f"@{name} result {i}")
                for i, t in enumerate(op.function_type.outputs.data)
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
            FunctionCompiler(program, fn, op).compile()
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

    def run(
        self, func_name: str, *args: Any, track_memory: bool = False, profile: bool = False
    ) -> list[np.ndarray[Any, Any]]:
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
            raise AscendError(
                f"{op_location(op)}: out of memory running {op.name} on operands of shapes {shapes}"  # pyright: ignore[reportArgumentType, reportOptionalMemberAccess]  # found[0].op is checked not None above
            ) from None

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
                got = DTYPE_NAMES.get(arr.dtype, str(arr.dtype))
                raise AscendError(
                    f"@{fn.name} argument {i} (%{spec.name}): expected {spec.type_str}, "
                    f"got {got} array of shape {tuple(arr.shape)}"
                )
            arrays.append(arr.astype(F64) if arr.dtype != spec.dtype else arr)
        return arrays

    def trace(
        self, func_name: str, *args: Any
    ) -> tuple[list[np.ndarray[Any, Any]], list[tuple[np.ndarray[Any, Any], ...]]]:
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
        self,
        fn: CompiledFunction,
        args: Sequence[Any],
        track: bool,
        profile: bool,
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
                        too_big(step.op, regs[s], itemsize[s])  # pyright: ignore[reportArgumentType]  # the compiler builds every step with its op
            for slot, check in step.checks:
                if not status.flag and check(regs[slot]):
                    status.flag = True
            if trace is not None:  # copies: a later step may write in place into this array, or one it views
                trace.append(tuple(regs[s].copy() for s in step.outs))
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


def run_function(
    module: ModuleOp, func_name: str, *args: Any, reference: bool = False, **kw: Any
) -> list[np.ndarray[Any, Any]]:
    """Compile `module` and run one function (`kw`: track_memory, profile)."""
    return Program.from_module(module, reference=reference).run(func_name, *args, **kw)
