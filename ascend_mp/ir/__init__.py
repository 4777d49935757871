"""Parsing and printing ascend IR, with source locations for diagnostics.

Every tool parses through :func:`parse_module`, which remembers where each op
came from, so that a pass or the verifier can name `file:line:col` in a one-line
error (:func:`location_of`). Ops created by passes have no source location and
are named by their function and position instead.

The parser lexes string literals in linear time (xDSL 0.74's pattern is exponential
on an unterminated string), reports nesting beyond Python's recursion limit and
bad dense literals at their own line, and :func:`verify` checks SSA dominance
(:func:`check_dominance`) before the op verifiers.

Private xDSL fields are touched only in :mod:`ascend_mp.ir.fast` (each helper tested against the public API it
stands for); workarounds of xDSL 0.74 bugs live in :mod:`ascend_mp.ir.compat`.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue, TypeAttribute
from xdsl.irdl import BaseAttr, IRDLOperation, OptionalDef, RangeLengthConstraint, RangeOf, VariadicDef
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRTokenKind

from ascend_mp import blob_names  # noqa: F401  (records the name each parsed blob was declared as)
from ascend_mp.dialects.ascend import Ascend
from ascend_mp.errors import AscendError
from ascend_mp.ir.compat import LinearLexer, StableResourceHandles
from ascend_mp.ir.fast import blob_entries, current_token, define_values, set_blob_entries, skip_to, use_lexer

_LOCATIONS: weakref.WeakKeyDictionary[Operation, tuple[str, int, int]] = weakref.WeakKeyDictionary()


def make_context() -> Context:
    """A context with the builtin, func and ascend dialects loaded."""
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(Ascend)
    return ctx


class LocatingParser(StableResourceHandles):
    """A parser that records the source position of every op it parses (and lexes in linear time)."""

    line_offset: int = 0

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        use_lexer(self, LinearLexer(Input(text, name)))

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            where = current_token(self).span.get_location()
            raise AscendError(
                f"{where.file}:{where.line + self.line_offset}:{where.col}: nesting too deep "
                f"(ops, regions or attributes nested beyond Python's recursion limit)"
            ) from None

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = self._parse_plain_ascend_op() or super().parse_operation()
        except VerifyException as e:  # a property or type constraint failed while building the op
            self.raise_error(_first_line(e), start, self.pos)
        _LOCATIONS[op] = (self.lexer.input.name, start, self.line_offset)
        if self._inputs.get(self.lexer.input.name) is not self.lexer.input.content:
            self._inputs[self.lexer.input.name] = self.lexer.input.content
            _LINE_STARTS.pop(self.lexer.input.name, None)
        return op

    _inputs: dict[str, str] = {}

    def _parse_plain_ascend_op(self) -> Operation | None:
        """Fast path for the line the printer writes for most ascend ops, read with one regex:
        `%r = ascend.Name %a, %b : (tensor<..>, tensor<..>) -> tensor<..>` (plain tensor types,
        no attributes, defined operands, one result). It builds the same op as the declarative
        format would; anything else (and every error) goes through the general parser."""
        token = current_token(self)
        if token.kind is not MLIRTokenKind.PERCENT_IDENT:
            return None
        found = _PLAIN_OP.match(self.lexer.input.content, token.span.start)
        if found is None:
            return None
        name, op_name, uses, operand_types, result_text = found.groups()
        kinds = self._plain_op_kinds(op_name)
        result_type = _TYPE_CACHE.get(result_text)
        if kinds is None or result_type is None or name in self.ssa_values:
            return None
        use_list = uses.split(", ") if uses else []
        type_list = operand_types.split(", ") if operand_types else []
        if len(use_list) != len(type_list):
            return None
        operands: list[SSAValue] = []
        for use, type_text in zip(use_list, type_list):
            values = self.ssa_values.get(use[1:])
            expected = _TYPE_CACHE.get(type_text)
            if values is None or len(values) != 1 or expected is None or values[0].type != expected:
                return None  # a forward reference, a tuple, a new type, a mismatch: the general parser
            operands.append(values[0])
        groups = _group_operands(kinds[0], operands)
        if groups is None:
            return None
        op = kinds[1].build(operands=groups, result_types=[[result_type]])
        define_values(self, name, op.results, token.span.start, token.span.start + len(name) + 1)
        skip_to(self, found.end())
        return op

    def _plain_op_kinds(self, op_name: str) -> tuple[tuple[str, ...], type[IRDLOperation]] | None:
        """(operand definition kinds, class) of an ascend op the fast path may build, else None."""
        cache: dict[str, Any] = self.__dict__.setdefault("_plain_ops", {})
        if op_name not in cache:
            cache[op_name] = _plain_op_kinds(self.ctx.get_optional_op(op_name))
        return cache[op_name]

    def parse_dense_int_or_fp_elements_attr(self, type: Any) -> Any:
        # xDSL reports a bad dense literal at the token after its type (often the next op's line):
        # report it where the literal starts, and refuse element types the project cannot compute with.
        start = self.pos - len("dense")
        try:
            attr = super().parse_dense_int_or_fp_elements_attr(type)
        except ParseError as e:
            self.raise_error(" ".join(e.msg.split()), start, start + len("dense"))
        element = attr.get_element_type()
        if not isinstance(element, (AnyFloat, IntegerType, IndexType)):
            self.raise_error(
                f"dense literal of element type {element} is not supported "
                f"(expected a float, integer or i1 element type)",
                start,
                start + len("dense"),
            )
        return attr

    def parse_optional_type(self) -> TypeAttribute | None:
        # Fast path: a plain ranked tensor type already seen is taken from a cache and skipped
        # in the source, instead of being lexed token by token and rebuilt (most of parse time).
        token = current_token(self)
        if token.kind is MLIRTokenKind.BARE_IDENT and token.text == "tensor":
            match = _PLAIN_TENSOR.match(self.lexer.input.content, token.span.start)
            if match is not None:
                key = match.group(0)
                cached = _TYPE_CACHE.get(key)
                if cached is None:
                    cached = super().parse_optional_type()
                    if cached is not None:
                        _TYPE_CACHE[key] = cached
                    return cached
                skip_to(self, match.end())
                return cached
        return super().parse_optional_type()


_PLAIN_TENSOR = re.compile(r"tensor<(?:[0-9?]+x)*(?:bf16|f16|f32|f64|i1|i8|i16|i32|i64|ui8|ui16|ui32|ui64)>")
_TYPE_CACHE: dict[str, TypeAttribute] = {}


_NAME = r"[A-Za-z0-9_$.\-]+"
_TENSOR = _PLAIN_TENSOR.pattern
_PLAIN_OP = re.compile(
    rf"%({_NAME}) = (ascend\.[A-Za-z0-9_]+)(?: (%{_NAME}(?:, %{_NAME})*))? : "
    rf"\(((?:{_TENSOR})(?:, {_TENSOR})*)?\) -> ({_TENSOR})(?=[ \t]*(?:\n|//|$))"
)
_TENSOR_OPERAND = RangeOf(BaseAttr(TensorType))


def _plain_op_kinds(cls: type[Operation] | None) -> tuple[tuple[str, ...], type[IRDLOperation]] | None:
    """For an ascend op class printed in the base format whose operands and single result are
    any tensors (so parsing checks nothing more), its operand kinds (`single`, `optional`, `variadic`)."""
    from ascend_mp.dialects.ascend import AscendOp

    if cls is None or not issubclass(cls, AscendOp) or cls.assembly_format != AscendOp.assembly_format:
        return None
    if not getattr(cls.parse, "__qualname__", "").endswith("parse_with_format"):
        return None
    op_def = cls.get_irdl_definition()
    if len(op_def.results) != 1 or op_def.regions or op_def.successors:
        return None
    kinds: list[str] = []
    for _, d in [*op_def.operands, *op_def.results]:
        constr = d.constr.constraint if isinstance(d.constr, RangeLengthConstraint) else d.constr
        if constr != _TENSOR_OPERAND:
            return None
        kinds.append(
            "optional" if isinstance(d, OptionalDef) else "variadic" if isinstance(d, VariadicDef) else "single"
        )
    if kinds[-1] != "single" or sum(k != "single" for k in kinds) > 1:
        return None
    return tuple(kinds[:-1]), cls


def _group_operands(kinds: tuple[str, ...], operands: list[SSAValue]) -> list[list[SSAValue]] | None:
    """Operands per definition (at most one optional or variadic one), None if they do not fit."""
    extra = len(operands) - sum(k == "single" for k in kinds)
    if extra < 0 or (extra and all(k != "variadic" for k in kinds) and (extra > 1 or "optional" not in kinds)):
        return None
    groups: list[list[SSAValue]] = []
    pos = 0
    for k in kinds:
        take = 1 if k == "single" else min(extra, 1) if k == "optional" else extra
        groups.append(operands[pos : pos + take])
        pos += take
    return groups


_LINE_STARTS: dict[str, list[int]] = {}


def _line_col(name: str, pos: int) -> tuple[int, int]:
    starts = _LINE_STARTS.get(name)
    if starts is None:
        content = LocatingParser._inputs.get(name, "")
        starts = _LINE_STARTS[name] = [0] + [i + 1 for i, c in enumerate(content) if c == "\n"]
    line = bisect.bisect_right(starts, pos)
    return line, pos - starts[line - 1] + 1


def source_location(op: Operation) -> str | None:
    """`file:line:col` of an op that was parsed from text, None for one built in Python or by a pass."""
    loc = _LOCATIONS.get(op)
    if loc is None:
        return None
    name, pos, offset = loc
    line, col = _line_col(name, pos)
    return f"{name}:{line + offset}:{col}"


def location_of(op: Operation) -> str:
    """`file:line:col` of a parsed op, else `@func, op #k` for one a pass created."""
    loc = source_location(op)
    if loc is not None:
        return loc
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    if isinstance(parent, func.FuncOp):
        index = next((i for i, o in enumerate(parent.walk()) if o is op), -1)
        return f"@{parent.sym_name.data}, op #{index}"
    return "<unknown location>"


def format_parse_error(e: ParseError, line_offset: int = 0) -> str:
    """A one-line `file:line:col: error: message` for a parse error."""
    loc = e.span.get_location()
    msg = " ".join(e.msg.split())
    if msg.startswith("End of file reached before closing string literal"):
        msg = "unterminated string literal (a string must end on the line where it starts)"
    if not e.span.text.strip():
        msg = f"unexpected end of input ({msg})"
    return f"{loc.file}:{loc.line + line_offset}:{loc.col}: {msg}"


def parse_module(text: str, name: str = "<stdin>", ctx: Context | None = None, line_offset: int = 0) -> ModuleOp:
    """Parse and verify a module; errors are :class:`AscendError` with one line naming file:line:col."""
    try:  # the parser lexes its first token when it is built: that can fail too
        parser = LocatingParser(ctx or make_context(), text, name)
        parser.line_offset = line_offset
        module = parser.parse_module()
    except ParseError as e:
        raise AscendError(format_parse_error(e, line_offset)) from None
    verify(module)
    return module


def read_module(path: str, ctx: Context | None = None) -> ModuleOp:
    """Parse and verify a module file (`-` reads standard input)."""
    from ascend_mp.fileio import check_input_file

    check_input_file(path)
    if path == "-":
        import sys

        name = "<stdin>"
        stream = getattr(sys.stdin, "buffer", None)
        data: bytes | str = stream.read() if stream is not None else sys.stdin.read()
    else:
        name = path
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise AscendError(f"{path}: cannot read file: {e.strerror or e}") from None
    return parse_module(data if isinstance(data, str) else decode_source(data, name), name, ctx)


def decode_source(data: bytes, name: str, line_offset: int = 0) -> str:
    """`data` as UTF-8 text (a leading byte-order mark is dropped, as in every config file); otherwise an
    AscendError naming `name:line:col` of the first bad byte."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1 + line_offset
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        binary = bool(_CONTROL.search(data[:BINARY_SNIFF]))  # text has no such byte: a binary file (ONNX's is 0x08)
        hint = "; a binary file, not MLIR text (an ONNX model: name it .onnx or pass -f onnx)" if binary else ""
        raise AscendError(f"{name}:{line}:{col}: not UTF-8 text (byte 0x{data[e.start]:02x}){hint}") from None


