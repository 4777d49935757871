"""Parsing and printing ascend IR, with source locations for diagnostics.

Every tool parses through :func:`parse_module`, which remembers where each op
came from, so that a pass or the verifier can name `file:line:col` in a one-line
error (:func:`location_of`). Ops created by passes have no source location and
are named by their function and position instead.
"""

from __future__ import annotations

import bisect
import re
import weakref
from collections.abc import Iterator
from pathlib import Path

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, TypeAttribute
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.utils.exceptions import ParseError, VerifyException

from ascend_mp.dialects.ascend import Ascend
from ascend_mp.errors import AscendError

_LOCATIONS: weakref.WeakKeyDictionary[Operation, tuple[str, int, int]] = weakref.WeakKeyDictionary()


def make_context() -> Context:
    """A context with the builtin, func and ascend dialects loaded."""
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(func.Func)
    ctx.load_dialect(Ascend)
    return ctx


class LocatingParser(Parser):
    """A parser that records the source position of every op it parses."""

    line_offset: int = 0

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except VerifyException as e:  # a property or type constraint failed while building the op
            self.raise_error(_first_line(e), start, self.pos)
        _LOCATIONS[op] = (self.lexer.input.name, start, self.line_offset)
        if self._inputs.get(self.lexer.input.name) is not self.lexer.input.content:
            self._inputs[self.lexer.input.name] = self.lexer.input.content  # pyright: ignore[reportArgumentType]
            _LINE_STARTS.pop(self.lexer.input.name, None)
        return op

    _inputs: dict[str, str] = {}

    def _parse_dialect_resource_handle(self, dialect_name: str, interface: OpAsmDialectInterface) -> str:
        # Resource blobs (dense_resource weights) live in a process-wide store. xDSL 0.74 renames a
        # handle the store already has (`w` -> `w_0`) but then files only the new name, so the
        # file's own blob for `w` lands under a third name and `w_0` stays empty. Map each handle
        # of this file to one store key instead (see ascend_mp/resources.py).
        key = self.parse_identifier(" for resource handle")
        keys: dict[tuple[str, str], str] = self.__dict__.setdefault("_resource_keys", {})
        if (dialect_name, key) not in keys:
            keys[(dialect_name, key)] = interface.declare_resource(key)
            self.dialect_resources.add((dialect_name, keys[(dialect_name, key)]))
        return keys[(dialect_name, key)]

    def parse_optional_type(self) -> TypeAttribute | None:
        # Fast path: a plain ranked tensor type already seen is taken from a cache and skipped
        # in the source, instead of being lexed token by token and rebuilt (most of parse time).
        state = self._parser_state
        token = state.current_token
        if token.kind is MLIRTokenKind.BARE_IDENT and token.text == "tensor":
            match = _PLAIN_TENSOR.match(state.lexer.input.content, token.span.start)  # pyright: ignore[reportCallIssue, reportArgumentType]
            if match is not None:
                key = match.group(0)
                cached = _TYPE_CACHE.get(key)
                if cached is None:
                    cached = super().parse_optional_type()
                    if cached is not None:
                        _TYPE_CACHE[key] = cached
                    return cached
                state.lexer.pos = match.end()
                state.current_token = state.lexer.lex()
                return cached
        return super().parse_optional_type()


_PLAIN_TENSOR = re.compile(r"tensor<(?:[0-9?]+x)*(?:bf16|f16|f32|f64|i1|i8|i16|i32|i64|ui8|ui16|ui32|ui64)>")
_TYPE_CACHE: dict[str, TypeAttribute] = {}


_LINE_STARTS: dict[str, list[int]] = {}


def _line_col(name: str, pos: int) -> tuple[int, int]:
    starts = _LINE_STARTS.get(name)
    if starts is None:
        content = LocatingParser._inputs.get(name, "")  # pyright: ignore[reportPrivateUsage]
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
    """`data` as UTF-8 text; otherwise an AscendError naming `name:line:col` of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1 + line_offset
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise AscendError(f"{name}:{line}:{col}: not UTF-8 text (byte 0x{data[e.start]:02x})") from None


def first_invalid_op(module: Operation) -> tuple[Operation, VerifyException] | None:
    """The first op, in walk order, whose own verifier fails."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            return op, e
    return None


def verify(module: ModuleOp) -> None:
    """Verify `module`; a failure is an AscendError naming the op's location and the problem."""
    try:
        module.verify()
    except VerifyException as e:
        found = first_invalid_op(module)
        if found is None:
            raise AscendError(_first_line(e)) from None
        op, err = found
        raise AscendError(f"{location_of(op)}: {_first_line(err)}") from None


def _first_line(e: Exception) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    for line in lines:
        if line.startswith("'") or "op " in line:
            return line
    return lines[0] if lines else type(e).__name__


def print_module(module: Operation, generic: bool = False) -> str:
    import io

    out = io.StringIO()
    printer = Printer(stream=out, print_generic_format=generic)
    printer.print_op(module)
    printer.print_metadata([builtin.Builtin])  # the blobs of dense_resource weights, if any
    out.write("\n")
    return out.getvalue()


def functions(module: ModuleOp) -> Iterator[func.FuncOp]:
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            yield op
