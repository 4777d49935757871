"""Workarounds of xDSL 0.74 bugs and costs, in one place (drop each when the pinned xDSL fixes it).

- :class:`LinearLexer`: a string-literal pattern that fails in linear time.
- :class:`StableResourceHandles`: xDSL 0.74's parser renames a resource handle the store already has (`w` ->
  `w_0`) but files only the new name, so the file's own blob for `w` lands under a third name and `w_0` stays
  empty: each handle of one file maps to one store key instead.
- :func:`bulk_ir`: parsing, printing, building or rewriting (the precision pass) a module of N ops
  allocates several objects per op that stay alive (the module), and CPython's cyclic garbage collector
  re-scans the growing heap on its collections: a cost that grows faster than N (about 20% of a 40k-op parse, more beyond).
  The IR being built is not garbage, so the collector is paused for the bulk step and runs once
  after it. Benchmark rows pay for it: `benchmarks/run.py --only scaling precision` (the growth exponents).

The parser's error-message improvements (a bad dense literal reported where it starts, nesting beyond the
recursion limit) are public-method overrides of `LocatingParser` in :mod:`ascend_mp.ir`, next to the parsing they
change. `test/ir/test_compat.py` checks each workaround against the bug it works around.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRLexer


class LinearLexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that fails in linear time.

    xDSL 0.74's pattern `"(?:[^"\\\n\v\f]+|...)*"` nests a `+` inside a `*`: on an unterminated
    literal the regex engine tries every way to split the line, so the time doubles with each
    character (a typo like `{name = "relu1} : ...` hangs). One character per repetition keeps the
    same language with a single way to match."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


@contextlib.contextmanager
def bulk_ir() -> Iterator[None]:
    """Pause the cyclic garbage collector while a block builds, parses or prints a large module
    (nested blocks: only the outermost one resumes it; a collector already paused stays paused)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)  # what the paused young-generation collections would have freed


class StableResourceHandles(Parser):
    """A parser whose resource handles map, within one file, each to one store key (see the module's docstring)."""

    def _parse_dialect_resource_handle(self, dialect_name: str, interface: OpAsmDialectInterface) -> str:
        key = self.parse_identifier(" for resource handle")
        keys: dict[tuple[str, str], str] = self.__dict__.setdefault("_resource_keys", {})
        if (dialect_name, key) not in keys:
            keys[(dialect_name, key)] = interface.declare_resource(key)
            self.dialect_resources.add((dialect_name, keys[(dialect_name, key)]))
        return keys[(dialect_name, key)]
