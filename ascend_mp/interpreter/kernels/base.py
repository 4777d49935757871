"""The kernel registry: :data:`KERNELS` (op type -> :class:`KernelDef`), the :func:`kernel`
decorator the family modules register with, :func:`make_kernel` (a kernel body with its
operand widening and result rounding, see :mod:`ascend_mp.interpreter.kernels`), the in-place
variants (:data:`IN_PLACE`, :func:`make_in_place_kernel`) and the implementation-mode switch
(:func:`impl_mode`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ascend_mp.dialects.ascend import OPS_BY_TYPE, Unit
from ascend_mp.interpreter.numerics import BF16, F16, F32, FLOATS, Array, as_f32, f16_rounding, round_f16
from ascend_mp.interpreter.spec import KernelError, OpSpec

VECTOR, CUBE, DATA, CAST, CONST, STATUS = Unit.VECTOR, Unit.CUBE, Unit.DATA, Unit.CAST, Unit.CONST, Unit.STATUS
"""Kernel units (each op's `UNIT` in the dialect): how :func:`make_kernel` treats dtypes around a kernel body."""

KernelFn = Callable[..., Any]


@dataclass(frozen=True)
class KernelDef:
    """One table entry: a builder and how the result dtypes come about."""

    build: Callable[[OpSpec], KernelFn]
    unit: Unit = Unit.VECTOR
    finite_preserving: bool = False
    """Finite operands give finite results of the same dtype (so the float status
    check can be skipped when every operand was already checked)."""
    keeps_dtype: bool = True
    """The body returns arrays in the compute dtype (else results are always cast)."""
    propagates: tuple[int, ...] = ()
    """Operand positions whose inf/NaN elements always give inf/NaN in a (non-empty)
    result 0 (so a check of that result also sees the operand's overflow)."""
    exact: bool = False
    """Every float result element is an operand element or a constant of the operands'
    dtype (max, select, negate, ...), so it needs no rounding to that dtype."""
    family: str = ""
    """The module of :mod:`ascend_mp.interpreter.kernels` that registered it (``elementwise``, ...)."""


KERNELS: dict[str, KernelDef] = {}
"""CANN op type -> kernel. Every op of the dialect has one (a registry test checks it)."""


def kernel(
    *types: str,
    finite_preserving: bool = False,
    keeps_dtype: bool = True,
    propagates: tuple[int, ...] = (),
    exact: bool = False,
):
    """Register a builder `spec -> function` for op types (their unit is the dialect op's `UNIT`;
    their family the calling module's name)."""
    family = sys._getframe(1).f_globals["__name__"].rpartition(".")[2]

    def register(build: Callable[[OpSpec], KernelFn]) -> Callable[[OpSpec], KernelFn]:
        for t in types:
            assert t not in KERNELS, f"two kernels for {t}"
            KERNELS[t] = KernelDef(
                build, OPS_BY_TYPE[t].UNIT, finite_preserving, keeps_dtype, propagates, exact, family
            )
        return build

    return register


def simple(fn: KernelFn) -> Callable[[OpSpec], KernelFn]:
    """A builder for a body that needs no static facts."""
    return lambda spec: fn


def make_kernel(spec: OpSpec) -> KernelFn:
    """The kernel for `spec`, with its operand widening and result rounding.

    The function takes the operands (in their dtypes, or float16 carried in float32
    with `spec.carry_f16`) and returns one array, or a tuple for ops with several
    results, each exactly in its result dtype (held the same way).
    """
    try:
        kd = KERNELS[spec.type]
    except KeyError:
        raise KernelError(f"no kernel for op type '{spec.type}'") from None
    body = kd.build(spec)
    if kd.unit in (DATA, CAST, CONST, STATUS):
        return body
    cd = spec.compute
    casts = tuple(cd if (cd is not None and d in FLOATS and spec.stored(d) != cd) else None for d in spec.in_dtypes)
    widen = any(c is not None for c in casts)
    # numpy returns scalars, not arrays, for 0-d results of ufuncs and reductions
    scalar = not spec.out_shapes or any(len(s) == 0 for s in spec.out_shapes)
    exact = kd.exact and all(d == F16 for d in spec.in_dtypes if d in FLOATS)
    # a body over operands all in the compute dtype returns it (RealDiv and Pow widen only integers)
    keeps = kd.keeps_dtype or all(spec.stored(d) == cd for d in spec.in_dtypes)
    shapes = spec.out_shapes or ((),) * len(spec.out_dtypes)
    finishers = tuple(_finisher(spec, d, shape, cd, exact, keeps) for d, shape in zip(spec.out_dtypes, shapes))
    stored_outs = tuple(spec.stored(d) for d in spec.out_dtypes)
    in_place = all(f is None for f in finishers) and all(d == cd for d in stored_outs)
    if not widen and not scalar and cd is not None and keeps and in_place:
        return body  # the body's results are already what the op returns
    if len(finishers) == 1:
        (finish,), (out,) = finishers, stored_outs
        if finish is not None and not widen and not scalar and keeps:
            return lambda *xs: finish(body(*xs))  # an array in the compute dtype, rounded
        if finish is None and not widen and keeps and isinstance(body, np.ufunc) and spec.out_shapes == ((),):
            return lambda *xs: body(*xs, out=np.empty((), out))  # a 0-d array (a bare ufunc gives a scalar)

        def one(*xs: Array) -> Array:
            if widen:
                xs = tuple(x if c is None else x.astype(c) for x, c in zip(xs, casts))
            r = np.asarray(body(*xs))
            return r.astype(out, copy=False) if finish is None else finish(r)

        return one

    def many(*xs: Array) -> tuple[Array, ...]:
        if widen:
            xs = tuple(x if c is None else x.astype(c) for x, c in zip(xs, casts))
        return tuple(
            np.asarray(r).astype(d, copy=False) if f is None else f(np.asarray(r))
            for r, d, f in zip(body(*xs), stored_outs, finishers)
        )

    return many


def _finisher(
    spec: OpSpec, dtype: np.dtype[Any], shape: tuple[int, ...], compute: np.dtype[Any] | None, exact: bool, keeps: bool
) -> Callable[[Array], Array] | None:
    """How a result computed in `compute` becomes `dtype`; None: a plain `astype` (a no-op when they agree).

    A carried float16 result of an `exact` kernel on float16 operands needs no rounding (its
    float32 elements are float16 values already); any other is rounded (:func:`~ascend_mp.interpreter.numerics.f16_rounding`)."""
    if not (spec.carry_f16 and dtype == F16):
        return None
    if exact and compute == F32:
        return None if keeps else as_f32
    return f16_rounding(shape) if compute == F32 and keeps else round_f16


def apply(spec: OpSpec, *inputs: Array) -> Any:
    """Build and run one kernel (for tests and one-off use), with fp errors silenced."""
    with np.errstate(all="ignore"):
        return make_kernel(spec)(*inputs)


SETS_STATUS = "sets_status"
"""A kernel function with this attribute set sets the float status register itself when its
result holds inf or NaN (a convolution whose bias epilogue sees every element of its float32
result anyway), so the executor does not check that result again."""


def scalar(x: Array) -> Array:
    """A one-element hyper-parameter tensor as a 0-d array (so it broadcasts against anything)."""
    return x.reshape(())


# --------------------------------------------------------------------------------------
# Implementation modes (`impl_mode`, the ascend-impl-mode pass)
# --------------------------------------------------------------------------------------
# high_precision (no `impl_mode`): the kernels' bodies, fp32 internals. high_performance (and
# super_performance, keep_fp16) on an fp16/bf16 op of DUAL_IMPL_OPS: the `_fast_*` bodies beside them, whose
# every intermediate step (and constant) is rounded to the op's dtype; reductions accumulate in
# fp32 and round their result once. f32 ops and reference runs are unaffected.


def impl_rounding(spec: OpSpec) -> Callable[[Array], Array] | None:
    """How a high_performance op rounds its intermediates (to its dtype), or None: high_precision."""
    from ascend_mp.implmode import DEFAULT_MODE, LOW_INTERNAL_MODES

    # an optional property without a declared default: absent means the dialect's high_precision
    mode = spec.attrs["impl_mode"] if "impl_mode" in spec.attrs else DEFAULT_MODE
    low = spec.out_dtypes[0] if spec.out_dtypes else None
    if mode not in LOW_INTERNAL_MODES or spec.reference or low not in (F16, BF16):
        return None
    return lambda a: np.asarray(a).astype(low).astype(F32)


def impl_mode(
    fast: Callable[[OpSpec, Callable[[Array], Array]], KernelFn], precise: Callable[[OpSpec], KernelFn]
) -> Callable[[OpSpec], KernelFn]:
    """A builder that picks the `fast` body for high_performance ops, else the `precise` one."""

    def build(spec: OpSpec) -> KernelFn:
        rnd = impl_rounding(spec)
        return precise(spec) if rnd is None else fast(spec, rnd)

    return build


# --------------------------------------------------------------------------------------
# In-place variants (buffer reuse, for the executor's memory planning)
# --------------------------------------------------------------------------------------
# CANN's optimizer ops update their state operands in place (their outputs are ref
# outputs); a select of a full-size operand can overwrite it. When the executor finds that
# such an operand dies at the op (and its buffer is the step's own or a donated argument),
# it runs the variant below, which writes the results into those operands' arrays and
# returns them: the same numbers as the functional kernel, bit for bit (the same numpy
# operations in the same order, only with `out=`), and no new buffer.


InPlaceBuilder = Callable[[OpSpec], KernelFn | None]
"""Builds an op's in-place kernel, or returns None where the variant does not apply."""

IN_PLACE: dict[str, tuple[tuple[int, ...], InPlaceBuilder]] = {}
"""Op type -> (for each result, the operand whose buffer it takes; the in-place builder)."""


def in_place(op_type: str, targets: tuple[int, ...]) -> Callable[[InPlaceBuilder], InPlaceBuilder]:
    """Register the in-place builder of an op type: its result i overwrites operand `targets[i]`;
    the builder returns None where the variant does not apply."""

    def register(build: InPlaceBuilder) -> InPlaceBuilder:
        assert op_type not in IN_PLACE, f"two in-place kernels for {op_type}"
        IN_PLACE[op_type] = (targets, build)
        return build

    return register


def _plain(spec: OpSpec) -> bool:
    """Every float operand and result is held in the compute dtype (no widening, no rounding)."""
    cd = spec.compute
    return cd is not None and all(spec.stored(d) == d == cd for d in (*spec.in_dtypes, *spec.out_dtypes) if d in FLOATS)


def make_in_place_kernel(spec: OpSpec) -> tuple[tuple[int, ...], KernelFn] | None:
    """(the operand each result overwrites, the kernel) when `spec` has an in-place variant
    that computes what :func:`make_kernel`'s kernel does (plain dtypes, matching shapes)."""
    entry = IN_PLACE.get(spec.type)
    if entry is None or not _plain(spec) or any(-1 in s or () == s for s in spec.out_shapes):
        return None
    targets, build = entry
    if any(
        spec.in_shapes[j] != spec.out_shapes[i] or spec.in_dtypes[j] != spec.out_dtypes[i]
        for i, j in enumerate(targets)
    ):
        return None
    fn = build(spec)
    return None if fn is None else (targets, fn)