BINARY_SNIFF = 8192
"""How many leading bytes `decode_source` looks at for a control character (a binary file) when the text is not
UTF-8."""
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def first_invalid_op(module: Operation) -> tuple[Operation, VerifyException] | None:
    """The first op, in walk order, whose own verifier fails."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            return op, e
    return None


def _position(block: Block, cache: dict[Block, dict[Operation, int]]) -> dict[Operation, int]:
    found = cache.get(block)
    if found is None:
        found = cache[block] = {op: i for i, op in enumerate(block.ops)}
    return found


def _dominance_problem(value: SSAValue, user: Operation, cache: dict[Block, dict[Operation, int]]) -> str | None:
    """Why `value` may not be used by `user` (None if its definition dominates the use)."""
    if isinstance(value, BlockArgument):
        block: Block | None = user.parent_block()
        while block is not None and block is not value.block:
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        return None if block is not None else "is a block argument of another block"
    if not isinstance(value, OpResult):
        return None
    definer = value.op
    home = definer.parent_block()
    ancestor: Operation | None = user
    while ancestor is not None and ancestor.parent_block() is not home:
        ancestor = ancestor.parent_op()
    if home is None or ancestor is None:
        return "is defined in a region that does not enclose this use"
    if ancestor is definer:
        return "is the result of this op itself" if ancestor is user else "is the result of an enclosing op"
    positions = _position(home, cache)
    if positions[definer] > positions[ancestor]:
        return f"is used before its definition at {location_of(definer)}"
    return None


def check_dominance(module: Operation) -> None:
    """Refuse IR whose functions are not in SSA dominance order (a use before its definition, a
    cycle, an op using its own result); the error names the using op's location. Linear time."""
    cache: dict[Block, dict[Operation, int]] = {}
    for f in module.walk():
        if not isinstance(f, func.FuncOp):
            continue
        for op in f.walk():
            if op is f:
                continue
            for i, operand in enumerate(op.operands):
                problem = _dominance_problem(operand, op, cache)
                if problem is not None:
                    name = f" (%{operand.name_hint})" if operand.name_hint else ""
                    raise AscendError(f"{location_of(op)}: '{op.name}' operand #{i}{name} {problem}")


