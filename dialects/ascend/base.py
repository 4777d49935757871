"""The base of every `ascend` op, shape helpers, and the facts stated on an op class.

:class:`AscendOp` carries what every op has (the capability attributes `caps` and `list`,
the node `name`, `keep_dtype`, `impl_mode`), the custom syntax
`operands attr-dict : functional-type(operands, results)`, and the structural verifier
(element types that must agree, float-only values, the arity of `caps`); each op adds its
shape checks in `verify_shapes`.

```mlir
%y = ascend.Relu %x {name = "relu1", keep_dtype} : (tensor<8x32xf32>) -> tensor<8x32xf32>
```
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, NoReturn

from xdsl.dialects.builtin import StringAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, OptionalDef, ParsePropInAttrDict, VariadicDef, opt_prop_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from ascend_mp.dialects.ascend.attrs import FORMATS, PADDINGS, CapsAttr, Kernel, ListKindAttr, Unit, from_attr, to_attr
from ascend_mp.dtypes import dtype_name, is_float

# --------------------------------------------------------------------------------------
# Shape helpers (dimensions < 0 are dynamic and match anything)
# --------------------------------------------------------------------------------------


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The shape of a tensor value."""
    type_ = value.type
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def dims_match(a: Sequence[int], b: Sequence[int]) -> bool:
    """`a` and `b` have one rank and agree where both are static."""
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b))


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy broadcasting of two shapes, or None if they do not broadcast."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1 or x == y or y < 0:
            out.append(x)
        elif x < 0:
            out.append(y)
        else:
            return None
    return tuple(reversed(out))


