"""Numpy kernels for every op of the `ascend` dialect, and the numerics model they follow.

:data:`KERNELS` maps each CANN op type to a :class:`KernelDef`: a *builder* that
receives the op's static facts (:class:`OpSpec`: attributes as Python values,
operand and result dtypes and shapes) once, at compile time, and returns a plain
function over numpy arrays. :func:`make_kernel` adds the dtype handling, so a
kernel body only states the math.

The registry is :mod:`.base`; each op's kernel lives in the module of its family (the
dialect's families): :mod:`.cube`, :mod:`.elementwise`, :mod:`.reduce`, :mod:`.shape`,
:mod:`.cast`, :mod:`.grad`, :mod:`.optim`. Importing this package registers them all, in
that order. The rounding steps are :mod:`ascend_mp.interpreter.numerics`, the numba kernels
:mod:`ascend_mp.interpreter.compiled`, the window geometry :mod:`ascend_mp.interpreter.geometry`.

Numerics (what :func:`make_kernel` does around a kernel body):

* **Vector ops** (elementwise, reductions, normalisation, softmax, pooling,
  gradients, optimizers): float16/bfloat16 operands are widened to float32, the
  body runs in float32, and each result is rounded once to its result dtype
  (round to nearest even; fp16 overflow gives inf). This models Ascend's vector
  unit, which computes fp16 with fp32 internals closely enough for precision
  studies; an f32 op runs in f32 and is not rounded again. Nothing is computed in
  Python floats.
* **Cube ops** (MatMul, MatMulV2, BatchMatMul, Conv2D, DepthwiseConv2D,
  Conv2DBackpropInput/Filter): operands arrive in their dtype (already rounded),
  are copied to float32, multiplied and accumulated in float32 (numpy's matmul on
  the float32 copies) and the result is rounded to the kernel's output dtype
  (f16 or f32), as the Cube unit accumulates in its fp32 L0C buffer.
* **Data movement** (Reshape, Transpose, ConcatV2D) and **Select** are exact and
  run in the operands' dtype; **Cast** rounds to nearest even (float to int
  truncates). Greater compares float16/bfloat16 operands widened to float32
  (exactly), like any vector op.
* **float16 carried in float32** (``OpSpec.carry_f16``, what the executor uses):
  numpy converts float16 element by element in software, so float16 tensors are
  held as float32 arrays of float16 values. Widening them is then free, and the
  one rounding step of a float16 result is :func:`~ascend_mp.interpreter.numerics.round_f16` (bit for bit
  numpy's conversion, in about half the time); a result of an ``exact`` kernel
  (Relu, ReluGrad, Maximum, Neg, MaxPool, ...) is already a float16 value and is
  not rounded again. Without it float16 tensors are numpy float16 arrays, widened
  for every op; both give the same bits (tests run both).
* **Reference mode** (``OpSpec.reference``): every float tensor is float64 and
  every op computes in float64, the "same graph in float64" baseline.
* **Compiled float32 kernels** (numba, :func:`~ascend_mp.interpreter.compiled.compiled`): a float32 Relu and the
  convolutions' bias epilogue on tensors of 2048 elements or more run as loops
  numba compiles, with numpy's bits, in one pass; the epilogue also counts the
  inf/NaN results, so the executor does not check them again (:data:`SETS_STATUS`).
* The float status ops model Ascend's overflow register (:class:`FloatStatus`):
  the executor sets it when an AI Core kernel (every op but Const and the status
  ops) writes inf or NaN into a float result; NPUGetFloatStatus returns a
  tensor<8xf32> whose element 0 is 1.0 when it is set (all zeros otherwise), and
  NPUClearFloatStatus clears it. NPUAllocFloatStatus returns zeros and leaves the
  flag alone.

Callers must run kernels under ``np.errstate(all="ignore")`` (the executor does):
overflow and invalid operations produce inf/NaN, never warnings or exceptions.
Layouts follow the dialect (see :mod:`ascend_mp.interpreter.spec`).
"""

from __future__ import annotations

import importlib

from ascend_mp.interpreter.kernels.base import (
    CAST,
    CONST,
    CUBE,
    DATA,
    IN_PLACE,
    KERNELS,
    SETS_STATUS,
    STATUS,
    VECTOR,
    KernelDef,
    KernelFn,
    apply,
    in_place,
    kernel,
    make_in_place_kernel,
    make_kernel,
    simple,
)
from ascend_mp.interpreter.spec import FloatStatus, KernelError, OpSpec, declared_defaults

FAMILIES = ("cube", "elementwise", "reduce", "shape", "cast", "grad", "optim")
"""The modules of the op families (the dialect's), in the order they register their kernels."""

for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")

__all__ = [
    "CAST",
    "CONST",
    "CUBE",
    "DATA",
    "FAMILIES",
    "IN_PLACE",
    "KERNELS",
    "SETS_STATUS",
    "STATUS",
    "VECTOR",
    "FloatStatus",
    "KernelDef",
    "KernelError",
    "KernelFn",
    "OpSpec",
    "apply",
    "declared_defaults",
    "in_place",
    "kernel",
    "make_in_place_kernel",
    "make_kernel",
    "simple",
]
