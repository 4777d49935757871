"""The house's layering, read from the sources with `ast`: library code never imports the command-line tools
(`ascend_mp.tools`), and no modules import each other in a cycle, neither when they load (top-level imports)
nor through imports deferred into functions."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
TOOLS = "ascend_mp.tools"


def _package_dirs() -> dict[str, Path]:
    """Package name -> source folder, as pyproject's setuptools `package-dir` maps them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"].get("package-dir", {})
    return {name: ROOT / folder for name, folder in mapping.items()}


def modules() -> dict[str, Path]:
    """Every module of the installed library: dotted name -> source file."""
    found: dict[str, Path] = {}
    for package, folder in _package_dirs().items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(body: list[ast.stmt], top_level: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements of `body`: with `top_level`, those run when the module loads (not in functions,
    classes' methods or `if TYPE_CHECKING:`); else every one."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):  # type-only imports never run
            yield from _imports(node.orelse, top_level)
        elif top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif top_level and isinstance(node, ast.ClassDef):
            yield from _imports(node.body, top_level)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _imports([n for n in inner if isinstance(n, ast.AST)], top_level)  # pyright: ignore
            if not top_level and not isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        yield from _imports([child], top_level)


def imported_modules(name: str, path: Path, known: dict[str, Path], top_level: bool) -> set[str]:
    """The library modules that importing `name` loads: each imported module and the packages above it, but
    not the packages above `name` itself (loaded before `name` starts, so no edge), unless it imports names
    from one of them (`from ascend_mp.policies import F16` in a module of that package)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    targets: set[str] = set()
    for node in _imports(tree.body, top_level):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
            continue
        base = node.module or ""
        if node.level:
            parent = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parent, base] if base else parent)
        submodules = {f"{base}.{a.name}" for a in node.names} & set(known)
        targets.update(submodules)
        if len(submodules) < len(node.names):  # names from `base`'s own namespace
            targets.add(base)
            own.discard(base)
    loaded: set[str] = set()
    for target in targets:
        parts = target.split(".")
        loaded.update(m for i in range(1, len(parts) + 1) if (m := ".".join(parts[:i])) in known and m not in own)
    loaded.discard(name)
    return loaded


def import_graph(top_level: bool) -> dict[str, set[str]]:
    known = modules()
    return {name: imported_modules(name, path, known, top_level) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


# ------------------------------------------------------------------------------------------------ the checks


def test_the_scan_sees_the_library() -> None:
    graph = import_graph(top_level=True)
    assert {"ascend_mp.dtypes", "ascend_mp.dialects.ascend", "ascend_mp.passes.precision", TOOLS} <= set(graph)
    assert "ascend_mp.dtypes" in graph["ascend_mp.passes.precision.lattice"]
    assert "ascend_mp.policies.base" in graph["ascend_mp.policies.scopes"]
    assert "ascend_mp.policies" in graph["ascend_mp.passes.precision.lattice"]  # `from ascend_mp.policies import ...`


def test_library_code_never_imports_the_tools() -> None:
    graph = import_graph(top_level=False)  # an import inside a function counts too
    upward = {
        (name, target)
        for name, targets in graph.items()
        if not (name == TOOLS or name.startswith(TOOLS + "."))
        for target in targets
        if target == TOOLS or target.startswith(TOOLS + ".")
    }
    assert upward == set()


def test_no_import_cycles_when_modules_load() -> None:
    assert [sorted(c) for c in cycles(import_graph(top_level=True))] == []


def test_no_import_cycles_through_deferred_imports_either() -> None:
    # an import inside a function that closes a cycle is a cycle in the design, even if loading works
    assert [sorted(c) for c in cycles(import_graph(top_level=False))] == []


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    # a made-up package: a package and its submodule needing each other's names, a cycle through a relative
    # import, an upward import hidden in a function (no load-time edge), a TYPE_CHECKING import (no edge)
    sources = {
        "p": "from . import a\nVERSION = 1\n",
        "p.a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.c import f\nfrom p import VERSION\n",
        "p.b": "from .c import f\ng = 1\n",
        "p.c": "import p.b\ndef f():\n    from p.tools import main\n",
        "p.tools": "",
        "p.d": "from p.b import g\n",
    }
    known: dict[str, Path] = {}
    for name, text in sources.items():
        path = tmp_path / (f"{name.replace('.', '/')}/__init__.py" if name == "p" else f"{name.replace('.', '/')}.py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        known[name] = path
    top = {n: imported_modules(n, path, known, True) for n, path in known.items()}
    assert top == {"p": {"p.a"}, "p.a": {"p"}, "p.b": {"p.c"}, "p.c": {"p.b"}, "p.tools": set(), "p.d": {"p.b"}}
    assert sorted(map(sorted, cycles(top))) == [["p", "p.a"], ["p.b", "p.c"]]
    assert imported_modules("p.c", known["p.c"], known, False) == {"p.b", "p.tools"}


# ------------------------------------------------------------------------------------------------ private xDSL fields

PRIVATE_HOMES = {"ascend_mp.ir.fast", "ascend_mp.ir.compat"}
"""The only modules that read, write or override xDSL's private fields and methods (docs/design.md §9)."""


def xdsl_private_names() -> set[str]:
    """The private (`_x`, not dunder) fields and methods of the xDSL classes the project works with, read from xDSL."""
    import xdsl.ir
    from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
    from xdsl.parser import Parser
    from xdsl.parser.generic_parser import ParserState
    from xdsl.printer import Printer

    classes = [xdsl.ir.Operation, xdsl.ir.OpResult, xdsl.ir.BlockArgument, xdsl.ir.Block, xdsl.ir.Region]
    classes += [xdsl.ir.Use, Parser, Printer, OpAsmDialectInterface, ParserState]
    names: set[str] = set()
    for cls in classes:
        for c in cls.__mro__:
            if c.__module__.startswith("xdsl"):
                found = {*vars(c), *getattr(c, "__annotations__", {})}
                names |= {n for n in found if n.startswith("_") and not n.startswith("__")}
    return names


def private_uses(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each attribute access `x.<name>` and each method `def <name>` in a class, for `names`."""
    tree = ast.parse(path.read_text())
    found = [(n.lineno, n.attr) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in names]
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        found += [(d.lineno, d.name) for d in cls.body if isinstance(d, ast.FunctionDef) and d.name in names]
    return sorted(found)


def test_private_xdsl_fields_are_touched_only_in_fast_and_compat() -> None:
    names = xdsl_private_names()
    assert {"_operands", "_parser_state", "_blob_storage", "_parse_dialect_resource_handle"} <= names
    outside = {
        f"{name}:{line} {field}"
        for name, path in modules().items()
        if name not in PRIVATE_HOMES
        for line, field in private_uses(path, names)
    }
    assert outside == set()
    assert private_uses(modules()["ascend_mp.ir.fast"], names)  # the scan sees them where they are


def test_the_private_scan_catches_reads_writes_and_overrides(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "def _index(): pass\n"  # a module's own private function: fine
        "class P(Parser):\n    def _resume_from(self, pos): pass\n"
        "def f(op):\n    op._operands = ()\n    return op.parent._first_op\n"
    )
    assert private_uses(source, xdsl_private_names()) == [(3, "_resume_from"), (5, "_operands"), (6, "_first_op")]
