"""Workarounds of xDSL 0.74 bugs, in one place (drop each when the pinned xDSL fixes it).

The parser's own workarounds (a bad dense literal reported where it starts, resource handles renamed by the
store) are overrides of `LocatingParser` in :mod:`ascend_mp.ir`, next to the parsing they change.
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer


class LinearLexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that fails in linear time.

    xDSL 0.74's pattern `"(?:[^"\\\n\v\f]+|...)*"` nests a `+` inside a `*`: on an unterminated
    literal the regex engine tries every way to split the line, so the time doubles with each
    character (a typo like `{name = "relu1} : ...` hangs). One character per repetition keeps the
    same language with a single way to match."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
