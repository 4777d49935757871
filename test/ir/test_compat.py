"""Each workaround in `ascend_mp.ir.compat` against the xDSL 0.74 bug it works around: the plain xDSL behaviour
is shown to have the bug (when a new xDSL fixes it, the first assertion of the test fails: drop the workaround),
and the project's code not to."""

from __future__ import annotations

from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.parser import Parser

from ascend_mp.blob_names import note_derived, requested_name, storage
from ascend_mp.ir import LocatingParser, isolated_store, make_context

FILE = """%w = "test.op"() {value = dense_resource<w> : tensor<1xf32>} : () -> tensor<1xf32>
{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F"
    }
  }
#-}
"""


def _blob_of_w(parser_cls: type[Parser]) -> str | None:
    """The blob the module parsed by `parser_cls` refers to as its weight `w`, in a process whose store already
    has a `w` (as after parsing any other file with one)."""
    from xdsl.dialects import test

    ctx = make_context()
    ctx.load_dialect(test.Test)
    store = storage()
    store.parse_resource(store.declare_resource("w"), "0x0400000000000040")  # an earlier file's `w` (2.0)
    module = parser_cls(ctx, FILE, "f.mlir").parse_module()
    handle = next(iter(module.ops)).attributes["value"].resource_handle.data  # pyright: ignore[reportAttributeAccessIssue]
    return store.lookup(handle)


def test_resource_handles_of_one_file_keep_their_own_blob() -> None:
    with isolated_store():
        assert _blob_of_w(Parser) != "0x040000000000803F"  # xDSL: the handle was renamed, its blob filed elsewhere
    with isolated_store():
        assert _blob_of_w(LocatingParser) == "0x040000000000803F"


def test_the_store_records_the_name_each_handle_was_asked_for() -> None:
    with isolated_store():
        store = storage()
        first, second = store.declare_resource("w"), store.declare_resource("w")
        assert first == "w" and second != "w"  # xDSL renames a handle it already has
        assert requested_name(first) == requested_name(second) == "w"
        third = store.declare_resource(f"{second}_f16")  # a pass storing a converted copy of the second
        note_derived(third, f"{second}_f16")
        assert requested_name(third) == "w_f16"
        assert requested_name("never_declared") == "never_declared"
        assert isinstance(store, OpAsmDialectInterface)