def norm_axis(op: AscendOp, axis: int, rank: int, what: str) -> int:
    """`axis` in [0, rank) (a negative one counts from the end); fails the op when out of range."""
    if not -rank <= axis < max(rank, 1):
        op.fail(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def spatial_dims(fmt: str) -> tuple[int, int, int]:
    """(channel, height, width) dimension indices of a 4-d tensor in `fmt`."""
    return (1, 2, 3) if fmt == "NCHW" else (3, 1, 2)


# --------------------------------------------------------------------------------------
# The base op
# --------------------------------------------------------------------------------------


class AscendOp(IRDLOperation, ABC):
    """Base of every ascend op: capability attributes, node name, custom syntax."""

    caps = opt_prop_def(CapsAttr)
    list_kind = opt_prop_def(ListKindAttr, prop_name="list")
    node_name = opt_prop_def(StringAttr, prop_name="name")
    keep_dtype = opt_prop_def(UnitAttr, prop_name="keep_dtype")
    """Set by the passes that emit training machinery (the loss, the unscale, the loss-scale
    state, the optimizer update): every precision mode and policy keeps the op in its
    original dtype, as a `keep_dtype` entry would; only `customize_dtypes` overrides it."""
    impl_mode = opt_prop_def(StringAttr, prop_name="impl_mode")
    """The kernel implementation mode (`ascend-impl-mode`: high_performance, ...); absent: high_precision."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    SAME_DTYPE: ClassVar[tuple[str, ...]] = ()
    """Operand/result definitions whose element types must agree (one kernel column)."""
    FLOAT_ONLY: ClassVar[tuple[str, ...]] = ()
    """Operand/result definitions that must be float tensors."""
    SAME_SHAPE: ClassVar[tuple[str, ...]] = ()
    """Operand/result definitions (single values) that must have one shape (dynamic dimensions match any)."""
    CANN_INPUTS: ClassVar[tuple[str, ...] | None] = None
    """CANN input names where they differ from the operand field names."""
    CANN_OUTPUTS: ClassVar[tuple[str, ...] | None] = None
    """CANN output names where they differ from the result field names."""
    UNIT: ClassVar[Unit] = Unit.VECTOR
    """The unit that runs the op (the interpreter's numerics follow it)."""
    VARIABLE_UPDATE: ClassVar[bool] = False
    """The op updates variables (an optimizer: on Ascend its var/slot outputs are ref outputs, as TF's ref and
    resource optimizers, which TF's mixed-precision rewrite never forces to fp16)."""

    @classmethod
    def attr_defaults(cls) -> dict[str, object]:
        """Declared default of every attribute that has one, as Python values (the one place
        defaults are stated: parsing and construction fill them in, the interpreter reads them)."""
        return {
            name: from_attr(d.default_value)
            for name, d in cls.get_irdl_definition().properties.items()
            if d.default_value is not None
        }

    def __init__(
        self,
        *operands: SSAValue | Operation | Sequence[SSAValue | Operation] | None,
        result_types: Sequence[Attribute | Sequence[Attribute]],
        **props: object,
    ):
        super().__init__(
            operands=list(operands),
            result_types=list(result_types),
            properties={k: (None if v is None else to_attr(v)) for k, v in props.items()},
        )

    # -- helpers ------------------------------------------------------------------
    def fail(self, message: str) -> NoReturn:
        raise VerifyException(f"'{self.name}' op {message}")

    def _named_values(self) -> dict[str, list[SSAValue]]:
        layout = _layout(type(self))
        if layout.fixed:  # one value per operand definition (most ops): no grouping needed
            named = {name: [v] for name, v in zip(layout.operands, self.operands)}
        else:
            named = dict(zip(layout.operands, _operand_groups(self)))
        for name, result in zip(layout.results, self.results):
            named[name] = [result]
        return named

    # -- verification ---------------------------------------------------------------
    def verify_(self) -> None:
        if self.SAME_DTYPE or self.FLOAT_ONLY:
            self._verify_dtypes(self._named_values())
        for prop, allowed in (("data_format", FORMATS), ("padding", PADDINGS)):
            attr = self.properties.get(prop)
            if isinstance(attr, StringAttr) and attr.data not in allowed:
                self.fail(f"{prop} must be one of {', '.join(allowed)}, got '{attr.data}'")
        if self.caps is not None:
            self.verify_caps_arity(self.caps.data)
        if self.SAME_SHAPE:
            self._verify_same_shape()
        self.verify_shapes()

    def _verify_dtypes(self, named: dict[str, list[SSAValue]]) -> None:
        """SAME_DTYPE's values share one element type; FLOAT_ONLY's are float tensors."""
        same = [v.type.element_type for n in self.SAME_DTYPE for v in named.get(n, [])]  # pyright: ignore[reportAttributeAccessIssue]  # ascend ops' operands are tensors (their verified constraints); Attribute has no element_type
        if same and any(t != same[0] for t in same):
            dtypes = _group_dtypes(self.SAME_DTYPE, named)
            if len(set(dtypes.values())) > 1:
                listed = ", ".join(f"{n}: {d}" for n, d in dtypes.items())
                self.fail(f"expects {', '.join(self.SAME_DTYPE)} to have the same element type, got {listed}")
        if self.FLOAT_ONLY:
            bad = [n for n, d in _group_dtypes(self.FLOAT_ONLY, named).items() if not is_float(d)]
            if bad:
                self.fail(f"expects float tensors for {', '.join(bad)}")

    def _verify_same_shape(self) -> None:
        named = self._named_values()
        shapes = [shape_of(named[n][0]) for n in self.SAME_SHAPE]
        if not all(dims_match(shapes[0], s) for s in shapes[1:]):
            *first, last = self.SAME_SHAPE
            self.fail(f"expects {', '.join(first)} and {last} of one shape")

    def verify_caps_arity(self, kernels: Sequence[Kernel]) -> None:
        """Each kernel lists one dtype per operand definition (or per present one) and one per result."""
        op_def = self.get_irdl_definition()
        defs = len(op_def.operands)
        present = sum(1 for g in _operand_groups(self) if g)
        names = ", ".join(n for n, _ in op_def.operands) or "none"
        for k in kernels:
            if len(k.inputs) not in (defs, present):
                self.fail(
                    f"caps kernel '{k}' has {len(k.inputs)} input dtypes, expected {defs} (one per operand definition: {names})"
                )
            if len(k.outputs) != len(self.results):
                self.fail(f"caps kernel '{k}' has {len(k.outputs)} output dtypes, expected {len(self.results)}")

    def verify_shapes(self) -> None:
        """Op-specific shape checks."""


def _group_dtypes(group: Sequence[str], named: Mapping[str, list[SSAValue]]) -> dict[str, str | None]:
    """The dtype of each value of `group`'s definitions (a variadic one's values as `name#i`)."""
    return {
        (n if len(named.get(n, [])) == 1 else f"{n}#{i}"): dtype_name(v.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]  # ascend ops' operands are tensors (their verified constraints); Attribute has no element_type
        for n in group
        for i, v in enumerate(named.get(n, []))
    }


@dataclass(frozen=True)
class _Layout:
    """Per op class facts the verifier needs for every op (derived once from the IRDL definition)."""

    operands: tuple[str, ...]
    results: tuple[str, ...]
    fixed: bool
    """No optional or variadic operand definition: operand i is definition i."""


_LAYOUTS: dict[type[Operation], _Layout] = {}


def _layout(cls: type[IRDLOperation]) -> _Layout:
    found = _LAYOUTS.get(cls)
    if found is None:
        op_def = cls.get_irdl_definition()
        found = _LAYOUTS[cls] = _Layout(
            tuple(n for n, _ in op_def.operands),
            tuple(n for n, _ in op_def.results),
            not any(isinstance(d, VariadicDef) for _, d in op_def.operands),
        )
    return found


def _operand_groups(op: IRDLOperation) -> list[list[SSAValue]]:
    """Operands grouped per operand definition (an absent optional one is an empty group).

    Ascend ops have at most one optional or variadic operand, so the split is unambiguous.
    """
    if _layout(type(op)).fixed:
        return [[v] for v in op.operands]
    defs = [d for _, d in op.get_irdl_definition().operands]
    extra = len(op.operands) - sum(1 for d in defs if not isinstance(d, VariadicDef))
    groups: list[list[SSAValue]] = []
    pos = 0
    for d in defs:
        take = 1 if not isinstance(d, VariadicDef) else (min(extra, 1) if isinstance(d, OptionalDef) else extra)
        groups.append(list(op.operands[pos : pos + take]))
        pos += take
    return groups


def operand_groups(op: Operation) -> list[list[SSAValue]]:
    """Public form of the per-definition operand grouping, for passes and the interpreter."""
    assert isinstance(op, IRDLOperation)
    return _operand_groups(op)


# --------------------------------------------------------------------------------------
# Facts of an op class
# --------------------------------------------------------------------------------------


def check_op_facts(cls: type[AscendOp]) -> None:
    """Raise TypeError if an op's stated facts name things the op does not have (run at import,
    so a misspelt SAME_DTYPE entry cannot silently disable a check)."""
    op_def = cls.get_irdl_definition()
    fields = [n for n, _ in op_def.operands] + [n for n, _ in op_def.results]
    for fact in ("SAME_DTYPE", "FLOAT_ONLY", "SAME_SHAPE"):
        unknown = [n for n in getattr(cls, fact) if n not in fields]
        if unknown:
            raise TypeError(
                f"{cls.name}: {fact} names {unknown}, which are not operands or results ({', '.join(fields)})"
            )
    if cls.CANN_INPUTS is not None and len(cls.CANN_INPUTS) != len(op_def.operands):
        raise TypeError(f"{cls.name}: CANN_INPUTS has {len(cls.CANN_INPUTS)} names for {len(op_def.operands)} operands")
    if cls.CANN_OUTPUTS is not None and len(cls.CANN_OUTPUTS) != len(op_def.results):
        raise TypeError(f"{cls.name}: CANN_OUTPUTS has {len(cls.CANN_OUTPUTS)} names for {len(op_def.results)} results")
    if not isinstance(cls.UNIT, Unit):
        raise TypeError(f"{cls.name}: UNIT {cls.UNIT!r} is not an ascend.Unit")
    cls.attr_defaults()  # every declared default has a Python value


def op_type(op: Operation) -> str:
    """The CANN op type of an ascend op (`ascend.MatMulV2` -> `MatMulV2`)."""
    return op.name.removeprefix("ascend.")


def cann_inputs(cls: type[AscendOp]) -> tuple[str, ...]:
    """CANN input names of an op class: its operand definition names unless stated."""
    if cls.CANN_INPUTS is not None:
        return cls.CANN_INPUTS
    return tuple(name for name, _ in cls.get_irdl_definition().operands)


def cann_outputs(cls: type[AscendOp]) -> tuple[str, ...]:
    """CANN output names of an op class."""
    if cls.CANN_OUTPUTS is not None:
        return cls.CANN_OUTPUTS
    return tuple(name for name, _ in cls.get_irdl_definition().results)
