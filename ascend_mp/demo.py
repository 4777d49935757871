"""`make demo`: the main job on the built-in examples.

Compiles `examples/*.mlir` and prints each module with its ops' dtype
capabilities and list kinds (the `ascend-attach-caps` pass).
"""

from __future__ import annotations

from pathlib import Path

from ascend_mp.ir import make_context, print_module, read_module
from ascend_mp.passes import PASSES

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def show_capabilities(path: Path) -> None:
    ctx = make_context()
    module = read_module(str(path), ctx)
    PASSES["ascend-attach-caps"]()().apply(ctx, module)
    print(f"// ===== {path.name}: operator capabilities (ascend910 built-in library)")
    print(print_module(module))


def main() -> None:
    for path in sorted(EXAMPLES.glob("*.mlir")):
        show_capabilities(path)


if __name__ == "__main__":
    main()
