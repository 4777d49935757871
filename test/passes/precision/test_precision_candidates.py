"""The precision pass's candidate sets (`_Candidates`: which kernels can run an op of a given signature, the
dtype each computes in, the operands producers vote on, the best kernel per step) against the rules written
out directly: docs/design.md §3 and §5 (a kernel is one column of dtypes; integer and bool tensors are never touched, so a
kernel must share the op's non-float dtypes; the op must still verify: FLOAT_ONLY slots float, SAME_DTYPE slots
of one dtype). Every op type of the built-in library, with signatures made from its own kernels and mutated
(floats swapped, non-floats changed, optional operands absent), and hand-written kernels that break the
verifier's rules."""

from __future__ import annotations

import itertools
import random

import pytest

from ascend_mp.dialects.ascend import OPS_BY_TYPE, Kernel
from ascend_mp.dtypes import PRECISION_RANK
from ascend_mp.opinfo import builtin_library
from ascend_mp.passes.precision.kernels import Candidates as _Candidates
from ascend_mp.passes.precision.kernels import Signature
from ascend_mp.passes.precision.kernels import op_class as _op_class

FLOATS = ("f16", "bf16", "f32")


def _float(d: str | None) -> bool:
    return d in PRECISION_RANK


def _reference_fits(k: Kernel, sig: Signature) -> bool:
    if len(k.inputs) != len(sig.inputs) or len(k.outputs) != len(sig.outputs):
        return False
    for kd, sd in zip(k.inputs + k.outputs, sig.inputs + sig.outputs):
        if sd is None:  # an absent optional operand: any dtype
            continue
        if _float(sd) != _float(kd) or (not _float(sd) and kd != sd):
            return False
    return True


def _reference_verifies(same: tuple[int, ...], floats: tuple[int, ...], k: Kernel, sig: Signature) -> bool:
    dts, present = k.inputs + k.outputs, sig.inputs + sig.outputs
    if len({dts[i] for i in same if present[i] is not None}) > 1:
        return False
    return all(_float(dts[i]) for i in floats if present[i] is not None)


def _reference_primary(dtypes: tuple[str | None, ...]) -> str | None:
    return next((d for d in dtypes if _float(d)), None)


def _signatures(kernels: tuple[Kernel, ...], rng: random.Random) -> list[Signature]:
    sigs: set[Signature] = set()
    for k in kernels:
        sigs.add(Signature(k.inputs, k.outputs))
        for _ in range(3):  # floats swapped, one non-float changed, one operand absent
            ins = tuple(rng.choice(FLOATS) if _float(d) else d for d in k.inputs)
            outs = tuple(rng.choice(FLOATS) if _float(d) else d for d in k.outputs)
            sigs.add(Signature(ins, outs))
            if ins:
                i = rng.randrange(len(ins))
                changed = ins[:i] + (rng.choice(["i32", "i64", "i1", "f32"]),) + ins[i + 1 :]
                sigs.add(Signature(changed, outs))
                sigs.add(Signature(ins[:i] + (None,) + ins[i + 1 :], outs))
    return sorted(sigs, key=repr)


def _check(kernels: tuple[Kernel, ...], sig: Signature, op_type: str) -> None:
    cls = _op_class(OPS_BY_TYPE[op_type].create())
    cands = _Candidates(kernels, sig, cls)
    want = [k for k in kernels if _reference_fits(k, sig) and _reference_verifies(cls.same, cls.floats, k, sig)]
    assert cands.kernels == want, (op_type, sig)
    assert cands.primary == _reference_primary(sig.inputs + sig.outputs)
    present = [i for i, d in enumerate(sig.inputs) if d is not None]
    for k, p in zip(cands.kernels, cands.primaries):
        assert p == _reference_primary(tuple(k.inputs[i] for i in present) + k.outputs)
    varying = tuple(i for i, d in enumerate(sig.inputs) if _float(d) and len({k.inputs[i] for k in want}) > 1)
    assert cands.varying == varying
    for dtype, engine in itertools.product(FLOATS, ("aicore", "aicpu")):  # the first kernel changing fewest dtypes
        computing = [k for k, p in zip(cands.kernels, cands.primaries) if p == dtype and k.engine == engine]
        best = cands.best(dtype, engine)
        if not computing:
            assert best is None
            continue

        def changes(k: Kernel) -> int:
            return sum(
                kd != (dtype if sd == cands.primary else sd)
                for kd, sd in zip(k.inputs + k.outputs, sig.inputs + sig.outputs)
                if sd is not None
            )

        assert best is min(computing, key=changes)


@pytest.mark.parametrize("op_type", sorted(t for t in builtin_library().ops if t in OPS_BY_TYPE))
def test_candidates_of_every_builtin_op(op_type: str) -> None:
    kernels = builtin_library().info(op_type).kernels
    for sig in _signatures(kernels, random.Random(op_type)):
        _check(kernels, sig, op_type)


@pytest.mark.parametrize(
    ("op_type", "kernels"),
    [
        ("Add", (Kernel(("f16", "f32"), ("f16",)), Kernel(("f32", "f32"), ("f32",)), Kernel(("i32", "i32"), ("i32",)))),
        (
            "MatMulV2",
            (
                Kernel(("f16", "f16", "f16"), ("f32",)),
                Kernel(("f16", "f16", "f32"), ("f32",)),
                Kernel(("f32", "f32", "f32"), ("f32",), "aicpu"),
                Kernel(("f16", "f16"), ("f16",)),
            ),
        ),
        ("Relu", (Kernel(("f16",), ("f32",)), Kernel(("i8",), ("i8",)), Kernel(("bf16",), ("bf16",)))),
    ],
)
def test_hand_written_kernels_that_break_the_verifier(op_type: str, kernels: tuple[Kernel, ...]) -> None:
    for sig in _signatures(kernels, random.Random(0)):
        _check(kernels, sig, op_type)
