"""Kernel choice: an op's original signature, the kernels that fit it, and the best of them for a step.

`OpClass` holds what the pass needs of an op's class (its operand definitions, its verifier's dtype constraints,
whether it runs on the Cube unit), computed once per class. `Candidates` holds the kernels of one kernel set that
can run one original signature, and answers "which kernel computes in dtype D on engine E, changing the fewest of
the op's dtypes" (`best`), memoised per question. Both are facts of the op library, not of a configuration: they are
built once per process (`op_class`, `candidates`), so the passes of one process (ascend-tune's evaluations,
ascend-eval's modes, a pipeline run twice) share them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple

from xdsl.ir import Operation
from xdsl.irdl import OptionalDef, VariadicDef
from xdsl.traits import ConstantLike

from ascend_mp.dialects.ascend import AscendOp, CastOp, Kernel, Unit
from ascend_mp.dtypes import PRECISION_RANK
from ascend_mp.errors import AscendError
from ascend_mp.passes.precision.lattice import FLOAT_NAMES, rank
from ascend_mp.policies import Step


class Signature(NamedTuple):
    """An op's dtypes: one per operand definition (None: absent optional operand), one per result."""

    inputs: tuple[str | None, ...]
    outputs: tuple[str | None, ...]


def primary(inputs: Sequence[str | None], outputs: Sequence[str | None]) -> str | None:
    """The dtype an op computes in: its first float operand's, else its first float result's."""
    for d in inputs:
        if d in PRECISION_RANK:
            return d
    for d in outputs:
        if d in PRECISION_RANK:
            return d
    return None


class Choice(NamedTuple):
    kernel: Kernel | None
    reason: str
    warning: str | None


class Candidates:
    """The kernels of one kernel set that fit one original signature, with memoised choices."""

    def __init__(self, kernels: Sequence[Kernel], sig: Signature, cls: OpClass):
        self.sig = sig
        self.all = tuple(kernels)
        """Every kernel of the op (for messages)."""
        # A kernel can run the op when it has the op's arity and non-float dtypes, is float where the op is, and
        # keeps the op verifying: float in its FLOAT_ONLY slots, one dtype across its SAME_DTYPE slots (a hand-written
        # caps may break these). Checked on each kernel's dtypes (inputs, then outputs) at positions read in one call.
        present = sig.inputs + sig.outputs
        n_in, n_out = len(sig.inputs), len(sig.outputs)
        fixed: list[int] = []
        floats: list[int] = []
        for i, d in enumerate(present):
            if d is not None:
                (floats if d in PRECISION_RANK else fixed).append(i)
        first = floats[0] if floats else None
        self.primary = None if first is None else present[first]  # `primary(sig.inputs, sig.outputs)`
        float_inputs = [i for i in floats if i < n_in]
        for i in cls.floats:
            if present[i] is not None and i not in floats:
                floats.append(i)
        same = [i for i in cls.same if present[i] is not None]
        get_fixed = itemgetter(*fixed, 0, 0)  # pads: always a tuple (of 3 or more)
        get_floats = itemgetter(*floats, 0, 0) if floats else None
        get_same = itemgetter(*same) if len(same) > 1 else None
        want = get_fixed(present)[:-2]
        float_ok = FLOAT_NAMES.issuperset
        fits: list[Kernel] = []
        primaries: list[str | None] = []
        for k in kernels:
            dts = k.inputs + k.outputs
            if len(k.inputs) != n_in or len(k.outputs) != n_out or get_fixed(dts)[:-2] != want:
                continue
            if get_floats is not None and not float_ok(get_floats(dts)[:-2]):
                continue
            if get_same is not None and len(set(get_same(dts))) > 1:
                continue
            fits.append(k)
            primaries.append(None if first is None else dts[first])  # `_primary` of its present dtypes
        self.kernels = fits
        """The kernels that can run this op: same non-float dtypes, and the op still verifies."""
        self.primaries = primaries
        self._float_inputs = float_inputs
        self._varying: tuple[int, ...] | None = None
        self._best: dict[tuple[str, str, bool, str | None], Kernel | None] = {}

    @property
    def varying(self) -> tuple[int, ...]:
        """Operand definitions whose dtype differs between the kernels: the ones producers vote on (gray ops ask)."""
        if self._varying is None:
            if len(self.kernels) > 1 and self._float_inputs:
                columns = list(zip(*[k.inputs for k in self.kernels]))
                self._varying = tuple([i for i in self._float_inputs if len(set(columns[i])) > 1])
            else:
                self._varying = ()
        return self._varying

    def best(self, dtype: str, engine: str, precise_out: bool = False, out: str | None = None) -> Kernel | None:
        """The kernel computing in `dtype` on `engine` that changes the fewest of the op's dtypes
        (with `out`: only kernels whose float results are all `out`)."""
        key = (dtype, engine, precise_out, out)
        if key in self._best:
            return self._best[key]
        sig_outputs = self.sig.outputs
        matches = [
            k
            for k, p in zip(self.kernels, self.primaries)
            if p == dtype
            and k.engine == engine
            and (out is None or all([kd == out for kd, sd in zip(k.outputs, sig_outputs) if sd in PRECISION_RANK]))
        ]
        found: Kernel | None = matches[0] if matches else None
        if len(matches) > 1:  # the first of the best rank
            best_key: tuple[int, int] | None = None
            for k in matches:
                outs = -sum(rank(d) for d in k.outputs) if precise_out else 0
                order = (outs, self.distance(k, dtype))
                if best_key is None or order < best_key:
                    found, best_key = k, order
        self._best[key] = found
        return found

    def distance(self, k: Kernel, dtype: str) -> int:
        """How many dtypes of the op `k` changes, beyond moving its compute dtype to `dtype`."""
        n = 0
        p = self.primary
        for kd, sd in zip(k.inputs, self.sig.inputs):
            if sd is not None:
                n += kd != (dtype if sd == p else sd)
        for kd, sd in zip(k.outputs, self.sig.outputs):
            n += kd != (dtype if sd == p else sd)
        return n

    def run(self, steps: Iterable[Step]) -> Choice | None:
        for step in steps:
            kernel = self.best(step.dtype, step.engine, step.precise_out, step.out)
            if kernel is not None:
                return Choice(kernel, step.reason, step.reason if step.warn else None)
        return None

    def find(self, inputs: Sequence[str], outputs: Sequence[str]) -> Kernel | None:
        """The kernel with exactly these dtypes (inputs per operand definition, or per present one)."""
        for k in self.kernels:
            if tuple(outputs) != k.outputs:
                continue
            if tuple(inputs) == k.inputs or tuple(inputs) == present_inputs(k.inputs, self.sig.inputs):
                return k
        return None