def verify(module: ModuleOp) -> None:
    """Verify `module`; a failure is an AscendError naming the op's location and the problem."""
    check_dominance(module)
    try:
        module.verify()
    except VerifyException as e:
        found = first_invalid_op(module)
        if found is None:
            raise AscendError(_first_line(e)) from None
        op, err = found
        raise AscendError(f"{error_location(op, err)}: {_first_line(err)}") from None


def error_location(op: Operation, err: Exception) -> str:
    """Where a verifier error of `op` is: the op's location, or for a symbol defined twice (reported by the
    enclosing module) the location of the second definition."""
    found = re.search(r'Redefinition of symbol "([^"]*)"', str(err))
    if found is not None:
        defs = [o for o in op.walk() if o is not op and _symbol_name(o) == found.group(1)]
        if len(defs) > 1:
            return location_of(defs[1])
    return location_of(op)


def _symbol_name(op: Operation) -> str | None:
    from xdsl.dialects.builtin import StringAttr

    name = op.properties.get("sym_name", op.attributes.get("sym_name"))
    return name.data if isinstance(name, StringAttr) else None


def _first_line(e: Exception) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    for line in lines:
        if line.startswith("'") or "op " in line:
            return line
    return lines[0] if lines else type(e).__name__


def write_module(module: Operation, stream: Any, generic: bool = False) -> None:
    """Print `module` into `stream` (anything with `write(str)`), piece by piece: a module with large weights is
    never held as one string."""
    from ascend_mp.blob_names import ModulePrinter  # blobs under the names they were asked for: deterministic text

    printer = ModulePrinter(stream=stream, print_generic_format=generic)
    printer.print_op(module)
    printer.print_metadata([])  # the blobs of dense_resource weights, if any
    stream.write("\n")


def print_module(module: Operation, generic: bool = False) -> str:
    import io

    out = io.StringIO()
    write_module(module, out, generic)
    return out.getvalue()


@contextlib.contextmanager
def isolated_store() -> Iterator[None]:
    """Run a block with an empty resource store, as a new process starts, and restore the store afterwards (for
    running the tools in-process, e.g. in tests: blob handles are process-wide)."""
    from ascend_mp.resources import isolated_cache, storage  # numpy: not loaded by every parse and print

    store = storage()
    saved = blob_entries(store)
    set_blob_entries(store, {})
    try:
        with isolated_cache():
            yield
    finally:
        set_blob_entries(store, saved)


def functions(module: ModuleOp) -> Iterator[func.FuncOp]:
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            yield op