_FITS: dict[tuple[int, OpClass, Signature], tuple[tuple[Kernel, ...], Candidates]] = {}
"""(kernel set's id, op class, signature) -> (the kernel set, kept alive so its id stays its own; its Candidates)."""
_FITS_LIMIT = 65536
"""Entries `_FITS` holds at most (a process deciding many distinct hand-written `caps` starts it over)."""


def candidates(kernels: tuple[Kernel, ...], sig: Signature, cls: OpClass) -> Candidates:
    """The Candidates of a kernel set for an op class and signature, built once per process."""
    key = (id(kernels), cls, sig)
    hit = _FITS.get(key)
    if hit is None:
        if len(_FITS) >= _FITS_LIMIT:
            _FITS.clear()
        hit = _FITS[key] = (kernels, Candidates(kernels, sig, cls))
    return hit[1]


def present_inputs(kernel_inputs: Sequence[str], sig_inputs: Sequence[str | None]) -> tuple[str, ...]:
    return tuple(k for k, s in zip(kernel_inputs, sig_inputs) if s is not None)


def fmt_kernels(kernels: Sequence[Kernel]) -> str:
    return ", ".join(str(k) for k in kernels) if kernels else "none"


def fmt_sig(inputs: Sequence[str | None], outputs: Sequence[str | None]) -> str:
    ins = ", ".join(d or "-" for d in inputs)
    outs = ", ".join(d or "-" for d in outputs)
    return f"({ins}) -> {outs if len(outputs) == 1 else f'({outs})'}"


@dataclass(frozen=True, eq=False)
class OpClass:
    """Per-op-class facts, computed once."""

    op_type: str
    regular: bool
    """Every operand definition is a single operand (no optional / variadic ones)."""
    fixed: str | None
    """Why ops of this class are never changed (user casts, constants), else None."""
    variadic: int
    """Index of the optional or variadic operand definition (ascend ops have at most one), else -1."""
    optional: bool
    defs: int
    same: tuple[int, ...]
    """Slots (operand definitions, then results) the verifier wants of one dtype."""
    floats: tuple[int, ...]
    """Slots the verifier wants to be float."""
    cube: bool
    """Whether the op runs on the Cube unit (`OpFacts.cube`)."""

    def spans(self, n: int) -> list[range]:
        """The operand positions of each operand definition of an op with `n` operands."""
        if self.regular:
            return [range(i, i + 1) for i in range(n)]
        v = self.variadic
        take = n - (self.defs - 1)
        if self.optional:
            take = min(take, 1)
        return (
            [range(i, i + 1) for i in range(v)] + [range(v, v + take)] + [range(i, i + 1) for i in range(v + take, n)]
        )


_CLASSES: dict[type[Operation], OpClass] = {}


def op_class(op: AscendOp) -> OpClass:
    cls = type(op)
    info = _CLASSES.get(cls)
    if info is None:
        defs = [d for _, d in op.get_irdl_definition().operands]
        odd = [i for i, d in enumerate(defs) if isinstance(d, VariadicDef)]
        fixed = "user cast" if isinstance(op, CastOp) else "constant" if op.has_trait(ConstantLike) else None
        if len(odd) > 1:
            raise AscendError(f"{op.name}: more than one optional or variadic operand is not supported")
        variadic = odd[0] if odd else -1
        optional = bool(odd) and isinstance(defs[variadic], OptionalDef)
        irdl = op.get_irdl_definition()
        slots = [n for n, _ in irdl.operands] + [n for n, _ in irdl.results]
        same = tuple(i for i, n in enumerate(slots) if n in op.SAME_DTYPE)
        floats = tuple(i for i, n in enumerate(slots) if n in op.FLOAT_ONLY)
        info = OpClass(
            op.name.removeprefix("ascend."),
            not odd,
            fixed,
            variadic,
            optional,
            len(defs),
            same,
            floats,
            type(op).UNIT == Unit.CUBE,
        )
        _CLASSES[cls] = info
    return info
